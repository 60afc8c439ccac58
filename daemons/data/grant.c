/* Data-plane write grants: a keyed mix of the region. */
#include "grant.h"

static uint64_t mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t grant_token(uint64_t key, uint64_t segment_id, uint64_t offset,
		     uint64_t length)
{
	uint64_t h = mix(key ^ 0x6d63726570ULL);

	h = mix(h ^ segment_id);
	h = mix(h ^ offset);
	h = mix(h ^ length);
	return h ? h : 1;
}
