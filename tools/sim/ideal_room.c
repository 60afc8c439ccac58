/* The room-constrained floor (see ideal.h, sim_ideal_room()). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ideal.h"

struct room {
	uint32_t n;
	double *load;	 /* each node's primaries' read share */
	uint64_t *slots; /* copies each node has room for */
	uint64_t *start; /* node i's weights: w[start[i] .. start[i+1]) */
	double *w;	 /* per node, descending */
	double *rem;	 /* scratch: the heavy keys' remainders */
	double total, eps;
	uint64_t n_slots;
};

static double obj_weight(const struct sim_opts *o, const uint64_t *counts,
			 uint64_t obj)
{
	if (counts)
		return (double)counts[obj];
	if (o->workload != SIM_UNIFORM)
		return pow((double)(obj + 1), -o->theta);
	return 1.0;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x > y ? -1 : x < y;
}

/* The bytes under the line on a node of `capacity`: the engine's fill
 * line when it is above the target watermark (headroom), else the
 * target watermark, with watermark_bytes()'s rounding. */
static uint64_t line_bytes(const mcrepl_config *cfg, uint64_t capacity)
{
	double f = cfg->room_fill_limit > cfg->target_high_watermark
		       ? cfg->room_fill_limit
		       : cfg->target_high_watermark;
	double w = round(f * 1e9);

	w = w < 0 ? 0 : w > 1e9 ? 1e9 : w;
	return (uint64_t)((__uint128_t)(uint64_t)w * capacity / 1000000000u);
}

/* The fewest copies that take e off a node whose keys weigh w[0..k)
 * (descending), each copy taking at most cap and a key's copies at most
 * its weight: the largest pieces first (cap each while a key has that
 * much, then its remainder), which no other choice of pieces beats.
 * UINT64_MAX: not even every key in full. */
static uint64_t copies_for(struct room *r, const double *w, uint64_t k,
			   double e, double cap)
{
	uint64_t full = 0, h = 0, i, j = 0;

	if (e <= r->eps)
		return 0;
	if (!(cap > r->eps))
		return UINT64_MAX;
	for (i = 0; i < k && w[i] >= cap; i++) {
		double f = floor(w[i] / cap);

		full += (uint64_t)f;
		r->rem[h++] = w[i] - f * cap;
	}
	if ((double)full * cap >= e - r->eps)
		return (uint64_t)ceil((e - r->eps) / cap);
	e -= (double)full * cap;
	qsort(r->rem, h, sizeof(*r->rem), cmp_desc);
	while (e > r->eps && (j < h || i < k)) {
		bool take_rem = j < h && (i >= k || r->rem[j] >= w[i]);

		e -= take_rem ? r->rem[j++] : w[i++];
		full++;
	}
	return e > r->eps ? UINT64_MAX : full;
}

/* Could every node stay at or under t? Two conditions every placement
 * under the room must meet (so the least t meeting both bounds them all):
 * the load over t fits the room's spare load (a node with room can take
 * no more than t - its own load), and the copies it takes (copies_for(),
 * each at most the largest spare) fit the slots. */
static bool feasible(struct room *r, double t)
{
	double spare = 0, over = 0, cap = 0;
	uint64_t need = 0;

	for (uint32_t i = 0; i < r->n; i++) {
		if (r->slots[i] && t > r->load[i]) {
			spare += t - r->load[i];
			cap = fmax(cap, t - r->load[i]);
		}
		if (r->load[i] > t)
			over += r->load[i] - t;
	}
	if (over > spare + r->eps)
		return false;
	for (uint32_t i = 0; i < r->n; i++) {
		uint64_t k;

		if (r->load[i] <= t)
			continue;
		k = copies_for(r, r->w + r->start[i],
			       r->start[i + 1] - r->start[i], r->load[i] - t,
			       cap);
		if (k > r->n_slots - need)
			return false;
		need += k;
	}
	return true;
}

/* Per node: its primaries' weights, descending, and its room in copies:
 * free bytes under the line plus its dynamic replicas' (theirs to give). */
static int build_room(struct room *r, const struct sim_cluster *c,
		      const struct sim_opts *o, const uint64_t *counts)
{
	uint64_t line = line_bytes(&o->cfg, c->node_capacity);
	uint64_t *pos = calloc((size_t)r->n + 1, sizeof(*pos));

	if (!pos)
		return -1;
	for (uint64_t i = 0; i < c->n_objs; i++)
		if (c->objs[i].primary != SIM_NONE)
			r->start[sim_node_of(c, c->objs[i].primary) + 1]++;
	for (uint32_t i = 0; i < r->n; i++)
		r->start[i + 1] += r->start[i];
	memcpy(pos, r->start, ((size_t)r->n + 1) * sizeof(*pos));
	for (uint64_t i = 0; i < c->n_objs; i++) {
		uint32_t node;
		double x;

		if (c->objs[i].primary == SIM_NONE)
			continue;
		node = sim_node_of(c, c->objs[i].primary);
		x = obj_weight(o, counts, i);
		r->w[pos[node]++] = x;
		r->load[node] += x;
		r->total += x;
	}
	free(pos);
	for (uint32_t i = 0; i < r->n; i++) {
		uint64_t used = c->nodes[i].used, dyn = c->nodes[i].n_dyn;

		qsort(r->w + r->start[i], r->start[i + 1] - r->start[i],
		      sizeof(*r->w), cmp_desc);
		r->slots[i] =
		    (line > used ? (line - used) / c->object_size : 0) + dyn;
		r->n_slots += r->slots[i];
	}
	return 0;
}

int sim_ideal_room(const struct sim_cluster *c, const struct sim_opts *o,
		   const uint64_t *counts, struct sim_room_floor *out)
{
	struct room r = {.n = c->n_nodes};
	double lo, hi = 0;
	int rc = -1;

	r.load = calloc(r.n, sizeof(*r.load));
	r.slots = calloc(r.n, sizeof(*r.slots));
	r.start = calloc((size_t)r.n + 1, sizeof(*r.start));
	r.w = calloc(c->n_objs + 1, sizeof(*r.w));
	r.rem = calloc(c->n_objs + 1, sizeof(*r.rem));
	if (!r.load || !r.slots || !r.start || !r.w || !r.rem ||
	    !c->object_size || build_room(&r, c, o, counts))
		goto out;
	for (uint32_t i = 0; i < r.n; i++)
		hi = fmax(hi, r.load[i]);
	out->slots = r.n_slots;
	out->max_mean = 0;
	if (r.total > 0) {
		r.eps = r.total * 1e-12;
		lo = r.total / r.n; /* no t under the mean: every read lands */
		for (int i = 0; i < 100 && hi - lo > r.total * 1e-9; i++) {
			double mid = (lo + hi) / 2;

			*(feasible(&r, mid) ? &hi : &lo) = mid;
		}
		out->max_mean = hi * r.n / r.total;
	}
	rc = 0;
out:
	free(r.load);
	free(r.slots);
	free(r.start);
	free(r.w);
	free(r.rem);
	return rc;
}
