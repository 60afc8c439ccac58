/*
 * SipHash-2-4, written from its specification: J.-P. Aumasson and
 * D. J. Bernstein, "SipHash: a fast short-input PRF", INDOCRYPT 2012,
 * section 2: initialization, compression of the message's little-endian
 * words (the last one carrying the length), finalization, and SipRound
 * as the paper draws it. See siphash.h.
 */
#include "util/siphash.h"

/* The initialization constants: "somepseudorandomlygeneratedbytes". */
#define SIP_IV0 0x736f6d6570736575ULL
#define SIP_IV1 0x646f72616e646f6dULL
#define SIP_IV2 0x6c7967656e657261ULL
#define SIP_IV3 0x7465646279746573ULL

/* The internal state, v0..v3 in the paper. */
struct sip_state {
	uint64_t v0, v1, v2, v3;
};

static inline uint64_t rotl64(uint64_t x, unsigned n)
{
	return x << n | x >> (64 - n);
}

/* An 8-byte little-endian word (one expression: compilers make it one
 * load). */
static inline uint64_t load_le64(const uint8_t *p)
{
	return (uint64_t)p[7] << 56 | (uint64_t)p[6] << 48 |
	       (uint64_t)p[5] << 40 | (uint64_t)p[4] << 32 |
	       (uint64_t)p[3] << 24 | (uint64_t)p[2] << 16 |
	       (uint64_t)p[1] << 8 | (uint64_t)p[0];
}

/* SipRound: two add-rotate-xor half-rounds, each on the pairs (v0, v1)
 * and (v2, v3) side by side. */
static inline void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v2 += s->v3;
	s->v1 = rotl64(s->v1, 13);
	s->v3 = rotl64(s->v3, 16);
	s->v1 ^= s->v0;
	s->v3 ^= s->v2;
	s->v0 = rotl64(s->v0, 32);

	s->v2 += s->v1;
	s->v0 += s->v3;
	s->v1 = rotl64(s->v1, 17);
	s->v3 = rotl64(s->v3, 21);
	s->v1 ^= s->v2;
	s->v3 ^= s->v0;
	s->v2 = rotl64(s->v2, 32);
}

static inline struct sip_state sip_init(const struct mcu_siphash_key *key)
{
	return (struct sip_state){.v0 = key->k0 ^ SIP_IV0,
				  .v1 = key->k1 ^ SIP_IV1,
				  .v2 = key->k0 ^ SIP_IV2,
				  .v3 = key->k1 ^ SIP_IV3};
}

/* Compression of one message word: c = 2 SipRounds. */
static inline void sip_absorb(struct sip_state *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* Finalization: d = 4 SipRounds. */
static inline uint64_t sip_finalize(struct sip_state *s)
{
	s->v2 ^= 0xff;
	sip_round(s);
	sip_round(s);
	sip_round(s);
	sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* len mod 256 as the most significant byte of a word. */
static inline uint64_t sip_length_byte(size_t len)
{
	return (uint64_t)(len & 0xff) << 56;
}

/* The last word of a len-byte message: the len % 8 bytes left at tail,
 * then zero bytes, then the length byte. */
static inline uint64_t sip_last_word(const uint8_t *tail, size_t len)
{
	uint64_t m = sip_length_byte(len);

	for (size_t i = 0; i < len % 8; i++)
		m |= (uint64_t)tail[i] << (8 * i);
	return m;
}

struct mcu_siphash_key mcu_siphash_key(const uint8_t k[MCU_SIPHASH_KEY_BYTES])
{
	return (struct mcu_siphash_key){.k0 = load_le64(k),
					.k1 = load_le64(k + 8)};
}

uint64_t mcu_siphash24(const struct mcu_siphash_key *key, const void *in,
		       size_t n)
{
	const uint8_t *p = in;
	struct sip_state s = sip_init(key);
	size_t words = n / 8;

	for (size_t i = 0; i < words; i++)
		sip_absorb(&s, load_le64(p + 8 * i));
	sip_absorb(&s, sip_last_word(p + 8 * words, n));
	return sip_finalize(&s);
}

uint64_t mcu_siphash24_words(const struct mcu_siphash_key *key,
			     const uint64_t *w, size_t n)
{
	struct sip_state s = sip_init(key);

	for (size_t i = 0; i < n; i++)
		sip_absorb(&s, w[i]);
	sip_absorb(&s, sip_length_byte(8 * n));
	return sip_finalize(&s);
}
