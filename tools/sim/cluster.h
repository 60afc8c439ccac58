/*
 * mcrepl-sim cluster state: nodes (one NIC, a memory budget, read load),
 * their segments (the master's mcrepl_segment_view array, passed as is to
 * placement), and the objects with their replicas.
 *
 * Per object the state is 36 bytes: the library's 24-byte embeddable heat
 * cell, the primary segment, the head of a short list of dynamic
 * replicas (kept in a pool; most objects have none) and a read counter.
 */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include <mcrepl/mcrepl.h>

#include "rng.h"

#define SIM_NONE UINT32_MAX

struct sim_obj {
	mcrepl_heat_cell heat; /* lives and dies with the object */
	uint32_t primary;      /* segment index; SIM_NONE until written */
	uint32_t dyn;	       /* first dynamic replica; SIM_NONE = none */
	uint32_t reads;	       /* the reader order's salt, as the master's */
	/* reads in the current report interval (relief.h), beside the
	 * primary a read looks up anyway: one cache line, not two */
	uint32_t window_reads;
};

struct sim_dyn {
	uint32_t obj, seg;
	uint32_t next; /* the object's next dynamic replica / free list */
	uint32_t pos;  /* index in its node's list */
	uint64_t last_read_ms;
	bool readable; /* COMPLETE; false while the copy runs */
};

struct sim_node {
	uint64_t load;	 /* reads served in the current interval */
	uint64_t recent; /* reads served since the last load report */
	uint64_t served; /* reads served, whole run */
	uint64_t used;	 /* bytes allocated on its segments */
	double tx_free_ms, rx_free_ms; /* NIC queues: busy until */
	uint32_t *dyn;		       /* its dynamic replicas */
	uint32_t n_dyn, cap_dyn;
	uint32_t domain;
	bool dirty; /* used grew since the last eviction check */
};

struct sim_cluster {
	uint32_t n_nodes, hosts_per_node, n_segs, n_domains;
	uint64_t object_size, node_capacity;
	struct sim_node *nodes;
	uint32_t *active; /* nodes that have joined: readers, writes */
	uint32_t n_active;
	mcrepl_segment_view *segs; /* the master's view of every segment */
	uint32_t *seg_inflight;	   /* copies in flight from each segment */
	char **host_names;	   /* per node: "node-<i>" */
	char **domain_names;	   /* per domain: "d<i>" ("" when 1) */
	struct sim_obj *objs;
	uint64_t n_objs;
	/* zipf / uniform: object (popularity rank) o is mcrepl-bench's key
	 * key_id[o], named "zipf-<key_id>"; obj_of inverts it */
	uint32_t *key_id, *obj_of;
	struct sim_dyn *dyn;
	uint32_t n_dyn_slots, cap_dyn_slots, dyn_free;
	uint32_t *dirty; /* nodes whose used grew */
	uint32_t n_dirty;
	uint64_t primary_bytes, dyn_bytes; /* dyn: reserved, incl. copying */
	uint64_t dyn_readable;		   /* readable dynamic replicas */
	uint64_t replicated_keys;	   /* objects with one or more */
	/* moves at every change of a segment's used or allocatable */
	uint64_t segs_gen;
};

/* Segment capacity = node_capacity / hosts_per_node. 0 or -1 (ENOMEM). */
int sim_cluster_init(struct sim_cluster *c, uint32_t nodes,
		     uint32_t hosts_per_node, uint32_t domains, uint64_t n_objs,
		     uint64_t object_size, uint64_t node_capacity);
void sim_cluster_free(struct sim_cluster *c);

static inline uint32_t sim_node_of(const struct sim_cluster *c, uint32_t seg)
{
	return seg / c->hosts_per_node;
}

/* Keep domain dom out until sim_cluster_join(): its segments are not
 * allocatable, it gets no primaries and no readers. */
void sim_cluster_hold(struct sim_cluster *c, uint32_t dom);

/* Domain dom joins: its segments mount (allocatable), its readers start. */
void sim_cluster_join(struct sim_cluster *c, uint32_t dom);

/*
 * The segment the master daemon puts a new object on (daemons/master/
 * store.c put_target): the joined segment with the lowest utilization after
 * the write, the first one on ties (the simulator's eviction, not a put
 * refusal, handles a full node); SIM_NONE with no joined segment.
 * O(segments).
 */
uint32_t sim_cluster_put_segment(const struct sim_cluster *c);

/* The same choice for the n-th of a run of equal objects written into an
 * empty cluster: round robin over the joined segments. O(1). */
uint32_t sim_cluster_put_nth(const struct sim_cluster *c, uint64_t n);

/* A uniformly chosen joined node (a reader). */
uint32_t sim_cluster_pick_reader(const struct sim_cluster *c, sim_rng *r);

/* Store object o's primary on segment seg. */
void sim_cluster_write(struct sim_cluster *c, uint64_t o, uint32_t seg);

/* Reserve a PROCESSING dynamic replica of o on seg: SIM_NONE when the
 * segment has no room (used + size > capacity) or on ENOMEM. */
uint32_t sim_dyn_add(struct sim_cluster *c, uint64_t o, uint32_t seg);

/* The copy ended: the replica becomes readable. */
void sim_dyn_ready(struct sim_cluster *c, uint32_t d);

/* Drop a dynamic replica (readable or not) and free its bytes. */
void sim_dyn_remove(struct sim_cluster *c, uint32_t d);

/* Readable dynamic replicas of o. */
uint32_t sim_obj_readable_dyn(const struct sim_cluster *c, uint64_t o);
/* Evict object o's primary (it has no dynamic replica): o is unwritten
 * again, and written back where puts go on its next read. */
void sim_cluster_evict(struct sim_cluster *c, uint64_t o);

#endif
