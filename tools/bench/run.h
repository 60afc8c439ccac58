/*
 * What one run (one mode) measured: the interval rows, the master's
 * counters at the start and end, the reaction times and the summary.
 */
#ifndef MBENCH_RUN_H
#define MBENCH_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "load.h"
#include "opts.h"
#include "../common/phases.h"

/* The master's /metrics figures the bench follows (through Stats). */
#define MAX_REASONS 32
struct master_sample {
	bool ok;
	int64_t observed_hot, would_propose, accepted, created, completed;
	int64_t failed, revoked, replicas, inflight, copy_bytes, used_bytes;
	int64_t evicted;
	int64_t room; /* hot copies eviction made room for */
	/* room's cost: copies dropped whose object stayed readable, objects
	 * evicted whose only copy it was (each a miss at its next read) */
	int64_t room_dropped, room_only;
	/* hot copies placed under room_fill_limit, nothing evicted; dynamic
	 * replicas eviction gave back before any other copy */
	int64_t room_headroom, gave_back;
	/* dynamic copies completed by source kind: the put's replica, or
	 * another dynamic replica */
	int64_t from_primary, from_replica;
	size_t n_reasons; /* admission rejections by reason (non-zero) */
	char reason[MAX_REASONS][40];
	int64_t rejected[MAX_REASONS];
};

/* Replica counts of the hottest keys, asked of the master after the run. */
#define SURVEY_TOP 8
struct survey {
	size_t checked;		  /* hottest keys asked */
	size_t multi;		  /* of them, with > 1 replica */
	uint64_t replicas;	  /* replicas of them in all */
	uint32_t top[SURVEY_TOP]; /* replicas of the SURVEY_TOP hottest */
	size_t n_top;
};

struct row {
	double t, secs; /* end of the row (s since the reads began), length */
	uint64_t reads[BENCH_MAX_WORKERS]; /* served in the row, per worker */
	uint64_t total, errors, misses;
	uint64_t bytes, cross_bytes; /* read in the row; of them cross-domain */
	double max_mean;	  /* max / mean of reads[] (0 when no reads) */
	uint64_t replicated_keys; /* so far */
	struct master_sample m;	  /* at the row's end */
};

struct run {
	const char *mode;
	enum bench_workload workload;
	uint32_t workers;
	char names[BENCH_MAX_WORKERS][64];
	uint32_t domains;		    /* distinct worker domains */
	char domain[BENCH_MAX_WORKERS][64]; /* of each worker */
	struct row *rows;
	size_t n_rows, cap_rows;
	/* first time seen, ms since the reads began; -1 = never */
	double hot_ms, accept_ms, complete_ms, dyn_read_ms;
	double accept_lo_ms; /* last poll before the admission was seen */
	double poll_ms;	     /* how often the master was polled for them */
	struct master_sample start, end;
	uint64_t worker_total[BENCH_MAX_WORKERS];
	uint64_t reads, errors, misses, corrupt, replicated_keys, dyn_reads;
	uint64_t late, requests;
	uint64_t evicted_reads; /* not trace: reads of evicted keys */
	uint64_t flash_reads;	/* flash: reads of the flash key */
	/* not trace: the last millisecond's ranking's top keys
	 * (load_ranking_digest), as mcrepl-sim prints it */
	uint64_t ranking_digest;
	uint64_t read_bytes, cross_bytes; /* every read; cross-domain ones */
	double cross_share;		  /* cross_bytes / read_bytes */
	double steady_cross_share;	  /* the same over the last-half rows */
	size_t malformed;
	double seconds, put_seconds;
	double p50_us, p99_us, p999_us;	     /* every read */
	double steady_p50_us, steady_p99_us; /* reads of the last half */
	double steady_max_mean, whole_max_mean, dyn_share;
	double steady_sum_max_mean; /* max/mean of the last half's sums */
	double noise_floor; /* expected steady_max_mean of a perfectly even
			       spread with the same reads per row */
	struct survey survey;
	struct phases phases; /* shifting: per phase (else none) */
	bool interrupted;
};

/* ---- monitor.c: the sampler on the main thread ---- */

/* Stats RPC -> the figures above. 0 or -1 (m->ok false). */
int master_sample(store_client *sc, struct master_sample *m);

/*
 * Watch a started load until it ends (duration, end of trace, or
 * *interrupted), polling the master every poll period for the reaction
 * times and closing a row each interval (printed unless quiet). Then stop
 * the load and fill the run's totals. 0, or -1 when memory is short.
 */
int monitor_run(struct run *r, struct load *l, store_client *sc,
		const struct bench_opts *o,
		volatile const sig_atomic_t *interrupted);

/* ---- survey.c ---- */
/* Ask the master for the replicas of the `top` hottest keys (Zipf ranks
 * of the last ranking read,
 * or the most-read trace blocks), after the reads. Each ask is a Stat
 * (no heat; an older master without Stat answers through GetReplicaList,
 * which heats the key). 0 or -1 (OOM, master gone). */
int survey_replicas(struct survey *sv, store_client *sc, const struct load *l,
		    size_t top);

/* ---- report.c ---- */
void report_header(const struct run *r, const struct bench_opts *o);
void report_row(const struct run *r, const struct row *w);
void report_end(const struct run *r, const struct bench_opts *o);
/* The '{"summary":{...}}' line. */
void report_summary(const struct run *r, const struct bench_opts *o);
/* Runs side by side. */
void report_compare(const struct run *runs, size_t n);

/* ---- plot.c ---- */
/* Write a PNG of per-worker reads/s and max/mean over time per run with
 * gnuplot; when gnuplot is missing say how to install it and skip.
 * 0, or -1 when gnuplot failed. */
int plot_runs(const struct run *runs, size_t n, const char *png);

#endif
