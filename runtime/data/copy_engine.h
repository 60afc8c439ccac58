/*
 * The copy-engine interface: post a write of local bytes to a remote
 * region, get a completion callback on the worker's event loop. Two
 * engines implement it: tcp (copy_engine_tcp.c, always built) and rdma
 * (copy_engine_rdma.c, built when libibverbs and librdmacm are present;
 * otherwise copy_engine_rdma_stub.c answers "not built").
 *
 * Threading: an engine belongs to the thread running its event_base; every
 * call and every callback happens on that thread.
 */
#ifndef MCREPL_DAEMON_COPY_ENGINE_H
#define MCREPL_DAEMON_COPY_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "data_proto.h"

/* Where the bytes go: as handed out by the master (a Replica message). */
struct copy_target {
	const char *endpoint; /* "host:data_port" of the target worker */
	uint64_t segment_id;
	uint64_t offset; /* within the target segment */
	uint64_t length;
	struct data_grant grant; /* the master's WRITE grant for the region */
	uint64_t remote_addr;	 /* RDMA: registered address of the region */
	uint32_t rkey;		 /* RDMA: remote key of the target segment */
	/* RDMA: "host:port" of the target's rdma_cm listener, as the target
	 * advertised it through the master; NULL or "" when the master sent
	 * none (then only tcp can reach the target). */
	const char *rdma_endpoint;
};

/* Completion: status 0, or a negative errno with a one-line reason. */
typedef void (*copy_done_cb)(int status, const char *error, void *arg);

struct copy_engine;

struct copy_engine_ops {
	const char *name; /* "tcp", "rdma" */
	/* Make local memory [base, base+len) a valid source (RDMA registers
	 * it; TCP does nothing). 0 or negative errno. */
	int (*register_memory)(struct copy_engine *e, void *base, size_t len,
			       uint64_t *addr_out, uint32_t *rkey_out);
	/* Start copying len bytes at src to dst; cb runs exactly once, later,
	 * on the loop (never inside post_write). 0 when posted, or a negative
	 * errno (cb not called). src must stay valid until cb. */
	int (*post_write)(struct copy_engine *e, const void *src, uint64_t len,
			  const struct copy_target *dst, copy_done_cb cb,
			  void *arg);
	/* Fail every copy in flight (cb with -ECANCELED) and free. */
	void (*destroy)(struct copy_engine *e);
	/* Undo one register_memory of the same range before unmapping it;
	 * 0, -ENOENT, or -EBUSY while a copy reads it. NULL: nothing to
	 * undo (tcp). */
	int (*unregister_memory)(struct copy_engine *e, void *base, size_t len);
};

struct copy_engine {
	const struct copy_engine_ops *ops;
	struct event_base *base;
	uint16_t listen_port; /* rdma: the rdma_cm port peers dial; tcp: 0 */
};

struct copy_engine_config {
	uint32_t max_inflight;	     /* copies in flight at once (8) */
	uint64_t max_inflight_bytes; /* bytes in flight at once (256 MiB) */
	uint32_t timeout_ms;	     /* per copy (30000) */
	const char *rdma_device;     /* NULL: the first active port */
	uint16_t rdma_port;	     /* rdma_cm port of this worker */
};

void copy_engine_config_init(struct copy_engine_config *cfg);

/* Engines. NULL with a one-line reason in err when unavailable. */
struct copy_engine *copy_engine_tcp_create(struct event_base *base,
					   const struct copy_engine_config *cfg,
					   char *err, size_t errlen);
struct copy_engine *
copy_engine_rdma_create(struct event_base *base,
			const struct copy_engine_config *cfg, char *err,
			size_t errlen);

/* --transport=auto|tcp|rdma: auto tries rdma when a device exists, else
 * tcp; *why_out gets a static one-line explanation of the choice. */
struct copy_engine *copy_engine_select(struct event_base *base,
				       const char *transport,
				       const struct copy_engine_config *cfg,
				       const char **why_out, char *err,
				       size_t errlen);

static inline void copy_engine_destroy(struct copy_engine *e)
{
	if (e)
		e->ops->destroy(e);
}

#endif
