/* mcrepl-sim output: interval rows, the summary JSON line, the --compare
 * table and the --plot chart. */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* One interval's node loads, reduced. */
struct sim_row {
	double t_s, max_mean, p99_mean;
	uint64_t reads, dyn_replicas, replicated_keys, copy_bytes, inflight;
	double extra_mem;
	double xdom;  /* share of the interval's reads that crossed domains */
	double floor; /* share that no reactive policy could keep local */
};

void sim_report_header(FILE *f, const char *label);
void sim_report_row(FILE *f, const struct sim_row *row);

/* max/mean and p99/mean of loads[0..n) (sorts a copy into scratch). */
void sim_report_loads(const uint64_t *loads, uint64_t *scratch, uint32_t n,
		      double *max_mean, double *p99_mean);

/* The {"summary":{...}} line; wall_seconds is the last field. */
void sim_report_summary(FILE *f, const struct sim_result *r);

void sim_report_table(FILE *f, const struct sim_result *rs, size_t n);

/* Chart of max/mean over time per result. 0, 1 when gnuplot is missing
 * (said on stderr), -1 on failure. */
int sim_report_plot(const char *path, const struct sim_result *rs, size_t n);

#endif
