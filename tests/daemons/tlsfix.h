/* Throw-away certificates for the TLS tests (check_tls.c), made with the
 * openssl command at test time in a private temporary directory: EC P-256
 * keys (mode 600), a CA "ca" and another "ca2", server certificates, and
 * client certificates whose CNs name principals. And an HTTPS GET. */
#ifndef MCREPL_TEST_TLSFIX_H
#define MCREPL_TEST_TLSFIX_H

#include <stdint.h>

struct tlsfix {
	char dir[256];
};

/* Makes every file below in a new directory: ca, ca2 (CAs); server (SAN
 * IP:127.0.0.1, DNS:localhost; by ca), server-other (SAN DNS:other.example;
 * by ca), server-ca2 (SANs as server; by ca2); clients by ca: w1 (also a
 * server's: SAN IP:127.0.0.1), writer, reader, alice, nobody; foreign (CN
 * writer, by ca2). Each NAME.pem with
 * NAME.key. 0, or -1 with a message on stderr. */
int tlsfix_make(struct tlsfix *t);
/* The path of file (e.g. "ca.pem") in t's directory, in buf. */
const char *tlsfix_path(const struct tlsfix *t, const char *file, char *buf,
			size_t cap);
/* Removes the directory and its files. */
void tlsfix_cleanup(struct tlsfix *t);

/* GET path over TLS from 127.0.0.1:port, verifying the server against
 * ca_pem; the malloc'd response (status line, headers, body), or NULL
 * (also when the peer sends nothing for HARNESS_HTTP_TIMEOUT_MS). */
char *tlsfix_https_get(uint16_t port, const char *path, const char *ca_pem);

#endif
