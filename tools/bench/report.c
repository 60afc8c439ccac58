/* Interval rows, end-of-run block, summary line, side-by-side table. */
#include <stdio.h>
#include <string.h>

#include "run.h"

#define MAX_ROW_WORKERS 16 /* wider clusters: no per-worker columns */

static double per_s(uint64_t n, double secs)
{
	return secs > 0 ? (double)n / secs : 0;
}

void report_header(const struct run *r, const struct bench_opts *o)
{
	(void)o;
	printf("\n[%s] %8s %8s", r->mode, "t(s)", "reads/s");
	if (r->workers <= MAX_ROW_WORKERS)
		for (uint32_t i = 0; i < r->workers; i++)
			printf(" %7.7s", r->names[i]);
	printf(" %8s %6s %8s %9s %8s %11s %6s%s\n", "max/mean", "xdom",
	       "dyn_repl", "repl_keys", "dyn_byte", "tasks(c/d)", "errors",
	       r->workload == BENCH_TRACE ? "  misses" : "");
}

void report_row(const struct run *r, const struct row *w)
{
	const struct master_sample *m = &w->m;
	char tasks[32];

	printf("[%s] %8.1f %8.0f", r->mode, w->t, per_s(w->total, w->secs));
	if (r->workers <= MAX_ROW_WORKERS)
		for (uint32_t i = 0; i < r->workers; i++)
			printf(" %7.0f", per_s(w->reads[i], w->secs));
	snprintf(tasks, sizeof(tasks), "%lld/%lld", (long long)m->created,
		 (long long)m->completed);
	printf(" %8.3f %5.1f%% %8lld %9llu %7.2f%% %11s %6llu", w->max_mean,
	       w->bytes ? 100.0 * (double)w->cross_bytes / (double)w->bytes
			: 0.0,
	       (long long)m->replicas, (unsigned long long)w->replicated_keys,
	       m->used_bytes > 0
		   ? 100.0 * (double)m->copy_bytes / (double)m->used_bytes
		   : 0.0,
	       tasks, (unsigned long long)w->errors);
	if (r->workload == BENCH_TRACE)
		printf(" %7llu", (unsigned long long)w->misses);
	printf("\n");
	fflush(stdout);
}

static void print_ms(const char *what, double ms)
{
	if (ms < 0)
		printf("  %-44s never\n", what);
	else
		printf("  %-44s %9.0f ms\n", what, ms);
}

/* The admission happened after the last poll that did not see it and no
 * later than both the poll that saw it and the first dynamic read: take
 * the middle of that window; *err_ms is half its width. */
static double reaction_ms(const struct run *r, double *err_ms)
{
	double hi;

	if (r->accept_ms < 0 || r->dyn_read_ms < 0)
		return -1;
	hi = r->accept_ms < r->dyn_read_ms ? r->accept_ms : r->dyn_read_ms;
	if (hi < r->accept_lo_ms)
		hi = r->accept_lo_ms;
	if (err_ms)
		*err_ms = (hi - r->accept_lo_ms) / 2;
	return r->dyn_read_ms - (r->accept_lo_ms + hi) / 2;
}

/* Admission to copy completed, both as first seen by the polls. */
static double copy_ms(const struct run *r)
{
	if (r->accept_ms < 0 || r->complete_ms < 0)
		return -1;
	return r->complete_ms - r->accept_ms;
}

static void report_reaction(const struct run *r)
{
	double err = 0, v = reaction_ms(r, &err);

	printf("  reaction (master /metrics polled every %.0f ms; the client's "
	       "dynamic read is exact):\n",
	       r->poll_ms);
	print_ms("first heat-window crossing seen after", r->hot_ms);
	print_ms("first admission (lease + task) seen after", r->accept_ms);
	print_ms("first dynamic copy completed seen after", r->complete_ms);
	print_ms("first read served by a dynamic replica at", r->dyn_read_ms);
	if (copy_ms(r) >= 0)
		printf(
		    "  admission -> copy completed: %.0f ms (+-%.0f ms: both "
		    "as seen by the polls)\n",
		    copy_ms(r), r->poll_ms);
	if (v >= 0)
		printf("  reaction = first dynamic read - admission = %.1f ms "
		       "(+-%.1f ms: the admission fell between polls at %.1f "
		       "and %.1f ms)\n",
		       v, err, r->accept_lo_ms, r->dyn_read_ms - v + err);
}

static void report_survey(const struct survey *sv)
{
	if (!sv->checked)
		return;
	printf("  hottest %zu keys (asked of the master after the run): %zu "
	       "with > 1 replica, %.2f replicas each on average; the %zu "
	       "hottest:",
	       sv->checked, sv->multi,
	       (double)sv->replicas / (double)sv->checked, sv->n_top);
	for (size_t i = 0; i < sv->n_top; i++)
		printf(" %u", sv->top[i]);
	printf("\n");
}

static void report_load(const struct run *r, const struct bench_opts *o)
{
	printf("[%s] %.1f s, %llu reads (%.0f/s), %llu errors", r->mode,
	       r->seconds, (unsigned long long)r->reads,
	       per_s(r->reads, r->seconds), (unsigned long long)r->errors);
	if (r->workload == BENCH_TRACE)
		printf(", %llu requests, %llu misses, %zu malformed lines, "
		       "%llu requests started >= 100 ms late",
		       (unsigned long long)r->requests,
		       (unsigned long long)r->misses, r->malformed,
		       (unsigned long long)r->late);
	printf("%s\n  reads per worker:",
	       r->interrupted ? " (interrupted)" : "");
	for (uint32_t i = 0; i < r->workers; i++)
		printf(" %s%s%s%s %.1f%%", r->names[i],
		       r->domains > 1 ? " (" : "",
		       r->domains > 1 ? r->domain[i] : "",
		       r->domains > 1 ? ")" : "",
		       r->reads ? 100.0 * (double)r->worker_total[i] /
				      (double)r->reads
				: 0.0);
	printf("\n  cross-domain reads (from a worker in another domain than "
	       "the reader's, %u domain%s): %.2f of %.2f MiB = %.2f%%, last "
	       "half %.2f%%",
	       r->domains, r->domains == 1 ? "" : "s",
	       (double)r->cross_bytes / 1048576.0,
	       (double)r->read_bytes / 1048576.0, 100.0 * r->cross_share,
	       100.0 * r->steady_cross_share);
	printf("\n  max/mean: steady %.3f (median of the last half of the "
	       "%.0f s rows",
	       r->steady_max_mean, o->interval);
	if (r->noise_floor > 0)
		printf("; an even random spread would show %.3f",
		       r->noise_floor);
	printf("), last half summed %.3f, whole run %.3f\n",
	       r->steady_sum_max_mean, r->whole_max_mean);
	if (!r->phases.n)
		return;
	printf("  phases (ranking moved every %g s): steady max/mean",
	       o->shift_period);
	for (size_t k = 0; k < r->phases.n; k++)
		printf(" %.3f", r->phases.max_mean[k]);
	printf("; worst %.3f, %llu of %zu within %.2f x the floor\n",
	       r->phases.worst, (unsigned long long)r->phases.relieved,
	       r->phases.n, PHASE_RELIEF);
}

static void report_master(const struct master_sample *e, double share)
{
	printf(
	    "  master: %lld dynamic replicas, copy tasks %lld created / %lld "
	    "completed / %lld failed / %lld revoked, %lld would-propose, "
	    "%lld evicted objects\n",
	    (long long)e->replicas, (long long)e->created,
	    (long long)e->completed, (long long)e->failed,
	    (long long)e->revoked, (long long)e->would_propose,
	    (long long)e->evicted);
	if (e->n_reasons) {
		printf("  admission rejections:");
		for (size_t i = 0; i < e->n_reasons; i++)
			printf(" %s %lld", e->reason[i],
			       (long long)e->rejected[i]);
		printf("\n");
	}
	printf("  dynamic bytes %.2f MiB = %.2f%% of %.2f MiB stored\n",
	       (double)e->copy_bytes / 1048576.0, 100.0 * share,
	       (double)e->used_bytes / 1048576.0);
}

void report_end(const struct run *r, const struct bench_opts *o)
{
	report_load(r, o);
	printf(
	    "  replicated keys %llu (read from a dynamic replica or from two "
	    "workers); %llu reads from dynamic replicas\n",
	    (unsigned long long)r->replicated_keys,
	    (unsigned long long)r->dyn_reads);
	report_survey(&r->survey);
	report_master(&r->end, r->dyn_share);
	report_reaction(r);
	printf("  read latency: p50 %.0f us, p99 %.0f us, p99.9 %.0f us; last "
	       "half of the run: p50 %.0f us, p99 %.0f us\n",
	       r->p50_us, r->p99_us, r->p999_us, r->steady_p50_us,
	       r->steady_p99_us);
}

static void json_ms(const char *name, double v)
{
	if (v < 0)
		printf(",\"%s\":null", name);
	else
		printf(",\"%s\":%.1f", name, v);
}

static const char *bench_workload_name(enum bench_workload w)
{
	return w == BENCH_ZIPF	     ? "zipf"
	       : w == BENCH_TRACE    ? "trace"
	       : w == BENCH_SHIFTING ? "shifting"
	       : w == BENCH_FLASH    ? "flash"
				     : "rehot";
}

/* Flash: the largest max/mean of the rows its window overlaps; 0: none. */
static double flash_max_mean(const struct run *r, const struct bench_opts *o)
{
	double mx = 0;

	for (size_t i = 0; r->workload == BENCH_FLASH && i < r->n_rows; i++) {
		const struct row *w = &r->rows[i];

		if (w->total && w->t > o->flash_at &&
		    w->t - w->secs < o->flash_at + o->flash_seconds &&
		    w->max_mean > mx)
			mx = w->max_mean;
	}
	return mx;
}

void report_summary(const struct run *r, const struct bench_opts *o)
{
	printf("{\"summary\":{\"workload\":\"%s\",\"mode\":\"%s\","
	       "\"workers\":%u,\"steady_max_mean\":%.4f,"
	       "\"replicated_keys\":%llu,\"dynamic_bytes_share\":%.6f",
	       bench_workload_name(r->workload), r->mode, r->workers,
	       r->steady_max_mean, (unsigned long long)r->replicated_keys,
	       r->dyn_share);
	json_ms("reaction_ms", reaction_ms(r, NULL));
	printf(",\"p50_us\":%.0f,\"p99_us\":%.0f,\"reads\":%llu,"
	       "\"errors\":%llu",
	       r->p50_us, r->p99_us, (unsigned long long)r->reads,
	       (unsigned long long)r->errors);
	printf(",\"steady_p50_us\":%.0f,\"steady_p99_us\":%.0f",
	       r->steady_p50_us, r->steady_p99_us);
	printf(",\"p999_us\":%.0f,\"seconds\":%.2f,\"reads_per_s\":%.1f,"
	       "\"whole_max_mean\":%.4f,\"steady_sum_max_mean\":%.4f,"
	       "\"dynamic_reads\":%llu,"
	       "\"dynamic_replicas\":%lld,\"tasks_created\":%lld,"
	       "\"tasks_completed\":%lld,\"tasks_failed\":%lld,"
	       "\"corrupt\":%llu",
	       r->p999_us, r->seconds, per_s(r->reads, r->seconds),
	       r->whole_max_mean, r->steady_sum_max_mean,
	       (unsigned long long)r->dyn_reads, (long long)r->end.replicas,
	       (long long)r->end.created, (long long)r->end.completed,
	       (long long)r->end.failed, (unsigned long long)r->corrupt);
	printf(",\"domains\":%u,\"read_bytes\":%llu,"
	       "\"cross_domain_read_bytes\":%llu,\"cross_domain_share\":%.6f,"
	       "\"steady_cross_domain_share\":%.6f",
	       r->domains, (unsigned long long)r->read_bytes,
	       (unsigned long long)r->cross_bytes, r->cross_share,
	       r->steady_cross_share);
	printf(",\"rejected\":{");
	for (size_t i = 0; i < r->end.n_reasons; i++)
		printf("%s\"%s\":%lld", i ? "," : "", r->end.reason[i],
		       (long long)r->end.rejected[i]);
	printf("}");
	printf(",\"hot_keys_checked\":%zu,\"hot_keys_replicated\":%zu",
	       r->survey.checked, r->survey.multi);
	if (r->noise_floor > 0)
		printf(",\"noise_floor\":%.4f", r->noise_floor);
	else
		printf(",\"noise_floor\":null");
	if (r->phases.n)
		phases_json(stdout, &r->phases);
	json_ms("admission_to_copy_ms", copy_ms(r));
	json_ms("first_hot_ms", r->hot_ms);
	json_ms("first_admission_ms", r->accept_ms);
	json_ms("first_completion_ms", r->complete_ms);
	json_ms("first_dynamic_read_ms", r->dyn_read_ms);
	printf(",\"evicted_objects\":%lld,\"room_made\":%lld"
	       ",\"room_dropped\":%lld,\"room_evicted_only\":%lld"
	       ",\"room_headroom\":%lld,\"evict_gave_back\":%lld"
	       ",\"evicted_reads\":%llu,\"flash_reads\":%llu"
	       ",\"flash_max_mean\":%.4f,\"ranking_digest\":\"%016llx\"",
	       (long long)(r->end.evicted - r->start.evicted),
	       (long long)(r->end.room - r->start.room),
	       (long long)(r->end.room_dropped - r->start.room_dropped),
	       (long long)(r->end.room_only - r->start.room_only),
	       (long long)(r->end.room_headroom - r->start.room_headroom),
	       (long long)(r->end.gave_back - r->start.gave_back),
	       (unsigned long long)r->evicted_reads,
	       (unsigned long long)r->flash_reads, flash_max_mean(r, o),
	       (unsigned long long)r->ranking_digest);
	if (r->workload == BENCH_TRACE)
		printf(",\"requests\":%llu,\"misses\":%llu,\"malformed\":%zu,"
		       "\"late_requests\":%llu,\"speedup\":%g",
		       (unsigned long long)r->requests,
		       (unsigned long long)r->misses, r->malformed,
		       (unsigned long long)r->late, o->speedup);
	printf(",\"copies_from_primary\":%lld,\"copies_from_replica\":%lld",
	       (long long)(r->end.from_primary - r->start.from_primary),
	       (long long)(r->end.from_replica - r->start.from_replica));
	printf(",\"interrupted\":%s}}\n", r->interrupted ? "true" : "false");
	fflush(stdout);
}

typedef void (*cell_fn)(const struct run *r, char *buf, size_t cap);

#define CELL(name, fmt, ...)                                                   \
	static void name(const struct run *r, char *b, size_t cap)             \
	{                                                                      \
		snprintf(b, cap, fmt, __VA_ARGS__);                            \
	}

CELL(c_workers, "%u", r->workers)
CELL(c_reads, "%llu", (unsigned long long)r->reads)
CELL(c_rate, "%.0f", per_s(r->reads, r->seconds))
CELL(c_steady, "%.3f", r->steady_max_mean)
CELL(c_whole, "%.3f", r->whole_max_mean)
CELL(c_ssum, "%.3f", r->steady_sum_max_mean)
CELL(c_repl, "%llu", (unsigned long long)r->replicated_keys)
CELL(c_dynrep, "%lld", (long long)r->end.replicas)
CELL(c_share, "%.2f%%", 100.0 * r->dyn_share)
CELL(c_tasks, "%lld/%lld", (long long)r->end.created,
     (long long)r->end.completed)
CELL(c_p50, "%.0f", r->p50_us)
CELL(c_p99, "%.0f", r->p99_us)
CELL(c_p999, "%.0f", r->p999_us)
CELL(c_sp50, "%.0f", r->steady_p50_us)
CELL(c_sp99, "%.0f", r->steady_p99_us)
CELL(c_domains, "%u", r->domains)
CELL(c_xshare, "%.2f%%", 100.0 * r->cross_share)
CELL(c_sxshare, "%.2f%%", 100.0 * r->steady_cross_share)
CELL(c_errors, "%llu", (unsigned long long)r->errors)
CELL(c_misses, "%llu", (unsigned long long)r->misses)
CELL(c_worst, "%.3f", r->phases.worst)
CELL(c_relieved, "%llu/%zu", (unsigned long long)r->phases.relieved,
     r->phases.n)

static void c_floor(const struct run *r, char *b, size_t cap)
{
	if (r->noise_floor > 0)
		snprintf(b, cap, "%.3f", r->noise_floor);
	else
		snprintf(b, cap, "-");
}

static void c_reaction(const struct run *r, char *b, size_t cap)
{
	double v = reaction_ms(r, NULL);

	if (v < 0)
		snprintf(b, cap, "-");
	else
		snprintf(b, cap, "%.0f", v);
}

void report_compare(const struct run *runs, size_t n)
{
	static const struct {
		const char *label;
		cell_fn fn;
	} rows[] = {
	    {"workers", c_workers},
	    {"domains", c_domains},
	    {"reads", c_reads},
	    {"reads/s", c_rate},
	    {"steady max/mean", c_steady},
	    {"  even-spread noise floor", c_floor},
	    {"last-half summed max/mean", c_ssum},
	    {"whole-run max/mean", c_whole},
	    {"replicated keys", c_repl},
	    {"cross-domain read share", c_xshare},
	    {"cross-domain share, last half", c_sxshare},
	    {"dynamic replicas", c_dynrep},
	    {"dynamic bytes share", c_share},
	    {"copy tasks created/completed", c_tasks},
	    {"reaction ms", c_reaction},
	    {"read p50 us", c_p50},
	    {"read p99 us", c_p99},
	    {"read p99.9 us", c_p999},
	    {"read p50 us, last half", c_sp50},
	    {"read p99 us, last half", c_sp99},
	    {"errors", c_errors},
	    {"misses (trace)", c_misses},
	    {"worst phase max/mean", c_worst},
	    {"phases within 1.05 x floor", c_relieved},
	};
	char cell[64];

	printf("\n%-30s", "side by side");
	for (size_t j = 0; j < n; j++)
		printf(" %14s", runs[j].mode);
	printf("\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].fn == c_misses && runs[0].workload != BENCH_TRACE)
			continue;
		if ((rows[i].fn == c_worst || rows[i].fn == c_relieved) &&
		    runs[0].workload != BENCH_SHIFTING &&
		    runs[0].workload != BENCH_REHOT)
			continue;
		printf("%-30s", rows[i].label);
		for (size_t j = 0; j < n; j++) {
			rows[i].fn(&runs[j], cell, sizeof(cell));
			printf(" %14s", cell);
		}
		printf("\n");
	}
}
