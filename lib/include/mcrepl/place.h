/*
 * libmcrepl placement: source and target choice for a dynamic replica
 * (RFC "Source Selection", "Destination Selection"), and the order in which a
 * reader should try a key's replicas.
 *
 * This header is the contract: what is not declared here is private.
 * All functions are pure: they read the arrays passed in, allocate nothing,
 * keep nothing and are thread-safe. Every "no" comes with an mcrepl_reason.
 * NULL strings (tenant, key, host, domain) read as "".
 *
 * STABLE TIE-BREAK. Candidates that tie on every rule are ordered by
 * rendezvous hashing: score = mcrepl_rendezvous(tenant, key, segment id, 0),
 * highest wins. Different keys therefore spread over equal candidates and the
 * choice never depends on the order of the input array.
 */
#ifndef MCREPL_PLACE_H
#define MCREPL_PLACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/config.h"
#include "mcrepl/error.h"
#include "mcrepl/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One replica of the object, as the host sees it. */
typedef struct mcrepl_replica_view {
	mcrepl_segment_id segment;
	mcrepl_client_id client; /* the Store client that owns the segment */
	const char *host;	 /* host identity; NULL/"" = unknown */
	const char *domain;	 /* NULL/"" = default */
	bool readable;		 /* COMPLETE (not PROCESSING) */
	bool memory;		 /* lives in a MEMORY segment */
	bool dynamic;		 /* created by dynamic replication */
	bool can_copy;		 /* its client supports dynamic REPLICA_COPY */
	uint32_t inflight;	 /* copies in flight from it (0 = unknown) */
} mcrepl_replica_view;

/* One candidate target segment. */
typedef struct mcrepl_segment_view {
	mcrepl_segment_id id;
	mcrepl_client_id client;
	const char *host;
	const char *domain;
	uint64_t capacity;  /* bytes */
	uint64_t used;	    /* bytes allocated */
	bool allocatable;   /* mounted, healthy, accepting allocations */
	uint64_t read_load; /* recent reads served; only read-load-aware */
} mcrepl_segment_view;

/* What is being placed. */
typedef struct mcrepl_place_request {
	const char *tenant;
	const char *key;
	uint64_t size;			    /* bytes to copy */
	const char *target_domain;	    /* domain-aware only; NULL = any */
	mcrepl_segment_id preferred_target; /* 0 = none */
} mcrepl_place_request;

/*
 * Choose the source replica. Candidates: readable MEMORY replicas whose
 * client can copy. Order: (domain-aware with a non-empty target_domain) a
 * replica in the target domain; then lowest domain cost to the target domain
 * (otherwise all costs are equal); then lowest inflight; then the rendezvous
 * tie-break. On MCREPL_OK *pick is an index into replicas and *why = NONE.
 * Otherwise MCREPL_EREJECTED with *why = NO_SOURCE (no readable MEMORY
 * replica) or NO_CAPABLE_SOURCE (only replicas whose client cannot copy).
 * MCREPL_EINVAL when cfg, req or pick is NULL, or n_replicas > 0 and
 * replicas is NULL. why may be NULL. *pick is written only on MCREPL_OK.
 */
MCREPL_API mcrepl_status
mcrepl_place_source(const mcrepl_config *cfg, const mcrepl_place_request *req,
		    const mcrepl_replica_view *replicas, size_t n_replicas,
		    size_t *pick, mcrepl_reason *why);

/*
 * Choose the target segment. A valid target has a non-zero id and a non-zero
 * capacity, is allocatable, holds no replica of the key (readable or not:
 * any replica whose segment is its id), has room for req->size
 * (used + size <= capacity), stays at or under cfg->target_high_watermark of
 * its capacity after the copy, and (in domain-aware mode, when
 * req->target_domain is non-empty) lies in that domain.
 * Among valid targets: req->preferred_target if it is valid; else those on a
 * host holding no readable replica of the key before those on such hosts
 * (an unknown host, NULL or "", matches no host); then
 * (read_load_aware_placement) lower read_load; then lower utilization after
 * the copy, (used + size) / capacity; then the rendezvous tie-break.
 * EXACT ARITHMETIC. The watermark is rounded to 9 decimal places,
 * w = round(watermark * 1e9) (clamped to 0..1e9), and the test is
 * (used + size) * 1e9 <= w * capacity in 128-bit integers: 0.85 means
 * exactly 85/100. Utilizations are compared by cross-multiplication.
 * On MCREPL_OK *pick indexes segments and *why = NONE. Otherwise
 * MCREPL_EREJECTED with *why NO_TARGET_IN_DOMAIN when some segment would be
 * valid but for the domain filter, else NO_TARGET. MCREPL_EINVAL when cfg,
 * req or pick is NULL, or a count is > 0 and its array is NULL. why may be
 * NULL. *pick is written only on MCREPL_OK.
 */
MCREPL_API mcrepl_status
mcrepl_place_target(const mcrepl_config *cfg, const mcrepl_place_request *req,
		    const mcrepl_segment_view *segments, size_t n_segments,
		    const mcrepl_replica_view *replicas, size_t n_replicas,
		    size_t *pick, mcrepl_reason *why);

/*
 * Reader order for a key's replicas: readable replicas first, ordered by
 * ascending load[i] (recent reads served by that replica's segment; pass
 * NULL for "unknown" = all equal), ties broken by the rendezvous hash of
 * (tenant, key, segment, salt). A host that passes a per-read salt (e.g. a
 * counter) spreads reads of one key over its equal replicas; with a fixed
 * salt the order is stable. Unreadable replicas go last in input order.
 * order_out receives n indexes. Local-first stays the reader's choice.
 * Returns MCREPL_EINVAL if n > 0 and replicas or order_out is NULL.
 * Insertion sort in order_out: O(n^2), meant for one key's replicas.
 */
MCREPL_API mcrepl_status mcrepl_order_replicas(
    const char *tenant, const char *key, const mcrepl_replica_view *replicas,
    const uint64_t *load, size_t n, uint64_t salt, size_t *order_out);

/* The first entry of mcrepl_order_replicas()'s order for the same
 * arguments, in O(n): what a reader that takes the first replica needs.
 * MCREPL_ENOENT when n is 0; MCREPL_EINVAL if replicas or pick is NULL. */
MCREPL_API mcrepl_status mcrepl_pick_replica(
    const char *tenant, const char *key, const mcrepl_replica_view *replicas,
    const uint64_t *load, size_t n, uint64_t salt, size_t *pick);

/* The rendezvous score used by every tie-break (exposed for hosts/tests).
 * Byte-order independent: the same inputs give the same score everywhere. */
MCREPL_API uint64_t mcrepl_rendezvous(const char *tenant, const char *key,
				      uint64_t segment, uint64_t salt);

#ifdef __cplusplus
}
#endif
#endif
