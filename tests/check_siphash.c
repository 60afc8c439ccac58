/* lib/util/siphash: SipHash-2-4 against the reference test vectors (key
 * 00 01 .. 0f, message 00 01 .. n-1; the reference's vectors_sip64). */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "siphash.h"
#include "testutil.h"

Suite *make_siphash_suite(void);

static const uint64_t vectors[] = {
    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
    0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
    0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
    0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
    0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
    0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL,
};

static struct mcu_siphash_key ref_key(void)
{
	uint8_t k[MCU_SIPHASH_KEY_BYTES];

	for (size_t i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)i;
	return mcu_siphash_key(k);
}

START_TEST(test_reference_vectors)
{
	struct mcu_siphash_key key = ref_key();
	uint8_t msg[sizeof(vectors) / sizeof(vectors[0])];

	ck_assert_uint_eq(key.k0, 0x0706050403020100ULL);
	ck_assert_uint_eq(key.k1, 0x0f0e0d0c0b0a0908ULL);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	for (size_t n = 0; n < sizeof(msg); n++)
		ck_assert_msg(mcu_siphash24(&key, msg, n) == vectors[n],
			      "length %zu: %016llx", n,
			      (unsigned long long)mcu_siphash24(&key, msg, n));
}
END_TEST

/* The word form hashes exactly the bytes of its words, little-endian. */
START_TEST(test_words_equal_bytes)
{
	struct mcu_siphash_key key = ref_key();
	uint64_t w[7];
	uint8_t b[sizeof(w)];

	for (size_t i = 0; i < 7; i++)
		w[i] = 0x0123456789abcdefULL * (i + 1) ^ (i << 60);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(w[i / 8] >> (8 * (i % 8)));
	for (size_t n = 0; n <= 7; n++)
		ck_assert_uint_eq(mcu_siphash24_words(&key, w, n),
				  mcu_siphash24(&key, b, 8 * n));
}
END_TEST

/* Every key bit and every input bit changes the output. */
START_TEST(test_key_and_input_bits_matter)
{
	struct mcu_siphash_key key = ref_key(), k2;
	uint8_t msg[56] = {0}, m2[56];
	uint64_t base = mcu_siphash24(&key, msg, sizeof(msg));

	for (int b = 0; b < 128; b++) {
		k2 = key;
		if (b < 64)
			k2.k0 ^= 1ULL << b;
		else
			k2.k1 ^= 1ULL << (b - 64);
		ck_assert_uint_ne(mcu_siphash24(&k2, msg, sizeof(msg)), base);
	}
	for (size_t b = 0; b < sizeof(msg) * 8; b++) {
		memcpy(m2, msg, sizeof(m2));
		m2[b / 8] ^= (uint8_t)(1u << (b % 8));
		ck_assert_uint_ne(mcu_siphash24(&key, m2, sizeof(m2)), base);
	}
}
END_TEST

Suite *make_siphash_suite(void)
{
	Suite *s = suite_create("siphash");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_reference_vectors);
	tcase_add_test(tc, test_key_and_input_bits_matter);
	tcase_add_test(tc, test_words_equal_bytes);
	suite_add_tcase(s, tc);
	return s;
}
