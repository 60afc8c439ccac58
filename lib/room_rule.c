/*
 * The room rule (mcrepl/engine.h, mcrepl_room_classify()): what a host may
 * evict to make room for a hot copy on a full cluster. A copy whose object
 * stays readable elsewhere costs no miss; an object's only copy costs one
 * at its next read, so it goes only when the relief the hot copy brings
 * outweighs the misses it is expected to cost (docs/POLICY.md).
 */
#include <stddef.h>

#include "mcrepl/config.h"
#include "mcrepl/engine.h"

uint64_t mcrepl_room_relief(uint64_t hot_reads, uint32_t readable)
{
	return hot_reads / ((uint64_t)readable + 1);
}

/* The knob, 0 for a caller whose config predates it (struct_size). */
static uint32_t miss_cost(const mcrepl_config *cfg)
{
	size_t end = offsetof(mcrepl_config, room_miss_cost) +
		     sizeof(cfg->room_miss_cost);

	return cfg->struct_size >= end ? cfg->room_miss_cost : 0;
}

mcrepl_room_class mcrepl_room_classify(const mcrepl_config *cfg,
				       const mcrepl_room_victim *v,
				       uint64_t relief)
{
	uint64_t cost, reads;

	if (!cfg || !v)
		return MCREPL_ROOM_KEEP;
	if (v->other_readable > 0)
		return v->dynamic ? MCREPL_ROOM_DYNAMIC : MCREPL_ROOM_DUPLICATE;
	cost = miss_cost(cfg);
	if (cost == 0)
		return MCREPL_ROOM_KEEP;
	/* every evicted object is taken to be read again at least once */
	reads = v->reads ? v->reads : 1;
	if (reads > UINT64_MAX / cost)
		return MCREPL_ROOM_KEEP;
	return cost * reads < relief ? MCREPL_ROOM_ONLY_COPY : MCREPL_ROOM_KEEP;
}
