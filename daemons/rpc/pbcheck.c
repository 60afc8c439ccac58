/* Wire-level checks protobuf-c cannot make (see pbcheck.h). */
#include <stdbool.h>
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

static const char *walk(const ProtobufCMessageDescriptor *d, const uint8_t *p,
			const uint8_t *end, int depth)
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
		    memchr(p, 0, (size_t)n))
			return f->name;
		if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
		    depth < PB_CHECK_MAX_DEPTH) {
			bad = walk(f->descriptor, p, p + n, depth + 1);
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
	return buf ? walk(d, buf, buf + len, 0) : NULL;
}
