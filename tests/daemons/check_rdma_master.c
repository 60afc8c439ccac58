/*
 * The master's side of RDMA endpoints: a worker's rdma_cm endpoint,
 * mounted with its segment, comes back with every replica on that segment
 * (a real master process on loopback, the test plays the workers). A
 * worker without one (tcp, or older) gets "" and copies over tcp.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"

Suite *make_rdma_master_suite(void);

#define MIB (1024 * 1024)

static struct proc master;
static rpc_client *client;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static McreplRpc__Code mount(uint64_t id, const char *name,
			     const char *rdma_endpoint)
{
	McreplRpc__MountSegmentRequest req;
	McreplRpc__MountSegmentResponse *resp;
	McreplRpc__Code code;

	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = id;
	req.host_id = mut(name);
	req.domain = mut("");
	req.name = mut(name);
	req.capacity = 64 * MIB;
	req.endpoint = mut("127.0.0.1:1");
	req.protocol_version = 1;
	req.rdma_endpoint = mut(rdma_endpoint);
	resp = (McreplRpc__MountSegmentResponse *)harness_call(
	    client, "MountSegment", &req.base, NULL);
	ck_assert_ptr_nonnull(resp);
	code = resp->result->code;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	return code;
}

static void setup(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    NULL};

	ck_assert_int_eq(master_start(&master, flags), 0);
	client = harness_client((uint16_t)proc_field(&master, "rpc_port"));
	ck_assert_ptr_nonnull(client);
}

static void teardown(void)
{
	rpc_client_close(client);
	ck_assert_int_eq(proc_stop(&master), 0);
}

START_TEST(test_replicas_carry_rdma_endpoint)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;
	char big[300];
	size_t i;
	int with = 0, without = 0;

	ck_assert_int_eq(mount(0xa1, "seg-a", "10.0.0.2:20887"),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(mount(0xb2, "seg-b", ""), MCREPL_RPC__CODE__OK);
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(mount(0xc3, "seg-c", big),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("t");
	ps.key = mut("k");
	ps.size = MIB;
	ps.replica_num = 2;
	r = (McreplRpc__PutStartResponse *)harness_call(client, "PutStart",
							&ps.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 2);
	for (i = 0; i < r->n_replicas; i++) {
		if (r->replicas[i]->client_id == 0xa1) {
			ck_assert_str_eq(r->replicas[i]->rdma_endpoint,
					 "10.0.0.2:20887");
			with++;
		} else {
			ck_assert_str_eq(r->replicas[i]->rdma_endpoint, "");
			without++;
		}
	}
	ck_assert_int_eq(with, 1);
	ck_assert_int_eq(without, 1);
	protobuf_c_message_free_unpacked(&r->base, NULL);
}
END_TEST

Suite *make_rdma_master_suite(void)
{
	Suite *s = suite_create("rdma_master");
	TCase *tc = tcase_create("endpoint");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_replicas_carry_rdma_endpoint);
	suite_add_tcase(s, tc);
	return s;
}
