/*
 * TLS for the RPC and HTTP ports: the OpenSSL contexts every
 * binary makes from its flags, and the checks of a peer's certificate.
 * One place for the set-up, shared by the master, the worker, the cli,
 * the store client and the benches (docs/SECURITY.md, "TLS").
 *
 * Flags (the same names on every binary; tls_flags_check() validates them):
 *   --tls_cert FILE --tls_key FILE   a server's certificate (the master's
 *       RPC and HTTP ports, the worker's HTTP port); on a client, the
 *       certificate it presents to a master that asks for one
 *   --tls_ca FILE                    a client: TLS to the master, whose
 *       certificate must chain to FILE and name the host or IP dialed in
 *       its subjectAltName; the master: require client certificates
 *       chaining to FILE (mutual TLS)
 *
 * TLS 1.2 at least (1.3 preferred: OpenSSL negotiates the highest), with
 * OpenSSL's default ciphers; no compression, no renegotiation.
 *
 * A server with a CA asks every client for a certificate but finishes the
 * handshake whatever comes; tls_peer_check() then says whether the
 * certificate is there and verified, so the RPC server can refuse with an
 * UNAUTHENTICATED frame naming the reason (a client sees why, /metrics
 * counts it) instead of an alert.
 *
 * Private keys and passphrases are never printed; errors name the flag and
 * the file.
 */
#ifndef MCREPL_DAEMON_TLS_H
#define MCREPL_DAEMON_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define TLS_SESSION_KEY_BYTES 32
/* The label of the keying material exporter (RFC 5705) that gives a
 * certificate-authenticated connection its session key (auth_seal). */
#define TLS_EXPORTER_LABEL "EXPORTER-mcrepl-session-v1"

/* The three flags of a binary, as parsed (empty strings = not given). */
struct tls_files {
	const char *cert, *key, *ca;
};

/* One line in err when the flags do not fit together: --tls_cert without
 * --tls_key or the reverse. 0 or -1. */
int tls_files_check(const struct tls_files *f, char *err, size_t errlen);

/* Whether f asks for a server context (cert and key given). */
bool tls_files_server(const struct tls_files *f);

/* A server context: cert and key (checked to match), and with ca, client
 * certificates requested (see above). NULL with one line in err naming
 * the flag and file. */
SSL_CTX *tls_server_ctx(const char *cert, const char *key, const char *ca,
			char *err, size_t errlen);

/* A client context verifying servers against ca (required), presenting
 * cert and key when given (both or neither). NULL with err. */
SSL_CTX *tls_client_ctx(const char *ca, const char *cert, const char *key,
			char *err, size_t errlen);

/* A client connection's SSL for ctx, checking that the server's
 * certificate names host (an IP literal: an IP SAN; else a DNS SAN, and
 * SNI). NULL when out of memory. */
SSL *tls_client_ssl(SSL_CTX *ctx, const char *host);

/* A socket BIO for fd that sends with MSG_NOSIGNAL (OpenSSL's own writes
 * with write(2), which raises SIGPIPE on a closed peer), for the blocking
 * client. The fd is not closed with the BIO. NULL when out of memory. */
BIO *tls_socket_bio(int fd);

/* The result of a server's look at its peer's certificate. */
enum tls_peer {
	TLS_PEER_OK,	   /* verified; name set to its subject's CN */
	TLS_PEER_NONE,	   /* no certificate presented */
	TLS_PEER_UNTRUSTED /* presented, not verified (why says why) */
};

/* After the handshake: the peer's certificate, its CN in name (empty when
 * it has none or a longer one than namelen - 1), and for UNTRUSTED the
 * verification error in why. */
enum tls_peer tls_peer_check(SSL *ssl, char *name, size_t namelen, char *why,
			     size_t whylen);

/* The CN of ctx's own certificate (the client's --tls_cert) into name; 0,
 * or -1 when there is none. */
int tls_ctx_own_cn(SSL_CTX *ctx, char *name, size_t namelen);

/* The connection's session key: TLS_SESSION_KEY_BYTES exported under
 * TLS_EXPORTER_LABEL (both sides get the same, no one else can). 0 or
 * -1. */
int tls_session_key(SSL *ssl, uint8_t out[TLS_SESSION_KEY_BYTES]);

/* A failed client handshake as one line: the verification error when the
 * server's certificate was refused ("certificate verify failed: hostname
 * mismatch"), else ssl_err (0: OpenSSL's first queued error) or
 * sys_errno's text. The error queue is cleared. */
void tls_client_error(SSL *ssl, unsigned long ssl_err, int sys_errno, char *err,
		      size_t errlen);

#endif
