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
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "clock.h"
#include "crc32c.h"
#include "data_server.h"
#include "harness.h"
#include "netutil.h"
#include "stamp.h"
#include "store_client.h"

Suite *make_stamp_forge_suite(void);

#define SEG_BYTES (1u << 20)
#define OBJ_BYTES 4096u
#define WORKER_ID 0x5e9u

static struct {
	struct proc master;
	uint16_t port;
	char addr[64];
	struct event_base *base;
	struct data_server *ds;
	uint8_t *seg;
	pthread_t th;
} fx;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static void *loop(void *arg)
{
	(void)arg;
	event_base_loop(fx.base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

/* Mounts the in-process data server's segment at the master, armed with
 * the master's grant key and clock as a worker would be. */
static void mount_self(void)
{
	McreplRpc__MountSegmentRequest req;
	McreplRpc__MountSegmentResponse *resp;
	rpc_client *rc = harness_client(fx.port);
	char ep[64];
	int64_t sent = net_now_ms();
	int slot;

	ck_assert_ptr_nonnull(rc);
	snprintf(ep, sizeof(ep), "127.0.0.1:%u", data_server_port(fx.ds));
	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = WORKER_ID;
	req.host_id = mut("host-forge");
	req.domain = mut("");
	req.name = mut("seg-forge");
	req.capacity = SEG_BYTES;
	req.endpoint = ep;
	req.protocol_version = 1;
	resp = (McreplRpc__MountSegmentResponse *)harness_call(
	    rc, "MountSegment", &req.base, NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_int_eq(resp->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(resp->grant_secret.len, GRANT_SECRET_BYTES);
	slot = data_server_add_segment(fx.ds, fx.seg, SEG_BYTES);
	data_server_set_grant_key(fx.ds, slot, resp->grant_secret.data,
				  resp->incarnation);
	data_server_set_master_clock(fx.ds, resp->master_time_ms, sent);
	data_server_bind(fx.ds, slot, resp->segment_id);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	rpc_client_close(rc);
}

static void setup(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    "--client_ttl=60", NULL};
	struct data_server_config dc;
	char err[256];

	memset(&fx, 0, sizeof(fx));
	fx.master.pid = -1;
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	fx.port = (uint16_t)proc_field(&fx.master, "rpc_port");
	snprintf(fx.addr, sizeof(fx.addr), "127.0.0.1:%u", fx.port);
	fx.base = event_base_new();
	data_server_config_init(&dc);
	dc.port = 0;
	fx.ds = data_server_create(fx.base, &dc, err, sizeof(err));
	ck_assert_msg(fx.ds != NULL, "%s", err);
	fx.seg = calloc(1, SEG_BYTES);
	ck_assert_ptr_nonnull(fx.seg);
	mount_self(); /* before the loop runs: the server is not shared */
	ck_assert_int_eq(pthread_create(&fx.th, NULL, loop, NULL), 0);
}

static void teardown(void)
{
	char err[128];
	int fd;

	/* a connection wakes the loop to see the break */
	event_base_loopbreak(fx.base);
	fd = net_connect("127.0.0.1", data_server_port(fx.ds), 2000, err,
			 sizeof(err));
	pthread_join(fx.th, NULL);
	if (fd >= 0)
		close(fd);
	data_server_destroy(fx.ds);
	event_base_free(fx.base);
	free(fx.seg);
	proc_stop(&fx.master);
}

static store_client *client(const char *tenant)
{
	store_client *c = NULL;
	char err[512];

	ck_assert_msg(
	    store_client_open(&c, fx.addr, tenant, NULL, err, sizeof(err)) == 0,
	    "%s", err);
	return c;
}

/* The attacker's own put, started (its reply names the master's
 * incarnation and the next version; caller frees). */
static McreplRpc__PutStartResponse *put_start(const char *tenant,
					      const char *key)
{
	rpc_client *rc = harness_client(fx.port);
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
