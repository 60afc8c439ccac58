/* Strict JSON-lines field scanner (see jsonl.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

const char jsonl_oom[] = "out of memory";

static const char *ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

static int digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static int hex(char ch)
{
	return digit(ch) || (ch >= 'a' && ch <= 'f') ||
	       (ch >= 'A' && ch <= 'F');
}

/* A character that may not follow a number or a literal directly. */
static int word_char(char ch)
{
	return digit(ch) || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '-' || ch == '+' ||
	       ch == '.' || ch == '_';
}

/* Why the value at p is bad: the line ended, or something else. */
static const char *bad(const char *p, const char *why)
{
	return *ws(p) ? why : "truncated line";
}

/* p at '"'; returns the char after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char **why)
{
	for (p++; *p != '"'; p++) {
		if ((unsigned char)*p < 0x20) {
			*why = bad(p, "control character in a string");
			return NULL;
		}
		if (*p != '\\')
			continue;
		p++;
		if (*p == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!hex(p[i])) {
					*why = bad(p + i, "bad escape");
					return NULL;
				}
			p += 4;
		} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
			*why = bad(p, "bad escape");
			return NULL;
		}
	}
	return p + 1;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static const char *skip_number(const char *p, const char **why)
{
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (digit(*p))
		while (digit(*p))
			p++;
	else
		goto fail;
	if (*p == '.') {
		if (!digit(*++p))
			goto fail;
		while (digit(*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!digit(*p))
			goto fail;
		while (digit(*p))
			p++;
	}
	if (word_char(*p))
		goto fail;
	return p;
fail:
	*why = bad(p, "bad number");
	return NULL;
}

static const char *skip_literal(const char *p, const char *word,
				const char **why)
{
	size_t n = strlen(word);

	if (strncmp(p, word, n) || word_char(p[n])) {
		*why = bad(p, "bad value");
		return NULL;
	}
	return p + n;
}

static const char *skip_value(const char *p, int depth, const char **why);

/* Note a top-level member's value when it is wanted; -1 when given twice. */
static int note(struct jsonl_field *f, size_t n, const char *key, size_t len,
		const char *value)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(f[i].name) == len && !memcmp(f[i].name, key, len)) {
			if (f[i].value)
				return -1;
			f[i].value = value;
		}
	return 0;
}

/* p at a member name: past its ':' and white space; noted in f. */
static const char *member(const char *p, struct jsonl_field *f, size_t n,
			  const char **why)
{
	const char *key = p + 1, *end;

	if (*p != '"') {
		*why = bad(p, "bad member name");
		return NULL;
	}
	end = skip_string(p, why);
	if (!end)
		return NULL;
	p = ws(end);
	if (*p != ':') {
		*why = bad(p, "missing ':'");
		return NULL;
	}
	p = ws(p + 1);
	if (note(f, n, key, (size_t)(end - 1 - key), p)) {
		*why = "duplicate member";
		return NULL;
	}
	return p;
}

/* p at '{' or '['; members noted in f (top level only, n == 0 below). */
static const char *skip_container(const char *p, int depth,
				  struct jsonl_field *f, size_t n,
				  const char **why)
{
	char close = *p == '{' ? '}' : ']';

	p = ws(p + 1);
	if (*p == close)
		return p + 1;
	for (;;) {
		if (close == '}' && !(p = member(p, f, n, why)))
			return NULL;
		p = skip_value(p, depth + 1, why);
		if (!p)
			return NULL;
		p = ws(p);
		if (*p == close)
			return p + 1;
		if (*p != ',') {
			*why = bad(p, close == '}' ? "expected ',' or '}'"
						   : "expected ',' or ']'");
			return NULL;
		}
		p = ws(p + 1);
	}
}

/* p at a value (no leading white space); the char after it, or NULL. */
static const char *skip_value(const char *p, int depth, const char **why)
{
	if ((*p == '{' || *p == '[') && depth >= JSONL_MAX_DEPTH) {
		*why = "nested too deep";
		return NULL;
	}
	switch (*p) {
	case '{':
	case '[':
		return skip_container(p, depth, NULL, 0, why);
	case '"':
		return skip_string(p, why);
	case 't':
		return skip_literal(p, "true", why);
	case 'f':
		return skip_literal(p, "false", why);
	case 'n':
		return skip_literal(p, "null", why);
	default:
		if (*p == '-' || digit(*p))
			return skip_number(p, why);
		*why = bad(p, "bad value");
		return NULL;
	}
}

const char *jsonl_scan(const char *line, struct jsonl_field *f, size_t n)
{
	const char *p = ws(line), *why = NULL;

	for (size_t i = 0; i < n; i++)
		f[i].value = NULL;
	if (*p != '{')
		return "not a JSON object";
	p = skip_container(p, 0, f, n, &why);
	if (!p)
		return why;
	return *ws(p) ? "trailing characters" : NULL;
}

const char *jsonl_number(const char *v, double *out)
{
	const char *why = NULL, *end;
	char *e;

	if (*v != '-' && !digit(*v))
		return "not a number";
	end = skip_number(v, &why);
	if (!end)
		return why;
	*out = strtod(v, &e);
	if (e != end || !isfinite(*out))
		return "number out of range";
	return NULL;
}

static const char *push(uint64_t **ids, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		uint64_t *p = realloc(*ids, nc * sizeof(*p));

		if (!p)
			return jsonl_oom;
		*ids = p;
		*cap = nc;
	}
	(*ids)[(*n)++] = v;
	return NULL;
}

const char *jsonl_ids(const char *v, uint64_t **ids, size_t *n, size_t *cap)
{
	const char *p = v, *why;

	*n = 0;
	if (*p != '[')
		return "not an array";
	p = ws(p + 1);
	if (*p == ']')
		return NULL;
	for (;;) {
		uint64_t x = 0;

		if (!digit(*p) || (*p == '0' && digit(p[1])))
			return "not an integer in 0..2^64-1";
		for (; digit(*p); p++) {
			unsigned d = (unsigned)(*p - '0');

			if (x > (UINT64_MAX - d) / 10)
				return "not an integer in 0..2^64-1";
			x = x * 10 + d;
		}
		if (word_char(*p))
			return "not an integer in 0..2^64-1";
		if ((why = push(ids, n, cap, x)) != NULL)
			return why;
		p = ws(p);
		if (*p == ']')
			return NULL;
		if (*p != ',')
			return "bad array";
		p = ws(p + 1);
	}
}
