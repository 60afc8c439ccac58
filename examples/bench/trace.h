/*
 * A Mooncake request trace in memory: per request its arrival (ms) and its
 * prefix blocks as dense block indexes (0 .. n_blocks-1, in order of first
 * appearance); block_id[] maps them back to the trace's hash ids.
 */
#ifndef MBENCH_TRACE_H
#define MBENCH_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct trace_req {
	double ts_ms;	/* arrival, ms from the trace's start */
	size_t first;	/* its first entry in blocks[] */
	uint32_t count; /* how many blocks it reads */
};

struct trace {
	size_t n_reqs;
	struct trace_req *req;
	uint32_t *blocks; /* n_refs dense block indexes */
	size_t n_refs;
	uint64_t *block_id; /* dense index -> hash id */
	size_t n_blocks;
	size_t lines, malformed;
	/* internal: id -> dense index (open addressing) */
	uint64_t *map_id;
	uint32_t *map_idx;
	size_t map_cap, cap_reqs, cap_refs, cap_blocks;
};

/*
 * Load path. Each malformed line is reported on `report` as
 * "mcrepl-bench: PATH:LINE: reason; skipped" (the first 100; a count
 * after) and left out; blank lines are ignored. 0, or -1 with err set
 * (unreadable file, out of memory). trace_free() after either.
 */
int trace_load(struct trace *t, const char *path, FILE *report, char *err,
	       size_t errlen);
void trace_free(struct trace *t);

#endif
