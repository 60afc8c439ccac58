/* Process harness for the demo, mcrepl-bench, the benches and the tests:
 * start real daemons on loopback, parse their ready line, stop them; and a
 * few RPC and HTTP conveniences for the Master. Not test-only, so it lives
 * with the tools' shared code (tools/common/), not in tests/. */
#ifndef MCREPL_TEST_HARNESS_H
#define MCREPL_TEST_HARNESS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "mcrepl.pb-c.h"
#include "rpc_client.h"

struct proc {
	pid_t pid;
	int out_fd;
	char ready[512];
};

/* Path of a built binary: $MCREPL_BIN_DIR/name (the Makefile sets it). */
const char *harness_bin(const char *name, char *buf, size_t cap);

/* Fork/exec argv (NULL-terminated; argv[0] = path) with stdout on a pipe
 * (stderr: inherited, or appended to $MCREPL_TEST_LOG_DIR/<program>.log
 * when that is set);
 * wait up to timeout_ms for a stdout line starting with ready_prefix. The
 * child dies with the test process (PR_SET_PDEATHSIG). 0 or -1. */
int proc_start(struct proc *p, char *const argv[], const char *ready_prefix,
	       int timeout_ms);
/* SIGTERM, wait up to 3 s, then SIGKILL; returns the exit status or -1. */
int proc_stop(struct proc *p);
void proc_kill9(struct proc *p);
/* The number after "name=" in the ready line, or 0. */
uint64_t proc_field(const struct proc *p, const char *name);

/* A master started with extra flags (NULL-terminated list), waiting for
 * its ready line harness_ready_ms() at most. */
int master_start(struct proc *p, const char *const *flags);

/* $MCREPL_TEST_TIMEOUT_SCALE: a whole number 1..1000 (1 when unset or
 * invalid) that multiplies every bound of the daemon tests
 * (tests/daemons/wait.h) and master_start()'s. */
int harness_timeout_scale(void);
/* master_start()'s bound on a hang: HARNESS_READY_MS times the scale. */
#define HARNESS_READY_MS 20000
int harness_ready_ms(void);

/* A private temporary directory "$TMPDIR/mcrepl-<what>-XXXXXX" (TMPDIR
 * unset: /tmp) into dir[cap]: 0, or -1 (errno). The test targets point
 * TMPDIR into the build tree, so what a killed run leaves stays there. */
int harness_mkdtemp(char *dir, size_t cap, const char *what);
/* Removes a directory harness_mkdtemp(what) made, and only such a one
 * (its name starts "mcrepl-<what>-"): the refusal keeps a wrong path from
 * becoming "rm -rf". */
void harness_rmdtemp(const char *dir, const char *what);

/* Blocking client to 127.0.0.1:port; NULL on failure. */
rpc_client *harness_client(uint16_t port);
/* The same, authenticating as cred (auth.h; NULL = none). */
struct auth_cred;
rpc_client *harness_client_as(uint16_t port, const struct auth_cred *cred);
/* TLS for the clients above and preload's (tls.h client context,
 * borrowed; NULL = plain TCP, the default). */
struct ssl_ctx_st;
void harness_set_tls(struct ssl_ctx_st *ctx);
struct ssl_ctx_st *harness_tls(void);
/* A throw-away CA and server certificate in dir (made with the openssl
 * command; EC P-256, one day): ca.pem, and server.pem / server.key
 * (mode 600) with SAN IP:127.0.0.1 and DNS:localhost. 0 or -1. */
int harness_make_certs(const char *dir);
/* Removes them (and the CA's key and serial). */
void harness_remove_certs(const char *dir);
/* Call Master method `name`; returns the unpacked response (caller frees
 * with protobuf_c_message_free_unpacked) or NULL (err filled). */
ProtobufCMessage *harness_call(rpc_client *c, const char *name,
			       const ProtobufCMessage *req, int *status);

/* HTTP GET of 127.0.0.1:port path; malloc'd response or NULL (no
 * connection, or no whole answer within HARNESS_HTTP_TIMEOUT_MS: a peer
 * that accepts and never answers or closes, said on stderr). */
#define HARNESS_HTTP_TIMEOUT_MS 5000
char *http_get(uint16_t port, const char *path);
/* The value of an exact metric line "name value" in a /metrics page. */
long long metric_value(const char *page, const char *name);

void harness_sleep_ms(int ms);

/* ---- authentication ----
 * A throwaway auth file in a private temporary directory: each line of
 * `lines` is a principal as in an auth file without its secret ("worker w1
 * hosts=host-a domains=* max_capacity=1G"); a random secret is added to it
 * and written to <dir>/<name>.secret (mode 600) for the clients. */
#define HARNESS_AUTH_MAX 16
struct harness_auth {
	char dir[256];
	char file[320]; /* the auth file, for --auth_file */
	size_t n;
	char names[HARNESS_AUTH_MAX][65];
	char secrets[HARNESS_AUTH_MAX][65];
	/* per principal: "--principal=NAME", "--secret_file=PATH" */
	char principal_flag[HARNESS_AUTH_MAX][80];
	char secret_flag[HARNESS_AUTH_MAX][400]; /* path < 380 */
};

/* The principals every authenticated fixture gets when lines is NULL: a
 * worker "worker" (any host, domain, 1 TiB) and a client "admin" (every
 * tenant and right). 0, or -1 with a message on stderr. */
int harness_auth_setup(struct harness_auth *a, const char *const *lines);
/* Removes the files and the directory. */
void harness_auth_cleanup(struct harness_auth *a);
/* Path of name's secret file (in buf). */
const char *harness_auth_secret_file(const struct harness_auth *a,
				     const char *name, char *buf, size_t cap);

#endif
