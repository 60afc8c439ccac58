/* The HA gate (see ha_gate.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha_gate.h"
#include "methods.h"
#include "mcrepl.pb-c.h"
#include "rpc_dispatch.h"

typedef void (*generic_handler)(void *service, const ProtobufCMessage *input,
				ProtobufCClosure closure, void *closure_data);

/* protobuf-c's generated dispatcher does not check for a missing handler
 * (rpc_dispatch.c does, for services it calls directly). */
static bool handler_missing(ProtobufCService *svc, unsigned method)
{
	const generic_handler *handlers;

	if (svc->invoke != protobuf_c_service_invoke_internal)
		return false;
	handlers = (const generic_handler *)(const void *)(svc + 1);
	return handlers[method] == NULL;
}

static void refuse(const ProtobufCMessageDescriptor *od, const char *why,
		   const char *leader, ProtobufCClosure done, void *cd)
{
	McreplRpc__Result res;
	char text[320], reason[32];

	mcrepl_rpc__result__init(&res);
	res.code = MCREPL_RPC__CODE__UNAVAILABLE;
	snprintf(reason, sizeof(reason), "%s", why);
	res.reason = reason;
	if (!leader)
		snprintf(text, sizeof(text),
			 "new leader: workers are re-registering objects; "
			 "ask again");
	else
		snprintf(text, sizeof(text),
			 "this master is not the leader%s%s",
			 leader[0] ? "; leader: " : " (no leader now)", leader);
	res.message = text;
	method_reply_result(od, &res, done, cd);
}

/* The result of a reply, or NULL. */
static const McreplRpc__Result *result_of(const ProtobufCMessage *m)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
							    "result");

	if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
		return NULL;
	return *(
	    const McreplRpc__Result *const *)(const void *)((const char *)m +
							    f->offset);
}

struct deferral {
	ProtobufCClosure done;
	void *cd;
	struct ha_gate *g;
};

/* Whether a reply says "nothing" (ask again while recovering): NOT_FOUND,
 * an Exist that is false, or a batch with any such entry. */
static bool says_nothing(const ProtobufCMessage *msg)
{
	const McreplRpc__Result *r = result_of(msg);

	if (r && r->code == MCREPL_RPC__CODE__NOT_FOUND)
		return true;
	if (r && r->code != MCREPL_RPC__CODE__OK)
		return false;
	if (msg->descriptor == &mcrepl_rpc__exist_response__descriptor)
		return !((const McreplRpc__ExistResponse *)(const void *)msg)
			    ->exists;
	if (msg->descriptor ==
	    &mcrepl_rpc__batch_get_replica_list_response__descriptor) {
		const McreplRpc__BatchGetReplicaListResponse *b =
		    (const void *)msg;

		for (size_t i = 0; i < b->n_entries; i++)
			if (says_nothing(&b->entries[i]->base))
				return true;
	}
	return false;
}

/* A reply saying "nothing" while recovering becomes "ask again". */
static void recovering_reply(const ProtobufCMessage *msg, void *arg)
{
	struct deferral *d = arg;

	if (!msg || !says_nothing(msg)) {
		d->done(msg, d->cd);
		return;
	}
	d->g->deferred++;
	refuse(msg->descriptor, HA_REASON_RECOVERING, NULL, d->done, d->cd);
}

/* What the gate does with a method while recovering: its row's class in
 * the method table (methods.h), found by its request type. */
static enum method_ha rule_of(const ProtobufCMethodDescriptor *m)
{
	const struct master_method *row = master_method_by_input(m->input);

	return row ? row->ha : HA_SERVE;
}

static void gate_invoke(ProtobufCService *svc, unsigned method,
			const ProtobufCMessage *in, ProtobufCClosure done,
			void *cd)
{
	struct ha_gate *g = (struct ha_gate *)svc;
	const ProtobufCMethodDescriptor *m = &svc->descriptor->methods[method];
	char leader[256] = "";
	struct deferral d = {.done = done, .cd = cd, .g = g};

	if (!g->open(g->arg, leader, sizeof(leader))) {
		g->refused++;
		refuse(m->output, HA_REASON_NOT_LEADER, leader, done, cd);
		return;
	}
	if (handler_missing(g->inner, method)) {
		done(NULL, cd);
		return;
	}
	switch (g->recovering(g->arg) ? rule_of(m) : HA_SERVE) {
	case HA_REFUSE:
		g->deferred++;
		refuse(m->output, HA_REASON_RECOVERING, NULL, done, cd);
		break;
	case HA_ASK_IF_NOTHING:
		/* the handler must see this request's principal: relayed
		 * with its call, the reply comes back here */
		rpc_call_relay(g->inner, method, in, cd, recovering_reply, &d);
		break;
	case HA_SERVE:
		g->inner->invoke(g->inner, method, in, done, cd);
		break;
	}
}

void ha_gate_init(struct ha_gate *g, ProtobufCService *inner,
		  bool (*open)(void *arg, char *leader, size_t cap),
		  bool (*recovering)(void *arg), void *arg)
{
	g->recovering = recovering;
	g->deferred = 0;
	g->base.descriptor = inner->descriptor;
	g->base.invoke = gate_invoke;
	g->base.destroy = NULL;
	g->inner = inner;
	g->open = open;
	g->arg = arg;
	g->refused = 0;
}
