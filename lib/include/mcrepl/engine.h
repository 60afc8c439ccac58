/*
 * libmcrepl policy engine: the host-side bookkeeping of the replication
 * policy, in one place, so that a master gets the whole policy by linking.
 *
 * This header is the contract: what is not declared here is private.
 *
 * WHAT THE ENGINE OWNS. The lease table (mcrepl_engine_leases()); the
 * segment view (segments join, change and leave); the reads routed to each
 * serving node, in the heat window's buckets; the cluster view and the
 * read path's trigger threshold; the projected read load of granted copies
 * (auto), fading out over one window as real reads take its place; target
 * choice with that projection; the reader order; which dynamic replicas
 * exist and, once per heat window, which of them to retire; its counters.
 * WHAT THE HOST KEEPS. Objects and their heat cells (mcrepl/heat.h),
 * storage and allocation, its own locks, RPC, tasks and I/O.
 *
 * THE CALLS A HOST MAKES.
 *   segment mounted or changed      mcrepl_engine_segment_set()
 *   segment used bytes changed      mcrepl_engine_segment_used() (at the
 *                                   latest before each propose)
 *   segment unmounted               mcrepl_engine_segment_remove()
 *   or the whole list at once       mcrepl_engine_segments_sync()
 *   a read routed                   mcrepl_engine_order() (which replica
 *                                   first) then mcrepl_engine_read()
 *   every few hundred ms            mcrepl_engine_tick(), then
 *                                   mcrepl_engine_heat_params() (the
 *                                   engine owns the threshold); when
 *                                   retire_due, mcrepl_engine_retire()
 *   a hot key (trigger)             mcrepl_engine_propose()
 *   a dynamic copy became readable  mcrepl_engine_replica_added()
 *   one came back at a failover     mcrepl_engine_replica_recovered()
 *   a dynamic replica went          mcrepl_engine_replica_dropped()
 *   fences, sweep, remove           mcrepl_leases_*() on the engine's table
 *
 * NODES. Reads are served by a node's NIC, so loads are kept per node: a
 * segment names its node (NULL: its host; no host either: the segment
 * alone), and every segment of a node shows the node's load. The cluster
 * view's node count is the number of nodes holding a segment.
 *
 * POLICY. Under policy auto (cfg->policy, mode not off) the engine runs
 * docs/POLICY.md: segment loads = routed reads over the heat window plus
 * projections, the cluster view feeds admission, the threshold follows the
 * cluster's reads, readers are ordered by this period's routed reads, and
 * cold dynamic replicas are retired. Otherwise (policy rfc, mode off) the
 * RFC's rules: no cluster view, the config's threshold, placement by the
 * host's own read_load (mcrepl_engine_segment.read_load) when
 * read_load_aware_placement is set, no retirement; reads are still counted
 * and, when the engine was created with order_by_load, order readers.
 *
 * THREAD-SAFETY. mcrepl_engine_read() and mcrepl_engine_order() are
 * lock-free and may run on any number of threads at once, concurrently with
 * every other call (a read racing a segment change may be counted on the
 * segment's old node or not at all, or, when the segment left and another
 * joined in between, on the newcomer's node; nothing else). Every other
 * function takes the engine's internal mutex and may be called from any
 * thread. mcrepl_engine_pick() is lock-free as _order() is. The engine
 * calls the lease table with its mutex held (lock order: engine, then
 * leases; the lease table never calls the engine), and the probe of
 * mcrepl_engine_retire() runs with the engine's mutex held, so it must not
 * call the engine.
 * TIME. Every time is an argument (now_ms); the engine reads no clock.
 * BOUNDS. At most max_segments segments (and nodes); at most
 * max_dynamic_keys keys with dynamic replicas tracked (beyond: EFULL and a
 * counter, the replica is left to eviction); work per call is O(segments)
 * for tick and propose, O(replicas of one key) for order, O(1) expected for
 * read, and O(cap probes) per retire call (a pass resumes where the last
 * call stopped). Memory: about 0.3 KiB per segment slot of max_segments
 * (1.3 MiB at the default 4096), and 1.1 KiB per node in use (its read
 * counters, one cache line per stripe).
 */
#ifndef MCREPL_ENGINE_H
#define MCREPL_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/config.h"
#include "mcrepl/error.h"
#include "mcrepl/heat.h"
#include "mcrepl/lease.h"
#include "mcrepl/place.h"
#include "mcrepl/stats.h"
#include "mcrepl/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcrepl_engine mcrepl_engine;

/* Creation options. struct_size must be sizeof(mcrepl_engine_opts) (the
 * struct may grow at its end in a minor release; fields past a caller's
 * struct_size read as 0). */
typedef struct mcrepl_engine_opts {
	size_t struct_size;
	uint32_t max_segments;	   /* 0: 4096 */
	uint32_t max_dynamic_keys; /* 0: 1,048,576 */
	/* reader order by this period's routed reads also when not auto
	 * (the master daemon's --read_load_order) */
	bool order_by_load;
	/* length of the reader-order period; 0: 1000 ms */
	uint32_t order_period_ms;
	/* room for hot copies (mcrepl_engine_room()) per heat window, in
	 * thousandths of the segments' total capacity; 0: 10 (1 %);
	 * MCREPL_ENGINE_NO_ROOM: none */
	uint32_t room_permille;
	/* The RFC counters the engine keeps (NULL: none; borrowed, must
	 * outlive the engine; since 0.6.3). Its lease table counts each
	 * lease with a task: accepted, task created and in flight at the
	 * first bind_task; at its end, revoked (copy_revoke) or failed
	 * (expiry, a fence or start failure, abort, the object removed);
	 * mcrepl_engine_replica_added() counts a completed copy. The host
	 * counts what only it sees: heat crossings, triggers, rejections,
	 * would-proposes, a copy ended whose replica did not become readable
	 * (failed), readable replicas and domain pairs. */
	struct mcrepl_stats *stats;
	/* The high half of every lease's wire id (mcrepl/host.h): a value
	 * the host draws at random at each start, so a lease id from an
	 * earlier incarnation of the engine is refused as unknown. 0 is
	 * allowed (ids then repeat across restarts). Since 0.6.5. */
	uint64_t incarnation;
	/* most triggers mcrepl_engine_on_read() queues at once; 0: the
	 * config's admission_queue_limit (since 0.6.5) */
	uint32_t trigger_limit;
} mcrepl_engine_opts;

#define MCREPL_ENGINE_NO_ROOM UINT32_MAX

/* Create (copies cfg, which must validate) with opts (NULL: defaults).
 * MCREPL_EINVAL for a bad config or opts, MCREPL_ENOMEM. */
MCREPL_API mcrepl_status mcrepl_engine_create(const mcrepl_config *cfg,
					      const mcrepl_engine_opts *opts,
					      mcrepl_engine **out);
/* Accepts NULL. Destroys the lease table too. */
MCREPL_API void mcrepl_engine_destroy(mcrepl_engine *e);

/* The engine's lease table (owned by the engine; valid until destroy). */
MCREPL_API mcrepl_leases *mcrepl_engine_leases(mcrepl_engine *e);

/* True when the auto policy runs (policy auto and mode not off). */
MCREPL_API bool mcrepl_engine_is_auto(const mcrepl_engine *e);

/* A segment as the host describes it. Strings are copied. */
typedef struct mcrepl_engine_segment {
	mcrepl_segment_id id; /* non-zero */
	mcrepl_client_id client;
	const char *host;   /* NULL/"" = unknown */
	const char *domain; /* NULL/"" = default */
	const char *node;   /* its NIC; NULL/"" = its host */
	uint64_t capacity;  /* bytes */
	uint64_t used;	    /* bytes allocated, plus bytes promised */
	bool allocatable;   /* accepting allocations (not held) */
	bool can_copy;	    /* its client runs dynamic REPLICA_COPY */
	uint64_t read_load; /* the host's own measure; used when not auto */
	/* the host's name for it, NULL/"" = none: mcrepl_engine_segment_name()
	 * (since 0.6.0) */
	const char *name;
} mcrepl_engine_segment;

/* Add or replace segment s->id (its read counts stay when its node does).
 * Id 0 with a name: the id is mcrepl_segment_id_of(name) (mcrepl/host.h;
 * since 0.6.5), and a segment of that id with another name is refused
 * (MCREPL_ECONFLICT). MCREPL_EINVAL (id 0 and no name, a string over 255
 * bytes), MCREPL_EFULL (max segments), MCREPL_ENOMEM. */
MCREPL_API mcrepl_status
mcrepl_engine_segment_set(mcrepl_engine *e, const mcrepl_engine_segment *s);

/* Update used bytes and allocatable of a known segment; MCREPL_ENOENT. */
MCREPL_API mcrepl_status mcrepl_engine_segment_used(mcrepl_engine *e,
						    mcrepl_segment_id id,
						    uint64_t used,
						    bool allocatable);

/* The segment left: its node's counts go when its node has no segment
 * left; its dynamic replicas are forgotten. MCREPL_ENOENT if unknown. */
MCREPL_API mcrepl_status mcrepl_engine_segment_remove(mcrepl_engine *e,
						      mcrepl_segment_id id);

/*
 * The host's whole segment list, at once (e.g. on each tick, from its
 * segment manager): every segs[i] is set as by mcrepl_engine_segment_set()
 * and every segment the engine has that the list does not name is removed
 * as by mcrepl_engine_segment_remove(), under one hold of the engine's
 * mutex, so a host need not track which segments left. An entry that
 * fails to set (MCREPL_EINVAL, MCREPL_EFULL, MCREPL_ENOMEM: the first such
 * status is returned) is skipped; a segment it names that the engine had
 * stays. *removed (may be NULL) gets how many were removed. Since 0.6.0.
 */
MCREPL_API mcrepl_status
mcrepl_engine_segments_sync(mcrepl_engine *e, const mcrepl_engine_segment *segs,
			    size_t n, size_t *removed);

/* The name segment id was given (mcrepl_engine_segment.name), copied to
 * buf (NUL-terminated, cut to cap - 1 bytes; buf may be NULL when cap is
 * 0). Returns the name's full length: 0 for an unknown segment or one
 * without a name. Takes the engine's mutex. Since 0.6.0. */
MCREPL_API size_t mcrepl_engine_segment_name(mcrepl_engine *e,
					     mcrepl_segment_id id, char *buf,
					     size_t cap);

/* One read routed to segment id (unknown ids are ignored). Lock-free; the
 * count goes to one of 16 cache-line stripes of the node, picked by the
 * calling thread (its thread pointer), so threads reading one node rarely
 * write the same line (since 0.6.4; a count is the sum of the stripes). */
MCREPL_API void mcrepl_engine_read(mcrepl_engine *e, mcrepl_segment_id id);

/*
 * Reader order of a key's n replicas (mcrepl_order_replicas() with, under
 * auto or order_by_load, the reads routed to each replica's node this
 * period as the load; auto: this period alone, otherwise this period and
 * the previous one), salted by `salt` (e.g. the object's read count).
 * Lock-free. With one reader thread the period's counts are exact; with
 * several, a node's count is the one the last tick saw plus the calling
 * thread's own reads since, times the threads that read the node (since
 * 0.6.4, the order reads no other thread's counters, which would cost a
 * cache miss per reading thread and replica on every hot read). Tick every
 * few hundred ms, as the calls table says. MCREPL_EINVAL as
 * mcrepl_order_replicas().
 */
MCREPL_API mcrepl_status
mcrepl_engine_order(mcrepl_engine *e, const char *tenant, const char *key,
		    const mcrepl_replica_view *replicas, size_t n,
		    uint64_t salt, size_t *order_out);

/* The first entry of mcrepl_engine_order()'s order for the same
 * arguments, in O(n) (mcrepl_pick_replica()): for a host whose readers
 * take the first replica. Lock-free. MCREPL_ENOENT when n is 0. */
MCREPL_API mcrepl_status mcrepl_engine_pick(mcrepl_engine *e,
					    const char *tenant, const char *key,
					    const mcrepl_replica_view *replicas,
					    size_t n, uint64_t salt,
					    size_t *pick);

/* What a tick tells the host. */
typedef struct mcrepl_engine_tick_result {
	/* the trigger threshold as of this tick (auto: follows the cluster
	 * view; otherwise the config's), the one mcrepl_engine_heat_params()
	 * now gives: read the params rather than copy this into them */
	uint32_t threshold;
	/* a heat window boundary passed: call mcrepl_engine_retire() until
	 * it returns 0 (auto only) */
	bool retire_due;
} mcrepl_engine_tick_result;

/*
 * Advance to now_ms: roll the read buckets (bucket = heat window / 
 * MCREPL_HEAT_BUCKETS) and the projections, the reader-order period, the
 * cluster view and the threshold. Call at least once per bucket; calls
 * closer together are cheap. out may be NULL.
 */
MCREPL_API void mcrepl_engine_tick(mcrepl_engine *e, uint64_t now_ms,
				   mcrepl_engine_tick_result *out);

/* The heat parameters the host's read path should use as of the last
 * tick: mcrepl_heat_params_init() of the config, with the tick's threshold
 * and, under auto, refire_buckets 1 (a hot key whose fan-out was refused is
 * judged again at the next bucket). The engine owns the threshold: a host
 * that keeps its own params refreshes them from here after each tick.
 * Lock-free; e or out NULL: nothing. */
MCREPL_API void mcrepl_engine_heat_params(mcrepl_engine *e,
					  mcrepl_heat_params *out);

/* The cluster view as of the last tick or auto propose (nodes 0 when not
 * auto). */
MCREPL_API void mcrepl_engine_cluster(mcrepl_engine *e,
				      mcrepl_cluster_view *out);

/* A segment's read load as placement sees it (auto: reads routed to its
 * node over the window plus projections; otherwise the host's read_load).
 * 0 for an unknown segment. */
MCREPL_API uint64_t mcrepl_engine_load(mcrepl_engine *e, mcrepl_segment_id id);

/*
 * Judge a proposal with the engine's segments as candidate targets and
 * (auto) its cluster view and loads: in->segments, in->n_segments and
 * in->cluster are ignored (the engine supplies them); everything else as
 * mcrepl_leases_propose(), whose statuses and reasons it returns (and
 * MCREPL_ENOMEM; with in->replicas_from_engine the engine completes the
 * replicas from its segments first). On a new
 * lease (MCREPL_OK, not repeated) the engine counts the copy's bytes as
 * promised on its target until the host's next segment_used() for it, and
 * projects the reads it will move (auto: readers spread by load, so the
 * copy fills its target up to the level of the key's replicas, the lowest
 * load among in->replicas' readable segments, docs/POLICY.md section 4;
 * otherwise, with read_load_aware_placement, heat / (readable + 1) onto
 * the target's reader-order count). Under auto the cluster view it judges
 * by counts the nodes as of now and the reads over the window as of the
 * last tick (the share behind the threshold the read path was given, so a
 * key judged at the count it crossed at is not refused BELOW_THRESHOLD by
 * reads counted since; 0.6.3); before the first tick, the reads as
 * counted now, so a proposal then meets the balance gate (since 0.6.2;
 * before, the view was empty until the first tick).
 */
MCREPL_API mcrepl_status mcrepl_engine_propose(mcrepl_engine *e,
					       const mcrepl_propose_input *in,
					       mcrepl_propose_result *res);

/* Where to make room for a hot copy. */
typedef struct mcrepl_room {
	mcrepl_segment_id segment;
	uint64_t bytes; /* to free there: then the copy fits under the
			 * target watermark; 0: headroom, it fits under
			 * room_fill_limit as it is */
} mcrepl_room;

/*
 * A full cluster (auto): mcrepl_engine_propose() refused `in` with
 * NO_TARGET (or NO_TARGET_IN_DOMAIN) because no segment has room under the
 * target watermark, yet the key passed admission: a hot copy may be worth
 * more than what it displaces. Headroom first: the segment placement
 * chooses (by projected load) among those where the copy fits under
 * cfg->room_fill_limit, with bytes 0 (nothing to evict, not charged to
 * the budget), only when the copy lowers the busiest node (a replica of
 * the key within cfg->balance_tolerance of the busiest node's load, the
 * key's reads over its readable copies + 1 at least that tolerance of it,
 * and the segment's node able to take as much before it is as busy as
 * that replica; MCREPL_ENOENT otherwise: headroom is kept for such
 * copies). Otherwise the segment where making room makes the
 * best target (placement's order with every segment's room ignored: the
 * least projected load first, other hosts first) and the bytes to free
 * there. The host evicts with its own eviction (never an object being
 * read, nor a pinned one) under the room rule (mcrepl_room_classify():
 * what it may evict, best first), and the trigger that fires again
 * proposes the copy onto the room made. Budget: room_permille of the total capacity per
 * heat window (the window's first request always passes, so one copy of
 * an object larger than the budget still gets room), a segment asked
 * again within the window not charged twice. MCREPL_OK and *out; MCREPL_EFULL (budget spent),
 * MCREPL_ENOENT (no segment could take the copy even empty, or not auto),
 * MCREPL_EINVAL.
 */
MCREPL_API mcrepl_status mcrepl_engine_room(mcrepl_engine *e,
					    const mcrepl_propose_input *in,
					    mcrepl_room *out);

/*
 * The host could not make the room mcrepl_engine_room() granted for `in`
 * (room, as it answered): too little it may evict under the room rule, or
 * the segment gone. The bytes charged for it return to the window's budget
 * and the segment is no longer credited for the key, so the next key may
 * have that room. Call it once per refused grant, within the heat window
 * that granted it (after the window turns there is nothing to give back).
 * MCREPL_OK; MCREPL_ENOENT (no grant for the key on that segment this
 * window, or already given back); MCREPL_EINVAL. Since 0.6.6.
 */
MCREPL_API mcrepl_status mcrepl_engine_room_refused(
    mcrepl_engine *e, const mcrepl_propose_input *in, const mcrepl_room *room);

/* What making room may cost: the class of a copy the host could evict for
 * a hot copy's room, best first (docs/POLICY.md, "Room that costs no
 * misses"). */
typedef enum mcrepl_room_class {
	MCREPL_ROOM_DYNAMIC = 0, /* a dynamic replica, another copy readable */
	MCREPL_ROOM_DUPLICATE = 1, /* another readable copy stays */
	MCREPL_ROOM_ONLY_COPY = 2, /* the only copy; the miss costs less than
				    * the relief (room_miss_cost) */
	MCREPL_ROOM_KEEP = 3,	   /* not to be evicted for room */
} mcrepl_room_class;

/* A copy the host could evict, as the host knows it. */
typedef struct mcrepl_room_victim {
	bool dynamic;		 /* a dynamic replica */
	uint32_t other_readable; /* readable copies of the object besides it */
	uint64_t reads;		 /* the object's reads over the heat window */
} mcrepl_room_victim;

/*
 * The reads a hot copy takes off the key's replicas over a heat window:
 * its share of them, hot_reads / (readable + 1).
 */
MCREPL_API uint64_t mcrepl_room_relief(uint64_t hot_reads, uint32_t readable);

/*
 * The room rule, a pure function: a copy with another readable copy of its
 * object may always go (a dynamic replica first); an object's only copy
 * only when cfg->room_miss_cost is not 0 and room_miss_cost * max(1,
 * v->reads) (the misses it is expected to cost, each worth room_miss_cost
 * reads) is below relief (mcrepl_room_relief()). MCREPL_ROOM_KEEP
 * otherwise, and for a NULL argument. The host evicts the lowest class
 * first, least recently read first within one.
 */
MCREPL_API mcrepl_room_class mcrepl_room_classify(const mcrepl_config *cfg,
						  const mcrepl_room_victim *v,
						  uint64_t relief);

/* A dynamic replica of (tenant, key) on segment became readable: a
 * completed copy (counted, see mcrepl_engine_opts.stats, whatever the
 * status but MCREPL_EINVAL), tracked for retirement (auto). MCREPL_EFULL
 * past max_dynamic_keys, MCREPL_ENOENT for an unknown segment,
 * MCREPL_EINVAL, MCREPL_ENOMEM. */
MCREPL_API mcrepl_status mcrepl_engine_replica_added(mcrepl_engine *e,
						     const char *tenant,
						     const char *key,
						     mcrepl_segment_id segment);

/* A dynamic replica of (tenant, key) on segment that the host learnt of
 * without a copy of its own (a new master re-registering what its workers
 * hold after a failover): tracked for retirement as by
 * mcrepl_engine_replica_added(), but no copy counted. Same statuses.
 * Since 0.6.4. */
MCREPL_API mcrepl_status
mcrepl_engine_replica_recovered(mcrepl_engine *e, const char *tenant,
				const char *key, mcrepl_segment_id segment);

/* A dynamic replica went (retired, evicted, lost, object removed): no
 * longer tracked, and (when `cooldown`) the key enters the recreate
 * cooldown in the segment's domain (mcrepl_leases_replica_removed()).
 * MCREPL_ENOENT when it was not tracked (the cooldown still applies). */
MCREPL_API mcrepl_status mcrepl_engine_replica_dropped(
    mcrepl_engine *e, const char *tenant, const char *key,
    mcrepl_segment_id segment, bool cooldown, uint64_t now_ms);

/* What the host knows of a key at retirement time. */
typedef struct mcrepl_retire_probe {
	bool gone;	   /* no such object: forget its replicas */
	bool busy;	   /* not now: read lease, copy running, pending */
	uint32_t count;	   /* hits over the heat window (in `domain`) */
	uint32_t readable; /* readable replicas (in `domain`), all kinds */
} mcrepl_retire_probe;

/* The host's answer for (tenant, key) and a domain (NULL: the whole
 * cluster; a name: domain-aware, the key's heat and replicas there). Runs
 * with the engine's mutex held: it must not call the engine. */
typedef void (*mcrepl_retire_probe_fn)(void *ctx, const char *tenant,
				       const char *key, const char *domain,
				       mcrepl_retire_probe *out);

/* One replica to retire. tenant and key point into the engine: valid until
 * the host reports this replica dropped or calls the engine's retire or
 * destroy again. */
typedef struct mcrepl_retirement {
	const char *tenant;
	const char *key;
	mcrepl_segment_id segment;
} mcrepl_retirement;

/*
 * Continue the retirement pass that the last retire_due tick opened: visit
 * at most `cap` tracked keys, probe each and write the dynamic replicas to
 * retire, at most `cap` in all: while the key's heat is under half of what
 * its replicas but one stand for, with two deviations to spare, one more
 * (so a key whose heat fell away sheds its copies in one pass); when
 * domain-aware, at most one per key and pass, judged per domain by the
 * key's heat there; the replica on the busiest node goes first, ties by
 * rendezvous score; docs/POLICY.md section 3; never
 * a key's last readable replica). The host drops each and reports it with
 * mcrepl_engine_replica_dropped(..., cooldown = true). Returns how many
 * keys were visited; 0 when the pass is over (or none is open). *n_out
 * gets how many retirements were written to out (at most cap).
 */
MCREPL_API size_t mcrepl_engine_retire(mcrepl_engine *e, uint64_t now_ms,
				       mcrepl_retire_probe_fn probe, void *ctx,
				       mcrepl_retirement *out, size_t cap,
				       size_t *n_out);

/* Counters and gauges. struct_size as mcrepl_engine_opts. */
typedef struct mcrepl_engine_stats {
	size_t struct_size;
	uint32_t segments, nodes;
	uint64_t window_reads;	    /* cluster reads over the heat window */
	uint32_t threshold;	    /* trigger threshold */
	uint64_t projections;	    /* granted copies projected */
	uint64_t dynamic_keys;	    /* keys with tracked dynamic replicas */
	uint64_t dynamic_replicas;  /* tracked dynamic replicas */
	uint64_t untracked_total;   /* replica_added refused: EFULL */
	uint64_t retire_passes;	    /* passes opened */
	uint64_t retire_visits;	    /* keys probed */
	uint64_t retired_total;	    /* retirements handed out */
	uint64_t room_total;	    /* mcrepl_engine_room() answers MCREPL_OK */
	uint64_t room_bytes_total;  /* bytes of room asked for */
	uint64_t room_budget_total; /* refused: the window's budget spent */
	/* refused: no segment could take it, or headroom would not lower
	 * the busiest node */
	uint64_t room_none_total;
	/* of room_total: granted under room_fill_limit, nothing to evict */
	uint64_t room_headroom_total;
} mcrepl_engine_stats;

/* Fill *out; out->struct_size must be set by the caller. */
MCREPL_API void mcrepl_engine_get_stats(mcrepl_engine *e,
					mcrepl_engine_stats *out);

#ifdef __cplusplus
}
#endif
#endif
