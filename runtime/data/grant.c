/* Data-plane grants: a SipHash-2-4 MAC over the region (see grant.h). */
#include <string.h>

#include "grant.h"

/* "MCGRANT\0" as a little-endian word; the op goes in the low byte. */
#define GRANT_DOMAIN 0x00544e415247434dULL
/* "MCGKEY\0\0" as a little-endian word; the key's half in the low byte. */
#define GRANT_KDF_DOMAIN 0x000059454b47434dULL

void grant_key_init(struct grant_key *k,
		    const uint8_t secret[GRANT_SECRET_BYTES],
		    uint64_t incarnation)
{
	k->sip = mcu_siphash_key(secret);
	k->incarnation = incarnation;
	k->set = true;
}

void grant_key_derive(const uint8_t root[GRANT_SECRET_BYTES],
		      uint64_t incarnation, uint64_t segment_id,
		      uint8_t out[GRANT_SECRET_BYTES])
{
	const struct mcu_siphash_key sip = mcu_siphash_key(root);

	for (unsigned half = 0; half < 2; half++) {
		const uint64_t w[3] = {GRANT_KDF_DOMAIN << 8 | ('0' + half),
				       incarnation, segment_id};
		uint64_t v = mcu_siphash24_words(&sip, w, 3);

		for (unsigned i = 0; i < 8; i++)
			out[8 * half + i] = (uint8_t)(v >> (8 * i));
	}
}

void grant_segment_key(struct grant_key *k,
		       const uint8_t root[GRANT_SECRET_BYTES],
		       uint64_t incarnation, uint64_t segment_id)
{
	uint8_t key[GRANT_SECRET_BYTES];

	grant_key_derive(root, incarnation, segment_id, key);
	grant_key_init(k, key, incarnation);
}

uint64_t grant_tag(const struct grant_key *k, uint8_t op, uint64_t segment_id,
		   uint64_t offset, uint64_t length, uint64_t object_id,
		   uint64_t expires_ms)
{
	const uint64_t w[7] = {GRANT_DOMAIN << 8 | op,
			       k->incarnation,
			       segment_id,
			       offset,
			       length,
			       object_id,
			       expires_ms};
	uint64_t tag = mcu_siphash24_words(&k->sip, w, 7);

	return tag ? tag : 1;
}

struct data_grant grant_sign(const struct grant_key *k, uint8_t op,
			     uint64_t segment_id, uint64_t offset,
			     uint64_t length, uint64_t object_id,
			     uint64_t expires_ms)
{
	return (struct data_grant){
	    .object_id = object_id,
	    .expires_ms = expires_ms,
	    .tag = grant_tag(k, op, segment_id, offset, length, object_id,
			     expires_ms),
	};
}

enum data_status grant_check(const struct grant_key *k,
			     const struct data_req *r, int64_t master_now_ms)
{
	const struct data_grant *g = &r->grant;

	if (!k->set || g->tag == 0 ||
	    g->tag != grant_tag(k, r->op, r->segment_id, r->offset, r->length,
				g->object_id, g->expires_ms))
		return DATA_E_DENIED;
	if (master_now_ms < 0 || (uint64_t)master_now_ms >= g->expires_ms)
		return DATA_E_EXPIRED;
	return DATA_OK;
}
