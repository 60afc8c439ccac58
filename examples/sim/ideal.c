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
	if (w->o->workload == SIM_ZIPF)
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

/* Min-heap of nodes by load. */
struct heap {
	double *load;
	uint32_t *h;
	uint32_t n;
};

static void sift_down(struct heap *q, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < q->n && q->load[q->h[l]] < q->load[q->h[m]])
			m = l;
		if (r < q->n && q->load[q->h[r]] < q->load[q->h[m]])
			m = r;
		if (m == i)
			return;
		t = q->h[i];
		q->h[i] = q->h[m];
		q->h[m] = t;
		i = m;
	}
}

static void heapify(struct heap *q)
{
	for (uint32_t i = q->n / 2; i-- > 0;)
		sift_down(q, i);
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
	q->n = N;
	for (uint32_t i = 0; i < N; i++)
		q->h[i] = i;
	heapify(q);
	for (uint64_t i = 0; i < k; i++) {
		double part = weight(w, nth(w, i)) / R;

		if (c->objs[nth(w, i)].primary == SIM_NONE)
			continue;
		/* Pop the R least-loaded nodes (distinct), load, push back. */
		for (uint32_t j = 0; j < R; j++) {
			taken[j] = q->h[0];
			q->h[0] = q->h[--q->n];
			sift_down(q, 0);
		}
		for (uint32_t j = 0; j < R; j++) {
			uint32_t p;

			q->load[taken[j]] += part;
			p = q->n++;
			q->h[p] = taken[j];
			while (p &&
			       q->load[q->h[p]] < q->load[q->h[(p - 1) / 2]]) {
				uint32_t t = q->h[p];

				q->h[p] = q->h[(p - 1) / 2];
				q->h[(p - 1) / 2] = t;
				p = (p - 1) / 2;
			}
		}
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
	struct weights w = {o, counts, NULL};
	uint32_t R = o->cfg.max_memory_replicas;
	uint64_t kmax = (uint64_t)c->n_nodes * 16;
	double *base = calloc(c->n_nodes, sizeof(*base)), total = 0;
	struct heap q = {calloc(c->n_nodes, sizeof(double)),
			 calloc(c->n_nodes, sizeof(uint32_t)), 0};
	uint32_t *taken;
	int rc = -1;

	if (R > c->n_nodes)
		R = c->n_nodes;
	taken = calloc(R, sizeof(*taken));
	if (!base || !q.load || !q.h || !taken || (counts && sort_order(&w, c)))
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
	rc = 0;
out:
	free(w.order);
	free(base);
	free(q.load);
	free(q.h);
	free(taken);
	return rc;
}
