/* The RPC authentication handshake's steps (see rpc_auth.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "pbcheck.h"
#include "rpc_auth.h"
#include "rpc_client.h"
#include "tls.h"

const char *rpc_auth_fail_name(enum rpc_auth_fail f)
{
	static const char *const names[] = {"",
#define RPC_AUTH_FAIL_NAME(name) #name,
					    RPC_AUTH_FAILS(RPC_AUTH_FAIL_NAME)
#undef RPC_AUTH_FAIL_NAME
	};

	return (unsigned)f < RPC_AUTH_FAIL_COUNT ? names[f] : "?";
}

/* A frame of method with msg as body (NULL = none) and status/text. */
static void make_frame(uint64_t request_id, uint32_t method,
		       McreplRpc__Code status, const char *text,
		       const ProtobufCMessage *msg, uint8_t **frame,
		       size_t *len)
{
	rpc_frame_head head = {.request_id = request_id,
			       .method = method,
			       .status = status,
			       .error = text};

	*frame = NULL;
	*len = 0;
	if (rpc_frame_encode_msg(&head, msg, frame, len) != RPC_FRAME_OK)
		*frame = NULL;
}

/* The refusal of a connection: UNAUTHENTICATED in the envelope. */
static enum rpc_auth_fail refuse(const McreplRpc__Envelope *env,
				 enum rpc_auth_fail why, const char *text,
				 uint8_t **frame, size_t *len)
{
	make_frame(env->request_id, env->method,
		   MCREPL_RPC__CODE__UNAUTHENTICATED, text, NULL, frame, len);
	return why;
}

/* What is wrong with hello h (NULL: did not unpack), or NULL. A name that
 * could never be in an auth file is refused as malformed, before any
 * lookup: its bytes say nothing about which names exist. */
static const char *hello_fault(const McreplRpc__AuthHello *h,
			       const McreplRpc__Envelope *env)
{
	size_t n;

	if (!h || h->version != RPC_AUTH_VERSION ||
	    h->client_nonce.len != AUTH_NONCE_BYTES)
		return "malformed AuthHello (version 1, a 32-byte nonce)";
	/* protobuf-c stops a string at its first NUL: "w1\0x" would read
	 * as "w1" */
	if (pb_nul_string(&mcrepl_rpc__auth_hello__descriptor, env->body.data,
			  env->body.len))
		return "malformed AuthHello: the principal holds a NUL byte";
	n = strnlen(h->principal, AUTH_NAME_MAX + 1);
	if (n == 0)
		return "malformed AuthHello: the principal is empty";
	if (n > AUTH_NAME_MAX)
		return "malformed AuthHello: the principal is longer than 64 "
		       "bytes";
	if (!auth_name_ok(h->principal))
		return "malformed AuthHello: the principal has a character "
		       "outside A-Z a-z 0-9 . _ -";
	return NULL;
}

static enum rpc_auth_fail on_hello(struct rpc_auth_server *a,
				   const struct auth_table *t,
				   const McreplRpc__Envelope *env,
				   uint8_t **frame, size_t *len)
{
	McreplRpc__AuthHello *h =
	    mcrepl_rpc__auth_hello__unpack(NULL, env->body.len, env->body.data);
	const char *fault = hello_fault(h, env);
	McreplRpc__AuthChallenge ch;
	McreplRpc__Result res;

	if (fault) {
		if (h)
			mcrepl_rpc__auth_hello__free_unpacked(h, NULL);
		return refuse(env, RPC_AUTH_FAIL_malformed, fault, frame, len);
	}
	if (a->cert_name[0] && strcmp(a->cert_name, h->principal) != 0) {
		char text[200];

		snprintf(text, sizeof(text),
			 "principal '%.64s' is not the one of the client "
			 "certificate ('%s')",
			 h->principal, a->cert_name);
		mcrepl_rpc__auth_hello__free_unpacked(h, NULL);
		return refuse(env, RPC_AUTH_FAIL_cert_mismatch, text, frame,
			      len);
	}
	a->claimed = auth_find(t, h->principal);
	snprintf(a->claimed_name, sizeof(a->claimed_name), "%s", h->principal);
	memcpy(a->cn, h->client_nonce.data, AUTH_NONCE_BYTES);
	mcrepl_rpc__auth_hello__free_unpacked(h, NULL);
	if (auth_nonce(a->sn))
		return refuse(env, RPC_AUTH_FAIL_internal, "no random nonce",
			      frame, len);
	mcrepl_rpc__auth_challenge__init(&ch);
	mcrepl_rpc__result__init(&res);
	ch.result = &res;
	ch.server_nonce.data = a->sn;
	ch.server_nonce.len = AUTH_NONCE_BYTES;
	make_frame(env->request_id, RPC_AUTH_HELLO, MCREPL_RPC__CODE__OK, NULL,
		   &ch.base, frame, len);
	a->state = RPC_AUTH_WANT_PROOF;
	return RPC_AUTH_OK;
}

static enum rpc_auth_fail on_proof(struct rpc_auth_server *a,
				   const McreplRpc__Envelope *env,
				   uint8_t **frame, size_t *len)
{
	McreplRpc__AuthProof *pr =
	    mcrepl_rpc__auth_proof__unpack(NULL, env->body.len, env->body.data);
	const struct auth_principal *p = a->claimed;
	uint8_t want[AUTH_MAC_BYTES], smac[AUTH_MAC_BYTES];
	McreplRpc__AuthDone done;
	McreplRpc__Result res;
	bool good;

	if (!pr || pr->client_mac.len != AUTH_MAC_BYTES) {
		if (pr)
			mcrepl_rpc__auth_proof__free_unpacked(pr, NULL);
		return refuse(env, RPC_AUTH_FAIL_malformed,
			      "malformed AuthProof (a 32-byte MAC)", frame,
			      len);
	}
	if (!p || p->cert) {
		/* the same work as for a known name: no timing tells; an
		 * auth=cert principal has no secret to prove */
		static const uint8_t dummy[AUTH_SECRET_MIN];

		auth_mac(dummy, sizeof(dummy), AUTH_SIDE_CLIENT, "", a->cn,
			 a->sn, want);
		auth_mac(dummy, sizeof(dummy), AUTH_SIDE_SERVER, "", a->cn,
			 a->sn, smac);
		(void)auth_mac_equal(want, pr->client_mac.data);
		mcrepl_rpc__auth_proof__free_unpacked(pr, NULL);
		return refuse(env,
			      p ? RPC_AUTH_FAIL_cert_required
				: RPC_AUTH_FAIL_unknown_principal,
			      RPC_AUTH_FAILED_TEXT, frame, len);
	}
	if (auth_mac(p->secret, p->secret_len, AUTH_SIDE_CLIENT, p->name, a->cn,
		     a->sn, want) ||
	    auth_mac(p->secret, p->secret_len, AUTH_SIDE_SERVER, p->name, a->cn,
		     a->sn, smac) ||
	    auth_mac(p->secret, p->secret_len, AUTH_SIDE_SESSION, p->name,
		     a->cn, a->sn, a->session)) {
		mcrepl_rpc__auth_proof__free_unpacked(pr, NULL);
		return refuse(env, RPC_AUTH_FAIL_internal, "HMAC failed", frame,
			      len);
	}
	good = auth_mac_equal(want, pr->client_mac.data);
	mcrepl_rpc__auth_proof__free_unpacked(pr, NULL);
	if (!good)
		return refuse(env, RPC_AUTH_FAIL_bad_proof,
			      RPC_AUTH_FAILED_TEXT, frame, len);
	mcrepl_rpc__auth_done__init(&done);
	mcrepl_rpc__result__init(&res);
	done.result = &res;
	done.server_mac.data = smac;
	done.server_mac.len = AUTH_MAC_BYTES;
	make_frame(env->request_id, RPC_AUTH_PROOF, MCREPL_RPC__CODE__OK, NULL,
		   &done.base, frame, len);
	a->principal = p;
	a->state = RPC_AUTH_DONE;
	return RPC_AUTH_OK;
}

enum rpc_auth_fail rpc_auth_server_step(struct rpc_auth_server *a,
					const struct auth_table *t,
					const McreplRpc__Envelope *env,
					uint8_t **frame, size_t *len)
{
	if (a->state == RPC_AUTH_WANT_HELLO && env->method == RPC_AUTH_HELLO)
		return on_hello(a, t, env, frame, len);
	if (a->state == RPC_AUTH_WANT_PROOF && env->method == RPC_AUTH_PROOF)
		return on_proof(a, env, frame, len);
	if (env->method == RPC_AUTH_HELLO || env->method == RPC_AUTH_PROOF)
		return refuse(env, RPC_AUTH_FAIL_malformed,
			      "handshake frame out of order", frame, len);
	if (a->cert_name[0]) {
		char text[200];

		snprintf(text, sizeof(text),
			 "principal '%s' authenticates by secret, not by its "
			 "certificate: add --secret_file",
			 a->cert_name);
		return refuse(env, RPC_AUTH_FAIL_secret_required, text, frame,
			      len);
	}
	return refuse(env, RPC_AUTH_FAIL_no_handshake,
		      "this master requires authentication: authenticate "
		      "first (--principal and --secret_file)",
		      frame, len);
}

enum rpc_auth_fail rpc_auth_server_cert(struct rpc_auth_server *a,
					const struct auth_table *t,
					bool required, int peer, const char *cn,
					const char *why, uint8_t **frame,
					size_t *len)
{
	McreplRpc__Envelope env;
	const struct auth_principal *p;
	char text[256];

	*frame = NULL;
	*len = 0;
	mcrepl_rpc__envelope__init(&env);
	if (!required)
		return RPC_AUTH_OK; /* no certificate was asked for */
	if (peer == TLS_PEER_NONE)
		return refuse(&env, RPC_AUTH_FAIL_no_cert,
			      "this master requires a client certificate "
			      "(mutual TLS): connect with --tls_cert and "
			      "--tls_key",
			      frame, len);
	if (peer != TLS_PEER_OK) {
		snprintf(text, sizeof(text),
			 "client certificate refused: %s (it must chain to "
			 "the master's --tls_ca)",
			 why);
		return refuse(&env, RPC_AUTH_FAIL_bad_cert, text, frame, len);
	}
	if (!t)
		return RPC_AUTH_OK;
	p = auth_find(t, cn);
	if (!p) {
		snprintf(text, sizeof(text),
			 "client certificate CN '%.64s' names no principal",
			 cn);
		return refuse(&env, RPC_AUTH_FAIL_cert_unknown, text, frame,
			      len);
	}
	if (!p->cert) {
		snprintf(a->cert_name, sizeof(a->cert_name), "%s", p->name);
		return RPC_AUTH_OK;
	}
	a->principal = p;
	a->state = RPC_AUTH_DONE;
	return RPC_AUTH_OK;
}

/* ---- client side ---- */

int rpc_auth_client_hello(struct rpc_auth_client *a,
			  const struct auth_cred *cred, uint8_t **frame,
			  size_t *len)
{
	McreplRpc__AuthHello h;

	memset(a, 0, sizeof(*a));
	a->cred = cred;
	if (auth_nonce(a->cn))
		return RPC_E_INVALID;
	mcrepl_rpc__auth_hello__init(&h);
	h.version = RPC_AUTH_VERSION;
	h.principal = (char *)(uintptr_t)cred->name;
	h.client_nonce.data = a->cn;
	h.client_nonce.len = AUTH_NONCE_BYTES;
	make_frame(0, RPC_AUTH_HELLO, MCREPL_RPC__CODE__OK, NULL, &h.base,
		   frame, len);
	return *frame ? 0 : RPC_E_NOMEM;
}

static int client_fail(char *err, size_t errlen, int status, const char *fmt,
		       ...) __attribute__((format(printf, 4, 5)));
static int client_fail(char *err, size_t errlen, int status, const char *fmt,
		       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return status;
}

/* The server's reply to our hello: the proof to send. */
static int on_challenge(struct rpc_auth_client *a,
			const McreplRpc__Envelope *env, uint8_t **frame,
			size_t *len, char *err, size_t errlen)
{
	McreplRpc__AuthChallenge *ch = mcrepl_rpc__auth_challenge__unpack(
	    NULL, env->body.len, env->body.data);
	McreplRpc__AuthProof pr;
	uint8_t mac[AUTH_MAC_BYTES];
	const struct auth_cred *c = a->cred;

	if (!ch || ch->server_nonce.len != AUTH_NONCE_BYTES) {
		if (ch)
			mcrepl_rpc__auth_challenge__free_unpacked(ch, NULL);
		return client_fail(err, errlen, RPC_E_PROTOCOL, "%s",
				   "malformed AuthChallenge");
	}
	memcpy(a->sn, ch->server_nonce.data, AUTH_NONCE_BYTES);
	mcrepl_rpc__auth_challenge__free_unpacked(ch, NULL);
	if (auth_mac(c->secret, c->secret_len, AUTH_SIDE_CLIENT, c->name, a->cn,
		     a->sn, mac))
		return client_fail(err, errlen, RPC_E_INVALID, "%s",
				   "HMAC failed");
	mcrepl_rpc__auth_proof__init(&pr);
	pr.client_mac.data = mac;
	pr.client_mac.len = AUTH_MAC_BYTES;
	make_frame(0, RPC_AUTH_PROOF, MCREPL_RPC__CODE__OK, NULL, &pr.base,
		   frame, len);
	a->state = RPC_AUTH_C_PROOF;
	return *frame ? 0 : RPC_E_NOMEM;
}

/* The server's AuthDone: it must prove it holds our secret too. */
static int on_done(struct rpc_auth_client *a, const McreplRpc__Envelope *env,
		   char *err, size_t errlen)
{
	McreplRpc__AuthDone *d =
	    mcrepl_rpc__auth_done__unpack(NULL, env->body.len, env->body.data);
	const struct auth_cred *c = a->cred;
	uint8_t want[AUTH_MAC_BYTES];
	bool good;

	if (!d || d->server_mac.len != AUTH_MAC_BYTES) {
		if (d)
			mcrepl_rpc__auth_done__free_unpacked(d, NULL);
		return client_fail(err, errlen, RPC_E_PROTOCOL, "%s",
				   "malformed AuthDone");
	}
	good = auth_mac(c->secret, c->secret_len, AUTH_SIDE_SERVER, c->name,
			a->cn, a->sn, want) == 0 &&
	       auth_mac_equal(want, d->server_mac.data) &&
	       auth_mac(c->secret, c->secret_len, AUTH_SIDE_SESSION, c->name,
			a->cn, a->sn, a->session) == 0;
	mcrepl_rpc__auth_done__free_unpacked(d, NULL);
	if (!good)
		return client_fail(err, errlen, RPC_E_PROTOCOL, "%s",
				   "the master could not prove it holds this "
				   "principal's secret (not the real master?)");
	a->state = RPC_AUTH_C_DONE;
	return 0;
}

int rpc_auth_client_step(struct rpc_auth_client *a,
			 const McreplRpc__Envelope *env, uint8_t **frame,
			 size_t *len, char *err, size_t errlen)
{
	*frame = NULL;
	*len = 0;
	if (env->status == MCREPL_RPC__CODE__UNKNOWN_METHOD)
		return client_fail(
		    err, errlen, MCREPL_RPC__CODE__UNAUTHENTICATED, "%s",
		    "the master does not authenticate (started without "
		    "--auth_file): refusing to use it with credentials");
	if (env->status != MCREPL_RPC__CODE__OK)
		return client_fail(
		    err, errlen, (int)env->status, "authentication refused: %s",
		    env->error && env->error[0] ? env->error : "?");
	if (a->state == RPC_AUTH_C_HELLO && env->method == RPC_AUTH_HELLO)
		return on_challenge(a, env, frame, len, err, errlen);
	if (a->state == RPC_AUTH_C_PROOF && env->method == RPC_AUTH_PROOF)
		return on_done(a, env, err, errlen);
	return client_fail(err, errlen, RPC_E_PROTOCOL, "%s",
			   "unexpected frame during the handshake");
}
