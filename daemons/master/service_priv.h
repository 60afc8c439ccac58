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
/* A replica message for r (strings borrowed from the store, so the reply
 * goes out before the lock is released). */
void svc_fill_replica(struct store *s, McreplRpc__Replica *m,
		      const struct replica *r, bool with_grant);

/* Puts, reads, Exist and Remove (service_obj.c). */
void service_bind_objects(McreplRpc__Master_Service *base);
/* Tasks, ordinary and dynamic copies, proposals (service_copy.c). */
void service_bind_copies(McreplRpc__Master_Service *base);
/* ha_service.c: RegisterObjects (HA re-registration) */
void service_bind_ha(McreplRpc__Master_Service *base);

#endif
