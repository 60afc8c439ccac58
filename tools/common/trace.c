/* Trace loading (see trace.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "trace.h"

#define EMPTY UINT32_MAX

/*
 * Fibonacci hashing: the top bits of id times 2^64 / phi pick the slot in
 * a table of 2^(64 - shift) slots; sequential ids spread evenly.
 */
static size_t slot(uint64_t id, unsigned shift)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> shift);
}

static int grow(void *pp, size_t *cap, size_t need, size_t elem)
{
	void **p = pp;
	size_t n = *cap ? *cap : 1024;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

/* Give back what grow() reserved beyond n elements (never fails). */
static void shrink(void *pp, size_t n, size_t elem)
{
	void **p = pp;
	void *q = n ? realloc(*p, n * elem) : NULL;

	if (q)
		*p = q;
}

static int map_grow(struct trace *t)
{
	size_t cap = t->map_cap ? 2 * t->map_cap : 4096;
	unsigned shift = t->map_cap ? t->map_shift - 1 : 64 - 12;
	uint64_t *ids = malloc(cap * sizeof(*ids));
	uint32_t *idx = malloc(cap * sizeof(*idx));

	if (!ids || !idx) {
		free(ids);
		free(idx);
		return -1;
	}
	for (size_t i = 0; i < cap; i++)
		idx[i] = EMPTY;
	for (size_t i = 0; i < t->map_cap; i++) {
		size_t j;

		if (t->map_idx[i] == EMPTY)
			continue;
		for (j = slot(t->map_ids[i], shift); idx[j] != EMPTY;
		     j = (j + 1) & (cap - 1))
			;
		ids[j] = t->map_ids[i];
		idx[j] = t->map_idx[i];
	}
	free(t->map_ids);
	free(t->map_idx);
	t->map_ids = ids;
	t->map_idx = idx;
	t->map_cap = cap;
	t->map_shift = shift;
	return 0;
}

int64_t trace_lookup(const struct trace *t, uint64_t id)
{
	size_t j;

	if (!t->map_cap)
		return -1;
	for (j = slot(id, t->map_shift); t->map_idx[j] != EMPTY;
	     j = (j + 1) & (t->map_cap - 1))
		if (t->map_ids[j] == id)
			return t->map_idx[j];
	return -1;
}

struct loader {
	struct trace *t;
	size_t cap_req, cap_first, cap_reads, cap_blocks;
};

/* The dense index of hash id, added when new (one probe); -1 on OOM. */
static int64_t block_index(struct loader *l, uint64_t id)
{
	struct trace *t = l->t;
	size_t j;

	if (2 * (t->n_blocks + 1) > t->map_cap && map_grow(t))
		return -1;
	for (j = slot(id, t->map_shift); t->map_idx[j] != EMPTY;
	     j = (j + 1) & (t->map_cap - 1))
		if (t->map_ids[j] == id)
			return t->map_idx[j];
	if (t->n_blocks >= EMPTY - 1 ||
	    grow(&t->ids, &l->cap_blocks, t->n_blocks + 1, sizeof(*t->ids)))
		return -1;
	t->map_ids[j] = id;
	t->map_idx[j] = (uint32_t)t->n_blocks;
	t->ids[t->n_blocks] = id;
	return (int64_t)t->n_blocks++;
}

static int add_request(struct loader *l, double ts, const uint64_t *ids,
		       size_t n)
{
	struct trace *t = l->t;

	if (grow(&t->ts_ms, &l->cap_req, t->n_req + 1, sizeof(*t->ts_ms)) ||
	    grow(&t->first, &l->cap_first, t->n_req + 2, sizeof(*t->first)) ||
	    grow(&t->blocks, &l->cap_reads, t->n_reads + n, sizeof(*t->blocks)))
		return -1;
	if (t->n_req && ts < t->ts_ms[t->n_req - 1])
		t->unsorted++;
	t->ts_ms[t->n_req] = ts;
	t->first[t->n_req] = t->n_reads;
	for (size_t i = 0; i < n; i++) {
		int64_t b = block_index(l, ids[i]);

		if (b < 0)
			return -1;
		t->blocks[t->n_reads++] = (uint32_t)b;
	}
	t->first[++t->n_req] = t->n_reads;
	return 0;
}

/*
 * Parse one line of len bytes; NULL, or why it is malformed (jsonl_oom
 * when memory is short).
 */
static const char *parse_line(const char *line, size_t len, double *ts,
			      uint64_t **ids, size_t *n, size_t *cap)
{
	struct jsonl_field f[] = {{.name = "timestamp"}, {.name = "hash_ids"}};
	const char *why;

	if (strlen(line) != len)
		return "NUL byte in line";
	why = jsonl_scan(line, f, 2);
	if (why)
		return why;
	if (!f[0].value)
		return "no \"timestamp\"";
	if (jsonl_number(f[0].value, ts) || *ts < 0)
		return "\"timestamp\" is not a non-negative number";
	if (!f[1].value)
		return "no \"hash_ids\"";
	why = jsonl_ids(f[1].value, ids, n, cap);
	if (why == jsonl_oom)
		return why;
	if (why)
		return *f[1].value == '['
			   ? "\"hash_ids\" holds other than integers in "
			     "0..2^64-1"
			   : "\"hash_ids\" is not an array";
	return NULL;
}

static int blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

static int read_lines(struct loader *l, FILE *f, const char *path,
		      const char *prog, FILE *report)
{
	struct trace *t = l->t;
	char *line = NULL;
	size_t cap = 0, lineno = 0, n_ids = 0, cap_ids = 0;
	uint64_t *ids = NULL;
	ssize_t len;
	int rc = 0;

	while ((len = getline(&line, &cap, f)) >= 0) {
		double ts = 0;
		const char *why;

		lineno++;
		if (blank(line) && strlen(line) == (size_t)len)
			continue;
		why =
		    parse_line(line, (size_t)len, &ts, &ids, &n_ids, &cap_ids);
		if (why && why != jsonl_oom) {
			if (++t->malformed <= TRACE_MAX_REPORTED && report)
				fprintf(report,
					"%s: %s:%zu: malformed line (%s), "
					"skipped\n",
					prog, path, lineno, why);
			continue;
		}
		if (why || add_request(l, ts, ids, n_ids)) {
			if (report)
				fprintf(report, "%s: %s:%zu: out of memory\n",
					prog, path, lineno);
			rc = -1;
			break;
		}
	}
	if (rc == 0 && ferror(f)) {
		if (report)
			fprintf(report, "%s: reading trace %s: %s\n", prog,
				path, strerror(errno));
		rc = -1;
	}
	if (report && t->malformed > TRACE_MAX_REPORTED)
		fprintf(report,
			"%s: %s: %zu malformed lines in all, the first %d "
			"reported\n",
			prog, path, t->malformed, TRACE_MAX_REPORTED);
	free(line);
	free(ids);
	return rc;
}

struct order {
	double ts;
	size_t req;
};

static int by_time(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->req > y->req) - (x->req < y->req);
}

/* Stable sort of the requests by timestamp (file order on ties). */
static int sort_requests(struct trace *t)
{
	struct order *o = malloc(t->n_req * sizeof(*o));
	size_t *first = malloc((t->n_req + 1) * sizeof(*first));
	uint32_t *blocks = malloc((t->n_reads + 1) * sizeof(*blocks));
	size_t n = 0;

	if (!o || !first || !blocks) {
		free(o);
		free(first);
		free(blocks);
		return -1;
	}
	for (size_t i = 0; i < t->n_req; i++)
		o[i] = (struct order){.ts = t->ts_ms[i], .req = i};
	qsort(o, t->n_req, sizeof(*o), by_time);
	for (size_t i = 0; i < t->n_req; i++) {
		size_t r = o[i].req, len = t->first[r + 1] - t->first[r];

		t->ts_ms[i] = o[i].ts;
		first[i] = n;
		/* t->blocks is NULL while no request has read anything */
		if (len)
			memcpy(blocks + n, t->blocks + t->first[r],
			       len * sizeof(*blocks));
		n += len;
	}
	first[t->n_req] = n;
	free(o);
	free(t->first);
	free(t->blocks);
	t->first = first;
	t->blocks = blocks;
	return 0;
}

int trace_load(struct trace *t, const char *path, const char *prog,
	       FILE *report)
{
	FILE *f = fopen(path, "r");
	int rc;

	if (!f) {
		memset(t, 0, sizeof(*t));
		if (report)
			fprintf(report, "%s: cannot open trace %s: %s\n", prog,
				path, strerror(errno));
		return -1;
	}
	rc = trace_load_stream(t, f, path, prog, report);
	fclose(f);
	return rc;
}

int trace_load_stream(struct trace *t, FILE *f, const char *path,
		      const char *prog, FILE *report)
{
	struct loader l = {.t = t};

	memset(t, 0, sizeof(*t));
	if (read_lines(&l, f, path, prog, report))
		goto fail;
	if (!t->first && !(t->first = calloc(1, sizeof(*t->first))))
		goto oom;
	if (t->unsorted) {
		if (sort_requests(t))
			goto oom;
		if (report)
			fprintf(report,
				"%s: %s: %zu request%s out of time order, "
				"sorted by timestamp\n",
				prog, path, t->unsorted,
				t->unsorted == 1 ? "" : "s");
	}
	shrink(&t->ts_ms, t->n_req, sizeof(*t->ts_ms));
	shrink(&t->first, t->n_req + 1, sizeof(*t->first));
	shrink(&t->blocks, t->n_reads, sizeof(*t->blocks));
	shrink(&t->ids, t->n_blocks, sizeof(*t->ids));
	t->counts = calloc(t->n_blocks + 1, sizeof(*t->counts));
	if (!t->counts)
		goto oom;
	for (size_t i = 0; i < t->n_reads; i++)
		t->counts[t->blocks[i]]++;
	return 0;

oom:
	if (report)
		fprintf(report, "%s: trace %s: out of memory\n", prog, path);
fail:
	trace_free(t);
	return -1;
}

void trace_free(struct trace *t)
{
	free(t->ts_ms);
	free(t->first);
	free(t->blocks);
	free(t->ids);
	free(t->counts);
	free(t->map_ids);
	free(t->map_idx);
	memset(t, 0, sizeof(*t));
}
