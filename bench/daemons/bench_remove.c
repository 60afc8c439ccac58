/*
 * bench_remove: Remove and put latency on an HA master (docs/HA.md,
 * "Removed stays removed": both wait for the workers' acknowledgements). A throw-away etcd (1 member), one mcrepl-master with
 * --etcd_endpoints, two workers polling every 20 ms (the default), on
 * loopback without auth; N objects of 4 KiB put with 2 replicas, then
 * removed one by one through a store client on etcd://, each timed,
 * 0-24 ms apart (at random: against the workers' 20 ms polls).
 *
 *   bench_remove [--objects N]       (default 500)
 * The puts are timed too, 0-24 ms apart. Two lines:
 *   puts=<n> p50_ms=<t> p99_ms=<t> max_ms=<t>
 *   removes=<n> p50_ms=<t> p99_ms=<t> max_ms=<t> failed=<f>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_flags.h"
#include "clock.h"
#include "etcd_proc.h"
#include "harness.h"
#include "store_client.h"

#define WORKERS 2
#define BYTES 4096

static struct etcd_proc etcd;
static struct proc master, workers[WORKERS];

static int start_cluster(char *ep_flag, size_t cap)
{
	const char *mflags[] = {ep_flag, NULL};
	char bin[512], host[32], *argv[6];

	if (etcd_proc_start(&etcd, 1) != 0)
		return -1;
	snprintf(ep_flag, cap, "--etcd_endpoints=%s", etcd.endpoints);
	if (master_start(&master, mflags) != 0)
		return -1;
	harness_bin("mcrepl-worker", bin, sizeof(bin));
	for (int i = 0; i < WORKERS; i++) {
		snprintf(host, sizeof(host), "--host_id=rm-%d", i);
		argv[0] = bin;
		argv[1] = ep_flag;
		argv[2] = host;
		argv[3] = (char *)(uintptr_t) "--segment_size=64M";
		argv[4] = (char *)(uintptr_t) "--transport=tcp";
		argv[5] = NULL;
		if (proc_start(&workers[i], argv, "mcrepl-worker ready", 10000))
			return -1;
	}
	return 0;
}

static void stop_cluster(void)
{
	for (int i = 0; i < WORKERS; i++)
		if (workers[i].pid > 0)
			proc_stop(&workers[i]);
	if (master.pid > 0)
		proc_stop(&master);
	etcd_proc_stop(&etcd);
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Puts n objects, then removes each, their latencies (ms) into plat
 * and lat. */
static int run(store_client *c, int n, double *plat, double *lat, int *failed)
{
	static uint8_t buf[BYTES];
	char key[32];
	unsigned seed = 1;

	memset(buf, 0x5a, sizeof(buf));
	for (int i = 0; i < n; i++) {
		double t0;

		harness_sleep_ms(rand_r(&seed) % 25); /* as for removes */
		t0 = net_now_s();
		snprintf(key, sizeof(key), "r%d", i);
		if (store_client_put(c, key, buf, sizeof(buf)) != 0) {
			fprintf(stderr, "bench_remove: put %s: %s\n", key,
				store_client_error(c));
			return -1;
		}
		plat[i] = (net_now_s() - t0) * 1000.0;
	}
	harness_sleep_ms(200); /* the journal reached both workers */
	for (int i = 0; i < n; i++) {
		double t0;

		/* a random pause: one remove after another would start each
		 * right after the workers' polls, always a whole period off */
		harness_sleep_ms(rand_r(&seed) % 25);
		t0 = net_now_s();

		snprintf(key, sizeof(key), "r%d", i);
		if (store_client_remove(c, key) != 0)
			(*failed)++;
		lat[i] = (net_now_s() - t0) * 1000.0;
	}
	return 0;
}

static const struct flag remove_flags[] = {
    {.name = "objects",
     .type = FLAG_I32,
     .off = 0,
     .def = "500",
     .help = "objects put, then removed, one at a time",
     .min = 1,
     .max = 100000},
};

static const struct flag_set remove_set = {
    .prog = "bench_remove",
    .intro = "put and remove latency on HA masters over etcd",
    .title = "bench_remove flags",
    .width = 8,
    .flags = remove_flags,
    .n = sizeof(remove_flags) / sizeof(remove_flags[0]),
};

int main(int argc, char **argv)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char ep_flag[300], url[300], err[256];
	int32_t n = 0;
	int failed = 0, rc = bench_flags(&remove_set, &n, argc, argv);
	double *lat, *plat = NULL;

	if (rc >= 0)
		return rc;
	rc = 1;
	if (!(lat = calloc((size_t)n, sizeof(*lat))))
		return 1;
	if (!(plat = calloc((size_t)n, sizeof(*plat))))
		goto out;
	if (start_cluster(ep_flag, sizeof(ep_flag)) != 0)
		goto out;
	snprintf(url, sizeof(url), "etcd://%s", etcd.endpoints);
	store_client_config_init(&cfg);
	cfg.replicas = 2;
	if (store_client_open(&c, url, NULL, &cfg, err, sizeof(err))) {
		fprintf(stderr, "bench_remove: %s\n", err);
		goto out;
	}
	harness_sleep_ms(1500); /* past the recovery window */
	if (run(c, n, plat, lat, &failed) == 0) {
		qsort(plat, (size_t)n, sizeof(*plat), cmp);
		printf("puts=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n", n,
		       plat[n / 2], plat[(n * 99) / 100], plat[n - 1]);
		qsort(lat, (size_t)n, sizeof(*lat), cmp);
		printf("removes=%d p50_ms=%.2f p99_ms=%.2f max_ms=%.2f "
		       "failed=%d\n",
		       n, lat[n / 2], lat[(n * 99) / 100], lat[n - 1], failed);
		rc = failed != 0;
	}
	store_client_close(c);
out:
	stop_cluster();
	free(lat);
	free(plat);
	return rc;
}
