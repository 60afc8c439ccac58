/*
 * Private: an intrusive, indexed binary min-heap. Not installed; not API.
 *
 * Records embed a struct mcr_heap_node; the heap stores pointers to the
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

struct mcr_heap_node {
	uint64_t at;  /* the ordering time */
	uint64_t tie; /* second key for equal times */
	size_t pos;   /* index in the heap, MCREPL__HEAP_OUT when not in it */
};

#define MCREPL__HEAP_OUT SIZE_MAX

struct mcr_heap {
	struct mcr_heap_node **a;
	size_t n;
	size_t cap;
};

/* An empty heap with no storage (cannot fail). */
void mcr_heap_init(struct mcr_heap *h);
/* Free the storage (not the nodes). */
void mcr_heap_fini(struct mcr_heap *h);
/* A node that is in no heap. */
void mcr_heap_node_init(struct mcr_heap_node *x, uint64_t tie);

static inline bool mcr_heap_node_in(const struct mcr_heap_node *x)
{
	return x->pos != MCREPL__HEAP_OUT;
}

/* Make room for `want` nodes in total. 0, or -1 when allocation failed
 * (the heap is unchanged then). */
int mcr_heap_reserve(struct mcr_heap *h, size_t want);

/* Insert x (not in the heap) at time `at`, or move it there if it is in
 * the heap already. Requires reserved room for an insert. */
void mcr_heap_set(struct mcr_heap *h, struct mcr_heap_node *x, uint64_t at);

/* Remove x if it is in the heap. */
void mcr_heap_remove(struct mcr_heap *h, struct mcr_heap_node *x);

/* The earliest node, or NULL when empty. */
struct mcr_heap_node *mcr_heap_top(const struct mcr_heap *h);

#endif
