/*
 * mcrepl-bench: measured hot-spot relief on a real cluster.
 *
 *   mcrepl-bench zipf  --local 8 --modes off,enforce --duration 60
 *   mcrepl-bench trace FILE --local 8 --speedup 10 --modes off,enforce
 *
 * Each mode runs on a fresh cluster (or once against --master): put the
 * keys (zipf), start the reader threads, print a row per interval, then
 * the run's end block and one '{"summary":{...}}' line; several modes are
 * then printed side by side and, with --plot, charted with gnuplot.
 * Children die with the bench, also on Ctrl-C. See docs/BENCH.md.
 */
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "load.h"
#include "run.h"
#include "../common/trace.h"
#include "keys.h"

#define SURVEY_KEYS 1000 /* hottest keys whose replicas are counted */

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: sleeps end early */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Daemons live beside this binary unless MCREPL_BIN_DIR says otherwise. */
static void default_bin_dir(void)
{
	char self[4096];
	ssize_t n;

	if (getenv("MCREPL_BIN_DIR"))
		return;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = '\0';
	setenv("MCREPL_BIN_DIR", dirname(self), 1);
}

/* Three times a worker's share of the objects, at least 64 MiB. */
static uint64_t segment_bytes(const struct bench_opts *o, uint64_t n_keys,
			      uint64_t object_bytes)
{
	uint64_t share, seg;

	if (o->segment_size || !o->local)
		return o->segment_size;
	share = (n_keys * object_bytes + o->local - 1) / o->local;
	seg = (3 * share + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1);
	return seg < (64u << 20) ? 64u << 20 : seg;
}

static void run_init(struct run *r, const struct bench_opts *o,
		     const char *mode, const struct trace *tr)
{
	memset(r, 0, sizeof(*r));
	r->mode = mode;
	r->workload = o->workload;
	r->hot_ms = r->accept_ms = r->complete_ms = r->dyn_read_ms = -1;
	r->malformed = tr ? tr->malformed : 0;
}

static void describe(const struct run *r, const struct cluster *cl,
		     const struct bench_opts *o, uint64_t seg)
{
	printf("\n[%s] master %s, %u workers", r->mode, cl->addr, r->workers);
	if (o->local)
		printf(" (local, segment %llu MiB each)",
		       (unsigned long long)(seg >> 20));
	printf(", %u client threads", o->clients);
	if (r->domains > 1)
		printf(" in %u domains (reader j in %s..%s by j %% %u)",
		       r->domains, cl->domain[0], cl->domain[r->domains - 1],
		       r->domains);
	if (o->workload != BENCH_TRACE)
		printf(", %llu keys of %llu B, theta %.2f, %s",
		       (unsigned long long)o->keys,
		       (unsigned long long)o->object_size, o->theta,
		       o->rate > 0 ? "rate-limited"
				   : "reads as fast as possible");
	if (o->workload == BENCH_SHIFTING)
		printf(", ranking redrawn every %g s (%g of it)",
		       o->shift_period, o->shift_fraction);
	else if (o->workload == BENCH_REHOT)
		printf(", hot keys cold and hot again every %g s (%g of the "
		       "ranking)",
		       o->shift_period, o->shift_fraction);
	else if (o->workload == BENCH_FLASH)
		printf(", an unread key takes %g of the reads for %g s at "
		       "%g s",
		       o->flash_share, o->flash_seconds, o->flash_at);
	else if (o->workload == BENCH_TRACE)
		printf(", blocks of %llu B, speed-up %g",
		       (unsigned long long)o->block_bytes, o->speedup);
	if (o->master_flags)
		printf("\n[%s] master flags: %s", r->mode, o->master_flags);
	printf("\n");
}

/* Puts (zipf), reads, monitoring; the cluster is already up. */
static int drive(struct run *r, struct load *l, store_client *sc,
		 const struct bench_opts *o, char *err, size_t errlen)
{
	if (o->workload != BENCH_TRACE) {
		if (load_put_all(l, &r->put_seconds, err, errlen) != 0)
			return -1;
		if (interrupted)
			return 0;
		printf("[%s] put %llu keys in %.1f s\n", r->mode,
		       (unsigned long long)o->keys, r->put_seconds);
	}
	if (master_sample(sc, &r->start) != 0) {
		snprintf(err, errlen, "Stats: %s", store_client_error(sc));
		return -1;
	}
	if (!o->quiet)
		report_header(r, o);
	if (load_start(l, err, errlen) != 0) {
		load_stop(l);
		return -1;
	}
	if (monitor_run(r, l, sc, o, &interrupted) != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!interrupted && survey_replicas(&r->survey, sc, l, SURVEY_KEYS))
		fprintf(stderr, "mcrepl-bench: [%s] replica survey: %s\n",
			r->mode, store_client_error(sc));
	report_end(r, o);
	report_summary(r, o);
	return 0;
}

static int run_mode(struct run *r, const struct bench_opts *o, const char *mode,
		    const struct zipf_keys *z, const struct trace *tr)
{
	uint64_t n_keys = tr ? tr->n_blocks : o->keys;
	uint64_t obj = tr ? o->block_bytes : o->object_size;
	uint64_t seg = segment_bytes(o, n_keys, obj);
	static struct cluster cl;
	struct load l;
	struct store_client_config cfg;
	store_client *sc = NULL;
	char err[512] = "";
	int rc = -1;

	run_init(r, o, mode, tr);
	memset(&l, 0, sizeof(l));
	if (cluster_start(&cl, o, mode, seg, err, sizeof(err)) != 0)
		goto out;
	r->workers = cl.n_workers;
	memcpy(r->names, cl.name, sizeof(r->names));
	r->domains = cl.n_domains;
	for (uint32_t i = 0; i < cl.n_workers; i++)
		memcpy(r->domain[i], cl.domain[cl.worker_domain[i]],
		       sizeof(r->domain[i]));
	describe(r, &cl, o, seg);
	store_client_config_init(&cfg);
	cfg.cred = cl.cred;
	cfg.tls = cl.tls;
	if (store_client_open(&sc, cl.addr, NULL, &cfg, err, sizeof(err)) != 0)
		goto out;
	if (load_init(&l, o, &cl, n_keys, obj) != 0) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	l.z = z;
	l.tr = tr;
	l.cancel = &interrupted;
	rc = drive(r, &l, sc, o, err, sizeof(err));
out:
	if (rc != 0 && !interrupted)
		fprintf(stderr, "mcrepl-bench: [%s] %s\n", mode, err);
	load_free(&l);
	store_client_close(sc);
	cluster_stop(&cl);
	return rc;
}

static int load_workload(const struct bench_opts *o, struct zipf_keys *z,
			 struct trace *tr)
{
	if (o->workload != BENCH_TRACE) {
		uint64_t ranks =
		    o->workload == BENCH_FLASH ? o->keys - 1 : o->keys;

		if (zipf_keys_init(z, o->keys, ranks, o->theta, o->seed) == 0)
			return 0;
		fprintf(stderr, "mcrepl-bench: out of memory\n");
		return -1;
	}
	if (trace_load(tr, o->trace_path, "mcrepl-bench", stderr) != 0)
		return -1;
	printf("trace %s: %zu requests, %zu block reads of %zu distinct "
	       "blocks, %zu malformed lines skipped, %.1f s of trace = %.1f s "
	       "at speed-up %g\n",
	       o->trace_path, tr->n_req, tr->n_reads, tr->n_blocks,
	       tr->malformed, tr->n_req ? tr->ts_ms[tr->n_req - 1] / 1000 : 0.0,
	       tr->n_req ? tr->ts_ms[tr->n_req - 1] / 1000 / o->speedup : 0.0,
	       o->speedup);
	if (tr->n_reads == 0) {
		fprintf(stderr, "mcrepl-bench: trace %s has no block reads\n",
			o->trace_path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench_opts o;
	struct zipf_keys z = {0};
	struct trace tr = {0};
	struct run *runs = NULL;
	size_t done = 0;
	int rc;

	rc = bench_opts_parse(&o, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (o.plot && strchr(o.plot, '"')) {
		fprintf(stderr, "mcrepl-bench: --plot path must not contain "
				"'\"'\n");
		return 2;
	}
	install_signals();
	default_bin_dir();
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = load_workload(&o, &z, &tr) == 0 ? 0 : 1;
	runs = rc == 0 ? calloc(o.n_modes, sizeof(*runs)) : NULL;
	for (size_t i = 0; runs && i < o.n_modes && !interrupted; i++) {
		if (run_mode(&runs[i], &o, o.mode[i],
			     o.workload != BENCH_TRACE ? &z : NULL,
			     o.workload == BENCH_TRACE ? &tr : NULL) != 0) {
			rc = 1;
			break;
		}
		done++;
	}
	if (done > 1 && !interrupted)
		report_compare(runs, done);
	if (o.plot && done > 0 && !interrupted &&
	    plot_runs(runs, done, o.plot) != 0)
		rc = 1;
	for (size_t i = 0; runs && i < o.n_modes; i++) {
		free(runs[i].rows);
		phases_free(&runs[i].phases);
	}
	free(runs);
	zipf_keys_free(&z);
	trace_free(&tr);
	if (interrupted) {
		fprintf(stderr, "mcrepl-bench: interrupted; cluster stopped\n");
		return 130;
	}
	return rc;
}
