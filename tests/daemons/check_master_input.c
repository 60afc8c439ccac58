/*
 * Bad input against a real mcrepl-master: broken frames, unknown methods,
 * empty keys, wrong tenants, absurd batches. The master answers or closes
 * that one connection, keeps serving everyone else, and exits cleanly
 * (under ASan, a leak would fail the exit status check).
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "harness.h"

Suite *make_master_input_suite(void);

static struct proc master;
static rpc_client *client;
static uint16_t rpc_port;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static void setup(void)
{
	ck_assert_int_eq(master_start(&master, NULL), 0);
	rpc_port = (uint16_t)proc_field(&master, "rpc_port");
	client = harness_client(rpc_port);
	ck_assert_ptr_nonnull(client);
}

static void teardown(void)
{
	rpc_client_close(client);
	ck_assert_int_eq(proc_stop(&master), 0);
}

static int raw_connect(void)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_family = AF_INET;
	sa.sin_port = htons(rpc_port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Read one reply frame (or NULL at EOF / timeout). */
static McreplRpc__Envelope *read_reply(int fd)
{
	uint8_t buf[65536];
	size_t n = 0;

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		McreplRpc__Envelope *env = NULL;
		size_t used = 0;
		ssize_t r;

		if (n >= 4 && rpc_frame_parse(buf, n, sizeof(buf), &env,
					      &used) == RPC_FRAME_OK)
			return env;
		if (poll(&p, 1, 3000) <= 0)
			return NULL;
		r = read(fd, buf + n, sizeof(buf) - n);
		if (r <= 0)
			return NULL;
		n += (size_t)r;
	}
}

static bool closed_by_peer(int fd)
{
	char b[256];
	struct pollfd p = {fd, POLLIN, 0};

	while (poll(&p, 1, 6000) > 0) {
		ssize_t r = read(fd, b, sizeof(b));

		if (r <= 0)
			return true;
	}
	return false;
}

/* The master still answers a good call on the shared client. */
static void still_serving(void)
{
	McreplRpc__ExistRequest req;
	McreplRpc__ExistResponse *r;

	mcrepl_rpc__exist_request__init(&req);
	req.key = mut("k");
	r = (McreplRpc__ExistResponse *)harness_call(client, "Exist", &req.base,
						     NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

START_TEST(test_oversized_length_prefix_is_refused_and_closed)
{
	static const uint8_t huge[] = {0x7f, 0xff, 0xff, 0xff, 1, 2, 3};
	int fd = raw_connect();
	McreplRpc__Envelope *env;

	ck_assert_int_eq(write(fd, huge, sizeof(huge)), sizeof(huge));
	env = read_reply(fd);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env->status, MCREPL_RPC__CODE__FRAME_TOO_LARGE);
	protobuf_c_message_free_unpacked(&env->base, NULL);
	ck_assert(closed_by_peer(fd));
	close(fd);
	still_serving();
}
END_TEST

START_TEST(test_garbage_bytes_are_refused_and_closed)
{
	static const uint8_t junk[] = {0,    0,	   0,	 6,    0xff,
				       0xff, 0xff, 0xff, 0xff, 0xff};
	int fd = raw_connect();
	McreplRpc__Envelope *env;

	ck_assert_int_eq(write(fd, junk, sizeof(junk)), sizeof(junk));
	env = read_reply(fd);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env->status, MCREPL_RPC__CODE__BAD_REQUEST);
	protobuf_c_message_free_unpacked(&env->base, NULL);
	ck_assert(closed_by_peer(fd));
	close(fd);
	still_serving();
}
END_TEST

START_TEST(test_truncated_frame_then_close_is_harmless)
{
	static const uint8_t part[] = {0, 0, 1, 0, 0x08, 0x01};
	int fd = raw_connect();

	ck_assert_int_eq(write(fd, part, sizeof(part)), sizeof(part));
	close(fd);
	still_serving();
}
END_TEST

START_TEST(test_unknown_method_keeps_connection)
{
	rpc_frame_head h = {7, 999, MCREPL_RPC__CODE__OK, NULL};
	uint8_t *frame = NULL;
	size_t len = 0;
	int fd = raw_connect();
	McreplRpc__Envelope *env;

	ck_assert_int_eq(rpc_frame_encode(&h, NULL, 0, &frame, &len),
			 RPC_FRAME_OK);
	ck_assert_int_eq(write(fd, frame, len), (ssize_t)len);
	env = read_reply(fd);
	ck_assert_ptr_nonnull(env);
	ck_assert_int_eq(env->status, MCREPL_RPC__CODE__UNKNOWN_METHOD);
	ck_assert_uint_eq(env->request_id, 7);
	protobuf_c_message_free_unpacked(&env->base, NULL);
	free(frame);
	close(fd);
	still_serving();
}
END_TEST

START_TEST(test_empty_key_is_invalid_argument)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.key = mut("");
	ps.size = 10;
	r = (McreplRpc__PutStartResponse *)harness_call(client, "PutStart",
							&ps.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(r->result->message, "key"));
	protobuf_c_message_free_unpacked(&r->base, NULL);
}
END_TEST

/* A read of an empty key is a bad request, not a miss (as Stat, PutStart
 * and Exist answer); in a batch only that key's answer says so. */
START_TEST(test_read_of_empty_key_is_invalid_argument)
{
	McreplRpc__GetReplicaListRequest g;
	McreplRpc__GetReplicaListResponse *r;
	McreplRpc__BatchGetReplicaListRequest b;
	McreplRpc__BatchGetReplicaListResponse *br;
	char *keys[2] = {mut(""), mut("never-written")};

	mcrepl_rpc__get_replica_list_request__init(&g);
	g.key = mut("");
	r = (McreplRpc__GetReplicaListResponse *)harness_call(
	    client, "GetReplicaList", &g.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_ptr_nonnull(strstr(r->result->message, "needs a key"));
	protobuf_c_message_free_unpacked(&r->base, NULL);
	mcrepl_rpc__batch_get_replica_list_request__init(&b);
	b.n_keys = 2;
	b.keys = keys;
	br = (McreplRpc__BatchGetReplicaListResponse *)harness_call(
	    client, "BatchGetReplicaList", &b.base, NULL);
	ck_assert_ptr_nonnull(br);
	ck_assert_int_eq(br->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(br->n_entries, 2);
	ck_assert_int_eq(br->entries[0]->result->code,
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_int_eq(br->entries[1]->result->code,
			 MCREPL_RPC__CODE__NOT_FOUND);
	protobuf_c_message_free_unpacked(&br->base, NULL);
	still_serving();
}
END_TEST

/* Found by tests/fuzz/fuzz_master: a capacity below the allocator's
 * 64-byte unit was answered INTERNAL ("INTERNAL"), as if the master had
 * failed, instead of naming the bad argument. */
START_TEST(test_tiny_capacity_mount_is_invalid_argument)
{
	McreplRpc__MountSegmentRequest m;
	McreplRpc__MountSegmentResponse *r;

	mcrepl_rpc__mount_segment_request__init(&m);
	m.client_id = 0xa1;
	m.host_id = mut("host-a");
	m.name = mut("tiny");
	m.endpoint = mut("127.0.0.1:1");
	for (uint64_t cap = 1; cap <= 64; cap += 63) {
		m.capacity = cap;
		r = (McreplRpc__MountSegmentResponse *)harness_call(
		    client, "MountSegment", &m.base, NULL);
		ck_assert_ptr_nonnull(r);
		ck_assert_int_eq(r->result->code,
				 cap < 64 ? MCREPL_RPC__CODE__INVALID_ARGUMENT
					  : MCREPL_RPC__CODE__OK);
		if (cap < 64)
			ck_assert_ptr_nonnull(
			    strstr(r->result->message, "capacity"));
		protobuf_c_message_free_unpacked(&r->base, NULL);
	}
	still_serving();
}
END_TEST

/* A 1 MiB segment of client id on host; its segment id. */
static uint64_t mount_on(uint64_t id, const char *host)
{
	McreplRpc__MountSegmentRequest m;
	McreplRpc__MountSegmentResponse *r;
	uint64_t seg;

	mcrepl_rpc__mount_segment_request__init(&m);
	m.client_id = id;
	m.host_id = mut(host);
	m.name = mut(host);
	m.endpoint = mut("127.0.0.1:1");
	m.capacity = 1u << 20;
	r = (McreplRpc__MountSegmentResponse *)harness_call(
	    client, "MountSegment", &m.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	seg = r->segment_id;
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return seg;
}

/* A 1 MiB segment of client 0xa1 on host-a. */
static void mount_one_mib(void)
{
	mount_on(0xa1, "host-a");
}

static McreplRpc__PutStartResponse *put_of_size(const char *key, uint64_t size)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.key = mut(key);
	ps.size = size;
	r = (McreplRpc__PutStartResponse *)harness_call(client, "PutStart",
							&ps.base, NULL);
	ck_assert_ptr_nonnull(r);
	return r;
}

/* A size whose region (a 64-byte stamp, then the object, rounded up to
 * 64 bytes) passes 2^64 - 1 was placed on the wrapped sum: 2^64 - 1 got a
 * 63-byte region and PutEnd made it readable. Such a size is refused as an
 * argument, naming the largest object; nothing is placed. */
START_TEST(test_put_start_size_overflow_refused)
{
	static const uint64_t bad[] = {UINT64_MAX, UINT64_MAX - 63,
				       UINT64_MAX - 126};
	McreplRpc__PutStartResponse *r;
	McreplRpc__GetReplicaListRequest g;
	McreplRpc__GetReplicaListResponse *gr;
	char want[200];

	mount_one_mib();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = put_of_size("huge", bad[i]);
		ck_assert_int_eq(r->result->code,
				 MCREPL_RPC__CODE__INVALID_ARGUMENT);
		ck_assert_str_eq(r->result->reason, "");
		snprintf(want, sizeof(want),
			 "size %llu is above the largest object, "
			 "18446744073709551488 bytes (its region adds a "
			 "64-byte stamp)",
			 (unsigned long long)bad[i]);
		ck_assert_str_eq(r->result->message, want);
		ck_assert_uint_eq(r->n_replicas, 0);
		protobuf_c_message_free_unpacked(&r->base, NULL);
	}
	mcrepl_rpc__get_replica_list_request__init(&g);
	g.key = mut("huge");
	gr = (McreplRpc__GetReplicaListResponse *)harness_call(
	    client, "GetReplicaList", &g.base, NULL);
	ck_assert_ptr_nonnull(gr);
	ck_assert_int_eq(gr->result->code, MCREPL_RPC__CODE__NOT_FOUND);
	protobuf_c_message_free_unpacked(&gr->base, NULL);
	still_serving();
}
END_TEST

/* The sizes at the edge: the largest object is a size like any other (no
 * segment holds it: NO_SPACE), as is 2^63; 1 MiB less the stamp fills
 * the segment exactly, one byte more does not fit. */
START_TEST(test_put_start_size_at_the_edges)
{
	static const struct {
		uint64_t size;
		McreplRpc__Code code;
	} cases[] = {
	    {UINT64_MAX - 127, MCREPL_RPC__CODE__NO_SPACE},
	    {1ull << 63, MCREPL_RPC__CODE__NO_SPACE},
	    {(1u << 20) - 63, MCREPL_RPC__CODE__NO_SPACE},
	    {(1u << 20) - 64, MCREPL_RPC__CODE__OK},
	};
	McreplRpc__PutStartResponse *r;
	char key[32], want[100];

	mount_one_mib();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(key, sizeof(key), "edge-%zu", i);
		r = put_of_size(key, cases[i].size);
		ck_assert_int_eq(r->result->code, cases[i].code);
		if (cases[i].code == MCREPL_RPC__CODE__NO_SPACE) {
			snprintf(want, sizeof(want),
				 "no segment has %llu free bytes",
				 (unsigned long long)cases[i].size);
			ck_assert_str_eq(r->result->message, want);
		} else {
			ck_assert_uint_eq(r->n_replicas, 1);
			ck_assert_uint_eq(r->replicas[0]->size, cases[i].size);
		}
		protobuf_c_message_free_unpacked(&r->base, NULL);
	}
	still_serving();
}
END_TEST

/* An rdma segment whose registered address plus its capacity passes
 * 2^64 - 1 would hand readers wrapped remote addresses: refused. */
START_TEST(test_mount_base_addr_overflow_refused)
{
	McreplRpc__MountSegmentRequest m;
	McreplRpc__MountSegmentResponse *r;

	mcrepl_rpc__mount_segment_request__init(&m);
	m.client_id = 0xa1;
	m.host_id = mut("host-a");
	m.name = mut("wraps");
	m.endpoint = mut("127.0.0.1:1");
	m.capacity = 1u << 20;
	m.base_addr = UINT64_MAX - (1u << 19);
	r = (McreplRpc__MountSegmentResponse *)harness_call(
	    client, "MountSegment", &m.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_str_eq(r->result->message,
			 "segment at address 18446744073709027327 of 1048576 "
			 "bytes passes the end of the address space");
	protobuf_c_message_free_unpacked(&r->base, NULL);
	m.base_addr = UINT64_MAX - (1u << 20); /* its end still counts */
	r = (McreplRpc__MountSegmentResponse *)harness_call(
	    client, "MountSegment", &m.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	still_serving();
}
END_TEST

/* CopyStart's answer names the object's version (it was always 0), as
 * do the grants of its source and target. */
START_TEST(test_copy_start_names_the_object_version)
{
	uint64_t seg_a = mount_on(0xa1, "host-a"),
		 seg_b = mount_on(0xb2, "host-b"), version, src;
	McreplRpc__PutStartResponse *p;
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutEndResponse *e;
	McreplRpc__CopyStartRequest cs;
	McreplRpc__CopyStartResponse *r;

	/* an earlier put, so the version is not the first one handed out */
	p = put_of_size("before", 100);
	ck_assert_int_eq(p->result->code, MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&p->base, NULL);
	p = put_of_size("copied", 100);
	ck_assert_int_eq(p->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(p->n_replicas, 1);
	version = p->version;
	src = p->replicas[0]->segment_id;
	protobuf_c_message_free_unpacked(&p->base, NULL);
	ck_assert_uint_gt(version, 1);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.key = mut("copied");
	pe.version = version;
	e = (McreplRpc__PutEndResponse *)harness_call(client, "PutEnd",
						      &pe.base, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(e->result->code, MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&e->base, NULL);
	mcrepl_rpc__copy_start_request__init(&cs);
	cs.client_id = src == seg_a ? 0xa1 : 0xb2;
	cs.key = mut("copied");
	cs.source_segment_id = src;
	cs.target_segment_id = src == seg_a ? seg_b : seg_a;
	r = (McreplRpc__CopyStartResponse *)harness_call(client, "CopyStart",
							 &cs.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->version, version);
	ck_assert_uint_eq(r->source->grant_object_id, version);
	ck_assert_uint_eq(r->target->grant_object_id, version);
	ck_assert_uint_eq(r->target->segment_id, cs.target_segment_id);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	still_serving();
}
END_TEST

START_TEST(test_wrong_tenant_cannot_read_or_remove)
{
	McreplRpc__MountSegmentRequest m;
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutEndRequest pe;
	McreplRpc__GetReplicaListRequest g;
	McreplRpc__RemoveRequest rm;
	ProtobufCMessage *r;
	McreplRpc__PutStartResponse *psr;
	McreplRpc__GetReplicaListResponse *gr;

	mcrepl_rpc__mount_segment_request__init(&m);
	m.client_id = 9;
	m.host_id = mut("h");
	m.name = mut("s");
	m.endpoint = mut("127.0.0.1:1");
	m.capacity = 1 << 20;
	r = harness_call(client, "MountSegment", &m.base, NULL);
	ck_assert_ptr_nonnull(r);
	protobuf_c_message_free_unpacked(r, NULL);
	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("alice");
	ps.key = mut("k");
	ps.size = 10;
	psr = (McreplRpc__PutStartResponse *)harness_call(client, "PutStart",
							  &ps.base, NULL);
	ck_assert_int_eq(psr->result->code, MCREPL_RPC__CODE__OK);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = mut("alice");
	pe.key = mut("k");
	pe.version = psr->version;
	protobuf_c_message_free_unpacked(&psr->base, NULL);
	r = harness_call(client, "PutEnd", &pe.base, NULL);
	protobuf_c_message_free_unpacked(r, NULL);
	mcrepl_rpc__get_replica_list_request__init(&g);
	g.tenant = mut("mallory");
	g.key = mut("k");
	gr = (McreplRpc__GetReplicaListResponse *)harness_call(
	    client, "GetReplicaList", &g.base, NULL);
	ck_assert_int_eq(gr->result->code, MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert_uint_eq(gr->n_replicas, 0);
	protobuf_c_message_free_unpacked(&gr->base, NULL);
	mcrepl_rpc__remove_request__init(&rm);
	rm.tenant = mut("mallory");
	rm.key = mut("k");
	r = harness_call(client, "Remove", &rm.base, NULL);
	ck_assert_int_eq(((McreplRpc__RemoveResponse *)r)->result->code,
			 MCREPL_RPC__CODE__NOT_FOUND);
	protobuf_c_message_free_unpacked(r, NULL);
	g.tenant = mut("alice");
	gr = (McreplRpc__GetReplicaListResponse *)harness_call(
	    client, "GetReplicaList", &g.base, NULL);
	ck_assert_int_eq(gr->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(gr->n_replicas, 1);
	protobuf_c_message_free_unpacked(&gr->base, NULL);
}
END_TEST

static McreplRpc__Code stat_code(const char *tenant, const char *key)
{
	McreplRpc__StatRequest req;
	McreplRpc__GetReplicaListResponse *r;
	McreplRpc__Code code;
	int status = -1;

	mcrepl_rpc__stat_request__init(&req);
	req.tenant = mut(tenant);
	req.key = mut(key);
	r = (McreplRpc__GetReplicaListResponse *)harness_call(
	    client, "Stat", &req.base, &status);
	/* over max_key_bytes / max_tenant_bytes: refused by the RPC layer */
	if (!r && status == MCREPL_RPC__CODE__INVALID_ARGUMENT)
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	ck_assert_ptr_nonnull(r);
	code = r->result->code;
	ck_assert_uint_eq(r->n_replicas, 0);
	if (code == MCREPL_RPC__CODE__INVALID_ARGUMENT)
		ck_assert_ptr_nonnull(strstr(r->result->message, "key"));
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return code;
}

START_TEST(test_stat_validates_key_and_tenant)
{
	char tenant[300], key[5000];

	memset(tenant, 'x', sizeof(tenant) - 1);
	tenant[sizeof(tenant) - 1] = '\0';
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	ck_assert_int_eq(stat_code("t", ""),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_int_eq(stat_code("t", key),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_int_eq(stat_code(tenant, "k"),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_int_eq(stat_code("t", "no-such-key"),
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert_int_eq(stat_code("unknown-tenant", "k"),
			 MCREPL_RPC__CODE__NOT_FOUND);
	still_serving();
}
END_TEST

START_TEST(test_absurd_batch_size_is_refused)
{
	McreplRpc__BatchGetReplicaListRequest req;
	McreplRpc__BatchGetReplicaListResponse *r;
	size_t n = 5000;
	char **keys = calloc(n, sizeof(*keys));

	for (size_t i = 0; i < n; i++)
		keys[i] = mut("k");
	mcrepl_rpc__batch_get_replica_list_request__init(&req);
	req.keys = keys;
	req.n_keys = n;
	r = (McreplRpc__BatchGetReplicaListResponse *)harness_call(
	    client, "BatchGetReplicaList", &req.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__TOO_MANY);
	ck_assert_uint_eq(r->n_entries, 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	req.n_keys = 0;
	r = (McreplRpc__BatchGetReplicaListResponse *)harness_call(
	    client, "BatchGetReplicaList", &req.base, NULL);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__INVALID_ARGUMENT);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	free(keys);
	still_serving();
}
END_TEST

/* covers: R-DEC-10 */
START_TEST(test_proposal_rpc_is_internal_by_default)
{
	McreplRpc__SubmitReplicaActionProposalRequest req;
	McreplRpc__SubmitReplicaActionProposalResponse *r;

	mcrepl_rpc__submit_replica_action_proposal_request__init(&req);
	req.proposal_id = mut("p1");
	req.key = mut("k");
	r = (McreplRpc__SubmitReplicaActionProposalResponse *)harness_call(
	    client, "SubmitReplicaActionProposal", &req.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_ptr_null(r->lease);
	protobuf_c_message_free_unpacked(&r->base, NULL);
}
END_TEST

START_TEST(test_invalid_flag_is_refused_at_start)
{
	static const char *const bad[] = {"--eviction_ratio=2", NULL};
	static const char *const unknown[] = {"--no_such_flag=1", NULL};
	struct proc p;

	ck_assert_int_ne(master_start(&p, bad), 0);
	ck_assert_int_ne(master_start(&p, unknown), 0);
}
END_TEST

Suite *make_master_input_suite(void)
{
	Suite *s = suite_create("master_input");
	TCase *tc = tcase_create("master_input");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_oversized_length_prefix_is_refused_and_closed);
	tcase_add_test(tc, test_garbage_bytes_are_refused_and_closed);
	tcase_add_test(tc, test_truncated_frame_then_close_is_harmless);
	tcase_add_test(tc, test_unknown_method_keeps_connection);
	tcase_add_test(tc, test_empty_key_is_invalid_argument);
	tcase_add_test(tc, test_read_of_empty_key_is_invalid_argument);
	tcase_add_test(tc, test_wrong_tenant_cannot_read_or_remove);
	tcase_add_test(tc, test_tiny_capacity_mount_is_invalid_argument);
	tcase_add_test(tc, test_put_start_size_overflow_refused);
	tcase_add_test(tc, test_put_start_size_at_the_edges);
	tcase_add_test(tc, test_mount_base_addr_overflow_refused);
	tcase_add_test(tc, test_copy_start_names_the_object_version);
	tcase_add_test(tc, test_absurd_batch_size_is_refused);
	tcase_add_test(tc, test_stat_validates_key_and_tenant);
	tcase_add_test(tc, test_proposal_rpc_is_internal_by_default);
	tcase_add_test(tc, test_invalid_flag_is_refused_at_start);
	suite_add_tcase(s, tc);
	return s;
}
