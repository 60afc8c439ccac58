/* Throw-away certificates and an HTTPS GET (see tlsfix.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "harness.h"
#include "netutil.h"
#include "tls.h"
#include "tlsfix.h"

/* sh: key NAME; cert NAME CN ISSUER EXT (EXT: an x509v3 line). */
static const char script[] =
    "set -e; cd \"$1\"; umask 077\n"
    "key() { openssl ecparam -name prime256v1 -genkey -noout -out $1.key; }\n"
    "ca() { key $1; openssl req -x509 -new -key $1.key -subj /CN=$1 "
    "-days 2 -out $1.pem; }\n"
    "cert() { key $1; openssl req -new -key $1.key -subj /CN=$2 "
    "-out $1.csr; printf '%s\\n' \"$4\" > $1.ext; openssl x509 -req "
    "-in $1.csr -CA $3.pem -CAkey $3.key -CAcreateserial -days 2 "
    "-extfile $1.ext -out $1.pem; rm $1.csr $1.ext; }\n"
    "ca ca; ca ca2\n"
    "s='subjectAltName=IP:127.0.0.1,DNS:localhost'\n"
    "cert server localhost ca \"$s\"\n"
    "cert server-ca2 localhost ca2 \"$s\"\n"
    "cert server-other other.example ca subjectAltName=DNS:other.example\n"
    "c=extendedKeyUsage=clientAuth\n"
    "for n in writer reader alice nobody; do cert $n $n ca $c; done\n"
    "cert w1 w1 ca subjectAltName=IP:127.0.0.1\n"
    "cert foreign writer ca2 $c\n"
    "chmod 644 *.pem\n";

int tlsfix_make(struct tlsfix *t)
{
	char cmd[1024], sh[300];
	FILE *f;
	int rc;

	if (harness_mkdtemp(t->dir, sizeof(t->dir), "tls") != 0) {
		perror("tlsfix: mkdtemp");
		return -1;
	}
	snprintf(sh, sizeof(sh), "%s/make.sh", t->dir);
	f = fopen(sh, "w");
	if (!f || fputs(script, f) < 0 || fclose(f) != 0) {
		perror("tlsfix: make.sh");
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "sh %s %s 2>%s/make.log", sh, t->dir,
		 t->dir);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "tlsfix: %s failed (%d), see %s/make.log\n", sh,
			rc, t->dir);
		return -1;
	}
	return 0;
}

const char *tlsfix_path(const struct tlsfix *t, const char *file, char *buf,
			size_t cap)
{
	snprintf(buf, cap, "%s/%s", t->dir, file);
	return buf;
}

void tlsfix_cleanup(struct tlsfix *t)
{
	if (t->dir[0])
		harness_rmdtemp(t->dir, "tls");
	t->dir[0] = '\0';
}

/* Every read and write on fd gives up after ms (a peer that accepts
 * and never answers), as http_get() does. */
static void bound_io(int fd, int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (ms % 1000) * 1000};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

char *tlsfix_https_get(uint16_t port, const char *path, const char *ca_pem)
{
	char err[256], req[256];
	SSL_CTX *ctx = tls_client_ctx(ca_pem, NULL, NULL, err, sizeof(err));
	SSL *ssl = ctx ? tls_client_ssl(ctx, "127.0.0.1") : NULL;
	size_t cap = 1 << 16, len = 0, n;
	char *out = NULL;
	int fd = -1;

	if (!ssl)
		goto out;
	fd = net_connect("127.0.0.1", port, 2000, err, sizeof(err));
	if (fd < 0)
		goto out;
	net_set_nonblock(fd, 0);
	bound_io(fd, HARNESS_HTTP_TIMEOUT_MS);
	SSL_set_fd(ssl, fd);
	snprintf(req, sizeof(req),
		 "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
		 "close\r\n\r\n",
		 path);
	if (SSL_connect(ssl) != 1 ||
	    SSL_write(ssl, req, (int)strlen(req)) != (int)strlen(req))
		goto out;
	out = malloc(cap + 1);
	while (out && len < cap && SSL_read_ex(ssl, out + len, cap - len, &n))
		len += n;
	if (out)
		out[len] = '\0';
	if (out && len == 0) {
		free(out);
		out = NULL;
	}
out:
	SSL_free(ssl);
	SSL_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	return out;
}
