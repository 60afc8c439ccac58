/* Interval rows, summary line, comparison table and chart. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

void sim_report_header(FILE *f, const char *label)
{
	fprintf(f, "# config: %s\n", label);
	fprintf(f, "# %8s %9s %9s %10s %9s %9s %9s %12s %8s %8s\n", "t_s",
		"max/mean", "p99/mean", "reads", "dyn_repl", "repl_keys",
		"extra_mem", "copy_bytes", "inflight", "xdom");
}

void sim_report_row(FILE *f, const struct sim_row *r)
{
	if (isnan(r->max_mean))
		fprintf(f, "  %8.2f %9s %9s", r->t_s, "-", "-");
	else
		fprintf(f, "  %8.2f %9.3f %9.3f", r->t_s, r->max_mean,
			r->p99_mean);
	fprintf(f,
		" %10" PRIu64 " %9" PRIu64 " %9" PRIu64 " %8.3f%% %12" PRIu64
		" %8" PRIu64,
		r->reads, r->dyn_replicas, r->replicated_keys,
		100.0 * r->extra_mem, r->copy_bytes, r->inflight);
	if (isnan(r->xdom))
		fprintf(f, " %8s\n", "-");
	else
		fprintf(f, " %7.3f%%\n", 100.0 * r->xdom);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void sim_report_loads(const uint64_t *loads, uint64_t *scratch, uint32_t n,
		      double *max_mean, double *p99_mean)
{
	uint64_t total = 0;
	double mean;
	size_t p99;

	for (uint32_t i = 0; i < n; i++)
		total += loads[i];
	if (!total) {
		*max_mean = *p99_mean = NAN;
		return;
	}
	memcpy(scratch, loads, n * sizeof(*loads));
	qsort(scratch, n, sizeof(*scratch), cmp_u64);
	mean = (double)total / n;
	/* The nearest-rank 99th percentile. */
	p99 = (size_t)ceil(0.99 * n) - 1;
	*max_mean = (double)scratch[n - 1] / mean;
	*p99_mean = (double)scratch[p99] / mean;
}

/* A quoted string, cut at max bytes (0 = no limit). */
static void quoted(FILE *f, const char *s, size_t max)
{
	fputc('"', f);
	for (size_t n = 0; *s && (!max || n < max); s++, n++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
	if (*s)
		fputs("...", f);
	fputc('"', f);
}

static void json_str(FILE *f, const char *s)
{
	quoted(f, s, 0);
}

/* The oracle's frontier, the noise floor and, with bounded node memory,
 * the room-constrained floor. */
static void floors_json(FILE *f, const struct sim_result *r)
{
	fprintf(f,
		",\"oracle_at_mem_max_mean\":%.4f"
		",\"oracle_mem_for_max_mean\":%.0f"
		",\"oracle_best_max_mean\":%.4f,\"oracle_best_mem\":%.0f"
		",\"noise_floor\":%.4f,\"noise_floor_max_mean\":%.4f",
		r->oracle.at_mem,
		r->oracle.mem_for == UINT64_MAX ? -1.0
						: (double)r->oracle.mem_for,
		r->oracle.best,
		r->oracle.best_mem == UINT64_MAX ? -1.0
						 : (double)r->oracle.best_mem,
		r->noise_floor, r->noise_floor);
	if (!isnan(r->room_floor.max_mean))
		fprintf(f, ",\"floor_room\":%.4f,\"floor_room_slots\":%" PRIu64,
			r->room_floor.max_mean, r->room_floor.slots);
}

void sim_report_summary(FILE *f, const struct sim_result *r)
{
	fprintf(f,
		"{\"summary\":{\"workload\":\"%s\",\"config\":", r->workload);
	json_str(f, r->label);
	fprintf(f, ",\"read_order\":\"%s\"", r->read_order);
	fprintf(f,
		",\"nodes\":%u,\"keys\":%" PRIu64 ",\"reads\":%" PRIu64
		",\"reads_served\":%" PRIu64,
		r->nodes, r->keys, r->reads, r->served);
	fprintf(f,
		",\"steady_max_mean\":%.4f,\"steady_p99_mean\":%.4f"
		",\"ideal_max_mean\":%.4f,\"ideal_k\":%" PRIu64
		",\"ideal_r\":%u,\"ideal_at_k_max_mean\":%.4f"
		",\"ideal_base_max_mean\":%.4f,\"ideal_nocap\":%.4f"
		",\"ideal_nocap_k\":%" PRIu64 ",\"ideal_nocap_r\":%u",
		r->steady_max_mean, r->steady_p99_mean, r->ideal.max_mean,
		r->ideal.k, r->ideal.r, r->ideal.at_k, r->ideal.base,
		r->ideal.nocap, r->ideal.nocap_k, r->ideal.nocap_r);
	floors_json(f, r);
	if (r->shift_phases)
		phases_json(f, &r->phases);
	else
		fprintf(f, ",\"shift_phases\":0");
	sim_relief_json(f, &r->relief);
	fprintf(f,
		",\"replicated_keys\":%" PRIu64 ",\"dynamic_replicas\":%" PRIu64
		",\"dynamic_bytes_share\":%.6f,\"copy_bytes\":%" PRIu64
		",\"copies\":%" PRIu64 ",\"copies_failed\":%" PRIu64
		",\"leases_expired\":%" PRIu64 ",\"evicted\":%" PRIu64
		",\"late_copies\":%" PRIu64 ",\"late_new_copies\":%" PRIu64
		",\"retired\":%" PRIu64,
		r->replicated_keys, r->dyn_replicas, r->dyn_share,
		r->copy_bytes, r->copies, r->copies_failed, r->leases_expired,
		r->evicted, r->late_copies, r->late_new_copies, r->retired);
	fprintf(
	    f,
	    ",\"room_evicted\":%" PRIu64 ",\"room_dropped\":%" PRIu64
	    ",\"room_headroom\":%" PRIu64 ",\"evicted_reads\":%" PRIu64
	    ",\"copies_from_primary\":%" PRIu64
	    ",\"copies_from_replica\":%" PRIu64 ",\"flash_reads\":%" PRIu64
	    ",\"flash_max_mean\":%.4f,\"ranking_digest\":\"%016" PRIx64 "\"",
	    r->room_evicted, r->room_dropped, r->room_headroom,
	    r->evicted_reads, r->copies - r->copies_dyn_src, r->copies_dyn_src,
	    r->flash_reads, isnan(r->flash_max_mean) ? 0 : r->flash_max_mean,
	    r->ranking_digest);
	fprintf(f,
		",\"observed_hot\":%" PRIu64 ",\"accepted\":%" PRIu64
		",\"would_propose\":%" PRIu64 ",\"triggers_dropped\":%" PRIu64
		",\"cross_domain_read_bytes\":%" PRIu64
		",\"cross_domain_share\":%.4f"
		",\"steady_cross_domain_share\":%.4f"
		",\"reactive_floor_share\":%.4f"
		",\"steady_reactive_floor_share\":%.4f",
		r->observed_hot, r->accepted, r->would_propose,
		r->triggers_dropped, r->cross_read_bytes, r->cross_share,
		isnan(r->steady_cross_share) ? 0 : r->steady_cross_share,
		r->floor_share,
		isnan(r->steady_floor_share) ? 0 : r->steady_floor_share);
	fprintf(f,
		",\"join_reads\":%" PRIu64 ",\"join_remote_reads\":%" PRIu64
		",\"join_remote_share\":%.4f,\"warmup_chosen\":%" PRIu64
		",\"warmup_accepted\":%" PRIu64 ",\"trace_malformed\":%zu",
		r->join_reads, r->join_remote,
		r->join_reads ? (double)r->join_remote / (double)r->join_reads
			      : 0,
		r->warmup_chosen, r->warmup_accepted, r->malformed);
	fprintf(f, ",\"sim_seconds\":%.3f,\"wall_seconds\":%.3f}}\n",
		r->sim_seconds, r->wall_seconds);
}

void sim_report_table(FILE *f, const struct sim_result *rs, size_t n)
{
	fprintf(f, "\n%-3s %9s %9s %9s %9s %9s %9s %10s %14s %9s  %s\n", "#",
		"max/mean", "p99/mean", "ideal", "ideal@k", "repl_keys",
		"dyn_repl", "extra_mem", "copy_bytes", "xdom", "config");
	for (size_t i = 0; i < n; i++) {
		const struct sim_result *r = &rs[i];

		fprintf(f,
			"%-3zu %9.3f %9.3f %9.3f %9.3f %9" PRIu64 " %9" PRIu64
			" %9.3f%% %14" PRIu64 " %8.3f%%  %s\n",
			i + 1, r->steady_max_mean, r->steady_p99_mean,
			r->ideal.max_mean, r->ideal.at_k, r->replicated_keys,
			r->dyn_replicas, 100.0 * r->dyn_share, r->copy_bytes,
			isnan(r->steady_cross_share)
			    ? 0
			    : 100.0 * r->steady_cross_share,
			r->label);
	}
}

static void plot_data(FILE *g, const struct sim_result *r, size_t i,
		      double interval)
{
	fprintf(g, "$d%zu << EOD\n", i);
	for (size_t j = 0; j < r->n_iv; j++)
		if (!isnan(r->iv_max[j]))
			fprintf(g, "%.3f %.4f\n", (double)(j + 1) * interval,
				r->iv_max[j]);
	fprintf(g, "EOD\n");
}

int sim_report_plot(const char *path, const struct sim_result *rs, size_t n)
{
	double interval;
	FILE *g;

	if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
		fprintf(stderr,
			"mcrepl-sim: gnuplot is not installed; "
			"skipping --plot %s\n",
			path);
		return 1;
	}
	g = popen("gnuplot", "w");
	if (!g)
		return -1;
	interval = rs[0].n_iv ? rs[0].sim_seconds / (double)rs[0].n_iv : 1;
	fprintf(g,
		"set terminal pngcairo size 1000,600\nset output '%s'\n"
		"set xlabel 'simulated time (s)'\n"
		"set ylabel 'max/mean node load'\nset logscale y\n"
		"set grid\nset key top right noenhanced font ',9'\n",
		path);
	for (size_t i = 0; i < n; i++)
		plot_data(g, &rs[i], i, interval);
	fprintf(g, "plot ");
	for (size_t i = 0; i < n; i++) {
		char title[300];

		fprintf(g, "%s$d%zu with lines lw 2 title ", i ? ", " : "", i);
		snprintf(title, sizeof(title), "%zu: %s", i + 1, rs[i].label);
		quoted(g, title, 110);
	}
	fprintf(g, "\n");
	return pclose(g) == 0 ? 0 : -1;
}
