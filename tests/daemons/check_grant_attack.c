/* The data plane against an attacker holding one valid credential, on real
 * daemons over loopback:
 *  - a WRITE grant outlives its object (Remove, eviction): the region stays
 *    out of use until the grant expires, so the stale writer, even with a
 *    stamp naming the next object, never reaches another tenant's bytes;
 *  - a worker forges grants with the key its own mount gave it: another
 *    worker's segment refuses them (each segment has its own key).
 * Each attack asserts the attacker's status and reason and that the
 * victim reads its own bytes. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grant.h"
#include "harness.h"
#include "mwfix.h"
#include "rpcresult.h"
#include "stamp.h"
#include "store_client.h"
#include "wait.h"

Suite *make_grant_attack_suite(void);

#define BIG (64u << 10)	  /* the attacker's object */
#define SMALL (32u << 10) /* the victim's: fits the attacker's old region */
#define SEG_BYTES (1u << 20)

static struct {
	struct mwfix m;
	rpc_client *rc; /* the attacker's own connection */
	uint8_t small[SMALL];
} fx;

/* Eviction runs above half a segment; read leases are short (a read
 * object may be evicted soon after). WRITE grants: 30 s (the defaults). */
static void setup(void)
{
	static const char *const flags[] = {
	    "--dynamic_replication_mode=off",
	    "--eviction_high_watermark_ratio=0.5", "--default_kv_lease_ttl=50",
	    NULL};
	const struct mwfix_opts o = {.master_flags = flags,
				     .segment_size = "1M"};

	memset(&fx, 0, sizeof(fx));
	for (size_t i = 0; i < SMALL; i++)
		fx.small[i] = (uint8_t)(i * 131 + 7);
	mwfix_start(&fx.m, &o);
	fx.rc = harness_client(fx.m.port);
	ck_assert_ptr_nonnull(fx.rc);
}

static void teardown(void)
{
	rpc_client_close(fx.rc);
	mwfix_stop(&fx.m);
}

static store_client *client(const char *tenant)
{
	return mwfix_client(&fx.m, tenant, NULL);
}

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

/* One Master call that must succeed; the response freed. */
static void call_ok(const char *method, const ProtobufCMessage *req)
{
	ProtobufCMessage *r = harness_call(fx.rc, method, req, NULL);

	ck_assert_int_eq(rpc_result_code(r), MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(r, NULL);
}

/* The attacker's own put of tenant evil's key: PutStart, a WRITE under
 * its grant, PutEnd. The PutStart reply (the grant kept) is the caller's
 * to free. */
static McreplRpc__PutStartResponse *evil_put(const char *key)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutStartResponse *r;
	struct data_grant g;
	uint8_t *junk = calloc(1, STAMP_BYTES + BIG);
	char err[256];

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("evil");
	ps.key = mut(key);
	ps.size = BIG;
	ps.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(fx.rc, "PutStart",
							&ps.base, NULL);
	ck_assert_int_eq(rpc_result_code(&r->base), MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 1);
	g = store_replica_grant(r->replicas[0]);
	ck_assert_int_eq(store_data_write(r->replicas[0]->endpoint,
					  r->replicas[0]->segment_id,
					  r->replicas[0]->offset, junk,
					  STAMP_BYTES + BIG, &g, 2000, err,
					  sizeof(err)),
			 0);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = mut("evil");
	pe.key = mut(key);
	pe.version = r->version;
	call_ok("PutEnd", &pe.base);
	free(junk);
	return r;
}

static bool exists(const char *tenant, const char *key)
{
	McreplRpc__ExistRequest ex;
	McreplRpc__ExistResponse *r;
	bool e;

	mcrepl_rpc__exist_request__init(&ex);
	ex.tenant = mut(tenant);
	ex.key = mut(key);
	r = (McreplRpc__ExistResponse *)harness_call(fx.rc, "Exist", &ex.base,
						     NULL);
	ck_assert_int_eq(rpc_result_code(&r->base), MCREPL_RPC__CODE__OK);
	e = r->exists;
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return e;
}

static McreplRpc__GetReplicaListResponse *list(store_client *c, const char *key)
{
	McreplRpc__GetReplicaListResponse *r = NULL;

	ck_assert_msg(store_client_get_list(c, key, &r) == 0, "%s",
		      store_client_error(c));
	ck_assert_uint_eq(r->n_replicas, 1);
	return r;
}

/* key of c reads back exactly as fx.small. */
static void assert_intact(store_client *c, const char *key)
{
	mwfix_assert_reads(c, key, fx.small, SMALL);
}

/* The attacker writes its whole old region through its kept WRITE grant:
 * 0xee, or (forge) a stamp naming alice's object x (version v, under the
 * incarnation of the attacker's own PutStart reply) over 0xee. The master
 * has revoked that grant on the worker (the region was freed and its
 * worker acknowledged): refused -EACCES, the answer of any grant that does
 * not verify. */
static void stale_write(const McreplRpc__PutStartResponse *old, uint64_t v,
			bool forge)
{
	const McreplRpc__Replica *r = old->replicas[0];
	struct data_grant g = store_replica_grant(r);
	uint8_t *buf = malloc(STAMP_BYTES + BIG);
	char err[256];

	memset(buf, 0xee, STAMP_BYTES + BIG);
	if (forge) {
		struct stamp_id id = {
		    .incarnation = old->incarnation,
		    .object_id = v,
		    .key_hash = stamp_key_hash("alice", 5, "x", 1),
		    .length = SMALL,
		};

		stamp_write(buf, &id, buf + STAMP_BYTES);
	}
	ck_assert_int_eq(store_data_write(r->endpoint, r->segment_id, r->offset,
					  buf, STAMP_BYTES + BIG, &g, 2000, err,
					  sizeof(err)),
			 -EACCES);
	free(buf);
}

/* Regions held back now and ever (master /metrics). */
static long long metric(const char *name)
{
	return mwfix_metric(&fx.m, name);
}

/* The region held for a freed replica is released once its worker has
 * acknowledged the revocation of the WRITE grant on it: within a few task
 * polls (20 ms each) on an idle machine, long before the grant's 30 s. */
static void wait_revoked(long long n)
{
	WAIT_UNTIL(metric("mcrepl_master_write_grants_revoked_total") >= n);
	ck_assert_int_eq(metric("mcrepl_master_write_grants_revoked_total"), n);
	ck_assert_int_eq(metric("mcrepl_master_regions_quarantined"), 0);
}

/* evil puts y and removes it, keeping y's WRITE grant (30 s). The region
 * is held until the worker acknowledges the grant's revocation, then
 * alice's x (smaller) is put in it at once; evil's stale write is refused
 * and lands in nobody's object, x's bytes stay hers. */
static void remove_then_stale_write(bool forge)
{
	store_client *alice = client("alice");
	McreplRpc__PutStartResponse *y = evil_put("y");
	McreplRpc__GetReplicaListResponse *xl;
	McreplRpc__RemoveRequest rm;

	mcrepl_rpc__remove_request__init(&rm);
	rm.tenant = mut("evil");
	rm.key = mut("y");
	call_ok("Remove", &rm.base);
	wait_revoked(1);
	ck_assert_msg(store_client_put(alice, "x", fx.small, SMALL) == 0, "%s",
		      store_client_error(alice));
	xl = list(alice, "x");
	/* x took y's region (the segment was otherwise empty) */
	ck_assert_uint_eq(xl->replicas[0]->segment_id,
			  y->replicas[0]->segment_id);
	ck_assert_uint_eq(xl->replicas[0]->offset, y->replicas[0]->offset);
	stale_write(y, xl->version, forge);
	assert_intact(alice, "x");
	ck_assert_int_eq(metric("mcrepl_master_regions_quarantined_total"), 1);
	protobuf_c_message_free_unpacked(&xl->base, NULL);
	protobuf_c_message_free_unpacked(&y->base, NULL);
	store_client_close(alice);
}

START_TEST(test_attack_stale_write_grant_after_remove)
{
	remove_then_stale_write(false);
}
END_TEST

/* The same with a stamp naming alice's object: were the region alice's,
 * her get would return the attacker's bytes with status 0. */
START_TEST(test_attack_stale_write_grant_with_forged_stamp)
{
	remove_then_stale_write(true);
}
END_TEST

/* A worker that does not acknowledge (stopped, gone, older than the
 * master) leaves the region held: nothing is released on the master's
 * word alone. Once it runs again it applies the revocation and the region
 * comes back. */
START_TEST(test_attack_stale_write_grant_held_until_acknowledged)
{
	McreplRpc__PutStartResponse *y = evil_put("y");
	McreplRpc__RemoveRequest rm;

	ck_assert_int_eq(kill(fx.m.worker.pid, SIGSTOP), 0);
	mcrepl_rpc__remove_request__init(&rm);
	rm.tenant = mut("evil");
	rm.key = mut("y");
	call_ok("Remove", &rm.base);
	harness_sleep_ms(300); /* a span for a wrong release to show */
	ck_assert_int_eq(metric("mcrepl_master_regions_quarantined"), 1);
	ck_assert_int_eq(metric("mcrepl_master_write_grants_revoked_total"), 0);
	ck_assert_int_eq(kill(fx.m.worker.pid, SIGCONT), 0);
	wait_revoked(1);
	stale_write(y, y->version, false);
	protobuf_c_message_free_unpacked(&y->base, NULL);
}
END_TEST

/* evil's y is evicted (least recently read, the segment past half full)
 * while its WRITE grant runs; alice's x is put after: not in y's region. */
START_TEST(test_attack_stale_write_grant_after_eviction)
{
	store_client *alice = client("alice"), *filler = client("filler");
	McreplRpc__PutStartResponse *y = evil_put("y");
	McreplRpc__GetReplicaListResponse *xl;
	uint8_t *f = calloc(1, BIG);
	char key[16];
	int i;

	/* y and 7 more of 64 KiB + stamp: just past 512 KiB */
	for (i = 0; i < 7; i++) {
		snprintf(key, sizeof(key), "f%d", i);
		ck_assert_msg(store_client_put(filler, key, f, BIG) == 0, "%s",
			      store_client_error(filler));
	}
	WAIT_UNTIL(!exists("evil", "y"));
	ck_assert(exists("filler", "f0"));
	wait_revoked(1);
	ck_assert_msg(store_client_put(alice, "x", fx.small, SMALL) == 0, "%s",
		      store_client_error(alice));
	xl = list(alice, "x");
	stale_write(y, xl->version, true);
	assert_intact(alice, "x");
	protobuf_c_message_free_unpacked(&xl->base, NULL);
	protobuf_c_message_free_unpacked(&y->base, NULL);
	free(f);
	store_client_close(alice);
	store_client_close(filler);
}
END_TEST

/* A worker mounts its own segment: the key its mount reply carries. */
static McreplRpc__MountSegmentResponse *evil_mount(void)
{
	McreplRpc__MountSegmentRequest req;
	McreplRpc__MountSegmentResponse *r;

	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = 0xe7117e57;
	req.host_id = mut("host-evil");
	req.domain = mut("default");
	req.name = mut("evil-seg");
	req.capacity = SEG_BYTES;
	req.endpoint = mut("127.0.0.1:1");
	req.protocol_version = 1;
	r = (McreplRpc__MountSegmentResponse *)harness_call(
	    fx.rc, "MountSegment", &req.base, NULL);
	ck_assert_int_eq(rpc_result_code(&r->base), MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->grant_secret.len, GRANT_SECRET_BYTES);
	return r;
}

/* Worker "host-evil" mounts a segment of its own and signs READ and WRITE
 * grants for alice's object on host-a's segment with the key it got:
 * host-a refuses both (DENIED, the one reason), sends no byte of x and x
 * keeps its bytes. */
START_TEST(test_attack_worker_forges_grant_for_other_worker)
{
	store_client *alice = client("alice");
	McreplRpc__GetReplicaListResponse *xl;
	McreplRpc__MountSegmentResponse *m;
	const McreplRpc__Replica *x;
	const uint64_t len = STAMP_BYTES + SMALL;
	uint8_t *buf = calloc(1, len);
	struct grant_key k;
	struct data_grant g;
	char err[256], want[128];

	ck_assert_msg(store_client_put(alice, "x", fx.small, SMALL) == 0, "%s",
		      store_client_error(alice));
	xl = list(alice, "x");
	x = xl->replicas[0];
	m = evil_mount();
	ck_assert_uint_ne(m->segment_id, x->segment_id);
	grant_key_init(&k, m->grant_secret.data, m->incarnation);
	g = grant_sign(&k, DATA_OP_READ, x->segment_id, x->offset, len,
		       xl->version, m->master_time_ms + 60000);
	ck_assert_int_eq(store_data_read(x->endpoint, x->segment_id, x->offset,
					 buf, len, &g, 2000, err, sizeof(err)),
			 -EACCES);
	snprintf(want, sizeof(want), "read grant refused for segment %llu",
		 (unsigned long long)x->segment_id);
	ck_assert_msg(strstr(err, want), "%s", err);
	for (uint64_t i = 0; i < len; i++)
		ck_assert_uint_eq(buf[i], 0);
	g = grant_sign(&k, DATA_OP_WRITE, x->segment_id, x->offset, len,
		       xl->version, m->master_time_ms + 60000);
	memset(buf, 0xee, len);
	ck_assert_int_eq(store_data_write(x->endpoint, x->segment_id, x->offset,
					  buf, len, &g, 2000, err, sizeof(err)),
			 -EACCES);
	snprintf(want, sizeof(want), "write grant refused for segment %llu",
		 (unsigned long long)x->segment_id);
	ck_assert_msg(strstr(err, want), "%s", err);
	assert_intact(alice, "x");
	protobuf_c_message_free_unpacked(&m->base, NULL);
	protobuf_c_message_free_unpacked(&xl->base, NULL);
	free(buf);
	store_client_close(alice);
}
END_TEST

Suite *make_grant_attack_suite(void)
{
	Suite *s = suite_create("grant_attack");
	TCase *tc = tcase_create("daemons");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc,
		       test_attack_stale_write_grant_held_until_acknowledged);
	tcase_add_test(tc, test_attack_stale_write_grant_after_remove);
	tcase_add_test(tc, test_attack_stale_write_grant_with_forged_stamp);
	tcase_add_test(tc, test_attack_stale_write_grant_after_eviction);
	tcase_add_test(tc, test_attack_worker_forges_grant_for_other_worker);
	suite_add_tcase(s, tc);
	return s;
}
