/*
 * libmcrepl warmup selection (RFC "Target Scenarios" 3, second stage):
 * when a new domain joins, copy the hottest objects into it so the first
 * wave of its traffic does not become remote misses.
 *
 * This header is the contract: what is not declared here is private.
 * Pure function, no allocation, thread-safe.
 */
#ifndef MCREPL_WARMUP_H
#define MCREPL_WARMUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One object the host could warm, as the master sees it. */
typedef struct mcrepl_warmup_candidate {
	uint32_t heat;	/* windowed read count across all domains */
	uint64_t size;	/* bytes a copy moves */
	bool in_domain; /* the domain already holds a readable replica */
} mcrepl_warmup_candidate;

/*
 * Choose what to warm: among candidates with heat > 0 that the domain does
 * not hold, the max_copies hottest (ties: lower index first), then, hottest
 * first, those that fit in max_bytes in total (a candidate that does not
 * fit is skipped, smaller later ones may still fit). Writes candidate
 * indexes, hottest first, to out[] (room for max_copies) and returns how
 * many. O(n log max_copies).
 */
MCREPL_API size_t mcrepl_warmup_select(const mcrepl_warmup_candidate *c,
				       size_t n, size_t max_copies,
				       uint64_t max_bytes, size_t *out);

#ifdef __cplusplus
}
#endif
#endif
