/*
 * Data-plane grants (docs/SECURITY.md says why they are strong
 * enough). The master hands a client, for one op (READ or WRITE) on exactly
 * one region (segment, offset, length) holding one object, a grant: the
 * object id (its version), an expiry and a tag,
 *
 *     tag = SipHash-2-4(secret, "MCGRANT" || op, incarnation, segment_id,
 *                       offset, length, object_id, expires_ms)
 *
 * (seven 64-bit little-endian words; a tag of 0 becomes 1, 0 meaning "no
 * grant").
 *
 * Keys: the master draws a 128-bit root secret with getrandom at each
 * start (so a restarted master's grants differ and the old ones fail) and
 * never sends it. Each segment's grants are signed with that segment's own
 * key (grant_key_derive),
 *
 *     key = SipHash-2-4(root, "MCGKEY0", incarnation, segment_id)
 *        || SipHash-2-4(root, "MCGKEY1", incarnation, segment_id)
 *
 * (each half little-endian; domain words no grant's first word can be), and
 * MountSegmentResponse carries only the mounted segment's key, to that
 * worker, never to clients. A worker holds one key per segment it serves
 * and checks each request with the key of the segment the request names:
 * a worker's keys sign nothing another worker's segment accepts, and a
 * leaked worker key opens that worker's own segments only.
 *
 * A worker recomputes the tag and refuses any request whose tag differs
 * (DATA_E_DENIED), then any whose expiry has passed on its estimate of the
 * master's clock (DATA_E_EXPIRED), then a READ whose region's stamp does
 * not name the grant's object (DATA_E_DENIED again).
 *
 * No oracle: every grant that does not verify gets one answer, DENIED with
 * the one reason, whatever part of it is wrong (tag, op, region, object id,
 * expiry moved, another segment's key) and whether the object id is wrong
 * in the tag or only against the region's stamp: nobody learns from the
 * answer which object a region holds. Only a correctly tagged grant, which
 * the master issued, may be told EXPIRED.
 *
 * Clock domain: expires_ms is on the master's monotonic clock (ms), the
 * clock its leases and reservation deadlines use. A worker never compares
 * it with its own clock: at each MountSegment and Heartbeat the master
 * replies with its clock reading, and the worker keeps the offset
 *     master_now - local_now_at_send
 * i.e. it assumes the reply was read the moment the request left. The true
 * master time is at most that (the reading happened after the send), so
 * the estimate is early by at most one round trip and never late: a grant
 * is refused up to one RTT before its expiry, never after it. Drift
 * between two monotonic clocks (ppm) is re-based at every heartbeat.
 *
 * Thread-safety: pure functions over their arguments.
 */
#ifndef MCREPL_DAEMON_GRANT_H
#define MCREPL_DAEMON_GRANT_H

#include <stdbool.h>
#include <stdint.h>

#include "data_proto.h"
#include "util/siphash.h"

#define GRANT_SECRET_BYTES MCU_SIPHASH_KEY_BYTES

/* The signing (master) or checking (worker) side of one segment: its key
 * and the master incarnation it belongs to. */
struct grant_key {
	struct mcu_siphash_key sip;
	uint64_t incarnation;
	bool set; /* false: no secret yet (refuse everything) */
};

void grant_key_init(struct grant_key *k,
		    const uint8_t secret[GRANT_SECRET_BYTES],
		    uint64_t incarnation);

/* Segment segment_id's key (see above) under the master's root secret
 * and incarnation, into out. */
void grant_key_derive(const uint8_t root[GRANT_SECRET_BYTES],
		      uint64_t incarnation, uint64_t segment_id,
		      uint8_t out[GRANT_SECRET_BYTES]);

/* grant_key_init with segment_id's derived key (the master's side). */
void grant_segment_key(struct grant_key *k,
		       const uint8_t root[GRANT_SECRET_BYTES],
		       uint64_t incarnation, uint64_t segment_id);

/* The tag of a grant for op on [offset, +length) of segment_id. */
uint64_t grant_tag(const struct grant_key *k, uint8_t op, uint64_t segment_id,
		   uint64_t offset, uint64_t length, uint64_t object_id,
		   uint64_t expires_ms);

/* A grant for op on that region, naming object_id, until expires_ms. */
struct data_grant grant_sign(const struct grant_key *k, uint8_t op,
			     uint64_t segment_id, uint64_t offset,
			     uint64_t length, uint64_t object_id,
			     uint64_t expires_ms);

/* DATA_OK, DATA_E_DENIED (no key, forged, or for another op, region or
 * object) or DATA_E_EXPIRED (master_now_ms >= its expiry). */
enum data_status grant_check(const struct grant_key *k,
			     const struct data_req *r, int64_t master_now_ms);

#endif
