/*
 * A Mooncake JSONL request trace in memory, shared by mcrepl-sim and
 * mcrepl-bench. One request a line: "timestamp" (ms, a non-negative
 * number) and "hash_ids" (the KV-cache blocks it reads, integers in
 * 0 .. 2^64-1); other members are checked and skipped whatever their type.
 *
 * Each distinct hash id becomes a dense block index (0 .. n_blocks-1, in
 * order of first appearance in the file); ids[] maps it back. Requests are
 * kept sorted by timestamp: a trace out of time order is sorted stably
 * (file order on ties), so a replay follows the timestamps. A hash id
 * repeated within a request is one read each time it appears.
 *
 * Malformed lines are reported on `report` as
 * "PROG: FILE:LINE: malformed line (reason), skipped" (the first
 * TRACE_MAX_REPORTED; past that a final "PROG: FILE: N malformed lines in
 * all, the first 100 reported") and left out; blank lines are ignored.
 */
#ifndef MCREPL_TOOLS_TRACE_H
#define MCREPL_TOOLS_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TRACE_MAX_REPORTED 100

struct trace {
	size_t n_req;
	double *ts_ms;	  /* per request, ascending */
	size_t *first;	  /* n_req + 1: request r reads blocks[first[r]] up
			     to blocks[first[r + 1] - 1] */
	uint32_t *blocks; /* n_reads dense block indexes, request by request */
	size_t n_reads;
	uint64_t *ids; /* dense block index -> hash id */
	size_t n_blocks;
	uint64_t *counts; /* reads per dense block index */
	size_t malformed; /* lines skipped */
	size_t unsorted;  /* requests earlier than the one before in the file */
	/* internal: hash id -> dense index (open addressing) */
	uint64_t *map_ids;
	uint32_t *map_idx;
	size_t map_cap; /* 2^(64 - map_shift) slots, or 0 */
	unsigned map_shift;
};

/*
 * Load path; reports (malformed lines, and why a load failed: unreadable
 * file, out of memory) go to `report`, each prefixed with "PROG: ". 0, or
 * -1 with *t empty. A file without any valid request loads (n_req 0): the
 * caller decides whether that is an error. trace_free() after success.
 */
int trace_load(struct trace *t, const char *path, const char *prog,
	       FILE *report);
/* As trace_load, from an open stream (left open; the caller closes it);
 * `path` only names it in the reports. */
int trace_load_stream(struct trace *t, FILE *f, const char *path,
		      const char *prog, FILE *report);
void trace_free(struct trace *t);

/* Dense block index of a hash id, or -1. */
int64_t trace_lookup(const struct trace *t, uint64_t id);

#endif
