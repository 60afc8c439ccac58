/*
 * What a program that calls the master authenticates with, made once from
 * its flags (the worker, the cli, the store client's users, the benches):
 *
 *   --principal NAME --secret_file F   the HMAC handshake (rpc_auth.h)
 *   --principal NAME --tls_cert C --tls_key K, no --secret_file
 *                                      its client certificate (CN = NAME,
 *                                      checked here), for a master with
 *                                      mutual TLS and NAME auth=cert
 *   --tls_ca CA                        TLS to the master (tls.h); needed
 *                                      for a certificate to be presented
 *
 * A program that also serves TLS itself (the worker's HTTP port) may give
 * --tls_cert/--tls_key without --tls_ca; elsewhere that is an error.
 */
#ifndef MCREPL_DAEMON_CLIENT_AUTH_H
#define MCREPL_DAEMON_CLIENT_AUTH_H

#include <stdbool.h>
#include <stddef.h>

#include "auth.h"
#include "rpc_client.h"
#include "tls.h"

struct client_auth {
	struct auth_cred cred;
	bool has_cred; /* by secret */
	bool by_cert;  /* by the client certificate */
	SSL_CTX *tls;  /* TLS to the master; NULL = plain TCP */
};

/* Fills a from the flags (NULL or "" = not given). serves_tls: the
 * program serves TLS with --tls_cert/--tls_key too. 0, or -1 with one
 * line in err naming the flag. client_auth_free after either. */
int client_auth_setup(struct client_auth *a, const char *principal,
		      const char *secret_file, const struct tls_files *tf,
		      bool serves_tls, char *err, size_t errlen);

/* Whether a authenticates to the master at all (protected mode). */
bool client_auth_any(const struct client_auth *a);

/* Sets cfg's credential and TLS context from a (borrowed). */
void client_auth_apply(const struct client_auth *a, rpc_client_config *cfg);

void client_auth_free(struct client_auth *a);

/* What to fix when the master refused to authenticate us. */
#define CLIENT_AUTH_FIX                                                        \
	"check --principal and --secret_file (or --tls_cert and --tls_key "    \
	"for an auth=cert principal) against the master's --auth_file"

/* What to add to an error message that says the master refused to
 * authenticate us ("; " CLIENT_AUTH_FIX), or "". */
const char *client_auth_hint(const char *error);

#endif
