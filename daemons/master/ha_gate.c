/* The HA gate (see ha_gate.h). */
#include <stdio.h>
#include <stdlib.h>

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

static void refuse(const ProtobufCMessageDescriptor *od, const char *leader,
		   ProtobufCClosure done, void *cd)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(od, "result");
	ProtobufCMessage *msg = calloc(1, od->sizeof_message);
	McreplRpc__Result res;
	char text[320], reason[] = HA_REASON_NOT_LEADER;

	if (!msg) {
		done(NULL, cd);
		return;
	}
	protobuf_c_message_init(od, msg);
	mcrepl_rpc__result__init(&res);
	res.code = MCREPL_RPC__CODE__UNAVAILABLE;
	res.reason = reason;
	snprintf(text, sizeof(text), "this master is not the leader%s%s",
		 leader[0] ? "; leader: " : " (no leader now)", leader);
	res.message = text;
	if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
	    f->descriptor == &mcrepl_rpc__result__descriptor)
		*(McreplRpc__Result **)(void *)((char *)msg + f->offset) = &res;
	done(msg, cd);
	free(msg);
}

static void gate_invoke(ProtobufCService *svc, unsigned method,
			const ProtobufCMessage *in, ProtobufCClosure done,
			void *cd)
{
	struct ha_gate *g = (struct ha_gate *)svc;
	char leader[256] = "";

	if (g->open(g->arg, leader, sizeof(leader))) {
		if (handler_missing(g->inner, method))
			done(NULL, cd);
		else
			g->inner->invoke(g->inner, method, in, done, cd);
		return;
	}
	g->refused++;
	refuse(svc->descriptor->methods[method].output, leader, done, cd);
}

void ha_gate_init(struct ha_gate *g, ProtobufCService *inner,
		  bool (*open)(void *arg, char *leader, size_t cap), void *arg)
{
	g->base.descriptor = inner->descriptor;
	g->base.invoke = gate_invoke;
	g->base.destroy = NULL;
	g->inner = inner;
	g->open = open;
	g->arg = arg;
	g->refused = 0;
}
