/* Real daemons on loopback: one mcrepl-master (enforce mode, 1 s heat
 * window, threshold 5 reads/s, client TTL 2 s) and 2-3 mcrepl-workers, each
 * its own host, driven through the store client and mcrepl-cli. All with
 * authentication on: a throwaway auth file (harness.h), the
 * workers as principal "worker", the clients as "admin". Children
 * are stopped in the fixture's teardown and die with the test process
 * (PR_SET_PDEATHSIG) if it crashes. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth.h"
#include "harness.h"
#include "stamp.h"
#include "store_client.h"
#include "wait.h"

Suite *make_worker_suite(void);

#define MAX_WORKERS 3
#define OBJ_BYTES (256u << 10)

static struct {
	struct proc master;
	struct proc workers[MAX_WORKERS];
	uint16_t port;
	char addr[64];
	uint8_t obj[OBJ_BYTES];
	struct harness_auth auth;
	char auth_flag[400];
	struct auth_cred admin;
} fx;

static const char *const master_flags[] = {
    "--dynamic_replication_mode=enforce",
    "--dynamic_replication_heat_window_seconds=1",
    "--dynamic_replication_admission_qps_threshold=5",
    "--client_ttl=2",
    NULL,
};

/* Extra master flags for the fault tests (set by their setup). */
static const char *const *extra_master_flags;

static void start_master(const char *port_flag)
{
	const char *flags[16];
	size_t n = 0;

	for (; master_flags[n]; n++)
		flags[n] = master_flags[n];
	flags[n++] = fx.auth_flag;
	for (size_t i = 0; extra_master_flags && extra_master_flags[i]; i++)
		flags[n++] = extra_master_flags[i];
	flags[n++] = port_flag;
	flags[n] = NULL;
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	fx.port = (uint16_t)proc_field(&fx.master, "rpc_port");
	ck_assert_uint_ne(fx.port, 0);
	snprintf(fx.addr, sizeof(fx.addr), "127.0.0.1:%u", fx.port);
}

/* Starts worker i (host-a, host-b, ...) with extra flags (may be NULL). */
static void start_worker_with(int i, const char *extra)
{
	char bin[512], master[80], host[32], size[32], more[64];
	char *argv[] = {bin,
			size,
			master,
			host,
			more,
			fx.auth.principal_flag[0],
			fx.auth.secret_flag[0],
			NULL,
			NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(size, sizeof(size), "--segment_size=%s",
		 extra ? "64M" : "32M");
	snprintf(master, sizeof(master), "--master=%s", fx.addr);
	snprintf(host, sizeof(host), "--host_id=host-%c", 'a' + i);
	snprintf(more, sizeof(more), "--metrics_port=0");
	if (extra)
		argv[7] = (char *)(uintptr_t)extra;
	ck_assert_int_eq(proc_start(&fx.workers[i], argv, "mcrepl-worker ready",
				    test_hang_ms()),
			 0);
	ck_assert_uint_ne(proc_field(&fx.workers[i], "client_id"), 0);
	ck_assert_uint_ne(proc_field(&fx.workers[i], "data_port"), 0);
	ck_assert_uint_ne(proc_field(&fx.workers[i], "metrics_port"), 0);
	ck_assert_ptr_nonnull(strstr(fx.workers[i].ready, "transport=tcp"));
}

static void start_worker(int i)
{
	start_worker_with(i, NULL);
}

static void setup(void)
{
	char err[256];

	memset(&fx, 0, sizeof(fx));
	fx.master.pid = -1;
	for (int i = 0; i < MAX_WORKERS; i++)
		fx.workers[i].pid = -1;
	for (size_t i = 0; i < OBJ_BYTES; i++)
		fx.obj[i] = (uint8_t)(i * 131 + (i >> 9));
	ck_assert_int_eq(harness_auth_setup(&fx.auth, NULL), 0);
	snprintf(fx.auth_flag, sizeof(fx.auth_flag), "--auth_file=%s",
		 fx.auth.file);
	ck_assert_int_eq(
	    auth_cred_load("admin",
			   fx.auth.secret_flag[1] + strlen("--secret_file="),
			   &fx.admin, err, sizeof(err)),
	    0);
	start_master("--rpc_port=0");
}

static void teardown(void)
{
	for (int i = 0; i < MAX_WORKERS; i++) {
		if (fx.workers[i].pid > 0)
			kill(fx.workers[i].pid, SIGCONT);
		proc_stop(&fx.workers[i]);
	}
	proc_stop(&fx.master);
	harness_auth_cleanup(&fx.auth);
}

static store_client *client_with(const char *local_host, bool one_shot)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[512];

	store_client_config_init(&cfg);
	cfg.cred = &fx.admin;
	cfg.local_host = local_host;
	cfg.one_shot_data = one_shot;
	ck_assert_msg(
	    store_client_open(&c, fx.addr, "t1", &cfg, err, sizeof(err)) == 0,
	    "%s", err);
	return c;
}

static store_client *client(const char *local_host)
{
	return client_with(local_host, false);
}

static void put_obj(store_client *c, const char *key)
{
	int st = store_client_put(c, key, fx.obj, OBJ_BYTES);

	ck_assert_msg(st == 0, "put: %s", store_client_error(c));
}

static size_t stat_n(store_client *c, const char *key,
		     struct store_object_info *o)
{
	ck_assert_msg(store_client_stat(c, key, o) == 0, "stat: %s",
		      store_client_error(c));
	return o->n_replicas;
}

/* The key has `want` readable replicas now. */
static void stat_replicas(store_client *c, const char *key, size_t want,
			  struct store_object_info *o)
{
	ck_assert_uint_eq(stat_n(c, key, o), want);
}

static size_t count_segments(store_client *c, uint64_t client_id)
{
	struct store_segment_info *s = NULL;
	size_t n = 0, hits = 0;

	ck_assert_msg(store_client_stats(c, &s, &n, NULL) == 0, "%s",
		      store_client_error(c));
	for (size_t i = 0; i < n; i++)
		hits += !client_id || s[i].client_id == client_id;
	free(s);
	return hits;
}

/* covers: T-2 R-GOAL-5 R-DEC-9 R-EXEC-1 R-DST-4 R-ADMIT-4 R-READ-1 */
START_TEST(test_hot_key_gets_one_dynamic_replica)
{
	store_client *c;
	struct store_object_info o;
	struct store_read_info info;
	const struct store_replica_info *orig, *dyn;
	static const char *const rfc[] = {"--dynamic_replication_policy=rfc",
					  NULL};
	struct test_wait w;
	uint64_t len;
	void *buf;

	/* the RFC's fixed limit (2): under auto a key that is all of the
	 * cluster's reads may spread over every host (3) */
	proc_stop(&fx.master);
	extra_master_flags = rfc;
	start_master("--rpc_port=0");
	extra_master_flags = NULL;
	for (int i = 0; i < 3; i++)
		start_worker(i);
	c = client(NULL);
	put_obj(c, "hot");
	stat_replicas(c, "hot", 1, &o);
	/* reads until the copy is readable: they keep the key hot (5 reads
	 * in its 1 s window) however slow the machine */
	w = test_wait_start();
	do {
		for (int i = 0; i < 10; i++) {
			ck_assert_msg(
			    store_client_get(c, "hot", &buf, &len, &info) == 0,
			    "get: %s", store_client_error(c));
			ck_assert_uint_eq(len, OBJ_BYTES);
			free(buf);
		}
	} while (stat_n(c, "hot", &o) < 2 && test_wait_more(&w));
	stat_replicas(c, "hot", 2, &o);
	orig = o.replicas[0].dynamic ? &o.replicas[1] : &o.replicas[0];
	dyn = o.replicas[0].dynamic ? &o.replicas[0] : &o.replicas[1];
	ck_assert(!orig->dynamic && dyn->dynamic);
	ck_assert(dyn->complete && orig->complete);
	ck_assert_str_ne(dyn->host_id, orig->host_id);
	store_client_close(c);

	c = client(dyn->host_id); /* prefers its own host: the new replica */
	ck_assert(store_client_get(c, "hot", &buf, &len, &info) == 0);
	ck_assert_uint_eq(info.segment_id, dyn->segment_id);
	ck_assert(info.dynamic);
	ck_assert_uint_eq(len, OBJ_BYTES);
	ck_assert_mem_eq(buf, fx.obj, OBJ_BYTES);
	free(buf);
	harness_sleep_ms(1200); /* still hot: the replica limit (2) holds */
	stat_replicas(c, "hot", 2, &o);
	store_client_close(c);
}
END_TEST

START_TEST(test_bad_writes_refused)
{
	const struct data_grant forged = {1, UINT64_MAX, 12345};
	store_client *c;
	struct store_object_info o;
	char err[512];
	uint64_t len;
	void *buf;
	int st;

	start_worker(0);
	c = client(NULL);
	put_obj(c, "k");
	stat_replicas(c, "k", 1, &o);
	st = store_data_write(o.replicas[0].endpoint, o.replicas[0].segment_id,
			      o.replicas[0].offset, "junk", 4, &forged, 2000,
			      err, sizeof(err));
	ck_assert_int_eq(st, -EACCES);
	ck_assert_msg(strstr(err, "write grant refused") != NULL, "%s", err);
	st = store_data_write(o.replicas[0].endpoint, o.replicas[0].segment_id,
			      (32u << 20) - 2, "junk", 4, &forged, 2000, err,
			      sizeof(err));
	ck_assert_int_eq(st, -ERANGE);
	st = store_data_write(o.replicas[0].endpoint, 999, 0, "junk", 4,
			      &forged, 2000, err, sizeof(err));
	ck_assert_int_eq(st, -ENOENT);
	ck_assert(store_client_get(c, "k", &buf, &len, NULL) == 0);
	ck_assert_mem_eq(buf, fx.obj, OBJ_BYTES); /* nothing was corrupted */
	free(buf);
	store_client_close(c);
}
END_TEST

START_TEST(test_killed_worker_dropped_after_ttl)
{
	store_client *c;
	uint64_t dead;
	size_t left;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	dead = proc_field(&fx.workers[1], "client_id");
	ck_assert_uint_eq(count_segments(c, 0), 2);
	proc_kill9(&fx.workers[1]);
	WAIT_UNTIL((left = count_segments(c, dead)) == 0); /* TTL 2 s */
	ck_assert_uint_eq(left, 0);
	ck_assert_uint_eq(count_segments(c, 0), 1);
	store_client_close(c);
}
END_TEST

/* The ready lines say what an operator needs: the master the address
 * its ports are bound to (SECURITY.md says it is said at start), the
 * worker how many segments it mounted and, named as ids, which (its
 * "segments=2" was a segment id). */
START_TEST(test_ready_lines_say_address_count_and_ids)
{
	char want[256];

	snprintf(want, sizeof(want),
		 "mcrepl-master ready rpc_address=127.0.0.1 rpc_port=%u "
		 "metrics_port=%llu mode=enforce",
		 fx.port,
		 (unsigned long long)proc_field(&fx.master, "metrics_port"));
	ck_assert_str_eq(fx.master.ready, want);
	start_worker_with(0, "--segments=2");
	snprintf(
	    want, sizeof(want),
	    "mcrepl-worker ready client_id=%llu data_port=%llu "
	    "segments=2 segment_ids=1,2 transport=tcp metrics_port=%llu",
	    (unsigned long long)proc_field(&fx.workers[0], "client_id"),
	    (unsigned long long)proc_field(&fx.workers[0], "data_port"),
	    (unsigned long long)proc_field(&fx.workers[0], "metrics_port"));
	ck_assert_str_eq(fx.workers[0].ready, want);
}
END_TEST

/* A master that cannot be reached is transient: the worker keeps
 * retrying (a supervisor must not see an exit), and a stop still exits
 * 0. */
START_TEST(test_lost_master_keeps_worker_retrying)
{
	char bin[512], master[80];
	const char *argv[] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
			      master, "--segment_size=1M", NULL};
	int status;
	pid_t pid;

	proc_stop(&fx.master); /* its port: nobody answers there */
	snprintf(master, sizeof(master), "--master=%s", fx.addr);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	harness_sleep_ms(2500); /* mounts retried at 1, 2 s */
	ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
	kill(pid, SIGTERM);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

START_TEST(test_sigterm_unmounts_and_exits_0)
{
	store_client *c;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	ck_assert_uint_eq(count_segments(c, 0), 2);
	ck_assert_int_eq(proc_stop(&fx.workers[0]), 0);
	ck_assert_uint_eq(count_segments(c, 0), 1); /* no TTL wait */
	store_client_close(c);
}
END_TEST

/* Graceful drain: SIGTERM of a worker first has the master copy
 * the objects only it holds to the other worker; it exits 0 once they are
 * readable there, and no object is lost (it used to unmount at once), nor
 * counted as lost: its replicas were served elsewhere as planned (the
 * master counted each in mcrepl_master_replicas_lost_total). */
START_TEST(test_sigterm_drains_objects_to_other_workers)
{
	store_client *c;
	char key[16], *page;
	uint64_t seg0 = 0;
	int on0 = 0;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	for (int i = 0; i < 12; i++) {
		struct store_object_info o;

		snprintf(key, sizeof(key), "d%d", i);
		put_obj(c, key);
		ck_assert_int_eq(store_client_stat(c, key, &o), 0);
		if (!strcmp(o.replicas[0].host_id, "host-a")) {
			on0++;
			seg0 = o.replicas[0].segment_id;
		}
	}
	ck_assert_int_gt(on0, 0);
	ck_assert_int_eq(proc_stop(&fx.workers[0]), 0);
	for (int i = 0; i < 12; i++) {
		void *buf = NULL;
		uint64_t len = 0;

		snprintf(key, sizeof(key), "d%d", i);
		ck_assert_msg(store_client_get(c, key, &buf, &len, NULL) == 0,
			      "%s: %s", key, store_client_error(c));
		ck_assert_uint_eq(len, OBJ_BYTES);
		ck_assert_int_eq(memcmp(buf, fx.obj, len), 0);
		free(buf);
	}
	/* the leaving segment's replicas are dropped over loop turns */
	for (struct test_wait w = test_wait_start();; free(page)) {
		page =
		    http_get((uint16_t)proc_field(&fx.master, "metrics_port"),
			     "/metrics");
		ck_assert_ptr_nonnull(page);
		if (metric_value(page, "mcrepl_master_segments_leaving") == 0 ||
		    !test_wait_more(&w))
			break;
	}
	ck_assert_int_eq(metric_value(page, "mcrepl_master_segments_leaving"),
			 0);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_objects_lost_total"),
			 0);
	ck_assert_int_eq(
	    metric_value(page, "mcrepl_master_replicas_lost_total"), 0);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_drain_copies_total"),
			 on0);
	ck_assert_int_ge(metric_value(page, "mcrepl_master_drains_total"), 1);
	free(page);
	ck_assert_uint_ne(seg0, 0);
	store_client_close(c);
}
END_TEST

/* Lifecycle item 1: readers holding GetReplicaList answers from before a
 * kill -9 of the master read them after the new master placed another
 * tenant's objects at the same offsets: every read is refused, none
 * returns a byte of another object. Since grants the worker
 * refuses them first: the old master's grants are signed with a secret
 * the new master's workers no longer hold (-EACCES); the stamp check
 * behind it (-ESTALE, check_stamp) stays for one-sided RDMA reads. */
START_TEST(test_lifecycle1_old_descriptors_after_master_restart_are_refused)
{
	McreplRpc__GetReplicaListResponse *old[8];
	store_client *c = client(NULL), *other;
	char port_flag[32], key[16];
	uint8_t *buf = malloc(OBJ_BYTES);
	struct store_object_info o;
	size_t n;

	ck_assert_ptr_nonnull(buf);
	start_worker(0);
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		put_obj(c, key);
		ck_assert_int_eq(store_client_get_list(c, key, &old[i]), 0);
		ck_assert_uint_eq(old[i]->replicas[0]->stamp_bytes,
				  STAMP_BYTES);
	}
	store_client_close(c);
	snprintf(port_flag, sizeof(port_flag), "--rpc_port=%u", fx.port);
	proc_kill9(&fx.master);
	start_master(port_flag);
	other = client(NULL);
	WAIT_UNTIL((n = count_segments(other, 0)) != 0); /* remounted */
	ck_assert_uint_eq(n, 1);
	for (size_t i = 0; i < OBJ_BYTES; i++)
		fx.obj[i] ^= 0x5a; /* the new objects hold other bytes */
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "n%d", i);
		put_obj(other, key);
	}
	stat_replicas(other, "n0", 1, &o);
	ck_assert_uint_eq(o.replicas[0].offset, old[0]->replicas[0]->offset);
	c = client(NULL);
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		ck_assert_int_eq(store_client_read_list(c, old[i], buf, NULL),
				 -EACCES);
		ck_assert_ptr_nonnull(
		    strstr(store_client_error(c), "read grant refused"));
		protobuf_c_message_free_unpacked(&old[i]->base, NULL);
	}
	ck_assert_uint_eq(store_client_stale_reads(c), 0);
	free(buf);
	store_client_close(c);
	store_client_close(other);
}
END_TEST

/* A second SIGTERM during the stop (as supervisors
 * repeat one) still unmounts before the worker exits. */
START_TEST(test_lifecycle7_second_sigterm_still_unmounts)
{
	store_client *c;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	ck_assert_uint_eq(count_segments(c, 0), 2);
	for (int round = 0; round < 3; round++) {
		kill(fx.workers[0].pid, SIGTERM);
		harness_sleep_ms(2);
		ck_assert_int_eq(proc_stop(&fx.workers[0]), 0); /* the 2nd */
		ck_assert_uint_eq(count_segments(c, 0), 1); /* no TTL wait */
		if (round < 2)
			start_worker(0);
	}
	store_client_close(c);
}
END_TEST

START_TEST(test_master_restart_remounts)
{
	store_client *c;
	char port_flag[32];
	struct store_object_info o;
	size_t n;

	start_worker(0);
	snprintf(port_flag, sizeof(port_flag), "--rpc_port=%u", fx.port);
	proc_stop(&fx.master);
	start_master(port_flag);
	c = client(NULL);
	WAIT_UNTIL((n = count_segments(c, 0)) != 0); /* remounted */
	ck_assert_uint_eq(n, 1);
	put_obj(c, "after-restart");
	stat_replicas(c, "after-restart", 1, &o);
	store_client_close(c);
}
END_TEST

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

static long long worker_metric(int i, const char *name)
{
	char *page = http_get(
	    (uint16_t)proc_field(&fx.workers[i], "metrics_port"), "/metrics");
	long long v = page ? metric_value(strstr(page, "\r\n\r\n"), name) : -1;

	free(page);
	return v;
}

static void get_obj(store_client *c, const char *key)
{
	uint64_t len = 0;
	void *buf = NULL;

	ck_assert_msg(store_client_get(c, key, &buf, &len, NULL) == 0,
		      "get: %s", store_client_error(c));
	ck_assert_uint_eq(len, OBJ_BYTES);
	ck_assert_int_eq(memcmp(buf, fx.obj, OBJ_BYTES), 0);
	free(buf);
}

static void assert_data_stats(store_client *c, uint64_t connects,
			      uint64_t reuses, uint64_t retries, size_t open)
{
	struct store_data_stats ds;

	store_client_data_stats(c, &ds);
	ck_assert_uint_eq(ds.connects, connects);
	ck_assert_uint_eq(ds.reuses, reuses);
	ck_assert_uint_eq(ds.retries, retries);
	ck_assert_uint_eq(ds.open, open);
}

/* The put's write and 40 gets travel on one data connection, which
 * store_client_close() closes. */
START_TEST(test_gets_reuse_one_data_connection)
{
	store_client *c;
	long long open;

	start_worker(0);
	c = client(NULL);
	put_obj(c, "k");
	for (int i = 0; i < 40; i++)
		get_obj(c, "k");
	assert_data_stats(c, 1, 40, 0, 1);
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_data_connections_accepted_total"),
	    1);
	ck_assert_int_eq(worker_metric(0, "mcrepl_worker_data_connections"), 1);
	store_client_close(c);
	WAIT_UNTIL(
	    (open = worker_metric(0, "mcrepl_worker_data_connections")) == 0);
	ck_assert_int_eq(open, 0);
}
END_TEST

/* one_shot_data (the comparison baseline): a connection per transfer,
 * none kept, no pool counters. */
START_TEST(test_one_shot_client_keeps_no_data_connection)
{
	store_client *c;

	start_worker(0);
	c = client_with(NULL, true);
	put_obj(c, "k");
	for (int i = 0; i < 5; i++)
		get_obj(c, "k");
	assert_data_stats(c, 0, 0, 0, 0);
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_data_connections_accepted_total"),
	    6);
	store_client_close(c);
}
END_TEST

/* The worker closes an idle data connection; the client notices before
 * its next request and reconnects. */
START_TEST(test_idle_closed_data_connection_is_survived)
{
	store_client *c;

	start_worker_with(0, "--data_idle_timeout_ms=300");
	c = client(NULL);
	put_obj(c, "k");
	get_obj(c, "k");
	WAIT_UNTIL(worker_metric(
		       0, "mcrepl_worker_data_connections_idle_closed_total") ==
		   1);
	ck_assert_int_eq(
	    worker_metric(0,
			  "mcrepl_worker_data_connections_idle_closed_total"),
	    1);
	ck_assert_int_eq(worker_metric(0, "mcrepl_worker_data_connections"), 0);
	get_obj(c, "k");
	get_obj(c, "k");
	assert_data_stats(c, 2, 2, 0, 1);
	ck_assert_int_eq(
	    worker_metric(0, "mcrepl_worker_data_connections_accepted_total"),
	    2);
	store_client_close(c);
}
END_TEST

/* n GetReplicaList of key: the master counts heat per list, so n of them
 * fall within the 1 s window (n gets of 24 MiB with their CRC take longer
 * than that under valgrind, and the key would never be hot). */
static void heat(store_client *c, const char *key, int n)
{
	for (int i = 0; i < n; i++) {
		McreplRpc__GetReplicaListResponse *r = NULL;

		ck_assert_msg(store_client_get_list(c, key, &r) == 0, "%s",
			      store_client_error(c));
		protobuf_c_message_free_unpacked(&r->base, NULL);
	}
}

/* Reads key (heat()) until it has `want` readable replicas: the key stays
 * hot while an admission waits for a cooldown or a copy is slow. */
static void heat_until_replicas(store_client *c, const char *key, size_t want,
				struct store_object_info *o)
{
	struct test_wait w = test_wait_start();

	do
		heat(c, key, 8);
	while (stat_n(c, key, o) < want && test_wait_more(&w));
	ck_assert_uint_eq(o->n_replicas, want);
}

/* 24 MiB object on its source; the target frozen; reads make it hot until
 * the source has started the copy. Returns the source worker index. */
static int stall_copy(store_client *c, const char *key, int target_hint)
{
	static uint8_t big[24u << 20];
	struct store_object_info o;
	int src, dst;

	memset(big, 0x3c, sizeof(big));
	ck_assert_msg(store_client_put(c, key, big, sizeof(big)) == 0, "%s",
		      store_client_error(c));
	stat_replicas(c, key, 1, &o);
	src = (int)(o.replicas[0].host_id[5] - 'a');
	dst = target_hint >= 0 ? target_hint : 1 - src;
	kill(fx.workers[dst].pid, SIGSTOP);
	/* the copy needs an admission pass and the source's task fetch */
	for (struct test_wait w = test_wait_start();
	     worker_metric(src, "mcrepl_worker_copies_started_total") != 1 &&
	     test_wait_more(&w);)
		heat(c, key, 8);
	ck_assert_int_eq(
	    worker_metric(src, "mcrepl_worker_copies_started_total"), 1);
	/* the target region is reserved, PROCESSING: never offered */
	ck_assert_int_eq(master_metric(c, "mcrepl_master_used_bytes"),
			 2 * ((long long)sizeof(big) + STAMP_BYTES));
	stat_replicas(c, key, 1, &o);
	ck_assert(!o.replicas[0].dynamic);
	return src;
}

/* A copy stuck on a frozen target: SIGTERM revokes it, unmounts, exits 0. */
/* covers: R-DEC-9 R-OBS-3 */
START_TEST(test_sigterm_revokes_copy_in_flight)
{
	store_client *c;
	int src, dst;

	start_worker_with(0, "--poll_interval_ms=10");
	start_worker_with(1, "--poll_interval_ms=10");
	c = client(NULL);
	src = stall_copy(c, "big", -1);
	dst = 1 - src;
	ck_assert_int_eq(
	    master_metric(c, "mcrepl_dynamic_copy_tasks_revoked_total"), 0);
	ck_assert_int_eq(proc_stop(&fx.workers[src]), 0);
	ck_assert_int_eq(
	    master_metric(c, "mcrepl_dynamic_copy_tasks_revoked_total"), 1);
	ck_assert_int_eq(master_metric(c, "mcrepl_dynamic_copies_inflight"), 0);
	kill(fx.workers[dst].pid, SIGCONT);
	store_client_close(c);
}
END_TEST

/* Runs mcrepl-worker with one extra flag; its exit status, and its stderr
 * in err. */
static int worker_exit(const char *flag, char *err, size_t errlen)
{
	char bin[512], master[80];
	const char *argv[] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
			      master, "--segment_size=1M", flag, NULL};
	int fds[2], status;
	size_t len;
	ssize_t n;
	pid_t pid;

	snprintf(master, sizeof(master), "--master=%s", fx.addr);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(fds[1]);
	len = 0;
	while (len + 1 < errlen &&
	       (n = read(fds[0], err + len, errlen - 1 - len)) > 0)
		len += (size_t)n;
	err[len] = '\0';
	close(fds[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool has_rdma_device(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	bool any = false;

	while (d && (e = readdir(d)) != NULL)
		any |= e->d_name[0] != '.';
	if (d)
		closedir(d);
	return any;
}

START_TEST(test_worker_flags)
{
	char out[2048], busy[64];

	ck_assert_int_eq(worker_exit("--help", out, sizeof(out)), 0);
	ck_assert_ptr_nonnull(strstr(out, "--segment_size"));
	ck_assert_int_eq(worker_exit("--segment_size=12Q", out, sizeof(out)),
			 2);
	ck_assert_ptr_nonnull(strstr(out, "--segment_size"));
	ck_assert_int_eq(
	    worker_exit("--transport=carrier-pigeon", out, sizeof(out)), 2);
	snprintf(busy, sizeof(busy), "--metrics_port=%llu",
		 (unsigned long long)proc_field(&fx.master, "metrics_port"));
	ck_assert_int_eq(worker_exit(busy, out, sizeof(out)), 1);
	ck_assert_msg(strstr(out, "cannot serve /metrics on 127.0.0.1:") &&
			  strstr(out, ": Address already in use (set "
				      "--metrics_port to a free port"),
		      "%s", out);
	/* auto says why it chose tcp in one line, with no advice to pass
	 * --transport=tcp (it just did) */
	if (!has_rdma_device())
		ck_assert_msg(
		    strstr(out, "mcrepl-worker: info: transport tcp (auto: "
				"no usable RDMA: ") &&
			!strstr(out, "use --transport"),
		    "%s", out);
	ck_assert_int_eq(worker_exit("--domain=a b", out, sizeof(out)), 2);
	ck_assert_ptr_nonnull(strstr(out, "for --domain"));
	ck_assert_int_eq(worker_exit("--bogus=1", out, sizeof(out)), 2);
	ck_assert_ptr_nonnull(strstr(out, "unknown flag --bogus"));
	if (!has_rdma_device()) {
		ck_assert_int_eq(
		    worker_exit("--transport=rdma", out, sizeof(out)), 78);
		ck_assert_msg(strstr(out, "rdma") != NULL, "%s", out);
	}
	/* huge pages are optional: without them it falls back and runs */
	start_worker_with(0, "--hugepages");
}
END_TEST

/* True when page has a sample of metric name (followed by ' ' or '{'). */
static bool has_metric(const char *page, const char *name)
{
	size_t n = strlen(name);

	for (const char *at = page; (at = strstr(at, name)) != NULL; at += n)
		if ((at == page || at[-1] == '\n') &&
		    (at[n] == ' ' || at[n] == '{'))
			return true;
	return false;
}

/* The worker's /health: JSON like the master's, 200 "ok" while
 * its segments are mounted and the master answers; 503 "unavailable",
 * master_reachable false, once the master is gone. */
START_TEST(test_worker_health)
{
	uint16_t port;
	char *h;
	bool down = false;

	start_worker(0);
	port = (uint16_t)proc_field(&fx.workers[0], "metrics_port");
	h = http_get(port, "/health");
	ck_assert_ptr_nonnull(h);
	ck_assert_msg(strncmp(h + 8, " 200 ", 5) == 0, "%s", h);
	ck_assert_msg(strstr(h, "{\"status\":\"ok\",\"role\":\"worker\",") &&
			  strstr(h, "\"host_id\":\"host-a\",\"segments\":1,"
				    "\"mounted_segments\":1,") &&
			  strstr(h, "\"master_reachable\":true,"),
		      "%s", h);
	free(h);
	ck_assert_int_eq(proc_stop(&fx.master), 0);
	for (struct test_wait w = test_wait_start();
	     !down && test_wait_more(&w);) {
		h = http_get(port, "/health");
		down = h && strstr(h, "\"master_reachable\":false");
		if (down)
			ck_assert_msg(
			    strncmp(h + 8, " 503 ", 5) == 0 &&
				strstr(h, "{\"status\":\"unavailable\","),
			    "%s", h);
		free(h);
	}
	ck_assert(down);
}
END_TEST

/* promtool check metrics (Debian: prometheus) passes on the master's and
 * the worker's /metrics: every metric has HELP and TYPE. Skipped, with a
 * line saying so, without promtool. */
static void promtool_check(const char *page, const char *who)
{
	char path[] = "/tmp/mcrepl-prom-XXXXXX", cmd[300], out[4096] = "";
	const char *body = strstr(page, "\r\n\r\n");
	int fd = mkstemp(path);
	FILE *p;
	size_t n;
	int rc;

	ck_assert_int_ge(fd, 0);
	body = body ? body + 4 : page;
	ck_assert_int_eq(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	unlink(path);
	ck_assert_msg(rc == 0, "promtool on the %s's /metrics: %s", who, out);
}

START_TEST(test_metrics_pass_promtool)
{
	char *master, *worker;

	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		fprintf(stderr, "check_worker: no promtool (Debian: apt-get "
				"install prometheus): metrics lint skipped\n");
		return;
	}
	start_worker(0);
	master = http_get((uint16_t)proc_field(&fx.master, "metrics_port"),
			  "/metrics");
	worker = http_get((uint16_t)proc_field(&fx.workers[0], "metrics_port"),
			  "/metrics");
	ck_assert_ptr_nonnull(master);
	ck_assert_ptr_nonnull(worker);
	promtool_check(master, "master");
	promtool_check(worker, "worker");
	free(master);
	free(worker);
}
END_TEST

/* Every metric the Grafana dashboard queries exists on a running master
 * or worker. */
START_TEST(test_grafana_dashboard_names_exist)
{
	static char json[64 * 1024];
	char name[128], *master, *worker;
	store_client *c;
	FILE *f = fopen("contrib/grafana/mcrepl.json", "r");
	size_t len, checked = 0;

	ck_assert_ptr_nonnull(f);
	len = fread(json, 1, sizeof(json) - 1, f);
	fclose(f);
	json[len] = '\0';
	start_worker(0);
	c = client(NULL);
	ck_assert_int_eq(store_client_stats(c, NULL, NULL, &master), 0);
	worker = http_get((uint16_t)proc_field(&fx.workers[0], "metrics_port"),
			  "/metrics");
	ck_assert_ptr_nonnull(worker);
	for (const char *at = json; (at = strstr(at, "mcrepl_")) != NULL;) {
		size_t n = strspn(at, "abcdefghijklmnopqrstuvwxyz_");

		snprintf(name, sizeof(name), "%.*s", (int)n, at);
		ck_assert_msg(has_metric(master, name) ||
				  has_metric(strstr(worker, "\r\n\r\n"), name),
			      "dashboard metric %s is not served", name);
		checked++;
		at += n;
	}
	ck_assert_uint_ge(checked, 30);
	free(master);
	free(worker);
	store_client_close(c);
}
END_TEST

/* ---- mcrepl-cli ------------------------------------------------------------- */

/* Runs mcrepl-cli with args (NULL-terminated), stdout to out_path (or
 * /dev/null); returns its exit status. */
static int cli(const char *out_path, const char *const *args)
{
	char bin[512];
	const char *argv[20];
	size_t n = 0;
	pid_t pid;
	int status, fd;

	argv[n++] = harness_bin("mcrepl-cli", bin, sizeof(bin));
	argv[n++] = "--master";
	argv[n++] = fx.addr;
	argv[n++] = "--principal";
	argv[n++] = "admin";
	argv[n++] = "--secret_file";
	argv[n++] = fx.auth.secret_flag[1] + strlen("--secret_file=");
	for (size_t i = 0; args[i] && n < 19; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		fd = open(out_path ? out_path : "/dev/null",
			  O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, STDOUT_FILENO);
		fd = open("/dev/null", O_WRONLY);
		dup2(fd, STDERR_FILENO);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs mcrepl-cli with args, as admin when auth; its exit status, its
 * stderr (one line, the newline cut) in err. */
static int cli_run(bool auth, const char *const *args, char *err, size_t cap)
{
	char path[] = "/tmp/mcrepl-cli-err-XXXXXX", bin[512];
	const char *argv[20];
	size_t n = 0;
	int status, fd = mkstemp(path);
	ssize_t len;
	pid_t pid;

	ck_assert_int_ge(fd, 0);
	argv[n++] = harness_bin("mcrepl-cli", bin, sizeof(bin));
	argv[n++] = "--master";
	argv[n++] = fx.addr;
	if (auth) {
		argv[n++] = "--principal";
		argv[n++] = "admin";
		argv[n++] = "--secret_file";
		argv[n++] = fx.auth.secret_flag[1] + strlen("--secret_file=");
	}
	for (size_t i = 0; args[i] && n < 19; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		dup2(fd, STDERR_FILENO);
		close(STDOUT_FILENO);
		open("/dev/null", O_WRONLY);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	ck_assert_int_gt(pid, 0);
	waitpid(pid, &status, 0);
	len = pread(fd, err, cap - 1, 0);
	err[len > 0 ? len : 0] = '\0';
	err[strcspn(err, "\n")] = '\0';
	close(fd);
	unlink(path);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int cli_msg(const char *const *args, char *err, size_t cap)
{
	return cli_run(true, args, err, cap);
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static size_t read_file(const char *path, void *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, cap, f);
	fclose(f);
	return n;
}

START_TEST(test_cli)
{
	char dir[] = "/tmp/mcrepl-cli-XXXXXX", in[64], out[64], msg[512];
	static uint8_t back[OBJ_BYTES + 1];

	start_worker(0);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(out, sizeof(out), "%s/out", dir);
	write_file(in, fx.obj, OBJ_BYTES);
	ck_assert_int_eq(cli(NULL, (const char *[]){"put", "k", in, NULL}), 0);
	ck_assert_int_eq(cli(NULL, (const char *[]){"get", "k", out, NULL}), 0);
	ck_assert_uint_eq(read_file(out, back, sizeof(back)), OBJ_BYTES);
	ck_assert_mem_eq(back, fx.obj, OBJ_BYTES);
	ck_assert_int_eq(cli(out, (const char *[]){"get", "k", NULL}), 0);
	ck_assert_uint_eq(read_file(out, back, sizeof(back)), OBJ_BYTES);
	ck_assert_int_eq(cli(NULL, (const char *[]){"exist", "k", NULL}), 0);
	ck_assert_int_eq(cli(NULL, (const char *[]){"stat", "k", NULL}), 0);
	ck_assert_int_eq(cli(NULL, (const char *[]){"segments", NULL}), 0);
	ck_assert_int_eq(cli(NULL, (const char *[]){"metrics", NULL}), 0);
	ck_assert_int_eq(
	    cli_msg((const char *[]){"put", "k", in, NULL}, msg, sizeof(msg)),
	    1);
	ck_assert_str_eq(msg, "mcrepl-cli: put: key 'k' already exists "
			      "(objects are immutable: remove it first, or "
			      "use another key)");
	ck_assert_int_eq(cli(NULL, (const char *[]){"exist", "nope", NULL}), 1);
	ck_assert_int_eq(
	    cli_msg((const char *[]){"get", "nope", NULL}, msg, sizeof(msg)),
	    1);
	ck_assert_str_eq(msg, "mcrepl-cli: get: key 'nope' not found");
	ck_assert_int_eq(
	    cli_msg((const char *[]){"--replicas", "3", "put", "k3", in, NULL},
		    msg, sizeof(msg)),
	    1);
	ck_assert_str_eq(msg, "mcrepl-cli: put: 3 replicas need 3 segments, "
			      "the master has 1: start more workers (or give "
			      "them more --segments), or put fewer replicas");
	ck_assert_int_eq(
	    cli(NULL, (const char *[]){"put", "x", "/nonexistent", NULL}), 1);
	ck_assert_int_eq(cli(NULL, (const char *[]){"put", "", in, NULL}), 2);
	ck_assert_int_eq(cli(NULL, (const char *[]){"get", NULL}), 2);
	ck_assert_int_eq(cli(NULL, (const char *[]){"frob", "k", NULL}), 2);
	ck_assert_int_eq(
	    cli(NULL, (const char *[]){"--replicas", "0", "rm", "k", NULL}), 2);
	unlink(in);
	unlink(out);
	rmdir(dir);
}
END_TEST

/* What a person reads when the cli is used wrong: an empty tenant is
 * refused (it was accepted, as no tenant); --master at the /metrics port
 * gets a hint, said once (it said "malformed or unexpected reply" twice);
 * a refusal names the method, not a protobuf type
 * ("mcrepl_rpc.ExistRequest: key is 5000 bytes ..."). */
START_TEST(test_cli_messages_a_person_reads)
{
	char metrics[64], msg[512], key[1100];

	ck_assert_int_eq(
	    cli_msg((const char *[]){"--tenant", "", "exist", "k", NULL}, msg,
		    sizeof(msg)),
	    2);
	ck_assert_str_eq(msg, "mcrepl-cli: command line: invalid value '' for "
			      "--tenant (the tenant whose keys these are); "
			      "allowed: 1 or more characters");
	/* without a credential the first frame is the call (an auth hello
	 * holds no newline an HTTP server would answer) */
	snprintf(metrics, sizeof(metrics), "127.0.0.1:%llu",
		 (unsigned long long)proc_field(&fx.master, "metrics_port"));
	ck_assert_int_eq(
	    cli_run(false,
		    (const char *[]){"--master", metrics, "exist", "k", NULL},
		    msg, sizeof(msg)),
	    1);
	ck_assert_str_eq(msg, "mcrepl-cli: exist: master Exist failed: the "
			      "address answers HTTP, not RPC (a /metrics "
			      "port?): give the master's rpc_port (its ready "
			      "line says it; 50051 by default)");
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	ck_assert_int_eq(
	    cli_msg((const char *[]){"exist", key, NULL}, msg, sizeof(msg)), 1);
	ck_assert_str_eq(msg, "mcrepl-cli: exist: master Exist failed: Exist: "
			      "key is 1099 bytes, above max_key_bytes=1024 "
			      "(INVALID_ARGUMENT)");
}
END_TEST

/* mcrepl-cli drain HOST (admin): the objects only HOST holds get a
 * replica on another host; the worker keeps running (its SIGTERM then
 * finds nothing left to move). */
START_TEST(test_cli_drain_host)
{
	store_client *c;
	char key[16], *page;
	int on_b = 0;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	for (int i = 0; i < 12; i++) {
		struct store_object_info o;

		snprintf(key, sizeof(key), "h%d", i);
		put_obj(c, key);
		ck_assert_int_eq(store_client_stat(c, key, &o), 0);
		on_b += !strcmp(o.replicas[0].host_id, "host-b");
	}
	ck_assert_int_gt(on_b, 0);
	ck_assert_int_eq(cli(NULL, (const char *[]){"drain", "host-b", NULL}),
			 0);
	for (int i = 0; i < 12; i++) {
		struct store_object_info o;
		bool off_b = false;

		snprintf(key, sizeof(key), "h%d", i);
		ck_assert_int_eq(store_client_stat(c, key, &o), 0);
		for (size_t k = 0; k < o.n_replicas; k++)
			off_b |= strcmp(o.replicas[k].host_id, "host-b") != 0;
		ck_assert_msg(off_b, "%s only on host-b", key);
	}
	page = http_get((uint16_t)proc_field(&fx.master, "metrics_port"),
			"/metrics");
	ck_assert_ptr_nonnull(page);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_drain_copies_total"),
			 on_b);
	free(page);
	ck_assert_int_eq(cli(NULL, (const char *[]){"drain", "nohost", NULL}),
			 1);
	store_client_close(c);
}
END_TEST

/* ---- faults (issue: worker killed mid-copy, stale tasks) ---------------- */

static const char *const fault_flags[] = {
    "--dynamic_replication_lease_ttl_seconds=1.5",
    "--dynamic_replication_action_cooldown_seconds=1",
    "--dynamic_replication_recreate_cooldown_seconds=1",
    "--default_kv_lease_ttl=50",
    "--sweep_interval_ms=20",
    NULL};

static void fault_setup(void)
{
	extra_master_flags = fault_flags;
	setup();
}

/* kill -9 the source mid-copy: readers only ever see the COMPLETE
 * replica; once the source is gone the key reports not found cleanly; the
 * lease expires, the pending state and the reserved target are cleared. */
/* covers: T-20 R-OBS-3 */
START_TEST(test_kill9_source_mid_copy_never_serves_a_processing_replica)
{
	store_client *c;
	struct store_object_info o;
	bool exists = true;
	int src;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	src = stall_copy(c, "big", -1);
	proc_kill9(&fx.workers[src]);
	/* until the master drops the dead source (client TTL 2 s) */
	for (struct test_wait w = test_wait_start();;) {
		int st = store_client_stat(c, "big", &o);

		if (st != 0) {
			ck_assert_int_eq(st, MCREPL_RPC__CODE__NOT_FOUND);
			break;
		}
		/* still the source's COMPLETE replica only */
		ck_assert_uint_eq(o.n_replicas, 1);
		ck_assert(o.replicas[0].complete && !o.replicas[0].dynamic);
		ck_assert_msg(test_wait_more(&w), "the dead source is kept");
	}
	/* the lease (1.5 s) expires */
	WAIT_UNTIL(master_metric(c, "mcrepl_dynamic_copies_inflight") == 0 &&
		   master_metric(c, "mcrepl_dynamic_copy_tasks_failed_total") ==
		       1);
	ck_assert_int_eq(master_metric(c, "mcrepl_dynamic_copies_inflight"), 0);
	ck_assert_int_eq(
	    master_metric(c, "mcrepl_dynamic_copy_tasks_failed_total"), 1);
	ck_assert_int_eq(store_client_exist(c, "big", &exists), 0);
	ck_assert(!exists);
	kill(fx.workers[1 - src].pid, SIGCONT);
	/* the target's quarantined region is freed */
	WAIT_UNTIL(master_metric(c, "mcrepl_master_used_bytes") == 0);
	ck_assert_int_eq(master_metric(c, "mcrepl_master_used_bytes"), 0);
	store_client_close(c);
}
END_TEST

/* kill -9 the target mid-copy: the source revokes, the quota comes back,
 * and after the cooldown the key is admitted again and copied elsewhere. */
/* covers: R-GOAL-4 R-DEC-9 */
START_TEST(test_kill_target_mid_copy_returns_quota_and_readmits_after_cooldown)
{
	store_client *c;
	struct store_object_info o;
	int src, dst;

	start_worker(0);
	start_worker(1);
	c = client(NULL);
	src = stall_copy(c, "big", -1);
	dst = 1 - src;
	start_worker_with(2, "--poll_interval_ms=10");
	proc_kill9(&fx.workers[dst]);
	WAIT_UNTIL(master_metric(c, "mcrepl_dynamic_copies_inflight") == 0 &&
		   count_segments(c, 0) == 2);
	ck_assert_int_eq(master_metric(c, "mcrepl_dynamic_copies_inflight"), 0);
	ck_assert_uint_eq(count_segments(c, 0), 2); /* the target is gone */
	/* its quarantined region (lease TTL) is freed */
	WAIT_UNTIL(master_metric(c, "mcrepl_master_used_bytes") ==
		   (24 << 20) + STAMP_BYTES);
	ck_assert_int_eq(master_metric(c, "mcrepl_master_used_bytes"),
			 (24 << 20) + STAMP_BYTES);
	/* hot until copied again: admitted once the cooldown (1 s) is over;
	 * the copy of 24 MiB can take seconds on a loaded machine (it took
	 * longer than the 8 s this test once gave it) */
	heat_until_replicas(c, "big", 2, &o);
	ck_assert(o.replicas[0].dynamic || o.replicas[1].dynamic);
	ck_assert(strcmp(o.replicas[0].host_id, "host-c") == 0 ||
		  strcmp(o.replicas[1].host_id, "host-c") == 0);
	store_client_close(c);
}
END_TEST

/* PutStart + PutEnd over RPC only (the test plays a writer whose bytes
 * are not needed). */
static void reput_metadata_only(const char *key)
{
	rpc_client *rc = harness_client_as(fx.port, &fx.admin);
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutStartResponse *r;
	ProtobufCMessage *e;
	char k[64], t[] = "t1";

	snprintf(k, sizeof(k), "%s", key);
	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = t;
	ps.key = k;
	ps.size = OBJ_BYTES;
	r = (McreplRpc__PutStartResponse *)harness_call(rc, "PutStart",
							&ps.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = t;
	pe.key = k;
	pe.version = r->version;
	protobuf_c_message_free_unpacked(&r->base, NULL);
	e = harness_call(rc, "PutEnd", &pe.base, NULL);
	ck_assert_ptr_nonnull(e);
	protobuf_c_message_free_unpacked(e, NULL);
	rpc_client_close(rc);
}

/* n GetReplicaList calls for key over RPC only: reads for heat that touch
 * no data port. */
static void read_metadata_only(const char *key, int n)
{
	rpc_client *rc = harness_client_as(fx.port, &fx.admin);
	McreplRpc__GetReplicaListRequest g;
	char k[64], t[] = "t1";

	snprintf(k, sizeof(k), "%s", key);
	mcrepl_rpc__get_replica_list_request__init(&g);
	g.tenant = t;
	g.key = k;
	for (int i = 0; i < n; i++) {
		ProtobufCMessage *r =
		    harness_call(rc, "GetReplicaList", &g.base, NULL);

		ck_assert_ptr_nonnull(r);
		protobuf_c_message_free_unpacked(r, NULL);
	}
	rpc_client_close(rc);
}

/* Remove + put again while the source is frozen with a queued dynamic
 * task: the stale task's start is refused by the version fence and no
 * replica of the old version ever becomes readable. */
/* covers: T-21 R-LEASE-5 R-OBS-3 */
START_TEST(test_stale_task_after_remove_and_reput_is_fenced)
{
	store_client *c;
	struct store_object_info o;
	int src;

	start_worker_with(0, "--poll_interval_ms=10");
	start_worker_with(1, "--poll_interval_ms=10");
	c = client(NULL);
	put_obj(c, "k");
	stat_replicas(c, "k", 1, &o);
	src = (int)(o.replicas[0].host_id[5] - 'a');
	kill(fx.workers[src].pid, SIGSTOP); /* holds its task back */
	read_metadata_only("k", 6);
	WAIT_UNTIL(
	    master_metric(c, "mcrepl_dynamic_copy_tasks_created_total") == 1);
	ck_assert_int_eq(master_metric(c, "mcrepl_dynamic_copy_tasks_created_"
					  "total"),
			 1);
	harness_sleep_ms(100); /* at least: the read lease (50 ms) is over */
	ck_assert_int_eq(store_client_remove(c, "k"), 0);
	reput_metadata_only("k"); /* its segment is frozen: no data write */
	kill(fx.workers[src].pid, SIGCONT);
	WAIT_UNTIL(master_metric(c, "mcrepl_dynamic_copy_tasks_failed_total") ==
		   1);
	ck_assert_int_eq(master_metric(c, "mcrepl_dynamic_copy_tasks_completed_"
					  "total"),
			 0);
	ck_assert_int_eq(master_metric(c, "mcrepl_dynamic_copy_tasks_failed_"
					  "total"),
			 1);
	stat_replicas(c, "k", 1, &o);
	ck_assert(!o.replicas[0].dynamic);
	store_client_close(c);
}
END_TEST

Suite *make_worker_suite(void)
{
	Suite *s = suite_create("worker");
	TCase *tc = tcase_create("daemons");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hot_key_gets_one_dynamic_replica);
	tcase_add_test(tc, test_bad_writes_refused);
	tcase_add_test(tc, test_killed_worker_dropped_after_ttl);
	tcase_add_test(tc, test_ready_lines_say_address_count_and_ids);
	tcase_add_test(tc, test_lost_master_keeps_worker_retrying);
	tcase_add_test(tc, test_sigterm_unmounts_and_exits_0);
	tcase_add_test(tc, test_sigterm_drains_objects_to_other_workers);
	tcase_add_test(tc, test_lifecycle7_second_sigterm_still_unmounts);
	tcase_add_test(tc, test_master_restart_remounts);
	tcase_add_test(
	    tc,
	    test_lifecycle1_old_descriptors_after_master_restart_are_refused);
	tcase_add_test(tc, test_cli);
	tcase_add_test(tc, test_cli_messages_a_person_reads);
	tcase_add_test(tc, test_cli_drain_host);
	tcase_add_test(tc, test_sigterm_revokes_copy_in_flight);
	tcase_add_test(tc, test_worker_flags);
	tcase_add_test(tc, test_grafana_dashboard_names_exist);
	tcase_add_test(tc, test_worker_health);
	tcase_add_test(tc, test_metrics_pass_promtool);
	tcase_add_test(tc, test_gets_reuse_one_data_connection);
	tcase_add_test(tc, test_one_shot_client_keeps_no_data_connection);
	tcase_add_test(tc, test_idle_closed_data_connection_is_survived);
	suite_add_tcase(s, tc);
	tc = tcase_create("faults");
	tcase_add_checked_fixture(tc, fault_setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(
	    tc, test_kill9_source_mid_copy_never_serves_a_processing_replica);
	tcase_add_test(
	    tc,
	    test_kill_target_mid_copy_returns_quota_and_readmits_after_cooldown);
	tcase_add_test(tc, test_stale_task_after_remove_and_reput_is_fenced);
	suite_add_tcase(s, tc);
	return s;
}
