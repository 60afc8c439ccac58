/*
 * The RPC authentication handshake, both sides, as pure steps
 * over envelopes and frames (no I/O): rpc_server.c runs the server side on
 * each connection, rpc_client.c and rpc_aclient.c the client side.
 *
 *   client                                   server (--auth_file)
 *   AuthHello{1, principal, cn}      ->
 *                                    <-      AuthChallenge{sn}
 *   AuthProof{HMAC(secret, C|p|cn|sn)} ->
 *                                    <-      AuthDone{OK, HMAC(secret, S|p|cn|sn)}
 *   requests ...
 *
 * cn and sn are 32 random bytes, new per connection, so a proof recorded on
 * one connection is worthless on the next (replay); the labels C and S keep
 * either side's proof from serving as the other's; the server proves too,
 * so a client never sends a request to a master that does not hold its
 * secret. An unknown principal gets a challenge like any other and fails at
 * the proof with the same words ("authentication failed"), so names cannot
 * be probed. A hello whose principal could be no name at all (a NUL byte
 * inside, empty, over AUTH_NAME_MAX bytes, a character outside the name
 * alphabet: auth_name_ok) is refused at once as malformed, saying which. Any other frame before AuthDone is refused with
 * UNAUTHENTICATED and the connection closed; so is any failure. The server
 * bounds the whole handshake by a deadline (rpc_server_config).
 *
 * Under mutual TLS (tls.h) a principal written auth=cert in the auth file
 * is authenticated by its client certificate (CN = its name) with no
 * handshake at all; a secret principal still runs the handshake, as the
 * name its certificate carries (rpc_auth_server_cert()).
 *
 * After AuthDone the connection carries the principal: handlers read it
 * with rpc_call_principal() (rpc_dispatch.h), never from a request. Both
 * sides also hold a session key, HMAC(secret, "mcrepl-auth-v1 session"
 * ...) over the same nonces, which never travels: a handler seals a
 * secret for that one peer with it (auth_seal; rpc_call_session_key()),
 * the client unseals with rpc_client_session_key() /
 * rpc_aclient_session_key().
 */
#ifndef MCREPL_DAEMON_RPC_AUTH_H
#define MCREPL_DAEMON_RPC_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "mcrepl.pb-c.h"

/* Envelope.method of the handshake's frames: above any service index. */
#define RPC_AUTH_HELLO 0x41555401u
#define RPC_AUTH_PROOF 0x41555402u
#define RPC_AUTH_VERSION 1u
/* The auth_seal label of MountSegmentResponse.grant_key: sealed for the
 * worker's connection when it authenticated. */
#define MOUNT_GRANT_KEY_LABEL "MountSegmentResponse.grant_key"
/* The largest frame a server takes before the handshake is done (larger:
 * FRAME_TOO_LARGE, closed), and its default bound on the whole handshake. */
#define RPC_AUTH_MAX_FRAME_BYTES 4096u
#define RPC_AUTH_DEFAULT_TIMEOUT_MS 5000u
#define RPC_AUTH_FAILED_TEXT "authentication failed"

/* Why a handshake failed, for the metrics: X(name). */
#define RPC_AUTH_FAILS(X)                                                      \
	X(no_handshake)                                                        \
	X(malformed)                                                           \
	X(unknown_principal)                                                   \
	X(bad_proof)                                                           \
	X(timeout)                                                             \
	X(internal)                                                            \
	X(tls)                                                                 \
	X(no_cert)                                                             \
	X(bad_cert)                                                            \
	X(cert_unknown)                                                        \
	X(cert_mismatch)                                                       \
	X(cert_required)                                                       \
	X(secret_required)

enum rpc_auth_fail {
	RPC_AUTH_OK = 0,
#define RPC_AUTH_FAIL_ENUM(name) RPC_AUTH_FAIL_##name,
	RPC_AUTH_FAILS(RPC_AUTH_FAIL_ENUM)
#undef RPC_AUTH_FAIL_ENUM
	    RPC_AUTH_FAIL_COUNT
};

/* "bad_proof", ...; "" for RPC_AUTH_OK. */
const char *rpc_auth_fail_name(enum rpc_auth_fail f);

/* ---- server side: one per connection ---- */
struct rpc_auth_server {
	enum { RPC_AUTH_WANT_HELLO, RPC_AUTH_WANT_PROOF, RPC_AUTH_DONE } state;
	const struct auth_principal *principal; /* set once DONE */
	const struct auth_principal *claimed;	/* NULL: unknown name */
	uint8_t cn[AUTH_NONCE_BYTES], sn[AUTH_NONCE_BYTES];
	uint8_t session[AUTH_MAC_BYTES]; /* once DONE (auth_seal) */
	/* under mutual TLS: the verified client certificate's CN, when it
	 * names a secret principal (the hello must name the same) */
	char cert_name[AUTH_NAME_MAX + 1];
	/* the name the hello claimed, known or not (a well-formed name,
	 * auth_name_ok): for the server's log line only, never an answer */
	char claimed_name[AUTH_NAME_MAX + 1];
};

/* Under TLS, once the handshake is done: what the client's certificate
 * means. required: the server asked for one (mutual TLS, --tls_ca); peer
 * and cn from tls_peer_check(). With a table t, a verified certificate's
 * CN must name a principal: an auth=cert one is authenticated at once
 * (state DONE, the caller sets the session key), a secret one must still
 * run the handshake as that name. RPC_AUTH_OK, or the reason with the
 * refusal frame (UNAUTHENTICATED, request_id 0) in *frame, *len; the
 * connection must then close. */
enum rpc_auth_fail rpc_auth_server_cert(struct rpc_auth_server *a,
					const struct auth_table *t,
					bool required, int peer, const char *cn,
					const char *why, uint8_t **frame,
					size_t *len);

/* Takes env, a frame arriving before the handshake is done, and puts the
 * frame to send back in *frame, *len (malloc'd; NULL when out of memory).
 * RPC_AUTH_OK: the step succeeded (state advanced; DONE after the proof);
 * anything else: the reply is the refusal, the connection must close. */
enum rpc_auth_fail rpc_auth_server_step(struct rpc_auth_server *a,
					const struct auth_table *t,
					const McreplRpc__Envelope *env,
					uint8_t **frame, size_t *len);

/* ---- client side ---- */
struct rpc_auth_client {
	const struct auth_cred *cred;
	uint8_t cn[AUTH_NONCE_BYTES], sn[AUTH_NONCE_BYTES];
	uint8_t session[AUTH_MAC_BYTES]; /* once DONE: as the server's */
	enum { RPC_AUTH_C_HELLO, RPC_AUTH_C_PROOF, RPC_AUTH_C_DONE } state;
};

/* Starts a handshake for cred: the AuthHello frame to send. 0 or an RPC
 * status (RPC_E_NOMEM, RPC_E_INVALID). */
int rpc_auth_client_hello(struct rpc_auth_client *a,
			  const struct auth_cred *cred, uint8_t **frame,
			  size_t *len);

/* Takes the server's reply env. Returns 0 with *frame set (the proof to
 * send), 0 with *frame NULL and state DONE (authenticated, the server
 * proved itself), or a failure status with err: the server's code
 * (UNAUTHENTICATED, UNKNOWN_METHOD from a master without --auth_file) or
 * RPC_E_PROTOCOL (malformed reply, the server's proof wrong). */
int rpc_auth_client_step(struct rpc_auth_client *a,
			 const McreplRpc__Envelope *env, uint8_t **frame,
			 size_t *len, char *err, size_t errlen);

#endif
