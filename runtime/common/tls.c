/* TLS contexts and peer checks (see tls.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include "auth.h"
#include "tls.h"

static bool given(const char *s)
{
	return s && *s;
}

int tls_files_check(const struct tls_files *f, char *err, size_t errlen)
{
	if (given(f->cert) != given(f->key)) {
		snprintf(err, errlen, "%s",
			 given(f->cert) ? "--tls_cert needs --tls_key"
					: "--tls_key needs --tls_cert");
		return -1;
	}
	return 0;
}

bool tls_files_server(const struct tls_files *f)
{
	return given(f->cert) && given(f->key);
}

/* OpenSSL's queued error as text (and clears the queue), or "" */
static void tls_last_error(char *buf, size_t len)
{
	unsigned long e = ERR_get_error();

	if (len)
		buf[0] = '\0';
	if (e && len)
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
}

/* err = "FLAG FILE: what (OpenSSL's reason)". */
static void ctx_fail(const char *flag, const char *file, const char *what,
		     char *err, size_t errlen)
{
	char ssl[200];

	tls_last_error(ssl, sizeof(ssl));
	snprintf(err, errlen, "%s %s: %s%s%s%s", flag, file, what,
		 ssl[0] ? " (" : "", ssl, ssl[0] ? ")" : "");
}

/* The file can be opened for reading: else err with errno's text. */
static int readable(const char *flag, const char *file, char *err,
		    size_t errlen)
{
	FILE *f = fopen(file, "r");

	if (!f) {
		snprintf(err, errlen, "%s %s: %s", flag, file, strerror(errno));
		return -1;
	}
	fclose(f);
	return 0;
}

static SSL_CTX *new_ctx(const SSL_METHOD *m, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(m);

	if (!ctx) {
		snprintf(err, errlen, "TLS: cannot make a context");
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_options(ctx,
			    SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
	return ctx;
}

/* cert and key into ctx, checked to match; the key file private. */
static int load_pair(SSL_CTX *ctx, const char *cert, const char *key, char *err,
		     size_t errlen)
{
	char why[1024]; /* two paths and the hint */

	if (readable("--tls_cert", cert, err, errlen) ||
	    readable("--tls_key", key, err, errlen))
		return -1;
	if (auth_file_private(key, why, sizeof(why))) {
		snprintf(err, errlen, "--tls_key: %s", why);
		return -1;
	}
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		ctx_fail("--tls_cert", cert, "not a PEM certificate", err,
			 errlen);
		return -1;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		unsigned long e = ERR_peek_last_error();
		bool mismatch = ERR_GET_LIB(e) == ERR_LIB_X509 &&
				ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH;

		ctx_fail("--tls_key", key,
			 mismatch ? "does not match the certificate of "
				    "--tls_cert"
				  : "not a PEM private key",
			 err, errlen);
		return -1;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		ctx_fail("--tls_key", key,
			 "does not match the certificate of --tls_cert", err,
			 errlen);
		return -1;
	}
	return 0;
}

static int load_ca(SSL_CTX *ctx, const char *ca, char *err, size_t errlen)
{
	STACK_OF(X509_NAME) * names;

	if (readable("--tls_ca", ca, err, errlen))
		return -1;
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		ctx_fail("--tls_ca", ca, "no PEM certificate in it", err,
			 errlen);
		return -1;
	}
	names = SSL_load_client_CA_file(ca);
	if (names)
		SSL_CTX_set_client_CA_list(ctx, names);
	ERR_clear_error();
	return 0;
}

/* The server finishes every handshake; tls_peer_check judges after. */
static int accept_any(int ok, X509_STORE_CTX *x)
{
	(void)ok;
	(void)x;
	return 1;
}

SSL_CTX *tls_server_ctx(const char *cert, const char *key, const char *ca,
			char *err, size_t errlen)
{
	SSL_CTX *ctx = new_ctx(TLS_server_method(), err, errlen);

	if (!ctx)
		return NULL;
	/* no resumption: tickets would cost every connection a message */
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (load_pair(ctx, cert, key, err, errlen) ||
	    (given(ca) && load_ca(ctx, ca, err, errlen))) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (given(ca))
		SSL_CTX_set_verify(
		    ctx, SSL_VERIFY_PEER | SSL_VERIFY_CLIENT_ONCE, accept_any);
	return ctx;
}

SSL_CTX *tls_client_ctx(const char *ca, const char *cert, const char *key,
			char *err, size_t errlen)
{
	SSL_CTX *ctx;

	if (!given(ca)) {
		snprintf(err, errlen,
			 "TLS to the master needs --tls_ca (its certificate "
			 "must be verified)");
		return NULL;
	}
	if (given(cert) != given(key)) {
		snprintf(err, errlen, "%s",
			 given(cert) ? "--tls_cert needs --tls_key"
				     : "--tls_key needs --tls_cert");
		return NULL;
	}
	ctx = new_ctx(TLS_client_method(), err, errlen);
	if (!ctx)
		return NULL;
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (load_ca(ctx, ca, err, errlen) ||
	    (given(cert) && load_pair(ctx, cert, key, err, errlen))) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	return ctx;
}

SSL *tls_client_ssl(SSL_CTX *ctx, const char *host)
{
	SSL *ssl = SSL_new(ctx);
	X509_VERIFY_PARAM *vp;
	int ok;

	if (!ssl)
		return NULL;
	vp = SSL_get0_param(ssl);
	ok = X509_VERIFY_PARAM_set1_ip_asc(vp, host);
	if (!ok) { /* not an IP literal: a DNS name, and SNI */
		ERR_clear_error();
		X509_VERIFY_PARAM_set_hostflags(
		    vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
		ok =
		    SSL_set1_host(ssl, host) == 1 &&
		    SSL_set_tlsext_host_name(ssl, (char *)(uintptr_t)host) == 1;
	}
	if (!ok) {
		SSL_free(ssl);
		ERR_clear_error();
		return NULL;
	}
	return ssl;
}

/* The CN of x into name ("" when none, or too long). */
static void cert_cn(X509 *x, char *name, size_t namelen)
{
	X509_NAME *subj = X509_get_subject_name(x);
	int n;

	name[0] = '\0';
	if (!subj)
		return;
	n = X509_NAME_get_text_by_NID(subj, NID_commonName, name, (int)namelen);
	if (n < 0 || (size_t)n >= namelen || strlen(name) != (size_t)n)
		name[0] = '\0'; /* none, truncated or with a NUL inside */
}

enum tls_peer tls_peer_check(SSL *ssl, char *name, size_t namelen, char *why,
			     size_t whylen)
{
	X509 *x = SSL_get0_peer_certificate(ssl);
	long v;

	name[0] = '\0';
	why[0] = '\0';
	if (!x)
		return TLS_PEER_NONE;
	cert_cn(x, name, namelen);
	v = SSL_get_verify_result(ssl);
	if (v != X509_V_OK) {
		snprintf(why, whylen, "%s", X509_verify_cert_error_string(v));
		return TLS_PEER_UNTRUSTED;
	}
	return TLS_PEER_OK;
}

int tls_ctx_own_cn(SSL_CTX *ctx, char *name, size_t namelen)
{
	X509 *x = SSL_CTX_get0_certificate(ctx);

	if (!x)
		return -1;
	cert_cn(x, name, namelen);
	return name[0] ? 0 : -1;
}

int tls_session_key(SSL *ssl, uint8_t out[TLS_SESSION_KEY_BYTES])
{
	static const char label[] = TLS_EXPORTER_LABEL;

	if (SSL_export_keying_material(ssl, out, TLS_SESSION_KEY_BYTES, label,
				       sizeof(label) - 1, NULL, 0, 0) != 1) {
		ERR_clear_error();
		return -1;
	}
	return 0;
}

void tls_client_error(SSL *ssl, unsigned long e, int sys_errno, char *err,
		      size_t errlen)
{
	long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
	char ssl_err[200] = "";

	if (e)
		ERR_error_string_n(e, ssl_err, sizeof(ssl_err));
	tls_last_error(e ? NULL : ssl_err, e ? 0 : sizeof(ssl_err));
	if (v != X509_V_OK)
		snprintf(err, errlen,
			 "TLS: the master's certificate was refused: %s "
			 "(--tls_ca)",
			 X509_verify_cert_error_string(v));
	else if (ssl_err[0])
		snprintf(err, errlen,
			 "TLS handshake failed: %s (does the "
			 "master serve TLS? --tls_cert on it)",
			 ssl_err);
	else
		snprintf(err, errlen,
			 "TLS handshake failed: %s (does the master serve "
			 "TLS? --tls_cert on it)",
			 sys_errno ? strerror(sys_errno)
				   : "connection closed by the master");
}

/* ---- a socket BIO without SIGPIPE ---- */

static BIO_METHOD *nosig_method;
static pthread_once_t nosig_once = PTHREAD_ONCE_INIT;

static int bio_fd(BIO *b)
{
	return (int)(intptr_t)BIO_get_data(b);
}

static bool again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

static int nosig_write(BIO *b, const char *buf, int len)
{
	ssize_t n = send(bio_fd(b), buf, (size_t)len, MSG_NOSIGNAL);

	BIO_clear_retry_flags(b);
	if (n < 0 && again())
		BIO_set_retry_write(b);
	return (int)n;
}

static int nosig_read(BIO *b, char *buf, int len)
{
	ssize_t n = recv(bio_fd(b), buf, (size_t)len, 0);

	BIO_clear_retry_flags(b);
	if (n < 0 && again())
		BIO_set_retry_read(b);
	return (int)n;
}

static long nosig_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int nosig_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static void nosig_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
				     "mcrepl socket");

	if (m && (!BIO_meth_set_write(m, nosig_write) ||
		  !BIO_meth_set_read(m, nosig_read) ||
		  !BIO_meth_set_ctrl(m, nosig_ctrl) ||
		  !BIO_meth_set_create(m, nosig_create))) {
		BIO_meth_free(m);
		m = NULL;
	}
	nosig_method = m; /* kept for the process's life */
}

BIO *tls_socket_bio(int fd)
{
	BIO *b;

	pthread_once(&nosig_once, nosig_init);
	if (!nosig_method)
		return NULL;
	b = BIO_new(nosig_method);
	if (b)
		BIO_set_data(b, (void *)(intptr_t)fd);
	return b;
}
