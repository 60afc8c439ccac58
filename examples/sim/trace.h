/*
 * mcrepl-sim trace loader: Mooncake JSONL traces (one request per line:
 * "timestamp" in ms, "hash_ids" the KV-cache blocks it reads). Each block
 * becomes one object, "block-<id>", indexed in first-seen order. Malformed
 * lines are reported with their line number and skipped.
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sim_trace {
	size_t n_req;
	double *ts_ms;	  /* per request, ascending */
	size_t *first;	  /* per request, index into obj; n_req + 1 entries */
	uint32_t *obj;	  /* object index of every block read */
	size_t n_reads;	  /* blocks read in total */
	uint64_t *ids;	  /* object index -> block id */
	size_t n_objs;	  /* distinct blocks */
	uint64_t *counts; /* reads per object */
	size_t malformed; /* lines skipped */
	/* block id -> object index (open addressing) */
	uint64_t *map_ids;
	uint32_t *map_idx;
	size_t map_cap;
};

/* Load path; malformed lines are reported on err. 0, or -1 (reported). */
int sim_trace_load(struct sim_trace *t, const char *path, FILE *err);
void sim_trace_free(struct sim_trace *t);

/* Object index of a block id, or -1. */
int64_t sim_trace_lookup(const struct sim_trace *t, uint64_t id);

#endif
