/*
 * Unit test of the trace loader shared by mcrepl-sim and mcrepl-bench
 * (tools/common/trace.c, jsonl.c): a crafted file with every kind of
 * malformed line, out-of-order and tied timestamps, a hash id repeated in
 * a request, ids past 2^53 and up to 2^64-1, a line longer than 1 MiB, a
 * NUL byte and no final newline; the report cap; a missing file; requests
 * out of order that read nothing. Prints TAP lines and "N passed, N
 * failed". Run by make check-sim.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tools/common/trace.h"

static int n_pass, n_fail;

static void ok(int cond, const char *what)
{
	if (cond)
		n_pass++;
	else
		n_fail++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_pass + n_fail, what);
}

/* A temporary file holding len bytes of text; its path in buf. */
static int write_file(char *buf, const char *text, size_t len)
{
	int fd;
	FILE *f;

	strcpy(buf, "/tmp/mcrepl-trace-test.XXXXXX");
	fd = mkstemp(buf);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		return -1;
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

/* Load text; the report's lines land in *rep (the caller frees). */
static int load(struct trace *t, const char *text, size_t len, char **rep)
{
	char path[64];
	size_t rep_len;
	FILE *r = open_memstream(rep, &rep_len);
	int rc;

	if (!r || write_file(path, text, len)) {
		perror("trace_test");
		exit(2);
	}
	rc = trace_load(t, path, "prog", r);
	fclose(r);
	unlink(path);
	return rc;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Whether rep has a line "prog: PATH:LINE: malformed line (WHY), skipped". */
static int reported(const char *rep, int line, const char *why)
{
	char want[160];

	snprintf(want, sizeof(want), ":%d: malformed line (%s), skipped\n",
		 line, why);
	return strstr(rep, want) != NULL;
}

static const char *const crafted[] = {
    /* 1 */ "{\"timestamp\": 100, \"hash_ids\": [1, 2, 2]}",
    /* 2 */ "",
    /* 3 */ "{\"timestamp\": 20, \"hash_ids\": [1, 14",
    /* 4 */ "{\"timestamp\": 50, \"hash_ids\": [3]}",
    /* 5 */
    "{\"timestamp\": 200, \"hash_ids\": [18446744073709551615, "
    "9007199254740993]}",
    /* 6 */ "{\"timestamp\": 210, \"hash_ids\": [18446744073709551616]}",
    /* 7 */ "{\"timestamp\": 220, \"hash_ids\": [-1]}",
    /* 8 */ "{\"timestamp\": 230, \"hash_ids\": [5.0]}",
    /* 9 */ NULL, /* {"timestamp": 50, "hash_ids": [4], "pad": 1.5 MiB} */
    /* 10 */ "{\"timestamp\": 1, \"timestamp\": 2, \"hash_ids\": [1]}",
    /* 11 */ "   \t\r",
    /* 12 */ "{\"timestamp\": -1, \"hash_ids\": [1]}",
    /* 13 */ "{\"timestamp\": 5}",
    /* 14 */ "{\"hash_ids\": [1]}",
    /* 15 */ "{\"timestamp\": 300, \"hash_ids\": []}",
    /* 16 */ "[1, 2]",
    /* 17 */ "{\"timestamp\": 0x10, \"hash_ids\": [1]}",
    /* 18 */ "{\"timestamp\": 310, \"hash_ids\": [7]} x",
    /* 19 */ "{\"timestamp\": 320, \"hash_ids\": \"1\"}",
    /* 20 */ "{\"timestamp\": 330, \"hash_ids\": [6], \"s\": \"a\\qb\"}",
    /* 21 */ "{\"timestamp\": 1e400, \"hash_ids\": [1]}",
    /* 22 */ NULL, /* a NUL byte inside a valid-looking line */
    /* 23 */
    "{\"timestamp\": 40, \"hash_ids\": [2, 1], \"x\": {\"d\": [[[{\"a\": "
    "null}]], false]}, \"t\": true, \"u\": \"\\u00e9\\n\", \"f\": "
    "-0.5e-3}",
};

#define PAD (1536 * 1024)

static char *crafted_text(size_t *len)
{
	size_t n = sizeof(crafted) / sizeof(crafted[0]), cap = PAD + 4096;
	char *s = malloc(cap), *p = s;

	if (!s)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		if (i == 8) {
			p +=
			    sprintf(p, "{\"timestamp\": 50, \"hash_ids\": [4], "
				       "\"pad\": \"");
			memset(p, 'x', PAD);
			p += PAD;
			p += sprintf(p, "\"}");
		} else if (i == 21) {
			static const char nul[] =
			    "{\"timestamp\": 9, \"hash_ids\": [1]}\0  ";

			memcpy(p, nul, sizeof(nul) - 1);
			p += sizeof(nul) - 1;
		} else {
			p += sprintf(p, "%s", crafted[i]);
		}
		if (i + 1 < n) /* the last line has no newline */
			*p++ = '\n';
	}
	*len = (size_t)(p - s);
	return s;
}

static void test_crafted(void)
{
	static const size_t first[] = {0, 2, 3, 4, 7, 9, 9};
	static const uint32_t blocks[] = {1, 0, 2, 5, 0, 1, 1, 3, 4};
	static const uint64_t ids[] = {1, 2, 3, UINT64_MAX, (1ULL << 53) + 1,
				       4};
	static const uint64_t counts[] = {2, 3, 1, 1, 1, 1};
	static const double ts[] = {40, 50, 50, 100, 200, 300};
	static const char ints[] =
	    "\"hash_ids\" holds other than integers in 0..2^64-1";
	static const char ts_bad[] =
	    "\"timestamp\" is not a non-negative number";
	struct trace t;
	size_t len;
	char *text = crafted_text(&len), *rep = NULL;
	int rc = load(&t, text, len, &rep);

	ok(rc == 0, "crafted: loads");
	ok(t.n_req == 6, "crafted: 6 valid requests");
	ok(t.n_reads == 9, "crafted: 9 block reads (a repeated id counts)");
	ok(t.n_blocks == 6, "crafted: 6 distinct blocks");
	ok(t.malformed == 15, "crafted: 15 malformed lines");
	ok(t.unsorted == 3, "crafted: 3 requests out of time order");
	ok(t.n_req == 6 && !memcmp(t.ts_ms, ts, sizeof(ts)),
	   "crafted: requests sorted by timestamp");
	ok(t.n_req == 6 && !memcmp(t.first, first, sizeof(first)),
	   "crafted: request boundaries after the sort");
	ok(t.n_reads == 9 && !memcmp(t.blocks, blocks, sizeof(blocks)),
	   "crafted: blocks moved with their request, ties in file order");
	ok(t.n_blocks == 6 && !memcmp(t.ids, ids, sizeof(ids)),
	   "crafted: ids exact up to 2^64-1, in order of first appearance");
	ok(t.n_blocks == 6 && !memcmp(t.counts, counts, sizeof(counts)),
	   "crafted: reads per block");
	ok(trace_lookup(&t, UINT64_MAX) == 3 &&
	       trace_lookup(&t, (1ULL << 53) + 1) == 4 &&
	       trace_lookup(&t, 1ULL << 53) == -1 &&
	       trace_lookup(&t, 999) == -1,
	   "crafted: lookup of a block id");
	ok(rep && count_lines(rep) == 16,
	   "crafted: 15 lines reported and the sort noted");
	ok(rep && strstr(rep, "prog: /tmp/") == rep,
	   "crafted: reports start with the prefix and the file");
	ok(rep && reported(rep, 3, "truncated line") &&
	       reported(rep, 6, ints) && reported(rep, 7, ints) &&
	       reported(rep, 8, ints) &&
	       reported(rep, 10, "duplicate member") &&
	       reported(rep, 12, ts_bad) &&
	       reported(rep, 13, "no \"hash_ids\"") &&
	       reported(rep, 14, "no \"timestamp\"") &&
	       reported(rep, 16, "not a JSON object") &&
	       reported(rep, 17, "bad number") &&
	       reported(rep, 18, "trailing characters") &&
	       reported(rep, 19, "\"hash_ids\" is not an array") &&
	       reported(rep, 20, "bad escape") && reported(rep, 21, ts_bad) &&
	       reported(rep, 22, "NUL byte in line"),
	   "crafted: each malformed line reported with its number and reason");
	ok(rep && strstr(rep, ": 3 requests out of time order, sorted by "
			      "timestamp\n"),
	   "crafted: the sort is reported");
	trace_free(&t);
	free(rep);
	free(text);
}

static void test_cap(void)
{
	size_t cap = 200 * 40, len = 0;
	char *text = malloc(cap), *rep = NULL;
	struct trace t;
	int rc;

	if (!text)
		exit(2);
	for (int i = 0; i < 150; i++)
		len += (size_t)sprintf(text + len, "{\"timestamp\": %d\n", i);
	len +=
	    (size_t)sprintf(text + len, "{\"timestamp\":7,\"hash_ids\":[9]}\n");
	rc = load(&t, text, len, &rep);
	ok(rc == 0 && t.malformed == 150 && t.n_req == 1 && t.n_reads == 1,
	   "cap: 150 malformed lines counted, the valid one kept");
	ok(rep && count_lines(rep) == TRACE_MAX_REPORTED + 1 &&
	       reported(rep, 100, "truncated line") &&
	       !reported(rep, 101, "truncated line") &&
	       strstr(rep, ": 150 malformed lines in all, the first 100 "
			   "reported\n"),
	   "cap: the first 100 reported, then the count");
	trace_free(&t);
	free(rep);
	free(text);
}

static void test_empty_and_missing(void)
{
	struct trace t;
	char *rep = NULL;
	FILE *r;
	size_t rep_len;
	int rc = load(&t, "\n\n", 2, &rep);

	ok(rc == 0 && t.n_req == 0 && t.n_reads == 0 && t.first &&
	       t.first[0] == 0 && rep && !*rep,
	   "empty: loads with no request, nothing reported");
	trace_free(&t);
	free(rep);
	rep = NULL;
	r = open_memstream(&rep, &rep_len);
	if (!r)
		exit(2);
	rc = trace_load(&t, "/nonexistent/trace.jsonl", "prog", r);
	fclose(r);
	ok(rc == -1 && t.n_req == 0 && !t.ts_ms &&
	       strstr(rep,
		      "prog: cannot open trace /nonexistent/trace.jsonl: "),
	   "missing: an error, reported, the trace left empty");
	trace_free(&t);
	free(rep);
}

/* Found by tests/fuzz/fuzz_jsonl: sorting requests that read nothing
 * offset a NULL block array (undefined behaviour, caught by UBSan). */
static void test_unsorted_without_reads(void)
{
	static const char text[] = "{\"timestamp\":3,\"hash_ids\":[]}\n"
				   "{\"timestamp\":2,\"hash_ids\":[]}\n";
	struct trace t;
	char *rep = NULL;
	int rc = load(&t, text, sizeof(text) - 1, &rep);

	ok(rc == 0 && t.n_req == 2 && t.n_reads == 0 && t.unsorted == 1 &&
	       t.ts_ms[0] == 2 && t.ts_ms[1] == 3 && t.first[2] == 0,
	   "unsorted, no reads: sorted, nothing to move");
	trace_free(&t);
	free(rep);
}

int main(void)
{
	test_crafted();
	test_cap();
	test_empty_and_missing();
	test_unsorted_without_reads();
	printf("1..%d\ntrace_test: %d passed, %d failed\n", n_pass + n_fail,
	       n_pass, n_fail);
	return n_fail ? 1 : 0;
}
