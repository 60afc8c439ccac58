/*
 * The control plane: a real mcrepl-master with --auth_file and
 * principals w1 (worker, host-a), w2 (worker, host-b), admin, alice
 * (tenant t-alice) and bob (tenant t-bob). The workers are played by the
 * test over RPC (MountSegment with chosen client ids), so every task and
 * segment stays where the test can see it. One test per attack of the
 * issue, each asserting the exact code, reason and message and that
 * nothing changed; then the handshake: wrong secret, unknown principal, no
 * handshake, replay, deadline, a master that cannot prove itself, and
 * protected mode.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "grant.h"
#include "harness.h"
#include "mwfix.h"
#include "netutil.h"
#include "rawframe.h"
#include "rpc_auth.h"
#include "wait.h"

Suite *make_auth_suite(void);

enum { W1, W2, ADMIN, ALICE, BOB, NP };

static const char *const principals[] = {
    "worker w1 hosts=host-a domains=* max_capacity=1G",
    "worker w2 hosts=host-b domains=* max_capacity=1G",
    "client admin tenants=* rights=read,write,remove,admin",
    "client alice tenants=t-alice rights=read,write,remove",
    "client bob tenants=t-bob rights=read,write,remove",
    NULL,
};

/* ids of the workers' own spaces (auth_client_id) */
#define W1_ID auth_client_id("w1", 0x1111u)
#define W2_ID auth_client_id("w2", 0x2222u)
#define SEG_BYTES (64u << 20)

static struct {
	struct mwfix m;
	rpc_client *c[NP];
	uint64_t seg[2]; /* w1's, w2's */
} fx;

static const char *client_ttl = "--client_ttl=60";

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static rpc_client *open_as(const struct auth_cred *cred, int *status, char *err,
			   size_t errlen)
{
	rpc_client_config cfg;
	rpc_client *c = NULL;
	char addr[64];

	rpc_client_config_init(&cfg);
	cfg.cred = cred;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", fx.m.port);
	*status = rpc_client_open(&c, addr, &cfg, err, errlen);
	return c;
}

/* Calls `name` as principal who; the transport must succeed. */
static ProtobufCMessage *call(int who, const char *name,
			      const ProtobufCMessage *req)
{
	int st = -100;
	ProtobufCMessage *r = harness_call(fx.c[who], name, req, &st);

	ck_assert_msg(r != NULL, "%s as %d: status %d", name, who, st);
	return r;
}

/* The Result of a response (its field 1 in every message here). */
static const McreplRpc__Result *result_of(const ProtobufCMessage *m)
{
	return *(McreplRpc__Result *const *)(const void *)((const char *)m +
							   sizeof(*m));
}

static void assert_refused(const ProtobufCMessage *m, McreplRpc__Code code,
			   const char *reason, const char *message)
{
	const McreplRpc__Result *r = result_of(m);

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->code, code);
	ck_assert_str_eq(r->reason, reason);
	ck_assert_str_eq(r->message, message);
}

/* The refusal of a client id outside w2's space. */
static const char *not_w2s(uint64_t id)
{
	static char text[128];

	snprintf(text, sizeof(text),
		 "client_id %llu is not in principal 'w2''s id space",
		 (unsigned long long)id);
	return text;
}

static const char *task_not_queued(uint64_t task, uint64_t id)
{
	static char text[128];

	snprintf(text, sizeof(text),
		 "task %llu is not queued for client_id %llu",
		 (unsigned long long)task, (unsigned long long)id);
	return text;
}

static void freem(void *m)
{
	protobuf_c_message_free_unpacked(m, NULL);
}

static McreplRpc__MountSegmentResponse *
mount(int who, uint64_t client_id, const char *host, uint64_t capacity)
{
	McreplRpc__MountSegmentRequest req;
	char *caps[] = {mut("dynamic_copy")};

	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = client_id;
	req.host_id = mut(host);
	req.domain = mut("default");
	req.name = mut(host);
	req.capacity = capacity;
	req.endpoint = mut("127.0.0.1:9");
	req.n_capabilities = 1;
	req.capabilities = caps;
	return (McreplRpc__MountSegmentResponse *)call(who, "MountSegment",
						       &req.base);
}

static long long metric(const char *name)
{
	return mwfix_metric(&fx.m, name);
}

static long long refusals(const char *reason)
{
	char name[128];

	snprintf(name, sizeof(name),
		 "mcrepl_master_auth_refusals_total{reason=\"%s\"}", reason);
	return metric(name);
}

static long long failures(const char *reason)
{
	char name[128];

	snprintf(name, sizeof(name),
		 "mcrepl_master_auth_failures_total{reason=\"%s\"}", reason);
	return metric(name);
}

/* The master with the auth file of principals, the flags below and extra
 * (NULL-terminated; NULL: none); a connection as each principal. */
static void start(const char *const *extra)
{
	/* the handshake deadline: short for the deadline test, long enough
	 * for a handshake under valgrind on a loaded machine */
	const char *flags[16] = {
	    "--auth_timeout_ms=2000",
	    "--dynamic_replication_mode=enforce",
	    "--dynamic_replication_heat_window_seconds=1",
	    "--dynamic_replication_admission_qps_threshold=5",
	    client_ttl,
	};
	const struct mwfix_opts o = {.principals = principals,
				     .master_flags = flags};
	size_t n = 5;
	char err[256];
	int st;

	for (; extra && *extra; extra++)
		flags[n++] = *extra;
	flags[n] = NULL;
	mwfix_start(&fx.m, &o);
	for (int i = 0; i < NP; i++) {
		fx.c[i] = open_as(&fx.m.cred[i], &st, err, sizeof(err));
		ck_assert_msg(st == RPC_OK, "%s: %s", fx.m.auth.names[i], err);
	}
}

static void setup_mounted(void)
{
	McreplRpc__MountSegmentResponse *r;

	memset(&fx, 0, sizeof(fx));
	start(NULL);
	r = mount(W1, W1_ID, "host-a", SEG_BYTES);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	fx.seg[0] = r->segment_id;
	freem(r);
	r = mount(W2, W2_ID, "host-b", SEG_BYTES);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	fx.seg[1] = r->segment_id;
	freem(r);
}

static void setup_short_ttl(void)
{
	client_ttl = "--client_ttl=1";
	setup_mounted();
}

static void teardown(void)
{
	for (int i = 0; i < NP; i++)
		rpc_client_close(fx.c[i]);
	ck_assert_int_eq(mwfix_stop(&fx.m), 0);
	client_ttl = "--client_ttl=60";
}

/* alice's object "k" in t-alice; the segment holding it. */
static uint64_t put_alice(const char *key)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutStartResponse *r;
	McreplRpc__PutEndResponse *e;
	uint64_t seg;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("t-alice");
	ps.key = mut(key);
	ps.size = 4096;
	ps.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)call(ALICE, "PutStart", &ps.base);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 1);
	seg = r->replicas[0]->segment_id;
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = mut("t-alice");
	pe.key = mut(key);
	pe.version = r->version;
	freem(r);
	e = (McreplRpc__PutEndResponse *)call(ALICE, "PutEnd", &pe.base);
	ck_assert_int_eq(e->result->code, MCREPL_RPC__CODE__OK);
	freem(e);
	return seg;
}

/* Readable replicas of t-alice/key, seen by admin without a read. */
static size_t replicas_of(const char *key)
{
	McreplRpc__StatRequest req;
	McreplRpc__GetReplicaListResponse *r;
	size_t n;

	mcrepl_rpc__stat_request__init(&req);
	req.tenant = mut("t-alice");
	req.key = mut(key);
	r = (McreplRpc__GetReplicaListResponse *)call(ADMIN, "Stat", &req.base);
	n = r->result->code == MCREPL_RPC__CODE__OK ? r->n_replicas : 0;
	freem(r);
	return n;
}

static McreplRpc__StatsResponse *stats(void)
{
	McreplRpc__StatsRequest req;

	mcrepl_rpc__stats_request__init(&req);
	return (McreplRpc__StatsResponse *)call(ADMIN, "Stats", &req.base);
}

/* Mounted segments and their total capacity and use. */
static void figures(size_t *segs, uint64_t *cap, uint64_t *used)
{
	McreplRpc__StatsResponse *s = stats();

	ck_assert_int_eq(s->result->code, MCREPL_RPC__CODE__OK);
	*segs = s->n_segments;
	*cap = s->capacity;
	*used = s->used;
	freem(s);
}

/* ---- the attacks ---------------------------------------------------------- */

START_TEST(test_auth_attack_other_tenant_get_and_remove)
{
	McreplRpc__GetReplicaListRequest g;
	McreplRpc__RemoveRequest rm;
	McreplRpc__BatchGetReplicaListRequest bg;
	ProtobufCMessage *r;
	char *keys[] = {mut("k")};
	const char *why = "principal 'bob' may not use tenant 't-alice'";

	put_alice("k");
	mcrepl_rpc__get_replica_list_request__init(&g);
	g.tenant = mut("t-alice");
	g.key = mut("k");
	r = call(BOB, "GetReplicaList", &g.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_tenant",
		       why);
	ck_assert_uint_eq(((McreplRpc__GetReplicaListResponse *)r)->n_replicas,
			  0);
	freem(r);
	mcrepl_rpc__batch_get_replica_list_request__init(&bg);
	bg.tenant = mut("t-alice");
	bg.keys = keys;
	bg.n_keys = 1;
	r = call(BOB, "BatchGetReplicaList", &bg.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_tenant",
		       why);
	ck_assert_uint_eq(
	    ((McreplRpc__BatchGetReplicaListResponse *)r)->n_entries, 0);
	freem(r);
	mcrepl_rpc__remove_request__init(&rm);
	rm.tenant = mut("t-alice");
	rm.key = mut("k");
	r = call(BOB, "Remove", &rm.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_tenant",
		       why);
	freem(r);
	/* a worker has no tenants at all */
	r = call(W1, "Remove", &rm.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_kind",
		       "worker principal 'w1' has no tenants: object calls "
		       "need a client principal");
	freem(r);
	/* nothing changed: alice still reads her object */
	ck_assert_uint_eq(replicas_of("k"), 1);
	r = call(ALICE, "GetReplicaList", &g.base);
	ck_assert_int_eq(result_of(r)->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(((McreplRpc__GetReplicaListResponse *)r)->n_replicas,
			  1);
	freem(r);
	ck_assert_int_eq(refusals("tenant"), 3);
	ck_assert_int_eq(refusals("kind"), 1);
}
END_TEST

START_TEST(test_auth_attack_mount_as_client_gets_no_grant_key)
{
	McreplRpc__MountSegmentResponse *r;
	size_t segs;
	uint64_t cap, used;
	uint8_t sealed[2][GRANT_SECRET_BYTES], key[2][GRANT_SECRET_BYTES];
	static const uint8_t zero[GRANT_SECRET_BYTES];

	r = mount(ALICE, 0x3333, "host-a", SEG_BYTES);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_kind",
		       "MountSegment needs a worker principal; 'alice' is a "
		       "client");
	ck_assert_uint_eq(r->grant_secret.len, 0);
	ck_assert_uint_eq(r->incarnation, 0);
	ck_assert_uint_eq(r->segment_id, 0);
	freem(r);
	/* the admin, too, is no worker */
	r = mount(ADMIN, 0x3333, "host-a", SEG_BYTES);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__PERMISSION_DENIED);
	ck_assert_uint_eq(r->grant_secret.len, 0);
	freem(r);
	figures(&segs, &cap, &used);
	ck_assert_uint_eq(segs, 2);
	ck_assert_uint_eq(cap, 2ull * SEG_BYTES);
	/* a worker mounting its own host does get its segment's key, sealed
	 * for its connection: what a listener sees differs per connection;
	 * what each worker unseals with its session key is its own segment's
	 * key, another than the other worker's (grant.h) */
	r = mount(W1, W1_ID, "host-a", SEG_BYTES);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->grant_secret.len, GRANT_SECRET_BYTES);
	memcpy(sealed[0], r->grant_secret.data, GRANT_SECRET_BYTES);
	freem(r);
	r = mount(W2, W2_ID, "host-b", SEG_BYTES);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->grant_secret.len, GRANT_SECRET_BYTES);
	memcpy(sealed[1], r->grant_secret.data, GRANT_SECRET_BYTES);
	freem(r);
	ck_assert_ptr_nonnull(rpc_client_session_key(fx.c[W1]));
	memcpy(key, sealed, sizeof(key));
	ck_assert_int_eq(auth_seal(rpc_client_session_key(fx.c[W1]),
				   MOUNT_GRANT_KEY_LABEL, key[0],
				   sizeof(key[0])),
			 0);
	ck_assert_int_eq(auth_seal(rpc_client_session_key(fx.c[W2]),
				   MOUNT_GRANT_KEY_LABEL, key[1],
				   sizeof(key[1])),
			 0);
	ck_assert_int_ne(memcmp(sealed[0], sealed[1], GRANT_SECRET_BYTES), 0);
	ck_assert_int_ne(memcmp(key[0], key[1], GRANT_SECRET_BYTES), 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_ne(memcmp(key[i], zero, GRANT_SECRET_BYTES), 0);
		ck_assert_int_ne(memcmp(key[i], sealed[i], GRANT_SECRET_BYTES),
				 0);
	}
	ck_assert_int_eq(refusals("kind"), 2);
}
END_TEST

START_TEST(test_auth_attack_copy_poisoning_under_other_client_id)
{
	McreplRpc__CopyStartRequest cs;
	McreplRpc__CopyEndRequest ce;
	ProtobufCMessage *r;
	uint64_t src = put_alice("k"),
		 dst = src == fx.seg[0] ? fx.seg[1] : fx.seg[0];
	size_t segs;
	uint64_t cap, used_before, used;

	figures(&segs, &cap, &used_before);
	mcrepl_rpc__copy_start_request__init(&cs);
	cs.client_id = W1_ID;
	cs.tenant = mut("t-alice");
	cs.key = mut("k");
	cs.source_segment_id = src;
	cs.target_segment_id = dst;
	r = call(ALICE, "CopyStart", &cs.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_kind",
		       "client principal 'alice' may not make worker calls");
	ck_assert_ptr_null(((McreplRpc__CopyStartResponse *)r)->target);
	freem(r);
	r = call(W2, "CopyStart", &cs.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_client_id",
		       not_w2s(W1_ID));
	ck_assert_uint_eq(((McreplRpc__CopyStartResponse *)r)->write_token, 0);
	freem(r);
	/* its own client id, but no task of its own */
	cs.client_id = W2_ID;
	cs.task_id = 77;
	r = call(W2, "CopyStart", &cs.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_task",
		       task_not_queued(77, W2_ID));
	freem(r);
	mcrepl_rpc__copy_end_request__init(&ce);
	ce.client_id = W1_ID;
	ce.tenant = mut("t-alice");
	ce.key = mut("k");
	r = call(W2, "CopyEnd", &ce.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_client_id",
		       not_w2s(W1_ID));
	freem(r);
	/* nothing changed: one replica, no space reserved */
	ck_assert_uint_eq(replicas_of("k"), 1);
	figures(&segs, &cap, &used);
	ck_assert_uint_eq(used, used_before);
	ck_assert_int_eq(refusals("client_id"), 2);
	ck_assert_int_eq(refusals("task"), 1);
}
END_TEST

/* Reads of t-alice/k until the master queues a dynamic copy. */
static void heat_until_task(void)
{
	McreplRpc__GetReplicaListRequest g;

	mcrepl_rpc__get_replica_list_request__init(&g);
	g.tenant = mut("t-alice");
	g.key = mut("k");
	for (struct test_wait w = test_wait_start(); test_wait_more(&w);) {
		McreplRpc__StatsResponse *s;
		bool queued;

		for (int i = 0; i < 10; i++)
			freem(call(ALICE, "GetReplicaList", &g.base));
		s = stats();
		queued =
		    metric_value(s->metrics_text, "mcrepl_master_tasks") == 1;
		freem(s);
		if (queued)
			return;
	}
	ck_abort_msg("no REPLICA_COPY task was queued");
}

START_TEST(test_auth_attack_steal_replica_copy_task)
{
	McreplRpc__FetchTasksRequest ft;
	McreplRpc__FetchTasksResponse *r;
	McreplRpc__DynamicReplicaCopyStartRequest ds;
	ProtobufCMessage *d;
	uint64_t src = put_alice("k");
	/* the source's worker runs the copy (store_dyn.c) */
	int victim = src == fx.seg[0] ? W1 : W2;
	int thief = victim == W1 ? W2 : W1;
	uint64_t victim_id = victim == W1 ? W1_ID : W2_ID;
	char why[160];

	heat_until_task();
	snprintf(why, sizeof(why),
		 "client_id %llu is not in principal '%s''s id space",
		 (unsigned long long)victim_id, fx.m.auth.names[thief]);
	mcrepl_rpc__fetch_tasks_request__init(&ft);
	ft.client_id = victim_id;
	r = (McreplRpc__FetchTasksResponse *)call(thief, "FetchTasks",
						  &ft.base);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_client_id", why);
	ck_assert_uint_eq(r->n_tasks, 0);
	freem(r);
	r = (McreplRpc__FetchTasksResponse *)call(ALICE, "FetchTasks",
						  &ft.base);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_kind",
		       "client principal 'alice' may not make worker calls");
	ck_assert_uint_eq(r->n_tasks, 0);
	freem(r);
	/* the victim still gets its task, unfetched until now */
	r = (McreplRpc__FetchTasksResponse *)call(victim, "FetchTasks",
						  &ft.base);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_tasks, 1);
	ck_assert_int_eq(r->tasks[0]->type,
			 MCREPL_RPC__TASK_TYPE__REPLICA_COPY);
	ck_assert_str_eq(r->tasks[0]->key, "k");
	/* and the thief cannot run it under the victim's id either */
	mcrepl_rpc__dynamic_replica_copy_start_request__init(&ds);
	ds.client_id = victim_id;
	ds.task_id = r->tasks[0]->task_id;
	ds.lease_id = r->tasks[0]->lease_id;
	ds.version = r->tasks[0]->version;
	ds.tenant = mut("t-alice");
	ds.key = mut("k");
	ds.source_segment_id = r->tasks[0]->source_segment_id;
	ds.target_segment_id = r->tasks[0]->target_segment_id;
	freem(r);
	d = call(thief, "DynamicReplicaCopyStart", &ds.base);
	assert_refused(d, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_client_id",
		       why);
	ck_assert_ptr_null(
	    ((McreplRpc__DynamicReplicaCopyStartResponse *)d)->target);
	freem(d);
	ck_assert_uint_eq(replicas_of("k"), 1);
	ck_assert_int_eq(refusals("client_id"), 2);
}
END_TEST

START_TEST(test_auth_attack_fake_huge_mount_on_other_host)
{
	McreplRpc__MountSegmentResponse *r;
	size_t segs;
	uint64_t cap, used;

	r = mount(W2, 0x4444, "host-a", 1ull << 63);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_host",
		       "worker 'w2' may not mount for host 'host-a'");
	ck_assert_uint_eq(r->grant_key, 0);
	freem(r);
	r = mount(W2, 0x4444, "host-b", 1ull << 63);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_capacity",
		       "segment of 9223372036854775808 bytes is above worker "
		       "'w2''s max_capacity 1073741824");
	freem(r);
	/* nor under w1's client id on its own host */
	r = mount(W2, W1_ID, "host-b", SEG_BYTES);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_client_id", not_w2s(W1_ID));
	freem(r);
	figures(&segs, &cap, &used);
	ck_assert_uint_eq(segs, 2);
	ck_assert_uint_eq(cap, 2ull * SEG_BYTES);
	/* a put still lands on the real segments only */
	put_alice("k");
	ck_assert_uint_eq(replicas_of("k"), 1);
	ck_assert_int_eq(refusals("host"), 1);
	ck_assert_int_eq(refusals("capacity"), 1);
}
END_TEST

/* Drain: a worker drains only the client id it mounted; a
 * host's drain needs the admin right. */
START_TEST(test_auth_drain_needs_the_owner_or_admin)
{
	McreplRpc__DrainRequest req;
	ProtobufCMessage *r;

	mcrepl_rpc__drain_request__init(&req);
	req.client_id = W1_ID;
	r = call(W2, "Drain", &req.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_client_id",
		       not_w2s(W1_ID));
	freem(r);
	r = call(W1, "Drain", &req.base);
	ck_assert_int_eq(result_of(r)->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(((McreplRpc__DrainResponse *)r)->segments, 1);
	freem(r);
	req.client_id = 0;
	req.host_id = mut("host-b");
	r = call(ALICE, "Drain", &req.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_right",
		       "Drain of a host needs the admin right; principal "
		       "'alice' lacks it");
	freem(r);
	r = call(ADMIN, "Drain", &req.base);
	ck_assert_int_eq(result_of(r)->code, MCREPL_RPC__CODE__OK);
	freem(r);
}
END_TEST

START_TEST(test_auth_attack_unmount_other_workers_segment)
{
	McreplRpc__UnmountSegmentRequest req;
	ProtobufCMessage *r;
	size_t segs;
	uint64_t cap, used;

	mcrepl_rpc__unmount_segment_request__init(&req);
	req.client_id = W1_ID;
	req.segment_id = fx.seg[0];
	r = call(W2, "UnmountSegment", &req.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_client_id",
		       not_w2s(W1_ID));
	freem(r);
	r = call(BOB, "UnmountSegment", &req.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_kind",
		       "client principal 'bob' may not make worker calls");
	freem(r);
	figures(&segs, &cap, &used);
	ck_assert_uint_eq(segs, 2);
	/* the owner may */
	r = call(W1, "UnmountSegment", &req.base);
	ck_assert_int_eq(result_of(r)->code, MCREPL_RPC__CODE__OK);
	freem(r);
	figures(&segs, &cap, &used);
	ck_assert_uint_eq(segs, 1);
}
END_TEST

static McreplRpc__HeartbeatResponse *beat(int who, uint64_t id)
{
	McreplRpc__HeartbeatRequest req;

	mcrepl_rpc__heartbeat_request__init(&req);
	req.client_id = id;
	return (McreplRpc__HeartbeatResponse *)call(who, "Heartbeat",
						    &req.base);
}

START_TEST(test_auth_attack_forged_heartbeats_keep_killed_worker)
{
	McreplRpc__StatsResponse *s;
	McreplRpc__HeartbeatResponse *r;

	/* w1 is "killed": it beats no more; w2 and alice forge its beats
	 * for longer than --client_ttl=1 while w2 keeps itself alive */
	for (int i = 0; i < 25; i++) {
		r = beat(W2, W1_ID);
		if (i == 0)
			assert_refused(&r->base,
				       MCREPL_RPC__CODE__PERMISSION_DENIED,
				       "auth_client_id", not_w2s(W1_ID));
		freem(r);
		r = beat(ALICE, W1_ID);
		if (i == 0)
			assert_refused(&r->base,
				       MCREPL_RPC__CODE__PERMISSION_DENIED,
				       "auth_kind",
				       "client principal 'alice' may not "
				       "make worker calls");
		freem(r);
		r = beat(W2, W2_ID);
		ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
		freem(r);
		harness_sleep_ms(100);
	}
	/* w1 is dropped (w2 beating on) */
	for (struct test_wait w = test_wait_start(); test_wait_more(&w);) {
		size_t n;

		freem(beat(W2, W2_ID));
		s = stats();
		n = s->n_segments;
		freem(s);
		if (n == 1)
			break;
	}
	s = stats();
	ck_assert_uint_eq(s->n_segments, 1);
	ck_assert_uint_eq(s->segments[0]->client_id, W2_ID);
	freem(s);
	/* once w1's id is forgotten, the forger is still refused: the id
	 * stays w1's */
	r = beat(W2, W1_ID);
	assert_refused(&r->base, MCREPL_RPC__CODE__PERMISSION_DENIED,
		       "auth_client_id", not_w2s(W1_ID));
	freem(r);
}
END_TEST

START_TEST(test_auth_admin_calls_need_admin)
{
	McreplRpc__WarmupRequest w;
	McreplRpc__SubmitReplicaActionProposalRequest pr;
	McreplRpc__StatsRequest sr;
	McreplRpc__StatsResponse *s;
	ProtobufCMessage *r;

	mcrepl_rpc__warmup_request__init(&w);
	w.domain = mut("default");
	r = call(ALICE, "Warmup", &w.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_right",
		       "Warmup needs the admin right; principal 'alice' lacks "
		       "it");
	freem(r);
	mcrepl_rpc__submit_replica_action_proposal_request__init(&pr);
	pr.proposal_id = mut("p1");
	pr.tenant = mut("t-alice");
	pr.key = mut("k");
	r = call(ALICE, "SubmitReplicaActionProposal", &pr.base);
	assert_refused(r, MCREPL_RPC__CODE__PERMISSION_DENIED, "auth_right",
		       "SubmitReplicaActionProposal needs the admin right; "
		       "principal 'alice' lacks it");
	ck_assert_ptr_null(
	    ((McreplRpc__SubmitReplicaActionProposalResponse *)r)->lease);
	freem(r);
	/* the admin passes authorization (the RPC itself is off here) */
	r = call(ADMIN, "SubmitReplicaActionProposal", &pr.base);
	ck_assert_int_eq(result_of(r)->code, MCREPL_RPC__CODE__UNAVAILABLE);
	freem(r);
	ck_assert_int_eq(refusals("right"), 2);
	/* Stats without admin: the totals, no segments (client ids) */
	mcrepl_rpc__stats_request__init(&sr);
	s = (McreplRpc__StatsResponse *)call(BOB, "Stats", &sr.base);
	ck_assert_int_eq(s->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(s->n_segments, 0);
	ck_assert_str_eq(s->metrics_text, "");
	ck_assert_uint_eq(s->capacity, 2ull * SEG_BYTES);
	freem(s);
	s = stats();
	ck_assert_uint_eq(s->n_segments, 2);
	freem(s);
}
END_TEST

/* ---- the handshake -------------------------------------------------------- */

START_TEST(test_auth_wrong_secret_is_refused)
{
	struct auth_cred bad = fx.m.cred[ALICE];
	char err[256];
	int st;

	bad.secret[0] ^= 1;
	ck_assert_ptr_null(open_as(&bad, &st, err, sizeof(err)));
	ck_assert_int_eq(st, MCREPL_RPC__CODE__UNAUTHENTICATED);
	ck_assert_str_eq(err, "authentication refused: authentication failed");
	/* an unknown name fails with the same words */
	snprintf(bad.name, sizeof(bad.name), "mallory");
	ck_assert_ptr_null(open_as(&bad, &st, err, sizeof(err)));
	ck_assert_int_eq(st, MCREPL_RPC__CODE__UNAUTHENTICATED);
	ck_assert_str_eq(err, "authentication refused: authentication failed");
	ck_assert_int_eq(failures("bad_proof"), 1);
	ck_assert_int_eq(failures("unknown_principal"), 1);
	ck_assert_int_eq(metric("mcrepl_master_auth_handshakes_total"), NP);
}
END_TEST

struct acall {
	struct event_base *base;
	int status;
	char error[256];
	bool done;
};

static void on_acall(int st, ProtobufCMessage *resp, const char *error,
		     void *arg)
{
	struct acall *a = arg;

	a->status = st;
	snprintf(a->error, sizeof(a->error), "%s", error);
	a->done = true;
	if (resp)
		freem(resp);
	event_base_loopbreak(a->base);
}

/* One Exist through the async client (the worker's) as cred. */
static struct acall acall_exist(const struct auth_cred *cred)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;
	int m = rpc_method_index(d, "Exist");
	struct acall a = {event_base_new(), -100, "", false};
	McreplRpc__ExistRequest req;
	rpc_client_config cfg;
	rpc_aclient *c;
	char addr[64], err[128];

	rpc_client_config_init(&cfg);
	cfg.cred = cred;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", fx.m.port);
	c = rpc_aclient_create(a.base, addr, &cfg, err, sizeof(err));
	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__exist_request__init(&req);
	req.tenant = mut("t-alice");
	req.key = mut("k");
	ck_assert_int_eq(rpc_aclient_call(c, (uint32_t)m, &req.base,
					  d->methods[m].output, on_acall, &a),
			 RPC_OK);
	event_base_dispatch(a.base);
	ck_assert(a.done);
	rpc_aclient_destroy(c);
	event_base_free(a.base);
	return a;
}

START_TEST(test_auth_async_client_authenticates_before_calling)
{
	struct auth_cred bad = fx.m.cred[ALICE];
	struct acall a = acall_exist(&fx.m.cred[ALICE]);

	ck_assert_int_eq(a.status, RPC_OK);
	bad.secret[3] ^= 1;
	a = acall_exist(&bad);
	ck_assert_int_eq(a.status, MCREPL_RPC__CODE__UNAUTHENTICATED);
	ck_assert_str_eq(a.error,
			 "authentication refused: authentication failed");
	ck_assert_int_eq(failures("bad_proof"), 1);
	ck_assert_int_eq(failures("no_handshake"), 0);
}
END_TEST

START_TEST(test_auth_no_handshake_is_refused)
{
	McreplRpc__ExistRequest req;
	rpc_client *c;
	char err[256];
	int st;

	c = open_as(NULL, &st, err, sizeof(err));
	ck_assert_int_eq(st, RPC_OK); /* TCP only */
	mcrepl_rpc__exist_request__init(&req);
	req.tenant = mut("t-alice");
	req.key = mut("k");
	ck_assert_ptr_null(harness_call(c, "Exist", &req.base, &st));
	ck_assert_int_eq(st, MCREPL_RPC__CODE__UNAUTHENTICATED);
	rpc_client_close(c);
	ck_assert_int_eq(failures("no_handshake"), 1);
}
END_TEST

static int raw_connect(void)
{
	struct sockaddr_in sa = {0};
	struct timeval tv = {3, 0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_family = AF_INET;
	sa.sin_port = htons(fx.m.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void raw_send(int fd, const uint8_t *buf, size_t len)
{
	ck_assert_int_eq(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

START_TEST(test_auth_replayed_handshake_is_refused)
{
	struct rpc_auth_client a;
	McreplRpc__Envelope *env;
	uint8_t *hello, *proof, *none;
	size_t hello_len, proof_len, none_len;
	char err[256];
	int fd = raw_connect();

	/* a genuine handshake, recorded */
	ck_assert_int_eq(
	    rpc_auth_client_hello(&a, &fx.m.cred[ALICE], &hello, &hello_len),
	    0);
	raw_send(fd, hello, hello_len);
	env = raw_read_frame(fd);
	ck_assert_int_eq(
	    rpc_auth_client_step(&a, env, &proof, &proof_len, err, sizeof(err)),
	    0);
	mcrepl_rpc__envelope__free_unpacked(env, NULL);
	raw_send(fd, proof, proof_len);
	env = raw_read_frame(fd);
	ck_assert_int_eq(
	    rpc_auth_client_step(&a, env, &none, &none_len, err, sizeof(err)),
	    0);
	ck_assert_ptr_null(none);
	mcrepl_rpc__envelope__free_unpacked(env, NULL);
	close(fd);
	/* replayed on a new connection: a new server nonce, so the old
	 * proof fails and the connection closes */
	fd = raw_connect();
	raw_send(fd, hello, hello_len);
	env = raw_read_frame(fd);
	ck_assert_int_eq(env->status, MCREPL_RPC__CODE__OK);
	mcrepl_rpc__envelope__free_unpacked(env, NULL);
	raw_send(fd, proof, proof_len);
	env = raw_read_frame(fd);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env->status, MCREPL_RPC__CODE__UNAUTHENTICATED);
	ck_assert_str_eq(env->error, RPC_AUTH_FAILED_TEXT);
	mcrepl_rpc__envelope__free_unpacked(env, NULL);
	ck_assert_ptr_null(raw_read_frame(fd)); /* closed */
	close(fd);
	free(hello);
	free(proof);
	ck_assert_int_eq(failures("bad_proof"), 1);
}
END_TEST

START_TEST(test_auth_large_frame_before_handshake_is_refused)
{
	/* 1 MiB announced: no input budget for an unauthenticated peer */
	const uint8_t prefix[4] = {0x00, 0x10, 0x00, 0x00};
	McreplRpc__Envelope *env;
	int fd = raw_connect();

	raw_send(fd, prefix, sizeof(prefix));
	env = raw_read_frame(fd);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env->status, MCREPL_RPC__CODE__FRAME_TOO_LARGE);
	ck_assert_str_eq(env->error,
			 "frame exceeds 4096 bytes (before authentication)");
	mcrepl_rpc__envelope__free_unpacked(env, NULL);
	ck_assert_ptr_null(raw_read_frame(fd));
	close(fd);
	ck_assert_int_eq(failures("malformed"), 1);
}
END_TEST

START_TEST(test_auth_connection_closed_at_handshake_deadline)
{
	uint8_t byte;
	int64_t t0 = net_now_ms();
	int fd = raw_connect();

	/* nothing sent: closed after --auth_timeout_ms=2000 */
	ck_assert_int_eq(recv(fd, &byte, 1, 0), 0);
	ck_assert_int_ge(net_now_ms() - t0, 1950);
	close(fd);
	ck_assert_int_eq(failures("timeout"), 1);
}
END_TEST

START_TEST(test_auth_master_without_auth_cannot_prove_itself)
{
	struct proc plain;
	rpc_client_config cfg;
	rpc_client *c = NULL;
	char addr[64], err[256];

	ck_assert_int_eq(master_start(&plain, NULL), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%llu",
		 (unsigned long long)proc_field(&plain, "rpc_port"));
	rpc_client_config_init(&cfg);
	cfg.cred = &fx.m.cred[ALICE];
	ck_assert_int_eq(rpc_client_open(&c, addr, &cfg, err, sizeof(err)),
			 MCREPL_RPC__CODE__UNAUTHENTICATED);
	ck_assert_str_eq(err, "the master does not authenticate (started "
			      "without --auth_file): refusing to use it with "
			      "credentials");
	ck_assert_int_eq(proc_stop(&plain), 0);
}
END_TEST

/* A real worker as w1 (host-a) with its data port on addr; with or
 * without w1's credential. 0 once it is mounted (its ready line). */
static int start_worker_on(const char *addr, bool cred, struct proc *p)
{
	char bin[512], master[80], data[80];
	const char *argv[] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
			      master,
			      data,
			      "--host_id=host-a",
			      "--segment_size=4M",
			      cred ? fx.m.auth.principal_flag[W1] : NULL,
			      fx.m.auth.secret_flag[W1],
			      NULL};

	snprintf(master, sizeof(master), "--master=127.0.0.1:%u", fx.m.port);
	snprintf(data, sizeof(data), "--data_address=%s", addr);
	return proc_start(p, (char *const *)(uintptr_t)argv,
			  "mcrepl-worker ready", test_hang_ms());
}

START_TEST(test_auth_protected_mode_refuses_public_bind)
{
	static const char *const pub[] = {"--rpc_address=0.0.0.0", NULL};
	static const char *const insecure[] = {"--rpc_address=0.0.0.0",
					       "--insecure", NULL};
	char bin[512], flag[400];
	const char *argv[] = {harness_bin("mcrepl-master", bin, sizeof(bin)),
			      "--rpc_address=0.0.0.0",
			      "--rpc_port=0",
			      "--metrics_port=0",
			      flag,
			      NULL};
	struct proc p;

	/* master_start passes --rpc_address=127.0.0.1 first; ours wins */
	ck_assert_int_ne(master_start(&p, pub), 0);
	ck_assert_int_eq(master_start(&p, insecure), 0);
	ck_assert_int_eq(proc_stop(&p), 0);
	/* with an auth file, the network is fine */
	snprintf(flag, sizeof(flag), "--auth_file=%s", fx.m.auth.file);
	ck_assert_int_eq(proc_start(&p, (char *const *)(uintptr_t)argv,
				    "mcrepl-master ready", test_hang_ms()),
			 0);
	ck_assert_int_eq(proc_stop(&p), 0);
	/* a worker: a public data port needs a credential */
	ck_assert_int_ne(start_worker_on("0.0.0.0", false, &p), 0);
	ck_assert_int_eq(start_worker_on("0.0.0.0", true, &p), 0);
	ck_assert_int_eq(proc_stop(&p), 0);
}
END_TEST

START_TEST(test_auth_file_errors_name_the_line)
{
	struct auth_table *t = NULL;
	char err[256];

	ck_assert_int_eq(auth_table_parse("client a secret=0123456789abcdef "
					  "tenants=* rights=read\n"
					  "client b secret=short tenants=* "
					  "rights=read\n",
					  "x.conf", &t, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "auth file x.conf line 2: secret must be "
			      "16..256 printable characters without spaces");
	ck_assert_int_eq(auth_table_parse("worker w secret=0123456789abcdef "
					  "hosts=a domains=* max_capacity=1G "
					  "rights=read\n",
					  "x.conf", &t, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err,
			 "auth file x.conf line 1: unknown key 'rights' for a "
			 "worker (secret or auth=cert, hosts, domains, "
			 "max_capacity)");
	ck_assert_int_eq(auth_table_parse("client c auth=cert "
					  "secret=0123456789abcdef tenants=* "
					  "rights=read\n",
					  "x.conf", &t, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "auth file x.conf line 1: give secret= or "
			      "auth=cert, not both");
	ck_assert_int_eq(auth_table_parse("client c auth=password tenants=* "
					  "rights=read\n",
					  "x.conf", &t, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, "auth file x.conf line 1: auth= takes 'cert' "
			      "only (or give secret=)");
	ck_assert_int_eq(auth_table_parse("client c auth=cert tenants=* "
					  "rights=read\n",
					  "x.conf", &t, err, sizeof(err)),
			 0);
	ck_assert(t->p[0].cert && t->p[0].secret_len == 0);
	auth_table_free(t);
	t = NULL;
	ck_assert_int_eq(
	    auth_table_parse("# c\n\nclient a "
			     "secret=0123456789abcdef tenants=t1,t2 "
			     "rights=read,admin\n",
			     "x.conf", &t, err, sizeof(err)),
	    0);
	ck_assert_uint_eq(t->n, 1);
	ck_assert(auth_tenant_ok(&t->p[0], "t2"));
	ck_assert(!auth_tenant_ok(&t->p[0], "t"));
	ck_assert_uint_eq(t->p[0].rights, AUTH_READ | AUTH_ADMIN);
	auth_table_free(t);
	/* a file others may read is refused */
	chmod(fx.m.auth.file, 0644);
	ck_assert_int_eq(auth_table_load(fx.m.auth.file, &t, err, sizeof(err)),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "others may access it (mode 0644)"));
	chmod(fx.m.auth.file, 0600);
}
END_TEST

/* ---- the worker facing refusals no retry changes ---------------- */

/* Runs mcrepl-worker as w1 with flags against fx's master for at most 20
 * s, its stderr in <dir>/w.err: its exit status (124: still running). */
static int worker_run(const char *dir, const char *flags)
{
	char bin[512], cmd[2600];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "timeout 20 %s --master=127.0.0.1:%u --segment_size=16M "
		 "--metrics_port=-1 --principal=w1 %s 2>%s/w.err",
		 harness_bin("mcrepl-worker", bin, sizeof(bin)), fx.m.port,
		 flags, dir);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* The whole file at path (caller frees), "" when absent. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	ck_assert_ptr_nonnull(buf);
	if (f) {
		n = fread(buf, 1, 65535, f);
		buf[n] = '\0';
		fclose(f);
	}
	return buf;
}

static int lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/* The master's log line that starts with `start` with its peer's port
 * replaced by PORT ("" when none), the one after `after` when given. */
static const char *log_line_of(const char *log, const char *after,
			       const char *start)
{
	static char line[600];
	const char *at = after ? strstr(log, after) : log, *p, *end;
	size_t n;

	at = at ? strstr(at, start) : NULL;
	if (!at)
		return "";
	end = strchr(at, '\n');
	n = end ? (size_t)(end - at) : strlen(at);
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, at, n);
	line[n] = '\0';
	p = strstr(line, "127.0.0.1:");
	if (p) { /* the peer's port varies */
		char rest[600];
		const char *q = p + strlen("127.0.0.1:");

		q += strspn(q, "0123456789");
		snprintf(rest, sizeof(rest), "%s", q);
		snprintf(line + (p - line) + strlen("127.0.0.1:"),
			 sizeof(line) - (size_t)(p - line) -
			     strlen("127.0.0.1:"),
			 "PORT%s", rest);
	}
	return line;
}

/* A wrong secret, a host the auth file does not allow, an unknown
 * principal: the worker exits 78 (EX_CONFIG, which the shipped units do
 * not restart; it exited 1, and systemd restarted it every 2 s forever)
 * at once with one line naming the flags to fix (it used to retry every
 * second forever); the master's log names the principal, its address and
 * the reason (it logged nothing for a refused mount). */
START_TEST(test_auth_worker_exits_on_permanent_refusal)
{
	char dir[] = "/tmp/mcrepl-wexit-XXXXXX", flags[900], path[700];
	char w1[400], w2[400], *err, *mlog;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	setenv("MCREPL_TEST_LOG_DIR", dir, 1); /* the master's stderr */
	memset(&fx, 0, sizeof(fx));
	start(NULL);
	harness_auth_secret_file(&fx.m.auth, "w1", w1, sizeof(w1));
	harness_auth_secret_file(&fx.m.auth, "w2", w2, sizeof(w2));
	/* w2's secret is not w1's */
	snprintf(flags, sizeof(flags), "--host_id=host-a --secret_file=%s", w2);
	ck_assert_int_eq(worker_run(dir, flags), 78);
	snprintf(path, sizeof(path), "%s/w.err", dir);
	err = slurp(path);
	ck_assert_msg(strstr(err, "mcrepl-worker: error: mount of ") &&
			  strstr(err, "authentication failed") &&
			  strstr(err, "check --principal and --secret_file"),
		      "%s", err);
	ck_assert_int_eq(lines(strstr(err, "mcrepl-worker: error: ")), 1);
	free(err);
	/* host-b is w2's */
	snprintf(flags, sizeof(flags), "--host_id=host-b --secret_file=%s", w1);
	ck_assert_int_eq(worker_run(dir, flags), 78);
	err = slurp(path);
	ck_assert_msg(strstr(err, "mcrepl-worker: error: mount of ") &&
			  strstr(err, "host-b") &&
			  strstr(err, "must allow this --host_id"),
		      "%s", err);
	free(err);
	/* nobody is in no auth file (a second on: the handshake lines are
	 * rate-limited together) */
	harness_sleep_ms(1100);
	snprintf(flags, sizeof(flags),
		 "--host_id=host-a --principal=nobody --secret_file=%s", w1);
	ck_assert_int_eq(worker_run(dir, flags), 78);
	/* the cli names the flags to check, without a credential and with
	 * a wrong one */
	snprintf(flags, sizeof(flags),
		 "%s --master=127.0.0.1:%u exist k 2>%s/w.err",
		 harness_bin("mcrepl-cli", w1, sizeof(w1)), fx.m.port, dir);
	ck_assert_int_ne(system(flags), 0);
	snprintf(path, sizeof(path), "%s/w.err", dir);
	err = slurp(path);
	ck_assert_msg(strstr(err, "UNAUTHENTICATED") &&
			  strstr(err, "check --principal and --secret_file"),
		      "%s", err);
	free(err);
	snprintf(flags, sizeof(flags),
		 "%s --master=127.0.0.1:%u --principal=alice "
		 "--secret_file=%s exist k 2>%s/w.err",
		 harness_bin("mcrepl-cli", w1, sizeof(w1)), fx.m.port, w2, dir);
	ck_assert_int_ne(system(flags), 0);
	err = slurp(path);
	ck_assert_msg(strstr(err, "authentication failed") &&
			  strstr(err, "check --principal and --secret_file"),
		      "%s", err);
	free(err);
	ck_assert_int_eq(proc_stop(&fx.m.master), 0);
	snprintf(path, sizeof(path), "%s/mcrepl-master.log", dir);
	mlog = slurp(path);
	ck_assert_str_eq(
	    log_line_of(mlog, NULL, "mcrepl-master: warn: rpc_server: "),
	    "mcrepl-master: warn: rpc_server: 127.0.0.1:PORT: "
	    "authentication failed for principal 'w1' "
	    "(bad_proof)");
	ck_assert_str_eq(
	    log_line_of(mlog, NULL, "mcrepl-master: warn: refused "),
	    "mcrepl-master: warn: refused MountSegment from principal 'w1' "
	    "at 127.0.0.1:PORT: worker 'w1' may not mount for host 'host-b' "
	    "(auth_host)");
	ck_assert_str_eq(log_line_of(mlog, "(auth_host)",
				     "mcrepl-master: warn: rpc_server: "),
			 "mcrepl-master: warn: rpc_server: 127.0.0.1:PORT: "
			 "authentication failed for principal 'nobody' "
			 "(unknown_principal)");
	free(mlog);
	for (int i = 0; i < NP; i++)
		rpc_client_close(fx.c[i]);
	harness_auth_cleanup(&fx.m.auth);
	snprintf(flags, sizeof(flags), "rm -rf %s", dir);
	ck_assert_int_eq(system(flags), 0);
}
END_TEST

Suite *make_auth_suite(void)
{
	Suite *s = suite_create("auth");
	TCase *tc = tcase_create("auth");
	TCase *ttl = tcase_create("auth_ttl");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup_mounted, teardown);
	tcase_add_test(tc, test_auth_attack_other_tenant_get_and_remove);
	tcase_add_test(tc, test_auth_attack_mount_as_client_gets_no_grant_key);
	tcase_add_test(tc,
		       test_auth_attack_copy_poisoning_under_other_client_id);
	tcase_add_test(tc, test_auth_attack_steal_replica_copy_task);
	tcase_add_test(tc, test_auth_attack_fake_huge_mount_on_other_host);
	tcase_add_test(tc, test_auth_attack_unmount_other_workers_segment);
	tcase_add_test(tc, test_auth_drain_needs_the_owner_or_admin);
	tcase_add_test(tc, test_auth_admin_calls_need_admin);
	tcase_add_test(tc, test_auth_wrong_secret_is_refused);
	tcase_add_test(tc, test_auth_no_handshake_is_refused);
	tcase_add_test(tc, test_auth_async_client_authenticates_before_calling);
	tcase_add_test(tc, test_auth_replayed_handshake_is_refused);
	tcase_add_test(tc, test_auth_connection_closed_at_handshake_deadline);
	tcase_add_test(tc, test_auth_large_frame_before_handshake_is_refused);
	tcase_add_test(tc, test_auth_master_without_auth_cannot_prove_itself);
	tcase_add_test(tc, test_auth_protected_mode_refuses_public_bind);
	tcase_add_test(tc, test_auth_file_errors_name_the_line);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ttl, 30);
	tcase_add_checked_fixture(ttl, setup_short_ttl, teardown);
	tcase_add_test(ttl,
		       test_auth_attack_forged_heartbeats_keep_killed_worker);
	suite_add_tcase(s, ttl);
	ttl = tcase_create("auth_worker_exit");
	tcase_set_timeout(ttl, 60);
	tcase_add_test(ttl, test_auth_worker_exits_on_permanent_refusal);
	suite_add_tcase(s, ttl);
	return s;
}
