/*
 * The client side of the worker data plane (data_proto.h): blocking READ
 * and WRITE requests, either one-shot (connect, one request, close) or
 * through a pool that keeps connections open between requests.
 *
 * A pool holds at most max_conns open connections, one per endpoint
 * ("host:port"), and closes the least recently used one to make room. A
 * request takes the endpoint's cached connection (a peer that has closed
 * it, e.g. the worker's idle timeout, is noticed before sending and a new
 * connection is made instead), or connects. After a successful request
 * the connection stays cached; after any failure it is closed, so a
 * stream is never reused out of step.
 *
 * Grants: every READ and WRITE carries the master's grant for exactly
 * that op and region (data_proto.h, grant.h), as the master handed it out
 * in the Replica (grant_object_id, grant_expires_ms, grant_tag); NULL or a
 * zero grant is refused by the worker (-EACCES).
 *
 * Retry: when a request on a reused connection fails in transport (reset,
 * end of stream, malformed reply; not a timeout, and not a refusal by the
 * worker, which a new connection would get again), it is sent once more
 * on a new connection. For READs this is plainly safe. For WRITEs it is
 * safe too: a WRITE carries a master-granted region (segment, offset,
 * length, grant) of a PROCESSING replica that no reader sees before
 * PutEnd, and the retry writes the very same bytes to the very same
 * region, so a first attempt that landed wholly, partly or not at all
 * ends with the same contents. (The region stays the writer's until it
 * calls PutEnd or PutRevoke, which it does only after this call returns.)
 *
 * Status: 0, or a negative errno with one line in err: a refusal by the
 * worker maps through data_status_errno() (-EACCES grant refused, a READ's
 * region holding another object included, -EKEYEXPIRED grant expired,
 * -ESTALE from older workers: region holds another object, -ERANGE
 * range, -ENOENT segment, -EMSGSIZE too large); -EINVAL bad endpoint;
 * -ECONNREFUSED cannot connect; -ETIMEDOUT; -EPROTO malformed reply;
 * other transport errors as their errno.
 *
 * Thread-safety: a pool must not be used by two threads at once; distinct
 * pools and the one-shot calls (pool NULL) are independent. The process
 * need not ignore SIGPIPE (sends use MSG_NOSIGNAL).
 */
#ifndef MCREPL_DAEMON_DATA_CLIENT_H
#define MCREPL_DAEMON_DATA_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "data_proto.h"

#define DATA_POOL_DEFAULT_CONNS 16

struct data_pool;

/* A pool of at most max_conns connections (0 = DATA_POOL_DEFAULT_CONNS);
 * NULL when out of memory. */
struct data_pool *data_pool_create(size_t max_conns);

/* Closes every connection, frees. Accepts NULL. */
void data_pool_destroy(struct data_pool *p);

/* Cumulative counters of a pool. */
struct data_pool_stats {
	uint64_t connects; /* connections made */
	uint64_t reuses;   /* requests sent on an already open connection */
	uint64_t retries;  /* requests sent again after a transport failure */
	uint64_t evicted;  /* connections closed to make room (LRU) */
	size_t open;	   /* open now */
};
void data_pool_get_stats(const struct data_pool *p,
			 struct data_pool_stats *out);

/* READs len bytes at offset of segment_id on endpoint into buf. pool NULL
 * = one-shot. The timeout bounds each attempt, connect included. */
int data_read(struct data_pool *pool, const char *endpoint, uint64_t segment_id,
	      uint64_t offset, void *buf, uint64_t len,
	      const struct data_grant *grant, int timeout_ms, char *err,
	      size_t errlen);

/* One READ of head_len + len bytes: the first head_len into head (a
 * stamp), the rest into buf (the object); as data_read. */
int data_read_parts(struct data_pool *pool, const char *endpoint,
		    uint64_t segment_id, uint64_t offset, void *head,
		    uint64_t head_len, void *buf, uint64_t len,
		    const struct data_grant *grant, int timeout_ms, char *err,
		    size_t errlen);

/* WRITEs len bytes of buf at offset of segment_id with the master's
 * grant; as data_read. */
int data_write(struct data_pool *pool, const char *endpoint,
	       uint64_t segment_id, uint64_t offset, const void *buf,
	       uint64_t len, const struct data_grant *grant, int timeout_ms,
	       char *err, size_t errlen);

/* One WRITE of head[0, head_len) then buf[0, len) (a stamp then the
 * object, without copying them together); as data_write. */
int data_write_parts(struct data_pool *pool, const char *endpoint,
		     uint64_t segment_id, uint64_t offset, const void *head,
		     uint64_t head_len, const void *buf, uint64_t len,
		     const struct data_grant *grant, int timeout_ms, char *err,
		     size_t errlen);

#endif
