/* Trace loading (see trace.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "trace.h"

#define EMPTY UINT32_MAX
#define MAX_REPORTED 100

static size_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t)x;
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

static int map_grow(struct trace *t)
{
	size_t cap = t->map_cap ? 2 * t->map_cap : 4096;
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
		for (j = mix(t->map_id[i]) & (cap - 1); idx[j] != EMPTY;
		     j = (j + 1) & (cap - 1))
			;
		ids[j] = t->map_id[i];
		idx[j] = t->map_idx[i];
	}
	free(t->map_id);
	free(t->map_idx);
	t->map_id = ids;
	t->map_idx = idx;
	t->map_cap = cap;
	return 0;
}

/* The dense index of hash id, added when new; -1 when memory is short. */
static int64_t block_index(struct trace *t, uint64_t id)
{
	size_t j;

	if (2 * (t->n_blocks + 1) > t->map_cap && map_grow(t) != 0)
		return -1;
	for (j = mix(id) & (t->map_cap - 1); t->map_idx[j] != EMPTY;
	     j = (j + 1) & (t->map_cap - 1))
		if (t->map_id[j] == id)
			return t->map_idx[j];
	if (t->n_blocks >= EMPTY - 1 ||
	    grow(&t->block_id, &t->cap_blocks, t->n_blocks + 1,
		 sizeof(*t->block_id)) != 0)
		return -1;
	t->map_id[j] = id;
	t->map_idx[j] = (uint32_t)t->n_blocks;
	t->block_id[t->n_blocks] = id;
	return (int64_t)t->n_blocks++;
}

/* Parse one line; NULL, or why it is malformed. */
static const char *parse_line(const char *line, double *ts, uint64_t **ids,
			      size_t *n, size_t *cap)
{
	struct jsonl_field f[] = {{"timestamp", NULL}, {"hash_ids", NULL}};
	const char *why = jsonl_scan(line, f, 2);

	if (why)
		return why;
	if (!f[0].value)
		return "no \"timestamp\"";
	if (jsonl_number(f[0].value, ts) || *ts < 0)
		return "\"timestamp\" is not a non-negative number";
	if (!f[1].value)
		return "no \"hash_ids\"";
	if (jsonl_ids(f[1].value, ids, n, cap))
		return "\"hash_ids\" is not an array of non-negative integers";
	return NULL;
}

static int add_request(struct trace *t, double ts, const uint64_t *ids,
		       size_t n)
{
	struct trace_req *r;

	if (grow(&t->req, &t->cap_reqs, t->n_reqs + 1, sizeof(*t->req)) ||
	    n > UINT32_MAX ||
	    grow(&t->blocks, &t->cap_refs, t->n_refs + n, sizeof(*t->blocks)))
		return -1;
	r = &t->req[t->n_reqs];
	r->ts_ms = ts;
	r->first = t->n_refs;
	r->count = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		int64_t b = block_index(t, ids[i]);

		if (b < 0)
			return -1;
		t->blocks[t->n_refs++] = (uint32_t)b;
	}
	t->n_reqs++;
	return 0;
}

static int blank(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return *s == '\0';
}

int trace_load(struct trace *t, const char *path, FILE *report, char *err,
	       size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n_ids = 0, cap_ids = 0;
	uint64_t *ids = NULL;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	if (!f) {
		snprintf(err, errlen, "cannot open trace %s: %s", path,
			 strerror(errno));
		return -1;
	}
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		double ts = 0;
		const char *why;

		t->lines++;
		if (blank(line))
			continue;
		why = parse_line(line, &ts, &ids, &n_ids, &cap_ids);
		if (why) {
			if (++t->malformed <= MAX_REPORTED && report)
				fprintf(report,
					"mcrepl-bench: %s:%zu: %s; skipped\n",
					path, t->lines, why);
			continue;
		}
		rc = add_request(t, ts, ids, n_ids);
		if (rc)
			snprintf(err, errlen, "trace %s: out of memory", path);
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, errlen, "reading trace %s: %s", path,
			 strerror(errno));
		rc = -1;
	}
	if (report && t->malformed > MAX_REPORTED)
		fprintf(report,
			"mcrepl-bench: %s: %zu malformed lines in all\n", path,
			t->malformed);
	free(line);
	free(ids);
	fclose(f);
	return rc;
}

void trace_free(struct trace *t)
{
	free(t->req);
	free(t->blocks);
	free(t->block_id);
	free(t->map_id);
	free(t->map_idx);
	memset(t, 0, sizeof(*t));
}
