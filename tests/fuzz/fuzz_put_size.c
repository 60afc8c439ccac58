/*
 * PutStart sizes against the master's request handling without sockets
 * (the Master service of daemons/master/service.c over an in-process
 * store, as fuzz_master). The input's first byte picks up to three
 * segments from a table of capacities and base addresses, the largest at
 * the top of the address space; the rest is records of nine bytes: a size
 * (8 bytes, big-endian) and a byte of what follows (which key, replica
 * count, PutEnd, GetReplicaList, Remove).
 *
 * Properties: a size of 0 or above STORE_MAX_OBJECT_BYTES is refused
 * INVALID_ARGUMENT with a message and nothing placed; any other is OK,
 * NO_SPACE or ALREADY_EXISTS; an OK put's replicas each name the size
 * asked, a 64-byte stamp and a region (stamp, then object) inside its
 * segment, on distinct segments; a read after PutEnd names the size put
 * and regions inside their segments; a mount is refused exactly when its
 * base address plus capacity passes 2^64 - 1; the allocators stay
 * consistent, within capacity, in 64-byte units. The store is destroyed at the end (leaks show
 * under ASan).
 */
#include <string.h>

#include "alloc.h"
#include "bytes.h"
#include "flags.h"
#include "fuzz.h"
#include "rpc_dispatch.h"
#include "service.h"
#include "span.h"

static uint64_t clock_ms;

static uint64_t fake_now(void)
{
	return clock_ms;
}

/* Segments a first byte may pick: capacity and rdma base address. */
static const struct {
	uint64_t capacity, base;
} seg_table[8] = {
    {64, 0},
    {4096, 0},
    {1u << 20, 0},
    {(1u << 20) + 64, 4096},
    {UINT64_C(1) << 63, 0},
    {UINT64_MAX, 0},
    {UINT64_MAX - 4095, 4096}, /* ends at 2^64: refused */
    {UINT64_C(1) << 40, UINT64_MAX - (UINT64_C(1) << 40)},
};

struct answer {
	unsigned replies;
	ProtobufCMessage *msg; /* a copy of the reply, unpacked */
	McreplRpc__Code status;
};

static void reply(void *arg, const rpc_frame_head *head,
		  const ProtobufCMessage *msg)
{
	struct answer *a = arg;
	uint8_t *buf;
	size_t n;

	a->replies++;
	a->status = (McreplRpc__Code)head->status;
	if (!msg)
		return;
	n = protobuf_c_message_get_packed_size(msg);
	buf = malloc(n ? n : 1);
	FUZZ_CHECK(buf && protobuf_c_message_pack(msg, buf) == n);
	a->msg = protobuf_c_message_unpack(msg->descriptor, NULL, n, buf);
	FUZZ_CHECK(a->msg);
	free(buf);
}

/* Calls method with req through the server's dispatch; the reply (never
 * NULL: every request here is well formed), which the caller frees. */
static ProtobufCMessage *call(struct master_service *svc, const char *method,
			      const ProtobufCMessage *req)
{
	const ProtobufCServiceDescriptor *sd = &mcrepl_rpc__master__descriptor;
	const ProtobufCMethodDescriptor *m =
	    protobuf_c_service_descriptor_get_method_by_name(sd, method);
	McreplRpc__Envelope env;
	struct answer a = {0};
	size_t n = protobuf_c_message_get_packed_size(req);
	uint8_t *body = malloc(n ? n : 1);

	FUZZ_CHECK(m && body && protobuf_c_message_pack(req, body) == n);
	mcrepl_rpc__envelope__init(&env);
	env.method = (uint32_t)(m - sd->methods);
	env.body.data = body;
	env.body.len = n;
	rpc_dispatch(&svc->base.base, &env, reply, &a);
	free(body);
	FUZZ_CHECK(a.replies == 1 && a.status == MCREPL_RPC__CODE__OK);
	FUZZ_CHECK(a.msg && a.msg->descriptor == m->output);
	return a.msg;
}

static void mount(struct master_service *svc, unsigned i, unsigned pick)
{
	McreplRpc__MountSegmentRequest req;
	McreplRpc__MountSegmentResponse *r;
	char host[16], name[16];

	snprintf(host, sizeof(host), "host-%u", i);
	snprintf(name, sizeof(name), "seg-%u", i);
	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = 0x100 + i;
	req.host_id = host;
	req.name = name;
	req.endpoint = name;
	req.capacity = seg_table[pick].capacity;
	req.base_addr = seg_table[pick].base;
	r = (McreplRpc__MountSegmentResponse *)call(svc, "MountSegment",
						    &req.base);
	FUZZ_CHECK(r->result->code ==
		   (span_within(req.base_addr, req.capacity, UINT64_MAX)
			? MCREPL_RPC__CODE__OK
			: MCREPL_RPC__CODE__INVALID_ARGUMENT));
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

/* A replica an answer names lies inside its mounted segment. */
static void check_replica(struct store *s, const McreplRpc__Replica *r,
			  uint64_t size)
{
	const struct segment *seg;

	FUZZ_CHECK(r->size == size && r->stamp_bytes == STAMP_BYTES);
	store_lock(s);
	seg = store_segment(s, r->segment_id);
	FUZZ_CHECK(seg);
	FUZZ_CHECK(span_within2(r->offset, STAMP_BYTES, size, seg->capacity));
	FUZZ_CHECK(span_within(seg->base_addr, seg->capacity, UINT64_MAX));
	store_unlock(s);
}

/* The last put accepted for each key: its version and size. */
static uint64_t version_of[4], size_of[4];

static void put(struct store *s, struct master_service *svc, uint64_t size,
		uint8_t what)
{
	char key[8];
	McreplRpc__PutStartRequest req;
	McreplRpc__PutStartResponse *r;
	unsigned k = what & 3;

	snprintf(key, sizeof(key), "k%u", k);
	mcrepl_rpc__put_start_request__init(&req);
	req.key = key;
	req.size = size;
	req.replica_num = (what >> 2) & 3;
	r = (McreplRpc__PutStartResponse *)call(svc, "PutStart", &req.base);
	if (size == 0 || size > STORE_MAX_OBJECT_BYTES) {
		FUZZ_CHECK(r->result->code ==
			   MCREPL_RPC__CODE__INVALID_ARGUMENT);
		FUZZ_CHECK(r->result->message && r->result->message[0]);
		FUZZ_CHECK(r->n_replicas == 0);
	} else {
		FUZZ_CHECK(r->result->code == MCREPL_RPC__CODE__OK ||
			   r->result->code == MCREPL_RPC__CODE__NO_SPACE ||
			   r->result->code == MCREPL_RPC__CODE__ALREADY_EXISTS);
	}
	if (r->result->code == MCREPL_RPC__CODE__OK) {
		FUZZ_CHECK(r->n_replicas >= 1 &&
			   r->n_replicas <=
			       (req.replica_num ? req.replica_num : 1));
		for (size_t i = 0; i < r->n_replicas; i++) {
			check_replica(s, r->replicas[i], size);
			for (size_t j = 0; j < i; j++)
				FUZZ_CHECK(r->replicas[j]->segment_id !=
					   r->replicas[i]->segment_id);
		}
		version_of[k] = r->version;
		size_of[k] = size;
	}
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

static void end_and_read(struct store *s, struct master_service *svc,
			 uint8_t what)
{
	char key[8];
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutEndResponse *er;
	McreplRpc__GetReplicaListRequest g;
	McreplRpc__GetReplicaListResponse *gr;
	unsigned k = what & 3;
	bool ended;

	snprintf(key, sizeof(key), "k%u", k);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.key = key;
	pe.version = version_of[k];
	er = (McreplRpc__PutEndResponse *)call(svc, "PutEnd", &pe.base);
	ended = er->result->code == MCREPL_RPC__CODE__OK;
	protobuf_c_message_free_unpacked(&er->base, NULL);
	mcrepl_rpc__get_replica_list_request__init(&g);
	g.key = key;
	gr = (McreplRpc__GetReplicaListResponse *)call(svc, "GetReplicaList",
						       &g.base);
	if (gr->result->code == MCREPL_RPC__CODE__OK) {
		FUZZ_CHECK(gr->size >= 1 && gr->size <= STORE_MAX_OBJECT_BYTES);
		for (size_t i = 0; i < gr->n_replicas; i++)
			check_replica(s, gr->replicas[i], gr->size);
		if (ended)
			FUZZ_CHECK(gr->size == size_of[k]);
	}
	protobuf_c_message_free_unpacked(&gr->base, NULL);
}

static void remove_key(struct master_service *svc, uint8_t what)
{
	char key[8];
	McreplRpc__RemoveRequest req;
	ProtobufCMessage *r;

	snprintf(key, sizeof(key), "k%u", what & 3);
	mcrepl_rpc__remove_request__init(&req);
	req.key = key;
	r = call(svc, "Remove", &req.base);
	protobuf_c_message_free_unpacked(r, NULL);
}

/* Each segment's allocator consistent, within capacity, its used bytes
 * the regions of the objects on it. */
static void check_store(struct store *s)
{
	store_lock(s);
	for (size_t i = 0; i < store_n_segments(s); i++) {
		const struct segment *seg = store_segment_at(s, i);

		FUZZ_CHECK(seg_alloc_is_consistent(seg->alloc));
		FUZZ_CHECK(store_used(seg) <= seg->capacity);
		FUZZ_CHECK(store_used(seg) % SEG_ALLOC_DEFAULT_ALIGN == 0);
	}
	FUZZ_CHECK(store_indexes_consistent(s));
	store_unlock(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t secret[GRANT_SECRET_BYTES] = "fuzz-grant-key!";
	struct master_service svc;
	struct master_opts o;
	struct store *s = NULL;

	if (size < 1)
		return 0;
	master_opts_defaults(&o);
	FUZZ_CHECK(store_create(&o, secret, 0x5123, &s) == 0);
	clock_ms = 1000;
	FUZZ_CHECK(master_service_init(&svc, s, fake_now, NULL) == 0);
	memset(version_of, 0, sizeof(version_of));
	memset(size_of, 0, sizeof(size_of));
	for (unsigned i = 0; i < 1u + (data[0] >> 6 & 1) + (data[0] >> 7); i++)
		mount(&svc, i, (data[0] >> (3 * i % 6)) & 7);
	data++;
	size--;
	for (; size >= 9; data += 9, size -= 9) {
		uint64_t sz = get_be64(data);
		uint8_t what = data[8];

		clock_ms += 10;
		put(s, &svc, sz, what);
		if (what & 16)
			end_and_read(s, &svc, what);
		if (what & 32)
			remove_key(&svc, what);
		check_store(s);
	}
	master_service_fini(&svc);
	store_destroy(s);
	return 0;
}
