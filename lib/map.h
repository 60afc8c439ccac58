/*
 * Private: an intrusive chained hash map with incremental rehashing.
 * Not installed; not API.
 *
 * Records embed a struct mcrepl__map_node; the caller computes the 64-bit
 * hash and supplies the equality test. Growing doubles the bucket array and
 * moves a few buckets per insert or remove (redis dict style), so no call
 * pays for a whole-table rehash. Inserting never fails: when the larger
 * bucket array cannot be allocated the map keeps its current one and the
 * chains grow longer. Not thread-safe: the owner locks.
 */
#ifndef MCREPL_MAP_H
#define MCREPL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcrepl__map_node {
	struct mcrepl__map_node *next;
	uint64_t hash;
};

struct mcrepl__map {
	struct mcrepl__map_node **tab[2]; /* tab[1] != NULL while rehashing */
	size_t mask[2];			  /* bucket count - 1 */
	size_t rehash;			  /* next tab[0] bucket to move */
	size_t n;			  /* entries */
};

/* True when node n holds key. */
typedef bool (*mcrepl__map_eq_fn)(const struct mcrepl__map_node *n,
				  const void *key);

/* An empty map with `buckets` (a power of two) buckets. 0, or -1 when
 * allocation failed. */
int mcrepl__map_init(struct mcrepl__map *m, size_t buckets);
/* Free the buckets (not the nodes). */
void mcrepl__map_fini(struct mcrepl__map *m);

struct mcrepl__map_node *mcrepl__map_find(const struct mcrepl__map *m,
					  uint64_t hash, mcrepl__map_eq_fn eq,
					  const void *key);
/* Insert x (not in the map) under hash. Never fails. */
void mcrepl__map_insert(struct mcrepl__map *m, struct mcrepl__map_node *x,
			uint64_t hash);
/* Remove x, which is in the map. */
void mcrepl__map_remove(struct mcrepl__map *m, struct mcrepl__map_node *x);

static inline size_t mcrepl__map_size(const struct mcrepl__map *m)
{
	return m->n;
}

/* Remove every node, calling fn on each (for teardown: a full pass). */
void mcrepl__map_drain(struct mcrepl__map *m,
		       void (*fn)(struct mcrepl__map_node *x, void *ctx),
		       void *ctx);

#endif
