/* Object bytes of the history test (payload.h). */
#include <string.h>

#include "payload.h"

#define MAGIC 0x54534948u /* "HIST" */
#define HDR 24

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

size_t payload_len(uint64_t v)
{
	size_t span = (PAYLOAD_MAX - PAYLOAD_MIN) / 8;

	return PAYLOAD_MIN + 8 * (size_t)(mix(v) % (span + 1));
}

static void put32(uint8_t *p, uint32_t x)
{
	memcpy(p, &x, 4);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t x;

	memcpy(&x, p, 4);
	return x;
}

/* The word at byte offset off (>= HDR, a multiple of 8) of value v. */
static uint64_t word(uint64_t v, size_t off)
{
	return mix(v ^ ((uint64_t)off << 40) ^ 0xa5a5a5a5ULL);
}

void payload_fill(uint8_t *buf, uint32_t key, uint64_t v)
{
	size_t len = payload_len(v);

	put32(buf, MAGIC);
	put32(buf + 4, key);
	memcpy(buf + 8, &v, 8);
	put32(buf + 16, (uint32_t)len);
	put32(buf + 20, 0);
	for (size_t off = HDR; off < len; off += 8) {
		uint64_t w = word(v, off);

		memcpy(buf + off, &w, 8);
	}
}

enum hop_read payload_judge(const uint8_t *buf, size_t len, uint32_t key,
			    uint64_t *v)
{
	*v = 0;
	if (len < HDR || get32(buf) != MAGIC)
		return HREAD_CORRUPT;
	memcpy(v, buf + 8, 8);
	if (len != payload_len(*v) || get32(buf + 16) != len ||
	    get32(buf + 20) != 0)
		return HREAD_CORRUPT;
	for (size_t off = HDR; off < len; off += 8) {
		uint64_t w = word(*v, off);

		if (memcmp(buf + off, &w, 8) != 0)
			return HREAD_CORRUPT;
	}
	return get32(buf + 4) == key ? HREAD_VALUE : HREAD_PHANTOM;
}
