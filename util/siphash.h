/*
 * SipHash-2-4 (J.-P. Aumasson and D. J. Bernstein, "SipHash: a fast
 * short-input PRF", INDOCRYPT 2012), written from the paper: a keyed
 * 64-bit PRF for short inputs, used as the MAC of the data plane's grants
 * (runtime/data/grant.h, docs/SECURITY.md). A util shared by the
 * daemons (util/); not part of libmcrepl's API.
 *
 * The key is 16 bytes (k0 = bytes 0..7, k1 = bytes 8..15, little-endian,
 * as the paper reads them); the output is the paper's 64-bit value (a
 * byte string would be its little-endian encoding, as OpenSSL's SIPHASH
 * MAC gives it). tests/check_siphash.c checks the paper's appendix A
 * vector and every length 0..63 against OpenSSL's EVP_MAC "SIPHASH".
 * About 30 ns for a 56-byte input (or 7 words) on a 2-core x86-64 VM.
 * Reentrant; no state.
 */
#ifndef MCU_SIPHASH_H
#define MCU_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define MCU_SIPHASH_KEY_BYTES 16

struct mcu_siphash_key {
	uint64_t k0, k1;
};

/* The key of 16 bytes, read as the paper does (two little-endian words). */
struct mcu_siphash_key mcu_siphash_key(const uint8_t k[MCU_SIPHASH_KEY_BYTES]);

/* SipHash-2-4 of in[0, n) under key. */
uint64_t mcu_siphash24(const struct mcu_siphash_key *key, const void *in,
		       size_t n);

/* The same of the 8 * n bytes that are w[0..n) each little-endian, without
 * serializing them first (the grants' inputs are words). */
uint64_t mcu_siphash24_words(const struct mcu_siphash_key *key,
			     const uint64_t *w, size_t n);

#endif
