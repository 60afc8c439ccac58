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
 * The one exception: a handler may defer its reply (rpc_call_defer(),
 * rpc_dispatch.h) and give it later from the loop.
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
 * Bounds (defaults from netlimits.h, i.e. the daemon's flags):
 *   - Time. A connection with no partial frame and no reply pending is
 *     closed after idle_timeout_ms; a frame must arrive whole within
 *     frame_timeout_ms of its first byte, and a pending reply must make
 *     write progress within it, else the connection is closed.
 *   - Memory. Each connection buffers at most RPC_INPUT_ALLOWANCE bytes of
 *     input on its own; a frame larger than that is read only once
 *     input_budget bytes (shared by all connections, at least one whole
 *     max_frame_bytes frame) have room for all of it. Until then it waits,
 *     first come first served, holding no more than the allowance.
 *   - Connections. At most max_connections (0 = the fd limit less
 *     NET_FD_HEADROOM) and max_per_peer from one address (0 = no cap); a
 *     connection over a cap gets one TOO_MANY frame (request_id 0, the
 *     error naming the cap) and is closed. With auth the caps are fair to
 *     principals: connections that have not authenticated yet may hold
 *     unauth_share of max_connections, max_per_peer counts them only (an
 *     authenticated connection leaves its address's count), and when an
 *     arriving connection finds one of these caps full, or the whole
 *     limit, the oldest unauthenticated connection (of that address, for
 *     its cap) gets TOO_MANY and is closed instead; an arrival is refused
 *     only when every connection is authenticated. So anonymous peers
 *     never keep a principal out, nor a flood from a shared address a
 *     worker there. The reserve below then counts authenticated
 *     connections only: one enters it when it authenticates. The top reserved_share of
 *     max_connections is kept for reserved_methods: a connection admitted
 *     into it whose first request is another method gets TOO_MANY (with
 *     that request's id) and is closed; one that sends nothing is closed
 *     after frame_timeout_ms (not idle_timeout_ms). An address that holds
 *     RPC_RESERVE_PER_PEER connections already does not enter the reserve
 *     (TOO_MANY, request_id 0), so one flooding peer cannot take it.
 *   - Strings. Requests whose key, tenant or other string fields are longer
 *     than max_key_bytes, max_tenant_bytes, max_string_bytes get
 *     INVALID_ARGUMENT naming the field and the limit (pbcheck.h).
 *
 * TLS (cfg.tls): the same framing and bounds inside a TLS stream
 * (bufferevent_openssl). A handshake that fails (a plaintext client, bytes
 * that are not TLS) closes the connection, counted as auth failure "tls";
 * one not done within frame_timeout_ms is closed as a frame timeout.
 * Refusals of a client certificate are UNAUTHENTICATED frames (request_id
 * 0) sent inside TLS, then the connection closes.
 *
 * Thread-safety: a server belongs to the thread running its event_base;
 * every function below must be called from that thread (or before the loop
 * runs). Writes go through libevent, which can raise SIGPIPE: the process
 * must ignore it (signal(SIGPIPE, SIG_IGN)).
 */
#ifndef MCREPL_DAEMON_RPC_SERVER_H
#define MCREPL_DAEMON_RPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <protobuf-c/protobuf-c.h>

#include "netlimits.h" /* the bounds' defaults; net_http_limit() */
#include "rpc_auth.h"

typedef struct rpc_server rpc_server;
typedef struct rpc_conn rpc_conn;

#define RPC_SERVER_DEFAULT_OUT_HIGH_WATER (4u * 1024u * 1024u)
/* Input a connection may buffer without a share of the input budget. */
#define RPC_INPUT_ALLOWANCE (64u * 1024u)
/* Connections an address may already hold and still enter the reserve. */
#define RPC_RESERVE_PER_PEER 8u

/* Plain settings; rpc_server_config_init() fills the defaults, so fields may
 * be added later without breaking callers. A zero size takes its default;
 * a zero bound from idle_timeout_ms on means "no bound" (max_connections:
 * the fd limit). */
typedef struct rpc_server_config {
	const char *host;	/* bind address; NULL or "" = 0.0.0.0 */
	uint16_t port;		/* 0 = ephemeral, see rpc_server_port() */
	size_t max_frame_bytes; /* envelope bytes per frame; 16 MiB */
	size_t out_high_water;	/* per-connection reply backlog; 4 MiB */
	int backlog;		/* listen(2) backlog; 128 */
	uint32_t idle_timeout_ms;
	uint32_t frame_timeout_ms;
	size_t input_budget;
	uint32_t max_connections;
	uint32_t max_per_peer;
	/* with auth: the share of max_connections that connections not yet
	 * authenticated may hold (0 = all of it); see "Connections" */
	double unauth_share;
	double reserved_share;	      /* 0..1 */
	const char *reserved_methods; /* "A,B,C": method names; copied */
	size_t max_key_bytes, max_tenant_bytes, max_string_bytes;
	/* Authentication (rpc_auth.h): NULL = none. With a table, every
	 * connection must complete the handshake within auth_timeout_ms of
	 * its accept (0 = 5000) before any request; borrowed, must outlive
	 * the server. */
	const struct auth_table *auth;
	uint32_t auth_timeout_ms;
	/* TLS (tls.h): NULL = plain TCP. With a context every connection
	 * first runs a TLS handshake, bounded by frame_timeout_ms (else by
	 * the idle or handshake deadline); tls_verify_clients (a context
	 * made with --tls_ca): a connection without a verified client
	 * certificate is refused, and with auth its CN names its principal
	 * (rpc_auth_server_cert()). Borrowed, must outlive the server. */
	struct ssl_ctx_st *tls;
	bool tls_verify_clients;
	/* Called on the server's thread once for each connection that was
	 * admitted (not one refused over a cap) as it is freed, whoever
	 * closed it, with the id its requests carried (rpc_call_conn_id());
	 * not from rpc_server_destroy(). It may run from within the server's
	 * own callbacks: note the id and act later (the master releases, on
	 * its next tick, what a writer that left had reserved). NULL: none. */
	void (*on_close)(void *arg, uint64_t conn_id);
	void *on_close_arg;
} rpc_server_config;

/* The defaults: the fixed ones above and net_limits()->rpc. */
void rpc_server_config_init(rpc_server_config *cfg);

/* What the bounds did, cumulative, and the budget now. */
typedef struct rpc_server_stats {
	uint64_t refused_cap;	  /* over max_connections */
	uint64_t refused_peer;	  /* over max_per_peer */
	uint64_t refused_reserve; /* reserve entered with another method */
	/* with auth: unauthenticated connections closed to make room, by the
	 * cap that was full */
	uint64_t anon_closed_share; /* unauth_share */
	uint64_t anon_closed_peer;  /* max_per_peer */
	uint64_t anon_closed_limit; /* max_connections */
	size_t unauth_cap;	    /* the unauthenticated share in force */
	size_t unauth_now;	    /* unauthenticated connections now */
	uint64_t idle_closed;
	uint64_t frame_timeouts; /* frame or reply stalled */
	uint64_t budget_waits;	 /* frames that waited for input budget */
	size_t budget_used;	 /* bytes granted now */
	size_t budget_waiting;	 /* connections waiting now */
	size_t max_connections;	 /* the caps in force */
	size_t reserved;
	uint64_t tls_ok;  /* TLS handshakes done */
	uint64_t auth_ok; /* handshakes done (certificates included) */
	uint64_t auth_failed[RPC_AUTH_FAIL_COUNT]; /* by rpc_auth_fail */
} rpc_server_stats;

void rpc_server_stats_get(const rpc_server *server, rpc_server_stats *out);

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

/* Open connections right now (refused ones being closed not counted). */
size_t rpc_server_conn_count(const rpc_server *server);

/* During a handler: the connection whose request is being served; NULL
 * outside invoke. Valid until the handler returns. */
rpc_conn *rpc_server_current_conn(const rpc_server *server);

/* The same, from the closure_data a handler receives (no server needed). */
rpc_conn *rpc_server_closure_conn(const void *closure_data);

/* The peer as "1.2.3.4:5678" or "[::1]:5678"; owned by the connection. */
const char *rpc_conn_peer(const rpc_conn *conn);

#endif
