/*
 * Sums of sizes and offsets that cannot wrap. Every byte range a daemon
 * takes from the wire, from a peer or from its own records is checked
 * with these before it is used: a sum that wraps would name a small range
 * where a huge one was asked for.
 */
#ifndef MCREPL_SPAN_H
#define MCREPL_SPAN_H

#include <stdbool.h>
#include <stdint.h>

/* a + b in *sum; false (and *sum unspecified) when it passes 2^64 - 1. */
static inline bool span_add(uint64_t a, uint64_t b, uint64_t *sum)
{
	return !__builtin_add_overflow(a, b, sum);
}

/* True when [off, off + len) lies inside [0, cap). */
static inline bool span_within(uint64_t off, uint64_t len, uint64_t cap)
{
	return off <= cap && len <= cap - off;
}

/* True when [off, off + a + b) lies inside [0, cap) (a region's two parts,
 * e.g. a stamp and its object). */
static inline bool span_within2(uint64_t off, uint64_t a, uint64_t b,
				uint64_t cap)
{
	uint64_t len;

	return span_add(a, b, &len) && span_within(off, len, cap);
}

#endif
