/* The ideal fluid placement (see ideal.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ideal.h"

struct weights {
	const struct sim_opts *o;
	const uint64_t *counts;
	uint32_t *order; /* objects by descending weight (trace only) */
};

static double weight(const struct weights *w, uint64_t obj)
{
	if (w->counts)
		return (double)w->counts[obj];
	if (w->o->workload != SIM_UNIFORM) /* the Zipf ranks' weights */
		return pow((double)(obj + 1), -w->o->theta);
	return 1.0;
}

static uint64_t nth(const struct weights *w, uint64_t i)
{
	return w->order ? w->order[i] : i;
}

static const uint64_t *sort_counts;

static int cmp_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_counts[x] != sort_counts[y])
		return sort_counts[x] > sort_counts[y] ? -1 : 1;
	return x < y ? -1 : 1;
}

/* Min-heap of nodes by load: each entry carries its node's load (a copy
 * of load[node], kept equal), so a comparison reads one array. */
struct hent {
	double load;
	uint32_t node;
};

struct heap {
	double *load;
	struct hent *h, *tmp; /* tmp: merge_spread()'s output */
	uint32_t n;
	bool sorted; /* h ascending (a heap too) */
};

static void sift_down(struct heap *q, uint32_t i);

static void heapify(struct heap *q)
{
	for (uint32_t i = q->n / 2; i-- > 0;)
		sift_down(q, i);
}

/* Entry i moved down to its place: the smaller child (the left one on a
 * tie) moves up while it is strictly lighter (a hole moves, not the
 * entry: the same places as swapping). */
static void sift_down(struct heap *q, uint32_t i)
{
	struct hent t = q->h[i];

	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = l;

		if (l >= q->n)
			break;
		if (r < q->n && q->h[r].load < q->h[l].load)
			m = r;
		if (!(q->h[m].load < t.load))
			break;
		q->h[i] = q->h[m];
		i = m;
	}
	q->h[i] = t;
}

/* Spreads of `parts` cost less as one merge of the n entries than as
 * parts pops and pushes of log2(n) steps each (about). */
static bool merge_pays(uint32_t n, uint32_t parts)
{
	return (uint64_t)parts * 16 >= n;
}

static int cmp_load(const void *a, const void *b)
{
	double x = ((const struct hent *)a)->load;
	double y = ((const struct hent *)b)->load;

	return x < y ? -1 : x > y;
}

/* Every node, in node order, then heapified, or sorted when the first
 * spreads are of `parts` that merge_pays(). */
static void build(struct heap *q, uint32_t n, uint32_t parts)
{
	q->n = n;
	for (uint32_t i = 0; i < n; i++)
		q->h[i] = (struct hent){.load = q->load[i], .node = i};
	q->sorted = merge_pays(n, parts);
	if (q->sorted)
		qsort(q->h, n, sizeof(*q->h), cmp_load);
	else
		heapify(q);
}

/* spread() on a sorted q: the parts lightest each loaded (they stay in
 * order: rounding is monotonic), merged back with the rest. Which of
 * equally loaded nodes takes a part differs from the heap's pops, but not
 * the loads that result, nor their max: the same values. */
static void merge_spread(struct heap *q, uint32_t parts, double amount)
{
	uint32_t i = 0, j = parts, o = 0;
	struct hent *t;

	for (uint32_t k = 0; k < parts; k++) {
		q->load[q->h[k].node] += amount;
		q->h[k].load = q->load[q->h[k].node];
	}
	while (i < parts && j < q->n)
		q->tmp[o++] =
		    q->h[j].load < q->h[i].load ? q->h[j++] : q->h[i++];
	while (i < parts)
		q->tmp[o++] = q->h[i++];
	while (j < q->n)
		q->tmp[o++] = q->h[j++];
	t = q->h;
	q->h = q->tmp;
	q->tmp = t;
}

/* Add amount to each of the parts least-loaded nodes (distinct): pop
 * them, load them, push them back. */
static void spread(struct heap *q, uint32_t *taken, uint32_t parts,
		   double amount)
{
	if (q->sorted && merge_pays(q->n, parts)) {
		merge_spread(q, parts, amount);
		return;
	}
	q->sorted = false; /* a sorted array is a heap: go on as one */
	for (uint32_t j = 0; j < parts; j++) {
		taken[j] = q->h[0].node;
		q->h[0] = q->h[--q->n];
		sift_down(q, 0);
	}
	for (uint32_t j = 0; j < parts; j++) {
		struct hent t;
		uint32_t p;

		q->load[taken[j]] += amount;
		t = (struct hent){.load = q->load[taken[j]], .node = taken[j]};
		/* up while strictly lighter than its parent (a hole moves) */
		for (p = q->n++; p && t.load < q->h[(p - 1) / 2].load;
		     p = (p - 1) / 2)
			q->h[p] = q->h[(p - 1) / 2];
		q->h[p] = t;
	}
}

static double max_mean(const double *load, uint32_t n, double total)
{
	double mx = 0;

	for (uint32_t i = 0; i < n; i++)
		if (load[i] > mx)
			mx = load[i];
	return total > 0 ? mx * n / total : 0;
}

/* ideal(k): lift the top k, place R equal parts each with LPT. */
static double ideal_k(const struct sim_cluster *c, const struct weights *w,
		      const double *base, double total, uint64_t k, uint32_t R,
		      struct heap *q, uint32_t *taken)
{
	uint32_t N = c->n_nodes;

	memcpy(q->load, base, N * sizeof(*base));
	for (uint64_t i = 0; i < k; i++) {
		uint64_t obj = nth(w, i);

		if (c->objs[obj].primary != SIM_NONE)
			q->load[sim_node_of(c, c->objs[obj].primary)] -=
			    weight(w, obj);
	}
	build(q, N, R);
	for (uint64_t i = 0; i < k; i++) {
		double part = weight(w, nth(w, i)) / R;

		if (c->objs[nth(w, i)].primary == SIM_NONE)
			continue;
		if (R == N) { /* every node: no choice to make, the same sums */
			for (uint32_t j = 0; j < N; j++)
				q->load[j] += part;
			continue;
		}
		spread(q, taken, R, part);
	}
	return max_mean(q->load, N, total);
}

static int sort_order(struct weights *w, const struct sim_cluster *c)
{
	w->order = malloc(c->n_objs * sizeof(*w->order));
	if (!w->order)
		return -1;
	for (uint64_t i = 0; i < c->n_objs; i++)
		w->order[i] = (uint32_t)i;
	sort_counts = w->counts;
	qsort(w->order, c->n_objs, sizeof(*w->order), cmp_desc);
	return 0;
}

static void consider(struct sim_ideal *out, double v, uint64_t k, uint32_t R)
{
	if (v < out->max_mean) {
		out->max_mean = v;
		out->k = k;
		out->r = R;
	}
}

/* The minimum over k for one R. */
static void best_of(const struct sim_cluster *c, const struct weights *w,
		    const double *base, double total, uint64_t kmax,
		    uint64_t extra_k, uint32_t R, struct heap *q,
		    uint32_t *taken, struct sim_ideal *out)
{
	for (uint64_t k = 1;; k = k * 2 > kmax && k < kmax ? kmax : k * 2) {
		consider(out, ideal_k(c, w, base, total, k, R, q, taken), k, R);
		if (k >= kmax)
			break;
	}
	if (extra_k && extra_k <= c->n_objs) {
		double v = ideal_k(c, w, base, total, extra_k, R, q, taken);

		if (v < out->at_k)
			out->at_k = v;
		consider(out, v, extra_k, R);
	}
}

int sim_ideal_compute(const struct sim_cluster *c, const struct sim_opts *o,
		      const uint64_t *counts, uint64_t extra_k,
		      struct sim_ideal *out)
{
	struct weights w = {.o = o, .counts = counts, .order = NULL};
	uint32_t R = o->cfg.max_memory_replicas;
	uint64_t kmax = (uint64_t)c->n_nodes * 16;
	double *base = calloc(c->n_nodes, sizeof(*base)), total = 0;
	struct heap q = {.load = calloc(c->n_nodes, sizeof(double)),
			 .h = calloc(c->n_nodes, sizeof(struct hent)),
			 .tmp = calloc(c->n_nodes, sizeof(struct hent))};
	uint32_t *taken;
	int rc = -1;

	if (R > c->n_nodes)
		R = c->n_nodes;
	taken = calloc(c->n_nodes, sizeof(*taken));
	if (!base || !q.load || !q.h || !q.tmp || !taken ||
	    (counts && sort_order(&w, c)))
		goto out;
	for (uint64_t i = 0; i < c->n_objs; i++) {
		double x = weight(&w, i);

		if (c->objs[i].primary == SIM_NONE)
			continue;
		base[sim_node_of(c, c->objs[i].primary)] += x;
		total += x;
	}
	if (kmax > c->n_objs)
		kmax = c->n_objs;
	out->base = out->max_mean = out->at_k =
	    max_mean(base, c->n_nodes, total);
	out->k = 0;
	out->r = 1;
	for (uint32_t r = R; r >= 2; r /= 2)
		best_of(c, &w, base, total, kmax, extra_k, r, &q, taken, out);
	/* no per-key cap: R = nodes, nodes/2, ... down to the capped R's */
	struct sim_ideal nc = *out;

	for (uint32_t r = c->n_nodes; r > R; r /= 2)
		best_of(c, &w, base, total, kmax, 0, r, &q, taken, &nc);
	out->nocap = nc.max_mean;
	out->nocap_k = nc.k;
	out->nocap_r = nc.r;
	rc = 0;
out:
	free(w.order);
	free(base);
	free(q.load);
	free(q.h);
	free(q.tmp);
	free(taken);
	return rc;
}

/* ---- the memory frontier ------------------------------------------------ */

/* Place the parts of the heaviest objects: object i (in weight order) gets
 * min(N, ceil(w / g)) equal parts while that is >= 2; *mem = the extra
 * replicas. g = 0: uniform, the top k objects in R parts each. */
static double ideal_prop(const struct sim_cluster *c, const struct weights *w,
			 const double *base, double total, double g, uint64_t k,
			 uint32_t R, struct heap *q, uint32_t *taken,
			 uint64_t *mem)
{
	uint32_t N = c->n_nodes;
	uint64_t n = 0;

	*mem = 0;
	memcpy(q->load, base, N * sizeof(*base));
	for (; n < c->n_objs; n++) {
		uint64_t obj = nth(w, n);
		double x = weight(w, obj);
		double parts = g > 0 ? ceil(x / g) : (n < k ? R : 1);

		if (parts > N)
			parts = N;
		if (parts < 2)
			break;
		if (c->objs[obj].primary != SIM_NONE)
			q->load[sim_node_of(c, c->objs[obj].primary)] -= x;
	}
	build(q, N,
	      !n ? 0
	      : g > 0
		  ? (uint32_t)fmin(ceil(weight(w, nth(w, 0)) / g), (double)N)
		  : R);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t obj = nth(w, i);
		double x = weight(w, obj);
		uint32_t parts =
		    g > 0 ? (uint32_t)fmin(ceil(x / g), (double)N) : R;

		if (c->objs[obj].primary == SIM_NONE)
			continue;
		*mem += parts - 1;
		spread(q, taken, parts, x / parts);
	}
	return max_mean(q->load, N, total);
}

static void point(struct sim_frontier *f, double mm, uint64_t mem,
		  uint64_t copies, double target)
{
	if (mem <= copies && mm < f->at_mem)
		f->at_mem = mm;
	if (mm <= target && mem < f->mem_for)
		f->mem_for = mem;
	if (mm < f->best) {
		f->best = mm;
		f->best_mem = mem;
	}
}

int sim_ideal_frontier(const struct sim_cluster *c, const struct sim_opts *o,
		       const uint64_t *counts, uint64_t copies, double target,
		       struct sim_frontier *f)
{
	struct weights w = {.o = o, .counts = counts, .order = NULL};
	uint32_t N = c->n_nodes;
	uint64_t budget = 64ull * N, mem;
	double *base = calloc(N, sizeof(*base)), total = 0;
	struct heap q = {.load = calloc(N, sizeof(double)),
			 .h = calloc(N, sizeof(struct hent)),
			 .tmp = calloc(N, sizeof(struct hent))};
	uint32_t *taken = calloc(N, sizeof(*taken));
	int rc = -1;

	if (!base || !q.load || !q.h || !q.tmp || !taken ||
	    (counts && sort_order(&w, c)))
		goto out;
	for (uint64_t i = 0; i < c->n_objs; i++) {
		double x;

		if (c->objs[i].primary == SIM_NONE)
			continue;
		x = weight(&w, i);
		base[sim_node_of(c, c->objs[i].primary)] += x;
		total += x;
	}
	f->at_mem = f->best = INFINITY;
	f->mem_for = f->best_mem = UINT64_MAX;
	point(f, max_mean(base, N, total), 0, copies, target);
	/* proportional: a part per 1/2^j of a node's fair share */
	for (uint32_t j = 0; j <= 16; j++) {
		double g = total / N / ldexp(1.0, (int)j);
		double mm =
		    ideal_prop(c, &w, base, total, g, 0, 0, &q, taken, &mem);

		point(f, mm, mem, copies, target);
		if (mem > budget)
			break;
	}
	/* uniform: the top k in R parts each */
	for (uint32_t R = 2; R <= N; R *= 2)
		for (uint64_t k = 1; k <= c->n_objs && k * (R - 1) <= budget;
		     k *= 2)
			point(f,
			      ideal_prop(c, &w, base, total, 0, k, R, &q, taken,
					 &mem),
			      mem, copies, target);
	rc = 0;
out:
	free(w.order);
	free(base);
	free(q.load);
	free(q.h);
	free(q.tmp);
	free(taken);
	return rc;
}
