/*
 * bench_integrity: what payload digests cost a read (docs/SECURITY.md
 * "Payload digests"). One local mcrepl-master (dynamic replication off)
 * and one mcrepl-worker; two blocking clients of two tenants on it, one
 * writing its objects with a digest (store_client_config.integrity: the
 * master keeps it, every get hashes what it read and compares), one
 * without (no digest: nothing hashed). For 64 KiB and 4 MiB objects the
 * two alternate rounds of gets in the same run; each run's medians, then
 * the median over runs of each, and their ratio. Also the SHA-256 of one
 * object alone (the part of a get the digest adds).
 *
 *   bench_integrity [--gets N] [--runs R]
 *
 * One line per size: bytes=<n> get_us_median_integrity=<x>
 * get_us_median_plain=<x> ratio=<integrity/plain> sha256_us=<x>
 * gets=<per run and client> runs=<r>
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "flagparse.h"
#include "harness.h"
#include "payload.h"
#include "store_client.h"

#define MAX_RUNS 101

struct opts {
	uint64_t gets, runs;
};

#define O(f) FLAG_AT(struct opts, f)
static const struct flag bench_flag_table[] = {
    {.name = "gets",
     .type = FLAG_U64,
     .off = O(gets),
     .def = "200",
     .help = "timed gets per run, client and size",
     .min = 1,
     .max = 1000000},
    {.name = "runs",
     .type = FLAG_U64,
     .off = O(runs),
     .def = "5",
     .help = "runs; the figures are the medians over runs",
     .min = 1,
     .max = MAX_RUNS},
};
#undef O

static const struct flag_set bench_set = {
    .prog = "bench_integrity",
    .intro = "get latency with payload digests vs without, 64 KiB and 4 MiB",
    .title = "bench_integrity flags",
    .width = 6,
    .flags = bench_flag_table,
    .n = sizeof(bench_flag_table) / sizeof(bench_flag_table[0]),
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static int start_worker(struct proc *w, uint16_t master_port)
{
	char bin[512], master[80];
	char *argv[] = {bin,
			master,
			(char *)(uintptr_t) "--host_id=bench-host",
			(char *)(uintptr_t) "--segment_size=64M",
			(char *)(uintptr_t) "--transport=tcp",
			NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(master, sizeof(master), "--master=127.0.0.1:%u", master_port);
	return proc_start(w, argv, "mcrepl-worker ready", 5000);
}

static store_client *open_client(uint16_t port, const char *tenant,
				 bool integrity)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char addr[64], err[512];

	store_client_config_init(&cfg);
	cfg.integrity = integrity;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (store_client_open(&c, addr, tenant, &cfg, err, sizeof(err)))
		fprintf(stderr, "bench_integrity: open: %s\n", err);
	return c;
}

/* The median of n timed gets of key (us); < 0 on a failed get. */
static double gets_median(store_client *c, const char *key, uint64_t bytes,
			  double *lat, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t len = 0;
		void *buf = NULL;
		double t0 = net_now_s() * 1e6;
		int st = store_client_get(c, key, &buf, &len, NULL);

		lat[i] = net_now_s() * 1e6 - t0;
		free(buf);
		if (st || len != bytes) {
			fprintf(stderr, "bench_integrity: get: %s\n",
				store_client_error(c));
			return -1;
		}
	}
	return median(lat, n);
}

/* SHA-256 of obj, the median of 21 (us). */
static double sha_us(const uint8_t *obj, uint64_t bytes)
{
	double t[21];
	uint8_t d[PAYLOAD_DIGEST_BYTES];

	for (int i = 0; i < 21; i++) {
		double t0 = net_now_s() * 1e6;

		payload_digest(obj, bytes, d);
		t[i] = net_now_s() * 1e6 - t0;
	}
	return median(t, 21);
}

/* One size: both clients put key, then runs x (a round of each). */
static int bench_size(store_client *const c[2], uint64_t bytes,
		      const struct opts *o)
{
	double *lat = calloc(o->gets, sizeof(double));
	double med[2][MAX_RUNS];
	uint8_t *obj = malloc(bytes);
	char key[32];
	int rc = -1;

	snprintf(key, sizeof(key), "bench-%llu", (unsigned long long)bytes);
	if (!lat || !obj)
		goto out;
	for (uint64_t i = 0; i < bytes; i++)
		obj[i] = (uint8_t)(i * 131);
	for (int m = 0; m < 2; m++)
		if (store_client_put(c[m], key, obj, bytes)) {
			fprintf(stderr, "bench_integrity: put: %s\n",
				store_client_error(c[m]));
			goto out;
		}
	for (int m = 0; m < 2; m++) /* warm up */
		if (gets_median(c[m], key, bytes, lat, 20) < 0)
			goto out;
	for (uint64_t r = 0; r < o->runs; r++)
		for (int m = 0; m < 2; m++)
			if ((med[m][r] = gets_median(c[m], key, bytes, lat,
						     o->gets)) < 0)
				goto out;
	{
		double a = median(med[0], o->runs), b = median(med[1], o->runs);

		printf("bytes=%llu get_us_median_integrity=%.1f "
		       "get_us_median_plain=%.1f ratio=%.3f sha256_us=%.1f "
		       "gets=%llu runs=%llu\n",
		       (unsigned long long)bytes, a, b, a / b,
		       sha_us(obj, bytes), (unsigned long long)o->gets,
		       (unsigned long long)o->runs);
	}
	rc = 0;
out:
	free(lat);
	free(obj);
	return rc;
}

int main(int argc, char **argv)
{
	const char *flags[] = {"--rpc_port=0", "--dynamic_replication_mode=off",
			       NULL};
	struct proc master, worker;
	store_client *c[2] = {NULL, NULL};
	struct opts o = {0};
	uint16_t port;
	int rc;

	flags_defaults(&bench_set, &o);
	rc = flags_parse(&bench_set, &o, NULL, argc, argv);
	if (rc)
		return rc == 1 ? 0 : 2;
	if (master_start(&master, flags)) {
		fprintf(stderr,
			"bench_integrity: cannot start mcrepl-master\n");
		return 1;
	}
	port = (uint16_t)proc_field(&master, "rpc_port");
	if (start_worker(&worker, port)) {
		fprintf(stderr,
			"bench_integrity: cannot start mcrepl-worker\n");
		proc_stop(&master);
		return 1;
	}
	rc = 1;
	c[0] = open_client(port, "with-digest", true);
	c[1] = open_client(port, "plain", false);
	if (c[0] && c[1] && bench_size(c, 64u << 10, &o) == 0 &&
	    bench_size(c, 4u << 20, &o) == 0)
		rc = 0;
	for (int m = 0; m < 2; m++)
		store_client_close(c[m]);
	proc_stop(&worker);
	proc_stop(&master);
	return rc;
}
