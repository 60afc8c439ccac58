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

#include <stdbool.h>
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

/* ---- connections lent out, and hedged reads (data_race.c) ---------- */

/* The endpoint's open connection taken out of the pool (*reused; fresh:
 * never), else a new one: *fd is the caller's until data_pool_give() or
 * close(). pool NULL: always a new one. 0 or a negative errno (err). */
int data_pool_take(struct data_pool *p, const char *ep, int timeout_ms,
		   bool fresh, int *fd, bool *reused, char *err, size_t errlen);
/* A connection back into the pool after a whole request and reply (closed
 * when pool is NULL or already holds one for ep). */
void data_pool_give(struct data_pool *p, const char *ep, int fd);
void data_pool_count_retry(struct data_pool *p);

/* One READ of head_len + len bytes: head_len into head (a stamp), the rest
 * into buf. */
struct data_read_req {
	const char *ep;
	uint64_t segment_id, offset;
	void *head, *buf;
	uint64_t head_len, len;
	struct data_grant grant;
};

/* Up to DATA_RACE_SLOTS READs in flight at once, each on a connection of
 * its own, without threads: data_race_wait() polls them and returns the
 * first to finish. A finished READ's connection goes back to the pool
 * when the reply was whole, else it is closed, as is a cancelled one's,
 * so no stream is reused out of step. A READ failing in transport on a
 * reused connection is sent once more on a new one (as data_read). */
#define DATA_RACE_SLOTS 2
struct data_race_slot {
	struct data_read_req q;
	int fd; /* -1: idle */
	bool reused, have_resp;
	int64_t deadline;
	uint8_t hdr[DATA_RESP_BYTES];
	struct data_resp resp;
	uint64_t got; /* reply bytes after the header received */
	char text[DATA_ERR_MAX + 1];
};
struct data_race {
	struct data_pool *pool;
	int timeout_ms; /* bounds each READ, connect included */
	struct data_race_slot slot[DATA_RACE_SLOTS];
};

void data_race_init(struct data_race *r, struct data_pool *pool,
		    int timeout_ms);
/* Sends q on slot (idle). 0, or a negative errno (err): the slot stays
 * idle. */
int data_race_start(struct data_race *r, int slot,
		    const struct data_read_req *q, char *err, size_t errlen);
/* Waits until a READ in flight finishes or the net_now_ms() deadline
 * `until` passes (< 0: none but the READs' own): the slot that finished
 * (idle again) with its status in *st (0 or as data_read, reason in
 * err); -1 when until passed first; -2 when no READ is in flight. */
int data_race_wait(struct data_race *r, int64_t until, int *st, char *err,
		   size_t errlen);
/* Closes slot's connection, its READ abandoned (no-op when idle). */
void data_race_cancel(struct data_race *r, int slot);
/* The slot has a READ in flight. */
bool data_race_busy(const struct data_race *r, int slot);

#endif
