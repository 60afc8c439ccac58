/*
 * Grants for tests that run a data server in-process (no master): one
 * fixed secret and incarnation, the master's clock taken as the local one,
 * and stamped regions to read (grant.h, stamp.h).
 */
#ifndef MCREPL_TEST_GRANTFIX_H
#define MCREPL_TEST_GRANTFIX_H

#include <stdint.h>

#include "data_server.h"
#include "grant.h"

#define GF_INCARNATION 0x1dea5eedULL
#define GF_OBJECT 77u /* the object id regions are stamped with */

extern const uint8_t gf_secret[GRANT_SECRET_BYTES];

/* ds checks slot's grants under gf_secret (as that segment's key), its
 * master clock the local one. */
void gf_arm(struct data_server *ds, int slot);

/* A grant for op on [off, +len) of seg naming object, valid for an hour. */
struct data_grant gf_grant(uint8_t op, uint64_t seg, uint64_t off, uint64_t len,
			   uint64_t object);

/* The same, expiring at expires_ms (local clock). */
struct data_grant gf_grant_until(uint8_t op, uint64_t seg, uint64_t off,
				 uint64_t len, uint64_t object,
				 uint64_t expires_ms);

/* Stamps region[0, STAMP_BYTES) for object whose payload_len bytes follow
 * (already in place); the region then serves granted READs of
 * STAMP_BYTES + payload_len bytes. */
void gf_stamp(uint8_t *region, uint64_t object, uint64_t payload_len);

#endif
