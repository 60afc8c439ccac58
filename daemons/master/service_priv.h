/* Helpers shared by the Master service's handler files (service*.c) only.
 * Each file binds its handlers into the service (service_bind_*). */
#ifndef MCREPL_MASTER_SERVICE_PRIV_H
#define MCREPL_MASTER_SERVICE_PRIV_H

#include "service.h"

#define SVC(s) ((struct master_service *)(void *)(s))

/* A Result and the room for its message. */
struct reply {
	McreplRpc__Result result;
	char msg[256];
};

/* Fill r->result: code, reason label (static or NULL), and the message in
 * r->msg, or the code's name when none was written. */
void svc_reply(struct reply *r, McreplRpc__Code code, const char *reason);
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

/* Puts, reads, Exist and Remove (service_obj.c). */
void service_bind_objects(McreplRpc__Master_Service *base);
/* Tasks, ordinary and dynamic copies, proposals (service_copy.c). */
void service_bind_copies(McreplRpc__Master_Service *base);

#endif
