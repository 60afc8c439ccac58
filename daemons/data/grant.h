/*
 * Data-plane write grants. The master hands a writer a token for exactly one
 * region (segment, offset, length) it allocated; the worker owning the
 * segment recomputes the token with the grant key it received at
 * MountSegment and refuses a write whose token does not match. This is an
 * authorisation check against confused or stale writers, not cryptography:
 * the key travels in clear on the control connection.
 */
#ifndef MCREPL_DAEMON_GRANT_H
#define MCREPL_DAEMON_GRANT_H

#include <stdint.h>

uint64_t grant_token(uint64_t key, uint64_t segment_id, uint64_t offset,
		     uint64_t length);

#endif
