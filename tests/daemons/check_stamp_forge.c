/* Stamps only the master can name: a writer that reaches another tenant's
 * region (a stale grant, a one-sided RDMA write, a worker's own memory)
 * writes its bytes there under a stamp whose every public field names the
 * victim's object: the master's incarnation, the object's version, the
 * hash of tenant and key, the length and both CRCs. The reader holding the
 * victim's descriptor gets an error, never those bytes.
 *
 * The test plays the worker: a real master, the test's own data server
 * in-process serving the one segment it mounted, so it can write the
 * forged region straight into segment memory (what any writer with access
 * to the region can do). */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "crc32c.h"
#include "dsfix.h"
#include "harness.h"
#include "mwfix.h"
#include "stamp.h"
#include "store_client.h"

Suite *make_stamp_forge_suite(void);

#define SEG_BYTES (1u << 20)
#define OBJ_BYTES 4096u
#define WORKER_ID 0x5e9u

static struct {
	struct mwfix m;
	struct dsfix d;
	uint8_t *seg;
} fx;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

/* A master, and the in-process data server's segment mounted there,
 * armed with the master's grant key and clock as a worker would be. */
static void setup(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    "--client_ttl=60", NULL};
	const struct mwfix_opts o = {.master_flags = flags};

	memset(&fx, 0, sizeof(fx));
	mwfix_start(&fx.m, &o);
	dsfix_create(&fx.d);
	fx.seg = calloc(1, SEG_BYTES);
	ck_assert_ptr_nonnull(fx.seg);
	/* before the loop runs: the server is not shared */
	dsfix_mount(&fx.d, fx.m.port, WORKER_ID, "host-forge", "seg-forge",
		    fx.seg, SEG_BYTES);
	dsfix_run(&fx.d);
}

static void teardown(void)
{
	dsfix_destroy(&fx.d);
	free(fx.seg);
	mwfix_stop(&fx.m);
}

static store_client *client(const char *tenant)
{
	return mwfix_client(&fx.m, tenant, NULL);
}

/* The attacker's own put, started (its reply names the master's
 * incarnation and the next version; caller frees). */
static McreplRpc__PutStartResponse *put_start(const char *tenant,
					      const char *key)
{
	rpc_client *rc = harness_client(fx.m.port);
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
	rpc_client_close(rc);
	return r;
}

/* Alice's object, then evil's bytes at its region under a stamp naming
 * alice's object with every public field right, one row per tag evil can
 * put there: none, the genuine tag of its own put (the master's, for
 * another object), one made up, and the format from before tags. Alice's
 * get fails with the stamp's reason and returns no byte. */
START_TEST(test_attack_forged_stamp_for_other_tenant_object)
{
	store_client *alice = client("alice");
	McreplRpc__GetReplicaListResponse *al = NULL;
	McreplRpc__PutStartResponse *mine;
	uint8_t obj[OBJ_BYTES], *region;
	struct stamp_id forged;
	void *buf = (void *)1;
	uint64_t len = 1;
	const char *why = "stamp not issued by the master (tag mismatch)";

	for (size_t i = 0; i < OBJ_BYTES; i++)
		obj[i] = (uint8_t)(i * 131 + 7);
	ck_assert_msg(store_client_put(alice, "photo", obj, OBJ_BYTES) == 0,
		      "%s", store_client_error(alice));
	ck_assert_int_eq(store_client_get_list(alice, "photo", &al), 0);
	ck_assert_uint_eq(al->n_replicas, 1);
	ck_assert_uint_eq(al->replicas[0]->stamp_bytes, STAMP_BYTES);
	/* evil's own PutStart tells it the incarnation; versions are one
	 * counter, so alice's is evil's less one */
	mine = put_start("evil", "mine");
	ck_assert_uint_eq(mine->incarnation, al->incarnation);
	ck_assert_uint_eq(mine->version - 1, al->version);
	forged = (struct stamp_id){
	    .incarnation = mine->incarnation,
	    .object_id = mine->version - 1,
	    .key_hash = stamp_key_hash("alice", 5, "photo", 5),
	    .length = OBJ_BYTES,
	    .tag = _i == 1   ? mine->stamp_tag
		   : _i == 2 ? 0x5eed5eed5eedULL
			     : 0,
	};
	ck_assert_uint_ne(al->replicas[0]->stamp_tag, 0);
	ck_assert_uint_ne(mine->stamp_tag, 0);
	ck_assert_uint_ne(mine->stamp_tag, al->replicas[0]->stamp_tag);
	region = fx.seg + al->replicas[0]->offset;
	memset(region + STAMP_BYTES, 0xee, OBJ_BYTES);
	stamp_write(region, &forged, region + STAMP_BYTES);
	if (_i == 3) { /* version 1: no tag field at all */
		region[5] = 1;
		memset(region + 44, 0, 8);
		put_be32(region + 60, mcu_crc32c(0, region, 60));
		/* the worker's own check refuses it before the reader's,
		 * with the one answer it gives any grant that does not hold
		 * (grant.h: no oracle) */
		why = "read grant refused";
	}

	ck_assert_int_eq(store_client_get(alice, "photo", &buf, &len, NULL),
			 _i == 3 ? -EACCES : -ESTALE);
	ck_assert_ptr_null(buf);
	ck_assert_uint_eq(len, 0);
	ck_assert_msg(strstr(store_client_error(alice), why), "%s",
		      store_client_error(alice));
	/* both lists tried, each replica refused by the reader's stamp
	 * check (row 3: by the worker's, before any byte was sent) */
	ck_assert_uint_eq(store_client_stale_reads(alice), _i == 3 ? 0 : 2);
	protobuf_c_message_free_unpacked(&al->base, NULL);
	protobuf_c_message_free_unpacked(&mine->base, NULL);
	store_client_close(alice);
}
END_TEST

Suite *make_stamp_forge_suite(void)
{
	Suite *s = suite_create("stamp_forge");
	TCase *tc = tcase_create("daemons");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(
	    tc, test_attack_forged_stamp_for_other_tenant_object, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
