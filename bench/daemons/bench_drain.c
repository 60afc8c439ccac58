/*
 * bench_drain: a rolling restart under reads (make bench-drain).
 * One mcrepl-master, eight mcrepl-workers (tcp, 64 MiB each, the default
 * --drain_timeout_ms), N objects of B bytes with one replica each; one
 * reader reads random objects throughout. Workers 1..4 are restarted one
 * at a time: SIGTERM (the worker drains: the objects only it holds are
 * copied to the others first), wait for it to exit, start it again with
 * the same host id, wait until it mounted. Then every object is read back.
 *
 *   drain_objects  copies the master queued for the drains
 *   lost           objects not readable at the end
 *   failed_reads   reads by the reader that returned an error
 *   drain_ms       median time from SIGTERM to the worker's exit
 *
 *   bench_drain [--objects N] [--bytes B] [--no-drain]
 * --no-drain restarts with --drain_timeout_ms=0 (the baseline: unmount at
 * once). Last line: drain_objects=<n> lost=<k> failed_reads=<r>
 * drain_ms=<p50>
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_flags.h"
#include "clock.h"
#include "harness.h"
#include "store_client.h"

#define WORKERS 8
#define RESTARTS 4

static struct {
	struct proc master, w[WORKERS];
	char addr[64];
	int objects;
	size_t bytes;
	bool no_drain;
	atomic_bool stop;
	atomic_llong reads, failed;
} B;

static void fill(uint8_t *buf, size_t n, int i)
{
	for (size_t k = 0; k < n; k++)
		buf[k] = (uint8_t)(i * 131 + k * 7 + (k >> 9));
}

static store_client *client(void)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[256];

	store_client_config_init(&cfg);
	if (store_client_open(&c, B.addr, NULL, &cfg, err, sizeof(err))) {
		fprintf(stderr, "bench_drain: %s\n", err);
		exit(1);
	}
	return c;
}

static int start_worker(int i)
{
	char bin[512], master[96], host[32];
	char *argv[] = {bin,
			master,
			host,
			(char *)(uintptr_t) "--segment_size=64M",
			(char *)(uintptr_t) "--transport=tcp",
			(char *)(uintptr_t)(B.no_drain
						? "--drain_timeout_ms=0"
						: "--drain_timeout_ms=20000"),
			NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(master, sizeof(master), "--master=%s", B.addr);
	snprintf(host, sizeof(host), "--host_id=dr-%d", i);
	return proc_start(&B.w[i], argv, "mcrepl-worker ready", 10000);
}

/* SIGTERM, then wait (up to 60 s) for the exit: its time in ms, or -1. */
static long long stop_worker(int i)
{
	int64_t t0 = net_now_ms();
	int st;

	kill(B.w[i].pid, SIGTERM);
	while (waitpid(B.w[i].pid, &st, WNOHANG) == 0) {
		if (net_now_ms() - t0 > 60000) {
			kill(B.w[i].pid, SIGKILL);
			waitpid(B.w[i].pid, &st, 0);
			return -1;
		}
		harness_sleep_ms(5);
	}
	close(B.w[i].out_fd);
	B.w[i].pid = -1;
	return net_now_ms() - t0;
}

static int read_check(store_client *c, int i, uint8_t *want)
{
	char key[32];
	void *got = NULL;
	uint64_t len = 0;
	int st;

	snprintf(key, sizeof(key), "o%d", i);
	st = store_client_get(c, key, &got, &len, NULL);
	if (st == 0) {
		fill(want, B.bytes, i);
		if (len != B.bytes || memcmp(got, want, len) != 0)
			st = -1;
	}
	free(got);
	return st;
}

static void *reader(void *arg)
{
	store_client *c = client();
	uint8_t *want = malloc(B.bytes);
	unsigned seed = 11;

	(void)arg;
	while (!B.stop) {
		int i = (int)(rand_r(&seed) % (unsigned)B.objects);

		B.reads++;
		if (read_check(c, i, want) != 0) {
			B.failed++;
			fprintf(stderr, "bench_drain: get o%d: %s\n", i,
				store_client_error(c));
		}
	}
	free(want);
	store_client_close(c);
	return NULL;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int run(void)
{
	const char *flags[] = {"--client_ttl=10", NULL};
	long long ms[RESTARTS], drains;
	uint8_t *buf = malloc(B.bytes);
	store_client *c;
	pthread_t tr;
	int lost = 0;
	char *page;

	if (master_start(&B.master, flags) != 0)
		return 1;
	snprintf(B.addr, sizeof(B.addr), "127.0.0.1:%u",
		 (unsigned)proc_field(&B.master, "rpc_port"));
	for (int i = 0; i < WORKERS; i++)
		if (start_worker(i) != 0)
			return 1;
	c = client();
	for (int i = 0; i < B.objects; i++) {
		char key[32];

		snprintf(key, sizeof(key), "o%d", i);
		fill(buf, B.bytes, i);
		if (store_client_put(c, key, buf, B.bytes) != 0) {
			fprintf(stderr, "bench_drain: put: %s\n",
				store_client_error(c));
			return 1;
		}
	}
	pthread_create(&tr, NULL, reader, NULL);
	harness_sleep_ms(500);
	for (int k = 0; k < RESTARTS; k++) {
		ms[k] = stop_worker(k + 1);
		if (start_worker(k + 1) != 0)
			return 1;
		harness_sleep_ms(300);
	}
	B.stop = true;
	pthread_join(tr, NULL);
	for (int i = 0; i < B.objects; i++)
		lost += read_check(c, i, buf) != 0;
	store_client_close(c);
	page = http_get((uint16_t)proc_field(&B.master, "metrics_port"),
			"/metrics");
	drains =
	    page ? metric_value(page, "mcrepl_master_drain_copies_total") : -1;
	free(page);
	for (int i = 0; i < WORKERS; i++)
		if (B.w[i].pid > 0)
			proc_stop(&B.w[i]);
	proc_stop(&B.master);
	free(buf);
	qsort(ms, RESTARTS, sizeof(ms[0]), cmp_ll);
	fprintf(stderr,
		"bench_drain: %d objects of %zu bytes on %d workers, %s; "
		"%lld reads; drain times %lld %lld %lld %lld ms\n",
		B.objects, B.bytes, WORKERS,
		B.no_drain ? "no drain (baseline)" : "drain on SIGTERM",
		(long long)B.reads, ms[0], ms[1], ms[2], ms[3]);
	printf("drain_objects=%lld lost=%d failed_reads=%lld drain_ms=%lld\n",
	       drains, lost, (long long)B.failed,
	       (ms[(RESTARTS - 1) / 2] + ms[RESTARTS / 2]) / 2);
	return 0;
}

struct drain_opts {
	int32_t objects;
	uint64_t bytes;
	bool no_drain;
};

#define O(f) FLAG_AT(struct drain_opts, f)
static const struct flag drain_flags[] = {
    {.name = "objects",
     .type = FLAG_I32,
     .off = O(objects),
     .def = "1000",
     .help = "objects put before the restarts, one replica each",
     .min = 1,
     .max = 100000},
    {.name = "bytes",
     .type = FLAG_SIZE,
     .off = O(bytes),
     .def = "16384",
     .help = "bytes per object, K/M suffixes",
     .min = 1,
     .max = 1 << 20},
    {.name = "no-drain",
     .type = FLAG_BOOL,
     .off = O(no_drain),
     .def = "false",
     .help = "the baseline: workers restarted without draining"},
};
#undef O

static const struct flag_set drain_set = {
    .prog = "bench_drain",
    .intro = "reads through a rolling restart of 4 of 8 workers",
    .title = "bench_drain flags",
    .width = 8,
    .flags = drain_flags,
    .n = sizeof(drain_flags) / sizeof(drain_flags[0]),
};

int main(int argc, char **argv)
{
	struct drain_opts o = {0};
	int st = bench_flags(&drain_set, &o, argc, argv);

	if (st >= 0)
		return st;
	B.objects = o.objects;
	B.bytes = o.bytes;
	B.no_drain = o.no_drain;
	signal(SIGPIPE, SIG_IGN);
	return run();
}
