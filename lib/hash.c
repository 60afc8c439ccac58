/* Hashing and small string helpers shared by the modules. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define P0 0xa0761d6478bd642fULL
#define P1 0xe7037ed1a0b428dbULL
#define P2 0x8ebc6af09c88c6e3ULL

static uint64_t mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)(r >> 64) ^ (uint64_t)r;
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint64_t load_tail(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	memcpy(&v, p, n);
	return v;
}

uint64_t mcrepl__hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ P0 ^ (uint64_t)len;
	size_t i = 0;

	for (; i + 16 <= len; i += 16)
		h = mum(load64(p + i) ^ P1, load64(p + i + 8) ^ h);
	if (i + 8 <= len) {
		h = mum(load64(p + i) ^ P1, h ^ P2);
		i += 8;
	}
	if (i < len)
		h = mum(load_tail(p + i, len - i) ^ P2, h ^ P1);
	return mcrepl__mix64(h);
}

uint64_t mcrepl__hash_str(const char *s, uint64_t seed)
{
	s = mcrepl__nz(s);
	return mcrepl__hash64(s, strlen(s), seed);
}

uint64_t mcrepl__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb3fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

char *mcrepl__strdup(const char *s)
{
	size_t n;
	char *d;

	s = mcrepl__nz(s);
	n = strlen(s);
	d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}
