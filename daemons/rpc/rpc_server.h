/* RPC server on a libevent 2.1 loop: TCP listener, one bufferevent per
 * connection, frames as in frame.h, dispatch through a protobuf-c service.
 *
 * Dispatch (rpc_dispatch.h, shared with in-process callers). The host hands
 * over a ProtobufCService * (typically a generated
 * McreplRpc__Master_Service set up with MCREPL_RPC__MASTER__INIT(prefix_)). For each
 * request envelope the server:
 *   - replies UNKNOWN_METHOD if method >= descriptor->n_methods;
 *   - replies UNIMPLEMENTED if the method's function pointer is NULL (checked
 *     when service->invoke is protobuf-c's generated dispatcher, whose
 *     handler table follows the base struct; a custom invoke is trusted);
 *   - replies BAD_REQUEST if the body does not unpack as methods[i].input;
 *   - else calls service->invoke(service, i, input, closure, closure_data).
 * The connection stays open after these replies.
 *
 * The closure contract: a handler calls closure(&response, closure_data)
 * exactly once, synchronously, before it returns; the response must be of
 * the method's output type, and stays owned by the handler (the server packs
 * it during the call). The reply carries the same request_id and method and
 * status OK. Closure not called, called with NULL, or called with the wrong
 * message type: the reply is INTERNAL. Later calls are ignored. closure_data
 * is valid only during invoke. The input message is freed after invoke.
 *
 * Malformed streams: a length prefix above max_frame_bytes gets a
 * FRAME_TOO_LARGE reply (request_id 0) and the connection is closed once the
 * reply is flushed; an envelope that does not unpack gets BAD_REQUEST with
 * error "malformed envelope" and is closed the same way. Other connections
 * are unaffected.
 *
 * Back-pressure: while more than out_high_water bytes of replies wait for a
 * peer, the server stops reading (and dispatching) that peer's requests; it
 * resumes once they are flushed.
 *
 * Thread-safety: a server belongs to the thread running its event_base;
 * every function below must be called from that thread (or before the loop
 * runs). Writes go through libevent, which can raise SIGPIPE: the process
 * must ignore it (signal(SIGPIPE, SIG_IGN)).
 */
#ifndef MCREPL_DAEMON_RPC_SERVER_H
#define MCREPL_DAEMON_RPC_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <protobuf-c/protobuf-c.h>

typedef struct rpc_server rpc_server;
typedef struct rpc_conn rpc_conn;

#define RPC_SERVER_DEFAULT_OUT_HIGH_WATER (4u * 1024u * 1024u)

/* Plain settings; rpc_server_config_init() fills the defaults, so fields may
 * be added later without breaking callers. A zero size takes its default. */
typedef struct rpc_server_config {
	const char *host;	/* bind address; NULL or "" = 0.0.0.0 */
	uint16_t port;		/* 0 = ephemeral, see rpc_server_port() */
	size_t max_frame_bytes; /* envelope bytes per frame; 16 MiB */
	size_t out_high_water;	/* per-connection reply backlog; 4 MiB */
	int backlog;		/* listen(2) backlog; 128 */
} rpc_server_config;

void rpc_server_config_init(rpc_server_config *cfg);

/* Binds, listens and registers with base. service is borrowed and must
 * outlive the server; cfg is copied (host too). Returns NULL with a message
 * in err on failure (bind error, out of memory). */
rpc_server *rpc_server_create(struct event_base *base,
			      const rpc_server_config *cfg,
			      ProtobufCService *service, char *err,
			      size_t errlen);

/* Closes the listener and every connection (unsent replies are dropped) and
 * frees everything. Accepts NULL. Not from within a handler. */
void rpc_server_destroy(rpc_server *server);

/* The bound TCP port (the ephemeral one when cfg->port was 0). */
uint16_t rpc_server_port(const rpc_server *server);

/* Open connections right now. */
size_t rpc_server_conn_count(const rpc_server *server);

/* During a handler: the connection whose request is being served; NULL
 * outside invoke. Valid until the handler returns. */
rpc_conn *rpc_server_current_conn(const rpc_server *server);

/* The same, from the closure_data a handler receives (no server needed). */
rpc_conn *rpc_server_closure_conn(const void *closure_data);

/* The peer as "1.2.3.4:5678" or "[::1]:5678"; owned by the connection. */
const char *rpc_conn_peer(const rpc_conn *conn);

/* A number unique per connection within one server, from 1. */
uint64_t rpc_conn_id(const rpc_conn *conn);

#endif
