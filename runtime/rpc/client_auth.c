/* A client's credential and TLS context from its flags (client_auth.h). */
#include <stdio.h>
#include <string.h>

#include "client_auth.h"

static bool given(const char *s)
{
	return s && *s;
}

/* By certificate: the context holds one whose CN is the principal. */
static int cert_principal(struct client_auth *a, const char *principal,
			  char *err, size_t errlen)
{
	char cn[AUTH_NAME_MAX + 2];

	if (!a->tls || !SSL_CTX_get0_certificate(a->tls)) {
		snprintf(err, errlen,
			 "--principal %s needs --secret_file, or --tls_cert, "
			 "--tls_key and --tls_ca to authenticate by "
			 "certificate",
			 principal);
		return -1;
	}
	if (tls_ctx_own_cn(a->tls, cn, sizeof(cn)) ||
	    strcmp(cn, principal) != 0) {
		snprintf(err, errlen,
			 "--principal %s: the CN of --tls_cert is '%s', not "
			 "the principal",
			 principal, cn[0] ? cn : "(none)");
		return -1;
	}
	a->by_cert = true;
	return 0;
}

int client_auth_setup(struct client_auth *a, const char *principal,
		      const char *secret_file, const struct tls_files *tf,
		      bool serves_tls, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	if (tls_files_check(tf, err, errlen))
		return -1;
	if (given(tf->ca)) {
		a->tls = tls_client_ctx(tf->ca, tf->cert, tf->key, err, errlen);
		if (!a->tls)
			return -1;
	} else if (given(tf->cert) && !serves_tls) {
		snprintf(err, errlen,
			 "--tls_cert needs --tls_ca (TLS to the master, whose "
			 "certificate must be verified)");
		return -1;
	}
	if (!given(principal)) {
		if (given(secret_file)) {
			snprintf(err, errlen,
				 "--secret_file needs --principal");
			return -1;
		}
		return 0;
	}
	if (!given(secret_file))
		return cert_principal(a, principal, err, errlen);
	if (auth_cred_load(principal, secret_file, &a->cred, err, errlen))
		return -1;
	a->has_cred = true;
	return 0;
}

bool client_auth_any(const struct client_auth *a)
{
	return a->has_cred || a->by_cert;
}

void client_auth_apply(const struct client_auth *a, rpc_client_config *cfg)
{
	cfg->cred = a->has_cred ? &a->cred : NULL;
	cfg->tls = a->tls;
}

void client_auth_free(struct client_auth *a)
{
	SSL_CTX_free(a->tls);
	a->tls = NULL;
	memset(&a->cred, 0, sizeof(a->cred));
}

const char *client_auth_hint(const char *error)
{
	if (!strstr(error, "UNAUTHENTICATED") &&
	    !strstr(error, "authentication refused"))
		return "";
	return "; " CLIENT_AUTH_FIX;
}
