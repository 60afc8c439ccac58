/*
 * bench_client: latency of store_client_get for one 64 KiB object on a real
 * local cluster (one mcrepl-master with dynamic replication off, one
 * mcrepl-worker), one blocking client, one get at a time. Reports the
 * median and p99 of the per-get wall time, for the client as it is (data
 * connections kept open) and, as the baseline in the same run, for a
 * client that opens a new data connection per get (one_shot_data, the
 * client before connection reuse). The two alternate in rounds of 500.
 *
 *   bench_client [--gets N] [--bytes B] [--grants | --tls]
 * --tls: compare TLS on the master's RPC port instead: two clusters, the
 * first master serving TLS (a throw-away certificate; its worker and
 * client connect with --tls_ca), both clients keeping connections. Last
 * line: client_get_us_median_tls=<x> client_get_us_median_plain=<x>
 * ratio=<tls/plain> p99s, gets, bytes. (The data port is plain TCP in
 * both: a get is one GetReplicaList over TLS plus the read.)
 * --grants: compare the data-plane checks instead, grants and stamp tags:
 * two clusters, the baseline's master and worker started with
 * --insecure_no_grants_for_benchmarks (loopback only: no grants signed
 * or checked, no stamp tags given) and its client with stamp_tags_off (no
 * tag written or compared), both clients keeping connections. Last line:
 * client_get_us_median_checks=<x> client_get_us_median_nochecks=<x>
 * ratio=<checks/nochecks> p99s, gets, bytes.
 * Last line: client_get_us_median=<x> client_get_us_p99=<x>
 * one_shot_get_us_median=<x> one_shot_get_us_p99=<x> speedup=<x> gets=<n>
 * bytes=<n>
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_flags.h"
#include "clock.h"
#include "harness.h"
#include "store_client.h"
#include "tls.h"

/* --tls: the certificates' directory, the master's flags, the clients'
 * context (NULL: plain). */
static struct {
	char dir[64], cert[128], key[128], ca[128];
	SSL_CTX *ctx;
} tls;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int start_worker(struct proc *w, uint16_t master_port, bool with_tls,
			bool no_grants)
{
	static char no_grants_flag[] = "--insecure_no_grants_for_benchmarks";
	char bin[512], master[80], ca[160];
	char *argv[] = {bin,
			master,
			(char *)(uintptr_t) "--host_id=bench-host",
			(char *)(uintptr_t) "--segment_size=64M",
			(char *)(uintptr_t) "--transport=tcp",
			NULL,
			NULL};

	/* the grants baseline binds loopback only (the default
	 * --data_address), as the flag requires */
	argv[5] = with_tls ? ca : no_grants ? no_grants_flag : NULL;

	snprintf(ca, sizeof(ca), "--tls_ca=%s", tls.ca);

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
		double t0 = net_now_s() * 1e6;
		int st = store_client_get(c, key, &buf, &len, &info);

		lat[i] = net_now_s() * 1e6 - t0;
		free(buf);
		if (st || len != bytes) {
			fprintf(stderr, "bench_client: get: %s\n",
				store_client_error(c));
			return -1;
		}
	}
	return 0;
}

static store_client *open_client(uint16_t port, bool one_shot, SSL_CTX *ctx,
				 bool tags_off)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char addr[64], err[512];

	store_client_config_init(&cfg);
	cfg.one_shot_data = one_shot;
	cfg.tls = ctx;
	cfg.stamp_tags_off = tags_off;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (store_client_open(&c, addr, "bench", &cfg, err, sizeof(err)))
		fprintf(stderr, "bench_client: open: %s\n", err);
	return c;
}

#define ROUND 500

/* Client 0 on port[0] keeping connections; client 1 on port[1], one-shot
 * unless two (then the two clusters differ by grants or TLS only). */
static int bench(const uint16_t port[2], bool two, size_t gets, uint64_t bytes)
{
	static const char key[] = "bench-64k";
	bool grants = two && !tls.ctx;
	store_client *c[2] = {open_client(port[0], false, tls.ctx, false),
			      open_client(port[1], !two, NULL, grants)};
	double *lat[2] = {calloc(gets, sizeof(double)),
			  calloc(gets, sizeof(double))};
	uint8_t *obj = malloc(bytes);
	int rc = -1;

	if (!c[0] || !c[1] || !lat[0] || !lat[1] || !obj)
		goto out;
	for (uint64_t i = 0; i < bytes; i++)
		obj[i] = (uint8_t)(i * 131);
	for (int m = 0; m < (two ? 2 : 1); m++) {
		if (store_client_put(c[m], key, obj, bytes)) {
			fprintf(stderr, "bench_client: put: %s\n",
				store_client_error(c[m]));
			goto out;
		}
	}
	/* warm up both, then alternate rounds so drift hits both alike */
	for (int m = 0; m < 2; m++)
		if (run_gets(c[m], key, bytes, lat[m], gets < 100 ? gets : 100))
			goto out;
	for (size_t done = 0; done < gets; done += ROUND) {
		size_t n = gets - done < ROUND ? gets - done : ROUND;

		for (int m = 0; m < 2; m++)
			if (run_gets(c[m], key, bytes, lat[m] + done, n))
				goto out;
	}
	for (int m = 0; m < 2; m++)
		qsort(lat[m], gets, sizeof(double), cmp_double);
	if (tls.ctx || grants) {
		/* the cluster measured first, and its baseline */
		const char *a = tls.ctx ? "tls" : "checks";
		const char *b = tls.ctx ? "plain" : "nochecks";

		printf("client_get_us_median_%s=%.1f "
		       "client_get_us_median_%s=%.1f ratio=%.3f "
		       "client_get_us_p99_%s=%.1f "
		       "client_get_us_p99_%s=%.1f gets=%zu bytes=%llu\n",
		       a, lat[0][gets / 2], b, lat[1][gets / 2],
		       lat[0][gets / 2] / lat[1][gets / 2], a,
		       lat[0][gets * 99 / 100], b, lat[1][gets * 99 / 100],
		       gets, (unsigned long long)bytes);
	} else
		printf("client_get_us_median=%.1f client_get_us_p99=%.1f "
		       "one_shot_get_us_median=%.1f one_shot_get_us_p99=%.1f "
		       "speedup=%.2f gets=%zu bytes=%llu\n",
		       lat[0][gets / 2], lat[0][gets * 99 / 100],
		       lat[1][gets / 2], lat[1][gets * 99 / 100],
		       lat[1][gets / 2] / lat[0][gets / 2], gets,
		       (unsigned long long)bytes);
	rc = 0;
out:
	for (int m = 0; m < 2; m++) {
		store_client_close(c[m]);
		free(lat[m]);
	}
	free(obj);
	return rc;
}

struct client_opts {
	bool grants, tls;
	uint64_t gets, bytes;
};

#define O(f) FLAG_AT(struct client_opts, f)
static const struct flag client_flags[] = {
    {.name = "gets",
     .type = FLAG_U64,
     .off = O(gets),
     .def = "5000",
     .help = "timed gets per client",
     .min = 1,
     .max = 10000000},
    {.name = "bytes",
     .type = FLAG_SIZE,
     .off = O(bytes),
     .def = "65536",
     .help = "object bytes, K/M suffixes",
     .min = 1,
     .max = 64 << 20},
    {.name = "grants",
     .type = FLAG_BOOL,
     .off = O(grants),
     .def = "false",
     .help = "compare with a cluster without the data-plane checks"},
    {.name = "tls",
     .type = FLAG_BOOL,
     .off = O(tls),
     .def = "false",
     .help = "compare a master serving TLS with a plain one"},
};
#undef O

static const struct flag_set client_set = {
    .prog = "bench_client",
    .intro = "store_client_get latency of one object on a local master and "
	     "worker",
    .title = "bench_client flags",
    .width = 8,
    .flags = client_flags,
    .n = sizeof(client_flags) / sizeof(client_flags[0]),
};

/* --tls: a throw-away CA and server certificate, the master's flags
 * naming them and the clients' context; 0 or -1. */
static int tls_setup(void)
{
	char err[256];

	snprintf(tls.dir, sizeof(tls.dir), "/tmp/mcrepl-bench-XXXXXX");
	if (!mkdtemp(tls.dir) || harness_make_certs(tls.dir))
		return -1;
	snprintf(tls.cert, sizeof(tls.cert), "--tls_cert=%s/server.pem",
		 tls.dir);
	snprintf(tls.key, sizeof(tls.key), "--tls_key=%s/server.key", tls.dir);
	snprintf(tls.ca, sizeof(tls.ca), "%s/ca.pem", tls.dir);
	tls.ctx = tls_client_ctx(tls.ca, NULL, NULL, err, sizeof(err));
	if (!tls.ctx) {
		fprintf(stderr, "bench_client: %s\n", err);
		return -1;
	}
	return 0;
}

/* Cluster k (a master and a worker) on *port; 0 or -1, nothing left
 * running. Cluster 1 is the baseline: without grants with --grants,
 * plain with --tls (cluster 0 serves TLS). */
static int cluster_start(const struct client_opts *o, int k,
			 struct proc *master, struct proc *worker,
			 uint16_t *port)
{
	const char *flags[] = {"--rpc_port=0", "--dynamic_replication_mode=off",
			       NULL, NULL, NULL};

	flags[2] = o->tls && k == 0 ? tls.cert : NULL;
	flags[3] = o->tls && k == 0 ? tls.key : NULL;
	/* the grants baseline: master_start binds loopback, as the flag
	 * requires */
	if (k == 1 && o->grants)
		flags[2] = "--insecure_no_grants_for_benchmarks";
	if (master_start(master, flags)) {
		fprintf(stderr, "bench_client: cannot start mcrepl-master\n");
		return -1;
	}
	*port = (uint16_t)proc_field(master, "rpc_port");
	if (start_worker(worker, *port, o->tls && k == 0,
			 o->grants && k == 1)) {
		fprintf(stderr, "bench_client: cannot start mcrepl-worker\n");
		proc_stop(master);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct proc master[2], worker[2];
	uint16_t port[2];
	int n, up = 0;
	struct client_opts o = {0};
	int rc = bench_flags(&client_set, &o, argc, argv);

	if (rc >= 0)
		return rc;
	rc = 1;
	if (o.tls && tls_setup())
		return 1;
	n = o.grants || o.tls ? 2 : 1;
	while (up < n &&
	       cluster_start(&o, up, &master[up], &worker[up], &port[up]) == 0)
		up++;
	if (up == n) {
		if (n == 1)
			port[1] = port[0];
		rc = bench(port, n == 2, o.gets, o.bytes) ? 1 : 0;
	}
	for (int k = 0; k < up; k++) {
		proc_stop(&worker[k]);
		proc_stop(&master[k]);
	}
	if (o.tls) {
		SSL_CTX_free(tls.ctx);
		harness_remove_certs(tls.dir);
		rmdir(tls.dir);
	}
	return rc;
}
