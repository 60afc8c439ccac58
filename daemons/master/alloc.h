/*
 * Segment offset allocator: hands out byte ranges of one worker's MEMORY
 * segment to object replicas. Used by the master daemon.
 *
 * This header is the contract: what is not declared here is private.
 *
 * The managed memory is remote: the allocator never touches it. It keeps
 * its own metadata (one node per free or allocated range, a hash map of
 * live allocations) on the local heap, so a segment of any capacity up to
 * 2^64 - 1 bytes costs memory proportional to the number of ranges only.
 * Offsets are relative to the start of the segment: [0, capacity).
 *
 * Design: TLSF (two-level segregated fit). Free ranges sit in 64 x 32 size
 * classes with a bitmap per level, so finding a class that surely fits is
 * a couple of bit scans. Every range, free or allocated, is also linked to
 * its address neighbours, so a free coalesces with both neighbours in O(1).
 * Live allocations are found by offset in a chained hash map.
 *
 * Fit guarantee: seg_alloc_alloc() fails with -ENOSPC only when no free
 * range can hold the (aligned) request. Plain TLSF may miss a fitting range
 * in the request's own size class; here that class is scanned as a last
 * resort, so the allocator is exact (the only non-O(1) path, taken when no
 * larger class has a free range).
 *
 * Errors are negative errno values. A call that fails leaves the allocator
 * exactly as it was: in particular -ENOMEM (the allocator's own metadata
 * could not be allocated) is decided before anything is changed, and
 * seg_alloc_free() never allocates, so it cannot fail for lack of memory.
 *
 * Thread-safety: none. One allocator must not be used from two threads at
 * once; the master serialises all calls under its segment lock. Distinct
 * allocators are independent.
 */
#ifndef MCREPL_DAEMON_ALLOC_H
#define MCREPL_DAEMON_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment used when seg_alloc_create() is given align == 0. */
#define SEG_ALLOC_DEFAULT_ALIGN 64u

struct seg_alloc;

/*
 * Where the allocator gets its metadata memory. alloc(ctx, size) returns
 * memory or NULL; free(ctx, ptr) releases what alloc returned and accepts
 * NULL. The struct is copied; ctx is borrowed and must outlive the
 * allocator. Lets tests inject failures and hosts account for memory.
 */
struct seg_alloc_mem {
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr);
	void *ctx;
};

/*
 * Create an allocator for a segment of `capacity` bytes whose whole space
 * is free. `align` is a power of two (0 selects SEG_ALLOC_DEFAULT_ALIGN);
 * every offset handed out and every size is a multiple of it. A capacity
 * that is not a multiple of align is rounded down (the tail is never used);
 * seg_alloc_capacity() reports the rounded value.
 *
 * Returns 0 and stores the allocator in *out (the caller owns it and
 * releases it with seg_alloc_destroy()); -EINVAL for a NULL out, an align
 * that is not a power of two, or a capacity smaller than align; -ENOMEM.
 * On failure *out is left untouched. Metadata comes from malloc/free.
 */
int seg_alloc_create(uint64_t capacity, uint64_t align, struct seg_alloc **out);

/* As seg_alloc_create(), with metadata from `mem` (NULL = malloc/free);
 * -EINVAL also when mem lacks alloc or free. */
int seg_alloc_create_with(uint64_t capacity, uint64_t align,
			  const struct seg_alloc_mem *mem,
			  struct seg_alloc **out);

/* Release the allocator and all its metadata. NULL is a no-op. Offsets
 * handed out become meaningless; nothing is done to the segment itself. */
void seg_alloc_destroy(struct seg_alloc *a);

/*
 * Allocate `size` bytes, rounded up to the alignment, and store the start
 * offset (a multiple of the alignment) in *offset_out. O(1), except the
 * last-resort scan described above, and an occasional O(live) growth of
 * the hash map (amortised O(1)).
 *
 * Returns 0; -EINVAL for a NULL argument, size 0, or a size whose rounding
 * overflows uint64_t; -ENOSPC when no free range holds the rounded size;
 * -ENOMEM. On failure *offset_out is left untouched.
 */
int seg_alloc_alloc(struct seg_alloc *a, uint64_t size, uint64_t *offset_out);

/*
 * Allocate exactly [offset, offset + size rounded up to the alignment):
 * for re-registering regions that already hold data (master HA). The
 * range must lie in one free range. Finds it by walking the ranges in
 * address order from the range found by the previous call (or the start),
 * so ascending offsets cost O(1) each.
 *
 * Returns 0; -EINVAL for a NULL allocator, size 0, an offset that is not
 * aligned or a rounding overflow; -ENOSPC when any part of the range is
 * allocated or beyond the capacity; -ENOMEM. Nothing changes on failure.
 */
int seg_alloc_alloc_at(struct seg_alloc *a, uint64_t offset, uint64_t size);

/*
 * Free the live allocation that starts at `offset` and coalesce it with
 * free neighbours on both sides. O(1) expected.
 *
 * Returns 0; -EINVAL for a NULL allocator; -ENOENT when `offset` is not the
 * start of a live allocation (double free, an offset inside an allocation
 * or inside free space, beyond the capacity): nothing is changed then.
 * Never allocates memory.
 */
int seg_alloc_free(struct seg_alloc *a, uint64_t offset);

/*
 * Questions. All O(1) except seg_alloc_largest_free(), which finds the
 * highest non-empty size class in O(1) and scans that class's free list.
 * The argument must not be NULL.
 */
uint64_t seg_alloc_used(const struct seg_alloc *a);	    /* bytes, aligned */
uint64_t seg_alloc_capacity(const struct seg_alloc *a);	    /* rounded */
uint64_t seg_alloc_largest_free(const struct seg_alloc *a); /* 0 if full */
size_t seg_alloc_live(const struct seg_alloc *a);	 /* live allocations */
size_t seg_alloc_free_ranges(const struct seg_alloc *a); /* free ranges */

/*
 * Walk all metadata and verify every invariant: the ranges tile
 * [0, capacity) in address order, no two free ranges touch, each free range
 * sits in the list of its size class and the bitmaps agree, every live
 * allocation is in the hash map, the counters match. O(ranges + buckets).
 * For tests and debug assertions; true when consistent.
 */
bool seg_alloc_is_consistent(const struct seg_alloc *a);

#ifdef __cplusplus
}
#endif

#endif
