/* Tolerant JSON-lines scanner (see jsonl.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

#define MAX_DEPTH 64

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

/* p at '"'; returns the char after the closing quote, or NULL. */
static const char *skip_string(const char *p)
{
	for (p++; *p && *p != '"'; p++)
		if (*p == '\\' && !*++p)
			return NULL;
	return *p == '"' ? p + 1 : NULL;
}

static int scalar_char(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '+' || ch == '.';
}

/* Skip one value of any type; NULL (and *why) when malformed. */
static const char *skip_value(const char *p, const char **why)
{
	char stack[MAX_DEPTH];
	size_t depth = 0;
	const char *start = p;

	do {
		if (*p == '"') {
			p = skip_string(p);
			if (!p) {
				*why = "unterminated string";
				return NULL;
			}
		} else if (*p == '{' || *p == '[') {
			if (depth == MAX_DEPTH) {
				*why = "nested too deep";
				return NULL;
			}
			stack[depth++] = *p == '{' ? '}' : ']';
			p++;
		} else if ((*p == '}' || *p == ']') && depth > 0) {
			if (stack[--depth] != *p) {
				*why = "mismatched brackets";
				return NULL;
			}
			p++;
		} else if (depth > 0 && *p) {
			p++; /* inside a container: commas, colons, scalars */
		} else if (scalar_char(*p)) {
			while (scalar_char(*p))
				p++;
		} else {
			*why = *p ? "bad value" : "truncated line";
			return NULL;
		}
	} while (depth > 0 && *p);
	if (depth > 0 || p == start) {
		*why = "truncated line";
		return NULL;
	}
	return p;
}

static void note(struct jsonl_field *f, size_t n, const char *key, size_t len,
		 const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(f[i].name) == len &&
		    memcmp(f[i].name, key, len) == 0 && !f[i].value)
			f[i].value = value;
}

const char *jsonl_scan(const char *line, struct jsonl_field *f, size_t n)
{
	const char *p = ws(line), *why = NULL;

	for (size_t i = 0; i < n; i++)
		f[i].value = NULL;
	if (*p != '{')
		return "not a JSON object";
	p = ws(p + 1);
	if (*p == '}')
		return *ws(p + 1) ? "trailing characters" : NULL;
	for (;;) {
		const char *key = p + 1, *end;

		if (*p != '"' || !(end = skip_string(p)))
			return "bad member name";
		p = ws(end);
		if (*p != ':')
			return "missing ':'";
		p = ws(p + 1);
		note(f, n, key, (size_t)(end - 1 - key), p);
		p = skip_value(p, &why);
		if (!p)
			return why;
		p = ws(p);
		if (*p == '}')
			break;
		if (*p != ',')
			return *p ? "missing ','" : "truncated line";
		p = ws(p + 1);
	}
	return *ws(p + 1) ? "trailing characters" : NULL;
}

const char *jsonl_number(const char *v, double *out)
{
	char *end;

	if (!((*v >= '0' && *v <= '9') || *v == '-'))
		return "not a number";
	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || scalar_char(*end))
		return "not a number";
	return NULL;
}

static const char *push(uint64_t **ids, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		uint64_t *p = realloc(*ids, nc * sizeof(*p));

		if (!p)
			return "out of memory";
		*ids = p;
		*cap = nc;
	}
	(*ids)[(*n)++] = v;
	return NULL;
}

const char *jsonl_ids(const char *v, uint64_t **ids, size_t *n, size_t *cap)
{
	const char *p = ws(v + 1), *why;

	*n = 0;
	if (*v != '[')
		return "not an array";
	if (*p == ']')
		return NULL;
	for (;;) {
		char *end;
		unsigned long long x;

		if (*p < '0' || *p > '9')
			return "not a non-negative integer";
		errno = 0;
		x = strtoull(p, &end, 10);
		if (errno || scalar_char(*end))
			return "not a non-negative integer";
		if ((why = push(ids, n, cap, x)) != NULL)
			return why;
		p = ws(end);
		if (*p == ']')
			return NULL;
		if (*p != ',')
			return "bad array";
		p = ws(p + 1);
	}
}
