/* gnuplot chart of a set of runs (see run.h: plot_runs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"

static bool on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[1024];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s/%s", (int)n, path, prog);
		if (n > 0 && access(dir, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* Rows as data; a last row shorter than half the first is left out (its
 * rates are mostly noise). */
static void datablock(FILE *g, const struct run *r, size_t k)
{
	size_t n = r->n_rows;

	if (n > 1 && r->rows[n - 1].secs < 0.5 * r->rows[0].secs)
		n--;
	fprintf(g, "$run%zu << EOD\n", k);
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &r->rows[i];

		fprintf(g, "%.3f", w->t);
		for (uint32_t j = 0; j < r->workers; j++)
			fprintf(g, " %.1f",
				w->secs > 0 ? (double)w->reads[j] / w->secs
					    : 0);
		fprintf(g, " %.4f\n", w->max_mean);
	}
	fprintf(g, "EOD\n");
}

static void worker_panel(FILE *g, const struct run *r, size_t k)
{
	fprintf(g, "set title \"%s: reads/s served by each worker\"\n",
		r->mode);
	fprintf(g, "set ylabel \"reads/s\"\nset yrange [0:*]\nplot");
	for (uint32_t j = 0; j < r->workers; j++)
		fprintf(g, "%s $run%zu using 1:%u with lines title \"%s\"",
			j ? "," : "", k, j + 2, r->names[j]);
	fprintf(g, "\n");
}

/* One colour per mode, whatever the order of --modes. */
static const char *mode_colour(const char *mode)
{
	if (strcmp(mode, "off") == 0)
		return "#9400d3";
	if (strcmp(mode, "observe") == 0)
		return "#e69f00";
	if (strcmp(mode, "enforce") == 0)
		return "#009e73";
	if (strcmp(mode, "domain") == 0)
		return "#d55e00";
	return "#56b4e9";
}

static void ratio_panel(FILE *g, const struct run *runs, size_t n)
{
	fprintf(g, "set title \"max/mean of per-worker reads per interval\"\n"
		   "set ylabel \"max/mean\"\nset yrange [1:*]\nplot");
	for (size_t k = 0; k < n; k++)
		fprintf(g,
			"%s $run%zu using 1:%u with linespoints lw 2 "
			"lc rgb \"%s\" title \"%s\"",
			k ? "," : "", k, runs[k].workers + 2,
			mode_colour(runs[k].mode), runs[k].mode);
	fprintf(g, ", 1.10 with lines dt 2 lc rgb \"gray\" title \"1.10\"\n");
}

int plot_runs(const struct run *runs, size_t n, const char *png)
{
	double t_max = 0;
	FILE *g;
	int st;

	if (!on_path("gnuplot")) {
		fprintf(stderr,
			"mcrepl-bench: gnuplot not found; chart %s "
			"skipped (install it: apt-get install -y "
			"gnuplot-nox)\n",
			png);
		return 0;
	}
	g = popen("gnuplot", "w");
	if (!g) {
		fprintf(stderr, "mcrepl-bench: cannot run gnuplot\n");
		return -1;
	}
	for (size_t k = 0; k < n; k++) {
		datablock(g, &runs[k], k);
		if (runs[k].n_rows &&
		    runs[k].rows[runs[k].n_rows - 1].t > t_max)
			t_max = runs[k].rows[runs[k].n_rows - 1].t;
	}
	fprintf(g,
		"set terminal pngcairo size 1100,%zu noenhanced\n"
		"set output \"%s\"\nset grid\nset key outside right\n"
		"set xlabel \"seconds since the reads began\"\n"
		"set xrange [0:%g]\nset multiplot layout %zu,1\n",
		(n + 1) * 320, png, t_max > 0 ? t_max : 1, n + 1);
	for (size_t k = 0; k < n; k++)
		worker_panel(g, &runs[k], k);
	ratio_panel(g, runs, n);
	fprintf(g, "unset multiplot\n");
	st = pclose(g);
	if (st != 0) {
		fprintf(stderr,
			"mcrepl-bench: gnuplot failed (status %d); "
			"chart %s not written\n",
			WIFEXITED(st) ? WEXITSTATUS(st) : st, png);
		return -1;
	}
	printf("chart: %s\n", png);
	return 0;
}
