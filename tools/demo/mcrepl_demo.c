/*
 * mcrepl-demo (make demo): hot replication end to end on one machine.
 *
 * Starts one mcrepl-master (enforce mode) and four mcrepl-workers on
 * loopback (free ports, distinct host ids), puts a few hundred objects, and
 * drives a skewed read load (one hot key plus a Zipf tail) through the
 * client library. It prints the hot key's replicas, the reads each worker
 * served for it before and after the dynamic replica appeared, and the RFC
 * counters from /metrics. Children die with the demo (also on Ctrl-C).
 * Authentication is on: the demo writes a throwaway auth file
 * with a worker principal and an admin client, each with a random secret,
 * and removes it at the end.
 *
 *   mcrepl-demo [--seconds S] [--keys N] [--object_kib K]
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth.h"
#include "flagparse.h"
#include "harness.h"
#include "util/hash.h"
#include "store_client.h"
#include "zipf.h"

#define WORKERS 4
#define HOT_KEY "prefix-block-hot"
/* The master's admission threshold: THRESHOLD_QPS reads/s over a
 * WINDOW_S window, i.e. THRESHOLD_READS reads in the window. */
#define THRESHOLD_QPS 50
#define WINDOW_S 2
#define THRESHOLD_READS (THRESHOLD_QPS * WINDOW_S)
#define STAT_POLL_S 0.005

struct demo {
	struct proc master, workers[WORKERS];
	struct harness_auth auth; /* the throwaway auth file */
	struct auth_cred cred;	  /* the client's: "admin" */
	char auth_flag[400];
	uint16_t rpc_port, metrics_port;
	char master_addr[64];
	store_client *client;
	uint64_t seg_of[WORKERS]; /* segment id of each worker */
	int32_t keys;		  /* flags: */
	uint64_t object_kib;
	double seconds;
	struct zipf zipf; /* the other keys' popularity */
	uint64_t rng;
	/* Times of the last THRESHOLD_READS reads of the hot key (a ring),
	 * and when they first fitted in one window: the threshold crossing
	 * as this client counts it. */
	double hot_at[THRESHOLD_READS];
	uint64_t n_hot;
	double crossed_at;
	uint64_t orig_seg; /* the hot key's first replica */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int start_cluster(struct demo *d)
{
#define XSTR(x) #x
#define STR(x) XSTR(x)
	const char *const flags[] = {
	    "--dynamic_replication_mode=enforce",
	    "--dynamic_replication_heat_window_seconds=" STR(WINDOW_S),
	    "--dynamic_replication_admission_qps_threshold=" STR(THRESHOLD_QPS),
	    /* short read leases: the objects are removed at the end, before
	     * the workers stop (a lease would hold a remove up to its TTL) */
	    "--default_kv_lease_ttl=500", d->auth_flag, NULL};
	char bin[512], master[80], host[32], err[256];

	if (harness_auth_setup(&d->auth, NULL) != 0 ||
	    auth_cred_load("admin",
			   d->auth.secret_flag[1] + strlen("--secret_file="),
			   &d->cred, err, sizeof(err)) != 0) {
		fprintf(stderr, "demo: cannot write an auth file\n");
		return -1;
	}
	snprintf(d->auth_flag, sizeof(d->auth_flag), "--auth_file=%s",
		 d->auth.file);
	printf("auth     on: throwaway %s (principals 'worker' and 'admin', "
	       "random secrets)\n",
	       d->auth.file);
	if (master_start(&d->master, flags) != 0) {
		fprintf(stderr, "demo: mcrepl-master did not start\n");
		return -1;
	}
	d->rpc_port = (uint16_t)proc_field(&d->master, "rpc_port");
	d->metrics_port = (uint16_t)proc_field(&d->master, "metrics_port");
	snprintf(d->master_addr, sizeof(d->master_addr), "127.0.0.1:%u",
		 d->rpc_port);
	printf("master   rpc 127.0.0.1:%u  metrics http://127.0.0.1:%u/metrics"
	       "  (mode enforce, threshold %d reads / %d s, max 2 replicas)\n",
	       d->rpc_port, d->metrics_port, THRESHOLD_READS, WINDOW_S);
	for (int i = 0; i < WORKERS; i++) {
		char *argv[] = {(char *)(uintptr_t)harness_bin(
				    "mcrepl-worker", bin, sizeof(bin)),
				master,
				host,
				(char *)(uintptr_t) "--segment_size=64M",
				(char *)(uintptr_t) "--data_port=0",
				(char *)(uintptr_t) "--transport=tcp",
				d->auth.principal_flag[0],
				d->auth.secret_flag[0],
				NULL};

		snprintf(master, sizeof(master), "--master=%s", d->master_addr);
		snprintf(host, sizeof(host), "--host_id=host-%d", i + 1);
		if (proc_start(&d->workers[i], argv, "mcrepl-worker ready",
			       10000) != 0) {
			fprintf(stderr,
				"demo: mcrepl-worker %d did not start\n",
				i + 1);
			return -1;
		}
		d->seg_of[i] = proc_field(&d->workers[i], "segment_ids");
		printf(
		    "worker %d host-%d  data port %llu  segment %llu\n", i + 1,
		    i + 1,
		    (unsigned long long)proc_field(&d->workers[i], "data_port"),
		    (unsigned long long)d->seg_of[i]);
	}
	return 0;
}

/* The demo's objects removed before the workers stop, so their unmount
 * loses nothing (a key under a read lease is BUSY for its 0.5 s). */
static void remove_objects(struct demo *d)
{
	char key[64];
	double until = now_s() + 3;

	for (int k = -1; d->client && k < d->keys; k++) {
		int st;

		if (k < 0)
			snprintf(key, sizeof(key), HOT_KEY);
		else
			snprintf(key, sizeof(key), "block-%d", k);
		while ((st = store_client_remove(d->client, key)) ==
			   MCREPL_RPC__CODE__BUSY &&
		       now_s() < until)
			harness_sleep_ms(50);
		if (st != 0 && st != MCREPL_RPC__CODE__NOT_FOUND)
			fprintf(stderr, "demo: remove %s: %s\n", key,
				store_client_error(d->client));
	}
}

static void stop_cluster(struct demo *d)
{
	for (int i = 0; i < WORKERS; i++)
		proc_stop(&d->workers[i]);
	proc_stop(&d->master);
	harness_auth_cleanup(&d->auth);
}

static void fill(char *buf, uint64_t n, int key)
{
	for (uint64_t i = 0; i < n; i++)
		buf[i] = (char)('a' + (i * 7 + (uint64_t)key) % 26);
}

static int put_objects(struct demo *d)
{
	char *buf = malloc(d->object_kib * 1024), key[64];
	int rc = 0;

	for (int k = -1; buf && k < d->keys && rc == 0; k++) {
		if (k < 0)
			snprintf(key, sizeof(key), HOT_KEY);
		else
			snprintf(key, sizeof(key), "block-%d", k);
		fill(buf, d->object_kib * 1024, k);
		rc =
		    store_client_put(d->client, key, buf, d->object_kib * 1024);
		if (rc)
			fprintf(stderr, "demo: put %s: %s\n", key,
				store_client_error(d->client));
	}
	free(buf);
	printf("put %d objects of %llu KiB (1 hot + %d Zipf-0.99 tail)\n",
	       d->keys + 1, (unsigned long long)d->object_kib, d->keys);
	return rc;
}

static int worker_of(const struct demo *d, uint64_t segment)
{
	for (int i = 0; i < WORKERS; i++)
		if (d->seg_of[i] == segment)
			return i;
	return -1;
}

/* Notes a read of the hot key at time t: the first time THRESHOLD_READS
 * of them fit in one window is the crossing. */
static void note_hot(struct demo *d, double t)
{
	double *slot = &d->hot_at[d->n_hot % THRESHOLD_READS];

	if (d->n_hot >= THRESHOLD_READS && !d->crossed_at &&
	    t - *slot <= WINDOW_S)
		d->crossed_at = t;
	*slot = t;
	d->n_hot++;
}

static double demo_uniform(void *rng)
{
	return (double)(mcu_splitmix64(rng) >> 11) / 9007199254740992.0;
}

/* One read: the hot key 30% of the time, else a Zipf tail key. Returns
 * the worker that served it (-1: unknown), -2 on error; *hot says which
 * kind it was. */
static int read_one(struct demo *d, bool *hot, uint64_t *segment)
{
	char key[64];
	double u = demo_uniform(&d->rng);
	struct store_read_info info;
	void *buf = NULL;
	uint64_t len = 0;

	*hot = u < 0.3;
	if (*hot) {
		snprintf(key, sizeof(key), HOT_KEY);
	} else {
		uint64_t rank = zipf_sample(&d->zipf, demo_uniform, &d->rng);

		snprintf(key, sizeof(key), "block-%llu",
			 (unsigned long long)(rank - 1));
	}
	if (store_client_get(d->client, key, &buf, &len, &info) != 0) {
		fprintf(stderr, "demo: get %s: %s\n", key,
			store_client_error(d->client));
		return -2;
	}
	free(buf);
	if (*hot)
		note_hot(d, now_s());
	*segment = info.segment_id;
	return worker_of(d, info.segment_id);
}

static void print_replicas(struct demo *d)
{
	struct store_object_info *o = calloc(1, sizeof(*o));

	if (!o || store_client_stat(d->client, HOT_KEY, o) != 0) {
		free(o);
		return;
	}
	printf("  %s replicas:", HOT_KEY);
	for (size_t i = 0; i < o->n_replicas; i++)
		printf("  [segment %llu on %s%s]",
		       (unsigned long long)o->replicas[i].segment_id,
		       o->replicas[i].host_id,
		       o->replicas[i].dynamic ? ", dynamic" : "");
	printf("\n");
	free(o);
}

static size_t hot_replicas(struct demo *d)
{
	struct store_object_info *o = calloc(1, sizeof(*o));
	size_t n = 0;

	if (o && store_client_stat(d->client, HOT_KEY, o) == 0)
		n = o->n_replicas;
	free(o);
	return n;
}

static void print_phase(const char *name, const uint64_t hot[WORKERS],
			const uint64_t all[WORKERS], double secs)
{
	uint64_t total = 0;

	for (int i = 0; i < WORKERS; i++)
		total += hot[i];
	printf("%s (%.2f s):\nreads of the hot key served by each worker:\n",
	       name, secs);
	for (int i = 0; i < WORKERS; i++)
		printf("  host-%d: %6llu hot (%5.1f%%)   %6llu reads in all\n",
		       i + 1, (unsigned long long)hot[i],
		       total ? 100.0 * (double)hot[i] / (double)total : 0.0,
		       (unsigned long long)all[i]);
}

/* Read for `secs` at `rate` reads/s (0: as fast as possible). With
 * until_copy, stop at the moment a second replica of the hot key is
 * readable: when Stat (polled every STAT_POLL_S) lists it, or a read is
 * served by it, whichever comes first; that read is not counted, so the
 * table holds only reads from before the copy. *took: the phase's
 * length; *readable_at: when the replica was seen (until_copy). */
static int drive(struct demo *d, double secs, double rate, bool until_copy,
		 uint64_t hot[WORKERS], uint64_t all[WORKERS], double *took,
		 double *readable_at)
{
	double t0 = now_s(), next_poll = t0;
	uint64_t n = 0, seg;
	bool is_hot;
	int w;

	memset(hot, 0, WORKERS * sizeof(*hot));
	memset(all, 0, WORKERS * sizeof(*all));
	while (!interrupted && now_s() - t0 < secs) {
		while (rate > 0 && (double)n > (now_s() - t0) * rate)
			harness_sleep_ms(1);
		n++;
		w = read_one(d, &is_hot, &seg);
		if (w == -2)
			return -1;
		if (until_copy && is_hot && seg != d->orig_seg) {
			*readable_at = now_s();
			break;
		}
		if (w >= 0) {
			all[w]++;
			hot[w] += is_hot;
		}
		if (until_copy && now_s() >= next_poll) {
			next_poll = now_s() + STAT_POLL_S;
			if (hot_replicas(d) >= 2) {
				*readable_at = now_s();
				break;
			}
		}
	}
	*took = now_s() - t0;
	return interrupted ? -1 : 0;
}

/* The story behind mcrepl_dynamic_replicas: which keys got one. */
static void print_dynamic_keys(struct demo *d)
{
	struct store_object_info *o = calloc(1, sizeof(*o));
	int n_tail = 0, first = -1, last = -1;
	char key[64];

	if (!o)
		return;
	for (int k = 0; k < d->keys; k++) {
		bool dyn = false;

		snprintf(key, sizeof(key), "block-%d", k);
		if (store_client_stat(d->client, key, o) != 0)
			continue;
		for (size_t i = 0; i < o->n_replicas; i++)
			dyn |= o->replicas[i].dynamic;
		if (!dyn)
			continue;
		n_tail++;
		last = k;
		if (first < 0)
			first = k;
	}
	free(o);
	printf("\nkeys with a dynamic replica: %s and %d of the %d Zipf tail "
	       "keys",
	       HOT_KEY, n_tail, d->keys);
	if (n_tail > 1)
		printf(" (from block-%d to block-%d)", first, last);
	else if (n_tail == 1)
		printf(" (block-%d)", first);
	printf(".\nAt full speed the head of the Zipf-0.99 tail reads above "
	       "%d/s too; the master\n(policy auto) copies a key only while "
	       "its reads overload the segments of its\nreplicas against the "
	       "cluster's mean, so most of them are refused as\n"
	       "reason=\"balanced\", and a key with a replica on every host "
	       "counts under\nreason=\"replica_limit\". The counters below "
	       "count every key.\n",
	       THRESHOLD_QPS);
}

/* The share of the hot key's reads its first replica kept and its
 * dynamic replicas took, in the phase just measured. */
static void print_share(const struct demo *d, const uint64_t hot[WORKERS])
{
	uint64_t total = 0, orig = 0;
	int w = worker_of(d, d->orig_seg);

	for (int i = 0; i < WORKERS; i++)
		total += hot[i];
	if (w >= 0)
		orig = hot[w];
	if (total)
		printf(
		    "the hot key's first replica (host-%d) kept %.1f%% of its "
		    "reads; its dynamic\nreplicas took %.1f%%.\n",
		    w + 1, 100.0 * (double)orig / (double)total,
		    100.0 * (double)(total - orig) / (double)total);
}

/* What the admission counters mean, with the page's own numbers: every
 * read finding its key over the threshold queues it (observed_hot,
 * triggers_queued); each queued key is judged (accepted, or rejected by
 * reason); a completed copy queues its key once more (the fan-out goes on
 * at copy speed), so judged = queued + completed copies, less what is
 * still queued. */
static void explain_counters(const char *page)
{
	long long q =
	    metric_value(page, "mcrepl_dynamic_triggers_queued_total");
	long long a =
	    metric_value(page, "mcrepl_dynamic_admission_accepted_total");
	long long c =
	    metric_value(page, "mcrepl_dynamic_copy_tasks_completed_total");
	long long r = 0, v;
	const char *at = page;

	while ((at = strstr(at, "mcrepl_dynamic_admission_rejected_total{")) !=
	       NULL) {
		const char *sp = strchr(at, ' ');

		v = sp ? strtoll(sp + 1, NULL, 10) : 0;
		r += v;
		at += 1;
	}
	printf("How they add up: each read that found its key over the "
	       "threshold queued it\n(observed_hot, triggers_queued: %lld); "
	       "each queued key was judged: %lld accepted\n(a copy task), %lld "
	       "rejected by reason; a completed copy queues its key once\nmore "
	       "(%lld completed), so %lld + %lld = %lld judged = %lld queued + "
	       "%lld re-queued.\n",
	       q < 0 ? 0 : q, a < 0 ? 0 : a, r, c < 0 ? 0 : c, a < 0 ? 0 : a, r,
	       (a < 0 ? 0 : a) + r, q < 0 ? 0 : q, c < 0 ? 0 : c);
}

static void print_metrics(struct demo *d)
{
	char *page = http_get(d->metrics_port, "/metrics"), *line;
	char *whole = page ? strdup(page) : NULL;

	if (!page || !whole) {
		free(page);
		return;
	}
	printf("RFC counters (non-zero) from /metrics:\n");
	for (line = strtok(page, "\n"); line; line = strtok(NULL, "\n")) {
		const char *v = strrchr(line, ' ');

		if (strncmp(line, "mcrepl_dynamic_", 15) == 0 && v &&
		    strcmp(v, " 0") != 0)
			printf("  %s\n", line);
	}
	free(page);
	explain_counters(whole);
	free(whole);
}

/* The hot key's segment before any copy. */
static uint64_t first_segment(struct demo *d)
{
	struct store_object_info *o = calloc(1, sizeof(*o));
	uint64_t seg = 0;

	if (o && store_client_stat(d->client, HOT_KEY, o) == 0 && o->n_replicas)
		seg = o->replicas[0].segment_id;
	free(o);
	return seg;
}

static int run(struct demo *d)
{
	uint64_t hot[WORKERS], all[WORKERS];
	double took, t0, readable_at = 0;
	struct store_client_config cfg;
	char err[256];

	if (start_cluster(d) != 0)
		return 1;
	store_client_config_init(&cfg);
	cfg.cred = &d->cred;
	if (store_client_open(&d->client, d->master_addr, "demo", &cfg, err,
			      sizeof(err)) != 0) {
		fprintf(stderr, "demo: %s\n", err);
		return 1;
	}
	if (put_objects(d) != 0)
		return 1;
	d->orig_seg = first_segment(d);
	print_replicas(d);
	if (drive(d, 3, 100, false, hot, all, &took, &readable_at) != 0)
		return 1;
	printf("\n");
	print_phase("light load, 100 reads/s: the hot key reads 30/s, below "
		    "the threshold",
		    hot, all, took);
	print_replicas(d);
	printf("\nfull speed now ...\n");
	t0 = now_s();
	if (drive(d, 60, 0, true, hot, all, &took, &readable_at) != 0)
		return 1;
	if (hot_replicas(d) < 2 || !readable_at) {
		fprintf(stderr, "demo: no dynamic replica after 60 s\n");
		return 1;
	}
	print_phase("before its dynamic replica was readable", hot, all, took);
	if (d->crossed_at)
		printf(
		    "\nthe hot key reached %d reads in %d s (this client's "
		    "count) at +%.3f s; its\ndynamic replica was readable "
		    "at +%.3f s: %.0f ms (+-%.0f ms, the Stat poll period) "
		    "from the\nthreshold to a readable copy, admission, copy "
		    "and commit included:\n",
		    THRESHOLD_READS, WINDOW_S, d->crossed_at - t0,
		    readable_at - t0, (readable_at - d->crossed_at) * 1000,
		    STAT_POLL_S * 1000);
	print_replicas(d);
	if (drive(d, d->seconds, 0, false, hot, all, &took, &readable_at) != 0)
		return 1;
	printf("\n");
	print_phase("after replication", hot, all, took);
	print_share(d, hot);
	print_dynamic_keys(d);
	printf("\n");
	print_metrics(d);
	return 0;
}

#define O(f) FLAG_AT(struct demo, f)
static const struct flag demo_flags[] = {
    {.name = "seconds",
     .type = FLAG_DOUBLE,
     .off = O(seconds),
     .def = "4",
     .help = "seconds of reads after the hot key's replica is readable",
     .dmin = 0.001,
     .dmax = INFINITY},
    {.name = "keys",
     .type = FLAG_I32,
     .off = O(keys),
     .def = "300",
     .help = "objects of the Zipf tail, besides the hot key",
     .min = 1,
     .max = 100000},
    {.name = "object_kib",
     .type = FLAG_U64,
     .off = O(object_kib),
     .def = "64",
     .help = "KiB per object",
     .min = 1},
};

static const struct flag_set demo_set = {
    .prog = "mcrepl-demo",
    .usage = "[--seconds S] [--keys N] [--object_kib K]",
    .intro = "Hot replication end to end on one machine: a master, four "
	     "workers, a skewed read load.",
    .title = "flags",
    .width = 12,
    .flags = demo_flags,
    .n = sizeof(demo_flags) / sizeof(demo_flags[0]),
};

int main(int argc, char **argv)
{
	struct demo d;
	int rc;

	/* a line at a time, also into a pipe or file: the daemons' lines
	 * (their stderr is ours) stay in order with the report's */
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&d, 0, sizeof(d));
	d.rng = 2026;
	flags_defaults(&demo_set, &d);
	rc = flags_parse(&demo_set, &d, NULL, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (zipf_init(&d.zipf, (uint64_t)d.keys, 0.99) != 0)
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	rc = run(&d);
	remove_objects(&d);
	store_client_close(d.client);
	stop_cluster(&d);
	if (interrupted)
		fprintf(stderr, "demo: interrupted; cluster stopped\n");
	else
		printf("\n%s\n", rc == 0 ? "demo: OK" : "demo: FAILED");
	return interrupted ? 130 : rc;
}
