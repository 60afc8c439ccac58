/*
 * bench_client: latency of store_client_get for one 64 KiB object on a real
 * local cluster (one mcrepl-master with dynamic replication off, one
 * mcrepl-worker), one blocking client, one get at a time. Reports the
 * median and p99 of the per-get wall time.
 *
 *   bench_client [--gets N] [--bytes B]
 * Last line: client_get_us_median=<x> client_get_us_p99=<x> gets=<n>
 * bytes=<n>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "store_client.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
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

/* n timed gets of key into lat[] (microseconds); 0 or -1. */
static int run_gets(store_client *c, const char *key, uint64_t bytes,
		    double *lat, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct store_read_info info;
		uint64_t len = 0;
		void *buf = NULL;
		double t0 = now_us();
		int st = store_client_get(c, key, &buf, &len, &info);

		lat[i] = now_us() - t0;
		free(buf);
		if (st || len != bytes) {
			fprintf(stderr, "bench_client: get: %s\n",
				store_client_error(c));
			return -1;
		}
	}
	return 0;
}

static int bench(uint16_t port, size_t gets, uint64_t bytes)
{
	static const char key[] = "bench-64k";
	store_client *c = NULL;
	double *lat = calloc(gets, sizeof(*lat));
	uint8_t *obj = malloc(bytes);
	char addr[64], err[512];
	int rc = -1;

	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (!lat || !obj ||
	    store_client_open(&c, addr, "bench", NULL, err, sizeof(err))) {
		fprintf(stderr, "bench_client: open: %s\n", err);
		goto out_free;
	}
	for (uint64_t i = 0; i < bytes; i++)
		obj[i] = (uint8_t)(i * 131);
	if (store_client_put(c, key, obj, bytes)) {
		fprintf(stderr, "bench_client: put: %s\n",
			store_client_error(c));
		goto out_close;
	}
	/* warm up, then measure */
	if (run_gets(c, key, bytes, lat, gets < 100 ? gets : 100) ||
	    run_gets(c, key, bytes, lat, gets))
		goto out_close;
	qsort(lat, gets, sizeof(*lat), cmp_double);
	printf("client_get_us_median=%.1f client_get_us_p99=%.1f gets=%zu "
	       "bytes=%llu\n",
	       lat[gets / 2], lat[gets * 99 / 100], gets,
	       (unsigned long long)bytes);
	rc = 0;
out_close:
	store_client_close(c);
out_free:
	free(obj);
	free(lat);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *const flags[] = {
	    "--rpc_port=0", "--dynamic_replication_mode=off", NULL};
	struct proc master, worker;
	size_t gets = 5000;
	uint64_t bytes = 64u << 10;
	int rc = 1;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--gets"))
			gets = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--bytes"))
			bytes = strtoull(argv[i + 1], NULL, 10);
	}
	if (gets == 0 || bytes == 0) {
		fprintf(stderr, "usage: bench_client [--gets N] [--bytes B]\n");
		return 2;
	}
	if (master_start(&master, flags)) {
		fprintf(stderr, "bench_client: cannot start mcrepl-master\n");
		return 1;
	}
	if (start_worker(&worker, (uint16_t)proc_field(&master, "rpc_port"))) {
		fprintf(stderr, "bench_client: cannot start mcrepl-worker\n");
		goto out_master;
	}
	rc = bench((uint16_t)proc_field(&master, "rpc_port"), gets, bytes) ? 1
									   : 0;
	proc_stop(&worker);
out_master:
	proc_stop(&master);
	return rc;
}
