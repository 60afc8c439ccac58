/*
 * End to end: a real mcrepl-master and 2-3 real workers with
 * --transport=rdma, copying over a fake fabric between processes
 * (tests/rdma/fabric/fabric_verbs.c, linked into the test build
 * mcrepl-worker-fakerdma in place of libibverbs: MRs are shared files,
 * rdma_cm runs over unix sockets, WRITEs are checked memcpys into the
 * peer's registered memory). The engine, the worker and the master are the
 * production code. Objects are larger than the fabric's max message (256
 * KiB) and its send queue (8 WRs), so every copy is split and queued.
 *
 * Each worker runs under its own name (a symlink in the fabric directory),
 * so its stderr is a log of its own; they are appended to the run's log
 * directory at teardown. The fabric writes what each process holds to
 * DIR/state-<pid> (fabric_verbs.c), which the tests read.
 */
#include <check.h>

Suite *make_rdma_fabric_suite(void);

#ifndef MCREPL_HAVE_RDMA

Suite *make_rdma_fabric_suite(void)
{
	return suite_create("rdma_fabric"); /* no engine: nothing to run */
}

#else

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "stamp.h"
#include "store_client.h"
#include "wait.h"

#define MAX_W 3
#define OBJ_BYTES ((4u << 20) + 4097u) /* 17 WRs of at most 256 KiB */
#define RDMA_PORT0 20886

static struct {
	char dir[96];
	char logdir[PATH_MAX]; /* the workers' stderr: host-a.log, ... */
	struct proc master;
	struct proc w[MAX_W];
	char addr[64];
	uint8_t obj[OBJ_BYTES];
} fx;

static const char *const master_flags[] = {
    "--dynamic_replication_mode=enforce",
    "--dynamic_replication_heat_window_seconds=1",
    "--dynamic_replication_admission_qps_threshold=5",
    "--client_ttl=2",
    NULL,
};

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 131u + (i >> 11) + seed * 7u);
}

static void start_master(const char *const *extra)
{
	const char *flags[16];
	size_t n = 0;

	for (; master_flags[n]; n++)
		flags[n] = master_flags[n];
	for (size_t i = 0; extra && extra[i]; i++)
		flags[n++] = extra[i];
	flags[n++] = "--rpc_port=0";
	flags[n] = NULL;
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	snprintf(fx.addr, sizeof(fx.addr), "127.0.0.1:%u",
		 (unsigned)proc_field(&fx.master, "rpc_port"));
}

static void setup_with(const char *const *master_extra)
{
	memset(&fx, 0, sizeof(fx));
	fx.master.pid = -1;
	for (int i = 0; i < MAX_W; i++)
		fx.w[i].pid = -1;
	snprintf(fx.dir, sizeof(fx.dir), "%sXXXXXX",
		 getenv("MCREPL_FAB_PREFIX"));
	ck_assert_ptr_nonnull(mkdtemp(fx.dir));
	start_master(master_extra);
	/* the workers' stderr, one file each: in the test's log directory
	 * (testlog.h), else in the fabric directory */
	snprintf(fx.logdir, sizeof(fx.logdir), "%s",
		 testlog_dir() ? testlog_dir() : fx.dir);
	if (!testlog_dir())
		setenv("MCREPL_TEST_LOG_DIR", fx.dir, 1);
	setenv("MCREPL_FAKE_RDMA_DIR", fx.dir, 1);
}

static void setup(void)
{
	setup_with(NULL);
}

/* Appends dir's worker logs to the run's log directory, removes dir. */
static void clean_dir(const char *dir)
{
	const char *logdir = getenv("MCREPL_RUN_LOG_DIR");
	char path[600], out[600], line[1024];
	struct dirent *e;
	DIR *d = opendir(dir);

	snprintf(out, sizeof(out), "%s/mcrepl-worker-fakerdma.log",
		 logdir ? logdir : ".");
	while (d && (e = readdir(d)) != NULL) {
		FILE *in, *o;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (logdir && strstr(e->d_name, ".log") &&
		    (in = fopen(path, "r")) != NULL) {
			if ((o = fopen(out, "a")) != NULL) {
				while (fgets(line, sizeof(line), in))
					fprintf(o, "[%s] %s", e->d_name, line);
				fclose(o);
			}
			fclose(in);
		}
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void teardown(void)
{
	for (int i = 0; i < MAX_W; i++)
		proc_stop(&fx.w[i]);
	proc_stop(&fx.master);
	clean_dir(fx.dir);
	/* the runner's environment as it was (CK_FORK=no runs the other
	 * suites in this process) */
	unsetenv("MCREPL_FAKE_RDMA_DIR");
	if (testlog_dir())
		return;
	if (getenv("MCREPL_RUN_LOG_DIR"))
		setenv("MCREPL_TEST_LOG_DIR", getenv("MCREPL_RUN_LOG_DIR"), 1);
	else
		unsetenv("MCREPL_TEST_LOG_DIR");
}

/* In the runner, around the test case: a failed test exits without its
 * teardown (its daemons die with it), so what it left is removed here. */
static void run_setup(void)
{
	const char *logdir = getenv("MCREPL_TEST_LOG_DIR");
	char pfx[64];

	snprintf(pfx, sizeof(pfx), "%s/mcrepl-fab-%d-",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
		 (int)getpid());
	setenv("MCREPL_FAB_PREFIX", pfx, 1);
	if (logdir && logdir[0])
		setenv("MCREPL_RUN_LOG_DIR", logdir, 1);
}

static void run_teardown(void)
{
	const char *pfx = getenv("MCREPL_FAB_PREFIX");
	char parent[64], path[600];
	const char *base;
	struct dirent *e;
	DIR *d;

	if (!pfx)
		return;
	base = strrchr(pfx, '/') + 1;
	snprintf(parent, sizeof(parent), "%.*s", (int)(base - pfx - 1), pfx);
	d = opendir(parent);
	while (d && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, base, strlen(base)) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, e->d_name);
		clean_dir(path);
	}
	if (d)
		closedir(d);
	unsetenv("MCREPL_FAB_PREFIX");
	unsetenv("MCREPL_RUN_LOG_DIR");
}

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

/* Worker i (host-a, ...) on rdma_cm port RDMA_PORT0 + i, with the fabric
 * environment `env` ("NAME=value", or NULL) and an extra flag (a later
 * --transport wins). */
static void start_worker(int i, const char *env, const char *flag)
{
	char bin[512], real[512], master[80], host[32], port[32];
	char *argv[] = {bin,
			master,
			host,
			port,
			mut("--segment_size=32M"),
			mut("--metrics_port=0"),
			mut("--transport=rdma"),
			mut("--data_address=127.0.0.1"),
			mut("--poll_interval_ms=20"),
			(char *)(uintptr_t)flag,
			NULL};
	char *eq = NULL, name[64], want[64];

	harness_bin("../tests/mcrepl-worker-fakerdma", real, sizeof(real));
	snprintf(bin, sizeof(bin), "%s/host-%c", fx.dir, 'a' + i);
	unlink(bin);
	ck_assert_int_eq(symlink(real, bin), 0);
	snprintf(master, sizeof(master), "--master=%s", fx.addr);
	snprintf(host, sizeof(host), "--host_id=host-%c", 'a' + i);
	snprintf(port, sizeof(port), "--rdma_port=%d", RDMA_PORT0 + i);
	if (env) {
		eq = strchr(env, '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq - env), env);
		setenv(name, eq + 1, 1);
	}
	ck_assert_int_eq(
	    proc_start(&fx.w[i], argv, "mcrepl-worker ready", test_hang_ms()),
	    0);
	if (env)
		unsetenv(name);
	snprintf(want, sizeof(want), "transport=%s",
		 flag && !strncmp(flag, "--transport=", 12) ? flag + 12
							    : "rdma");
	ck_assert_ptr_nonnull(strstr(fx.w[i].ready, want));
}

/* A field of worker i's fabric state line; -1 when unreadable. */
static long long fab(int i, const char *field)
{
	char path[128], line[512], key[64];
	const char *p;
	FILE *f;

	snprintf(path, sizeof(path), "%s/state-%d", fx.dir, (int)fx.w[i].pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	snprintf(key, sizeof(key), "%s=", field);
	if (!p || !(p = strstr(line, key)))
		return -1;
	return strtoll(p + strlen(key), NULL, 10);
}

/* Waits for worker i's field to equal want (wait.h); its last value. */
static long long wait_fab(int i, const char *field, long long want)
{
	struct test_wait w = test_wait_start();
	long long v;

	while ((v = fab(i, field)) != want && test_wait_more(&w))
		;
	return v;
}

/* How many lines of worker i's log contain part ("^part": start with). */
static int logged(int i, const char *part)
{
	char path[PATH_MAX + 16], line[2048];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/host-%c.log", fx.logdir, 'a' + i);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		n += part[0] == '^' ? !strncmp(line, part + 1, strlen(part + 1))
				    : strstr(line, part) != NULL;
	if (f)
		fclose(f);
	return n;
}

static long long worker_metric(int i, const char *name)
{
	char *page = http_get((uint16_t)proc_field(&fx.w[i], "metrics_port"),
			      "/metrics");
	long long v = page ? metric_value(strstr(page, "\r\n\r\n"), name) : -1;

	free(page);
	return v;
}

static long long master_metric(store_client *c, const char *name)
{
	char *text = NULL;
	long long v;

	ck_assert_msg(store_client_stats(c, NULL, NULL, &text) == 0, "%s",
		      store_client_error(c));
	v = metric_value(text, name);
	free(text);
	return v;
}

static store_client *client(const char *local_host)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[512];

	store_client_config_init(&cfg);
	cfg.local_host = local_host;
	ck_assert_msg(
	    store_client_open(&c, fx.addr, "t1", &cfg, err, sizeof(err)) == 0,
	    "%s", err);
	return c;
}

static void put(store_client *c, const char *key, unsigned seed)
{
	fill(fx.obj, OBJ_BYTES, seed);
	ck_assert_msg(store_client_put(c, key, fx.obj, OBJ_BYTES) == 0,
		      "put %s: %s", key, store_client_error(c));
}

/* The replica of key on host, complete, or NULL. */
static const struct store_replica_info *
replica_on(const struct store_object_info *o, const char *host)
{
	for (size_t i = 0; i < o->n_replicas; i++)
		if (!strcmp(o->replicas[i].host_id, host))
			return &o->replicas[i];
	return NULL;
}

/* Waits up to ms for the master to list n segments. */
static size_t segments(store_client *c)
{
	struct store_segment_info *segs = NULL;
	size_t have = 0;

	ck_assert_int_eq(store_client_stats(c, &segs, &have, NULL), 0);
	free(segs);
	return have;
}

static void wait_segments(store_client *c, size_t n)
{
	WAIT_UNTIL(segments(c) == n);
}

/* The worker (0 for host-a, 1 for host-b) holding key's one replica. */
static int host_of(store_client *c, const char *key)
{
	struct store_object_info o;

	ck_assert_int_eq(store_client_stat(c, key, &o), 0);
	ck_assert_uint_eq(o.n_replicas, 1);
	return o.replicas[0].host_id[5] - 'a';
}

/* Reads key (heat) until it has a replica on host, at most ms (a check
 * that none comes; test_hang_ms() for one that does). */
static bool heat_until_on(store_client *c, const char *key, const char *host,
			  int ms)
{
	struct store_object_info o;
	uint64_t len;
	void *buf;

	for (int waited = 0; waited < ms; waited += 100) {
		ck_assert_int_eq(store_client_stat(c, key, &o), 0);
		if (replica_on(&o, host) && replica_on(&o, host)->complete)
			return true;
		for (int r = 0; r < 8; r++) {
			ck_assert_msg(
			    store_client_get(c, key, &buf, &len, NULL) == 0,
			    "get %s: %s", key, store_client_error(c));
			free(buf);
		}
		harness_sleep_ms(100);
	}
	return false;
}

/* Reads key from host's own replica (the client prefers its host) and
 * compares every byte with what was put with seed. */
static void verify_on(const char *key, const char *host, unsigned seed)
{
	store_client *c = client(host);
	struct store_object_info o;
	struct store_read_info info;
	const struct store_replica_info *r;
	uint64_t len;
	void *buf;

	ck_assert_int_eq(store_client_stat(c, key, &o), 0);
	r = replica_on(&o, host);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(store_client_get(c, key, &buf, &len, &info) == 0,
		      "get %s: %s", key, store_client_error(c));
	ck_assert_str_eq(info.host_id, host);
	ck_assert_uint_eq(info.segment_id, r->segment_id);
	ck_assert_uint_eq(len, OBJ_BYTES);
	fill(fx.obj, OBJ_BYTES, seed);
	ck_assert_mem_eq(buf, fx.obj, OBJ_BYTES);
	free(buf);
	/* the stamp at the head of the region was copied and checked too */
	ck_assert_uint_eq(store_client_stale_reads(c), 0);
	store_client_close(c);
}

/* Hot reads make the master copy each key from its worker to the other
 * one, by one-sided WRITEs over the fabric; the bytes arrive, split at
 * max message and through the 8-WR window, on several keys one after the
 * other over the same connection, and across a reconnect (the target
 * restarted: same address and port, a new process and rkey). */
START_TEST(test_hot_copies_move_bytes_between_worker_processes)
{
	store_client *c;
	long long wrs;
	int from;

	start_worker(0, NULL, NULL);
	c = client(NULL);
	put(c, "k1", 1); /* the only worker: host-a */
	start_worker(1, NULL, NULL);
	ck_assert(heat_until_on(c, "k1", "host-b", test_hang_ms()));
	verify_on("k1", "host-b", 1);
	wrs = fab(0, "writes");
	ck_assert_int_ge(wrs, (OBJ_BYTES + STAMP_BYTES) / (256 << 10) + 1);
	ck_assert_int_eq(fab(0, "bytes"), OBJ_BYTES + STAMP_BYTES);
	ck_assert_int_eq(fab(0, "access_errors"), 0);
	ck_assert_int_eq(fab(1, "inbound_qps"), 1);

	/* a second key: from wherever it was put to the other worker, on
	 * the QP a already has to b, or on a new one from b to a */
	put(c, "k2", 2);
	from = host_of(c, "k2");
	ck_assert(
	    heat_until_on(c, "k2", from ? "host-a" : "host-b", test_hang_ms()));
	verify_on("k2", "host-a", 2);
	verify_on("k2", "host-b", 2);
	ck_assert_int_eq(fab(0, "qps"), from ? 2 : 1);
	ck_assert_int_eq(fab(0, "inbound_qps"), from ? 1 : 0);
	ck_assert_int_eq(fab(1, "qps"), from ? 2 : 1);
	ck_assert_int_eq(fab(1, "bytes"), from ? OBJ_BYTES + STAMP_BYTES : 0);
	ck_assert_int_eq(fab(0, "bytes"),
			 (from ? 1 : 2) * (OBJ_BYTES + STAMP_BYTES));
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_copies_failed_total") +
		worker_metric(1, "mcrepl_worker_copies_failed_total"),
	    0);
	ck_assert_int_eq(
	    logged(0, "copying over tcp") + logged(1, "copying over tcp"), 0);
	store_client_close(c);
}
END_TEST

/* Reads key until worker 0's first copy failed, then none: the master
 * may still try again while the key is hot, each try its own copy. Waits
 * for the last try to end, every failure counted on both sides; the
 * number of tries (>= 1). */
static long long read_until_copies_fail(store_client *c, const char *key)
{
	long long n;

	for (struct test_wait w = test_wait_start();
	     fab(0, "access_errors") < 1 && test_wait_more(&w);) {
		uint64_t len;
		void *buf;

		ck_assert_int_eq(store_client_get(c, key, &buf, &len, NULL), 0);
		free(buf);
	}
	harness_sleep_ms(2500); /* at least: the key cools down */
	WAIT_UNTIL(
	    master_metric(c, "mcrepl_dynamic_copies_inflight") == 0 &&
	    worker_metric(0, "mcrepl_worker_copies_failed_total") ==
		fab(0, "access_errors") &&
	    master_metric(c, "mcrepl_dynamic_copy_tasks_revoked_total") ==
		fab(0, "access_errors"));
	n = fab(0, "access_errors");
	ck_assert_int_ge(n, 1);
	return n;
}

/* The target hands out a wrong rkey: the source's NIC gets a remote
 * access error on the first WR, the rest is flushed; the copy fails once
 * with that reason, nothing is written, the key keeps its one replica. */
START_TEST(test_wrong_rkey_fails_the_copy_once_with_the_reason)
{
	store_client *c;
	struct store_object_info o;
	long long n;

	start_worker(0, NULL, NULL);
	c = client(NULL);
	put(c, "k", 3);
	start_worker(1, "MCREPL_FAKE_RDMA_BAD_RKEY=1", NULL);
	n = read_until_copies_fail(c, "k");
	/* each failed copy: one remote access error (the WRs behind it are
	 * flushed, not counted), one failure on the worker and the master,
	 * one line from the engine with the reason */
	ck_assert_int_eq(worker_metric(0, "mcrepl_worker_copies_failed_total"),
			 n);
	ck_assert_int_eq(
	    master_metric(c, "mcrepl_dynamic_copy_tasks_revoked_total"), n);
	ck_assert_int_eq(logged(0, "^rdma: write to 127.0.0.1:20887 failed: "
				   "remote access error (wc status 10"),
			 n);
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_copies_completed_total"), 0);
	ck_assert_int_eq(fab(0, "writes"), 0);
	ck_assert_int_eq(fab(0, "qps"), 0); /* each QP in error torn down */
	ck_assert_int_eq(store_client_stat(c, "k", &o), 0);
	ck_assert_uint_eq(o.n_replicas, 1);
	ck_assert_str_eq(o.replicas[0].host_id, "host-a");
	store_client_close(c);
}
END_TEST

/* The target's NIC lets peers reach only the first MiB of its segment:
 * the source's fifth WR (at 1 MiB) gets a remote access error, the
 * first four landed; the copy fails and no replica becomes readable. */
START_TEST(test_write_past_the_remote_mr_fails_as_on_hardware)
{
	store_client *c;
	struct store_object_info o;
	long long n;

	start_worker(0, NULL, NULL);
	c = client(NULL);
	put(c, "k", 9);
	start_worker(1, "MCREPL_FAKE_RDMA_MR_LIMIT=1048576", NULL);
	n = read_until_copies_fail(c, "k");
	/* a try into the MiB: its 4 WRs of 256 KiB landed, the fifth refused;
	 * the first try's region starts at 0, a retry's lies past the first
	 * (still quarantined) and fails at its first WR */
	ck_assert_int_eq(fab(0, "writes"), 4);
	ck_assert_int_eq(fab(0, "bytes"), 1 << 20);
	ck_assert_int_eq(logged(0, "^rdma: write to 127.0.0.1:20887 failed: "
				   "remote access error (wc status 10"),
			 n);
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_copies_completed_total"), 0);
	ck_assert_int_eq(store_client_stat(c, "k", &o), 0);
	ck_assert_uint_eq(o.n_replicas, 1);
	ck_assert_str_eq(o.replicas[0].host_id, "host-a");
	store_client_close(c);
}
END_TEST

/* A target that runs tcp (or a master older than rdma_endpoint) hands
 * out no rdma endpoint: the rdma source copies over tcp, says so once,
 * never dials an rdma_cm port for it, and the bytes arrive. */
START_TEST(test_target_without_rdma_endpoint_is_copied_over_tcp)
{
	store_client *c;

	start_worker(0, NULL, NULL);
	c = client(NULL);
	put(c, "k1", 11);
	put(c, "k2", 12);
	start_worker(1, NULL, "--transport=tcp");
	ck_assert(heat_until_on(c, "k1", "host-b", test_hang_ms()));
	verify_on("k1", "host-b", 11);
	ck_assert(heat_until_on(c, "k2", "host-b", test_hang_ms()));
	verify_on("k2", "host-b", 12);
	ck_assert_int_eq(logged(0, "came without an rdma endpoint"), 1);
	ck_assert_int_eq(fab(0, "writes"), 0);
	ck_assert_int_eq(fab(0, "ids"), 1); /* its listener; no connection */
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_copies_completed_total"), 2);
	store_client_close(c);
}
END_TEST

/* A domain-aware master warms a domain that joins with the hot object:
 * the warmup copy (not a read's) goes over the fabric too, to a third
 * worker, and its bytes arrive. */
START_TEST(test_warmup_copy_to_a_new_domain_over_rdma)
{
	store_client *c;

	start_worker(0, NULL, NULL);
	c = client(NULL);
	put(c, "warm", 10);
	start_worker(1, NULL, NULL);
	ck_assert(heat_until_on(c, "warm", "host-b", test_hang_ms()));
	start_worker(2, NULL, "--domain=zone-c");
	WAIT_UNTIL(master_metric(
		       c, "mcrepl_master_warmup_copies_completed_total") >= 1);
	ck_assert_int_eq(
	    master_metric(c, "mcrepl_master_warmup_copies_completed_total"), 1);
	verify_on("warm", "host-c", 10);
	ck_assert_int_eq(fab(2, "inbound_qps"), 1);
	ck_assert_int_eq(fab(0, "bytes") + fab(1, "bytes"),
			 2 * (OBJ_BYTES + STAMP_BYTES));
	store_client_close(c);
}
END_TEST

static void setup_domains(void)
{
	static const char *const da[] = {
	    "--dynamic_replication_domain_aware=true", NULL};

	setup_with(da);
}

/* Starts a slowed source (host-a) and its target (host-b, with env), puts
 * a key on a and heats it until the copy to b is under way. */
static store_client *copy_under_way(const char *target_env)
{
	store_client *c;
	uint64_t len;
	void *buf;

	start_worker(0, "MCREPL_FAKE_RDMA_WR_DELAY_MS=200", NULL);
	c = client(NULL);
	put(c, "big", 4);
	start_worker(1, target_env, NULL);
	for (struct test_wait w = test_wait_start();
	     fab(0, "writes") < 2 && test_wait_more(&w);) {
		ck_assert_int_eq(store_client_get(c, "big", &buf, &len, NULL),
				 0);
		free(buf);
	}
	ck_assert_int_ge(fab(0, "writes"), 2);
	ck_assert_int_lt(fab(0, "writes"), 17); /* mid-copy */
	ck_assert_int_eq(fab(1, "inbound_qps"), 1);
	return c;
}

/* A process crash: the source is killed mid-copy; its
 * socket closes, the target's CM reports DISCONNECTED and the target
 * frees the inbound connection (QP, CQ, id). */
START_TEST(test_source_killed_mid_copy_target_frees_inbound)
{
	store_client *c = copy_under_way(NULL);

	proc_kill9(&fx.w[0]);
	ck_assert_int_eq(wait_fab(1, "inbound_qps", 0), 0);
	ck_assert_int_eq(fab(1, "qps"), 0);
	ck_assert_int_eq(wait_fab(1, "ids", 1), 1); /* the listener */
	store_client_close(c);
}
END_TEST

/* A host crash: nothing tells the target (no
 * DISCONNECTED); the source comes back on the same address and rdma_cm
 * port and copies again: the target replaces the stale inbound
 * connection, and the new copy's bytes arrive. */
START_TEST(test_host_crash_stale_inbound_replaced_when_source_returns)
{
	store_client *c = copy_under_way("MCREPL_FAKE_RDMA_SILENT=1");

	proc_kill9(&fx.w[0]);
	harness_sleep_ms(500);
	ck_assert_int_eq(fab(1, "inbound_qps"), 1); /* stale: nobody said */
	wait_segments(c, 1); /* the master drops the dead a (TTL 2 s) */
	put(c, "filler", 5); /* on b, the only worker */
	ck_assert_int_eq(host_of(c, "filler"), 1);
	start_worker(0, NULL, NULL); /* same address and rdma_cm port */
	put(c, "big2", 6);	     /* on a, the least used */
	ck_assert_int_eq(host_of(c, "big2"), 0);
	ck_assert(heat_until_on(c, "big2", "host-b", test_hang_ms()));
	verify_on("big2", "host-b", 6);
	ck_assert_int_eq(wait_fab(1, "inbound_qps", 1), 1);
	ck_assert_int_eq(logged(1, "replaced by"), 1);
	store_client_close(c);
}
END_TEST

/* The device goes away (SIGUSR2: DEVICE_FATAL and DEVICE_REMOVAL): the
 * worker fails its connections at once and refuses copies with ENODEV;
 * the key keeps its replica and nothing is written. */
START_TEST(test_device_removal_fails_connections_and_refuses_copies)
{
	store_client *c;
	struct store_object_info o;

	start_worker(0, NULL, NULL);
	c = client(NULL);
	put(c, "k1", 7);
	put(c, "k2", 8);
	start_worker(1, NULL, NULL);
	ck_assert(heat_until_on(c, "k1", "host-b", test_hang_ms()));
	verify_on("k1", "host-b", 7);
	ck_assert_int_eq(fab(0, "qps"), 1); /* a's QP to b */
	kill(fx.w[0].pid, SIGUSR2);
	ck_assert_int_eq(wait_fab(0, "dead", 1), 1);
	ck_assert_int_eq(wait_fab(0, "qps", 0), 0);
	ck_assert_int_eq(logged(0, "DEVICE_REMOVAL"), 1);
	ck_assert(!heat_until_on(c, "k2", "host-b", 2500));
	ck_assert_int_ge(logged(0, "No such device"), 1);
	ck_assert_int_eq(fab(0, "writes"), 17); /* k1's, nothing since */
	ck_assert_int_eq(store_client_stat(c, "k2", &o), 0);
	ck_assert_uint_eq(o.n_replicas, 1);
	store_client_close(c);
}
END_TEST

Suite *make_rdma_fabric_suite(void)
{
	Suite *s = suite_create("rdma_fabric");
	TCase *tc = tcase_create("cluster");
	TCase *dom = tcase_create("domains");

	tcase_add_unchecked_fixture(tc, run_setup, run_teardown);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_hot_copies_move_bytes_between_worker_processes);
	tcase_add_test(tc, test_wrong_rkey_fails_the_copy_once_with_the_reason);
	tcase_add_test(tc, test_source_killed_mid_copy_target_frees_inbound);
	tcase_add_test(
	    tc, test_host_crash_stale_inbound_replaced_when_source_returns);
	tcase_add_test(
	    tc, test_device_removal_fails_connections_and_refuses_copies);
	tcase_add_test(tc, test_write_past_the_remote_mr_fails_as_on_hardware);
	tcase_add_test(tc,
		       test_target_without_rdma_endpoint_is_copied_over_tcp);
	suite_add_tcase(s, tc);
	tcase_add_unchecked_fixture(dom, run_setup, run_teardown);
	tcase_add_checked_fixture(dom, setup_domains, teardown);
	tcase_set_timeout(dom, 90);
	tcase_add_test(dom, test_warmup_copy_to_a_new_domain_over_rdma);
	suite_add_tcase(s, dom);
	return s;
}

#endif
