/* Load a JSONL request trace into flat arrays (see trace.h). */
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "rng.h"
#include "trace.h"

#define EMPTY UINT32_MAX

static int map_grow(struct sim_trace *t)
{
	size_t cap = t->map_cap ? 2 * t->map_cap : 1024;
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
		j = sim_mix64(t->map_ids[i]) & (cap - 1);
		while (idx[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		ids[j] = t->map_ids[i];
		idx[j] = t->map_idx[i];
	}
	free(t->map_ids);
	free(t->map_idx);
	t->map_ids = ids;
	t->map_idx = idx;
	t->map_cap = cap;
	return 0;
}

int64_t sim_trace_lookup(const struct sim_trace *t, uint64_t id)
{
	size_t j;

	if (!t->map_cap)
		return -1;
	j = sim_mix64(id) & (t->map_cap - 1);
	for (; t->map_idx[j] != EMPTY; j = (j + 1) & (t->map_cap - 1))
		if (t->map_ids[j] == id)
			return t->map_idx[j];
	return -1;
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

/* Object index of block id, creating the object at first sight. */
static int intern(struct sim_trace *t, uint64_t id, size_t *cap_objs,
		  uint32_t *out)
{
	int64_t have = sim_trace_lookup(t, id);
	size_t j;

	if (have >= 0) {
		*out = (uint32_t)have;
		return 0;
	}
	if (t->n_objs >= EMPTY - 1)
		return -1;
	if ((t->n_objs + 1) * 2 > t->map_cap && map_grow(t))
		return -1;
	if (grow(&t->ids, cap_objs, t->n_objs + 1, sizeof(*t->ids)))
		return -1;
	j = sim_mix64(id) & (t->map_cap - 1);
	while (t->map_idx[j] != EMPTY)
		j = (j + 1) & (t->map_cap - 1);
	t->map_ids[j] = id;
	t->map_idx[j] = (uint32_t)t->n_objs;
	t->ids[t->n_objs] = id;
	*out = (uint32_t)t->n_objs++;
	return 0;
}

struct loader {
	struct sim_trace *t;
	size_t cap_req, cap_first, cap_obj, cap_objs;
	int sorted;
};

static int add_request(struct loader *l, const struct sim_json_req *r)
{
	struct sim_trace *t = l->t;

	if (grow(&t->ts_ms, &l->cap_req, t->n_req + 1, sizeof(*t->ts_ms)) ||
	    grow(&t->first, &l->cap_first, t->n_req + 2, sizeof(*t->first)) ||
	    grow(&t->obj, &l->cap_obj, t->n_reads + r->n_ids, sizeof(*t->obj)))
		return -1;
	if (t->n_req && r->timestamp < t->ts_ms[t->n_req - 1])
		l->sorted = 0;
	t->ts_ms[t->n_req] = r->timestamp;
	t->first[t->n_req] = t->n_reads;
	for (size_t i = 0; i < r->n_ids; i++)
		if (intern(t, r->ids[i], &l->cap_objs, &t->obj[t->n_reads++]))
			return -1;
	t->first[++t->n_req] = t->n_reads;
	return 0;
}

static int blank(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

static int read_lines(struct loader *l, FILE *f, const char *path, FILE *err)
{
	struct sim_json_req r = {0};
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int rc = 0;

	while (getline(&line, &cap, f) >= 0) {
		const char *why;

		lineno++;
		if (blank(line))
			continue;
		why = sim_json_parse_req(line, &r);
		if (why) {
			fprintf(err,
				"mcrepl-sim: %s:%zu: malformed line (%s), "
				"skipped\n",
				path, lineno, why);
			l->t->malformed++;
			continue;
		}
		if (add_request(l, &r)) {
			fprintf(err, "mcrepl-sim: %s:%zu: out of memory\n",
				path, lineno);
			rc = -1;
			break;
		}
	}
	free(line);
	free(r.ids);
	return rc;
}

static const double *sort_ts;

static int cmp_req(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	if (sort_ts[x] != sort_ts[y])
		return sort_ts[x] < sort_ts[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Stable sort of the requests by timestamp (arrival order on ties). */
static int sort_requests(struct sim_trace *t)
{
	size_t *perm = malloc(t->n_req * sizeof(*perm));
	double *ts = malloc(t->n_req * sizeof(*ts));
	size_t *first = malloc((t->n_req + 1) * sizeof(*first));
	uint32_t *obj = malloc((t->n_reads + 1) * sizeof(*obj));
	size_t n = 0;

	if (!perm || !ts || !first || !obj) {
		free(perm);
		free(ts);
		free(first);
		free(obj);
		return -1;
	}
	for (size_t i = 0; i < t->n_req; i++)
		perm[i] = i;
	sort_ts = t->ts_ms;
	qsort(perm, t->n_req, sizeof(*perm), cmp_req);
	for (size_t i = 0; i < t->n_req; i++) {
		size_t r = perm[i];

		ts[i] = t->ts_ms[r];
		first[i] = n;
		for (size_t j = t->first[r]; j < t->first[r + 1]; j++)
			obj[n++] = t->obj[j];
	}
	first[t->n_req] = n;
	free(perm);
	free(t->ts_ms);
	free(t->first);
	free(t->obj);
	t->ts_ms = ts;
	t->first = first;
	t->obj = obj;
	return 0;
}

int sim_trace_load(struct sim_trace *t, const char *path, FILE *err)
{
	struct loader l = {t, 0, 0, 0, 0, 1};
	FILE *f = fopen(path, "r");

	memset(t, 0, sizeof(*t));
	if (!f) {
		fprintf(err, "mcrepl-sim: cannot open trace %s\n", path);
		return -1;
	}
	if (read_lines(&l, f, path, err))
		goto out_fail;
	fclose(f);
	f = NULL;
	if (!l.sorted && sort_requests(t))
		goto out_fail;
	if (!t->n_req) {
		fprintf(err, "mcrepl-sim: %s: no valid request\n", path);
		goto out_fail;
	}
	t->counts = calloc(t->n_objs, sizeof(*t->counts));
	if (!t->counts)
		goto out_fail;
	for (size_t i = 0; i < t->n_reads; i++)
		t->counts[t->obj[i]]++;
	return 0;

out_fail:
	if (f)
		fclose(f);
	sim_trace_free(t);
	return -1;
}

void sim_trace_free(struct sim_trace *t)
{
	free(t->ts_ms);
	free(t->first);
	free(t->obj);
	free(t->ids);
	free(t->counts);
	free(t->map_ids);
	free(t->map_idx);
	memset(t, 0, sizeof(*t));
}
