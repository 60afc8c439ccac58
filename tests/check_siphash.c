/* util/siphash: SipHash-2-4 against the paper's appendix A vector and,
 * for every length 0..63, against OpenSSL's EVP_MAC "SIPHASH" (libcrypto:
 * an implementation independent of ours) under two keys. */
#include <check.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdint.h>
#include <string.h>

#include "util/hash.h"
#include "util/siphash.h"
#include "testutil.h"

Suite *make_siphash_suite(void);

#define ORACLE_MAX_LEN 64

/* The paper's key: bytes 00 01 .. 0f. */
static void paper_key_bytes(uint8_t k[MCU_SIPHASH_KEY_BYTES])
{
	for (size_t i = 0; i < MCU_SIPHASH_KEY_BYTES; i++)
		k[i] = (uint8_t)i;
}

static struct mcu_siphash_key paper_key(void)
{
	uint8_t k[MCU_SIPHASH_KEY_BYTES];

	paper_key_bytes(k);
	return mcu_siphash_key(k);
}

/* SipHash-2-4 of msg[0, n) under the 16-byte key k, by OpenSSL: its
 * 8-byte output is the value little-endian. */
static uint64_t openssl_siphash24(const uint8_t k[MCU_SIPHASH_KEY_BYTES],
				  const uint8_t *msg, size_t n)
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	size_t size = 8, out_len = 0;
	unsigned int c_rounds = 2, d_rounds = 4;
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_size_t(OSSL_MAC_PARAM_SIZE, &size),
	    OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_C_ROUNDS, &c_rounds),
	    OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_D_ROUNDS, &d_rounds),
	    OSSL_PARAM_construct_end()};
	uint8_t out[8];
	uint64_t v = 0;
	int ok;

	ck_assert_ptr_nonnull(ctx);
	ok = EVP_MAC_init(ctx, k, MCU_SIPHASH_KEY_BYTES, params) &&
	     EVP_MAC_update(ctx, msg, n) &&
	     EVP_MAC_final(ctx, out, &out_len, sizeof(out));
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	ck_assert_msg(ok && out_len == 8, "OpenSSL SIPHASH failed");
	for (size_t i = 0; i < 8; i++)
		v |= (uint64_t)out[i] << (8 * i);
	return v;
}

/* Appendix A: key 00..0f, the 15-byte message 00..0e. */
START_TEST(test_paper_vector)
{
	struct mcu_siphash_key key = paper_key();
	uint8_t msg[15];

	ck_assert_uint_eq(key.k0, 0x0706050403020100ULL);
	ck_assert_uint_eq(key.k1, 0x0f0e0d0c0b0a0908ULL);
	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	ck_assert_uint_eq(mcu_siphash24(&key, msg, sizeof(msg)),
			  0xa129ca6149be45e5ULL);
}
END_TEST

/* Loop test over the length n: the message 00 01 .. n-1 under the paper's
 * key, and n bytes drawn from splitmix64 under a key drawn likewise. */
START_TEST(test_openssl_oracle)
{
	const size_t n = (size_t)_i;
	uint8_t k[MCU_SIPHASH_KEY_BYTES], msg[ORACLE_MAX_LEN];
	uint64_t seed = 0x5eed0000ULL + n;
	struct mcu_siphash_key key;

	paper_key_bytes(k);
	for (size_t i = 0; i < n; i++)
		msg[i] = (uint8_t)i;
	key = mcu_siphash_key(k);
	ck_assert_msg(mcu_siphash24(&key, msg, n) ==
			  openssl_siphash24(k, msg, n),
		      "paper key, length %zu", n);

	for (size_t i = 0; i < sizeof(k); i++)
		k[i] = (uint8_t)mcu_splitmix64(&seed);
	for (size_t i = 0; i < n; i++)
		msg[i] = (uint8_t)mcu_splitmix64(&seed);
	key = mcu_siphash_key(k);
	ck_assert_msg(mcu_siphash24(&key, msg, n) ==
			  openssl_siphash24(k, msg, n),
		      "drawn key, length %zu", n);
}
END_TEST

/* The word form hashes exactly the bytes of its words, little-endian. */
START_TEST(test_words_equal_bytes)
{
	struct mcu_siphash_key key = paper_key();
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
	struct mcu_siphash_key key = paper_key(), k2;
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

	tcase_add_test(tc, test_paper_vector);
	tcase_add_loop_test(tc, test_openssl_oracle, 0, ORACLE_MAX_LEN);
	tcase_add_test(tc, test_key_and_input_bits_matter);
	tcase_add_test(tc, test_words_equal_bytes);
	suite_add_tcase(s, tc);
	return s;
}
