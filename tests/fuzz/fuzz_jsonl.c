/*
 * The JSON-lines scanner and the trace loader shared by mcrepl-sim and
 * mcrepl-bench (tools/common/jsonl.h, trace.h). The input is scanned as
 * one line, then loaded as a whole trace file (trace_load_stream on an
 * fmemopen stream).
 *
 * Properties. Scanner: the verdict does not depend on the wanted members
 * (except "duplicate member"); found values point inside the line; a
 * number it accepts is finite; an id array it accepts prints back to text
 * that scans to the same ids. Loader: it loads (no I/O or memory failure
 * here), timestamps are finite, non-negative and ascending, request ranges
 * tile the reads, every read names a known block, block ids are distinct
 * and found by trace_lookup, per-block counts add up to the reads, and
 * every input line is a request, blank or malformed.
 */
#include <math.h>
#include <string.h>

#include "../../tools/common/jsonl.h"
#include "../../tools/common/trace.h"
#include "fuzz.h"

/* ids[0..n) as "[a,b,...]" scans back to the same ids. */
static void check_ids_round_trip(const uint64_t *ids, size_t n)
{
	char *text = malloc(n * 21 + 3), *p = text;
	uint64_t *back = NULL;
	size_t n2 = 0, cap = 0;

	FUZZ_CHECK(text);
	*p++ = '[';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%llu", i ? "," : "",
			     (unsigned long long)ids[i]);
	strcpy(p, "]");
	FUZZ_CHECK(jsonl_ids(text, &back, &n2, &cap) == NULL);
	FUZZ_CHECK(n2 == n);
	FUZZ_CHECK(n == 0 || memcmp(back, ids, n * sizeof(*ids)) == 0);
	free(back);
	free(text);
}

static void check_scan(const char *line)
{
	struct jsonl_field f[] = {
	    {"timestamp", NULL}, {"hash_ids", NULL}, {"", NULL}};
	size_t len = strlen(line), n_ids = 0, cap = 0;
	const char *why = jsonl_scan(line, f, 3), *plain;
	uint64_t *ids = NULL;
	double d;

	plain = jsonl_scan(line, NULL, 0);
	if (why && strcmp(why, "duplicate member") == 0)
		return;
	FUZZ_CHECK((why == NULL) == (plain == NULL));
	if (why) {
		FUZZ_CHECK(*why);
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		if (!f[i].value)
			continue;
		FUZZ_CHECK(f[i].value > line && f[i].value < line + len);
		if (jsonl_number(f[i].value, &d) == NULL)
			FUZZ_CHECK(isfinite(d));
		if (jsonl_ids(f[i].value, &ids, &n_ids, &cap) == NULL)
			check_ids_round_trip(ids, n_ids);
	}
	free(ids);
}

static void check_trace(const struct trace *t, size_t lines)
{
	uint64_t reads = 0;

	FUZZ_CHECK(t->first && t->first[0] == 0);
	FUZZ_CHECK(t->first[t->n_req] == t->n_reads);
	FUZZ_CHECK(t->n_req + t->malformed <= lines);
	FUZZ_CHECK(t->unsorted <= t->n_req);
	for (size_t r = 0; r < t->n_req; r++) {
		FUZZ_CHECK(isfinite(t->ts_ms[r]) && t->ts_ms[r] >= 0);
		FUZZ_CHECK(r == 0 || t->ts_ms[r - 1] <= t->ts_ms[r]);
		FUZZ_CHECK(t->first[r] <= t->first[r + 1]);
	}
	for (size_t i = 0; i < t->n_reads; i++)
		FUZZ_CHECK(t->blocks[i] < t->n_blocks);
	for (size_t b = 0; b < t->n_blocks; b++) {
		FUZZ_CHECK(trace_lookup(t, t->ids[b]) == (int64_t)b);
		FUZZ_CHECK(t->counts[b] >= 1);
		reads += t->counts[b];
	}
	FUZZ_CHECK(reads == t->n_reads);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	char *line = malloc(size + 1);
	size_t lines = 0;
	struct trace t;
	FILE *f;

	FUZZ_CHECK(line);
	memcpy(line, data, size);
	line[size] = '\0';
	check_scan(line);
	free(line);

	if (size == 0)
		return 0; /* fmemopen needs a buffer */
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	f = fmemopen((void *)(uintptr_t)data, size, "r");
	FUZZ_CHECK(f);
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n' || i == size - 1;
	FUZZ_CHECK(trace_load_stream(&t, f, "fuzz", "fuzz_jsonl", devnull) ==
		   0);
	check_trace(&t, lines);
	trace_free(&t);
	fclose(f);
	return 0;
}
