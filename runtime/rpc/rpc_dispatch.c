/* Service dispatch of one request envelope (see rpc_dispatch.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "pbcheck.h"
#include "rpc_dispatch.h"

/* The closure_data handed to a handler: one per dispatched request. */
struct rpc_call {
	rpc_reply_fn reply;
	void *arg;
	const ProtobufCMethodDescriptor *method;
	uint64_t request_id;
	uint32_t method_index;
	bool replied;
	const struct auth_principal *principal;
	const uint8_t *session;
	const char *peer; /* NULL: in-process */
	uint64_t conn_id; /* 0: in-process */
	bool deferred;	  /* rpc_call_defer(): the reply comes later */
	void (*later)(void *later_arg, uint64_t conn_id,
		      const rpc_frame_head *head, const ProtobufCMessage *msg);
	void *later_arg;
	/* rpc_call_relay(): the handler's reply goes here instead */
	ProtobufCClosure relay;
	void *relay_arg;
};

/* protobuf-c's generated dispatcher reads the handler table that follows
 * the ProtobufCService base as an array of these (protobuf-c.c). */
typedef void (*generic_handler)(void *service, const ProtobufCMessage *input,
				ProtobufCClosure closure, void *closure_data);

static void call_reply(struct rpc_call *call, McreplRpc__Code status,
		       const char *text, const ProtobufCMessage *msg)
{
	rpc_frame_head head = {.request_id = call->request_id,
			       .method = call->method_index,
			       .status = status,
			       .error = text};

	call->replied = true;
	call->reply(call->arg, &head, msg);
}

static void call_error(struct rpc_call *call, McreplRpc__Code status,
		       const char *text)
{
	call_reply(call, status, text, NULL);
}

static void closure(const ProtobufCMessage *msg, void *closure_data)
{
	struct rpc_call *call = closure_data;

	if (call->replied)
		return;
	if (call->relay) {
		call->replied = true;
		call->relay(msg, call->relay_arg);
		return;
	}
	if (!msg)
		call_error(call, MCREPL_RPC__CODE__INTERNAL, "handler failed");
	else if (msg->descriptor != call->method->output)
		call_error(call, MCREPL_RPC__CODE__INTERNAL,
			   "wrong response type");
	else
		call_reply(call, MCREPL_RPC__CODE__OK, NULL, msg);
}

static bool handler_missing(ProtobufCService *svc, uint32_t method)
{
	const generic_handler *handlers;

	if (svc->invoke != protobuf_c_service_invoke_internal)
		return false;
	handlers = (const generic_handler *)(const void *)(svc + 1);
	return handlers[method] == NULL;
}

/* The called method's descriptor, or NULL after replying why it cannot
 * run. */
static const ProtobufCMethodDescriptor *lookup(struct rpc_call *call,
					       ProtobufCService *svc)
{
	const ProtobufCServiceDescriptor *sd = svc->descriptor;
	uint32_t i = call->method_index;
	char text[160];

	if (i >= sd->n_methods) {
		snprintf(text, sizeof(text), "unknown method %u", i);
		call_error(call, MCREPL_RPC__CODE__UNKNOWN_METHOD, text);
		return NULL;
	}
	if (handler_missing(svc, i)) {
		snprintf(text, sizeof(text), "%s not implemented",
			 sd->methods[i].name);
		call_error(call, MCREPL_RPC__CODE__UNIMPLEMENTED, text);
		return NULL;
	}
	return &sd->methods[i];
}

void rpc_dispatch(ProtobufCService *svc, const McreplRpc__Envelope *env,
		  rpc_reply_fn reply, void *arg)
{
	rpc_dispatch_as(svc, env, NULL, NULL, reply, arg);
}

void rpc_dispatch_as(ProtobufCService *svc, const McreplRpc__Envelope *env,
		     const pb_string_limits *lim, const struct rpc_caller *from,
		     rpc_reply_fn reply, void *arg)
{
	struct rpc_call call = {.reply = reply,
				.arg = arg,
				.request_id = env->request_id,
				.method_index = env->method,
				.principal = from ? from->principal : NULL,
				.session = from ? from->session : NULL,
				.peer = from ? from->peer : NULL,
				.conn_id = from ? from->conn_id : 0,
				.later = from ? from->later : NULL,
				.later_arg = from ? from->later_arg : NULL};
	ProtobufCMessage *in;
	char text[200], why[128];

	call.method = lookup(&call, svc);
	if (!call.method)
		return;
	in = protobuf_c_message_unpack(call.method->input, NULL, env->body.len,
				       env->body.data);
	/* the method's name, not the message type's: people read these */
	if (!in) {
		snprintf(text, sizeof(text), "%s: the request does not parse",
			 call.method->name);
		call_error(&call, MCREPL_RPC__CODE__BAD_REQUEST, text);
		return;
	}
	if (!pb_check_strings(call.method->input, env->body.data, env->body.len,
			      lim, why, sizeof(why))) {
		snprintf(text, sizeof(text), "%s: %s", call.method->name, why);
		call_error(&call, MCREPL_RPC__CODE__INVALID_ARGUMENT, text);
		protobuf_c_message_free_unpacked(in, NULL);
		return;
	}
	svc->invoke(svc, env->method, in, closure, &call);
	protobuf_c_message_free_unpacked(in, NULL);
	if (!call.replied && !call.deferred)
		call_error(&call, MCREPL_RPC__CODE__INTERNAL,
			   "handler did not reply");
}

const struct auth_principal *rpc_call_principal(const void *closure_data)
{
	return ((const struct rpc_call *)closure_data)->principal;
}

const uint8_t *rpc_call_session_key(const void *closure_data)
{
	return ((const struct rpc_call *)closure_data)->session;
}

const char *rpc_call_peer(const void *closure_data)
{
	const char *peer = ((const struct rpc_call *)closure_data)->peer;

	return peer ? peer : "in-process";
}

const char *rpc_call_method(const void *closure_data)
{
	return ((const struct rpc_call *)closure_data)->method->name;
}

uint64_t rpc_call_conn_id(const void *closure_data)
{
	return ((const struct rpc_call *)closure_data)->conn_id;
}

bool rpc_call_defer(const void *closure_data, struct rpc_later *out)
{
	struct rpc_call *call = (struct rpc_call *)(uintptr_t)closure_data;

	if (call->replied || call->relay || !call->later)
		return false;
	call->deferred = call->replied = true; /* the closure is done */
	*out = (struct rpc_later){.send = call->later,
				  .arg = call->later_arg,
				  .conn_id = call->conn_id,
				  .request_id = call->request_id,
				  .method = call->method_index};
	return true;
}

void rpc_later_reply(const struct rpc_later *l, const ProtobufCMessage *msg)
{
	rpc_frame_head head = {.request_id = l->request_id,
			       .method = l->method,
			       .status = MCREPL_RPC__CODE__OK};

	l->send(l->arg, l->conn_id, &head, msg);
}

void *rpc_dispatch_arg(const void *closure_data)
{
	return ((const struct rpc_call *)closure_data)->arg;
}

void rpc_call_relay(ProtobufCService *svc, unsigned method,
		    const ProtobufCMessage *in, const void *closure_data,
		    ProtobufCClosure done, void *arg)
{
	struct rpc_call call = *(const struct rpc_call *)closure_data;

	call.replied = false;
	call.relay = done;
	call.relay_arg = arg;
	svc->invoke(svc, method, in, closure, &call);
	if (!call.replied)
		done(NULL, arg);
}
