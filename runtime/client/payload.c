/* Payload digests: SHA-256 over libcrypto's EVP (see payload.h). */
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "payload.h"

int payload_digest(const void *buf, uint64_t len,
		   uint8_t out[PAYLOAD_DIGEST_BYTES])
{
	unsigned int n = 0;

	if (len > SIZE_MAX ||
	    !EVP_Digest(buf, (size_t)len, out, &n, EVP_sha256(), NULL) ||
	    n != PAYLOAD_DIGEST_BYTES)
		return -1;
	return 0;
}

bool payload_digest_matches(const void *buf, uint64_t len, const uint8_t *want)
{
	uint8_t got[PAYLOAD_DIGEST_BYTES];

	return payload_digest(buf, len, got) == 0 &&
	       CRYPTO_memcmp(got, want, PAYLOAD_DIGEST_BYTES) == 0;
}
