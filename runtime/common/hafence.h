/*
 * The etcd key fencing one mount of a worker's segment (docs/HA.md,
 * "Removed stays removed"). A leader that expires a worker writes it for
 * each segment the worker had mounted there, before the removes waiting on
 * that worker end; the worker reads it for its previous mount when it
 * mounts at the next leader, and then re-registers nothing of that mount.
 * A mount is named by the incarnation of the master it was made at and
 * the segment id that master gave it.
 */
#ifndef MCREPL_HAFENCE_H
#define MCREPL_HAFENCE_H

#include <inttypes.h>
#include <stdio.h>

static inline void ha_fence_key(char *out, size_t cap, const char *ha_key,
				uint64_t incarnation, uint64_t segment_id)
{
	snprintf(out, cap, "%s/fence/%016" PRIx64 "/%" PRIu64, ha_key,
		 incarnation, segment_id);
}

#endif
