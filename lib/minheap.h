/*
 * Private: an intrusive, indexed binary min-heap. Not installed; not API.
 *
 * Records embed a struct mcrepl__heap_node; the heap stores pointers to the
 * nodes and each node remembers its position, so a record can leave the
 * heap in O(log n) from anywhere (no lazy deletion, no stale entries).
 * Order: smaller `at` first, then smaller `tie` (a deterministic order for
 * equal times). Pushing never allocates: callers reserve capacity first, at
 * a point where failing is still allowed, so later pushes cannot fail.
 * Not thread-safe: the owner locks.
 */
#ifndef MCREPL_MINHEAP_H
#define MCREPL_MINHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcrepl__heap_node {
	uint64_t at;  /* the ordering time */
	uint64_t tie; /* second key for equal times */
	size_t pos;   /* index in the heap, MCREPL__HEAP_OUT when not in it */
};

#define MCREPL__HEAP_OUT SIZE_MAX

struct mcrepl__heap {
	struct mcrepl__heap_node **a;
	size_t n;
	size_t cap;
};

/* An empty heap with no storage (cannot fail). */
void mcrepl__heap_init(struct mcrepl__heap *h);
/* Free the storage (not the nodes). */
void mcrepl__heap_fini(struct mcrepl__heap *h);
/* A node that is in no heap. */
void mcrepl__heap_node_init(struct mcrepl__heap_node *x, uint64_t tie);

static inline bool mcrepl__heap_node_in(const struct mcrepl__heap_node *x)
{
	return x->pos != MCREPL__HEAP_OUT;
}

/* Make room for `want` nodes in total. 0, or -1 when allocation failed
 * (the heap is unchanged then). */
int mcrepl__heap_reserve(struct mcrepl__heap *h, size_t want);

/* Insert x (not in the heap) at time `at`, or move it there if it is in
 * the heap already. Requires reserved room for an insert. */
void mcrepl__heap_set(struct mcrepl__heap *h, struct mcrepl__heap_node *x,
		      uint64_t at);

/* Remove x if it is in the heap. */
void mcrepl__heap_remove(struct mcrepl__heap *h, struct mcrepl__heap_node *x);

/* The earliest node, or NULL when empty. */
struct mcrepl__heap_node *mcrepl__heap_top(const struct mcrepl__heap *h);

#endif
