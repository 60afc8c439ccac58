/*
 * libmcrepl heat window: per-key read frequency over a sliding window.
 *
 * This header is the contract: what is not declared here is private.
 *
 * ALGORITHM. The window of W ms is split into MCREPL_HEAT_BUCKETS buckets
 * of b = ceil(W / MCREPL_HEAT_BUCKETS) ms. A read at time t lands in bucket
 * epoch floor(t / b). The windowed count at time t is the sum of the buckets
 * whose epoch lies in [epoch(t) - BUCKETS + 1, epoch(t)]. There is no
 * tumbling boundary: 7 reads just before and 7 just after any instant are
 * counted together.
 *
 * ERROR BOUND. The count covers the last (BUCKETS-1)*b + (t mod b) ms, i.e.
 * between W*(1 - 1/BUCKETS) and W ms. It never counts a read older than W
 * (no false "hot"), and may drop reads that are between W*(1-1/BUCKETS) and W
 * old: the estimate is within one bucket's hits below the exact sliding
 * count. (When W is not a multiple of BUCKETS ms, b is rounded up and the
 * covered span may reach up to BUCKETS-1 ms past W.) Per-bucket counters
 * do not saturate: past 65,535 reads a cell counts in larger units (SCALE,
 * below), exact to 2^-14 of the count.
 *
 * TRIGGER. record() returns MCREPL_HEAT_CROSSED when the windowed count is at
 * or above the threshold and no CROSSED was reported for this key within the
 * last window (BUCKETS buckets). So a key fires once when it becomes hot and
 * then at most once per window while it stays hot: the read path enqueues at
 * most one trigger per hot key per window and a hot key is re-evaluated once
 * per window, fanning out step by step up to the replica limit.
 * (A cell's host may shorten "once per window" to refire_buckets
 * buckets in its mcrepl_heat_params; the table always uses the window.)
 *
 * TIME. now_ms is any monotonic millisecond clock chosen by the host. A
 * now_ms smaller than a key's newest bucket counts into that newest bucket.
 * Epochs are kept modulo 2^32 buckets (170 years at the default 1250 ms).
 *
 * TWO FORMS over the same algorithm:
 *  (a) mcrepl_heat: a bounded, sharded, thread-safe table keyed by
 *      (tenant, key[, requester domain]) for hosts that cannot add fields to
 *      their metadata (the RFC's form);
 *  (b) mcrepl_heat_cell: a 24-byte plain struct the host embeds in its own
 *      per-object metadata, updated under the host's own object lock; it
 *      costs no second lookup and dies with the object.
 *
 * TABLE BOUNDS. The table holds at most heat_max_entries keys in
 * ceil(1.25 * max / 8) sets of 8 ways (fingerprint + cell, 28 bytes per way,
 * about 35 bytes per tracked key). A key's 8-way set is the only place it may
 * live, so every record() touches at most 8 entries: cleanup is bounded by a
 * constant and there is never a scan. When the key's set is full, the
 * victim is an entry whose window has gone cold (count 0) if any, else the
 * entry with the lowest windowed count (ties: least recently read). A hot key
 * therefore still gets in when the table is full: it displaces the coldest
 * key in its set, and while its count is above the set's minimum it is never
 * the victim. Entries found cold while a set is searched for a new key are
 * freed. When the table is at its limit and the key's set holds no entry at
 * all, the coldest entry of the paired set (index xor 1, same lock) makes
 * room; only if both are empty (or another thread just took the entries
 * the set freed) is the read not tracked (COLD, count 0). So a record()
 * examines at most 8 live entries (stats.max_probe <= 8). Sets
 * fill unevenly: after one pass over heat_max_entries distinct keys about
 * 93% of them are resident. Keys are fingerprinted (64-bit hash, 32 bits
 * kept besides the set index): two keys colliding share one counter
 * (probability about 8/2^32 per new key).
 */
#ifndef MCREPL_HEAT_H
#define MCREPL_HEAT_H

#include <stdint.h>

#include "mcrepl/config.h"
#include "mcrepl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCREPL_HEAT_BUCKETS 8
/* Largest threshold a config derives (8 buckets x 65535); counts may pass
 * it (a cell scales its unit, see mcrepl_heat_cell). */
#define MCREPL_HEAT_MAX_THRESHOLD 524280u

typedef enum mcrepl_heat_event {
	MCREPL_HEAT_COLD = 0,	/* below the threshold */
	MCREPL_HEAT_HOT = 1,	/* at/above, already reported this window */
	MCREPL_HEAT_CROSSED = 2 /* at/above: enqueue one admission trigger */
} mcrepl_heat_event;

/* Window parameters derived once from a config. */
typedef struct mcrepl_heat_params {
	uint64_t bucket_ms; /* ceil(window / MCREPL_HEAT_BUCKETS), >= 1 */
	uint32_t threshold; /* the lower of mcrepl_config_threshold() and
			       mcrepl_config_cross_domain_threshold() */
	/* Cell form only: a key that stays hot fires again after this many
	 * buckets (1..MCREPL_HEAT_BUCKETS; 0 or more = once per window, the
	 * default). A host running the auto policy may lower it so a hot key
	 * whose fan-out was refused is judged again sooner. */
	uint32_t refire_buckets;
} mcrepl_heat_params;

/* Derive params from a validated config. Pure. */
MCREPL_API void mcrepl_heat_params_init(mcrepl_heat_params *p,
					const mcrepl_config *cfg);

/* ---- (b) the embeddable cell ---------------------------------------- */

/*
 * SCALE. A bucket counts reads in units of 2^scale (scale 0 = single
 * reads); rest holds the reads of the current unit not yet whole
 * (< 2^scale). When the newest bucket would pass 65,535 units the cell
 * halves every bucket and doubles its unit (up to 2^MCREPL_HEAT_MAX_SCALE),
 * so a key read 180 k times a second (225 k reads per default bucket) is
 * still counted, within 2^scale reads per bucket (a relative error below
 * 2^-14 of the count); when every bucket has fallen under 16,384 units at
 * a bucket boundary the unit halves again. The windowed count is
 * (sum of buckets) << scale + rest, at most about 2^32 - 2^17.
 */
#define MCREPL_HEAT_MAX_SCALE 13

typedef struct mcrepl_heat_cell {
	uint32_t head; /* epoch of the newest bucket (mod 2^32) */
	/* 1 + buckets since the last CROSSED (that bucket = 1); 0 = none
	 * within the window */
	uint8_t fired;
	uint8_t scale; /* a bucket counts reads in units of 2^scale */
	uint16_t rest; /* reads towards the next unit, < 2^scale */
	uint16_t count[MCREPL_HEAT_BUCKETS];
} mcrepl_heat_cell;

/* A zeroed cell is valid (no reads). */
#define MCREPL_HEAT_CELL_INIT                                                  \
	{                                                                      \
		0, 0, 0, 0,                                                    \
		{                                                              \
			0                                                      \
		}                                                              \
	}

/*
 * Record one read at now_ms. Returns the event; when count_out is not NULL
 * it receives the windowed count after the read. Not thread-safe: the host
 * serialises access to one cell (its object lock). O(1), no allocation.
 */
MCREPL_API mcrepl_heat_event
mcrepl_heat_cell_record(mcrepl_heat_cell *cell, const mcrepl_heat_params *p,
			uint64_t now_ms, uint32_t *count_out);

/* Windowed count at now_ms without recording. Does not modify the cell. */
MCREPL_API uint32_t mcrepl_heat_cell_count(const mcrepl_heat_cell *cell,
					   const mcrepl_heat_params *p,
					   uint64_t now_ms);

/*
 * Reads in the last complete bucket before now_ms (the window's newest
 * whole bucket_ms; 0 when the cell has none). A key whose rate just rose
 * shows it here a window before its windowed count does: the engine
 * judges such a key by its recent rate (mcrepl_propose_input.heat_recent).
 * Does not modify the cell.
 */
MCREPL_API uint32_t mcrepl_heat_cell_recent(const mcrepl_heat_cell *cell,
					    const mcrepl_heat_params *p,
					    uint64_t now_ms);

/* ---- (a) the bounded table ------------------------------------------ */

typedef struct mcrepl_heat mcrepl_heat;

/*
 * Create a table sized from cfg->heat_max_entries, window and threshold
 * from cfg. Returns MCREPL_EINVAL for an invalid config, MCREPL_ENOMEM when
 * allocation fails (nothing leaks). The table copies what it needs from cfg.
 */
MCREPL_API mcrepl_status mcrepl_heat_create(const mcrepl_config *cfg,
					    mcrepl_heat **out);

/* Free a table. Accepts NULL. Not concurrent with other calls on it. */
MCREPL_API void mcrepl_heat_destroy(mcrepl_heat *h);

/*
 * Record one read of (tenant, key) by a reader in `domain` at now_ms.
 * `domain` is part of the key only when the config was domain-aware (NULL or
 * "" means "default"); tenant may be NULL (= ""). key must not be NULL.
 * Strings are read only during the call. Thread-safe (sharded locks).
 */
MCREPL_API mcrepl_heat_event
mcrepl_heat_record(mcrepl_heat *h, const char *tenant, const char *key,
		   const char *domain, uint64_t now_ms, uint32_t *count_out);

/* Windowed count of a key at now_ms (0 if not tracked). Thread-safe. */
MCREPL_API uint32_t mcrepl_heat_count(mcrepl_heat *h, const char *tenant,
				      const char *key, const char *domain,
				      uint64_t now_ms);

typedef struct mcrepl_heat_stats {
	uint64_t entries;      /* keys currently tracked */
	uint64_t capacity;     /* ways allocated */
	uint64_t max_entries;  /* configured limit */
	uint64_t replacements; /* evictions of a live entry for a new key */
	uint64_t bytes;	       /* memory held by the table */
	uint64_t max_probe;    /* most entries one record() ever examined */
} mcrepl_heat_stats;

/* Snapshot of table statistics. Thread-safe. */
MCREPL_API void mcrepl_heat_get_stats(mcrepl_heat *h, mcrepl_heat_stats *out);

#ifdef __cplusplus
}
#endif
#endif
