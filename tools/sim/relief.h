/*
 * mcrepl-sim: per-key time to relief. Each report interval (window), a
 * key read r times that has R readable replicas (its primary and its
 * readable dynamic replicas at the window's end) is over its fair share
 * when r / R > L, L = the window's reads / the joined nodes (the mean node
 * load): spread evenly over its replicas, the key alone would still push
 * a node over the mean. An episode runs from the first window a key is
 * over to the first window it is not (a window with no read of the key
 * ends it too); its length in windows is the time to relief (1: relieved
 * in the next window). Episodes still open at the end were never
 * relieved.
 *
 * Cost: per read one counter bump (the count sits in the key's struct
 * sim_obj, on the cache line the read loads anyway; and, on a key's first
 * read in the window, one append to the window's read list); per window
 * the keys read in it and the open episodes. Memory: 8 bytes per key
 * (4 of them in struct sim_obj; keys are bounded
 * by --keys, or in trace mode by the trace's distinct blocks, which the
 * trace reader already holds), the read list (at most the distinct keys
 * read in one window), the open episodes (fewer than the joined nodes:
 * each over key carries more than L reads and the window has nodes x L)
 * and a histogram of episode lengths (one counter per window of the run).
 */
#ifndef SIM_RELIEF_H
#define SIM_RELIEF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cluster.h"

/* What the summary reports: nearest-rank percentiles over every episode,
 * counting an episode never relieved as longer than any; a percentile (or
 * the max) that falls on one is -1; all 0 when there was no episode. */
struct sim_relief_stats {
	uint64_t episodes, unrelieved;
	int64_t p50, p90, p99, max; /* windows; -1: not relieved by the end */
};

struct sim_relief {
	uint32_t *since;   /* per key: window its episode began + 1; 0 none */
	uint32_t *touched; /* keys read in the current window */
	uint32_t *open;	   /* keys with an open episode */
	uint64_t *hist;	   /* relieved episodes by length in windows */
	size_t n_touched, cap_touched, n_open, cap_open, cap_hist;
	uint64_t episodes;
	uint32_t window; /* windows closed */
	bool oom;	 /* a list could not grow: close() fails */
};

/* n keys. 0, or -1 when memory is short. */
int sim_relief_init(struct sim_relief *t, uint64_t n);
void sim_relief_free(struct sim_relief *t);

/* Close the window: reads in it, over the joined nodes of c. 0, or -1
 * when memory was short (here or in a read). */
int sim_relief_close(struct sim_relief *t, struct sim_cluster *c,
		     uint64_t reads);

/* The summary figures (open episodes count as never relieved). */
void sim_relief_stats(const struct sim_relief *t, struct sim_relief_stats *s);

/* The figures as summary JSON fields, each after a comma. */
void sim_relief_json(FILE *f, const struct sim_relief_stats *s);

/* Key o's first read in the window: list it. */
void sim_relief_touch(struct sim_relief *t, uint64_t o);

/* One read of key o of c (a count saturates at UINT32_MAX). */
static inline void sim_relief_read(struct sim_relief *t, struct sim_cluster *c,
				   uint64_t o)
{
	uint32_t *r = &c->objs[o].window_reads;

	if (*r != UINT32_MAX && !(*r)++)
		sim_relief_touch(t, o);
}

#endif
