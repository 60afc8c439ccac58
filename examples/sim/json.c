/* A strict little JSON scanner for one trace line (see json.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_DEPTH 32

struct cur {
	const char *p;
};

static void ws(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t' || *c->p == '\r' || *c->p == '\n')
		c->p++;
}

/* A string; *name gets its start and *len its raw length (escapes kept). */
static int string(struct cur *c, const char **name, size_t *len)
{
	const char *s;

	if (*c->p != '"')
		return -1;
	s = ++c->p;
	while (*c->p && *c->p != '"') {
		if ((unsigned char)*c->p < 0x20)
			return -1;
		if (*c->p == '\\' && !*++c->p)
			return -1;
		c->p++;
	}
	if (*c->p != '"')
		return -1;
	if (name)
		*name = s;
	if (len)
		*len = (size_t)(c->p - s);
	c->p++;
	return 0;
}

static int number(struct cur *c, double *out)
{
	char *end;

	if (*c->p != '-' && (*c->p < '0' || *c->p > '9'))
		return -1;
	errno = 0;
	*out = strtod(c->p, &end);
	if (errno || end == c->p || !isfinite(*out))
		return -1;
	c->p = end;
	return 0;
}

static int skip_value(struct cur *c, int depth);

static int skip_container(struct cur *c, int depth, char close, int keyed)
{
	c->p++;
	ws(c);
	if (*c->p == close) {
		c->p++;
		return 0;
	}
	for (;;) {
		if (keyed) {
			if (string(c, NULL, NULL))
				return -1;
			ws(c);
			if (*c->p++ != ':')
				return -1;
		}
		if (skip_value(c, depth + 1))
			return -1;
		ws(c);
		if (*c->p == close) {
			c->p++;
			return 0;
		}
		if (*c->p++ != ',')
			return -1;
		ws(c);
	}
}

static int literal(struct cur *c, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(c->p, word, n))
		return -1;
	c->p += n;
	return 0;
}

static int skip_value(struct cur *c, int depth)
{
	double d;

	ws(c);
	if (depth > MAX_DEPTH)
		return -1;
	switch (*c->p) {
	case '{':
		return skip_container(c, depth, '}', 1);
	case '[':
		return skip_container(c, depth, ']', 0);
	case '"':
		return string(c, NULL, NULL);
	case 't':
		return literal(c, "true");
	case 'f':
		return literal(c, "false");
	case 'n':
		return literal(c, "null");
	default:
		return number(c, &d);
	}
}

static int push_id(struct sim_json_req *r, uint64_t id)
{
	if (r->n_ids == r->cap_ids) {
		size_t cap = r->cap_ids ? 2 * r->cap_ids : 64;
		uint64_t *ids = realloc(r->ids, cap * sizeof(*ids));

		if (!ids)
			return -1;
		r->ids = ids;
		r->cap_ids = cap;
	}
	r->ids[r->n_ids++] = id;
	return 0;
}

static const char *id_array(struct cur *c, struct sim_json_req *r)
{
	r->n_ids = 0; /* a repeated member replaces the first */
	ws(c);
	if (*c->p++ != '[')
		return "hash_ids is not an array";
	ws(c);
	if (*c->p == ']') {
		c->p++;
		return NULL;
	}
	for (;;) {
		double d;

		ws(c);
		if (number(c, &d) || d < 0 || d != floor(d) || d > 0x1p63)
			return "hash_ids holds a non-integer";
		if (push_id(r, (uint64_t)d))
			return "out of memory";
		ws(c);
		if (*c->p == ']') {
			c->p++;
			return NULL;
		}
		if (*c->p++ != ',')
			return "hash_ids is not a valid array";
	}
}

static const char *member(struct cur *c, struct sim_json_req *r)
{
	const char *name;
	size_t len;

	if (string(c, &name, &len))
		return "bad member name";
	ws(c);
	if (*c->p++ != ':')
		return "missing ':'";
	ws(c);
	if (len == 9 && !memcmp(name, "timestamp", 9)) {
		if (number(c, &r->timestamp) || r->timestamp < 0)
			return "timestamp is not a non-negative number";
		r->has_ts = 1;
		return NULL;
	}
	if (len == 8 && !memcmp(name, "hash_ids", 8)) {
		r->has_ids = 1;
		return id_array(c, r);
	}
	return skip_value(c, 1) ? "bad value" : NULL;
}

const char *sim_json_parse_req(const char *line, struct sim_json_req *r)
{
	struct cur c = {line};
	const char *why;

	r->n_ids = 0;
	r->has_ts = r->has_ids = 0;
	ws(&c);
	if (*c.p++ != '{')
		return "not a JSON object";
	ws(&c);
	if (*c.p == '}')
		c.p++;
	else
		for (;;) {
			why = member(&c, r);
			if (why)
				return why;
			ws(&c);
			if (*c.p == '}') {
				c.p++;
				break;
			}
			if (*c.p++ != ',')
				return "expected ',' or '}'";
			ws(&c);
		}
	ws(&c);
	if (*c.p)
		return "trailing characters";
	if (!r->has_ts)
		return "no timestamp";
	if (!r->has_ids)
		return "no hash_ids";
	return NULL;
}
