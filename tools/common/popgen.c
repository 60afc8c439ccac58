/* The popularity generator of the moving workloads (see popgen.h). */
#include <math.h>

#include "util/hash.h"
#include "popgen.h"

uint64_t popgen_below(void *state, uint64_t n)
{
	/* Lemire's multiply-shift: the high word of x * n */
	return (uint64_t)(((unsigned __int128)mcu_splitmix64(state) * n) >> 64);
}

static bool opts_ok(const struct popgen_opts *o)
{
	bool moving = o->kind == POPGEN_SHIFTING || o->kind == POPGEN_REHOT;

	if (!o->n || o->n > UINT32_MAX)
		return false;
	if (moving &&
	    !(o->period_ms > 0 && o->fraction >= 0 && o->fraction <= 1))
		return false;
	if (o->kind == POPGEN_FLASH &&
	    !(o->n >= 2 && o->flash_at_ms >= 0 && o->flash_ms >= 0 &&
	      o->flash_share >= 0 && o->flash_share <= 1))
		return false;
	return true;
}

int popgen_init(struct popgen *g, const struct popgen_opts *o)
{
	g->o = *o;
	g->rng = o->seed ^ 0x9d9e7a11d5ULL;
	g->phase = 0;
	g->shift.rank_obj = g->shift.pick = NULL;
	if (!opts_ok(o))
		return -1;
	if (o->kind != POPGEN_SHIFTING && o->kind != POPGEN_REHOT)
		return 0;
	if (shift_init(&g->shift, o->n, o->fraction))
		return -1;
	if (o->kind == POPGEN_REHOT) /* the odd phases' ranking */
		shift_advance(&g->shift, 1, popgen_below, &g->rng);
	return 0;
}

void popgen_free(struct popgen *g)
{
	shift_free(&g->shift);
}

uint64_t popgen_ranks(const struct popgen_opts *o)
{
	return o->kind == POPGEN_FLASH ? o->n - 1 : o->n;
}

void popgen_advance(struct popgen *g, double t_ms)
{
	uint64_t phase;

	if (g->o.kind != POPGEN_SHIFTING && g->o.kind != POPGEN_REHOT)
		return;
	phase = shift_phase_of(t_ms, g->o.period_ms);
	if (phase <= g->phase)
		return;
	g->phase = phase;
	if (g->o.kind == POPGEN_SHIFTING)
		shift_advance(&g->shift, phase, popgen_below, &g->rng);
}

uint64_t popgen_phases(const struct popgen *g)
{
	if (g->o.kind != POPGEN_SHIFTING && g->o.kind != POPGEN_REHOT)
		return 0;
	return g->phase + 1;
}

uint64_t popgen_object(const struct popgen *g, uint64_t r)
{
	if (g->o.kind == POPGEN_SHIFTING ||
	    (g->o.kind == POPGEN_REHOT && g->phase % 2))
		return g->shift.rank_obj[r];
	return r;
}

uint64_t popgen_flash_object(const struct popgen_opts *o)
{
	return o->n - 1;
}

bool popgen_flash(const struct popgen_opts *o, double t_ms, uint64_t *seen)
{
	uint64_t j;

	if (o->kind != POPGEN_FLASH || t_ms < o->flash_at_ms ||
	    t_ms >= o->flash_at_ms + o->flash_ms)
		return false;
	j = ++*seen;
	return (uint64_t)floor((double)j * o->flash_share) >
	       (uint64_t)floor((double)(j - 1) * o->flash_share);
}

uint64_t popgen_digest(const struct popgen *g, const uint32_t *key_of,
		       uint64_t top)
{
	uint64_t h = 0xcbf29ce484222325ULL, n = popgen_ranks(&g->o);

	for (uint64_t r = 0; r < top && r < n; r++) {
		uint32_t k = key_of[popgen_object(g, r)];

		for (int b = 0; b < 4; b++) {
			h ^= (k >> (8 * b)) & 0xff;
			h *= 0x100000001b3ULL;
		}
	}
	return h;
}
