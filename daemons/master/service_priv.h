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
	const char *why; /* a refusal's reason label, or NULL */
};

/* Fill r->result: code, reason label (static or NULL), and the message in
 * r->msg, or the code's name when none was written. */
void svc_reply(struct reply *r, McreplRpc__Code code, const char *reason);
/* A protobuf string field for s (borrowed; "" for NULL). */
char *svc_mut(const char *s);
/* A replica message for r (strings borrowed from the store, so the reply
 * goes out before the lock is released). */
void svc_fill_replica(struct store *s, McreplRpc__Replica *m,
		      const struct replica *r, bool with_grant);

/* ---- authorization (service_auth.c) ----
 * Each returns OK when cd's principal may do it (always without an auth
 * table), else the refusal's code with r->msg and r->why filled. Called
 * under the store lock. */
McreplRpc__Code svc_auth_object(struct master_service *svc, const void *cd,
				const char *tenant, unsigned right,
				struct reply *r);
McreplRpc__Code svc_auth_admin(struct master_service *svc, const void *cd,
			       const char *what, struct reply *r);
bool svc_auth_is_admin(const struct master_service *svc, const void *cd);
McreplRpc__Code svc_auth_mount(struct master_service *svc, const void *cd,
			       const McreplRpc__MountSegmentRequest *req,
			       struct reply *r);
/* Worker calls naming client_id (Unmount, Heartbeat, FetchTasks, ...). */
McreplRpc__Code svc_auth_worker(struct master_service *svc, const void *cd,
				uint64_t client_id, struct reply *r);
/* PutStart's optional writer id: 0 or one the caller mounted. */
McreplRpc__Code svc_auth_writer(struct master_service *svc, const void *cd,
				uint64_t client_id, struct reply *r);
/* A copy RPC: a worker call whose task is queued for client_id and names
 * the same object (and, for starts, the same segments). */
struct task_claim {
	uint64_t client_id, task_id;
	const char *tenant, *key;
	bool check_segments;
	uint64_t source, target;
};
McreplRpc__Code svc_auth_task(struct master_service *svc, const void *cd,
			      const struct task_claim *c, struct reply *r);
/* v sealed with the session key of cd's connection (auth_seal), or v
 * itself on a connection without a handshake. */
uint64_t svc_seal_u64(const void *cd, const char *label, uint64_t v);
/* After a mount succeeded: client_id belongs to cd's principal. */
void svc_auth_bind(struct master_service *svc, const void *cd,
		   uint64_t client_id);
void svc_auth_fini(struct master_service *svc);

/* Puts, reads, Exist and Remove (service_obj.c). */
void service_bind_objects(McreplRpc__Master_Service *base);
/* Tasks, ordinary and dynamic copies, proposals (service_copy.c). */
void service_bind_copies(McreplRpc__Master_Service *base);

#endif
