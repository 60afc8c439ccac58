/* Helpers shared by the dynamic-replication files (store_dyn*.c) only;
 * their entry points are the dyn_ section of store.h. */
#ifndef MCREPL_MASTER_STORE_DYN_H
#define MCREPL_MASTER_STORE_DYN_H

#include "store_priv.h"

/* store_dyn.c */
/* The heat cell for reads from `domain` (the object's own cell unless the
 * config is domain-aware); NULL when the per-object domain table is full
 * or memory is short (create: make one). Only a domain with a mounted
 * segment gets a cell, so per-object metadata is bounded by
 * MASTER_MAX_HEAT_DOMAINS slots of real domains whatever clients send; a
 * full table reuses the slot of a domain no longer mounted. */
mcrepl_heat_cell *dyn__heat_cell(const struct store *s, struct object *o,
				 const char *domain, bool create);

/* store_dyn_room.c */
/* Free `bytes` on seg for a hot copy whose room relieves `relief` reads
 * (mcrepl_room_relief()) under the room rule (mcrepl_room_classify()):
 * every byte or none. The bytes freed (0: refused, counted room_short). */
uint64_t dyn__evict_room(struct store *s, struct segment *seg, uint64_t bytes,
			 uint64_t relief, uint64_t now_ms);

/* store_dyn_copy.c */
/* A lease became live (delta 1) or ended (-1): in-flight and incoming
 * figures of its segments. */
void dyn__lease_live(struct store *s, const mcrepl_lease *l, int delta);
/* Fail the task of a lease cleared before it ran (Remove, sweep). */
void dyn__fail_lease_task(struct store *s, const mcrepl_lease *l);

#endif
