/*
 * libmcrepl placement: source and target choice for a dynamic replica
 * (RFC "Source Selection", "Destination Selection"), and the order in which a
 * reader should try a key's replicas.
 *
 * This header is the contract: what is not declared here is private.
 * All functions are pure: they read the arrays passed in, allocate nothing
 * (except mcrepl_order_replicas' fixed stack) and are thread-safe.
 * Every "no" comes with an mcrepl_reason.
 *
 * STABLE TIE-BREAK. Candidates that tie on every rule are ordered by
 * rendezvous hashing: score = hash64(tenant, key, segment id), highest wins.
 * Different keys therefore spread over equal candidates and the choice never
 * depends on the order of the input array.
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
	uint64_t capacity; /* bytes */
	uint64_t used;	   /* bytes allocated */
	bool allocatable;  /* mounted, healthy, accepting allocations */
	uint64_t read_load; /* recent reads served; only read-load-aware */
} mcrepl_segment_view;

/* What is being placed. */
typedef struct mcrepl_place_request {
	const char *tenant;
	const char *key;
	uint64_t size;			     /* bytes to copy */
	const char *target_domain;	     /* domain-aware only; NULL = any */
	mcrepl_segment_id preferred_target; /* 0 = none */
} mcrepl_place_request;

/*
 * Choose the source replica. Candidates: readable MEMORY replicas whose
 * client can copy. Order: (domain-aware) a replica in the target domain;
 * then lowest domain cost to the target domain; then lowest inflight; then
 * the rendezvous tie-break. On MCREPL_OK *pick is an index into replicas.
 * Otherwise MCREPL_EREJECTED with *why = NO_SOURCE (no readable MEMORY
 * replica) or NO_CAPABLE_SOURCE (only replicas whose client cannot copy).
 */
MCREPL_API mcrepl_status mcrepl_place_source(
    const mcrepl_config *cfg, const mcrepl_place_request *req,
    const mcrepl_replica_view *replicas, size_t n_replicas, size_t *pick,
    mcrepl_reason *why);

/*
 * Choose the target segment. A valid target is allocatable, holds no
 * replica of the key (readable or not), has room for req->size, stays at or
 * under cfg->target_high_watermark of its capacity after the copy, and (in
 * domain-aware mode, when req->target_domain is set) lies in that domain.
 * Among valid targets: req->preferred_target if it is valid; else those on a
 * host holding no readable replica of the key before those on such hosts;
 * then (read_load_aware_placement) lower read_load; then lower utilization
 * after the copy; then the rendezvous tie-break.
 * On MCREPL_OK *pick indexes segments. Otherwise MCREPL_EREJECTED with *why
 * NO_TARGET, or NO_TARGET_IN_DOMAIN when domain filtering left nothing.
 */
MCREPL_API mcrepl_status mcrepl_place_target(
    const mcrepl_config *cfg, const mcrepl_place_request *req,
    const mcrepl_segment_view *segments, size_t n_segments,
    const mcrepl_replica_view *replicas, size_t n_replicas, size_t *pick,
    mcrepl_reason *why);

/*
 * Reader order for a key's replicas: readable replicas first, ordered by
 * ascending load[i] (recent reads served by that replica's segment; pass
 * NULL for "unknown" = all equal), ties broken by the rendezvous hash of
 * (tenant, key, segment, salt). A host that passes a per-read salt (e.g. a
 * counter) spreads reads of one key over its equal replicas; with a fixed
 * salt the order is stable. Unreadable replicas go last in input order.
 * order_out receives n indexes. Local-first stays the reader's choice.
 * Returns MCREPL_EINVAL if n > 0 and an array is NULL.
 */
MCREPL_API mcrepl_status mcrepl_order_replicas(
    const char *tenant, const char *key, const mcrepl_replica_view *replicas,
    const uint64_t *load, size_t n, uint64_t salt, size_t *order_out);

/* The rendezvous score used by every tie-break (exposed for hosts/tests). */
MCREPL_API uint64_t mcrepl_rendezvous(const char *tenant, const char *key,
				      uint64_t segment, uint64_t salt);

#ifdef __cplusplus
}
#endif
#endif
