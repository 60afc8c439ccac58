/*
 * Private helpers shared by libmcrepl's modules. Not installed; not API.
 * Internal symbols use the mcrepl__ prefix and are hidden from the .so.
 */
#ifndef MCREPL_INTERNAL_H
#define MCREPL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Final avalanche mix of one 64-bit value. */
uint64_t mcrepl__mix64(uint64_t x);

#define MCREPL__P0 0xa0761d6478bd642fULL
#define MCREPL__P1 0xe7037ed1a0b428dbULL
#define MCREPL__P2 0x8ebc6af09c88c6e3ULL

static inline uint64_t mcrepl__mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)(r >> 64) ^ (uint64_t)r;
}

static inline uint64_t mcrepl__r8(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t mcrepl__r4(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* 64-bit hash of a byte string, wyhash's shape: fixed-size, possibly
 * overlapping loads and no byte loop, so short keys hash in a few dozen
 * cycles (the read path hashes one per Get). Inline for that reason. */
static inline uint64_t mcrepl__hash64(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *s = data;
	uint64_t a = 0, b = 0;
	size_t i = 0;

	if (n > 16) {
		for (; i + 16 < n; i += 16)
			seed = mcrepl__mum(mcrepl__r8(s + i) ^ MCREPL__P1,
					   mcrepl__r8(s + i + 8) ^ seed);
		a = mcrepl__r8(s + n - 16);
		b = mcrepl__r8(s + n - 8);
	} else if (n >= 4) {
		a = mcrepl__r4(s) << 32 | mcrepl__r4(s + (n >> 3 << 2));
		b = mcrepl__r4(s + n - 4) << 32 |
		    mcrepl__r4(s + n - 4 - (n >> 3 << 2));
	} else if (n > 0) {
		a = (uint64_t)s[0] << 16 | (uint64_t)s[n >> 1] << 8 | s[n - 1];
	}
	return mcrepl__mum(MCREPL__P0 ^ n,
			   mcrepl__mum(a ^ MCREPL__P0, b ^ seed));
}

/* Hash of a NUL-terminated string (NULL hashes like ""). */
static inline uint64_t mcrepl__hash_str(const char *s, uint64_t seed)
{
	return s ? mcrepl__hash64(s, strlen(s), seed)
		 : mcrepl__hash64("", 0, seed);
}

/* malloc-backed strdup/strndup (so test allocators see every allocation);
 * NULL in -> "" copy. Return NULL when allocation fails. */
char *mcrepl__strdup(const char *s);

/* s, or "" when s is NULL. */
static inline const char *mcrepl__nz(const char *s)
{
	return s ? s : "";
}

#endif
