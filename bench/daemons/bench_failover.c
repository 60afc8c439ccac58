/*
 * bench_failover: master failover under read/write load (docs/HA.md).
 * A throw-away etcd (1 member), two mcrepl-masters with the default HA
 * settings, three mcrepl-workers following the leader in etcd, N objects
 * preloaded; then one reader and one writer (store clients on etcd://)
 * run while the leader is killed with SIGKILL. After the load, every
 * object acknowledged before the kill is read back through the new leader
 * and compared byte for byte.
 *
 *   failover_ms   kill -> the later of the first read and the first write
 *                 started after it and completed (through the new leader)
 *   objects_before acknowledged puts before the kill
 *   readable_after of them, read back with identical bytes
 *   wrong_bytes   bytes that differed in any read (load or check)
 *   failed_ops    load operations that returned an error
 *
 * With an auth file by default, as production runs (a worker principal,
 * a client principal "admin"; every connection authenticates); --no-auth
 * without.
 *
 * With --etcd3: a 3-member etcd instead; one etcd member is killed (no
 * master is), and the run must see no failover and no error. Last line:
 *   etcd_member_killed=1 failovers=<n> step_downs=<n> failed_ops=<f> ops=<n>
 *
 *   bench_failover [--objects N] [--bytes B] [--etcd3] [--no-auth]
 * Last line (default): failover_ms=<t> objects_before=<n>
 * readable_after=<r> wrong_bytes=<w> failed_ops=<f>
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "etcd_proc.h"
#include "harness.h"
#include "store_client.h"

#define WORKERS 3
#define MAX_OBJ 100000

static struct {
	struct etcd_proc etcd;
	struct proc m[2], w[WORKERS];
	char ep_flag[300], ep_url[300];
	size_t bytes;
	/* objects: key "o<i>", bytes from fill(i); acked[i] = put returned
	 * 0, at acked_ms[i] */
	atomic_int n_obj;
	atomic_bool acked[MAX_OBJ];
	int64_t acked_ms[MAX_OBJ];
	atomic_bool stop;
	atomic_llong ops, failed, wrong_bytes;
	int64_t kill_ms;
	atomic_llong first_read_ms, first_write_ms; /* after the kill */
	bool auth;
	struct harness_auth af;
	struct auth_cred admin;
	char auth_flag[400];
} B;

static void fill(uint8_t *buf, size_t n, int i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t k = 0; k < n; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[k] = (uint8_t)x;
	}
}

static store_client *client(void)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[256];

	store_client_config_init(&cfg);
	cfg.cred = B.auth ? &B.admin : NULL;
	if (store_client_open(&c, B.ep_url, NULL, &cfg, err, sizeof(err))) {
		fprintf(stderr, "bench_failover: %s\n", err);
		exit(1);
	}
	return c;
}

static int put(store_client *c, int i, uint8_t *buf)
{
	char key[32];

	snprintf(key, sizeof(key), "o%d", i);
	fill(buf, B.bytes, i);
	return store_client_put(c, key, buf, B.bytes);
}

/* Read object i; counts wrong bytes. 0, or the client's status. */
static int check(store_client *c, int i, uint8_t *want)
{
	char key[32];
	void *got = NULL;
	uint64_t len = 0;
	int st;

	snprintf(key, sizeof(key), "o%d", i);
	st = store_client_get(c, key, &got, &len, NULL);
	if (st == 0) {
		fill(want, B.bytes, i);
		if (len != B.bytes) {
			B.wrong_bytes += (long long)B.bytes;
			st = -1;
		} else {
			for (size_t k = 0; k < len; k++)
				B.wrong_bytes += ((uint8_t *)got)[k] != want[k];
		}
	}
	free(got);
	return st;
}

/* An operation started after the kill completed at done_ms. */
static void note_first(atomic_llong *first, int64_t start_ms, int64_t done_ms)
{
	long long zero = 0;

	if (B.kill_ms && start_ms > B.kill_ms)
		atomic_compare_exchange_strong(first, &zero, done_ms);
}

static void *writer(void *arg)
{
	store_client *c = client();
	uint8_t *buf = malloc(B.bytes);

	(void)arg;
	while (!B.stop && B.n_obj < MAX_OBJ) {
		int i = B.n_obj;
		int64_t t0 = net_now_ms();
		int st = put(c, i, buf);

		B.ops++;
		if (st) {
			B.failed++;
			fprintf(stderr, "bench_failover: put o%d: %s\n", i,
				store_client_error(c));
		} else {
			B.acked_ms[i] = net_now_ms();
			B.acked[i] = true;
			note_first(&B.first_write_ms, t0, B.acked_ms[i]);
		}
		B.n_obj = i + 1;
		harness_sleep_ms(2);
	}
	free(buf);
	store_client_close(c);
	return NULL;
}

static void *reader(void *arg)
{
	store_client *c = client();
	uint8_t *want = malloc(B.bytes);
	unsigned seed = 7;

	(void)arg;
	while (!B.stop) {
		int n = B.n_obj, i = n ? (int)(rand_r(&seed) % (unsigned)n) : 0;
		int64_t t0 = net_now_ms();
		int st;

		if (!n || !B.acked[i])
			continue;
		st = check(c, i, want);
		B.ops++;
		if (st) {
			B.failed++;
			fprintf(stderr, "bench_failover: get o%d: %s\n", i,
				store_client_error(c));
		} else {
			note_first(&B.first_read_ms, t0, net_now_ms());
		}
		harness_sleep_ms(1);
	}
	free(want);
	store_client_close(c);
	return NULL;
}

static int start_cluster(int members)
{
	const char *mflags[] = {B.ep_flag, B.auth ? B.auth_flag : NULL, NULL};
	char bin[512], host[32], *argv[8];

	if (etcd_proc_start(&B.etcd, members) != 0)
		return -1;
	snprintf(B.ep_flag, sizeof(B.ep_flag), "--etcd_endpoints=%s",
		 B.etcd.endpoints);
	snprintf(B.ep_url, sizeof(B.ep_url), "etcd://%s", B.etcd.endpoints);
	for (int i = 0; i < 2; i++) {
		if (master_start(&B.m[i], mflags) != 0)
			return -1;
		harness_sleep_ms(300); /* m[0] leads */
	}
	harness_bin("mcrepl-worker", bin, sizeof(bin));
	for (int i = 0; i < WORKERS; i++) {
		snprintf(host, sizeof(host), "--host_id=fo-%d", i);
		argv[0] = bin;
		argv[1] = B.ep_flag;
		argv[2] = host;
		argv[3] = (char *)(uintptr_t) "--segment_size=256M";
		argv[4] = (char *)(uintptr_t) "--transport=tcp";
		argv[5] = B.auth ? B.af.principal_flag[0] : NULL;
		argv[6] = B.af.secret_flag[0];
		argv[7] = NULL;
		if (proc_start(&B.w[i], argv, "mcrepl-worker ready", 10000))
			return -1;
	}
	return 0;
}

static void stop_cluster(void)
{
	for (int i = 0; i < WORKERS; i++)
		if (B.w[i].pid > 0)
			proc_stop(&B.w[i]);
	for (int i = 0; i < 2; i++)
		if (B.m[i].pid > 0)
			proc_stop(&B.m[i]);
	etcd_proc_stop(&B.etcd);
	if (B.auth)
		harness_auth_cleanup(&B.af);
}

/* The auth file (harness_auth_setup's principals) and admin's credential. */
static int setup_auth(void)
{
	char err[256];

	if (harness_auth_setup(&B.af, NULL) != 0)
		return -1;
	snprintf(B.auth_flag, sizeof(B.auth_flag), "--auth_file=%s", B.af.file);
	if (auth_cred_load("admin",
			   B.af.secret_flag[1] + strlen("--secret_file="),
			   &B.admin, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_failover: %s\n", err);
		return -1;
	}
	return 0;
}

static long long metric(int i, const char *name)
{
	char *page =
	    http_get((uint16_t)proc_field(&B.m[i], "metrics_port"), "/metrics");
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
}

static void preload(int n)
{
	store_client *c = client();
	uint8_t *buf = malloc(B.bytes);

	for (int i = 0; i < n; i++) {
		if (put(c, i, buf) != 0) {
			fprintf(stderr, "bench_failover: preload: %s\n",
				store_client_error(c));
			exit(1);
		}
		B.acked[i] = true;
		B.n_obj = i + 1;
	}
	free(buf);
	store_client_close(c);
}

static int run_etcd3(int objects)
{
	pthread_t tw, tr;
	long long fo, sd;

	if (start_cluster(3) != 0)
		return 1;
	harness_sleep_ms(2500); /* past the recovery window */
	preload(objects);
	pthread_create(&tw, NULL, writer, NULL);
	pthread_create(&tr, NULL, reader, NULL);
	harness_sleep_ms(2000);
	etcd_proc_signal(&B.etcd, 0, SIGKILL); /* the first endpoint */
	harness_sleep_ms(6000);
	B.stop = true;
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	fo = metric(0, "mcrepl_master_ha_failovers_total") +
	     metric(1, "mcrepl_master_ha_failovers_total");
	sd = metric(0, "mcrepl_master_ha_step_downs_total") +
	     metric(1, "mcrepl_master_ha_step_downs_total");
	stop_cluster();
	printf("etcd_member_killed=1 failovers=%lld step_downs=%lld "
	       "failed_ops=%lld ops=%lld\n",
	       fo, sd, (long long)B.failed, (long long)B.ops);
	return fo == 0 && sd == 0 && B.failed == 0 ? 0 : 1;
}

static int run_failover(int objects)
{
	pthread_t tw, tr;
	int before = 0, readable = 0;
	store_client *c;
	uint8_t *want;
	long long fr, fw;

	if (start_cluster(1) != 0)
		return 1;
	harness_sleep_ms(2500); /* past the recovery window */
	preload(objects);
	pthread_create(&tw, NULL, writer, NULL);
	pthread_create(&tr, NULL, reader, NULL);
	harness_sleep_ms(2000);
	B.kill_ms = net_now_ms();
	proc_kill9(&B.m[0]);
	for (int t = 0; t < 300 && (!B.first_read_ms || !B.first_write_ms); t++)
		harness_sleep_ms(50);
	harness_sleep_ms(1000);
	B.stop = true;
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	fr = B.first_read_ms ? B.first_read_ms - B.kill_ms : -1;
	fw = B.first_write_ms ? B.first_write_ms - B.kill_ms : -1;
	c = client();
	want = malloc(B.bytes);
	for (int i = 0; i < B.n_obj; i++) {
		if (!B.acked[i] || B.acked_ms[i] > B.kill_ms)
			continue;
		before++;
		readable += check(c, i, want) == 0;
	}
	free(want);
	store_client_close(c);
	fprintf(stderr,
		"bench_failover: first read %lld ms, first write %lld ms "
		"after the kill; objects recovered %lld (%lld of them "
		"orphans adopted); ops %lld\n",
		fr, fw, metric(1, "mcrepl_master_ha_objects_recovered_total"),
		metric(1, "mcrepl_master_ha_orphans_adopted_total"),
		(long long)B.ops);
	stop_cluster();
	printf("failover_ms=%lld objects_before=%d readable_after=%d "
	       "wrong_bytes=%lld failed_ops=%lld\n",
	       fr < 0 || fw < 0 ? -1 : (fr > fw ? fr : fw), before, readable,
	       (long long)B.wrong_bytes, (long long)B.failed);
	return 0;
}

int main(int argc, char **argv)
{
	int objects = 2000;
	bool etcd3 = false;

	B.bytes = 16384;
	B.auth = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--objects") && i + 1 < argc)
			objects = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			B.bytes = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--etcd3"))
			etcd3 = true;
		else if (!strcmp(argv[i], "--no-auth"))
			B.auth = false;
		else {
			fprintf(stderr, "usage: bench_failover [--objects N] "
					"[--bytes B] [--etcd3] [--no-auth]\n");
			return 2;
		}
	}
	if (objects < 1 || objects > MAX_OBJ / 2 || B.bytes < 1 ||
	    B.bytes > (64u << 20)) {
		fprintf(stderr,
			"bench_failover: --objects 1..%d, --bytes "
			"1..64M\n",
			MAX_OBJ / 2);
		return 2;
	}
	if (!etcd_proc_available()) {
		fprintf(stderr, "bench_failover: no etcd binary (Debian: "
				"apt-get install etcd-server)\n");
		return 1;
	}
	if (B.auth && setup_auth() != 0)
		return 1;
	return etcd3 ? run_etcd3(objects) : run_failover(objects);
}
