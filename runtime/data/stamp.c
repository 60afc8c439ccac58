/* Object stamps (see stamp.h). */
#include <string.h>

#include "bytes.h"
#include "crc32c.h"
#include "util/hash.h"
#include "stamp.h"

#define OFF_TAG 44u
#define OFF_CRC 60u
/* "MCSTAMP\0" and "MCSTAMPK" as little-endian words: the tag's domain and
 * the stamp key's label. */
#define STAMP_DOMAIN 0x00504d415453434dULL
#define STAMP_KEY_LABEL 0x4b504d415453434dULL

const char *stamp_result_text(enum stamp_result r)
{
	switch (r) {
#define STAMP_RESULT_TEXT(name, value, text)                                   \
	case name:                                                             \
		return text;
		STAMP_RESULT_MAP(STAMP_RESULT_TEXT)
#undef STAMP_RESULT_TEXT
	}
	return "unknown";
}

uint64_t stamp_key_hash(const char *tenant, size_t tenant_len, const char *key,
			size_t key_len)
{
	return mcu_hash64(
	    key, key_len,
	    mcu_hash64(tenant, tenant_len, 0x57a3b0c1d2e3f405ULL));
}

struct mcu_siphash_key stamp_key_derive(const uint8_t root[STAMP_ROOT_BYTES])
{
	const struct mcu_siphash_key r = mcu_siphash_key(root);
	const uint64_t w0[2] = {STAMP_KEY_LABEL, 0},
		       w1[2] = {STAMP_KEY_LABEL, 1};

	return (struct mcu_siphash_key){.k0 = mcu_siphash24_words(&r, w0, 2),
					.k1 = mcu_siphash24_words(&r, w1, 2)};
}

uint64_t stamp_tag(const struct mcu_siphash_key *k, const struct stamp_id *id)
{
	const uint64_t w[5] = {STAMP_DOMAIN, id->incarnation, id->object_id,
			       id->key_hash, id->length};
	uint64_t tag = mcu_siphash24_words(k, w, 5);

	return tag ? tag : 1;
}

void stamp_write(uint8_t out[STAMP_BYTES], const struct stamp_id *id,
		 const void *payload)
{
	memset(out, 0, STAMP_BYTES);
	put_be32(out, STAMP_MAGIC);
	out[4] = 0;
	out[5] = STAMP_VERSION;
	put_be64(out + 8, id->incarnation);
	put_be64(out + 16, id->object_id);
	put_be64(out + 24, id->key_hash);
	put_be64(out + 32, id->length);
	put_be32(out + 40, mcu_crc32c(0, payload, (size_t)id->length));
	put_be64(out + OFF_TAG, id->tag);
	put_be32(out + OFF_CRC, mcu_crc32c(0, out, OFF_CRC));
}

enum stamp_result stamp_read(const uint8_t *region, size_t n,
			     struct stamp_id *out, uint32_t *payload_crc)
{
	if (n < STAMP_BYTES)
		return STAMP_E_SHORT;
	if (get_be32(region) != STAMP_MAGIC ||
	    (region[4] << 8 | region[5]) != STAMP_VERSION)
		return STAMP_E_MAGIC;
	if (get_be32(region + OFF_CRC) != mcu_crc32c(0, region, OFF_CRC))
		return STAMP_E_CORRUPT;
	out->incarnation = get_be64(region + 8);
	out->object_id = get_be64(region + 16);
	out->key_hash = get_be64(region + 24);
	out->length = get_be64(region + 32);
	out->tag = get_be64(region + OFF_TAG);
	*payload_crc = get_be32(region + 40);
	return STAMP_OK;
}

enum stamp_result stamp_check(const uint8_t stamp[STAMP_BYTES],
			      const void *payload, uint64_t n,
			      const struct stamp_id *want)
{
	struct stamp_id got;
	uint32_t crc;
	enum stamp_result r = stamp_read(stamp, STAMP_BYTES, &got, &crc);

	if (r != STAMP_OK)
		return r;
	if (got.incarnation != want->incarnation)
		return STAMP_E_INCARNATION;
	if (got.object_id != want->object_id || got.key_hash != want->key_hash)
		return STAMP_E_OBJECT;
	if (got.length != want->length || n != want->length)
		return STAMP_E_LENGTH;
	if (want->tag && got.tag != want->tag)
		return STAMP_E_TAG;
	if (mcu_crc32c(0, payload, (size_t)n) != crc)
		return STAMP_E_PAYLOAD;
	return STAMP_OK;
}

enum stamp_result stamp_verify(const uint8_t *region, size_t n,
			       const struct stamp_id *want)
{
	if (n < STAMP_BYTES)
		return STAMP_E_SHORT;
	return stamp_check(region, region + STAMP_BYTES, n - STAMP_BYTES, want);
}
