/*
 * Small hashing helpers shared by libmcrepl and the daemons (util/).
 * Not installed; not part of libmcrepl's API. The library builds these
 * into itself with hidden visibility; the daemons link them from
 * libmcrepl-util.a and include them with -I..
 */
#ifndef MCU_HASH_H
#define MCU_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

/* One xorshift-multiply step, (x ^ x >> shift) * mul, the step both
 * finalizers below are made of (each is three such steps, the last one
 * without its multiply). */
static inline uint64_t mcu_xorshift_mul(uint64_t x, unsigned shift,
					uint64_t mul)
{
	return (x ^ x >> shift) * mul;
}

/* Final avalanche mix of one 64-bit value: fmix64, the 64-bit finalizer
 * specified by MurmurHash3 (A. Appleby, SMHasher): shifts 33, 33, 33,
 * multipliers 0xff51afd7ed558ccd, 0xc4ceb3fe1a85ec53. A bijection;
 * mcu_mix64(0) = 0. Values pinned in tests/check_hash.c. */
static inline uint64_t mcu_mix64(uint64_t x)
{
	x = mcu_xorshift_mul(x, 33, 0xff51afd7ed558ccdULL);
	x = mcu_xorshift_mul(x, 33, 0xc4ceb3fe1a85ec53ULL);
	return x ^ x >> 33;
}

/* splitmix64's output function of one value: SplitMix's mix (G. L. Steele,
 * D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014) with the shifts 30, 27, 31 and multipliers
 * 0xbf58476d1ce4e5b9, 0x94d049bb133111eb that S. Vigna publishes for
 * splitmix64 (D. Stafford's "Mix13"). A stateless mix for hashing ids and
 * keys; not the same function as mcu_mix64(). */
static inline uint64_t mcu_splitmix64_mix(uint64_t z)
{
	z = mcu_xorshift_mul(z, 30, 0xbf58476d1ce4e5b9ULL);
	z = mcu_xorshift_mul(z, 27, 0x94d049bb133111ebULL);
	return z ^ z >> 31;
}

/* SplitMix's increment: the paper's GOLDEN_GAMMA, floor(2^64 / phi) (odd). */
#define MCU_SPLITMIX64_GAMMA 0x9e3779b97f4a7c15ULL

/* One splitmix64 step: the state advances by the golden gamma and the
 * output is the mix of the new state. From seed 1234567 the first outputs
 * are 6457827717110365317, 3203168211198807973, ... (tests/check_hash.c).
 * A small, fast generator for seeding, salts and tests; not for anything
 * secret. */
static inline uint64_t mcu_splitmix64(uint64_t *state)
{
	*state += MCU_SPLITMIX64_GAMMA;
	return mcu_splitmix64_mix(*state);
}

/* 64-bit hash of a byte string: xxHash's XXH3_64bits_withSeed(), from
 * Debian's libxxhash-dev compiled in from its header (XXH_INLINE_ALL), so
 * neither libmcrepl nor the daemons link libxxhash at run time. Inline:
 * short keys hash in a few ns (the read path hashes one per Get). Values
 * pinned to xxHash's sanity vectors in tests/check_hash.c. */
static inline uint64_t mcu_hash64(const void *data, size_t n, uint64_t seed)
{
	return XXH3_64bits_withSeed(data, n, seed);
}

/* Hash of a NUL-terminated string (NULL hashes like ""). */
static inline uint64_t mcu_hash_str(const char *s, uint64_t seed)
{
	return s ? mcu_hash64(s, strlen(s), seed) : mcu_hash64("", 0, seed);
}

#endif
