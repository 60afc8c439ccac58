/* SipHash-2-4, the reference algorithm (see siphash.h). */
#include "siphash.h"

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                               \
	do {                                                                   \
		v0 += v1;                                                      \
		v1 = ROTL(v1, 13);                                             \
		v1 ^= v0;                                                      \
		v0 = ROTL(v0, 32);                                             \
		v2 += v3;                                                      \
		v3 = ROTL(v3, 16);                                             \
		v3 ^= v2;                                                      \
		v0 += v3;                                                      \
		v3 = ROTL(v3, 21);                                             \
		v3 ^= v0;                                                      \
		v2 += v1;                                                      \
		v1 = ROTL(v1, 17);                                             \
		v1 ^= v2;                                                      \
		v2 = ROTL(v2, 32);                                             \
	} while (0)

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
	       (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[7] << 56;
}

struct mcu_siphash_key mcu_siphash_key(const uint8_t k[MCU_SIPHASH_KEY_BYTES])
{
	return (struct mcu_siphash_key){.k0 = le64(k), .k1 = le64(k + 8)};
}

#define SIPINIT                                                                \
	uint64_t v0 = 0x736f6d6570736575ULL ^ key->k0;                         \
	uint64_t v1 = 0x646f72616e646f6dULL ^ key->k1;                         \
	uint64_t v2 = 0x6c7967656e657261ULL ^ key->k0;                         \
	uint64_t v3 = 0x7465646279746573ULL ^ key->k1

#define SIPFINISH(b)                                                           \
	do {                                                                   \
		v3 ^= (b);                                                     \
		SIPROUND;                                                      \
		SIPROUND;                                                      \
		v0 ^= (b);                                                     \
		v2 ^= 0xff;                                                    \
		SIPROUND;                                                      \
		SIPROUND;                                                      \
		SIPROUND;                                                      \
		SIPROUND;                                                      \
	} while (0)

uint64_t mcu_siphash24_words(const struct mcu_siphash_key *key,
			     const uint64_t *w, size_t n)
{
	SIPINIT;

	for (size_t i = 0; i < n; i++) {
		v3 ^= w[i];
		SIPROUND;
		SIPROUND;
		v0 ^= w[i];
	}
	SIPFINISH((uint64_t)(n * 8) << 56);
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t mcu_siphash24(const struct mcu_siphash_key *key, const void *in,
		       size_t n)
{
	const uint8_t *p = in;
	const uint8_t *end = p + (n - n % 8);
	uint64_t b = (uint64_t)n << 56, m;
	SIPINIT;

	for (; p != end; p += 8) {
		m = le64(p);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	switch (n % 8) {
	case 7:
		b |= (uint64_t)p[6] << 48;
		__attribute__((fallthrough));
	case 6:
		b |= (uint64_t)p[5] << 40;
		__attribute__((fallthrough));
	case 5:
		b |= (uint64_t)p[4] << 32;
		__attribute__((fallthrough));
	case 4:
		b |= (uint64_t)p[3] << 24;
		__attribute__((fallthrough));
	case 3:
		b |= (uint64_t)p[2] << 16;
		__attribute__((fallthrough));
	case 2:
		b |= (uint64_t)p[1] << 8;
		__attribute__((fallthrough));
	case 1:
		b |= (uint64_t)p[0];
		break;
	default:
		break;
	}
	SIPFINISH(b);
	return v0 ^ v1 ^ v2 ^ v3;
}
