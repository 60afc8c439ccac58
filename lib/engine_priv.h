/*
 * The policy engine's private state (lib/engine*.c). Not installed.
 */
#ifndef MCREPL_ENGINE_PRIV_H
#define MCREPL_ENGINE_PRIV_H

#include <pthread.h>
#include <stdatomic.h>

#include "mcrepl/engine.h"
#include "mcrepl/heat.h"
#include "mcrepl/host.h"
#include "internal.h"
#include "policy.h"
#include "util/map.h"

#define ENG_B MCREPL_HEAT_BUCKETS
#define ENG_NONE UINT32_MAX

/* A node's routed-read counters are striped: a reader counts on the
 * stripe of its thread (mcrepl_engine_read()), each stripe on a cache line
 * of its own, so threads reading one node do not all write one line (two
 * threads on one line: 35-48 ns a read; on their own lines: 4-6 ns). A
 * count is the sum of the stripes readers used (a reader marks its stripe
 * used before counting on it, so the tick's sums and resets walk only
 * those). The reader order, on
 * every multi-replica read, reads no other thread's stripe (each would be
 * a cache miss per reading thread and replica): it estimates a node's
 * period count as the sum at the last tick (snap) plus the caller's own
 * reads since (its stripe's now_reads - at_tick) times the stripes used;
 * exact with one reader thread. */
#define ENG_STRIPES 16
struct estripe {
	_Alignas(64) _Atomic uint32_t bucket[ENG_B];
	_Atomic uint32_t now_reads; /* this reader-order period */
	_Atomic uint32_t at_tick;   /* now_reads at the last tick */
};

/* A serving node (NIC): its routed reads and projections. A free node has
 * name NULL. The stripes are written by lock-free readers. */
struct enode {
	char *name;
	uint64_t name_hash;
	uint32_t segs;		     /* segments on it */
	struct estripe *st;	     /* [ENG_STRIPES], 64-byte aligned */
	void *st_mem;		     /* its allocation (the slot's first use) */
	_Atomic uint32_t used;	     /* bit s: stripe s was counted on */
	_Atomic uint32_t snap;	     /* now_reads summed at the last tick */
	_Atomic uint32_t prev_reads; /* the last reader-order period */
	double proj, fade[ENG_B];    /* auto: projections */
	/* its buckets but the current one, and those the rising estimate
	 * reads, summed at the last roll (mutex held) */
	uint32_t closed, closed_recent;
};

/* mcr_eng_node_load()'s last policy estimates for a node and their
 * inputs (bucket_ms 0: none; the engine's is never 0): every proposal's
 * views ask each node again, mostly within one tick. */
struct ememo {
	uint64_t ms;
	uint32_t bucket_ms, sum, recent, rising;
	double low;
	bool has_low;
};

/* The segment views proposals read (engine_views.c), kept between them:
 * a segment's view is filled again only when its bytes changed, a node's
 * load computed again only when its counts or projection changed, a
 * bucket rolled, or the tick moved a load that depends on the span. */
struct eviews {
	bool ok;	    /* scratch holds every segment's view */
	bool full;	    /* mcr_eng_full() at the last build */
	size_t n;	    /* views in scratch */
	uint64_t ms, epoch; /* last_ms and epoch at the last build */
	uint32_t words;	    /* words of each bitmap */
	uint32_t *idx;	    /* [max_segs] slot -> scratch index */
	uint32_t *next;	    /* [max_segs] scratch index -> next on its node */
	uint32_t *head;	    /* [max_segs] node -> its first scratch index */
	uint64_t *load;	    /* [max_segs] node -> its load at the last build */
	/* bitmaps: nodes read (lock-free) or projected since the last
	 * build; nodes whose load may move with the tick alone; slots whose
	 * used or allocatable changed */
	_Atomic uint64_t *node_dirty;
	uint64_t *span, *seg_dirty;
};

/* A segment. A free slot has id 0. */
struct eseg {
	uint64_t id, client;
	char *host, *domain;
	uint64_t capacity, used, promised, read_load;
	/* the key a swap made room for this window (mcr_eng_key_hash;
	 * 0: none): its next proposal sees the segment under the watermark */
	uint64_t room_key;
	/* what that grant charged the window's budget, given back when the
	 * host reports it could not make the room (engine_room.c) */
	uint64_t room_charged;
	bool allocatable, can_copy;
	_Atomic uint32_t node;
	char *name;  /* the host's name (engine_hosts.c) */
	bool synced; /* named by the running segments_sync */
};

/* A key holding tracked dynamic replicas (engine_retire.c). */
struct dkey {
	struct mcu_map_node node;
	struct dkey *prev, *next; /* the pass list */
	char *tenant, *key;	  /* one allocation: tenant\0key\0 */
	uint32_t n, cap;
	uint64_t *segs;
};

struct mcrepl_engine {
	pthread_mutex_t mu;
	mcrepl_config cfg;
	mcrepl_leases *leases;
	mcrepl_stats *stats; /* mcrepl_engine_opts.stats (may be NULL) */
	/* host.c: the read path's heat parameters (their threshold as
	 * created) and the threshold the engine owns (set by the tick, read
	 * lock-free), lease wire ids, the trigger queue */
	mcrepl_heat_params hp;
	_Atomic uint32_t read_threshold;
	uint64_t incarnation;
	mcrepl_triggers *triggers;
	bool on; /* auto */
	bool order_by_load;
	uint32_t order_period_ms, bucket_ms;
	uint32_t max_segs, max_dkeys;
	/* segments: slots, and the lock-free id -> slot table */
	struct eseg *segs;
	uint32_t n_segs;
	struct etab {
		_Atomic uint64_t id;
		_Atomic uint32_t slot;
	} * tab;
	uint32_t tab_mask;
	struct enode *nodes;
	struct ememo *memo; /* [max_segs], per node (mutex held) */
	uint32_t n_nodes;
	_Atomic uint32_t cur; /* current bucket */
	uint64_t last_ms;     /* the latest tick's now_ms */
	uint64_t epoch, period;
	bool started;
	uint64_t start_epoch; /* the first tick's bucket */
	mcrepl_cluster_view view;
	mcrepl_segment_view *scratch; /* candidate views for propose */
	struct eviews v;
	/* tracked dynamic replicas */
	struct mcu_map dkeys;
	struct dkey *head, *tail, *cursor;
	bool pass_open;
	uint64_t n_dreplicas;
	/* counters */
	uint64_t projections, untracked, passes, visits, retired;
	/* room for hot copies: per window budget and spending, counters */
	uint32_t room_permille;
	uint64_t room_spent;
	bool room_live; /* a segment's room_key set this window */
	uint64_t room_ok, room_bytes, room_budget, room_none, room_headroom;
};

/* engine.c: the slot of segment id, or ENG_NONE (lock-free). */
uint32_t mcr_eng_slot(const mcrepl_engine *e, uint64_t id);
/* A full window has passed since the first tick: every count covers a
 * whole window, not the engine's start (mutex held). */
bool mcr_eng_full(const mcrepl_engine *e);
/* A node's load as placement sees it (mutex held). */
uint64_t mcr_eng_node_load(const mcrepl_engine *e, uint32_t node);
/* A segment's load, auto or the host's (mutex held); 0 when unknown. */
uint64_t mcr_eng_seg_load(const mcrepl_engine *e, uint64_t id);

/* Every segment as a candidate target into e->scratch (used counts the
 * promised bytes, read_load as placement sees it); how many (mutex held).
 * The caller may write into scratch: the next build fills it anew. */
size_t mcr_eng_views(mcrepl_engine *e);
/* engine_views.c: the same views, for a caller that does not write into
 * them: only what changed since the last build is filled again. */
size_t mcr_eng_views_kept(mcrepl_engine *e);
int mcr_eng_views_init(mcrepl_engine *e);
void mcr_eng_views_free(mcrepl_engine *e);
/* Segment slot's bytes changed; every view changed (mutex held). */
void mcr_eng_views_seg(mcrepl_engine *e, uint32_t slot);
void mcr_eng_views_reset(mcrepl_engine *e);
/* Node i's load, and whether a later tick in the same bucket may move it
 * with no read or projection (mutex held). */
uint64_t mcr_eng_node_load_span(const mcrepl_engine *e, uint32_t node,
				bool *span);

/* Node i was read or projected: its load is computed again at the next
 * build (lock-free; mutex held or not). The bit is tested before it is
 * set, so readers write the shared word once per build, not per read. A
 * read racing a build may show only at the node's next read or the
 * bucket's roll, as a read racing the roll does. */
static inline void mcr_eng_views_mark(mcrepl_engine *e, uint32_t i)
{
	_Atomic uint64_t *w = &e->v.node_dirty[i / 64];
	uint64_t b = 1ull << (i % 64);

	if (!(atomic_load_explicit(w, memory_order_relaxed) & b))
		atomic_fetch_or_explicit(w, b, memory_order_release);
}

/* engine.c: add or replace segment s / drop the segment in slot (mutex
 * held; the public set and remove, unlocked). */
mcrepl_status mcr_eng_seg_set(mcrepl_engine *e, const mcrepl_engine_segment *s);
void mcr_eng_seg_drop(mcrepl_engine *e, uint32_t slot);

/* engine_hosts.c: in->replicas completed from the engine's segments into
 * *buf (malloc'd, the caller frees), x->replicas and x->n_replicas set to
 * it (mutex held). MCREPL_ENOMEM. */
mcrepl_status mcr_eng_fill_replicas(mcrepl_engine *e,
				    const mcrepl_propose_input *in,
				    mcrepl_propose_input *x,
				    mcrepl_replica_view **buf);

/* engine_room.c: the segments a swap made room on for in's key, credited
 * in e->scratch[0..n) (mutex held). */
void mcr_eng_room_credit(mcrepl_engine *e, const mcrepl_propose_input *in,
			 size_t n);

/* s with its id derived from its name when it has none (host.c). */
mcrepl_engine_segment mcr_eng_seg_named(const mcrepl_engine_segment *s);

/* A 64-bit hash of (tenant, key), never 0. */
uint64_t mcr_eng_key_hash(const char *tenant, const char *key);

/* engine_retire.c */
int mcr_eng_dkeys_init(mcrepl_engine *e);
void mcr_eng_dkeys_free(mcrepl_engine *e);
/* Forget every tracked replica on segment id (mutex held). */
void mcr_eng_forget_segment(mcrepl_engine *e, uint64_t id);

#endif
