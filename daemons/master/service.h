/* mcrepl-master's RPC service: the generated Master service bound to a
 * store. Each call runs by its method's row (methods.h): the caller's
 * check, the request's bound, then the handler, which applies one store
 * operation and replies. For a METHOD_LOCKED row the service holds the
 * store lock over the whole handler, its reply included: replies borrow
 * the store's strings (segment hosts, domains and endpoints; task tenants
 * and keys) and whatever runs next under the lock may free them, while
 * done() packs the reply before it returns. The other rows' handlers
 * (MountSegment, UnmountSegment, Stats) take the lock themselves. */
#ifndef MCREPL_MASTER_SERVICE_H
#define MCREPL_MASTER_SERVICE_H

#include <stdint.h>

#include "auth.h"
#include "mcrepl.pb-c.h"
#include "ratelog.h"
#include "store.h"

/* Why a request was refused by authorization (service_auth.c), for
 * Result.reason ("auth_<name>") and /metrics: X(name). */
#define SVC_REFUSALS(X)                                                        \
	X(unauthenticated) /* no principal under an auth table */              \
	X(kind)		   /* worker call by a client or the reverse */        \
	X(right)	   /* read, write, remove or admin missing */          \
	X(tenant)	   /* tenant not the principal's */                    \
	X(client_id)	   /* client id outside the caller's id space */       \
	X(host)		   /* mount for a host not the worker's */             \
	X(domain)	   /* mount in a domain not the worker's */            \
	X(capacity)	   /* mount above the worker's max_capacity */         \
	X(task)		   /* copy RPC without a task of its own */

enum svc_refusal {
#define SVC_REFUSAL_ENUM(name) SVC_REFUSED_##name,
	SVC_REFUSALS(SVC_REFUSAL_ENUM)
#undef SVC_REFUSAL_ENUM
	    SVC_REFUSAL_COUNT
};

const char *svc_refusal_name(enum svc_refusal r);

struct master_service {
	McreplRpc__Master_Service base; /* first: the server casts to it */
	struct store *store;
	uint64_t (*now_ms)(void);
	/* authorization (service_auth.c); auth NULL = none */
	const struct auth_table *auth;
	uint64_t refused[SVC_REFUSAL_COUNT];	      /* by enum svc_refusal */
	struct ratelog rl_refused[SVC_REFUSAL_COUNT]; /* their log lines */
};

/* auth: the principals (borrowed; outlives the service), or NULL for no
 * authorization (every request allowed). 0, or -1
 * when out of memory. */
int master_service_init(struct master_service *svc, struct store *store,
			uint64_t (*now_ms)(void),
			const struct auth_table *auth);
void master_service_fini(struct master_service *svc);

/* Prometheus text of the library's and the store's metrics (malloc'd; the
 * caller frees). Locks the store. NULL when out of memory. */
char *master_metrics(struct store *s, size_t *len_out);

#endif
