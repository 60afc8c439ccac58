/* RPC clients for the protocol in frame.h: a blocking one for tools and
 * tests, and an asynchronous one on a libevent loop for the worker.
 *
 * Status of a call (int): RPC_OK (0) on success; a positive value is the
 * McreplRpc__Code the server put in the reply envelope (UNKNOWN_METHOD,
 * BAD_REQUEST, UNIMPLEMENTED, FRAME_TOO_LARGE, INTERNAL, ...); a negative
 * value is a local transport status, RPC_E_*. Application results travel in
 * each response's own `result` field, not here. rpc_status_str() names
 * both kinds.
 *
 * err/errlen: a message buffer; err may be NULL when errlen is 0.
 *
 * The asynchronous client (like the server) writes through libevent, which
 * can raise SIGPIPE: the process must ignore it. The blocking client sends
 * with MSG_NOSIGNAL.
 */
#ifndef MCREPL_DAEMON_RPC_CLIENT_H
#define MCREPL_DAEMON_RPC_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>
#include <protobuf-c/protobuf-c.h>

/* X(name, value, text): local transport statuses, all negative. */
#define RPC_STATUS_MAP(X)                                                      \
	X(RPC_E_TIMEOUT, -1, "timed out")                                      \
	X(RPC_E_UNAVAILABLE, -2, "not connected or connection lost")           \
	X(RPC_E_PROTOCOL, -3, "malformed or unexpected reply")                 \
	X(RPC_E_NOMEM, -4, "out of memory")                                    \
	X(RPC_E_INVALID, -5, "invalid argument")                               \
	X(RPC_E_CANCELLED, -6, "cancelled")                                    \
	X(RPC_E_TLS_PEER, -7, "the server speaks TLS: connect with --tls_ca")  \
	X(RPC_E_HTTP_PEER, -8,                                                 \
	  "the address answers HTTP, not RPC (a /metrics port?): give the "    \
	  "master's rpc_port (its ready line says it; 50051 by default)")

enum rpc_status {
	RPC_OK = 0,
#define RPC_STATUS_ENUM(name, value, text) name = value,
	RPC_STATUS_MAP(RPC_STATUS_ENUM)
#undef RPC_STATUS_ENUM
};

/* "timed out", or the McreplRpc__Code name ("UNKNOWN_METHOD"); never NULL. */
const char *rpc_status_str(int status);

/* Index of the method called `name` ("Exist") in desc, or -1. */
int rpc_method_index(const ProtobufCServiceDescriptor *desc, const char *name);

/* Client settings; rpc_client_config_init() fills the defaults (fields may
 * be added later). Timeouts < 0 mean none; max_frame_bytes 0 = default. */
struct auth_cred;
typedef struct rpc_client_config {
	int connect_timeout_ms; /* 3000; blocking client only */
	int call_timeout_ms;	/* 5000; per call, connect included */
	size_t max_frame_bytes; /* largest envelope sent or accepted; 16 MiB */
	/* Credential (auth.h), borrowed: when set, every connection first
	 * runs the handshake of rpc_auth.h (once per connection; calls made
	 * meanwhile wait for it), and a failed handshake fails the call with
	 * UNAUTHENTICATED or RPC_E_PROTOCOL and the reason in err. NULL = no
	 * handshake (a master without --auth_file). */
	const struct auth_cred *cred;
	/* TLS (tls.h): a context from tls_client_ctx(), borrowed; NULL =
	 * plain TCP. The master's certificate must chain to its CA and name
	 * the host of addr (IP or DNS SAN); a failed handshake fails the
	 * call with RPC_E_UNAVAILABLE and the reason in err. With a client
	 * certificate in the context and no cred, a master with mutual TLS
	 * authenticates the connection by the certificate (auth=cert). The
	 * session key is then exported from TLS (TLS_EXPORTER_LABEL). */
	struct ssl_ctx_st *tls;
} rpc_client_config;

void rpc_client_config_init(rpc_client_config *cfg);

/* ---- blocking client ----------------------------------------------------
 * One connection, one call at a time. Thread-safety: a client must not be
 * used by two threads at once; distinct clients are independent. */
typedef struct rpc_client rpc_client;

/* Connects to addr ("host:port", "[v6]:port") within connect_timeout_ms
 * and, with cfg->cred, authenticates (rpc_auth.h). cfg NULL = defaults. On
 * RPC_OK *out is the client (rpc_client_close()); else *out is NULL, err
 * says why, and the status is RPC_E_INVALID (bad address), RPC_E_UNAVAILABLE
 * (refused, timed out), RPC_E_NOMEM, or from the handshake UNAUTHENTICATED
 * (refused by the master, or a master without --auth_file) or
 * RPC_E_PROTOCOL (the master's proof was wrong). */
int rpc_client_open(rpc_client **out, const char *addr,
		    const rpc_client_config *cfg, char *err, size_t errlen);

/* Closes the connection and frees the client. Accepts NULL. */
void rpc_client_close(rpc_client *client);

/* The session key of the connection now open (rpc_auth.h, AUTH_MAC_BYTES:
 * to unseal what the server sealed for it), or NULL without credentials
 * or connection. Valid until the next call. */
const uint8_t *rpc_client_session_key(const rpc_client *client);

/* Calls method (an index in the service descriptor) with req and waits at
 * most call_timeout_ms for the reply. A connection found broken (server
 * restarted, earlier error or timeout) is re-established first. On RPC_OK
 * *resp_out is the reply unpacked as resp_desc, owned by the caller
 * (protobuf_c_message_free_unpacked(resp, NULL)); otherwise *resp_out is
 * NULL and err holds the server's error text or the local reason. req is
 * borrowed. After a timeout or transport error the connection is dropped
 * (a late reply can never be taken for the next call's). */
int rpc_call(rpc_client *client, uint32_t method, const ProtobufCMessage *req,
	     const ProtobufCMessageDescriptor *resp_desc,
	     ProtobufCMessage **resp_out, char *err, size_t errlen);
/* Whether the last rpc_call() sent its request whole: one that failed
 * after that may have been applied by the server (its answer lost). */
bool rpc_call_sent(const rpc_client *client);

/* ---- asynchronous client -------------------------------------------------
 * Runs on the caller's event_base and never blocks it (connects are
 * non-blocking; addr is resolved once, in rpc_aclient_create). Calls are
 * pipelined on one connection and matched by request id. Thread-safety:
 * use only from the thread running the base. */
typedef struct rpc_aclient rpc_aclient;

/* Completion, called exactly once per accepted call, from the loop (never
 * from inside rpc_aclient_call). status as above; RPC_E_TIMEOUT after
 * call_timeout_ms, RPC_E_UNAVAILABLE when the connection failed or was
 * lost, RPC_E_CANCELLED from rpc_aclient_destroy. resp is non-NULL only on
 * RPC_OK and then owned by the callback
 * (protobuf_c_message_free_unpacked(resp, NULL)). error is the server's
 * text or a local reason, valid during the call only, never NULL. The
 * callback may issue new calls; it must not destroy the client. */
typedef void (*rpc_aclient_cb)(int status, ProtobufCMessage *resp,
			       const char *error, void *arg);

/* Resolves addr (blocking DNS for names; numeric addresses never block) and
 * prepares a client; nothing connects until the first call. cfg NULL =
 * defaults. Returns NULL with a message in err. */
rpc_aclient *rpc_aclient_create(struct event_base *base, const char *addr,
				const rpc_client_config *cfg, char *err,
				size_t errlen);

/* Fails every pending call with RPC_E_CANCELLED, closes, frees. Accepts
 * NULL. Not from within one of its callbacks. */
void rpc_aclient_destroy(rpc_aclient *client);

/* Sends req as method; (re)connects first when not connected. Returns
 * RPC_OK when the call is under way (cb will be called once), or
 * RPC_E_NOMEM, RPC_E_INVALID (request above max_frame_bytes) or
 * RPC_E_UNAVAILABLE (no socket could be set up) or RPC_E_CANCELLED (from a
 * callback during rpc_aclient_destroy), in which case cb is never called. req is packed before return (borrowed). */
int rpc_aclient_call(rpc_aclient *client, uint32_t method,
		     const ProtobufCMessage *req,
		     const ProtobufCMessageDescriptor *resp_desc,
		     rpc_aclient_cb cb, void *arg);

/* Calls waiting for a reply right now. */
size_t rpc_aclient_pending(const rpc_aclient *client);

/* The session key of the authenticated connection now open, or NULL; in a
 * call's callback, the one of the connection the reply came on. */
const uint8_t *rpc_aclient_session_key(const rpc_aclient *client);

#endif
