/* Connections per peer address (the port is ignored), for per-peer caps.
 * An entry exists while its count is above zero. Not thread-safe: the
 * owner's loop thread only. */
#ifndef MCREPL_DAEMON_PEER_TABLE_H
#define MCREPL_DAEMON_PEER_TABLE_H

#include <stdint.h>
#include <sys/socket.h>

#include "util/map.h"

struct peer_entry;

struct peer_table {
	struct mcu_map map;
};

/* 0, or -1 when out of memory. */
int peer_table_init(struct peer_table *t);
/* Frees every entry. */
void peer_table_fini(struct peer_table *t);

/* Connections counted for sa's address (0 when none). */
uint32_t peer_table_count(const struct peer_table *t,
			  const struct sockaddr *sa);

/* sa's address's entry, or NULL when it has no connection counted. */
struct peer_entry *peer_table_find(const struct peer_table *t,
				   const struct sockaddr *sa);

/* Counts one more connection from sa's address: its entry (to give back
 * with peer_table_put), or NULL when out of memory. */
struct peer_entry *peer_table_add(struct peer_table *t,
				  const struct sockaddr *sa);

/* One connection fewer; e (from peer_table_add) may be freed. NULL is
 * accepted. */
void peer_table_put(struct peer_table *t, struct peer_entry *e);

#endif
