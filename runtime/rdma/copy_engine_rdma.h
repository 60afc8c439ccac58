/*
 * The RDMA copy engine's private structures and the entry point tests use
 * to run it against a fake device. Not part of the copy_engine interface:
 * the worker uses copy_engine.h only.
 *
 * What the engine does (the contract copy_engine.h leaves to engines):
 *
 * Device. cfg->rdma_device names one (as ibv_devices lists it); NULL picks
 *   the first device with an ACTIVE port. The engine takes the device
 *   contexts rdma_cm opened (rdma_get_devices) so that the PD, the memory
 *   registered in it and the QPs rdma_cm creates all share one context.
 *   A connection whose route goes through another device is refused.
 *
 * Memory. register_memory registers [base, base+len) with
 *   LOCAL_WRITE|REMOTE_WRITE (only WRITEs travel: no REMOTE_READ);
 *   registering a range that one MR already covers registers nothing and
 *   answers that MR's rkey; a range that overlaps MRs without lying inside
 *   one gets MRs of its own. unregister_memory undoes one
 *   register_memory of the same range; the MRs go with the last one, or
 *   -EBUSY while a copy still reads them. See docs/RDMA.md for what the
 *   rkey exposes.
 *   A range above the device's max_mr_size is registered as consecutive
 *   MRs of max_mr_size bytes (the last shorter). The engine keeps them in a
 *   table: as a SOURCE the whole range works (each work request takes the
 *   lkey of the MR it lies in and never crosses an MR boundary). As a
 *   TARGET only the first MR is reachable: *addr_out is base and *rkey_out
 *   the first MR's rkey, and a warning is logged, since peers are handed a
 *   single rkey; a remote write beyond base + max_mr_size completes with a
 *   remote access error. NICs usually report a max_mr_size far above any
 *   segment size; one that must receive copies has to stay below it.
 *
 * Peers. Every engine listens on cfg->rdma_port (RDMA_DEFAULT_PORT when
 *   0; all addresses; the port is in copy_engine.listen_port) and accepts
 *   QPs in its PD, so that peers can write into the memory it registered;
 *   inbound QPs carry no work of their own. A source says who it is in the
 *   connect request's private data ("MCRP", version, its rdma_cm port);
 *   a new connection from the same address and port replaces the older
 *   one, which a crashed or reconnecting source left behind without a
 *   DISCONNECTED ever arriving. A worker advertises
 *   "host:listen_port" with its segments (MountSegment.rdma_endpoint); the
 *   master hands it out with each target (Replica.rdma_endpoint) and the
 *   engine dials copy_target.rdma_endpoint. Without one, only an explicit
 *   "host:data_port/rdma_port" endpoint is dialled; never the engine's own
 *   port, which on a shared host is the source's own listener (that would
 *   write with the target's rkey into the source's PD). The
 *   worker sends targets without an rdma_endpoint (older masters) over
 *   tcp. One RC QP per peer (host, port), created on the first copy to it
 *   and reused; a connection that fails is torn down and made again by
 *   the next copy. Hosts are numeric addresses (workers advertise them):
 *   a name is refused (-EINVAL) rather than resolved on the loop.
 *
 * Writes. One-sided RDMA WRITE from registered memory to remote_addr/rkey
 *   (remote_addr is the region's own address: the master adds the offset).
 *   copy_target.length, the granted region, must be set and bound the
 *   write, and remote_addr + len must not wrap (-EINVAL otherwise).
 *   A copy is split at the port's max message size and at local MR
 *   boundaries; at most max_wr = min(max_qp_wr, RDMA_MAX_SEND_WR) work
 *   requests are outstanding per QP, the rest wait in the connection's
 *   queue (FIFO) and are posted as completions free room. The last WR of a
 *   copy is signalled, and so is every signal_every-th WR in between
 *   (max_wr / 2) so the send queue drains. wr_id is the copy's context.
 *   Completion of the last WR -> callback(0). An error completion, a
 *   flushed WR outside teardown, a CM DISCONNECTED/ERROR/REJECTED/... event
 *   or a failed post tears the connection down: every copy on it gets
 *   callback(-EIO, reason), once, after its QP is gone. Teardown
 *   disconnects and then waits (at most RDMA_DRAIN_MS) for the completions
 *   of WRs already posted: a copy whose last WR completes still succeeds;
 *   flushed WRs are expected and neither logged nor reported. Destroy
 *   does not wait. A copy still running after
 *   cfg->timeout_ms gets -ETIMEDOUT; if it had WRs posted its connection is
 *   torn down too (a WR cannot be withdrawn), failing the others with -EIO.
 *   cfg->max_inflight and max_inflight_bytes are not enforced here: the
 *   worker bounds its copies; the engine bounds work requests.
 *
 * Events. The CM event channel, completion channel and device async fds
 *   are non-blocking and watched by the event_base. A QP or CQ error event
 *   fails that connection, PORT_ERR on our port fails all of them;
 *   DEVICE_FATAL and rdma_cm's DEVICE_REMOVAL fail all and make post_write
 *   answer -ENODEV from then on (rdma_async.c). CM events are acked as
 *   soon as they are read; CQ events are acked in batches of RDMA_CQ_ACK_BATCH (and before
 *   a CQ is destroyed), the CQ is re-armed, then drained. Callbacks run
 *   from an event made active (never inside post_write); destroy runs the
 *   outstanding ones itself (-ECANCELED for copies not finished).
 *   Destroying the engine from inside a completion callback is allowed.
 *   A successful copy's callback gets error NULL.
 *
 * register_memory accepts NULL addr_out / rkey_out.
 */
#ifndef MCREPL_DAEMON_COPY_ENGINE_RDMA_H
#define MCREPL_DAEMON_COPY_ENGINE_RDMA_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include "copy_engine.h"
#include "netutil.h"
#include "rdma_verbs.h"

#define RDMA_DEFAULT_PORT 20886 /* rdma_cm port when cfg->rdma_port is 0 */
#define RDMA_MAX_SEND_WR 128	/* outstanding WRs per QP, at most */
#define RDMA_CQ_ACK_BATCH 16	/* CQ events acked together */
#define RDMA_CM_TIMEOUT_MS 2000 /* address and route resolution */
#define RDMA_POLL_BATCH 16	/* completions per ibv_poll_cq */
#define RDMA_ERRLEN 512		/* longest callback reason, with NUL */
#define RDMA_HOSTLEN 256
#define RDMA_DRAIN_MS 1000 /* teardown waits this long for completions */

enum rdma_conn_state {
	RDMA_CONN_RESOLVING_ADDR,
	RDMA_CONN_RESOLVING_ROUTE,
	RDMA_CONN_CONNECTING,
	RDMA_CONN_ACCEPTING, /* inbound: accepted, not yet established */
	RDMA_CONN_CONNECTED,
};

struct rdma_conn;
struct rdma_engine;

/* One post_write: queued on its connection until fully posted, then in
 * flight until its last WR completes, then on the engine's done list. */
struct rdma_copy {
	TAILQ_ENTRY(rdma_copy) link;
	struct rdma_engine *e;
	struct rdma_conn *conn;
	const char *src;
	uint64_t len;
	uint64_t posted; /* bytes handed to post_send */
	uint64_t remote_addr;
	uint32_t rkey;
	copy_done_cb cb;
	void *arg;
	struct event *timer;
	int status;
	char error[RDMA_ERRLEN];
};
TAILQ_HEAD(rdma_copy_list, rdma_copy);

/* A signalled WR still outstanding: completions of one QP arrive in post
 * order, so the ring's head is the next one to complete. */
struct rdma_signal {
	uint64_t seq;
	struct rdma_copy *copy;
	bool last;
};

struct rdma_conn {
	TAILQ_ENTRY(rdma_conn) link;
	struct rdma_engine *e;
	char host[RDMA_HOSTLEN];
	uint16_t port;
	char peer[RDMA_HOSTLEN + 8]; /* "host:port" for messages */
	bool inbound;
	/* inbound: the source's address and rdma_cm port (from the connect
	 * request's private data; port 0 when it sent none) */
	char src_ip[NET_ADDRSTRLEN];
	uint16_t src_port;
	bool closing; /* torn down: waiting for its last completions */
	bool flushed; /* an error or flush completion: nothing more succeeds */
	int fail_status;
	char fail_why[RDMA_ERRLEN];
	struct event *drain_timer;
	enum rdma_conn_state state;
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	unsigned int cq_unacked;
	uint64_t posted_seq; /* WRs posted on this QP */
	uint64_t done_seq;   /* WRs known complete */
	uint32_t unsignalled;
	struct rdma_signal *ring; /* max_wr entries */
	uint32_t ring_head, ring_count;
	struct rdma_copy_list queue;
	struct rdma_copy_list inflight;
};
TAILQ_HEAD(rdma_conn_list, rdma_conn);

/* One MR. A registration (one register_memory that registered) is one MR
 * or, above max_mr_size, several consecutive ones sharing its gen: the
 * table is keyed by (reg_base, reg_len, gen), so a range unregistered and
 * registered again (a segment unmapped, another mapped at its address)
 * never meets the old MR. */
struct rdma_mr_entry {
	char *base; /* this MR */
	size_t len;
	struct ibv_mr *mr;
	char *reg_base; /* the registration it belongs to */
	size_t reg_len;
	uint64_t gen;
	uint32_t refs; /* register_memory calls it answered (first MR only) */
};

struct rdma_engine {
	struct copy_engine base; /* first: the interface casts to it */
	const struct rdma_verbs_ops *ops;
	void *octx;
	uint32_t timeout_ms;
	uint16_t rdma_port;

	/* Device and caps. */
	struct ibv_context **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char dev_name[IBV_SYSFS_NAME_MAX];
	uint8_t port_num;
	uint64_t max_mr_size;
	uint32_t max_msg;
	uint32_t max_wr;
	uint32_t signal_every;
	int cq_depth;

	/* Registered memory. */
	struct rdma_mr_entry *mrs;
	size_t n_mrs, cap_mrs;
	uint64_t mr_gen;

	/* Channels watched by the loop. */
	struct ibv_comp_channel *comp_ch;
	struct event *comp_ev;
	struct rdma_event_channel *cm_ch;
	struct event *cm_ev;
	struct rdma_cm_id *listen_id;
	struct event *async_ev; /* the device's async_fd */

	struct rdma_conn_list conns;
	struct rdma_copy_list done;
	struct event *done_ev;
	bool delivering;
	bool destroyed;
	bool dead; /* device fatal or removed: post_write says -ENODEV */
};

/* Like copy_engine_rdma_create, calling verbs through ops (with ops_ctx as
 * their first argument) instead of libibverbs/librdmacm. ops must outlive
 * the engine. NULL with a one-line reason in err. */
struct copy_engine *copy_engine_rdma_create_with(
    struct event_base *base, const struct copy_engine_config *cfg,
    const struct rdma_verbs_ops *ops, void *ops_ctx, char *err, size_t errlen);

/* Splits endpoint "host:port", "[v6]:port" or either followed by
 * "/rdma_port" into host (hostlen bytes) and the rdma_cm port to dial:
 * the explicit one, else default_port. 0, or -1 when malformed or when no
 * port results (default_port 0 and none given). */
int rdma_parse_endpoint(const char *endpoint, uint16_t default_port, char *host,
			size_t hostlen, uint16_t *port);

/* ---- internal, shared by the engine's files --------------------------- */

/* rdma_dev.c: device, PD and caps; the MR table. */
int rdma_dev_open(struct rdma_engine *e, const char *want, char *err,
		  size_t errlen);
void rdma_dev_close(struct rdma_engine *e);
int rdma_register_memory(struct copy_engine *ce, void *base, size_t len,
			 uint64_t *addr_out, uint32_t *rkey_out);
const struct rdma_mr_entry *rdma_mr_find(const struct rdma_engine *e,
					 const char *p);
bool rdma_mr_covers(const struct rdma_engine *e, const char *p, uint64_t len);
int rdma_unregister_memory(struct copy_engine *ce, void *base, size_t len);
void rdma_mr_release_all(struct rdma_engine *e);

/* rdma_conn.c: connections over rdma_cm. */
int rdma_cm_open(struct rdma_engine *e, char *err, size_t errlen);
void rdma_cm_close(struct rdma_engine *e);
struct rdma_conn *rdma_conn_get(struct rdma_engine *e, const char *host,
				uint16_t port, int *rc);
/* Tears conn down and fails its copies with status and the formatted
 * reason (logged unless quiet). Disconnects first; copies whose last WR
 * still completes succeed. While WRs are outstanding (and the engine is
 * not being destroyed) the QP stays until their completions or flushes
 * arrive, or RDMA_DRAIN_MS pass: on hardware they come
 * a moment after rdma_disconnect, not inside it. Then QP, CQ, id go and
 * conn is freed. A second call on a closing conn only hurries a destroy. */
void rdma_conn_fail(struct rdma_conn *conn, int status, bool quiet,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* conn is closing and nothing it posted can still complete. */
bool rdma_conn_quiet(const struct rdma_conn *conn);
/* The end of a closing conn's teardown: QP, copies, CQ, id; frees conn. */
void rdma_conn_finish(struct rdma_conn *conn);

/* rdma_async.c: the device's async events. */
int rdma_async_open(struct rdma_engine *e, char *err, size_t errlen);
void rdma_async_close(struct rdma_engine *e);
/* The device is gone (fatal error, removal): fail all, refuse copies. */
void rdma_device_dead(struct rdma_engine *e, const char *what);

/* copy_engine_rdma.c: the data path the connection code calls back. */
void rdma_conn_pump(struct rdma_conn *conn);
void rdma_conn_drain_closing(struct rdma_conn *conn);
void rdma_copy_finish(struct rdma_copy *c, int status, const char *error);
void rdma_log(const struct rdma_engine *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
