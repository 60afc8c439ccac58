/* Helpers shared by the Master service's handler files (service*.c,
 * ha_service.c) only. The handlers are bound from the method table
 * (methods.h). */
#ifndef MCREPL_MASTER_SERVICE_PRIV_H
#define MCREPL_MASTER_SERVICE_PRIV_H

#include "methods.h"
#include "service.h"

#define SVC(s) ((struct master_service *)(void *)(s))

/* A Result and the room for its message. */
struct reply {
	McreplRpc__Result result;
	char msg[256];
	const char *why; /* a refusal's reason label, or NULL */
};

/* Fill r->result: code, reason label (static or NULL), and the message in
 * r->msg, or the code's name when none was written. */
void svc_reply(struct reply *r, McreplRpc__Code code, const char *reason);
/* HA: UNAVAILABLE "recovering" (ask again) in r while a put or remove of
 * tenant/key waits for its workers (store_key_settling); OK otherwise. */
McreplRpc__Code svc_settling(struct store *s, const char *tenant,
			     const char *key, struct reply *r);
/* A protobuf string field for s (borrowed; "" for NULL). */
char *svc_mut(const char *s);
/* A replica message for r of object version (strings borrowed from the
 * store, so the reply goes out before the lock is released), with the
 * data-plane grant for grant_op: DATA_OP_READ until read_expires_ms,
 * DATA_OP_WRITE until the region's grant_until_ms, 0 none. */
void svc_fill_replica(struct store *s, McreplRpc__Replica *m,
		      const struct replica *r, uint64_t version,
		      uint8_t grant_op, uint64_t read_expires_ms);

/* The RDMA address and rkey of r's region into m: only for a copy's
 * target, handed to the source worker (an rkey lets its holder write the
 * whole segment, docs/SECURITY.md; clients never get one). */
void svc_replica_rdma(struct store *s, McreplRpc__Replica *m,
		      const struct replica *r);

/* ---- authorization (service_auth.c) ----
 * svc_authorize: what m's row (methods.h) asks of the caller of req, the
 * request's fields read by name; the service runs it before every handler
 * (master_invoke). The svc_auth_* below are what handlers check beyond it
 * (PutStart's writer id, Stats' detail). */
struct master_method;
McreplRpc__Code svc_authorize(struct master_service *svc, const void *cd,
			      const struct master_method *m,
			      const ProtobufCMessage *req, struct reply *r);
/* Whether cd's principal holds the admin right (true without an auth
 * table). */
bool svc_auth_is_admin(const struct master_service *svc, const void *cd);
/* PutStart's optional writer id: 0, or a live one of the caller's space.
 * OK when it is (always without an auth table), else the refusal's code
 * with r->msg and r->why filled. Reads the store: runs under its lock. */
McreplRpc__Code svc_auth_writer(struct master_service *svc, const void *cd,
				uint64_t client_id, struct reply *r);
/* len bytes of buf sealed in place with the session key of cd's connection
 * (auth_seal), left as they are on a connection without a handshake. 0,
 * or -1 (libcrypto failed). */
int svc_seal(const void *cd, const char *label, uint8_t *buf, size_t len);

#endif
