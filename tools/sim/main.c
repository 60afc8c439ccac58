/*
 * mcrepl-sim: libmcrepl's own heat window, trigger queue, lease table and
 * placement driven by a simulated cluster of up to 100,000 memory nodes and
 * millions of keys. See docs/SIMULATOR.md.
 */
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "report.h"
#include "sim.h"
#include "../common/trace.h"

#define MAX_CONFIGS 16

/* Split a --compare list at ';' into per-config options. */
static int split_configs(const struct sim_opts *base, char *list,
			 struct sim_opts *cfgs, size_t *n)
{
	char *save = NULL;

	*n = 0;
	for (char *tok = strtok_r(list, ";", &save); tok;
	     tok = strtok_r(NULL, ";", &save)) {
		if (*n == MAX_CONFIGS) {
			fprintf(stderr,
				"mcrepl-sim: at most %d configurations\n",
				MAX_CONFIGS);
			return -1;
		}
		cfgs[*n] = *base;
		if (sim_opts_apply(&cfgs[*n], tok))
			return -1;
		(*n)++;
	}
	if (!*n) {
		fprintf(stderr,
			"mcrepl-sim: --compare needs a configuration\n");
		return -1;
	}
	return 0;
}

static int run_all(const struct sim_opts *cfgs, size_t n,
		   const struct trace *trace, struct sim_result *rs)
{
	for (size_t i = 0; i < n; i++) {
		if (n > 1 && !cfgs[i].quiet)
			printf("\n## configuration %zu\n", i + 1);
		if (sim_run(&cfgs[i], trace, stdout, &rs[i]))
			return -1;
		fflush(stdout);
	}
	for (size_t i = 0; i < n; i++)
		sim_report_summary(stdout, &rs[i]);
	if (n > 1)
		sim_report_table(stdout, rs, n);
	return 0;
}

int main(int argc, char **argv)
{
	static struct sim_opts base, cfgs[MAX_CONFIGS];
	static struct sim_result rs[MAX_CONFIGS];
	struct trace trace;
	char *list = NULL;
	size_t n = 1;
	int rc = 1, p;

	p = sim_opts_parse(&base, argc, argv);
	if (p)
		return p > 0 ? 0 : 2;
	memset(&trace, 0, sizeof(trace));
	if (base.workload == SIM_TRACE) {
		if (!base.trace_path ||
		    trace_load(&trace, base.trace_path, "mcrepl-sim", stderr))
			goto out;
		if (!trace.n_req) {
			fprintf(stderr, "mcrepl-sim: %s: no valid request\n",
				base.trace_path);
			goto out;
		}
	}
	cfgs[0] = base;
	if (base.compare) {
		list = strdup(base.compare);
		if (!list || split_configs(&base, list, cfgs, &n))
			goto out;
	}
	if (run_all(cfgs, n, base.workload == SIM_TRACE ? &trace : NULL, rs))
		goto out;
	rc = 0;
	if (base.plot && sim_report_plot(base.plot, rs, n) < 0) {
		fprintf(stderr, "mcrepl-sim: gnuplot failed for %s\n",
			base.plot);
		rc = 1;
	}
out:
	for (size_t i = 0; i < n; i++)
		sim_result_free(&rs[i]);
	free(list);
	trace_free(&trace);
	return rc;
}
