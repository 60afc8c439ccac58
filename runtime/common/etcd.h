/*
 * A small asynchronous etcd v3 client over etcd's JSON gateway (POST
 * /v3/..., keys and values base64, 64-bit integers as JSON strings), on a
 * libevent loop with libevent's HTTP client: nothing here blocks the loop.
 * Only what master election needs: lease grant / keep-alive / revoke, a
 * put-if-absent transaction on one key bound to a lease, a range get of one
 * key, and a delete of one key held under a given lease.
 *
 * Endpoints: "host:port[,host:port...]" (an "http://" prefix is accepted).
 * A request that fails in transport (refused, reset, timed out) is sent
 * again to the next endpoint, at most once per endpoint; the endpoint that
 * answered is used first next time. An HTTP or gateway error (etcd answered)
 * is not retried.
 *
 * Callbacks run on the loop, exactly once per accepted request, unless the
 * client is destroyed first (then never). etcd_destroy() may be called from
 * a callback.
 *
 * Thread-safety: one client belongs to the thread running its event_base.
 * etcd_get_sync() is a blocking one-shot look-up with its own private loop,
 * for blocking callers (the store client, the cli).
 */
#ifndef MCREPL_DAEMON_ETCD_H
#define MCREPL_DAEMON_ETCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#define ETCD_MAX_ENDPOINTS 8
#define ETCD_VALUE_MAX 256 /* longest value kept (leader addresses) */

struct etcd;

struct etcd_result {
	int status;	   /* 0 ok; -1 no endpoint answered; -2 etcd refused */
	char err[160];	   /* why, when status != 0 */
	uint64_t revision; /* header.revision */
	uint64_t cluster_id; /* header.cluster_id */
	int64_t lease_id;    /* lease grant / keep-alive */
	int64_t ttl;	     /* lease grant / keep-alive: 0 = lease gone */
	bool succeeded;	     /* txn: the compare held */
	bool found;	     /* get / failed txn: the key exists */
	char value[ETCD_VALUE_MAX]; /* its value (truncated to fit) */
	uint64_t create_revision, mod_revision;
	int64_t lease; /* the key's lease (0: none) */
};

typedef void (*etcd_cb)(const struct etcd_result *r, void *arg);

/* A client for endpoints; timeout_ms bounds each HTTP exchange. NULL with
 * the reason in err for a bad endpoint list or no memory. */
struct etcd *etcd_create(struct event_base *base, const char *endpoints,
			 int timeout_ms, char *err, size_t errlen);
void etcd_destroy(struct etcd *e);
/* The endpoint list could be parsed (for flag validation). */
bool etcd_endpoints_valid(const char *endpoints);
/* Requests sent and not answered yet. */
size_t etcd_pending(const struct etcd *e);

/* Each returns 0 when the request was sent (cb will run), -1 when it could
 * not be (no memory): cb is not called then. */
int etcd_lease_grant(struct etcd *e, int64_t ttl_s, etcd_cb cb, void *arg);
int etcd_lease_keepalive(struct etcd *e, int64_t id, etcd_cb cb, void *arg);
int etcd_lease_revoke(struct etcd *e, int64_t id, etcd_cb cb, void *arg);
/* Put key=value under lease only if the key does not exist (compare
 * create_revision == 0). r->succeeded true: created, r->revision is its
 * create_revision; false: r->found/value/create_revision/lease describe
 * the holder. */
int etcd_put_if_absent(struct etcd *e, const char *key, const char *value,
		       int64_t lease, etcd_cb cb, void *arg);
int etcd_get(struct etcd *e, const char *key, etcd_cb cb, void *arg);
/* Deletes key (no error when it does not exist). */
int etcd_delete(struct etcd *e, const char *key, etcd_cb cb, void *arg);

/* Blocking get of one key through a private loop, within timeout_ms in
 * all. 0 with *r filled (r->found says whether the key exists), or -1 with
 * the reason in r->err. */
int etcd_get_sync(const char *endpoints, const char *key, int timeout_ms,
		  struct etcd_result *r);

#endif
