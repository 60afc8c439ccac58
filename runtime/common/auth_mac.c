/* The handshake's proofs: HMAC-SHA256 from OpenSSL's libcrypto, nonces
 * from its CSPRNG (see auth.h). */
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "auth.h"

static const char *const side_label[] = {
    [AUTH_SIDE_CLIENT] = "mcrepl-auth-v1 client",
    [AUTH_SIDE_SERVER] = "mcrepl-auth-v1 server",
    [AUTH_SIDE_SESSION] = "mcrepl-auth-v1 session",
};

int auth_mac(const uint8_t *secret, size_t secret_len, enum auth_side side,
	     const char *name, const uint8_t cn[AUTH_NONCE_BYTES],
	     const uint8_t sn[AUTH_NONCE_BYTES], uint8_t mac[AUTH_MAC_BYTES])
{
	uint8_t msg[32 + AUTH_NAME_MAX + 1 + 2 * AUTH_NONCE_BYTES];
	size_t label = strlen(side_label[side]) + 1; /* with its NUL */
	size_t nlen = strnlen(name, AUTH_NAME_MAX);
	size_t n = 0;
	unsigned int out_len = 0;

	memcpy(msg, side_label[side], label);
	n += label;
	memcpy(msg + n, name, nlen);
	n += nlen;
	msg[n++] = '\0';
	memcpy(msg + n, cn, AUTH_NONCE_BYTES);
	n += AUTH_NONCE_BYTES;
	memcpy(msg + n, sn, AUTH_NONCE_BYTES);
	n += AUTH_NONCE_BYTES;
	if (!HMAC(EVP_sha256(), secret, (int)secret_len, msg, n, mac,
		  &out_len) ||
	    out_len != AUTH_MAC_BYTES)
		return -1;
	return 0;
}

int auth_seal(const uint8_t key[AUTH_MAC_BYTES], const char *label,
	      uint8_t *buf, size_t len)
{
	uint8_t msg[128], ks[AUTH_MAC_BYTES];
	size_t n = strnlen(label, sizeof(msg) - 5);
	unsigned int out_len;

	memcpy(msg, label, n);
	msg[n] = '\0';
	for (uint32_t block = 0; len > 0; block++) {
		size_t take = len < sizeof(ks) ? len : sizeof(ks);

		msg[n + 1] = (uint8_t)(block >> 24);
		msg[n + 2] = (uint8_t)(block >> 16);
		msg[n + 3] = (uint8_t)(block >> 8);
		msg[n + 4] = (uint8_t)block;
		if (!HMAC(EVP_sha256(), key, AUTH_MAC_BYTES, msg, n + 5, ks,
			  &out_len))
			return -1;
		for (size_t i = 0; i < take; i++)
			buf[i] ^= ks[i];
		buf += take;
		len -= take;
	}
	OPENSSL_cleanse(ks, sizeof(ks));
	return 0;
}

bool auth_mac_equal(const uint8_t *a, const uint8_t *b)
{
	return CRYPTO_memcmp(a, b, AUTH_MAC_BYTES) == 0;
}

int auth_nonce(uint8_t nonce[AUTH_NONCE_BYTES])
{
	return RAND_bytes(nonce, AUTH_NONCE_BYTES) == 1 ? 0 : -1;
}
