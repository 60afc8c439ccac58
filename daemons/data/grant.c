/* Data-plane write grants: a keyed mix of the region. */
#include "grant.h"

#include "hash.h"

uint64_t grant_token(uint64_t key, uint64_t segment_id, uint64_t offset,
		     uint64_t length)
{
	uint64_t h = mcu_splitmix64_mix(key ^ 0x6d63726570ULL);

	h = mcu_splitmix64_mix(h ^ segment_id);
	h = mcu_splitmix64_mix(h ^ offset);
	h = mcu_splitmix64_mix(h ^ length);
	return h ? h : 1;
}
