/*
 * bench_hedge: hedged reads on a real local cluster: one mcrepl-master
 * (dynamic replication off), three mcrepl-workers, `keys` objects put with
 * two replicas each, one blocking client reading random keys one at a
 * time.
 *
 * 1. No slow worker: the client as it is (hedged reads) and, as the
 *    baseline in the same run, a client that never hedges (hedge_ms < 0)
 *    alternate in rounds, each going first every other round; the medians of the rounds' throughputs, their
 *    ratio, and the share of the hedged client's reads that hedged.
 * 2. One worker frozen with SIGSTOP: per-get latency (p50, p99, max) of
 *    the hedged client, then of the baseline client (whose data timeout
 *    is --stall_timeout_ms, so that one stalled read ends), then SIGCONT.
 *
 *   bench_hedge [--keys N] [--bytes B] [--rounds R] [--gets G]
 *               [--stall_gets S] [--stall_timeout_ms T]
 * Last lines: hedge_gets_per_s_median=<x> nohedge_gets_per_s_median=<x>
 * ratio=<hedge/nohedge> hedged_share=<x>; the client's CPU per get, the
 * same way, and the gets' latency: hedge_cpu_us_per_get_median=<x>
 * nohedge_cpu_us_per_get_median=<x> cpu_ratio=<x> hedge_us_p50=<x>
 * hedge_us_p99=<x> nohedge_us_p50=<x> nohedge_us_p99=<x>; then
 * stopped_hedge_us_p50=<x> stopped_hedge_us_p99=<x> stopped_hedge_us_max=<x>
 * stopped_nohedge_us_p99=<x> stopped_nohedge_us_max=<x> hedged=<n>
 * cancelled=<n>.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_flags.h"
#include "clock.h"
#include "harness.h"
#include "store_client.h"

#define WORKERS 3

/* The flags (hedge_flags) and the key stream's state. */
static struct hedge_opts {
	uint64_t keys, rounds, gets, stall_gets, bytes;
	int32_t stall_timeout_ms;
	uint64_t rng;
} opt = {.rng = 0x9e3779b97f4a7c15ULL};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t next_key(void)
{
	opt.rng ^= opt.rng << 13;
	opt.rng ^= opt.rng >> 7;
	opt.rng ^= opt.rng << 17;
	return (size_t)(opt.rng % opt.keys);
}

static int start_worker(struct proc *w, uint16_t port, int i)
{
	char bin[512], master[80], host[32];
	char *argv[] = {bin,
			master,
			host,
			(char *)(uintptr_t) "--segment_size=64M",
			(char *)(uintptr_t) "--transport=tcp",
			NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(master, sizeof(master), "--master=127.0.0.1:%u", port);
	snprintf(host, sizeof(host), "--host_id=bench-%c", 'a' + i);
	return proc_start(w, argv, "mcrepl-worker ready", 5000);
}

static store_client *open_client(uint16_t port, int hedge_ms, int timeout_ms)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char addr[64], err[512];

	store_client_config_init(&cfg);
	cfg.replicas = 2;
	cfg.hedge_ms = hedge_ms;
	if (timeout_ms)
		cfg.data_timeout_ms = timeout_ms;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (store_client_open(&c, addr, "bench", &cfg, err, sizeof(err)))
		fprintf(stderr, "bench_hedge: open: %s\n", err);
	return c;
}

static void key_name(size_t k, char *out, size_t cap)
{
	snprintf(out, cap, "hedge-%zu", k);
}

/* n gets of random keys; each one's latency (us) into lat when not NULL.
 * The seconds taken, or < 0 on a failed get. */
static double run_gets(store_client *c, size_t n, double *lat)
{
	double start = net_now_s();

	for (size_t i = 0; i < n; i++) {
		char key[32];
		uint64_t len = 0;
		void *buf = NULL;
		double t0 = net_now_s();
		int st;

		key_name(next_key(), key, sizeof(key));
		st = store_client_get(c, key, &buf, &len, NULL);
		if (lat)
			lat[i] = (net_now_s() - t0) * 1e6;
		free(buf);
		if (st || len != opt.bytes) {
			fprintf(stderr, "bench_hedge: get %s: %s\n", key,
				store_client_error(c));
			return -1;
		}
	}
	return net_now_s() - start;
}

static int put_all(store_client *c)
{
	uint8_t *obj = malloc(opt.bytes);
	int rc = 0;

	if (!obj)
		return -1;
	for (uint64_t i = 0; i < opt.bytes; i++)
		obj[i] = (uint8_t)(i * 131);
	for (size_t k = 0; k < opt.keys && rc == 0; k++) {
		char key[32];

		key_name(k, key, sizeof(key));
		rc = store_client_put(c, key, obj, opt.bytes);
		if (rc)
			fprintf(stderr, "bench_hedge: put: %s\n",
				store_client_error(c));
	}
	free(obj);
	return rc;
}

/* This thread's CPU time in seconds. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Phase 1: alternating rounds, no slow worker: per mode m, the rounds'
 * rates and CPU per get, and every get's latency. */
struct steady {
	double *rate[2], *cpu[2], *lat[2];
};

static int steady_rounds(store_client *c[2], struct steady *st)
{
	for (size_t r = 0; r < opt.rounds; r++)
		for (int k = 0; k < 2; k++) { /* who goes first alternates */
			int m = (int)(r & 1) ^ k;
			double t = cpu_s();
			double s =
			    run_gets(c[m], opt.gets, st->lat[m] + r * opt.gets);

			if (s < 0)
				return -1;
			st->rate[m][r] = (double)opt.gets / s;
			st->cpu[m][r] = (cpu_s() - t) * 1e6 / (double)opt.gets;
		}
	return 0;
}

static void steady_print(struct steady *st, uint64_t hedged, uint32_t delay_ms)
{
	size_t n = opt.rounds * opt.gets;
	double rate[2], cpu[2];

	for (int m = 0; m < 2; m++) {
		rate[m] = median(st->rate[m], opt.rounds);
		cpu[m] = median(st->cpu[m], opt.rounds);
		qsort(st->lat[m], n, sizeof(double), cmp_double);
	}
	printf("hedge_gets_per_s_median=%.0f nohedge_gets_per_s_median=%.0f "
	       "ratio=%.3f hedged_share=%.4f hedged=%llu gets=%zu bytes=%llu "
	       "hedge_delay_ms=%u\n",
	       rate[0], rate[1], rate[0] / rate[1], (double)hedged / (double)n,
	       (unsigned long long)hedged, n, (unsigned long long)opt.bytes,
	       delay_ms);
	printf("hedge_cpu_us_per_get_median=%.1f "
	       "nohedge_cpu_us_per_get_median=%.1f cpu_ratio=%.3f "
	       "hedge_us_p50=%.0f hedge_us_p99=%.0f nohedge_us_p50=%.0f "
	       "nohedge_us_p99=%.0f\n",
	       cpu[0], cpu[1], cpu[0] / cpu[1], st->lat[0][n / 2],
	       st->lat[0][n * 99 / 100], st->lat[1][n / 2],
	       st->lat[1][n * 99 / 100]);
}

static int steady(store_client *c[2])
{
	struct steady st = {0};
	struct store_data_stats s0, s1;
	int rc = -1;

	for (int m = 0; m < 2; m++) {
		st.rate[m] = calloc(opt.rounds, sizeof(double));
		st.cpu[m] = calloc(opt.rounds, sizeof(double));
		st.lat[m] = calloc(opt.rounds * opt.gets, sizeof(double));
		if (!st.rate[m] || !st.cpu[m] || !st.lat[m])
			goto out;
	}
	for (int m = 0; m < 2; m++) /* warm up: connections, latency */
		if (run_gets(c[m], opt.gets / 2, NULL) < 0)
			goto out;
	store_client_data_stats(c[0], &s0);
	if (steady_rounds(c, &st))
		goto out;
	store_client_data_stats(c[0], &s1);
	steady_print(&st, s1.hedged - s0.hedged, s1.hedge_delay_ms);
	rc = 0;
out:
	for (int m = 0; m < 2; m++) {
		free(st.rate[m]);
		free(st.cpu[m]);
		free(st.lat[m]);
	}
	return rc;
}

/* Phase 2: worker w frozen; the hedged client, then the baseline. */
static int stopped(store_client *c[2], struct proc *w)
{
	double *lat[2] = {calloc(opt.stall_gets, sizeof(double)),
			  calloc(opt.stall_gets, sizeof(double))};
	struct store_data_stats s0, s1;
	size_t n = opt.stall_gets;
	int rc = -1;

	if (!lat[0] || !lat[1])
		goto out;
	store_client_data_stats(c[0], &s0);
	kill(w->pid, SIGSTOP);
	if (run_gets(c[0], n, lat[0]) < 0)
		goto resume;
	store_client_data_stats(c[0], &s1);
	kill(w->pid, SIGCONT);
	/* the baseline meets a freshly frozen worker too */
	harness_sleep_ms(500);
	kill(w->pid, SIGSTOP);
	if (run_gets(c[1], n, lat[1]) < 0)
		goto resume;
	for (int m = 0; m < 2; m++)
		qsort(lat[m], n, sizeof(double), cmp_double);
	printf("stopped_hedge_us_p50=%.0f stopped_hedge_us_p99=%.0f "
	       "stopped_hedge_us_max=%.0f stopped_nohedge_us_p99=%.0f "
	       "stopped_nohedge_us_max=%.0f hedged=%llu cancelled=%llu "
	       "gets=%zu\n",
	       lat[0][n / 2], lat[0][n * 99 / 100], lat[0][n - 1],
	       lat[1][n * 99 / 100], lat[1][n - 1],
	       (unsigned long long)(s1.hedged - s0.hedged),
	       (unsigned long long)(s1.cancelled - s0.cancelled), n);
	rc = 0;
resume:
	kill(w->pid, SIGCONT);
out:
	free(lat[0]);
	free(lat[1]);
	return rc;
}

#define O(f) FLAG_AT(struct hedge_opts, f)
static const struct flag hedge_flags[] = {
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(keys),
     .def = "64",
     .help = "objects, 2 replicas each",
     .min = 1,
     .max = 1000000},
    {.name = "bytes",
     .type = FLAG_SIZE,
     .off = O(bytes),
     .def = "64K",
     .help = "bytes per object, K/M suffixes",
     .min = 1,
     .max = 64 << 20},
    {.name = "rounds",
     .type = FLAG_U64,
     .off = O(rounds),
     .def = "10",
     .help = "rounds of the steady comparison",
     .min = 1,
     .max = 1000},
    {.name = "gets",
     .type = FLAG_U64,
     .off = O(gets),
     .def = "1000",
     .help = "gets per client per round",
     .min = 1,
     .max = 100000},
    {.name = "stall_gets",
     .type = FLAG_U64,
     .off = O(stall_gets),
     .def = "3000",
     .help = "gets per client with one worker stopped",
     .min = 1,
     .max = 10000000},
    {.name = "stall_timeout_ms",
     .type = FLAG_I32,
     .off = O(stall_timeout_ms),
     .def = "3000",
     .help = "the never-hedging client's read timeout, ms",
     .min = 1,
     .max = 600000},
};
#undef O

static const struct flag_set hedge_set = {
    .prog = "bench_hedge",
    .intro = "hedged reads vs a never-hedging client, then past a stopped "
	     "worker",
    .title = "bench_hedge flags",
    .width = 16,
    .flags = hedge_flags,
    .n = sizeof(hedge_flags) / sizeof(hedge_flags[0]),
};

int main(int argc, char **argv)
{
	const char *flags[] = {"--dynamic_replication_mode=off", NULL};
	struct proc master, worker[WORKERS];
	store_client *c[2] = {NULL, NULL};
	uint16_t port;
	int n = 0, rc = 1;

	if ((rc = bench_flags(&hedge_set, &opt, argc, argv)) >= 0)
		return rc;
	rc = 1;
	if (master_start(&master, flags)) {
		fprintf(stderr, "bench_hedge: cannot start mcrepl-master\n");
		return 1;
	}
	port = (uint16_t)proc_field(&master, "rpc_port");
	for (; n < WORKERS; n++)
		if (start_worker(&worker[n], port, n)) {
			fprintf(stderr, "bench_hedge: cannot start a worker\n");
			goto out;
		}
	c[0] = open_client(port, 0, 0);
	c[1] = open_client(port, -1, opt.stall_timeout_ms);
	if (c[0] && c[1] && put_all(c[0]) == 0 && steady(c) == 0 &&
	    stopped(c, &worker[0]) == 0)
		rc = 0;
out:
	store_client_close(c[0]);
	store_client_close(c[1]);
	for (int i = 0; i < n; i++)
		proc_stop(&worker[i]);
	proc_stop(&master);
	return rc;
}
