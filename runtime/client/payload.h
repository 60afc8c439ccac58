/*
 * Payload digests (docs/SECURITY.md "Payload digests"): the SHA-256 of an
 * object's bytes, which a writer sends with its PutEnd and the master
 * gives back to readers over their own authenticated connection, so a
 * reader can tell the bytes a worker served from the bytes written. A
 * worker never learns anything that would let it make other bytes match.
 *
 * Thread-safety: no state; callable from any thread.
 */
#ifndef MCREPL_DAEMON_PAYLOAD_H
#define MCREPL_DAEMON_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PAYLOAD_DIGEST_BYTES 32

/* SHA-256 of buf[0..len) into out. 0, or -1 when libcrypto fails. */
int payload_digest(const void *buf, uint64_t len,
		   uint8_t out[PAYLOAD_DIGEST_BYTES]);

/* Whether buf[0..len) hashes to want (PAYLOAD_DIGEST_BYTES), compared in
 * constant time; false when libcrypto fails. */
bool payload_digest_matches(const void *buf, uint64_t len, const uint8_t *want);

#endif
