/* The HA gate (see ha_gate.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ha_gate.h"
#include "mcrepl.pb-c.h"

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
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(od, "result");
	ProtobufCMessage *msg = calloc(1, od->sizeof_message);
	McreplRpc__Result res;
	char text[320], reason[32];

	if (!msg) {
		done(NULL, cd);
		return;
	}
	protobuf_c_message_init(od, msg);
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
	if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
	    f->descriptor == &mcrepl_rpc__result__descriptor)
		*(McreplRpc__Result **)(void *)((char *)msg + f->offset) = &res;
	done(msg, cd);
	free(msg);
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

/* A reply saying "nothing" while recovering becomes "ask again". */
static void recovering_reply(const ProtobufCMessage *msg, void *arg)
{
	struct deferral *d = arg;
	const McreplRpc__Result *r = msg ? result_of(msg) : NULL;
	bool nothing = r && r->code == MCREPL_RPC__CODE__NOT_FOUND;

	if (msg && msg->descriptor == &mcrepl_rpc__exist_response__descriptor)
		nothing = !((const McreplRpc__ExistResponse *)(const void *)msg)
			       ->exists &&
			  (!r || r->code == MCREPL_RPC__CODE__OK);
	if (!nothing) {
		d->done(msg, d->cd);
		return;
	}
	d->g->deferred++;
	refuse(msg->descriptor, HA_REASON_RECOVERING, NULL, d->done, d->cd);
}

static bool is_method(const ProtobufCService *svc, unsigned method,
		      const char *name)
{
	return strcmp(svc->descriptor->methods[method].name, name) == 0;
}

static void gate_invoke(ProtobufCService *svc, unsigned method,
			const ProtobufCMessage *in, ProtobufCClosure done,
			void *cd)
{
	struct ha_gate *g = (struct ha_gate *)svc;
	char leader[256] = "";

	struct deferral d = {done, cd, g};

	if (!g->open(g->arg, leader, sizeof(leader))) {
		g->refused++;
		refuse(svc->descriptor->methods[method].output,
		       HA_REASON_NOT_LEADER, leader, done, cd);
		return;
	}
	if (handler_missing(g->inner, method)) {
		done(NULL, cd);
		return;
	}
	if (!g->recovering(g->arg)) {
		g->inner->invoke(g->inner, method, in, done, cd);
		return;
	}
	if (is_method(svc, method, "PutStart")) {
		g->deferred++;
		refuse(svc->descriptor->methods[method].output,
		       HA_REASON_RECOVERING, NULL, done, cd);
		return;
	}
	if (is_method(svc, method, "GetReplicaList") ||
	    is_method(svc, method, "Exist") || is_method(svc, method, "Stat"))
		g->inner->invoke(g->inner, method, in, recovering_reply, &d);
	else
		g->inner->invoke(g->inner, method, in, done, cd);
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
