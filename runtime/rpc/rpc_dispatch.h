/* One request envelope through a protobuf-c service, without a connection:
 * the dispatch rule of rpc_server.h ("Dispatch", "The closure contract"),
 * shared by the server and by tests and fuzz targets that drive a service
 * in-process.
 *
 * rpc_dispatch() calls `reply` exactly once before it returns, either with
 * the handler's response (msg != NULL, of the method's output type, head
 * status OK) or with an error (msg == NULL, head->status and head->error
 * say why: UNKNOWN_METHOD, UNIMPLEMENTED, BAD_REQUEST, INTERNAL). head and
 * msg are valid only during the call. head carries the envelope's
 * request_id and method.
 *
 * Thread-safety: as the service; nothing is kept between calls.
 */
#ifndef MCREPL_DAEMON_RPC_DISPATCH_H
#define MCREPL_DAEMON_RPC_DISPATCH_H

#include <stdbool.h>

#include <protobuf-c/protobuf-c.h>

#include "frame.h"
#include "pbcheck.h"

struct auth_principal;

typedef void (*rpc_reply_fn)(void *arg, const rpc_frame_head *head,
			     const ProtobufCMessage *msg);

void rpc_dispatch(ProtobufCService *service, const McreplRpc__Envelope *env,
		  rpc_reply_fn reply, void *arg);

/* Who a request came from: the principal its connection authenticated
 * as (NULL: none; the connection did no handshake), the session key, the
 * peer's address ("1.2.3.4:5678"; NULL: in-process), and the connection's
 * id (rpc_server.h: unique for the server's life; 0: in-process). */
struct rpc_caller {
	const struct auth_principal *principal;
	const uint8_t *session;
	const char *peer;
	uint64_t conn_id;
	/* a reply given after the handler returned (rpc_call_defer()) goes
	 * through later(later_arg, conn_id, head, msg); NULL: cannot wait */
	void (*later)(void *later_arg, uint64_t conn_id,
		      const rpc_frame_head *head, const ProtobufCMessage *msg);
	void *later_arg;
};

/* As rpc_dispatch(), for a request from `from` (NULL: an in-process
 * caller, no principal), refusing with INVALID_ARGUMENT a request whose
 * string fields are longer than lim allows (pbcheck.h; NULL = no limits);
 * the error names the message, the field, its length and the limit. */
void rpc_dispatch_as(ProtobufCService *service, const McreplRpc__Envelope *env,
		     const pb_string_limits *lim, const struct rpc_caller *from,
		     rpc_reply_fn reply, void *arg);

/* The principal the handler's request came from (rpc_auth.h): the one its
 * connection authenticated as, never a field of the request; NULL when the
 * connection did no handshake (a master without --auth_file, in-process
 * callers). Valid only during the handler. */
const struct auth_principal *rpc_call_principal(const void *closure_data);
/* The connection's session key (rpc_auth.h; AUTH_MAC_BYTES), or NULL
 * without a handshake. Valid only during the handler. */
const uint8_t *rpc_call_session_key(const void *closure_data);
/* The peer's address, "in-process" without a connection, and the called
 * method's name ("MountSegment"), for log lines. Valid only during the
 * handler. */
const char *rpc_call_peer(const void *closure_data);
const char *rpc_call_method(const void *closure_data);
/* The id of the connection the request came on (what the server's
 * on_close hook names when it closes; rpc_server.h), 0 in-process. Valid
 * only during the handler. */
uint64_t rpc_call_conn_id(const void *closure_data);

/* Runs svc's method on behalf of the request closure_data came with (a
 * service wrapping another: the HA gate): the handler sees that request's
 * principal, session key and connection, and its reply (NULL: none) goes
 * to done(msg, arg), once, before this returns, instead of the client. */
void rpc_call_relay(ProtobufCService *svc, unsigned method,
		    const ProtobufCMessage *in, const void *closure_data,
		    ProtobufCClosure done, void *arg);

/* A reply that waits: a handler that cannot answer before it returns
 * (the master's Remove waits for its workers, not holding the loop) calls
 * rpc_call_defer() instead of its closure, then rpc_later_reply() once,
 * on the server's thread, with a response of the method's output type.
 * The reply goes to the connection the request came on if it is still
 * open (else it is dropped). rpc_call_defer() is false when the call
 * cannot wait (in-process, relayed): the handler replies now. A deferred
 * reply must be given (or rpc_later_drop()) before the server is
 * destroyed. */
struct rpc_later {
	void (*send)(void *arg, uint64_t conn_id, const rpc_frame_head *head,
		     const ProtobufCMessage *msg);
	void *arg;
	uint64_t conn_id, request_id;
	uint32_t method;
};
bool rpc_call_defer(const void *closure_data, struct rpc_later *out);
void rpc_later_reply(const struct rpc_later *l, const ProtobufCMessage *msg);

/* The `arg` of the rpc_dispatch() call a handler's closure_data belongs
 * to; valid only during the handler. */
void *rpc_dispatch_arg(const void *closure_data);

#endif
