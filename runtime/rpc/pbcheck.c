/* Wire-level checks protobuf-c cannot make (see pbcheck.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pbcheck.h"

/* Read a varint at *p (< end); false when truncated or over 10 bytes. */
static bool varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 70; shift += 7) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* Skip one field's value of wire type wt; false when it does not fit. */
static bool skip(const uint8_t **p, const uint8_t *end, unsigned wt)
{
	uint64_t v;

	switch (wt) {
	case 0:
		return varint(p, end, &v);
	case 1:
		v = 8;
		break;
	case 5:
		v = 4;
		break;
	default:
		return false;
	}
	if ((uint64_t)(end - *p) < v)
		return false;
	*p += v;
	return true;
}

/* The limit of string field f (0 = none) and its flag's name. */
static size_t limit_of(const ProtobufCFieldDescriptor *f,
		       const pb_string_limits *lim, const char **name)
{
	if (!lim)
		return 0;
	if (!strcmp(f->name, "key") || !strcmp(f->name, "keys")) {
		*name = "max_key_bytes";
		return lim->key;
	}
	if (!strcmp(f->name, "tenant")) {
		*name = "max_tenant_bytes";
		return lim->tenant;
	}
	*name = "max_string_bytes";
	return lim->other;
}

/* NULL when the string field f of n bytes at p passes, else the field's
 * name after writing why. */
static const char *check_string(const ProtobufCFieldDescriptor *f,
				const uint8_t *p, uint64_t n,
				const pb_string_limits *lim, char *why,
				size_t whylen)
{
	const char *flag = "";
	size_t max = limit_of(f, lim, &flag);

	if (memchr(p, 0, (size_t)n)) {
		snprintf(why, whylen, "%s holds a NUL byte", f->name);
		return f->name;
	}
	if (max && n > max) {
		snprintf(why, whylen, "%s is %llu bytes, above %s=%zu", f->name,
			 (unsigned long long)n, flag, max);
		return f->name;
	}
	return NULL;
}

static const char *walk(const ProtobufCMessageDescriptor *d, const uint8_t *p,
			const uint8_t *end, int depth,
			const pb_string_limits *lim, char *why, size_t whylen)
{
	while (p < end) {
		const ProtobufCFieldDescriptor *f;
		const char *bad;
		uint64_t tag, n;

		if (!varint(&p, end, &tag))
			return NULL;
		if ((tag & 7) != 2) {
			if (!skip(&p, end, (unsigned)(tag & 7)))
				return NULL;
			continue;
		}
		if (!varint(&p, end, &n) || (uint64_t)(end - p) < n)
			return NULL;
		f = protobuf_c_message_descriptor_get_field(
		    d, (unsigned)(tag >> 3));
		if (f && f->type == PROTOBUF_C_TYPE_STRING &&
		    check_string(f, p, n, lim, why, whylen))
			return f->name;
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    depth < PB_CHECK_MAX_DEPTH) {
			bad = walk(f->descriptor, p, p + n, depth + 1, lim, why,
				   whylen);
			if (bad)
				return bad;
		}
		p += n;
	}
	return NULL;
}

const char *pb_nul_string(const ProtobufCMessageDescriptor *d,
			  const uint8_t *buf, size_t len)
{
	char why[128];

	return buf ? walk(d, buf, buf + len, 0, NULL, why, sizeof(why)) : NULL;
}

bool pb_check_strings(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
		      size_t len, const pb_string_limits *lim, char *why,
		      size_t whylen)
{
	return !buf || !walk(d, buf, buf + len, 0, lim, why, whylen);
}
