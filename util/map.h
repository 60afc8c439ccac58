/*
 * An intrusive chained hash map with incremental rehashing: a util shared
 * by libmcrepl and the daemons (util/). Not installed; not API.
 *
 * Records embed a struct mcu_map_node; the caller computes the 64-bit
 * hash and supplies the equality test. Growing doubles the bucket array and
 * moves a few buckets per insert or remove (redis dict style), so no call
 * pays for a whole-table rehash. Inserting never fails: when the larger
 * bucket array cannot be allocated the map keeps its current one and the
 * chains grow longer. Not thread-safe: the owner locks.
 */
#ifndef MCU_MAP_H
#define MCU_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcu_map_node {
	struct mcu_map_node *next;
	uint64_t hash;
};

struct mcu_map {
	struct mcu_map_node **tab[2]; /* tab[1] != NULL while rehashing */
	size_t mask[2];		      /* bucket count - 1 */
	size_t rehash;		      /* next tab[0] bucket to move */
	size_t n;		      /* entries */
};

/* True when node n holds key. */
typedef bool (*mcu_map_eq_fn)(const struct mcu_map_node *n, const void *key);

/* An empty map with `buckets` (a power of two) buckets. 0, or -1 when
 * allocation failed. */
int mcu_map_init(struct mcu_map *m, size_t buckets);
/* Free the buckets (not the nodes). */
void mcu_map_fini(struct mcu_map *m);

struct mcu_map_node *mcu_map_find(const struct mcu_map *m, uint64_t hash,
				  mcu_map_eq_fn eq, const void *key);
/* Insert x (not in the map) under hash. Never fails. */
void mcu_map_insert(struct mcu_map *m, struct mcu_map_node *x, uint64_t hash);
/* Remove x, which is in the map. */
void mcu_map_remove(struct mcu_map *m, struct mcu_map_node *x);

static inline size_t mcu_map_size(const struct mcu_map *m)
{
	return m->n;
}

/* Remove every node, calling fn on each (for teardown: a full pass). */
void mcu_map_drain(struct mcu_map *m,
		   void (*fn)(struct mcu_map_node *x, void *ctx), void *ctx);

#endif
