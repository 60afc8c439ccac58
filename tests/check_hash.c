/* util/hash.h's mix and hash functions pinned to published or
 * independently computed outputs: placement tie-breaks, the simulator's
 * figures and many tests depend on these exact values. */
#include <check.h>
#include <stdint.h>

#include "util/hash.h"
#include "testutil.h"

Suite *make_hash_suite(void);

/* splitmix64 from seed 1234567: the outputs published with the generator's
 * description (e.g. Rosetta Code's "Pseudo-random numbers/Splitmix64"),
 * checked with a Python transcription of the specification. */
START_TEST(test_splitmix64_published_sequence)
{
	static const uint64_t want[] = {
	    6457827717110365317ULL,  3203168211198807973ULL,
	    9817491932198370423ULL,  4593380528125082431ULL,
	    16408922859458223821ULL,
	};
	uint64_t state = 1234567;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_uint_eq(mcu_splitmix64(&state), want[i]);
	ck_assert_uint_eq(state, 1234567 + 5 * MCU_SPLITMIX64_GAMMA);
}
END_TEST

/* From state 0 the first output is 0xe220a8397b1dcdaf. */
START_TEST(test_splitmix64_from_zero)
{
	uint64_t state = 0;

	ck_assert_uint_eq(mcu_splitmix64(&state), 0xe220a8397b1dcdafULL);
	ck_assert_uint_eq(state, MCU_SPLITMIX64_GAMMA);
}
END_TEST

/* x, fmix64(x), splitmix64's mix of x (computed in Python from the
 * specifications). */
static const struct {
	uint64_t x, fmix, smix;
} mix_rows[] = {
    {0, 0, 0},
    {1, 0xc433d8fc0cf0792cULL, 0x5692161d100b05e5ULL},
    {2, 0x5a795c205565b8e7ULL, 0xdbd238973a2b148aULL},
    {0x0123456789abcdefULL, 0xc98c31feae21c9eaULL, 0xb2c058e4ebb5112cULL},
    {0x8000000000000000ULL, 0x8f4e7210af2a9993ULL, 0x25c26ea579cea98aULL},
    {UINT64_MAX, 0x6508aa0b4b5cb321ULL, 0xb4d055fcf2cbbd7bULL},
};

START_TEST(test_mix_values)
{
	ck_assert_uint_eq(mcu_mix64(mix_rows[_i].x), mix_rows[_i].fmix);
	ck_assert_uint_eq(mcu_splitmix64_mix(mix_rows[_i].x),
			  mix_rows[_i].smix);
}
END_TEST

/* A splitmix64 step is the mix of the advanced state. */
START_TEST(test_splitmix64_step_is_mix)
{
	uint64_t state = 0x0123456789abcdefULL;

	for (int i = 0; i < 100; i++) {
		uint64_t next = state + MCU_SPLITMIX64_GAMMA;

		ck_assert_uint_eq(mcu_splitmix64(&state),
				  mcu_splitmix64_mix(next));
		ck_assert_uint_eq(state, next);
	}
}
END_TEST

/* mcu_hash64 is XXH3_64bits_withSeed: xxHash's own sanity vectors
 * (cli/xsum_sanity_check.c, XSUM_XXH3_testdata; XXH3's output is frozen
 * since xxHash 0.8.0), over the buffer XSUM_fillTestBuffer() makes, one
 * length per code path. */
#define XSUM_PRIME32 2654435761U
#define XSUM_PRIME64 11400714785074694797ULL

static const struct {
	size_t len;
	uint64_t seed, want;
} xxh3_rows[] = {
    {0, 0, 0x2d06800538d394c2ULL}, /* empty */
    {0, XSUM_PRIME64, 0xa8a6b918b2f0364aULL},
    {1, 0, 0xc44bdff4074eecdbULL}, /* 1-3 */
    {1, XSUM_PRIME64, 0x032be332dd766ef8ULL},
    {6, 0, 0x27b56a84cd2d7325ULL}, /* 4-8 */
    {6, XSUM_PRIME64, 0x84589c116ab59ab9ULL},
    {12, 0, 0xa713daf0dfbb77e7ULL}, /* 9-16 */
    {12, XSUM_PRIME64, 0xe7303e1b2336de0eULL},
    {24, 0, 0xa3fe70bf9d3510ebULL}, /* 17-32 */
    {24, XSUM_PRIME64, 0x850e80fc35bdd690ULL},
    {48, 0, 0x397da259ecba1f11ULL}, /* 33-64 */
    {48, XSUM_PRIME64, 0xadc2cbaa44acc616ULL},
    {80, 0, 0xbcdefbbb2c47c90aULL}, /* 65-96 */
    {80, XSUM_PRIME64, 0xc6dd0cb699532e73ULL},
    {195, 0, 0xcd94217ee362ec3aULL}, /* 129-240 */
    {195, XSUM_PRIME64, 0xba68003d370cb3d9ULL},
    {403, 0, 0xcdeb804d65c6dea4ULL}, /* one block */
    {403, XSUM_PRIME64, 0x6259f6ecfd6443fdULL},
    {2367, 0, 0xcb37aeb9e5d361edULL}, /* three blocks */
    {2367, XSUM_PRIME64, 0xd2db3415b942b42aULL},
};

START_TEST(test_hash64_xxh3_sanity_vectors)
{
	static unsigned char buf[2367];
	uint64_t gen = XSUM_PRIME32;

	for (size_t i = 0; i < sizeof(buf); i++) {
		buf[i] = (unsigned char)(gen >> 56);
		gen *= XSUM_PRIME64;
	}
	ck_assert_uint_eq(
	    mcu_hash64(buf, xxh3_rows[_i].len, xxh3_rows[_i].seed),
	    xxh3_rows[_i].want);
}
END_TEST

/* Strings, as `printf <s> | xxhsum -H3` (Debian's xxhash 0.8.1, seed 0)
 * prints them; NULL hashes like "", the empty vectors above. */
START_TEST(test_hash_str_values)
{
	ck_assert_uint_eq(mcu_hash_str("abc", 0), 0x78af5f94892f3950ULL);
	ck_assert_uint_eq(mcu_hash_str("segment_0", 0), 0xd128f0eb6065c5aeULL);
	ck_assert_uint_eq(mcu_hash_str("zipf-12345678", 0),
			  0x6863e8612988b413ULL);
	ck_assert_uint_eq(
	    mcu_hash_str("mooncake/key-0000000000000000000000000001", 0),
	    0xdfdbc84b326e8abfULL);
	ck_assert_uint_eq(mcu_hash_str(NULL, 0), 0x2d06800538d394c2ULL);
	ck_assert_uint_eq(mcu_hash_str(NULL, XSUM_PRIME64),
			  0xa8a6b918b2f0364aULL);
}
END_TEST

Suite *make_hash_suite(void)
{
	Suite *s = suite_create("hash");
	TCase *tc = tcase_create("mix");

	tcase_add_test(tc, test_splitmix64_published_sequence);
	tcase_add_test(tc, test_splitmix64_from_zero);
	tcase_add_loop_test(tc, test_mix_values, 0,
			    sizeof(mix_rows) / sizeof(mix_rows[0]));
	tcase_add_test(tc, test_splitmix64_step_is_mix);
	suite_add_tcase(s, tc);
	tc = tcase_create("hash64");
	tcase_add_loop_test(tc, test_hash64_xxh3_sanity_vectors, 0,
			    sizeof(xxh3_rows) / sizeof(xxh3_rows[0]));
	tcase_add_test(tc, test_hash_str_values);
	suite_add_tcase(s, tc);
	return s;
}
