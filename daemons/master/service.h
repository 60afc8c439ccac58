/* mcrepl-master's RPC service: the generated Master service bound to a
 * store. A handler locks the store, applies one operation and replies.
 * It unlocks before replying when the reply holds only its own data. Eight
 * reply under the lock (PutStart, GetReplicaList, BatchGetReplicaList,
 * Stat, FetchTasks, CopyStart, DynamicReplicaCopyStart, Stats) because
 * their replies borrow the store's strings (segment hosts, domains and
 * endpoints; task tenants and keys): whatever runs next under the lock may
 * free them, and done() packs the reply before it returns. */
#ifndef MCREPL_MASTER_SERVICE_H
#define MCREPL_MASTER_SERVICE_H

#include <stdint.h>

#include "mcrepl.pb-c.h"
#include "store.h"

struct master_service {
	McreplRpc__Master_Service base; /* first: the server casts to it */
	struct store *store;
	uint64_t (*now_ms)(void);
};

void master_service_init(struct master_service *svc, struct store *store,
			 uint64_t (*now_ms)(void));

/* Prometheus text of the library's and the store's metrics (malloc'd; the
 * caller frees). Locks the store. NULL when out of memory. */
char *master_metrics(struct store *s, size_t *len_out);

#endif
