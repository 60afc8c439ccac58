/*
 * libmcrepl version. The Makefile reads the soname and the pkg-config
 * Version from these three lines; change them nowhere else.
 *
 * ABI RULE. The soname is libmcrepl.so.MAJOR from 1.0 on, and
 * libmcrepl.so.0.MINOR before it. A release that breaks the ABI bumps it
 * (MAJOR, or MINOR while MAJOR is 0); one that only adds bumps MINOR
 * (from 1.0 on) or PATCH (before 1.0). Breaking means: a function
 * removed, made private or given another signature; an enum value
 * renumbered; a public struct that changes size or layout, unless it
 * carries its own size (struct_size: mcrepl_config, mcrepl_engine_opts,
 * mcrepl_engine_stats), may only grow at its end and every reader of it
 * honours the size. Only what a header under lib/include/mcrepl/ declares
 * with MCREPL_API is exported (lib/libmcrepl.map, -fvisibility=hidden);
 * everything else is private and may change in any release.
 *
 * 0.4.0: the policy engine (mcrepl/engine.h); the rule functions of the
 * former mcrepl/policy.h are private (hosts get them through the engine);
 * mcrepl_cluster_view moved to mcrepl/types.h and mcrepl_balance to
 * mcrepl/admit.h.
 *
 * 0.5.0: mcrepl_propose_input grows heat_recent at its end (a break by the
 * rule above: the soname moves to libmcrepl.so.0.5);
 * mcrepl_heat_cell_recent().
 *
 * 0.6.0: what a host kept beside the library moves into it, so a host
 * keeps no table of its own for leases or segments (issue 27: the Mooncake
 * patch dropped its lease-to-task and segment maps). Public structs grow
 * at their end, none carrying a size, so by the rule above the soname
 * moves to libmcrepl.so.0.6: mcrepl_lease.task_hi (128-bit host task ids,
 * mcrepl_leases_bind_task128()), mcrepl_propose_result.live (a repeated
 * proposal's lease still live), mcrepl_propose_input.replicas_from_engine
 * (the engine completes replica views from its segments),
 * mcrepl_engine_segment.name (mcrepl_engine_segment_name()). Added:
 * mcrepl_engine_segments_sync() (the whole segment list at once) and
 * mcrepl_reason_outcome() (a reason's class, mapped once to a host's
 * error codes). Behaviour (issue 29): mcrepl_admit() sets
 * mcrepl_balance.held only once the key's run of BALANCED refusals is
 * MCREPL_POLICY_HOLD_WINDOWS (2) heat windows old; the engine's projections keep the cluster's reads, and
 * a node projected to lose reads keeps its recent rate's lower bound.
 *
 * 0.6.1: behaviour only (issue 29, few reads per node). Where one heat
 * window's balance band is mostly noise, the lease table sums a key's
 * BALANCED refusals over up to 16 windows and admits the copy when the sums
 * show its replicas over the mean (mcrepl_leases_propose(), the engine's
 * propose; docs/POLICY.md "Few reads per node"). No struct or signature
 * changed.
 *
 * 0.6.2: behaviour only (issue 27). Under auto, mcrepl_engine_propose()
 * judges with the cluster view as of the proposal (nodes, reads over the
 * window), not as of the last tick. Before the engine's first tick the view
 * was empty, so the balance gate did not apply: a master that started (or
 * failed over) under a hot workload copied every key over the config's
 * absolute threshold at once (167 copies in 60 ms at 100 k reads/s on 8
 * segments, where the gate makes 7). No struct or signature changed.
 *
 * 0.6.3: an addition and a behaviour fix; no signature changed (issue
 * 27: the engine keeps the counters).
 * mcrepl_engine_opts grows stats at its end (it carries struct_size): the
 * engine's lease table counts each lease with a task (accepted, created,
 * in flight; revoked or failed at its end) and mcrepl_engine_replica_added()
 * a completed copy, so hosts no longer count the lease lifecycle.
 * Behaviour: under auto, after the first tick, mcrepl_engine_propose()
 * judges the threshold with the reads as of the last tick again (0.6.2
 * took them as of the proposal, so a key judged at the count it crossed
 * the read path's threshold at was refused BELOW_THRESHOLD whenever the
 * reads counted since had moved the share: 400 reads on 2 nodes, threshold
 * 8; 8 reads later, 9); the nodes stay as of the proposal, and before the
 * first tick the reads too (the 0.6.2 fix).
 *
 * 0.6.4: an addition. mcrepl_engine_replica_recovered() tracks a dynamic
 * replica the host learnt of without a copy (a failover's re-registration)
 * for retirement, counting no completed copy. mcrepl_engine_read() counts
 * on one of 16 cache-line stripes of the node, by the calling thread, so
 * concurrent readers of one node no longer write one line (two threads on
 * one node: 5 ns a read, was 19-24; bench/bench_engine_read.c); with
 * several reader threads, mcrepl_engine_order() and _pick() estimate a
 * node's period count from the last tick's sum and the caller's own reads
 * since (exact with one reader thread: our master and the simulator). No
 * struct or signature changed.
 *
 * 0.6.5: an addition, mcrepl/host.h: the glue a host embedding the engine
 * wrote itself (segments by name, 128-bit wire ids with an incarnation, one
 * read call over a per-object state, triggers, proposals and fences by
 * names with outcome classes, a sweep with a callback).
 * mcrepl_engine_opts grows incarnation and trigger_limit at its end (it
 * carries struct_size); a segment set with id 0 and a name takes the
 * name's id (that was MCREPL_EINVAL). No signature changed.
 */
#ifndef MCREPL_VERSION_H
#define MCREPL_VERSION_H

#define MCREPL_VERSION_MAJOR 0
#define MCREPL_VERSION_MINOR 6
#define MCREPL_VERSION_PATCH 5

#endif
