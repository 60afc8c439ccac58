/*
 * Master high availability on etcd (docs/HA.md), with the real
 * binaries: a throw-away etcd (tools/common/etcd_proc.h), two masters
 * campaigning with the default 3 s lease, workers and a store client that find the
 * leader in etcd. Skipped, with one line saying so, without the etcd
 * binary (Debian: etcd-server).
 *
 * Named tests: leader elected; standby takes over after kill -9 and after
 * SIGSTOP of the leader (and the resumed one refuses); old term refused;
 * etcd unavailable (the leader steps down, /health and /metrics still
 * answer); workers and clients follow the leader; objects readable after
 * failover with identical bytes.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "etcd.h"
#include "etcd_proc.h"
#include "hafx.h"
#include "harness.h"
#include "store_client.h"
#include "tls.h"
#include "tlsfix.h"
#include "wait.h"

Suite *make_ha_suite(void);

#define TTL_MS 3000 /* the default */
#define KEY "/mcrepl/master/leader"

struct hafx {
	struct etcd_proc etcd;
	struct proc m[2], w[2];
	int n_m, n_w;
	char ep_flag[300];
	/* secure: an auth file (a worker "worker", a client "admin"), TLS
	 * on the masters' RPC and HTTP ports, workers with a secret and the
	 * CA */
	bool secure;
	/* dyn: the masters replicate hot keys (enforce, a 1 s window) */
	bool dyn;
	/* --ha_recovery_ms (0: 1000) */
	uint32_t recovery_ms;
	/* --ha_lease_ttl_ms (0: TTL_MS) */
	uint32_t ttl_ms;
	struct harness_auth auth;
	struct tlsfix tls;
	char auth_flag[400], cert_flag[300], key_flag[300], ca_flag[300];
};

static struct hafx fx;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static bool skip(void)
{
	if (etcd_proc_available())
		return false;
	fprintf(stderr, "check_ha: no etcd binary (Debian: apt-get install "
			"etcd-server): HA test skipped\n");
	return true;
}

/* Puts' WRITE grants last 2 s: a region evicted while its grant runs is
 * held until its worker acknowledges the grant's revocation, or the
 * grant's expiry (docs/SECURITY.md), and the failover tests put some
 * 10 MB/s through 64 MiB of segments, faster than eviction and the
 * acknowledgements free room: without this a few puts of the loop get
 * NO_SPACE, which is not what these tests are about. */
static void start_master(int i)
{
	char recovery[40], ttl[40];
	const char *flags[16] = {fx.ep_flag,
				 ttl,
				 "--ha_poll_ms=100",
				 recovery,
				 "--client_ttl=8",
				 "--put_start_discard_timeout_sec=2",
				 "--rpc_address=127.0.0.1"};
	size_t n = 7;

	snprintf(recovery, sizeof(recovery), "--ha_recovery_ms=%u",
		 fx.recovery_ms ? fx.recovery_ms : 1000);
	snprintf(ttl, sizeof(ttl), "--ha_lease_ttl_ms=%u",
		 fx.ttl_ms ? fx.ttl_ms : TTL_MS);

	if (fx.dyn) {
		flags[n++] = "--dynamic_replication_mode=enforce";
		flags[n++] = "--dynamic_replication_heat_window_seconds=1";
	}
	if (fx.secure) {
		flags[n++] = fx.auth_flag;
		flags[n++] = fx.cert_flag;
		flags[n++] = fx.key_flag;
	}
	ck_assert_int_eq(master_start(&fx.m[i], flags), 0);
}

static void start_worker(int i)
{
	char bin[512], host[32];
	char *argv[] = {bin,
			mut("--segment_size=32M"),
			fx.ep_flag,
			host,
			mut("--poll_interval_ms=20"),
			mut("--metrics_port=0"),
			fx.secure ? fx.auth.principal_flag[0] : NULL,
			fx.auth.secret_flag[0],
			fx.ca_flag,
			NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(host, sizeof(host), "--host_id=ha-%c", 'a' + i);
	ck_assert_int_eq(
	    proc_start(&fx.w[i], argv, "mcrepl-worker ready", test_hang_ms()),
	    0);
}

/* The auth file and certificates of a secure fixture (before fx_start). */
static void fx_secure(void)
{
	char p[256];

	memset(&fx, 0, sizeof(fx));
	fx.secure = true;
	ck_assert_int_eq(harness_auth_setup(&fx.auth, NULL), 0);
	ck_assert_int_eq(tlsfix_make(&fx.tls), 0);
	snprintf(fx.auth_flag, sizeof(fx.auth_flag), "--auth_file=%s",
		 fx.auth.file);
	snprintf(fx.cert_flag, sizeof(fx.cert_flag), "--tls_cert=%s",
		 tlsfix_path(&fx.tls, "server.pem", p, sizeof(p)));
	snprintf(fx.key_flag, sizeof(fx.key_flag), "--tls_key=%s",
		 tlsfix_path(&fx.tls, "server.key", p, sizeof(p)));
	snprintf(fx.ca_flag, sizeof(fx.ca_flag), "--tls_ca=%s",
		 tlsfix_path(&fx.tls, "ca.pem", p, sizeof(p)));
}

static const char *role(int i, uint64_t *term);

static void fx_start(int masters, int workers, int etcd_members)
{
	if (!fx.secure && !fx.dyn && !fx.recovery_ms && !fx.ttl_ms)
		memset(&fx, 0, sizeof(fx));
	ck_assert_int_eq(etcd_proc_start(&fx.etcd, etcd_members), 0);
	snprintf(fx.ep_flag, sizeof(fx.ep_flag), "--etcd_endpoints=%s",
		 fx.etcd.endpoints);
	for (fx.n_m = 0; fx.n_m < masters; fx.n_m++) {
		start_master(fx.n_m);
		if (fx.n_m == 0) /* the first one leads */
			WAIT_UNTIL(strcmp(role(0, NULL), "leader") == 0);
	}
	for (fx.n_w = 0; fx.n_w < workers; fx.n_w++)
		start_worker(fx.n_w);
}

static void fx_stop(void)
{
	for (int i = 0; i < fx.n_w; i++)
		if (fx.w[i].pid > 0)
			proc_stop(&fx.w[i]);
	for (int i = 0; i < fx.n_m; i++)
		if (fx.m[i].pid > 0)
			proc_stop(&fx.m[i]);
	etcd_proc_stop(&fx.etcd);
	if (fx.secure) {
		harness_auth_cleanup(&fx.auth);
		tlsfix_cleanup(&fx.tls);
	}
	fx.secure = fx.dyn = false; /* the next test starts plain */
	fx.recovery_ms = 0;
}

static uint16_t metrics_port(int i)
{
	return (uint16_t)proc_field(&fx.m[i], "metrics_port");
}

static uint16_t rpc_port(int i)
{
	return (uint16_t)proc_field(&fx.m[i], "rpc_port");
}

/* GET path from master i's HTTP port (HTTPS in a secure fixture). */
static char *page_of(int i, const char *path)
{
	char ca[256];

	if (!fx.secure)
		return http_get(metrics_port(i), path);
	return tlsfix_https_get(metrics_port(i), path,
				tlsfix_path(&fx.tls, "ca.pem", ca, sizeof(ca)));
}

/* /health of master i: "leader", "standby" or "" (no answer); *term. */
static const char *role(int i, uint64_t *term)
{
	char *h = page_of(i, "/health");
	const char *r = "";
	char *t;

	if (h && strstr(h, "\"role\":\"leader\""))
		r = "leader";
	else if (h && strstr(h, "\"role\":\"standby\""))
		r = "standby";
	if (term)
		*term = h && (t = strstr(h, "\"term\":"))
			    ? strtoull(t + 7, NULL, 10)
			    : 0;
	free(h);
	return r;
}

/* The master other than `not` that leads (polling /health until one
 * does, wait.h), or -1. */
static int wait_leader(int not )
{
	struct test_wait w = test_wait_start();

	do {
		for (int i = 0; i < fx.n_m; i++)
			if (i != not &&fx.m[i].pid > 0 &&
			    strcmp(role(i, NULL), "leader") == 0)
				return i;
	} while (test_wait_more(&w));
	return -1;
}

static long long metric(int i, const char *name)
{
	char *page = page_of(i, "/metrics");
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
}

/* PutStart of key at master i: the response (caller frees). */
static McreplRpc__PutStartResponse *put_start(int i, const char *key)
{
	rpc_client *c = harness_client(rpc_port(i));
	McreplRpc__PutStartRequest req;
	ProtobufCMessage *r;

	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__put_start_request__init(&req);
	req.tenant = mut("default");
	req.key = mut(key);
	req.size = 100;
	r = harness_call(c, "PutStart", &req.base, NULL);
	rpc_client_close(c);
	ck_assert_ptr_nonnull(r);
	return (McreplRpc__PutStartResponse *)r;
}

/* PutStart at master i once its recovery window is over (3 s at most on
 * an idle machine). */
static McreplRpc__PutStartResponse *put_ok(int i, const char *key)
{
	McreplRpc__PutStartResponse *r = put_start(i, key);

	for (struct test_wait w = test_wait_start();
	     r->result && r->result->code == MCREPL_RPC__CODE__UNAVAILABLE &&
	     strcmp(r->result->reason, "recovering") == 0 &&
	     test_wait_more(&w);) {
		protobuf_c_message_free_unpacked(&r->base, NULL);
		r = put_start(i, key);
	}
	ck_assert_msg(r->result && r->result->code == MCREPL_RPC__CODE__OK,
		      "PutStart %s at master %d: %s", key, i,
		      r->result ? r->result->message : "?");
	return r;
}

static void assert_not_leader(int i)
{
	McreplRpc__PutStartResponse *r = put_start(i, "refused");

	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(r->result->reason, "not_leader");
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

/* The message of master i's next not_leader refusal (malloc'd). */
static char *refusal_text(int i)
{
	McreplRpc__PutStartResponse *r = put_start(i, "refused");
	char *text;

	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(r->result->reason, "not_leader");
	text = strdup(r->result->message);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	ck_assert_ptr_nonnull(text);
	return text;
}

#define NO_LEADER "this master is not the leader (no leader now)"
#define STEP_DOWNS_EXPIRED                                                     \
	"mcrepl_master_ha_step_downs_total{reason=\"lease_expired\"}"

/* Master i's /health names addr. */
static bool health_names(int i, const char *addr)
{
	char *h = http_get(metrics_port(i), "/health");
	bool seen = h && strstr(h, addr);

	free(h);
	return seen;
}

START_TEST(test_ha_leader_elected)
{
	struct etcd_result er;
	char addr[64];
	uint64_t term = 0;
	int l, s;
	McreplRpc__PutStartResponse *r;

	if (skip())
		return;
	fx_start(2, 0, 1);
	l = wait_leader(-1);
	ck_assert_int_eq(l, 0); /* the first to campaign */
	s = 1 - l;
	ck_assert_str_eq(role(s, NULL), "standby");
	ck_assert_str_eq(role(l, &term), "leader");
	/* the key names the leader's RPC address; its term is the key's */
	ck_assert_int_eq(etcd_get_sync(fx.etcd.endpoints, KEY, 2000, &er), 0);
	ck_assert(er.found);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", rpc_port(l));
	ck_assert_str_eq(er.value, addr);
	ck_assert_uint_eq(er.create_revision, term);
	ck_assert_int_eq(metric(l, "mcrepl_master_ha_term"), (long long)term);
	ck_assert_int_eq(metric(s, "mcrepl_master_ha_term"), 0);
	ck_assert_int_eq(metric(l, "mcrepl_master_ha_elections_won_total"), 1);
	ck_assert_int_eq(metric(s, "mcrepl_master_ha_elections_won_total"), 0);
	/* the standby refuses, naming the leader (once it has looked) */
	WAIT_UNTIL(health_names(s, addr));
	r = put_start(s, "k");
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(r->result->reason, "not_leader");
	ck_assert_ptr_nonnull(strstr(r->result->message, addr));
	protobuf_c_message_free_unpacked(&r->base, NULL);
	ck_assert_int_eq(metric(s, "mcrepl_master_ha_refused_total"), 1);
	fx_stop();
}
END_TEST

START_TEST(test_ha_takeover_after_kill9)
{
	uint64_t t0 = 0, t1 = 0;
	int64_t killed;
	int l;

	if (skip())
		return;
	fx_start(2, 0, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	role(0, &t0);
	proc_kill9(&fx.m[0]);
	killed = net_now_ms();
	l = wait_leader(0);
	ck_assert_int_eq(l, 1);
	/* the lease had to lapse first: no sooner than TTL less one renewal
	 * period, no later than TTL plus a standby poll and slack */
	ck_assert_int_le(net_now_ms() - killed, TTL_MS + 2000);
	role(1, &t1);
	ck_assert_uint_gt(t1, t0);
	ck_assert_int_eq(metric(1, "mcrepl_master_ha_failovers_total"), 1);
	fx_stop();
}
END_TEST

START_TEST(test_ha_takeover_after_sigstop)
{
	uint64_t t0 = 0, t1 = 0;
	int64_t stopped, resumed;

	if (skip())
		return;
	fx_start(2, 0, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	role(0, &t0);
	stopped = net_now_ms();
	kill(fx.m[0].pid, SIGSTOP);
	ck_assert_int_eq(wait_leader(0), 1);
	role(1, &t1);
	ck_assert_uint_gt(t1, t0);
	/* resumed, the old leader is past its deadline: its first request
	 * is refused, and it says standby from then on */
	resumed = net_now_ms();
	kill(fx.m[0].pid, SIGCONT);
	assert_not_leader(0);
	ck_assert_str_eq(role(0, NULL), "standby");
	ck_assert_int_eq(metric(0, STEP_DOWNS_EXPIRED), 1);
	ck_assert_str_eq(role(1, NULL), "leader");
	/* and it says it was paused, and how long */
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_pauses_total"), 1);
	ck_assert_int_ge(metric(0, "mcrepl_master_ha_longest_pause_ms"),
			 resumed - stopped - 50);
	ck_assert_int_lt(metric(0, "mcrepl_master_ha_longest_pause_ms"),
			 net_now_ms() - stopped + 1000);
	fx_stop();
}
END_TEST

/* A leader deposed while stopped names the leader that took over, or
 * none until it has looked: never itself. */
START_TEST(test_ha_deposed_leader_names_new_leader_or_none)
{
	char self[64], other[64], *text;

	if (skip())
		return;
	fx_start(2, 0, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	snprintf(self, sizeof(self), "127.0.0.1:%u", rpc_port(0));
	snprintf(other, sizeof(other),
		 "this master is not the leader; leader: 127.0.0.1:%u",
		 rpc_port(1));
	kill(fx.m[0].pid, SIGSTOP);
	ck_assert_int_eq(wait_leader(0), 1);
	kill(fx.m[0].pid, SIGCONT);
	/* its first answer after the resume steps it down */
	text = refusal_text(0);
	ck_assert_msg(strcmp(text, NO_LEADER) == 0 || strcmp(text, other) == 0,
		      "deposed leader says: %s", text);
	ck_assert_ptr_null(strstr(text, self));
	free(text);
	/* within a few standby polls it names the new leader */
	for (struct test_wait w = test_wait_start();;) {
		text = refusal_text(0);
		if (strcmp(text, other) == 0 || !test_wait_more(&w))
			break;
		ck_assert_str_eq(text, NO_LEADER);
		free(text);
	}
	ck_assert_str_eq(text, other);
	free(text);
	ck_assert_str_eq(role(1, NULL), "leader");
	fx_stop();
}
END_TEST

/* A BatchGetReplicaList at master i, within its recovery window, of a key
 * nobody has: "recovering" (ask again), as GetReplicaList. */
static void assert_batch_recovering(int i)
{
	rpc_client *c = harness_client(rpc_port(i));
	McreplRpc__BatchGetReplicaListRequest req;
	McreplRpc__BatchGetReplicaListResponse *r;
	char *keys[] = {mut("nobody-has-it")};

	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__batch_get_replica_list_request__init(&req);
	req.tenant = mut("default");
	req.keys = keys;
	req.n_keys = 1;
	r = (McreplRpc__BatchGetReplicaListResponse *)harness_call(
	    c, "BatchGetReplicaList", &req.base, NULL);
	rpc_client_close(c);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(r->result->reason, "recovering");
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

START_TEST(test_ha_old_term_refused)
{
	McreplRpc__PutStartResponse *a, *b;
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutEndResponse *e;
	rpc_client *c;
	uint64_t t0 = 0, t1 = 0;

	if (skip())
		return;
	fx_start(2, 1, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	role(0, &t0);
	/* a new leader answers puts "recovering" for --ha_recovery_ms */
	b = put_start(0, "too-early");
	ck_assert_int_eq(b->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(b->result->reason, "recovering");
	protobuf_c_message_free_unpacked(&b->base, NULL);
	assert_batch_recovering(0);
	a = put_ok(0, "old-term-key");
	/* versions carry the term; the incarnation is the term too */
	ck_assert_uint_eq(a->version >> 32, t0);
	ck_assert_uint_eq(a->incarnation & 0xffffffffffffULL, t0);
	proc_kill9(&fx.m[0]);
	ck_assert_int_eq(wait_leader(0), 1);
	role(1, &t1);
	/* the new leader refuses the old term's PutEnd as STALE */
	c = harness_client(rpc_port(1));
	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = mut("default");
	pe.key = mut("old-term-key");
	pe.version = a->version;
	e = (McreplRpc__PutEndResponse *)harness_call(c, "PutEnd", &pe.base,
						      NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->result->code, MCREPL_RPC__CODE__STALE);
	protobuf_c_message_free_unpacked(&e->base, NULL);
	rpc_client_close(c);
	/* once the worker is back and recovery is over, puts carry t1 */
	b = put_ok(1, "new-term-key");
	ck_assert_uint_eq(b->version >> 32, t1);
	ck_assert_uint_ne(b->incarnation, a->incarnation);
	protobuf_c_message_free_unpacked(&a->base, NULL);
	protobuf_c_message_free_unpacked(&b->base, NULL);
	fx_stop();
}
END_TEST

START_TEST(test_ha_etcd_unavailable)
{
	int64_t stopped;
	char *text;

	if (skip())
		return;
	fx_start(1, 0, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	etcd_proc_signal(&fx.etcd, 0, SIGSTOP);
	stopped = net_now_ms();
	/* cut off from etcd, the leader stops serving after half the TTL
	 * (before any other master could win) */
	while (metric(0, "mcrepl_master_ha_serving") == 1 &&
	       net_now_ms() - stopped < TTL_MS)
		harness_sleep_ms(20);
	ck_assert_int_le(net_now_ms() - stopped, TTL_MS / 2 + 400);
	assert_not_leader(0);
	/* and gives its term up once a whole TTL passed without a
	 * confirmed renewal (its lease may have lapsed) */
	WAIT_UNTIL(strcmp(role(0, NULL), "standby") == 0);
	ck_assert_int_ge(net_now_ms() - stopped, TTL_MS / 2);
	/* deposed with etcd out of reach: no leader is known (it named
	 * itself) */
	text = refusal_text(0);
	ck_assert_str_eq(text, NO_LEADER);
	free(text);
	/* what keeps serving: /health and /metrics */
	ck_assert_int_eq(metric(0, STEP_DOWNS_EXPIRED), 1);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_suspensions_total"), 1);
	/* etcd back: it campaigns and leads again, in a new term */
	etcd_proc_signal(&fx.etcd, 0, SIGCONT);
	ck_assert_int_eq(wait_leader(-1), 0);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_elections_won_total"), 2);
	fx_stop();
}
END_TEST

/* A slow etcd (or a leader's loop slowed by load) that confirms no
 * renewal for more than half the lease: the leader stops serving, keeps
 * renewing, and serves again in the same term once etcd answers; no step
 * down, no failover. A 6 s lease leaves the test 3 s to see the pause. */
START_TEST(test_ha_slow_etcd_pauses_serving_keeps_the_term)
{
	uint64_t t0 = 0, t1 = 0;

	if (skip())
		return;
	memset(&fx, 0, sizeof(fx));
	fx.ttl_ms = 6000;
	fx_start(1, 0, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	role(0, &t0);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_serving"), 1);
	etcd_proc_signal(&fx.etcd, 0, SIGSTOP);
	WAIT_UNTIL(metric(0, "mcrepl_master_ha_serving") == 0);
	assert_not_leader(0); /* etcd still stopped: it cannot resume yet */
	etcd_proc_signal(&fx.etcd, 0, SIGCONT);
	WAIT_UNTIL(metric(0, "mcrepl_master_ha_serving") == 1);
	ck_assert_str_eq(role(0, &t1), "leader");
	ck_assert_uint_eq(t1, t0);
	ck_assert_int_eq(metric(0, STEP_DOWNS_EXPIRED), 0);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_suspensions_total"), 1);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_elections_won_total"), 1);
	fx_stop();
}
END_TEST

#define N_OBJ 24

static void fill(uint8_t *buf, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* masters (the first leading), two workers (both mounted), one etcd
 * member, and a store client putting `replicas` replicas that finds the
 * leader in etcd. */
static store_client *fx_start_clients(int masters, uint32_t replicas)
{
	struct store_client_config cfg;
	store_client *sc = NULL;
	char ep[300], err[256];

	fx_start(masters, 2, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	WAIT_UNTIL(metric(0, "mcrepl_master_segments") == 2);
	store_client_config_init(&cfg);
	cfg.replicas = replicas;
	snprintf(ep, sizeof(ep), "etcd://%s", fx.etcd.endpoints);
	ck_assert_msg(
	    store_client_open(&sc, ep, NULL, &cfg, err, sizeof(err)) == 0, "%s",
	    err);
	return sc;
}

START_TEST(test_ha_workers_clients_follow_objects_survive)
{
	store_client *sc;
	char key[32];
	static uint8_t want[N_OBJ][70000];
	uint64_t len;
	int l;

	if (skip())
		return;
	sc = fx_start_clients(2, 1);
	for (int i = 0; i < N_OBJ; i++) {
		len = 1000 + (uint64_t)i * 2800;
		fill(want[i], len, (unsigned)i);
		snprintf(key, sizeof(key), "obj-%d", i);
		ck_assert_msg(store_client_put(sc, key, want[i], len) == 0,
			      "%s", store_client_error(sc));
	}
	/* killed right after the last put: the journal has not told the
	 * workers about the last ones; they come back as orphans */
	proc_kill9(&fx.m[0]);
	l = wait_leader(0);
	ck_assert_int_eq(l, 1);
	/* the client follows by itself; every object reads back the same */
	for (int i = 0; i < N_OBJ; i++) {
		void *buf = NULL;
		size_t got = 0;

		snprintf(key, sizeof(key), "obj-%d", i);
		ck_assert_msg(store_client_get(sc, key, &buf, &got, NULL) == 0,
			      "%s: %s", key, store_client_error(sc));
		ck_assert_uint_eq(got, 1000 + (uint64_t)i * 2800);
		ck_assert_int_eq(memcmp(buf, want[i], got), 0);
		free(buf);
	}
	ck_assert_uint_eq(store_client_leader_changes(sc), 1);
	/* both workers re-mounted and re-registered at the new leader */
	WAIT_UNTIL(metric(1, "mcrepl_master_segments") == 2 &&
		   metric(1, "mcrepl_master_keys") == N_OBJ);
	ck_assert_int_eq(metric(1, "mcrepl_master_segments"), 2);
	ck_assert_int_eq(metric(1, "mcrepl_master_keys"), N_OBJ);
	ck_assert_int_eq(metric(1, "mcrepl_master_ha_objects_recovered_total"),
			 N_OBJ);
	ck_assert_int_eq(metric(1, "mcrepl_master_ha_recover_refused_total"),
			 0);
	/* the cli finds the new leader too */
	{
		char bin[512], cmd[1200];

		snprintf(cmd, sizeof(cmd),
			 "%s --etcd_endpoints=%s exist obj-3 >/dev/null",
			 harness_bin("mcrepl-cli", bin, sizeof(bin)),
			 fx.etcd.endpoints);
		ck_assert_int_eq(system(cmd), 0);
	}
	/* and new puts work there */
	ck_assert_int_eq(store_client_put(sc, "after", want[0], 1000), 0);
	store_client_close(sc);
	fx_stop();
}
END_TEST

/* A secure fixture's admin credential and a TLS context trusting its CA
 * (the caller frees the context). */
static SSL_CTX *admin_tls(struct auth_cred *admin)
{
	char err[256], ca[256];
	SSL_CTX *ctx;

	ck_assert_int_eq(
	    auth_cred_load("admin",
			   fx.auth.secret_flag[1] + strlen("--secret_file="),
			   admin, err, sizeof(err)),
	    0);
	ctx = tls_client_ctx(tlsfix_path(&fx.tls, "ca.pem", ca, sizeof(ca)),
			     NULL, NULL, err, sizeof(err));
	ck_assert_msg(ctx != NULL, "%s", err);
	return ctx;
}

/* Kill -9 of the leader under an authenticated client on TLS, with
 * authenticated workers on TLS: every read and write made
 * across the failover succeeds, with identical bytes; the workers follow
 * the new leader keeping their credential (they re-mount there, and new
 * puts land on them), and no authentication fails there. */
START_TEST(test_ha_failover_auth_tls_no_failed_ops)
{
	struct store_client_config cfg;
	struct auth_cred admin;
	store_client *sc = NULL;
	SSL_CTX *ctx;
	char ep[300], err[256], key[32];
	static uint8_t want[N_OBJ][8000];
	int failed = 0, reads = 0, writes = 0;
	int64_t until;

	if (skip())
		return;
	fx_secure();
	fx_start(2, 2, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	ctx = admin_tls(&admin);
	store_client_config_init(&cfg);
	cfg.cred = &admin;
	cfg.tls = ctx;
	snprintf(ep, sizeof(ep), "etcd://%s", fx.etcd.endpoints);
	ck_assert_msg(
	    store_client_open(&sc, ep, NULL, &cfg, err, sizeof(err)) == 0, "%s",
	    err);
	for (int i = 0; i < N_OBJ; i++) {
		fill(want[i], sizeof(want[i]), (unsigned)i);
		snprintf(key, sizeof(key), "obj-%d", i);
		ck_assert_msg(
		    store_client_put(sc, key, want[i], sizeof(want[i])) == 0,
		    "%s", store_client_error(sc));
	}
	proc_kill9(&fx.m[0]);
	/* reads and writes from the kill until well past the new leader's
	 * recovery window */
	until = net_now_ms() + TTL_MS + 4000;
	for (int k = 0; net_now_ms() < until; k++) {
		void *buf = NULL;
		uint64_t got = 0;
		int i = k % N_OBJ;

		snprintf(key, sizeof(key), "obj-%d", i);
		reads++;
		if (store_client_get(sc, key, &buf, &got, NULL) != 0 ||
		    got != sizeof(want[i]) || memcmp(buf, want[i], got) != 0) {
			failed++;
			fprintf(stderr, "check_ha: get %s: %s\n", key,
				store_client_error(sc));
		}
		free(buf);
		snprintf(key, sizeof(key), "after-%d", k);
		writes++;
		if (store_client_put(sc, key, want[i], sizeof(want[i])) != 0) {
			failed++;
			fprintf(stderr, "check_ha: put %s: %s\n", key,
				store_client_error(sc));
		}
		/* paced: about 14 MB in all, well inside the 64 MiB of
		 * segments, so no put waits for eviction (what this test
		 * checks is the failover, not a full cluster) */
		harness_sleep_ms(4);
	}
	ck_assert_int_eq(failed, 0);
	ck_assert_int_gt(reads, N_OBJ);
	ck_assert_int_gt(writes, N_OBJ);
	ck_assert_uint_eq(store_client_leader_changes(sc), 1);
	/* the workers followed with their credential */
	WAIT_UNTIL(metric(1, "mcrepl_master_segments") == 2);
	ck_assert_int_eq(
	    metric(1,
		   "mcrepl_master_auth_failures_total{reason=\"bad_proof\"}"),
	    0);
	ck_assert_int_eq(
	    metric(
		1,
		"mcrepl_master_auth_refusals_total{reason=\"unauthenticated\"}"),
	    0);
	store_client_close(sc);
	SSL_CTX_free(ctx);
	fx_stop();
}
END_TEST

/* RegisterObjects on an HA leader with an auth table, naming the
 * worker's client id and segment: a record would point a key at a region
 * of that worker's segment, so readers would be served another
 * principal's bytes. The handler checked no caller at all: a client
 * principal (admin) got its records registered. Now the method table's
 * rule (a worker, for its own client id) refuses it as the wrong kind
 * before the handler runs; a connection without a handshake is refused
 * as unauthenticated, as before. */
START_TEST(test_ha_attack_register_objects_as_another_principal)
{
	McreplRpc__RegisterObjectsRequest rr;
	McreplRpc__RegisterObjectsResponse *resp;
	McreplRpc__IndexEntry e, *ep = &e;
	struct auth_cred admin;
	SSL_CTX *ctx;
	rpc_client *c;
	uint16_t port;
	int st;

	if (skip())
		return;
	fx_secure();
	fx_start(1, 1, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	port = (uint16_t)proc_field(&fx.m[0], "rpc_port");
	ctx = admin_tls(&admin);
	harness_set_tls(ctx);
	mcrepl_rpc__index_entry__init(&e);
	e.segment_id = proc_field(&fx.w[0], "segment_ids");
	e.offset = 0;
	e.size = 4096;
	e.version = 1;
	e.tenant = mut("default");
	e.key = mut("stolen");
	mcrepl_rpc__register_objects_request__init(&rr);
	rr.client_id = proc_field(&fx.w[0], "client_id");
	rr.segment_id = e.segment_id;
	rr.n_objects = 1;
	rr.objects = &ep;
	ck_assert_uint_ne(rr.client_id, 0);
	ck_assert_uint_ne(rr.segment_id, 0);

	c = harness_client_as(port, &admin);
	ck_assert_ptr_nonnull(c);
	resp = (McreplRpc__RegisterObjectsResponse *)harness_call(
	    c, "RegisterObjects", &rr.base, NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_int_eq(resp->result->code,
			 MCREPL_RPC__CODE__PERMISSION_DENIED);
	ck_assert_str_eq(resp->result->reason, "auth_kind");
	ck_assert_uint_eq(resp->accepted, 0);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	rpc_client_close(c);

	c = harness_client(port); /* no handshake */
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_null(harness_call(c, "RegisterObjects", &rr.base, &st));
	ck_assert_int_eq(st, MCREPL_RPC__CODE__UNAUTHENTICATED);
	rpc_client_close(c);
	ck_assert_int_eq(
	    metric(0, "mcrepl_master_auth_refusals_total{reason=\"kind\"}"), 1);
	harness_set_tls(NULL);
	SSL_CTX_free(ctx);
	fx_stop();
}
END_TEST

/* Exist asked again (prev freed): the response, NULL on failure. */
static McreplRpc__ExistResponse *exist_again(rpc_client *c,
					     McreplRpc__ExistRequest *xr,
					     McreplRpc__ExistResponse *prev)
{
	if (prev)
		protobuf_c_message_free_unpacked(&prev->base, NULL);
	return (McreplRpc__ExistResponse *)harness_call(c, "Exist", &xr->base,
							NULL);
}

/* A worker in steady state (no leader change) re-registers a record for
 * a key nobody put, with a made-up version, incarnation and tag, on its
 * own segment: the leader took it, and readers of the key were served
 * the worker's bytes. Recovery restores, never creates: the segment was
 * not re-mounted after a leader change, so the record is refused,
 * counted, and the key does not exist. */
START_TEST(test_ha_attack_worker_registers_injected_key)
{
	McreplRpc__RegisterObjectsRequest rr;
	McreplRpc__RegisterObjectsResponse *resp;
	McreplRpc__ExistRequest xr;
	McreplRpc__ExistResponse *xresp;
	McreplRpc__IndexEntry e, *ep = &e;
	struct auth_cred worker, admin;
	char err[256];
	SSL_CTX *ctx;
	rpc_client *c;

	if (skip())
		return;
	fx_secure();
	fx_start(1, 1, 1);
	ck_assert_int_eq(wait_leader(-1), 0);
	WAIT_UNTIL(metric(0, "mcrepl_master_segments") == 1);
	ctx = admin_tls(&admin);
	harness_set_tls(ctx);
	ck_assert_int_eq(
	    auth_cred_load("worker",
			   fx.auth.secret_flag[0] + strlen("--secret_file="),
			   &worker, err, sizeof(err)),
	    0);
	mcrepl_rpc__index_entry__init(&e);
	e.segment_id = proc_field(&fx.w[0], "segment_ids");
	e.offset = 1 << 20;
	e.size = 4096;
	e.version = 1ULL << 32 | 1; /* "term 1": earlier than any */
	e.incarnation = 1;
	e.stamp_tag = 0x5eed;
	e.tenant = mut("default");
	e.key = mut("inj");
	mcrepl_rpc__register_objects_request__init(&rr);
	rr.client_id = proc_field(&fx.w[0], "client_id");
	rr.segment_id = e.segment_id;
	rr.n_objects = 1;
	rr.objects = &ep;
	rr.last = true;
	c = harness_client_as(rpc_port(0), &worker);
	ck_assert_ptr_nonnull(c);
	resp = (McreplRpc__RegisterObjectsResponse *)harness_call(
	    c, "RegisterObjects", &rr.base, NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_int_eq(resp->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(resp->accepted, 0);
	ck_assert_uint_eq(resp->refused, 1);
	ck_assert_str_eq(resp->result->message,
			 "1 refused, the last: the segment is not "
			 "re-registering after a leader change");
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	rpc_client_close(c);
	ck_assert_int_eq(
	    metric(0, "mcrepl_master_reregister_refused_unheld_total"), 1);
	ck_assert_int_eq(metric(0, "mcrepl_master_keys"), 0);
	/* (an empty Exist is "recovering" until the window is over) */
	c = harness_client_as(rpc_port(0), &admin);
	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__exist_request__init(&xr);
	xr.tenant = mut("default");
	xr.key = mut("inj");
	xresp = NULL;
	WAIT_UNTIL((xresp = exist_again(c, &xr, xresp)) != NULL &&
		   xresp->result->code != MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_int_eq(xresp->result->code, MCREPL_RPC__CODE__OK);
	ck_assert(!xresp->exists);
	protobuf_c_message_free_unpacked(&xresp->base, NULL);
	rpc_client_close(c);
	harness_set_tls(NULL);
	SSL_CTX_free(ctx);
	fx_stop();
}
END_TEST

/* Without --etcd_endpoints: the master as before (role single, no HA
 * metrics), and RegisterObjects refused. Needs no etcd. */
/* A dynamic copy made under the old leader is still one under the new
 * leader: the journal tells its worker so, the worker re-registers it as
 * such, the new leader counts it in its gauges and, once the key is cold,
 * retires it like any other (before, it came back as an ordinary replica
 * that nothing would ever retire). */
START_TEST(test_ha_failover_keeps_dynamic_copies_retirable)
{
	store_client *sc;
	static uint8_t want[4096];
	void *buf = NULL;
	char *page;
	long long dyn, retired;
	size_t got = 0;
	int l;

	if (skip())
		return;
	memset(&fx, 0, sizeof(fx));
	fx.dyn = true;
	sc = fx_start_clients(2, 1);
	fill(want, sizeof(want), 7);
	ck_assert_msg(store_client_put(sc, "hot", want, sizeof(want)) == 0,
		      "%s", store_client_error(sc));
	/* hot: read until its copy is made (the source worker copies it) */
	for (struct test_wait w = test_wait_start();
	     metric(0, "mcrepl_dynamic_replicas") < 1 && test_wait_more(&w);) {
		for (int r = 0; r < 4; r++) {
			ck_assert_int_eq(
			    store_client_get(sc, "hot", &buf, &got, NULL), 0);
			free(buf);
		}
	}
	ck_assert_int_eq(metric(0, "mcrepl_dynamic_replicas"), 1);
	ck_assert_int_eq(metric(0, "mcrepl_dynamic_copy_tasks_completed_total"),
			 1);
	harness_sleep_ms(200); /* the journal reaches the workers (20 ms) */
	proc_kill9(&fx.m[0]);
	l = wait_leader(0);
	ck_assert_int_eq(l, 1);
	WAIT_UNTIL(metric(1, "mcrepl_master_ha_replicas_recovered_total") >= 2);
	ck_assert_int_eq(metric(1, "mcrepl_master_ha_replicas_recovered_total"),
			 2);
	/* the new leader knows the copy for what it is: a dynamic replica,
	 * or one already retired as such (unread, it goes cold within a
	 * few 1 s windows: a loaded machine may look later than that) */
	page = page_of(1, "/metrics");
	ck_assert_ptr_nonnull(page);
	dyn = metric_value(page, "mcrepl_dynamic_replicas");
	retired =
	    metric_value(page, "mcrepl_master_dynamic_replicas_retired_total");
	ck_assert_msg(dyn + retired == 1, "%lld dynamic, %lld retired", dyn,
		      retired);
	if (dyn == 1)
		ck_assert_int_eq(
		    metric_value(page, "mcrepl_master_dynamic_replica_bytes"),
		    4096);
	free(page);
	/* recovered, not made here: no copy task counted */
	ck_assert_int_eq(metric(1, "mcrepl_dynamic_copy_tasks_completed_total"),
			 0);
	/* unread, it goes cold: retired within a few windows (1 s) */
	WAIT_UNTIL(metric(1, "mcrepl_master_dynamic_replicas_retired_total") >=
		   1);
	ck_assert_int_eq(
	    metric(1, "mcrepl_master_dynamic_replicas_retired_total"), 1);
	ck_assert_int_eq(metric(1, "mcrepl_dynamic_replicas"), 0);
	ck_assert_int_eq(metric(1, "mcrepl_master_dynamic_replica_bytes"), 0);
	/* its other replica still reads back the same bytes */
	ck_assert_int_eq(store_client_get(sc, "hot", &buf, &got, NULL), 0);
	ck_assert_uint_eq(got, sizeof(want));
	ck_assert_int_eq(memcmp(buf, want, got), 0);
	free(buf);
	store_client_close(sc);
	fx_stop();
}
END_TEST

START_TEST(test_ha_single_master_unchanged)
{
	struct proc m;
	McreplRpc__MountSegmentRequest mr;
	McreplRpc__MountSegmentResponse *mresp;
	McreplRpc__RegisterObjectsRequest rr;
	McreplRpc__RegisterObjectsResponse *rresp;
	char *h, *page;
	rpc_client *c;

	ck_assert_int_eq(master_start(&m, NULL), 0);
	h = http_get((uint16_t)proc_field(&m, "metrics_port"), "/health");
	ck_assert_ptr_nonnull(strstr(h,
				     "{\"status\":\"ok\",\"role\":\"single\","
				     "\"version\":"));
	free(h);
	page = http_get((uint16_t)proc_field(&m, "metrics_port"), "/metrics");
	ck_assert_ptr_null(strstr(page, "mcrepl_master_ha_"));
	free(page);
	c = harness_client((uint16_t)proc_field(&m, "rpc_port"));
	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__mount_segment_request__init(&mr);
	mr.client_id = 5;
	mr.host_id = mut("h");
	mr.name = mut("s");
	mr.endpoint = mut("127.0.0.1:1");
	mr.capacity = 1 << 20;
	mr.hold = true; /* ignored */
	mresp = (McreplRpc__MountSegmentResponse *)harness_call(
	    c, "MountSegment", &mr.base, NULL);
	ck_assert_ptr_nonnull(mresp);
	ck_assert_int_eq(mresp->result->code, MCREPL_RPC__CODE__OK);
	mcrepl_rpc__register_objects_request__init(&rr);
	rr.client_id = 5;
	rr.segment_id = mresp->segment_id;
	rresp = (McreplRpc__RegisterObjectsResponse *)harness_call(
	    c, "RegisterObjects", &rr.base, NULL);
	ck_assert_ptr_nonnull(rresp);
	ck_assert_int_eq(rresp->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	protobuf_c_message_free_unpacked(&rresp->base, NULL);
	protobuf_c_message_free_unpacked(&mresp->base, NULL);
	rpc_client_close(c);
	ck_assert_int_eq(proc_stop(&m), 0);
}
END_TEST

/* ---- recovery answers only what it knows ---------------------------- */

/* A recovery window of 4 s: long enough that the first request after
 * the new leader says so on /health falls inside it on a loaded
 * machine. A worker silent for 8 s is forgotten (--client_ttl: above a
 * failover's few seconds, or workers would forget their indexes). */
#define RECOVERY_MS 4000
#define LEN 5000

static long long worker_metric(int i, const char *name)
{
	char *page = http_get((uint16_t)proc_field(&fx.w[i], "metrics_port"),
			      "/metrics");
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
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

		fill(b, LEN, (unsigned)i + 1);
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
	fx.recovery_ms = RECOVERY_MS;
	sc = fx_start_clients(2, 2);
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
	store_client_close(sc);
	fx_stop();
	harness_rmdtemp(dir, "harec");
}
END_TEST

/* A worker forgotten by the leader (stopped past --client_ttl) still
 * holds a replica of a key removed meanwhile; when it resumes it is told
 * so (UNKNOWN_CLIENT), re-mounts and forgets its index: nothing of it is
 * re-registered (the master would refuse it: no leader change), the
 * removed key stays gone, the other key is served by the other worker. */
START_TEST(test_ha_recovery_removed_key_not_reregistered)
{
	static uint8_t kept[LEN];
	store_client *sc;

	if (skip())
		return;
	fx.recovery_ms = RECOVERY_MS;
	sc = fx_start_clients(1, 2);
	put_keys(sc, kept, 2);
	kill(fx.w[1].pid, SIGSTOP);
	WAIT_UNTIL(metric(0, "mcrepl_master_segments") == 1);
	ck_assert_msg(store_client_remove(sc, "gone") == 0, "%s",
		      store_client_error(sc));
	ck_assert_int_eq(metric(0, "mcrepl_master_keys"), 1);
	kill(fx.w[1].pid, SIGCONT);
	WAIT_UNTIL(metric(0, "mcrepl_master_segments") == 2 &&
		   worker_metric(1, "mcrepl_worker_index_forgotten_total") ==
		       1);
	ck_assert_int_eq(worker_metric(1, "mcrepl_worker_index_objects"), 0);
	ck_assert_int_eq(
	    worker_metric(1, "mcrepl_worker_objects_registered_total"), 0);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_recover_refused_total"),
			 0);
	ck_assert_int_eq(metric(0, "mcrepl_master_ha_replicas_recovered_total"),
			 0);
	ck_assert_int_eq(metric(0, "mcrepl_master_keys"), 1);
	assert_gone_kept(sc, kept);
	store_client_close(sc);
	fx_stop();
}
END_TEST

Suite *make_ha_suite(void)
{
	Suite *s = suite_create("ha");
	TCase *tc = tcase_create("etcd");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ha_single_master_unchanged);
	tcase_add_test(tc, test_ha_leader_elected);
	tcase_add_test(tc, test_ha_takeover_after_kill9);
	tcase_add_test(tc, test_ha_takeover_after_sigstop);
	tcase_add_test(tc, test_ha_deposed_leader_names_new_leader_or_none);
	tcase_add_test(tc, test_ha_old_term_refused);
	tcase_add_test(tc, test_ha_etcd_unavailable);
	tcase_add_test(tc, test_ha_slow_etcd_pauses_serving_keeps_the_term);
	tcase_add_test(tc, test_ha_workers_clients_follow_objects_survive);
	tcase_add_test(tc, test_ha_failover_auth_tls_no_failed_ops);
	tcase_add_test(tc,
		       test_ha_attack_register_objects_as_another_principal);
	tcase_add_test(tc, test_ha_attack_worker_registers_injected_key);
	tcase_add_test(tc, test_ha_failover_keeps_dynamic_copies_retirable);
	tcase_add_test(tc, test_ha_recovery_remove_asks_again_key_stays_gone);
	tcase_add_test(tc, test_ha_recovery_removed_key_not_reregistered);
	suite_add_tcase(s, tc);
	return s;
}

/* ---- the fixture for check_ha_remove.c (hafx.h) ---------------------- */

bool hafx_skip(void)
{
	return skip();
}

store_client *hafx_start_clients(int masters, uint32_t replicas,
				 uint32_t recovery_ms)
{
	fx.recovery_ms = recovery_ms;
	return fx_start_clients(masters, replicas);
}

void hafx_stop(void)
{
	fx_stop();
}

int hafx_wait_leader(int not )
{
	return wait_leader(not );
}

long long hafx_metric(int i, const char *name)
{
	return metric(i, name);
}

long long hafx_worker_metric(int i, const char *name)
{
	return worker_metric(i, name);
}

void hafx_put_keys(store_client *sc, uint8_t *kept, int n)
{
	put_keys(sc, kept, n);
}

void hafx_assert_gone(store_client *sc, const char *key)
{
	assert_gone(sc, key);
}

void hafx_assert_gone_kept(store_client *sc, const uint8_t *kept)
{
	assert_gone_kept(sc, kept);
}

struct proc *hafx_master(int i)
{
	return &fx.m[i];
}

struct proc *hafx_worker(int i)
{
	return &fx.w[i];
}

const char *hafx_etcd_endpoints(void)
{
	return fx.etcd.endpoints;
}
