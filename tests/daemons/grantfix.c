/* Grants for in-process data servers (see grantfix.h). */
#include "grantfix.h"

#include "clock.h"
#include "stamp.h"

const uint8_t gf_secret[GRANT_SECRET_BYTES] = "test-grant-key!";

void gf_arm(struct data_server *ds, int slot)
{
	int64_t now = net_now_ms();

	data_server_set_grant_key(ds, slot, gf_secret, GF_INCARNATION);
	data_server_set_master_clock(ds, (uint64_t)now, now);
}

struct data_grant gf_grant_until(uint8_t op, uint64_t seg, uint64_t off,
				 uint64_t len, uint64_t object,
				 uint64_t expires_ms)
{
	struct grant_key k;

	grant_key_init(&k, gf_secret, GF_INCARNATION);
	return grant_sign(&k, op, seg, off, len, object, expires_ms);
}

struct data_grant gf_grant(uint8_t op, uint64_t seg, uint64_t off, uint64_t len,
			   uint64_t object)
{
	return gf_grant_until(op, seg, off, len, object,
			      (uint64_t)net_now_ms() + 3600000);
}

void gf_stamp(uint8_t *region, uint64_t object, uint64_t payload_len)
{
	struct stamp_id id = {
	    .incarnation = GF_INCARNATION,
	    .object_id = object,
	    .key_hash = 0,
	    .length = payload_len,
	};

	stamp_write(region, &id, region + STAMP_BYTES);
}
