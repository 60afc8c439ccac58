/* The sampler: master polling, reaction times, interval rows, totals. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run.h"

#define FAST_POLL_MS 10.0 /* until the first dynamic read */
#define SLOW_POLL_MS 100.0

static int64_t metric(const char *text, const char *name)
{
	long long v = metric_value(text, name);

	return v < 0 ? 0 : v;
}

/* Every non-zero mcrepl_dynamic_admission_rejected_total{reason="x"}. */
static void rejections(const char *text, struct master_sample *m)
{
	static const char pre[] =
	    "mcrepl_dynamic_admission_rejected_total{reason=\"";
	const char *p = text;

	while ((p = strstr(p, pre)) != NULL && m->n_reasons < MAX_REASONS) {
		const char *name = p + sizeof(pre) - 1,
			   *end = strchr(name, '"');
		long long v;

		if (!end || end[1] != '}' || end[2] != ' ')
			break;
		v = strtoll(end + 3, NULL, 10);
		p = end;
		if (v <= 0)
			continue;
		snprintf(m->reason[m->n_reasons], sizeof(m->reason[0]), "%.*s",
			 (int)(end - name), name);
		m->rejected[m->n_reasons++] = v;
	}
}

int master_sample(store_client *sc, struct master_sample *m)
{
	char *t = NULL;

	memset(m, 0, sizeof(*m));
	if (store_client_stats(sc, NULL, NULL, &t) != 0)
		return -1;
	m->observed_hot = metric(t, "mcrepl_dynamic_observed_hot_total");
	m->would_propose = metric(t, "mcrepl_dynamic_would_propose_total");
	m->accepted = metric(t, "mcrepl_dynamic_admission_accepted_total");
	m->created = metric(t, "mcrepl_dynamic_copy_tasks_created_total");
	m->completed = metric(t, "mcrepl_dynamic_copy_tasks_completed_total");
	m->failed = metric(t, "mcrepl_dynamic_copy_tasks_failed_total");
	m->revoked = metric(t, "mcrepl_dynamic_copy_tasks_revoked_total");
	m->replicas = metric(t, "mcrepl_dynamic_replicas");
	m->inflight = metric(t, "mcrepl_dynamic_copies_inflight");
	m->copy_bytes =
	    metric(t, "mcrepl_dynamic_same_domain_copy_bytes_total") +
	    metric(t, "mcrepl_dynamic_cross_domain_copy_bytes_total");
	m->used_bytes = metric(t, "mcrepl_master_used_bytes");
	m->evicted = metric(t, "mcrepl_master_evicted_objects_total");
	m->room = metric(t, "mcrepl_master_policy_room_total");
	m->room_dropped =
	    metric(t, "mcrepl_master_policy_room_dropped_dynamic_total") +
	    metric(t, "mcrepl_master_policy_room_dropped_duplicate_total");
	m->room_only =
	    metric(t, "mcrepl_master_policy_room_evicted_only_copies_total");
	m->room_headroom =
	    metric(t, "mcrepl_master_policy_room_headroom_total");
	m->gave_back =
	    metric(t, "mcrepl_master_eviction_gave_back_dynamic_total");
	m->from_primary =
	    metric(t, "mcrepl_master_dynamic_copies_from_primary_total");
	m->from_replica =
	    metric(t, "mcrepl_master_dynamic_copies_from_replica_total");
	rejections(t, m);
	m->ok = true;
	free(t);
	return 0;
}

/* max / mean of n counts (0 when they sum to 0). */
static double max_over_mean(const uint64_t *v, uint32_t n)
{
	uint64_t max = 0, sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] > max)
			max = v[i];
	}
	return sum ? (double)max * n / (double)sum : 0;
}

static double ms_since(const struct load *l, int64_t ns)
{
	return (double)(ns - l->t0_ns) / 1e6;
}

static void sleep_until(int64_t due)
{
	int64_t left = due - bench_now_ns();
	struct timespec ts = {(time_t)(left / 1000000000LL),
			      (long)(left % 1000000000LL)};

	if (left > 0)
		nanosleep(&ts, NULL); /* a signal cuts it short: fine */
}

/* First sightings of the master's counters moving since the start. */
static void note_reaction(struct run *r, const struct master_sample *m,
			  double now_ms)
{
	if (!m->ok)
		return;
	if (r->hot_ms < 0 && m->observed_hot > r->start.observed_hot)
		r->hot_ms = now_ms;
	if (r->accept_ms < 0 && m->accepted > r->start.accepted)
		r->accept_ms = now_ms;
	else if (r->accept_ms < 0)
		r->accept_lo_ms = now_ms;
	if (r->complete_ms < 0 && m->completed > r->start.completed)
		r->complete_ms = now_ms;
}

struct cursor {
	uint64_t reads[BENCH_MAX_WORKERS], errors, misses;
	uint64_t bytes, cross_bytes;
	double t; /* end of the last row, s */
};

static int close_row(struct run *r, struct load *l, struct cursor *c,
		     const struct master_sample *m, double t_s)
{
	struct row *w;

	if (r->n_rows == r->cap_rows) {
		size_t nc = r->cap_rows ? 2 * r->cap_rows : 256;
		struct row *p = realloc(r->rows, nc * sizeof(*p));

		if (!p)
			return -1;
		r->rows = p;
		r->cap_rows = nc;
	}
	w = &r->rows[r->n_rows++];
	memset(w, 0, sizeof(*w));
	w->t = t_s;
	w->secs = t_s - c->t;
	for (uint32_t i = 0; i < r->workers; i++) {
		uint64_t now = atomic_load(&l->worker_reads[i]);

		w->reads[i] = now - c->reads[i];
		w->total += w->reads[i];
		c->reads[i] = now;
	}
	w->errors = atomic_load(&l->errors) - c->errors;
	w->misses = atomic_load(&l->misses) - c->misses;
	w->bytes = atomic_load(&l->read_bytes) - c->bytes;
	w->cross_bytes = atomic_load(&l->cross_bytes) - c->cross_bytes;
	c->errors += w->errors;
	c->misses += w->misses;
	c->bytes += w->bytes;
	c->cross_bytes += w->cross_bytes;
	c->t = t_s;
	w->max_mean = max_over_mean(w->reads, r->workers);
	w->replicated_keys = atomic_load(&l->replicated_keys);
	w->m = *m;
	return 0;
}

static bool may_replicate(const struct run *r)
{
	return strcmp(r->mode, "off") != 0 && strcmp(r->mode, "observe") != 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median max/mean of the last half of the full-length rows (of every
 * row when the run was shorter than one interval). */
static double steady(const struct run *r, double interval)
{
	double *v = malloc((r->n_rows + 1) * sizeof(*v)), med;
	size_t n = 0, from, k;

	if (!v)
		return 0;
	for (int pass = 0; pass < 2 && n == 0; pass++)
		for (size_t i = 0; i < r->n_rows; i++)
			if (r->rows[i].total > 0 &&
			    (pass || r->rows[i].secs >= 0.5 * interval))
				v[n++] = r->rows[i].max_mean;
	from = n / 2;
	k = n - from;
	qsort(v + from, k, sizeof(*v), cmp_dbl);
	if (k == 0)
		med = 0;
	else if (k % 2)
		med = v[from + k / 2];
	else
		med = (v[from + k / 2 - 1] + v[from + k / 2]) / 2;
	free(v);
	return med;
}

/* Per-worker sums over the same rows as steady(): their max/mean; and
 * the cross-domain share of the bytes read in those rows. */
static double steady_sum(const struct run *r, double interval, double *mean,
			 double *cross_share)
{
	uint64_t sum[BENCH_MAX_WORKERS] = {0}, total = 0;
	uint64_t bytes = 0, cross = 0;
	size_t n = 0, seen = 0;

	for (size_t i = 0; i < r->n_rows; i++)
		n += r->rows[i].total > 0 && r->rows[i].secs >= 0.5 * interval;
	for (size_t i = 0; i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];

		if (w->total == 0 || w->secs < 0.5 * interval || seen++ < n / 2)
			continue;
		for (uint32_t j = 0; j < r->workers; j++)
			sum[j] += w->reads[j];
		total += w->total;
		bytes += w->bytes;
		cross += w->cross_bytes;
	}
	*mean = n - n / 2 ? (double)total / (double)(n - n / 2) : 0;
	*cross_share = bytes ? (double)cross / (double)bytes : 0;
	return max_over_mean(sum, r->workers);
}

/* E[max of w standard normals], by a fixed-seed Monte Carlo. */
static double expected_max_normal(uint32_t w)
{
	uint64_t rng = 42;
	double acc = 0;
	const int trials = 20000;

	for (int t = 0; t < trials; t++) {
		double best = -1e9;

		for (uint32_t i = 0; i < w; i++) {
			double u1 = bench_rand01(&rng) + 1e-300;
			double u2 = bench_rand01(&rng);
			double z =
			    sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);

			if (z > best)
				best = z;
		}
		acc += best;
	}
	return acc / trials;
}

/* Reads spread evenly at random over w workers, n per row: each worker's
 * count has sd/mean = sqrt((w - 1) / n), and the row's max exceeds the
 * mean by E[max of w normals] of those. */
static double noise_floor(uint32_t w, double n)
{
	if (w < 2 || n <= 0)
		return 1;
	return 1 + expected_max_normal(w) * sqrt((double)(w - 1) / n);
}

static void counters(struct run *r, struct load *l)
{
	for (uint32_t i = 0; i < r->workers; i++)
		r->worker_total[i] = atomic_load(&l->worker_reads[i]);
	r->reads = atomic_load(&l->reads);
	r->errors = atomic_load(&l->errors);
	r->misses = atomic_load(&l->misses);
	r->evicted_reads = atomic_load(&l->evicted_reads);
	r->flash_reads = atomic_load(&l->flash_reads);
	r->ranking_digest = load_ranking_digest(l, 64);
	r->corrupt = atomic_load(&l->corrupt);
	r->replicated_keys = atomic_load(&l->replicated_keys);
	r->dyn_reads = atomic_load(&l->dyn_reads);
	r->read_bytes = atomic_load(&l->read_bytes);
	r->cross_bytes = atomic_load(&l->cross_bytes);
	r->cross_share =
	    r->read_bytes ? (double)r->cross_bytes / (double)r->read_bytes : 0;
	r->late = atomic_load(&l->late);
	r->requests = atomic_load(&l->done_reqs);
	if (atomic_load(&l->first_dyn_ns) >= 0)
		r->dyn_read_ms = (double)atomic_load(&l->first_dyn_ns) / 1e6;
	r->dyn_share = r->end.used_bytes > 0 ? (double)r->end.copy_bytes /
						   (double)r->end.used_bytes
					     : 0;
}

static void latencies(struct run *r, const struct load *l)
{
	static const double q[] = {0.50, 0.99, 0.999};
	double v[3];

	load_latency_us(l, 0, q, v, 3);
	r->p50_us = v[0];
	r->p99_us = v[1];
	r->p999_us = v[2];
	load_latency_us(l, r->seconds / 2, q, v, 2);
	r->steady_p50_us = v[0];
	r->steady_p99_us = v[1];
}

static void balance(struct run *r, const struct bench_opts *o)
{
	double row_mean = 0;

	r->steady_max_mean = steady(r, o->interval);
	r->steady_sum_max_mean =
	    steady_sum(r, o->interval, &row_mean, &r->steady_cross_share);
	/* Trace reads are not independent (a request's blocks were written
	 * round robin), so the formula holds for Zipf only. */
	r->noise_floor =
	    r->workload != BENCH_TRACE ? noise_floor(r->workers, row_mean) : 0;
	r->whole_max_mean = max_over_mean(r->worker_total, r->workers);
}

/* Shifting: the per-phase figures (../common/phases.h) over the rows
 * steady() counts, each phase's dynamic replicas as the master reported
 * them at its last row's end. 0, or -1 when memory is short. */
static int phases(struct run *r, const struct bench_opts *o)
{
	size_t n = (size_t)ceil(o->duration / o->shift_period - 1e-9);
	double *mm = malloc((r->n_rows + 1) * sizeof(*mm));
	uint64_t *dyn = malloc((r->n_rows + 1) * sizeof(*dyn));
	int rc = -1;

	if (mm && dyn) {
		for (size_t i = 0; i < r->n_rows; i++) {
			const struct row *w = &r->rows[i];

			mm[i] = w->total > 0 && w->secs >= 0.5 * o->interval
				    ? w->max_mean
				    : NAN;
			dyn[i] =
			    w->m.replicas > 0 ? (uint64_t)w->m.replicas : 0;
		}
		rc = phases_compute(&r->phases, n ? n : 1, mm, dyn, r->n_rows,
				    o->interval, o->shift_period,
				    r->noise_floor);
	}
	free(mm);
	free(dyn);
	return rc;
}

/* Stop the load, close the last (short) row, fill the totals. */
static int finish(struct run *r, struct load *l, store_client *sc,
		  const struct bench_opts *o, struct cursor *c)
{
	int64_t now;
	int rc = 0;

	load_stop(l);
	now = bench_now_ns();
	r->seconds = (double)(now - l->t0_ns) / 1e9;
	master_sample(sc, &r->end);
	note_reaction(r, &r->end, ms_since(l, now));
	if (r->seconds - c->t >= 0.05) {
		rc = close_row(r, l, c, &r->end, r->seconds);
		if (rc == 0 && !o->quiet)
			report_row(r, &r->rows[r->n_rows - 1]);
	}
	counters(r, l);
	latencies(r, l);
	balance(r, o);
	if (rc == 0 &&
	    (r->workload == BENCH_SHIFTING || r->workload == BENCH_REHOT))
		rc = phases(r, o);
	return rc;
}

int monitor_run(struct run *r, struct load *l, store_client *sc,
		const struct bench_opts *o,
		volatile const sig_atomic_t *interrupted)
{
	int64_t t0 = l->t0_ns, iv = (int64_t)(o->interval * 1e9);
	int64_t end =
	    o->duration > 0 ? t0 + (int64_t)(o->duration * 1e9) : INT64_MAX;
	int64_t next_row = t0 + iv, next_poll = t0, now, next;
	struct master_sample m = r->start;
	struct cursor c;
	int rc = 0;

	memset(&c, 0, sizeof(c));
	r->poll_ms = may_replicate(r) ? FAST_POLL_MS : SLOW_POLL_MS;
	while (rc == 0 && !*interrupted) {
		bool fast =
		    may_replicate(r) &&
		    (atomic_load(&l->first_dyn_ns) < 0 || r->complete_ms < 0);
		int64_t poll =
		    (int64_t)((fast ? FAST_POLL_MS : SLOW_POLL_MS) * 1e6);

		now = bench_now_ns();
		if (now >= end || load_finished(l))
			break;
		if (now >= next_poll) {
			master_sample(sc, &m);
			note_reaction(r, &m, ms_since(l, bench_now_ns()));
			next_poll = now + poll;
		}
		if (now >= next_row) {
			rc = close_row(r, l, &c, &m,
				       (double)(next_row - t0) / 1e9);
			if (rc == 0 && !o->quiet)
				report_row(r, &r->rows[r->n_rows - 1]);
			next_row += iv;
		}
		next = next_poll < next_row ? next_poll : next_row;
		sleep_until(next < end ? next : end);
	}
	r->interrupted = *interrupted != 0;
	if (rc != 0) {
		load_stop(l);
		return rc;
	}
	return finish(r, l, sc, o, &c);
}
