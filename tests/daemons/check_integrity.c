/* Payload digests (docs/SECURITY.md "Payload digests"): a worker serving
 * other bytes under an object's valid stamp (the tag names the object's
 * identity, not its bytes) is caught by the reader, who hashes what it
 * read against the digest its writer gave the master with PutEnd.
 *
 *  - "forge": a real master (--integrity) and the test as the worker: its
 *    own data server in-process, two segments on two hosts, so it can
 *    rewrite a region with other bytes and a stamp that still checks
 *    (right identity, the master's tag, CRCs of the new bytes). One
 *    replica: the reader gets -ESTALE and the digest's reason, never the
 *    bytes; two: the other replica serves, the forged one counted. A
 *    PutEnd without a digest is refused REJECTED digest_required.
 *  - "auth": a real master with an auth file whose tenant line says
 *    integrity=on, a real worker: that tenant's puts need a digest (the
 *    store client sends it when PutStart says so), another tenant's not;
 *    the auth file's integrity= errors. */
#include <check.h>
#include <errno.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "dsfix.h"
#include "harness.h"
#include "mwfix.h"
#include "stamp.h"
#include "store_client.h"

Suite *make_integrity_suite(void);

#define SEG_BYTES (1u << 20)
#define OBJ_BYTES 4096u
#define NSEG 2
#define WORKER_ID 0x1e9u
#define REFUSED                                                                \
	"tenant 'alice' requires a payload digest with PutEnd "                \
	"(integrity=on)"
#define MISMATCH "payload digest mismatch (bytes not the ones written)"

static struct {
	struct mwfix m;
	struct dsfix d;
	const struct auth_cred *cred; /* the clients' (NULL: none) */
	uint8_t *seg[NSEG];
	uint64_t seg_id[NSEG];
	uint8_t obj[OBJ_BYTES];
} fx;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static void fill_obj(void)
{
	for (size_t i = 0; i < OBJ_BYTES; i++)
		fx.obj[i] = (uint8_t)(i * 131 + 7);
}

/* A master with --integrity; the in-process data server's segment i
 * mounted there as host-i's worker would, for each i. */
static void setup_forge(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    "--client_ttl=60", "--integrity",
					    NULL};
	const struct mwfix_opts o = {.master_flags = flags};
	char host[16], name[16];

	memset(&fx, 0, sizeof(fx));
	fill_obj();
	mwfix_start(&fx.m, &o);
	dsfix_create(&fx.d);
	for (int i = 0; i < NSEG; i++) {
		fx.seg[i] = calloc(1, SEG_BYTES);
		ck_assert_ptr_nonnull(fx.seg[i]);
		snprintf(host, sizeof(host), "host-%d", i);
		snprintf(name, sizeof(name), "seg-%d", i);
		/* before the loop runs: not shared yet */
		fx.seg_id[i] =
		    dsfix_mount(&fx.d, fx.m.port, WORKER_ID + (uint64_t)i, host,
				name, fx.seg[i], SEG_BYTES);
	}
	dsfix_run(&fx.d);
}

static void teardown_forge(void)
{
	dsfix_destroy(&fx.d);
	for (int i = 0; i < NSEG; i++)
		free(fx.seg[i]);
	mwfix_stop(&fx.m);
}

static store_client *client(const char *tenant, uint32_t replicas)
{
	struct store_client_config cfg;

	store_client_config_init(&cfg);
	cfg.replicas = replicas;
	cfg.hedge_ms = -1; /* replicas in the list's order, one at a time */
	cfg.cred = fx.cred;
	return mwfix_client(&fx.m, tenant, &cfg);
}

static long long metric(const char *name)
{
	return mwfix_metric(&fx.m, name);
}

/* What a worker can do to its own region of replica k of list r: other
 * bytes under a stamp naming the same object with the master's tag and
 * the new bytes' CRCs, so the stamp still checks. */
static void forge(const McreplRpc__GetReplicaListResponse *r, size_t k)
{
	const McreplRpc__Replica *rep = r->replicas[k];
	int i = rep->segment_id == fx.seg_id[0] ? 0 : 1;
	uint8_t *region = fx.seg[i] + rep->offset;
	struct stamp_id id = {
	    .incarnation = r->incarnation,
	    .object_id = r->version,
	    .key_hash = stamp_key_hash("alice", 5, r->key, strlen(r->key)),
	    .length = r->size,
	    .tag = rep->stamp_tag,
	};

	ck_assert_uint_eq(rep->segment_id, fx.seg_id[i]);
	ck_assert_uint_ne(id.tag, 0);
	memset(region + STAMP_BYTES, 0xee, OBJ_BYTES);
	stamp_write(region, &id, region + STAMP_BYTES);
	ck_assert_int_eq(
	    stamp_check(region, region + STAMP_BYTES, OBJ_BYTES, &id),
	    STAMP_OK);
}

/* The finding: one replica, its worker serves other bytes under the
 * object's valid stamp. The get fails with the digest's reason (both
 * lists tried), never returns a byte; no stamp was refused. */
START_TEST(test_attack_forged_payload_under_valid_stamp)
{
	store_client *alice = client("alice", 1);
	McreplRpc__GetReplicaListResponse *r = NULL;
	void *buf = (void *)1;
	uint64_t len = 1;

	ck_assert_msg(store_client_put(alice, "photo", fx.obj, OBJ_BYTES) == 0,
		      "%s", store_client_error(alice));
	ck_assert_int_eq(store_client_get_list(alice, "photo", &r), 0);
	ck_assert_uint_eq(r->n_replicas, 1);
	forge(r, 0);
	ck_assert_int_eq(store_client_get(alice, "photo", &buf, &len, NULL),
			 -ESTALE);
	ck_assert_ptr_null(buf);
	ck_assert_uint_eq(len, 0);
	ck_assert_msg(strstr(store_client_error(alice), MISMATCH), "%s",
		      store_client_error(alice));
	ck_assert_uint_eq(store_client_digest_mismatches(alice), 2);
	ck_assert_uint_eq(store_client_stale_reads(alice), 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	store_client_close(alice);
}
END_TEST

/* Two replicas, the first in the reader's order forged: the second one
 * serves the written bytes; one mismatch counted. */
START_TEST(test_forged_replica_next_replica_serves)
{
	store_client *alice = client("alice", 2);
	McreplRpc__GetReplicaListResponse *r = NULL;
	struct store_read_info info;
	uint8_t buf[OBJ_BYTES];

	ck_assert_msg(store_client_put(alice, "photo", fx.obj, OBJ_BYTES) == 0,
		      "%s", store_client_error(alice));
	ck_assert_int_eq(store_client_get_list(alice, "photo", &r), 0);
	ck_assert_uint_eq(r->n_replicas, 2);
	forge(r, 0);
	ck_assert_msg(store_client_read_list(alice, r, buf, &info) == 0, "%s",
		      store_client_error(alice));
	ck_assert_mem_eq(buf, fx.obj, OBJ_BYTES);
	ck_assert_uint_eq(info.tried, 2);
	ck_assert_uint_eq(info.segment_id, r->replicas[1]->segment_id);
	ck_assert_uint_eq(store_client_digest_mismatches(alice), 1);
	ck_assert_uint_eq(store_client_stale_reads(alice), 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	store_client_close(alice);
}
END_TEST

/* PutStart of alice/key, never written: the reply (caller frees). */
static McreplRpc__PutStartResponse *
put_start(rpc_client *rc, const char *tenant, const char *key)
{
	McreplRpc__PutStartRequest req;
	McreplRpc__PutStartResponse *r;

	mcrepl_rpc__put_start_request__init(&req);
	req.tenant = mut(tenant);
	req.key = mut(key);
	req.size = OBJ_BYTES;
	req.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(rc, "PutStart",
							&req.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	return r;
}

/* PutEnd with digest[0..len); the Result's code, reason and message. */
static McreplRpc__Code put_end(rpc_client *rc, const char *tenant,
			       const char *key, uint64_t version,
			       const uint8_t *digest, size_t len, char *reason,
			       char *message)
{
	McreplRpc__PutEndRequest req;
	McreplRpc__PutEndResponse *r;
	McreplRpc__Code code;

	mcrepl_rpc__put_end_request__init(&req);
	req.tenant = mut(tenant);
	req.key = mut(key);
	req.version = version;
	req.digest.data = (uint8_t *)(uintptr_t)digest;
	req.digest.len = len;
	r = (McreplRpc__PutEndResponse *)harness_call(rc, "PutEnd", &req.base,
						      NULL);
	ck_assert_ptr_nonnull(r);
	code = r->result->code;
	snprintf(reason, 64, "%s", r->result->reason);
	snprintf(message, 256, "%s", r->result->message);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return code;
}

static McreplRpc__GetReplicaListResponse *
get_list(rpc_client *rc, const char *tenant, const char *key)
{
	McreplRpc__GetReplicaListRequest req;
	McreplRpc__GetReplicaListResponse *r;

	mcrepl_rpc__get_replica_list_request__init(&req);
	req.tenant = mut(tenant);
	req.key = mut(key);
	r = (McreplRpc__GetReplicaListResponse *)harness_call(
	    rc, "GetReplicaList", &req.base, NULL);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* BatchGetReplicaList of alice's k and a missing key: k's entry carries
 * digest, the other none. */
static void assert_batch_digest(rpc_client *rc, const uint8_t *digest)
{
	McreplRpc__BatchGetReplicaListRequest req;
	McreplRpc__BatchGetReplicaListResponse *r;
	char *keys[] = {mut("k"), mut("none")};

	mcrepl_rpc__batch_get_replica_list_request__init(&req);
	req.tenant = mut("alice");
	req.keys = keys;
	req.n_keys = 2;
	r = (McreplRpc__BatchGetReplicaListResponse *)harness_call(
	    rc, "BatchGetReplicaList", &req.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->n_entries, 2);
	ck_assert_uint_eq(r->entries[0]->digest.len, 32);
	ck_assert_mem_eq(r->entries[0]->digest.data, digest, 32);
	ck_assert_int_eq(r->entries[1]->result->code,
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert_uint_eq(r->entries[1]->digest.len, 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

/* --integrity: PutStart says a digest is required; a PutEnd without one
 * is refused REJECTED digest_required (counted) and leaves the put
 * unreadable; one of 5 bytes is INVALID_ARGUMENT; a 32-byte one is kept
 * and given to readers as sent (GetReplicaList, BatchGetReplicaList). */
START_TEST(test_put_without_digest_refused)
{
	rpc_client *rc = harness_client(fx.m.port);
	McreplRpc__PutStartResponse *ps = put_start(rc, "alice", "k");
	McreplRpc__GetReplicaListResponse *gl;
	uint8_t digest[32] = {0};
	char reason[64], msg[256];

	ck_assert(ps->digest_required);
	ck_assert_int_eq(
	    put_end(rc, "alice", "k", ps->version, NULL, 0, reason, msg),
	    MCREPL_RPC__CODE__REJECTED);
	ck_assert_str_eq(reason, "digest_required");
	ck_assert_str_eq(msg, REFUSED);
	ck_assert_int_eq(metric("mcrepl_master_put_digest_refused_total"), 1);
	gl = get_list(rc, "alice", "k");
	ck_assert_int_eq(gl->result->code, MCREPL_RPC__CODE__NOT_FOUND);
	protobuf_c_message_free_unpacked(&gl->base, NULL);
	ck_assert_int_eq(
	    put_end(rc, "alice", "k", ps->version, digest, 5, reason, msg),
	    MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_str_eq(msg, "digest of 5 bytes (SHA-256: 32)");
	SHA256(fx.obj, OBJ_BYTES, digest);
	ck_assert_int_eq(
	    put_end(rc, "alice", "k", ps->version, digest, 32, reason, msg),
	    MCREPL_RPC__CODE__OK);
	gl = get_list(rc, "alice", "k");
	ck_assert_int_eq(gl->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(gl->digest.len, 32);
	ck_assert_mem_eq(gl->digest.data, digest, 32);
	ck_assert_int_eq(metric("mcrepl_master_put_digests_total"), 1);
	protobuf_c_message_free_unpacked(&gl->base, NULL);
	assert_batch_digest(rc, digest);
	protobuf_c_message_free_unpacked(&ps->base, NULL);
	rpc_client_close(rc);
}
END_TEST

/* ---- an auth file's tenant line ---------------------------------------- */

static const char *const principals[] = {
    "worker w1 hosts=host-a domains=* max_capacity=1G",
    "client app tenants=secure,plain rights=read,write",
    NULL,
};

static void setup_auth(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    NULL};
	const struct mwfix_opts o = {
	    .principals = principals,
	    .auth_text = "tenant secure integrity=on\n",
	    .master_flags = flags,
	    .segment_size = "1M",
	    .worker_principal = "w1",
	    .wait_capacity = SEG_BYTES,
	};

	memset(&fx, 0, sizeof(fx));
	fill_obj();
	mwfix_start(&fx.m, &o);
	fx.cred = mwfix_cred(&fx.m, "app");
}

static void teardown_auth(void)
{
	ck_assert_int_eq(mwfix_stop(&fx.m), 0);
}

/* tenant secure integrity=on: PutStart says so and a PutEnd without a
 * digest is refused; the store client sends one, as PutStart asks, and
 * the master gives it to readers. Tenant plain (no line, no --integrity): none required. */
START_TEST(test_tenant_line_requires_digest)
{
	rpc_client *rc = harness_client_as(fx.m.port, fx.cred);
	McreplRpc__PutStartResponse *ps;
	McreplRpc__GetReplicaListResponse *gl;
	store_client *secure = client("secure", 1), *plain = client("plain", 1);
	uint8_t digest[32] = {0};
	char reason[64], msg[256];

	ck_assert_ptr_nonnull(rc);
	ps = put_start(rc, "secure", "raw");
	ck_assert(ps->digest_required);
	ck_assert_int_eq(
	    put_end(rc, "secure", "raw", ps->version, NULL, 0, reason, msg),
	    MCREPL_RPC__CODE__REJECTED);
	ck_assert_str_eq(reason, "digest_required");
	ck_assert_str_eq(msg, "tenant 'secure' requires a payload digest with "
			      "PutEnd (integrity=on)");
	protobuf_c_message_free_unpacked(&ps->base, NULL);
	ps = put_start(rc, "plain", "raw");
	ck_assert(!ps->digest_required);
	ck_assert_int_eq(
	    put_end(rc, "plain", "raw", ps->version, NULL, 0, reason, msg),
	    MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&ps->base, NULL);

	ck_assert_msg(store_client_put(secure, "obj", fx.obj, OBJ_BYTES) == 0,
		      "%s", store_client_error(secure));
	gl = get_list(rc, "secure", "obj");
	SHA256(fx.obj, OBJ_BYTES, digest);
	ck_assert_uint_eq(gl->digest.len, 32);
	ck_assert_mem_eq(gl->digest.data, digest, 32);
	protobuf_c_message_free_unpacked(&gl->base, NULL);
	ck_assert_msg(store_client_put(plain, "obj", fx.obj, OBJ_BYTES) == 0,
		      "%s", store_client_error(plain));
	gl = get_list(rc, "plain", "obj");
	ck_assert_uint_eq(gl->digest.len, 0);
	protobuf_c_message_free_unpacked(&gl->base, NULL);
	ck_assert_int_eq(metric("mcrepl_master_put_digest_refused_total"), 1);
	ck_assert_int_eq(metric("mcrepl_master_put_digests_total"), 1);
	store_client_close(secure);
	store_client_close(plain);
	rpc_client_close(rc);
}
END_TEST

static void assert_bad(const char *text, const char *want)
{
	struct auth_table *t = NULL;
	char err[256];

	ck_assert_int_eq(auth_table_parse(text, "i.conf", &t, err, sizeof(err)),
			 -1);
	ck_assert_str_eq(err, want);
}

#define CLIENT "client a secret=0123456789abcdef tenants=* rights=write\n"

/* integrity= on a tenant line: on or off, once; a line needs quota= or
 * integrity=; a tenant's own setting wins over "tenant *", which wins
 * over the master's default; a line without quota= takes the "*" one's. */
START_TEST(test_auth_tenant_integrity)
{
	struct auth_table *t = NULL;
	char err[256];

	assert_bad(CLIENT "tenant t1 integrity=yes\n",
		   "auth file i.conf line 2: integrity 'yes' is not on or off");
	assert_bad(CLIENT "tenant t1 integrity=on integrity=off\n",
		   "auth file i.conf line 2: integrity given twice");
	assert_bad(CLIENT "tenant t1\n",
		   "auth file i.conf line 2: tenant 't1' needs quota= or "
		   "integrity=");
	ck_assert_int_eq(auth_table_parse(CLIENT "tenant * quota=2G "
						 "integrity=on\n"
						 "tenant t1 integrity=off\n"
						 "tenant t2 quota=1K\n",
					  "i.conf", &t, err, sizeof(err)),
			 0);
	ck_assert(!auth_tenant_integrity(t, "t1", true));
	ck_assert(auth_tenant_integrity(t, "t2", false));
	ck_assert(auth_tenant_integrity(t, "t3", false));
	ck_assert_uint_eq(auth_tenant_quota(t, "t1"), 2ull << 30);
	ck_assert_uint_eq(auth_tenant_quota(t, "t2"), 1024);
	auth_table_free(t);
	ck_assert_int_eq(auth_table_parse(CLIENT "tenant t1 integrity=on\n",
					  "i.conf", &t, err, sizeof(err)),
			 0);
	ck_assert(auth_tenant_integrity(t, "t1", false));
	ck_assert(!auth_tenant_integrity(t, "t2", false));
	ck_assert(auth_tenant_integrity(t, "t2", true));
	ck_assert(auth_tenant_integrity(NULL, "t2", true));
	ck_assert_uint_eq(auth_tenant_quota(t, "t1"), 0);
	auth_table_free(t);
}
END_TEST

Suite *make_integrity_suite(void)
{
	Suite *s = suite_create("integrity");
	TCase *tc = tcase_create("forge");
	TCase *ta = tcase_create("auth");
	TCase *tp = tcase_create("parse");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup_forge, teardown_forge);
	tcase_add_test(tc, test_attack_forged_payload_under_valid_stamp);
	tcase_add_test(tc, test_forged_replica_next_replica_serves);
	tcase_add_test(tc, test_put_without_digest_refused);
	suite_add_tcase(s, tc);
	tcase_set_timeout(ta, 60);
	tcase_add_checked_fixture(ta, setup_auth, teardown_auth);
	tcase_add_test(ta, test_tenant_line_requires_digest);
	suite_add_tcase(s, ta);
	tcase_add_test(tp, test_auth_tenant_integrity);
	suite_add_tcase(s, tp);
	return s;
}
