/* The history test's cluster: a throw-away etcd, two HA masters with an
 * --auth_file, three workers (tools/common/harness.h, etcd_proc.h), and
 * the faults done to them. Used from the runner's main thread only. */
#ifndef MCREPL_HISTORY_CLUSTER_H
#define MCREPL_HISTORY_CLUSTER_H

#include <stdbool.h>

#include "auth.h"
#include "etcd_proc.h"
#include "harness.h"
#include "netns.h"

#define CLUSTER_MASTERS 2
#define CLUSTER_WORKERS 3

struct cluster {
	struct netns *ns; /* NULL: everything on loopback */
	struct etcd_proc etcd;
	struct harness_auth auth;
	struct proc m[CLUSTER_MASTERS], w[CLUSTER_WORKERS];
	bool etcd_up, auth_up;
	char endpoints[256]; /* etcd's */
	char ep_flag[300], auth_flag[400];
	char addr[300];	       /* the clients' "etcd://..." */
	struct auth_cred cred; /* the client "admin" */
};

/* Starts everything, the first master leading; in c->ns's namespaces
 * when it is set (before the call), the caller in NS_CLIENT's. 0, or -1 with a line on
 * stderr (what started is stopped by cluster_stop()). */
int cluster_start(struct cluster *c);
void cluster_stop(struct cluster *c);
/* The leading master by /health, polled up to timeout_ms; -1 if none. */
int cluster_leader(struct cluster *c, int timeout_ms);
/* kill -9 master i, start it again (ready line awaited): 0 or -1. */
int cluster_restart_master(struct cluster *c, int i);

/* HTTP GET of addr:port path into buf (NUL-terminated), within 1 s for
 * each step (a stopped process answers nothing): 0 or -1. */
int cluster_http_get(const char *addr, uint16_t port, const char *path,
		     char *buf, size_t cap);

#endif
