/* The fixture of the suites that run one real master on loopback, with or
 * without an auth file, and at most one real worker (host-a, TCP), and
 * open store clients to it (check_auth, check_grant, check_grant_attack,
 * check_integrity, check_quota, check_reservations, check_stamp_forge).
 * What differs between them is in struct mwfix_opts; failures are Check
 * assertions. */
#ifndef MCREPL_TEST_MWFIX_H
#define MCREPL_TEST_MWFIX_H

#include <stdint.h>

#include "auth.h"
#include "harness.h"
#include "store_client.h"

struct mwfix_opts {
	/* Auth file principals as harness_auth_setup() takes them; NULL: no
	 * auth file (the master runs without --auth_file). */
	const char *const *principals;
	/* Text appended to the auth file (tenant lines), or NULL. */
	const char *auth_text;
	/* The master's flags, NULL-terminated (NULL: none), then one more
	 * (NULL: none); --auth_file comes first when there are principals. */
	const char *const *master_flags;
	const char *master_flag;
	/* The worker's --segment_size ("1M"); NULL: no worker. */
	const char *segment_size;
	/* The principal the worker runs as (NULL: none), and one more worker
	 * flag (NULL: none). */
	const char *worker_principal;
	const char *worker_flag;
	/* Waits until the master's capacity is this many bytes (the worker's
	 * segment mounted); 0: does not wait. */
	uint64_t wait_capacity;
};

struct mwfix {
	struct proc master, worker;
	struct harness_auth auth;
	/* each principal's credential, in the order of opts.principals */
	struct auth_cred cred[HARNESS_AUTH_MAX];
	uint16_t port, http; /* the master's RPC and metrics ports */
	char addr[64];	     /* "127.0.0.1:<port>" */
	struct mwfix_opts opts;
};

/* Clears f, makes the auth file and loads every principal's credential
 * (when o has principals), starts the master, then the worker (when o
 * has a segment size) and waits for its segment when o says so. f keeps
 * a copy of o: its lists and strings must stay valid as long as
 * mwfix_master() may start f's master again. */
void mwfix_start(struct mwfix *f, const struct mwfix_opts *o);
/* Starts f's master again (after proc_kill9(&f->master)) with f's flags,
 * extra in place of the one more flag (NULL: none). */
void mwfix_master(struct mwfix *f, const char *extra);
/* Stops the worker and the master, removes the auth file: 0 when the
 * master and the worker (when one ran) exited 0, else -1. */
int mwfix_stop(struct mwfix *f);

/* The metric name on the master's /metrics page (-1: no such line). */
long long mwfix_metric(const struct mwfix *f, const char *name);
/* The credential of principal name (asserted to be one of f's). */
const struct auth_cred *mwfix_cred(const struct mwfix *f, const char *name);
/* A store client of tenant on f's master with cfg (NULL: the defaults);
 * its open asserted. */
store_client *mwfix_client(const struct mwfix *f, const char *tenant,
			   const struct store_client_config *cfg);
/* The same with the defaults and cred (NULL: none). */
store_client *mwfix_client_as(const struct mwfix *f, const char *tenant,
			      const struct auth_cred *cred);
/* key, got through c, is exactly obj[0, len). */
void mwfix_assert_reads(store_client *c, const char *key, const void *obj,
			uint64_t len);

#endif
