/* CRC-32C (known vectors, hardware == tables, streaming) and object stamps:
 * golden bytes, every refusal with its reason, and a stale descriptor
 * (lifecycle item 1: a region reused by another object is never served). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "crc32c.h"
#include "stamp.h"

Suite *make_stamp_suite(void);

START_TEST(test_crc32c_known_vectors)
{
	static const uint8_t zeros[32],
	    ones[32] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	/* RFC 3720 appendix B.4 and the catalogue check value. */
	ck_assert_uint_eq(mcu_crc32c(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(mcu_crc32c(0, zeros, 32), 0x8A9136AAu);
	ck_assert_uint_eq(mcu_crc32c(0, ones, 32), 0x62A8AB43u);
	ck_assert_uint_eq(mcu_crc32c_sw(0, zeros, 32), 0x8A9136AAu);
	ck_assert_uint_eq(mcu_crc32c(0, "", 0), 0);
}
END_TEST

/* Lengths through every path of the hardware code: the three-lane 8 KiB
 * and 256-byte blocks, 8-byte words and single bytes, misaligned starts. */
START_TEST(test_crc32c_paths_agree_at_every_split)
{
	static uint8_t buf[2 * 3 * 8192 + 1031];
	uint64_t x = 7;

	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		buf[i] = (uint8_t)(x >> 56);
	}
	for (size_t off = 0; off < 9; off++) {
		size_t n = sizeof(buf) - off;
		uint32_t whole = mcu_crc32c_sw(0, buf + off, n);

		ck_assert_uint_eq(mcu_crc32c(0, buf + off, n), whole);
		for (size_t cut = 0; cut <= n; cut += 997)
			ck_assert_uint_eq(
			    mcu_crc32c(mcu_crc32c(0, buf + off, cut),
				       buf + off + cut, n - cut),
			    whole);
	}
}
END_TEST

static const struct stamp_id ID = {
    0x1122334455667788ULL, 42, 0xa5a5a5a5a5a5a5a5ULL, 5, 0x0f1e2d3c4b5a6978ULL};

static uint8_t *region_of(const struct stamp_id *id, const char *payload)
{
	uint8_t *r = malloc(STAMP_BYTES + id->length);

	ck_assert_ptr_nonnull(r);
	memcpy(r + STAMP_BYTES, payload, (size_t)id->length);
	stamp_write(r, id, r + STAMP_BYTES);
	return r;
}

START_TEST(test_stamp_golden_bytes)
{
	uint8_t *r = region_of(&ID, "hello");

	ck_assert_uint_eq(get_be32(r), STAMP_MAGIC);
	ck_assert_uint_eq(r[4] << 8 | r[5], 3);
	ck_assert_uint_eq(r[6] | r[7], 0);
	ck_assert_uint_eq(get_be64(r + 8), 0x1122334455667788ULL);
	ck_assert_uint_eq(get_be64(r + 16), 42);
	ck_assert_uint_eq(get_be64(r + 24), 0xa5a5a5a5a5a5a5a5ULL);
	ck_assert_uint_eq(get_be64(r + 32), 5);
	ck_assert_uint_eq(get_be32(r + 40), mcu_crc32c(0, "hello", 5));
	ck_assert_uint_eq(get_be64(r + 44), 0x0f1e2d3c4b5a6978ULL);
	for (int i = 52; i < 60; i++)
		ck_assert_uint_eq(r[i], 0);
	ck_assert_uint_eq(get_be32(r + 60), mcu_crc32c(0, r, 60));
	ck_assert_int_eq(stamp_verify(r, STAMP_BYTES + 5, &ID), STAMP_OK);
	free(r);
}
END_TEST

/* One row per refusal: what is changed, and the result it must give. */
START_TEST(test_stamp_refusals)
{
	struct stamp_id want = ID;
	uint8_t *r = region_of(&ID, "hello");
	size_t n = STAMP_BYTES + 5;
	enum stamp_result expect = STAMP_OK;

	switch (_i) {
	case 0:
		n = STAMP_BYTES - 1, expect = STAMP_E_SHORT;
		break;
	case 1:
		memset(r, 0, STAMP_BYTES), expect = STAMP_E_MAGIC;
		break;
	case 2:
		r[17] ^= 1, expect = STAMP_E_CORRUPT;
		break;
	case 3:
		want.incarnation++, expect = STAMP_E_INCARNATION;
		break;
	case 4:
		want.object_id++, expect = STAMP_E_OBJECT;
		break;
	case 5:
		want.key_hash ^= 2, expect = STAMP_E_OBJECT;
		break;
	case 6:
		want.length = 4, n--, expect = STAMP_E_LENGTH;
		break;
	case 7:
		n--, expect = STAMP_E_LENGTH;
		break;
	case 8: /* a tag the master did not give for this object */
		want.tag ^= 1, expect = STAMP_E_TAG;
		break;
	case 9: /* a stamp without a tag */
		put_be64(r + 44, 0);
		put_be32(r + 60, mcu_crc32c(0, r, 60));
		expect = STAMP_E_TAG;
		break;
	case 10: /* the format before tags */
		r[5] = 1;
		put_be32(r + 60, mcu_crc32c(0, r, 60));
		expect = STAMP_E_MAGIC;
		break;
	case 11: /* a worker, which cannot know the tag, does not judge it */
		want.tag = 0;
		put_be64(r + 44, 12345);
		put_be32(r + 60, mcu_crc32c(0, r, 60));
		expect = STAMP_OK;
		break;
	case 12: /* the tag is covered by the stamp's own checksum */
		r[47] ^= 0x10, expect = STAMP_E_CORRUPT;
		break;
	default:
		r[STAMP_BYTES + 2] ^= 0x40, expect = STAMP_E_PAYLOAD;
		break;
	}
	ck_assert_str_eq(stamp_result_text(stamp_verify(r, n, &want)),
			 stamp_result_text(expect));
	free(r);
}
END_TEST

/* A reader holding object A's descriptor after A's region was reused by B
 * (a master restart hands out the same offsets) sees B's stamp, or B's
 * stamp over a half-written payload: never A's bytes, never B's as A's. */
START_TEST(test_lifecycle1_reused_region_is_refused)
{
	struct stamp_id a = ID, b = ID;
	uint8_t *r;

	b.incarnation++;
	b.object_id = 1;
	r = region_of(&b, "world");
	ck_assert_int_eq(stamp_verify(r, STAMP_BYTES + 5, &a),
			 STAMP_E_INCARNATION);
	/* A's stamp still there, B's payload half written. */
	stamp_write(r, &a, "hello");
	memcpy(r + STAMP_BYTES, "wor", 3);
	ck_assert_int_eq(stamp_verify(r, STAMP_BYTES + 5, &a), STAMP_E_PAYLOAD);
	free(r);
}
END_TEST

START_TEST(test_stamp_key_hash_separates_tenant_and_key)
{
	ck_assert_uint_ne(stamp_key_hash("ab", 2, "c", 1),
			  stamp_key_hash("a", 1, "bc", 2));
	ck_assert_uint_eq(stamp_key_hash("t", 1, "k", 1),
			  stamp_key_hash("t", 1, "k", 1));
}
END_TEST

/* The tag is SipHash-2-4 under the stamp key of "MCSTAMP\0" and the four
 * identity words, little-endian (checked against the byte form); the
 * stamp key is derived from the root, not the root itself. */
START_TEST(test_stamp_tag_encoding)
{
	uint8_t root[STAMP_ROOT_BYTES], msg[40] = "MCSTAMP";
	const uint64_t w[4] = {ID.incarnation, ID.object_id, ID.key_hash,
			       ID.length};
	struct mcu_siphash_key k, raw;

	for (int i = 0; i < STAMP_ROOT_BYTES; i++)
		root[i] = (uint8_t)i;
	k = stamp_key_derive(root);
	raw = mcu_siphash_key(root);
	ck_assert(k.k0 != raw.k0 || k.k1 != raw.k1);
	ck_assert_uint_ne(k.k0, k.k1);
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			msg[8 + 8 * i + b] = (uint8_t)(w[i] >> (8 * b));
	ck_assert_uint_eq(stamp_tag(&k, &ID), mcu_siphash24(&k, msg, 40));
	/* the key's derivation is the byte form of ("MCSTAMPK", i) too */
	memcpy(msg, "MCSTAMPK", 8);
	memset(msg + 8, 0, 8);
	ck_assert_uint_eq(k.k0, mcu_siphash24(&raw, msg, 16));
	msg[8] = 1;
	ck_assert_uint_eq(k.k1, mcu_siphash24(&raw, msg, 16));
}
END_TEST

/* Each identity field and the key change the tag; the tag ignores the
 * tag field it is computed for; it round-trips through the stamp. */
START_TEST(test_stamp_tag_binds_every_field)
{
	uint8_t root[STAMP_ROOT_BYTES] = "stamp-root-key!";
	struct mcu_siphash_key k = stamp_key_derive(root), k2;
	struct stamp_id id = ID, got;
	const uint64_t t = stamp_tag(&k, &ID);
	uint8_t *r;
	uint32_t crc;

	ck_assert_uint_ne(t, 0);
	id.tag = 0;
	ck_assert_uint_eq(stamp_tag(&k, &id), t);
	id = ID, id.incarnation++;
	ck_assert_uint_ne(stamp_tag(&k, &id), t);
	id = ID, id.object_id++;
	ck_assert_uint_ne(stamp_tag(&k, &id), t);
	id = ID, id.key_hash ^= 1;
	ck_assert_uint_ne(stamp_tag(&k, &id), t);
	id = ID, id.length++;
	ck_assert_uint_ne(stamp_tag(&k, &id), t);
	root[0] ^= 1;
	k2 = stamp_key_derive(root);
	ck_assert_uint_ne(stamp_tag(&k2, &ID), t);
	id = ID, id.tag = t;
	r = malloc(STAMP_BYTES + 5);
	ck_assert_ptr_nonnull(r);
	memcpy(r + STAMP_BYTES, "hello", 5);
	stamp_write(r, &id, r + STAMP_BYTES);
	ck_assert_int_eq(stamp_read(r, STAMP_BYTES, &got, &crc), STAMP_OK);
	ck_assert_uint_eq(got.tag, t);
	ck_assert_int_eq(stamp_verify(r, STAMP_BYTES + 5, &id), STAMP_OK);
	ck_assert_str_eq(stamp_result_text(STAMP_E_TAG),
			 "stamp not issued by the master (tag mismatch)");
	free(r);
}
END_TEST

Suite *make_stamp_suite(void)
{
	Suite *s = suite_create("stamp");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_crc32c_known_vectors);
	tcase_add_test(tc, test_crc32c_paths_agree_at_every_split);
	tcase_add_test(tc, test_stamp_golden_bytes);
	tcase_add_loop_test(tc, test_stamp_refusals, 0, 14);
	tcase_add_test(tc, test_lifecycle1_reused_region_is_refused);
	tcase_add_test(tc, test_stamp_key_hash_separates_tenant_and_key);
	tcase_add_test(tc, test_stamp_tag_encoding);
	tcase_add_test(tc, test_stamp_tag_binds_every_field);
	suite_add_tcase(s, tc);
	return s;
}
