/*
 * mcrepl-master's request handling without sockets: the input's first byte
 * picks the master's options (mode, domain-aware, proposal RPC, reader
 * order, placement), the rest is a stream of RPC frames as a client would
 * send them. Each frame is served by rpc_dispatch (the server's dispatch)
 * on the real Master service (daemons/master/service.c) over an in-process
 * store, then the admission worker and the periodic timer run once
 * (dyn_admit_batch, store_tick). Time is injected: the clock starts at
 * 1000 ms and each request advances it by its request_id's low 16 bits
 * (ms), so leases, cooldowns and client expiry are reached.
 *
 * Properties: every request gets exactly one reply; a handler's reply is of
 * the method's output type, packs and unpacks, carries a Result with a
 * known code that is never INTERNAL (memory does not run out here) and a
 * message when it is not OK; dispatch refusals are UNKNOWN_METHOD or
 * BAD_REQUEST; after every request each segment's allocator is consistent
 * and uses no more than its capacity. The store is destroyed at the end
 * (leaks show under ASan).
 */
#include <string.h>

#include "alloc.h"
#include "flags.h"
#include "fuzz.h"
#include "rpc_dispatch.h"
#include "service.h"

static uint64_t clock_ms;

static uint64_t fake_now(void)
{
	return clock_ms;
}

struct served {
	unsigned replies;
};

static const McreplRpc__Result *result_of(const ProtobufCMessage *msg)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(msg->descriptor,
							    "result");

	FUZZ_CHECK(f && f->type == PROTOBUF_C_TYPE_MESSAGE);
	return *(McreplRpc__Result *const *)(const void *)((const char *)msg +
							   f->offset);
}

static void reply(void *arg, const rpc_frame_head *head,
		  const ProtobufCMessage *msg)
{
	const ProtobufCServiceDescriptor *sd = &mcrepl_rpc__master__descriptor;
	struct served *sv = arg;
	const McreplRpc__Result *res;
	ProtobufCMessage *back;
	uint8_t *buf;
	size_t n;

	sv->replies++;
	if (!msg) {
		/* INVALID_ARGUMENT: a string the wire check refuses */
		FUZZ_CHECK(head->status == MCREPL_RPC__CODE__UNKNOWN_METHOD ||
			   head->status == MCREPL_RPC__CODE__BAD_REQUEST ||
			   head->status == MCREPL_RPC__CODE__INVALID_ARGUMENT);
		FUZZ_CHECK(head->error && head->error[0]);
		return;
	}
	FUZZ_CHECK(head->status == MCREPL_RPC__CODE__OK);
	FUZZ_CHECK(head->method < sd->n_methods);
	FUZZ_CHECK(msg->descriptor == sd->methods[head->method].output);
	n = protobuf_c_message_get_packed_size(msg);
	buf = malloc(n ? n : 1);
	FUZZ_CHECK(buf && protobuf_c_message_pack(msg, buf) == n);
	back = protobuf_c_message_unpack(msg->descriptor, NULL, n, buf);
	FUZZ_CHECK(back);
	protobuf_c_message_free_unpacked(back, NULL);
	free(buf);
	res = result_of(msg);
	FUZZ_CHECK(res);
	FUZZ_CHECK(protobuf_c_enum_descriptor_get_value(
	    &mcrepl_rpc__code__descriptor, (int)res->code));
	if (res->code == MCREPL_RPC__CODE__INTERNAL)
		fprintf(stderr, "INTERNAL from %s: %s\n",
			sd->methods[head->method].name, res->message);
	FUZZ_CHECK(res->code != MCREPL_RPC__CODE__INTERNAL);
	FUZZ_CHECK(res->code == MCREPL_RPC__CODE__OK ||
		   (res->message && res->message[0]));
}

static void options(struct master_opts *o, uint8_t bits)
{
	mcrepl_config *c = &o->cfg;

	master_opts_defaults(o);
	c->mode = (mcrepl_mode)(bits % 3);
	c->domain_aware = bits & 4;
	o->enable_proposal_rpc = bits & 8;
	o->read_load_order = bits & 16;
	c->read_load_aware_placement = bits & 32;
	c->scale_threshold_by_replicas = bits & 64;
	/* small windows and cooldowns, so a short input reaches them */
	c->heat_window_ms = 1000;
	c->admission_qps_threshold = 2;
	c->action_cooldown_ms = bits & 128 ? 0 : 2000;
	c->recreate_cooldown_ms = 2000;
	c->lease_ttl_ms = 5000;
	o->kv_lease_ttl_ms = 50;
	o->max_batch_keys = 64;
	o->warmup_max_copies = 8;
	FUZZ_CHECK(mcrepl_config_validate(c, NULL) == MCREPL_OK);
}

static void check_store(struct store *s)
{
	store_lock(s);
	for (size_t i = 0; i < store_n_segments(s); i++) {
		const struct segment *seg = store_segment_at(s, i);

		FUZZ_CHECK(seg_alloc_is_consistent(seg->alloc));
		FUZZ_CHECK(store_used(seg) <= seg->capacity);
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
	uint64_t last_evict = 0;

	if (size < 1)
		return 0;
	options(&o, data[0]);
	FUZZ_CHECK(store_create(&o, secret, 0x1dea, &s) == 0);
	clock_ms = 1000;
	FUZZ_CHECK(master_service_init(&svc, s, fake_now, NULL) == 0);
	data++;
	size--;
	while (size > 0) {
		struct served sv = {0};
		McreplRpc__Envelope *env = NULL;
		size_t consumed = 0;

		if (rpc_frame_parse(data, size, RPC_FRAME_DEFAULT_MAX_BYTES,
				    &env, &consumed) != RPC_FRAME_OK)
			break;
		clock_ms += env->request_id & 0xffff;
		rpc_dispatch(&svc.base.base, env, reply, &sv);
		FUZZ_CHECK(sv.replies == 1);
		protobuf_c_message_free_unpacked(&env->base, NULL);
		dyn_admit_batch(s, 16, clock_ms);
		store_lock(s);
		store_tick(s, clock_ms, &last_evict);
		store_unlock(s);
		check_store(s);
		data += consumed;
		size -= consumed;
	}
	master_service_fini(&svc);
	store_destroy(s);
	return 0;
}
