/*
 * Small hashing helpers shared by libmcrepl and the daemons (lib/util/).
 * Not installed; not part of libmcrepl's API. The library builds these
 * into itself with hidden visibility; the daemons link them from
 * libmcrepl-util.a and include them with -Ilib/util.
 */
#ifndef MCU_HASH_H
#define MCU_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

#define MCU_P0 0xa0761d6478bd642fULL
#define MCU_P1 0xe7037ed1a0b428dbULL
#define MCU_P2 0x8ebc6af09c88c6e3ULL

static inline uint64_t mcu_mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)(r >> 64) ^ (uint64_t)r;
}

static inline uint64_t mcu_r8(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t mcu_r4(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* 64-bit hash of a byte string, wyhash's shape: fixed-size, possibly
 * overlapping loads and no byte loop, so short keys hash in a few dozen
 * cycles (the read path hashes one per Get). Inline for that reason. */
static inline uint64_t mcu_hash64(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *s = data;
	uint64_t a = 0, b = 0;
	size_t i = 0;

	if (n > 16) {
		for (; i + 16 < n; i += 16)
			seed = mcu_mum(mcu_r8(s + i) ^ MCU_P1,
				       mcu_r8(s + i + 8) ^ seed);
		a = mcu_r8(s + n - 16);
		b = mcu_r8(s + n - 8);
	} else if (n >= 4) {
		a = mcu_r4(s) << 32 | mcu_r4(s + (n >> 3 << 2));
		b = mcu_r4(s + n - 4) << 32 | mcu_r4(s + n - 4 - (n >> 3 << 2));
	} else if (n > 0) {
		a = (uint64_t)s[0] << 16 | (uint64_t)s[n >> 1] << 8 | s[n - 1];
	}
	return mcu_mum(MCU_P0 ^ n, mcu_mum(a ^ MCU_P0, b ^ seed));
}

/* Hash of a NUL-terminated string (NULL hashes like ""). */
static inline uint64_t mcu_hash_str(const char *s, uint64_t seed)
{
	return s ? mcu_hash64(s, strlen(s), seed) : mcu_hash64("", 0, seed);
}

#endif
