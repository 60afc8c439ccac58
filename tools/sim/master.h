/*
 * mcrepl-sim master: the host side of libmcrepl, as a Mooncake master
 * embeds it. Every policy decision is the library's:
 *   read path   mcrepl_heat_cell_record() on the object's embedded cell
 *               (domain-aware: on the object's cell for the reader's
 *               domain), CROSSED -> mcrepl_triggers_push();
 *               replica choice by mcrepl_order_replicas() (salted by
 *               the object's read count, as the master daemon), local
 *               replica first.
 *   admission   mcrepl_triggers_pop() in batches each tick, then
 *               mcrepl_leases_propose() (admission + source + target
 *               placement) and mcrepl_leases_bind_task().
 *   copies      the source worker fetches its task, then
 *               mcrepl_leases_copy_start() (fenced), the transfer on both
 *               NIC queues, mcrepl_leases_copy_end(); expiry by
 *               mcrepl_leases_sweep().
 *   eviction    above the high watermark, dynamic replicas least recently
 *               read go first; each one -> mcrepl_leases_replica_removed().
 */
#ifndef SIM_MASTER_H
#define SIM_MASTER_H

#include <stdbool.h>
#include <stdint.h>

#include <mcrepl/mcrepl.h>

#include "cluster.h"
#include "events.h"
#include "opts.h"
#include "relief.h"
#include "../common/trace.h"

enum sim_copy_state { COPY_FREE, COPY_WAIT, COPY_RUNNING, COPY_DEAD };

/* One dynamic REPLICA_COPY task, from grant to its last event. */
struct sim_copy {
	uint64_t task; /* slot + 1 + (generation << 32) */
	mcrepl_lease lease;
	uint32_t obj, dyn; /* dyn: the reserved target replica */
	enum sim_copy_state state;
	bool incoming; /* granted, counted in its target's used, unreserved */
	uint32_t next_free;
};

/* A segment's use as last sent to the engine. */
struct sim_sent {
	uint64_t used;
	bool allocatable, stale;
};

/* The master's policy engine (engine.c): segment loads, projections,
 * the threshold, reader order and retirement are the library's. */
struct sim_engine {
	mcrepl_engine *e;
	bool on;       /* auto: policy auto and mode not off */
	bool *mounted; /* per segment: known to the engine */
	/* auto: per segment, the use the engine holds, so only a change is
	 * sent before a proposal (a grant's promise is cleared by the next
	 * send: stale) */
	struct sim_sent *sent;
	/* the cluster's segs_gen when every use was last sent, and a grant
	 * since (its promise is cleared by the next send) */
	uint64_t sent_gen;
	bool granted;
};

struct sim_master {
	const struct sim_opts *o;
	const mcrepl_config *cfg;
	mcrepl_heat_params hp;
	mcrepl_leases *leases;
	mcrepl_triggers *triggers;
	mcrepl_stats *stats;
	/* domain-aware (as the master daemon): one cell per requester
	 * domain, made for an object on its first read */
	uint32_t *dcell_of; /* object -> its first cell, SIM_NONE */
	mcrepl_heat_cell *dcells;
	uint32_t n_dcells, cap_dcells;
	struct sim_cluster *c;
	const struct trace *trace; /* NULL: objects are key-<index> */
	struct sim_events ev;
	struct sim_copy *copies;
	uint32_t n_copies, cap_copies, copy_free, live_copies;
	/* scratch for one object's replicas */
	mcrepl_replica_view *rv;
	uint32_t *rv_dyn;
	size_t *order;
	size_t rv_cap;
	mcrepl_trigger *batch;
	mcrepl_lease *swept;
	uint64_t prop_seq;
	double copy_ms; /* one object over a NIC at the copy share */
	/* counters */
	uint64_t reads, copy_bytes, copies_done, copies_failed, evicted;
	uint64_t copies_dyn_src; /* of copies_done, from a dynamic replica */
	uint64_t cross_reads, cross_read_bytes, trigger_lookups_failed;
	/* reads no reactive policy can keep local: the first read of an
	 * object from a domain other than its primary's (domains > 1) */
	uint8_t *seen; /* bit per (object, domain) */
	uint64_t floor_reads;
	/* a domain joining late (SIM_NONE: none): its readers' reads in
	 * [join_from_ms, join_until_ms), and how many crossed domains */
	uint32_t join_dom;
	uint64_t join_from_ms, join_until_ms, join_reads, join_remote;
	uint64_t warmup_chosen, warmup_accepted; /* copies */
	struct sim_engine eng;
	uint64_t retired; /* dynamic replicas retired (auto) */
	/* full clusters: cold objects evicted to make room for hot copies,
	 * and reads of evicted objects (written back, as a cache refills) */
	uint64_t room_evicted, refetched, room_cursor;
	uint64_t room_dropped;	/* dynamic replicas dropped for room */
	uint64_t room_headroom; /* room under room_fill_limit: none freed */
	uint64_t late_from_ms;	/* the last third of the run starts */
	uint64_t late_copies;	/* copies completed from then on */
	/* each object's heat when the last third starts, and the trigger
	 * threshold then: a late copy of a key that was not hot then is one
	 * of a key whose popularity moved (late_new_copies) */
	uint32_t *heat_at_late, thr_at_late;
	uint64_t late_new_copies;
	struct sim_relief relief; /* per-key time to relief */
};

int sim_master_init(struct sim_master *m, const struct sim_opts *o,
		    struct sim_cluster *c, const struct trace *trace);
/* Snapshot every object's heat at now (once, when the last third of the
 * run starts). */
void sim_master_snapshot_late(struct sim_master *m, uint64_t now);
void sim_master_free(struct sim_master *m);

/* The object a key names, or -1. */
int64_t sim_master_lookup(const struct sim_master *m, const char *key);
/* The index of domain name d (0 when unknown). */
uint32_t sim_domain_index(const struct sim_cluster *c, const char *d);

/* The key of object o ("key-<o>" or "block-<id>") into buf. */
void sim_master_key(const struct sim_master *m, uint64_t o, char *buf,
		    size_t cap);

/* The master read path and the reader's choice: one read of o by a reader
 * on node `reader` at now_ms. */
void sim_master_read(struct sim_master *m, uint64_t o, uint32_t reader,
		     uint64_t now_ms);

/* Propose one ADD of object o into domain index dom (or any domain when
 * not domain-aware) with the given heat; on acceptance create its task.
 * true when accepted. */
bool sim_master_propose(struct sim_master *m, uint64_t o, uint32_t dom,
			mcrepl_proposal_kind kind, uint32_t heat, uint64_t now);

/* Warm domain index dom (domain-aware): the hottest objects it lacks, by
 * heat summed over domains, within the warmup limits, proposed now. */
void sim_master_warmup(struct sim_master *m, uint32_t dom, uint64_t now);

/* The background admission worker: one batch of triggers. */
void sim_master_admit(struct sim_master *m, uint64_t now_ms);

/* Worker-side events due by now: task fetch + copy_start, copy_end. */
void sim_master_events(struct sim_master *m, uint64_t now_ms);

/* Retire expired leases (the master's periodic sweep). */
void sim_master_sweep(struct sim_master *m, uint64_t now_ms);

/* Evict dynamic replicas on nodes above the high watermark. */
void sim_master_evict(struct sim_master *m, uint64_t now_ms);

/* The heat cell of object o for domain index dom (domain-aware), or the
 * object's own cell. NULL only when create is false and there is none, or
 * on ENOMEM. */
mcrepl_heat_cell *sim_master_cell(struct sim_master *m, uint64_t o,
				  uint32_t dom, bool create);

/* The master on the policy engine (engine.c): create it (and its lease
 * table, m->leases) with the segments of the joined nodes; follow joins;
 * hand it the segments' use before an admission batch; tick it (the
 * threshold, and once per window the retirement of cold dynamic
 * replicas). */
int sim_engine_init(struct sim_master *m);
void sim_engine_free(struct sim_master *m);
void sim_engine_sync(struct sim_master *m);
void sim_engine_usage(struct sim_master *m);
/* A proposal granted a copy to segment index seg: its use is resent. */
void sim_engine_granted(struct sim_master *m, uint32_t seg);
void sim_engine_tick(struct sim_master *m, uint64_t now_ms);
/* A hot key's proposal found no target under the watermark: free the room
 * the engine asks for by evicting cold objects (read at most once in the
 * window, no dynamic replica) on the segment it names; true when freed. */
bool sim_engine_room(struct sim_master *m, const mcrepl_propose_input *in,
		     uint64_t now_ms);

/* Drop dynamic replica d (eviction, retirement): recreate cooldown. */
void sim_master_drop(struct sim_master *m, uint32_t d, uint64_t now_ms);

/* Queue an admission trigger for o (auto: a key re-evaluated as soon as
 * its copy ends, so it fans out at copy speed, not once per window). */
void sim_master_retrigger(struct sim_master *m, uint64_t o, uint64_t now_ms);

/* Internal to the master's files. */
struct sim_copy *sim_copy_new(struct sim_master *m);
void sim_copy_release(struct sim_master *m, struct sim_copy *x);
/* Count a granted copy in its target segment's used until it reserves
 * (as the master daemon does), so one batch does not overfill a target. */
void sim_copy_incoming(struct sim_master *m, struct sim_copy *x, bool on);
void sim_master_fill_views(struct sim_master *m, uint64_t o, bool all,
			   size_t *n);

#endif
