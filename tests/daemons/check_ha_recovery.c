/*
 * Recovery answers only what it knows (docs/HA.md): with the
 * real binaries, a throw-away etcd (tools/common/etcd_proc.h), masters
 * campaigning with the default 3 s lease, two workers and a store client
 * finding the leader in etcd. Skipped, with one line saying so, without
 * the etcd binary (Debian: etcd-server).
 *
 * Named tests: a Remove while the new leader recovers is answered
 * "recovering" (the store client asks again until recovery ends) and the
 * key does not come back; a key removed in this term is not recreated by
 * a worker that re-mounts and re-registers its replica (the refusal
 * counted in /metrics).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etcd_proc.h"
#include "harness.h"
#include "store_client.h"
#include "wait.h"

Suite *make_ha_recovery_suite(void);

struct recfx {
	struct etcd_proc etcd;
	struct proc m[2], w[2];
	int n_m, n_w;
	char ep_flag[300];
};

static struct recfx fx;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static bool skip(void)
{
	if (etcd_proc_available())
		return false;
	fprintf(stderr, "check_ha_recovery: no etcd binary (Debian: "
			"apt-get install etcd-server): test skipped\n");
	return true;
}

/* A recovery window of 4 s: long enough that the first request after
 * the new leader says so on /health falls inside it on a loaded
 * machine. A worker silent for 4 s is forgotten (--client_ttl). */
static void start_master(int i)
{
	const char *flags[] = {fx.ep_flag,
			       "--ha_lease_ttl_ms=3000",
			       "--ha_poll_ms=100",
			       "--ha_recovery_ms=4000",
			       "--client_ttl=4",
			       "--rpc_address=127.0.0.1",
			       NULL};

	ck_assert_int_eq(master_start(&fx.m[i], flags), 0);
}

static void start_worker(int i)
{
	char bin[512], host[32];
	char *argv[] = {
	    bin,  mut("--segment_size=32M"),	fx.ep_flag,
	    host, mut("--poll_interval_ms=20"), mut("--metrics_port=0"),
	    NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(host, sizeof(host), "--host_id=rec-%c", 'a' + i);
	ck_assert_int_eq(
	    proc_start(&fx.w[i], argv, "mcrepl-worker ready", test_hang_ms()),
	    0);
}

static uint16_t metrics_port(int i)
{
	return (uint16_t)proc_field(&fx.m[i], "metrics_port");
}

static uint16_t rpc_port(int i)
{
	return (uint16_t)proc_field(&fx.m[i], "rpc_port");
}

static bool leads(int i)
{
	char *h = http_get(metrics_port(i), "/health");
	bool yes = h && strstr(h, "\"role\":\"leader\"");

	free(h);
	return yes;
}

/* The master other than `not` that leads (polling /health), or -1. */
static int wait_leader(int not )
{
	struct test_wait w = test_wait_start();

	do {
		for (int i = 0; i < fx.n_m; i++)
			if (i != not &&fx.m[i].pid > 0 && leads(i))
				return i;
	} while (test_wait_more(&w));
	return -1;
}

static long long metric(int i, const char *name)
{
	char *page = http_get(metrics_port(i), "/metrics");
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
}

static long long worker_metric(int i, const char *name)
{
	char *page = http_get((uint16_t)proc_field(&fx.w[i], "metrics_port"),
			      "/metrics");
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
}

/* masters (the first leading), two workers, one etcd member, and a
 * store client putting two replicas that finds the leader in etcd. */
static store_client *fx_start(int masters)
{
	struct store_client_config cfg;
	store_client *sc = NULL;
	char ep[300], err[256];

	memset(&fx, 0, sizeof(fx));
	ck_assert_int_eq(etcd_proc_start(&fx.etcd, 1), 0);
	snprintf(fx.ep_flag, sizeof(fx.ep_flag), "--etcd_endpoints=%s",
		 fx.etcd.endpoints);
	for (fx.n_m = 0; fx.n_m < masters; fx.n_m++) {
		start_master(fx.n_m);
		if (fx.n_m == 0) /* the first one leads */
			WAIT_UNTIL(leads(0));
	}
	for (fx.n_w = 0; fx.n_w < 2; fx.n_w++)
		start_worker(fx.n_w);
	WAIT_UNTIL(metric(0, "mcrepl_master_segments") == 2);
	store_client_config_init(&cfg);
	cfg.replicas = 2;
	snprintf(ep, sizeof(ep), "etcd://%s", fx.etcd.endpoints);
	ck_assert_msg(
	    store_client_open(&sc, ep, NULL, &cfg, err, sizeof(err)) == 0, "%s",
	    err);
	return sc;
}

static void fx_stop(store_client *sc)
{
	store_client_close(sc);
	for (int i = 0; i < fx.n_w; i++)
		if (fx.w[i].pid > 0)
			proc_stop(&fx.w[i]);
	for (int i = 0; i < fx.n_m; i++)
		if (fx.m[i].pid > 0)
			proc_stop(&fx.m[i]);
	etcd_proc_stop(&fx.etcd);
}

#define LEN 5000

static void fill(uint8_t *buf, unsigned seed)
{
	for (size_t i = 0; i < LEN; i++)
		buf[i] = (uint8_t)(seed * 131 + i * 7);
}

/* Puts "gone", "kept" and (n 3) "cli-gone", each on both workers, and
 * waits until both workers' indexes hold them (the journal reached them:
 * no orphans). */
static void put_keys(store_client *sc, uint8_t *kept, int n)
{
	static const char *const keys[] = {"gone", "kept", "cli-gone"};
	static uint8_t buf[LEN];

	for (int i = 0; i < n; i++) {
		uint8_t *b = i == 1 ? kept : buf;

		fill(b, (unsigned)i + 1);
		ck_assert_msg(store_client_put(sc, keys[i], b, LEN) == 0,
			      "%s: %s", keys[i], store_client_error(sc));
	}
	WAIT_UNTIL(worker_metric(0, "mcrepl_worker_index_objects") == n &&
		   worker_metric(1, "mcrepl_worker_index_objects") == n);
}

/* key reads NOT_FOUND and does not exist. */
static void assert_gone(store_client *sc, const char *key)
{
	void *buf = NULL;
	size_t got = 0;
	bool exists = true;

	ck_assert_int_eq(store_client_get(sc, key, &buf, &got, NULL),
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert_ptr_null(buf);
	ck_assert_int_eq(store_client_exist(sc, key, &exists), 0);
	ck_assert(!exists);
}

/* "gone" reads NOT_FOUND; "kept" reads back its bytes. */
static void assert_gone_kept(store_client *sc, const uint8_t *kept)
{
	void *buf = NULL;
	size_t got = 0;

	assert_gone(sc, "gone");
	ck_assert_msg(store_client_get(sc, "kept", &buf, &got, NULL) == 0, "%s",
		      store_client_error(sc));
	ck_assert_uint_eq(got, LEN);
	ck_assert_int_eq(memcmp(buf, kept, LEN), 0);
	free(buf);
}

/* A Remove of key at master i: its Result (code, reason). */
static McreplRpc__Code remove_at(int i, const char *key, char *reason,
				 size_t cap)
{
	rpc_client *c = harness_client(rpc_port(i));
	McreplRpc__RemoveRequest req;
	McreplRpc__RemoveResponse *r;
	McreplRpc__Code code;

	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__remove_request__init(&req);
	req.tenant = mut("default");
	req.key = mut(key);
	r = (McreplRpc__RemoveResponse *)harness_call(c, "Remove", &req.base,
						      NULL);
	rpc_client_close(c);
	ck_assert_ptr_nonnull(r);
	ck_assert_ptr_nonnull(r->result);
	code = r->result->code;
	snprintf(reason, cap, "%s", r->result->reason ? r->result->reason : "");
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return code;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 256);

	ck_assert_ptr_nonnull(buf);
	if (f) {
		size_t n = fread(buf, 1, 255, f);

		buf[n] = 0;
		fclose(f);
	}
	return buf;
}

static bool file_exists(const char *path)
{
	FILE *f = fopen(path, "r");

	if (f)
		fclose(f);
	return f != NULL;
}

/* The new leader answers a Remove "recovering" while its workers may
 * still be re-registering (it would remove only what came back so far,
 * and the next worker's records would bring the key back); the store
 * client and mcrepl-cli rm ask again until recovery ends, and then the
 * keys are gone for good, from both workers. */
START_TEST(test_ha_recovery_remove_asks_again_key_stays_gone)
{
	static uint8_t kept[LEN];
	store_client *sc;
	char reason[64], dir[256], bin[512], cmd[2048], rc_path[300],
	    out_path[300], *text;

	if (skip())
		return;
	ck_assert_int_eq(harness_mkdtemp(dir, sizeof(dir), "harec"), 0);
	snprintf(rc_path, sizeof(rc_path), "%s/rc", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	sc = fx_start(2);
	put_keys(sc, kept, 3);
	proc_kill9(&fx.m[0]);
	ck_assert_int_eq(wait_leader(0), 1);
	/* inside the 4 s window: ask again */
	ck_assert_int_eq(remove_at(1, "gone", reason, sizeof(reason)),
			 MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(reason, "recovering");
	ck_assert_int_ge(metric(1, "mcrepl_master_ha_recovering_refused_total"),
			 1);
	/* the cli, in the background, and the client ask again until
	 * recovery is over, then remove */
	snprintf(cmd, sizeof(cmd),
		 "(%s --etcd_endpoints=%s rm cli-gone >%s 2>&1; "
		 "echo $? >%s.tmp; mv %s.tmp %s) &",
		 harness_bin("mcrepl-cli", bin, sizeof(bin)), fx.etcd.endpoints,
		 out_path, rc_path, rc_path, rc_path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_msg(store_client_remove(sc, "gone") == 0, "%s",
		      store_client_error(sc));
	ck_assert_uint_eq(store_client_leader_changes(sc), 1);
	WAIT_UNTIL(file_exists(rc_path));
	text = slurp(rc_path);
	ck_assert_str_eq(text, "0\n");
	free(text);
	text = slurp(out_path);
	ck_assert_str_eq(text, "removed cli-gone\n");
	free(text);
	/* every record of both workers is in (3 keys x 2 workers), the
	 * removed keys' accepted before the removes or refused after */
	WAIT_UNTIL(
	    metric(1, "mcrepl_master_segments") == 2 &&
	    metric(1, "mcrepl_master_ha_replicas_recovered_total") +
		    metric(1, "mcrepl_master_ha_recover_refused_total") ==
		6);
	ck_assert_int_eq(metric(1, "mcrepl_master_keys"), 1);
	ck_assert_int_eq(metric(1, "mcrepl_master_remove_requests_total"), 2);
	assert_gone_kept(sc, kept);
	assert_gone(sc, "cli-gone");
	ck_assert_int_eq(metric(1, "mcrepl_master_keys"), 1);
	fx_stop(sc);
	harness_rmdtemp(dir, "harec");
}
END_TEST

/* A worker forgotten by the leader (stopped past --client_ttl) still
 * holds a replica of a key removed meanwhile; when it resumes, re-mounts
 * and re-registers its index, the removed key's record is refused and
 * counted, the other key's replica comes back. */
START_TEST(test_ha_recovery_removed_key_not_reregistered)
{
	static uint8_t kept[LEN];
	store_client *sc;

	if (skip())
		return;
	sc = fx_start(1);
	put_keys(sc, kept, 2);
	kill(fx.w[1].pid, SIGSTOP);
	WAIT_UNTIL(metric(0, "mcrepl_master_segments") == 1);
	ck_assert_msg(store_client_remove(sc, "gone") == 0, "%s",
		      store_client_error(sc));
	ck_assert_int_eq(metric(0, "mcrepl_master_keys"), 1);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_replicas_recovered_total"),
			 0);
	kill(fx.w[1].pid, SIGCONT);
	/* it re-mounts and re-registers both records */
	WAIT_UNTIL(
	    metric(0, "mcrepl_master_segments") == 2 &&
	    metric(0, "mcrepl_master_ha_replicas_recovered_total") +
		    metric(0, "mcrepl_master_ha_recover_refused_total") ==
		2);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_recover_refused_total"),
			 1);
	ck_assert_int_eq(
	    metric(0, "mcrepl_master_removed_reregister_refused_total"), 1);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_replicas_recovered_total"),
			 1);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_objects_recovered_total"),
			 0);
	ck_assert_int_eq(metric(0, "mcrepl_master_keys"), 1);
	assert_gone_kept(sc, kept);
	fx_stop(sc);
}
END_TEST

Suite *make_ha_recovery_suite(void)
{
	Suite *s = suite_create("ha_recovery");
	TCase *tc = tcase_create("etcd");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ha_recovery_remove_asks_again_key_stays_gone);
	tcase_add_test(tc, test_ha_recovery_removed_key_not_reregistered);
	suite_add_tcase(s, tc);
	return s;
}
