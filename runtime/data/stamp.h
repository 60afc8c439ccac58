/*
 * Object stamps: every replica region on a worker starts with a 64-byte
 * stamp written with the object's bytes, so a reader can prove that what
 * it read is the object it asked for, whole, without trusting the worker's
 * CPU (one-sided RDMA) or the freshness of its descriptor (a master restart
 * or a region reused after its read lease). Pure encode/verify over byte
 * buffers, no I/O.
 *
 * Any writer that reaches a region (a grant's holder, an RDMA peer, the
 * worker itself) could compute every public field of another object's
 * stamp: the incarnation comes in its own PutStart reply, object ids are
 * one counter, key_hash is a public hash. So the stamp also carries a tag
 * only the master can compute,
 *
 *     tag = SipHash-2-4(stamp_key, "MCSTAMP\0", incarnation, object_id,
 *                       key_hash, length)
 *
 * (five 64-bit little-endian words; a tag of 0 becomes 1, 0 meaning "no
 * tag"). stamp_key is derived from the master's root secret apart from
 * the grant keys (stamp_key_derive) and never leaves the master: the
 * writer gets the tag of its own put in PutStartResponse and puts it in
 * the stamp; a reader gets it in each replica descriptor and compares.
 *
 * A region is STAMP_BYTES of stamp followed by `length` payload bytes. The
 * stamp, all integers big-endian:
 *
 *     off  size  field
 *       0     4  magic        0x4D43534F ("MCSO")
 *       4     2  version      2 (1: before tags, refused as no stamp)
 *       6     2  reserved     0
 *       8     8  incarnation  the master incarnation that placed the object
 *      16     8  object_id    the master's id of the object (its version)
 *      24     8  key_hash     mcu_hash of tenant and key (stamp_key_hash)
 *      32     8  length       payload bytes
 *      40     4  payload_crc  CRC-32C of the payload
 *      44     8  tag          the master's tag of the four fields above
 *      52     8  reserved     0
 *      60     4  stamp_crc    CRC-32C of bytes [0, 60)
 *
 * A copy moves the whole region, stamp included: every replica of an
 * object carries the same stamp. A reader compares the stamp with the
 * identity and tag its descriptor names and the payload with payload_crc; any
 * difference is STAMP_E_* and the reader asks the master again (another
 * replica, or a fresh descriptor).
 *
 * Thread-safety: every function is reentrant; no state is kept.
 */
#ifndef MCREPL_DAEMON_STAMP_H
#define MCREPL_DAEMON_STAMP_H

#include <stddef.h>
#include <stdint.h>

#include "util/siphash.h"

#define STAMP_MAGIC 0x4D43534Fu
/* 3 (libmcrepl 0.6.5): key_hash is XXH3 (it was a hash of wyhash's
 * shape). A region an older writer stamped fails the version check and
 * reads as not there, so after an upgrade the objects written before it are
 * misses, never wrong bytes (docs/DAEMONS.md, "Upgrades"). */
#define STAMP_VERSION 3u
#define STAMP_BYTES 64u
#define STAMP_ROOT_BYTES MCU_SIPHASH_KEY_BYTES

/* Who an object is: what a descriptor names and a stamp must match. tag:
 * the master's (stamp_tag); a checker that cannot know it (a worker,
 * which never holds the stamp key) passes 0 and the stamp's tag is not
 * judged. A reader always passes its descriptor's. */
struct stamp_id {
	uint64_t incarnation;
	uint64_t object_id;
	uint64_t key_hash;
	uint64_t length;
	uint64_t tag;
};

/* X(name, value, text): verification results. */
#define STAMP_RESULT_MAP(X)                                                    \
	X(STAMP_OK, 0, "ok")                                                   \
	X(STAMP_E_SHORT, 1, "region shorter than its stamp")                   \
	X(STAMP_E_MAGIC, 2, "no stamp (region never written or overwritten)")  \
	X(STAMP_E_CORRUPT, 3, "stamp checksum mismatch")                       \
	X(STAMP_E_INCARNATION, 4, "written under another master incarnation")  \
	X(STAMP_E_OBJECT, 5, "holds another object (stale descriptor)")        \
	X(STAMP_E_LENGTH, 6, "length differs from the descriptor's")           \
	X(STAMP_E_PAYLOAD, 7, "payload checksum mismatch (torn or reused)")    \
	X(STAMP_E_TAG, 8, "stamp not issued by the master (tag mismatch)")

enum stamp_result {
#define STAMP_RESULT_ENUM(name, value, text) name = value,
	STAMP_RESULT_MAP(STAMP_RESULT_ENUM)
#undef STAMP_RESULT_ENUM
};

/* Static text for a result ("unknown" for others). */
const char *stamp_result_text(enum stamp_result r);

/* The key_hash of a tenant and key (lengths given: keys may hold any
 * byte but NUL is refused upstream). */
uint64_t stamp_key_hash(const char *tenant, size_t tenant_len, const char *key,
			size_t key_len);

/* The stamp key of a master's root secret (its grant secret): a SipHash
 * of the root under a label of its own, so it shares nothing with the
 * grant tags made with the root. */
struct mcu_siphash_key stamp_key_derive(const uint8_t root[STAMP_ROOT_BYTES]);

/* The tag of id (its incarnation, object_id, key_hash and length; id->tag
 * is ignored) under the stamp key; never 0. */
uint64_t stamp_tag(const struct mcu_siphash_key *k, const struct stamp_id *id);

/* Write the stamp of id (id->tag included) (whose payload is `payload`, id->length bytes)
 * into out[0, STAMP_BYTES). */
void stamp_write(uint8_t out[STAMP_BYTES], const struct stamp_id *id,
		 const void *payload);

/* Check region[0, n): its stamp must name want (incarnation, object_id,
 * key_hash, length, and tag when want->tag is not 0) and n must be STAMP_BYTES + want->length with the
 * payload matching its CRC. */
enum stamp_result stamp_verify(const uint8_t *region, size_t n,
			       const struct stamp_id *want);

/* The same check for a stamp and a payload read apart (stamp[0,
 * STAMP_BYTES) and payload[0, n)). */
enum stamp_result stamp_check(const uint8_t stamp[STAMP_BYTES],
			      const void *payload, uint64_t n,
			      const struct stamp_id *want);

/* Decode a stamp whose own checksum holds, without judging it. */
enum stamp_result stamp_read(const uint8_t *region, size_t n,
			     struct stamp_id *out, uint32_t *payload_crc);

#endif
