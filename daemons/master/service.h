/* mcrepl-master's RPC service: the generated Master service bound to a
 * store. Handlers lock the store, apply one operation, unlock, reply. */
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
