/* Flag values: parsing, range checks and their descriptions (flagvalue.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flagvalue.h"

static int suffix_shift(const char *s, unsigned *shift)
{
	static const char units[] = "KMGT";
	const char *u;

	*shift = 0;
	if (!*s)
		return 0;
	u = strchr(units, s[0] & ~0x20);
	if (!u || !*u)
		return -1;
	*shift = 10u * (unsigned)(u - units + 1);
	s++;
	if ((s[0] == 'i' || s[0] == 'I') && (s[1] == 'B' || s[1] == 'b'))
		s += 2;
	else if (s[0] == 'B' || s[0] == 'b')
		s++;
	return *s ? -1 : 0;
}

/* Leading decimal digits of s into *out; *end after them. */
static int read_digits(const char *s, uint64_t *out, char **end)
{
	unsigned long long v;

	errno = 0;
	if (s[0] < '0' || s[0] > '9')
		return -1;
	v = strtoull(s, end, 10);
	if (errno)
		return -1;
	*out = v;
	return 0;
}

int flags_parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	unsigned shift;
	char *end;

	if (!s || read_digits(s, &v, &end) || suffix_shift(end, &shift) ||
	    (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = v << shift;
	return 0;
}

static uint64_t type_max(enum flag_type t)
{
	if (t == FLAG_U32)
		return UINT32_MAX;
	if (t == FLAG_I32)
		return INT32_MAX;
	return UINT64_MAX;
}

static uint64_t flag_max(const struct flag *fl)
{
	return fl->max ? (uint64_t)fl->max : type_max(fl->type);
}

/* An integer flag's value (a size for FLAG_SIZE), range checked. */
static int read_int(const struct flag *fl, const char *v, int64_t *neg,
		    uint64_t *pos)
{
	char *end;

	*neg = 0;
	if (fl->type == FLAG_SIZE) {
		if (flags_parse_size(v, pos))
			return -1;
	} else if (fl->type == FLAG_I32 && v[0] == '-') {
		if (read_digits(v + 1, pos, &end) || *end || *pos > INT32_MAX)
			return -1;
		*neg = -(int64_t)*pos;
		*pos = 0;
		return *neg < fl->min ? -1 : 0;
	} else if (read_digits(v, pos, &end) || *end) {
		return -1;
	}
	return (fl->min > 0 && *pos < (uint64_t)fl->min) || *pos > flag_max(fl)
		   ? -1
		   : 0;
}

static int set_number(const struct flag *fl, char *p, const char *v)
{
	int64_t neg;
	uint64_t u;

	if (read_int(fl, v, &neg, &u))
		return -1;
	if (fl->type == FLAG_U32)
		*(uint32_t *)(void *)p = (uint32_t)u;
	else if (fl->type == FLAG_I32)
		*(int32_t *)(void *)p = (int32_t)(neg ? neg : (int64_t)u);
	else
		*(uint64_t *)(void *)p = u;
	return 0;
}

static bool has_range(const struct flag *fl)
{
	return fl->dmin != 0 || fl->dmax != 0;
}

static int set_real(const struct flag *fl, char *p, const char *v)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (end == v || *end || errno || !isfinite(d))
		return -1;
	if (fl->type == FLAG_DOUBLE) {
		if (has_range(fl) && !(d >= fl->dmin && d <= fl->dmax))
			return -1;
		*(double *)(void *)p = d;
		return 0;
	}
	if (d < 0 || (fl->type == FLAG_RATIO && (d <= 0 || d > 1)))
		return -1;
	if (fl->type == FLAG_MS && llround(d * 1000) < fl->min)
		return -1;
	if (fl->type == FLAG_MS)
		*(uint64_t *)(void *)p = (uint64_t)llround(d * 1000);
	else
		*(double *)(void *)p = d;
	return 0;
}

bool flag_value_zero_allowed(const struct flag *fl)
{
	switch (fl->type) {
	case FLAG_U32:
	case FLAG_U64:
	case FLAG_SIZE:
	case FLAG_MS:
		return fl->min <= 0;
	case FLAG_I32:
		return fl->min <= 0 && fl->max >= 0;
	case FLAG_DOUBLE:
		return !has_range(fl) || (fl->dmin <= 0 && fl->dmax >= 0);
	default: /* a ratio is above 0; text, booleans, enums */
		return false;
	}
}

/* The index of v in choices ("a|b|c"), or -1. */
static int choice_index(const char *choices, const char *v)
{
	size_t n = strlen(v);
	int i = 0;

	for (const char *c = choices; c; c = strchr(c, '|'), i++) {
		c += *c == '|';
		if (strncmp(c, v, n) == 0 && (c[n] == '|' || !c[n]))
			return i;
	}
	return -1;
}

/* Copies of FLAG_STRP values that would not outlive the parse (--config
 * lines): kept, reachable, for the process's life. */
struct kept {
	struct kept *next;
	char s[];
};
static struct kept *kept;

static const char *keep(const char *v)
{
	size_t len = strlen(v) + 1;
	struct kept *k = malloc(sizeof(*k) + len);

	if (!k)
		return NULL;
	memcpy(k->s, v, len);
	k->next = kept;
	kept = k;
	return k->s;
}

static int set_text(const struct flag *fl, char *p, const char *v, bool lasting)
{
	size_t len = strlen(v);

	if ((fl->type == FLAG_STR && len >= fl->cap) ||
	    len < (uint64_t)fl->min ||
	    (fl->choices && choice_index(fl->choices, v) < 0) ||
	    (fl->valid && !fl->valid(v)))
		return -1;
	if (fl->type == FLAG_STR) {
		memcpy(p, v, len + 1);
		return 0;
	}
	if (!lasting && !(v = keep(v)))
		return -1;
	*(const char **)(void *)p = v;
	return 0;
}

int flag_value_set(void *base, const struct flag *fl, const char *v,
		   bool lasting)
{
	char *p = (char *)base + fl->off;
	int i;

	switch (fl->type) {
	case FLAG_STR:
	case FLAG_STRP:
		return set_text(fl, p, v, lasting);
	case FLAG_ENUM:
		i = choice_index(fl->choices, v);
		if (i < 0)
			return -1;
		*(int *)(void *)p = i;
		return 0;
	case FLAG_BOOL:
		if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") &&
		    strcmp(v, "0"))
			return -1;
		*(bool *)(void *)p = !strcmp(v, "true") || !strcmp(v, "1");
		return 0;
	case FLAG_MS:
	case FLAG_RATIO:
	case FLAG_DOUBLE:
		return set_real(fl, p, v);
	default:
		return set_number(fl, p, v);
	}
}

static void allowed_text(const struct flag *fl, char *buf, size_t cap)
{
	if (fl->rule)
		snprintf(buf, cap, "%s", fl->rule);
	else if (fl->choices)
		snprintf(buf, cap, "one of %s", fl->choices);
	else if (fl->type == FLAG_STR)
		snprintf(buf, cap, "%" PRId64 " to %zu characters", fl->min,
			 fl->cap - 1);
	else
		snprintf(buf, cap, "%" PRId64 " or more characters", fl->min);
}

static void allowed_double(const struct flag *fl, char *buf, size_t cap)
{
	if (!has_range(fl))
		snprintf(buf, cap, "a number");
	else if (isinf(fl->dmax))
		snprintf(buf, cap, "a number >= %g", fl->dmin);
	else
		snprintf(buf, cap, "a number in %g..%g", fl->dmin, fl->dmax);
}

void flag_value_allowed(const struct flag *fl, char *buf, size_t cap)
{
	uint64_t top = flag_max(fl);

	switch (fl->type) {
	case FLAG_STR:
	case FLAG_STRP:
	case FLAG_ENUM:
		allowed_text(fl, buf, cap);
		return;
	case FLAG_BOOL:
		snprintf(buf, cap, "true, false, 1 or 0");
		return;
	case FLAG_MS:
		snprintf(buf, cap, "seconds >= %g, fractions allowed",
			 (double)fl->min / 1000);
		return;
	case FLAG_RATIO:
		snprintf(buf, cap, "a ratio in (0, 1]");
		return;
	case FLAG_DOUBLE:
		allowed_double(fl, buf, cap);
		return;
	default:
		break;
	}
	snprintf(buf, cap, "%s %s %" PRId64,
		 fl->type == FLAG_SIZE ? "bytes (K, M, G, T suffixes)"
				       : "an integer",
		 top == UINT64_MAX ? ">=" : "in", fl->min);
	if (top != UINT64_MAX)
		snprintf(buf + strlen(buf), cap - strlen(buf), "..%" PRIu64,
			 top);
}
