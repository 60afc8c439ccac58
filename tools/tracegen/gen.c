/* The trace generator's model (see gen.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "gen.h"
#include "../common/zipf.h"
#include "../sim/rng.h"

/* Stream ids of sim_rng_seed(): each part of the shape draws from its own. */
enum { STREAM_ARRIVAL = 1, STREAM_PICK = 2, STREAM_SHAPE = 3 };

#define NO_ID UINT64_MAX

/* One slot of the open conversations. */
struct conv {
	uint64_t *ids; /* the blocks read so far, in order */
	uint32_t n, cap;
	uint32_t turns_left; /* 0: the slot holds no open conversation */
	uint32_t turn;	     /* turns made */
	uint64_t number;     /* conversations are numbered as they start */
};

struct gen {
	const struct gen_params *p;
	sim_rng arrival, pick, shape;
	struct zipf prefixes;
	uint64_t *prefix_first; /* per prefix: its first block id, or NO_ID */
	struct conv *convs;
	uint64_t next_id, next_conv;
};

int gen_check(const struct gen_params *p, FILE *err)
{
	uint64_t fixed = (uint64_t)p->common_blocks +
			 (p->prefix_share > 0 ? p->prefix_blocks : 0);
	struct zipf z;

	if (!p->requests && p->duration <= 0) {
		fprintf(err, "mcrepl-tracegen: --requests 0 needs a "
			     "--duration\n");
		return -1;
	}
	if (fixed + 1 > p->max_blocks) {
		fprintf(err,
			"mcrepl-tracegen: --max_blocks %" PRIu32 " leaves no "
			"room for a new block after %" PRIu64 " common and "
			"prefix blocks\n",
			p->max_blocks, fixed);
		return -1;
	}
	if (zipf_init(&z, p->prefixes, p->prefix_theta)) {
		fprintf(err, "mcrepl-tracegen: --prefix_theta %g refused\n",
			p->prefix_theta);
		return -1;
	}
	return 0;
}

/* Uniform in 1 .. 2 x mean - 1: mean `mean`. */
static uint32_t draw_mean(sim_rng *r, uint32_t mean)
{
	return 1 + (uint32_t)sim_rng_below(r, 2 * (uint64_t)mean - 1);
}

/* Geometric on 1, 2, ... with mean `mean` (>= 1). */
static uint32_t draw_turns(sim_rng *r, double mean)
{
	double k;

	if (mean <= 1)
		return 1;
	k = floor(log1p(-sim_rng_double(r)) / log1p(-1 / mean));
	return k >= UINT32_MAX - 1 ? UINT32_MAX : 1 + (uint32_t)k;
}

static int conv_push(struct conv *c, uint64_t id)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 64;
		uint64_t *ids = realloc(c->ids, cap * sizeof(*ids));

		if (!ids)
			return -1;
		c->ids = ids;
		c->cap = cap;
	}
	c->ids[c->n++] = id;
	return 0;
}

/* The shared prefix a new conversation starts with, or none (-1). */
static int64_t draw_prefix(struct gen *g)
{
	const struct gen_params *p = g->p;

	if (sim_rng_double(&g->shape) >= p->prefix_share || !p->prefix_blocks)
		return -1;
	return (int64_t)zipf_sample(&g->prefixes, sim_rng_uniform, &g->shape) -
	       1;
}

/* A new conversation in slot c: the common blocks, maybe a prefix. */
static int conv_start(struct gen *g, struct conv *c)
{
	const struct gen_params *p = g->p;
	int64_t k = draw_prefix(g);

	c->n = 0;
	c->turn = 0;
	c->number = g->next_conv++;
	c->turns_left = draw_turns(&g->shape, p->turns);
	for (uint32_t i = 0; i < p->common_blocks; i++)
		if (conv_push(c, i))
			return -1;
	if (k < 0)
		return 0;
	if (g->prefix_first[k] == NO_ID) {
		g->prefix_first[k] = g->next_id;
		g->next_id += p->prefix_blocks;
	}
	for (uint32_t i = 0; i < p->prefix_blocks; i++)
		if (conv_push(c, g->prefix_first[k] + i))
			return -1;
	return 0;
}

/* The next turn of slot c: its new blocks appended to the conversation. */
static int conv_turn(struct gen *g, struct conv *c)
{
	const struct gen_params *p = g->p;
	uint32_t add;

	if (!c->turns_left && conv_start(g, c))
		return -1;
	add = draw_mean(&g->shape, c->turn ? p->turn_blocks : p->first_blocks);
	if ((uint64_t)c->n + add > p->max_blocks) {
		if (c->turn) { /* full: a new conversation takes the slot */
			c->turns_left = 0;
			return conv_turn(g, c);
		}
		add = p->max_blocks - c->n; /* >= 1: gen_check() */
	}
	for (uint32_t i = 0; i < add; i++)
		if (conv_push(c, g->next_id++))
			return -1;
	c->turn++;
	c->turns_left--;
	return 0;
}

static void emit(struct gen *g, const struct conv *c, double t, FILE *out)
{
	const struct gen_params *p = g->p;
	uint64_t in = (uint64_t)(c->n - 1) * p->block_tokens + 1 +
		      sim_rng_below(&g->shape, p->block_tokens);
	uint32_t outlen = draw_mean(&g->shape, p->output_tokens);

	fprintf(out,
		"{\"timestamp\": %" PRIu64 ", \"input_length\": %" PRIu64
		", \"output_length\": %" PRIu32 ", \"hash_ids\": [",
		(uint64_t)floor(t * 1000), in, outlen);
	for (uint32_t i = 0; i < c->n; i++)
		fprintf(out, i ? ", %" PRIu64 : "%" PRIu64, c->ids[i]);
	if (p->annotate)
		fprintf(out,
			"], \"conversation\": %" PRIu64 ", \"turn\": %" PRIu32
			"}\n",
			c->number, c->turn);
	else
		fputs("]}\n", out);
}

static int gen_init(struct gen *g, const struct gen_params *p)
{
	*g = (struct gen){.p = p, .next_id = p->common_blocks};
	sim_rng_seed(&g->arrival, p->seed, STREAM_ARRIVAL);
	sim_rng_seed(&g->pick, p->seed, STREAM_PICK);
	sim_rng_seed(&g->shape, p->seed, STREAM_SHAPE);
	if (zipf_init(&g->prefixes, p->prefixes, p->prefix_theta))
		return -1;
	g->prefix_first = malloc(p->prefixes * sizeof(*g->prefix_first));
	g->convs = calloc(p->conversations, sizeof(*g->convs));
	if (!g->prefix_first || !g->convs)
		return -1;
	for (uint32_t i = 0; i < p->prefixes; i++)
		g->prefix_first[i] = NO_ID;
	return 0;
}

static void gen_free(struct gen *g)
{
	if (g->convs)
		for (uint32_t i = 0; i < g->p->conversations; i++)
			free(g->convs[i].ids);
	free(g->convs);
	free(g->prefix_first);
}

static int gen_run(struct gen *g, FILE *out)
{
	const struct gen_params *p = g->p;
	double t = 0;

	for (uint64_t i = 0; !p->requests || i < p->requests; i++) {
		struct conv *c;

		if (i)
			t -= log1p(-sim_rng_double(&g->arrival)) / p->rate;
		if (p->duration > 0 && t >= p->duration)
			break;
		c = &g->convs[sim_rng_below(&g->pick, p->conversations)];
		if (conv_turn(g, c))
			return -1;
		emit(g, c, t, out);
		if (ferror(out))
			return -1;
	}
	return fflush(out) ? -1 : 0;
}

int gen_write(const struct gen_params *p, FILE *out)
{
	struct gen g;
	int rc = gen_init(&g, p);

	if (!rc)
		rc = gen_run(&g, out);
	gen_free(&g);
	return rc;
}
