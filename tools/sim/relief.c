/* Per-key time to relief (see relief.h). */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "cluster.h"
#include "relief.h"

int sim_relief_init(struct sim_relief *t, uint64_t n)
{
	*t = (struct sim_relief){0};
	t->since = calloc(n ? n : 1, sizeof(*t->since));
	if (!t->since) {
		sim_relief_free(t);
		return -1;
	}
	return 0;
}

void sim_relief_free(struct sim_relief *t)
{
	free(t->since);
	free(t->touched);
	free(t->open);
	free(t->hist);
	*t = (struct sim_relief){0};
}

/* Append x to a uint32_t list. 0 or -1. */
static int push(uint32_t **v, size_t *n, size_t *cap, uint32_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		uint32_t *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

void sim_relief_touch(struct sim_relief *t, uint64_t o)
{
	if (push(&t->touched, &t->n_touched, &t->cap_touched, (uint32_t)o))
		t->oom = true;
}

/* Key o's episode ends in the current window: count its length. */
static int relieve(struct sim_relief *t, uint32_t o)
{
	uint64_t len = t->window - (t->since[o] - 1);

	if (len >= t->cap_hist) {
		size_t c = t->cap_hist ? 2 * t->cap_hist : 64;
		uint64_t *p;

		while (c <= len)
			c *= 2;
		p = realloc(t->hist, c * sizeof(*p));
		if (!p)
			return -1;
		for (size_t i = t->cap_hist; i < c; i++)
			p[i] = 0;
		t->hist = p;
		t->cap_hist = c;
	}
	t->hist[len]++;
	t->since[o] = 0;
	return 0;
}

int sim_relief_close(struct sim_relief *t, struct sim_cluster *c,
		     uint64_t reads)
{
	uint64_t nodes = c->n_active;
	size_t kept = 0;
	int rc = t->oom ? -1 : 0;

	/* open episodes of keys not read in this window end here */
	for (size_t i = 0; i < t->n_open && rc == 0; i++)
		if (!c->objs[t->open[i]].window_reads)
			rc = relieve(t, t->open[i]);
	for (size_t i = 0; i < t->n_touched && rc == 0; i++) {
		uint32_t o = t->touched[i];
		uint64_t r = c->objs[o].window_reads;
		uint64_t replicas = 1 + sim_obj_readable_dyn(c, o);
		/* r / replicas > reads / nodes, in integers */
		bool over = nodes && r * nodes > reads * replicas;

		c->objs[o].window_reads = 0;
		if (over && !t->since[o]) {
			t->since[o] = t->window + 1;
			t->episodes++;
			rc = push(&t->open, &t->n_open, &t->cap_open, o);
		} else if (!over && t->since[o]) {
			rc = relieve(t, o);
		}
	}
	for (size_t i = 0; i < t->n_open; i++) /* drop the ended ones */
		if (t->since[t->open[i]])
			t->open[kept++] = t->open[i];
	t->n_open = kept;
	t->n_touched = 0;
	t->window++;
	return rc;
}

/* The length of the episode at nearest rank ceil(q x episodes), episodes
 * never relieved ranked last; -1 when it is one of them. */
static int64_t rank_len(const struct sim_relief *t, uint64_t rank)
{
	uint64_t seen = 0;

	for (size_t len = 0; len < t->cap_hist; len++) {
		seen += t->hist[len];
		if (seen >= rank)
			return (int64_t)len;
	}
	return -1;
}

static uint64_t nearest_rank(double q, uint64_t n)
{
	uint64_t r = (uint64_t)ceil(q * (double)n - 1e-9);

	return r ? r : 1;
}

void sim_relief_stats(const struct sim_relief *t, struct sim_relief_stats *s)
{
	uint64_t n = t->episodes;

	s->episodes = n;
	s->unrelieved = t->n_open;
	s->p50 = n ? rank_len(t, nearest_rank(0.50, n)) : 0;
	s->p90 = n ? rank_len(t, nearest_rank(0.90, n)) : 0;
	s->p99 = n ? rank_len(t, nearest_rank(0.99, n)) : 0;
	s->max = n ? rank_len(t, n) : 0;
}

void sim_relief_json(FILE *f, const struct sim_relief_stats *s)
{
	fprintf(f,
		",\"relief_episodes\":%" PRIu64
		",\"relief_unrelieved\":%" PRIu64
		",\"relief_windows_p50\":%" PRId64
		",\"relief_windows_p90\":%" PRId64
		",\"relief_windows_p99\":%" PRId64
		",\"relief_windows_max\":%" PRId64,
		s->episodes, s->unrelieved, s->p50, s->p90, s->p99, s->max);
}
