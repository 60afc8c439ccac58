/*
 * A fake RDMA device behind the engine's ops table (rdma_verbs_ops), for
 * tests/daemons/check_rdma.c: it records work requests, completes them when
 * a test says so, answers rdma_cm by itself (auto_cm) or step by step, and
 * flags verbs misuse (a resource freed while another still uses it, a
 * send queue overflowed, unacked CQ events at destroy) in f->violation.
 * Test support only; built with RDMA_CFLAGS (mk/rdma.mk).
 */
#ifndef MCREPL_TEST_RDMA_FAKE_H
#define MCREPL_TEST_RDMA_FAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "copy_engine_rdma.h"

#define MiB (1024u * 1024u)
#define FAKE_MAX_DEV 4
#define FAKE_MAX_WR 2048
#define FAKE_MAX_LOG 64
#define FAKE_MAX_IDS 64
#define FAKE_MAX_MRS 64
#define FAKE_MAX_EVENTS 64

/* ---- the fake device ---------------------------------------------------- */

enum fake_op {
	OP_ALLOC_PD,
	OP_REG_MR,
	OP_COMP_CH,
	OP_CREATE_CQ,
	OP_REQ_NOTIFY,
	OP_POST_SEND,
	OP_CM_CH,
	OP_CREATE_ID,
	OP_BIND,
	OP_LISTEN,
	OP_RESOLVE_ADDR,
	OP_RESOLVE_ROUTE,
	OP_CREATE_QP,
	OP_CONNECT,
	OP_ACCEPT,
	OP_REJECT,
	OP_DISCONNECT,
	OP_ACK_CQ,
	OP_MAX
};

struct fake_dev {
	struct ibv_device dev;
	struct ibv_context ctx;
	struct ibv_device_attr attr;
	uint8_t nports;
	enum ibv_port_state state[2];
	uint32_t max_msg;
	int async_wfd; /* ctx.async_fd is the read end */
	struct ibv_async_event async_q[16];
	int n_async;
};

struct fake_comp {
	struct ibv_comp_channel ch;
	int wfd;
	struct fake_cq *pending[256];
	int n_pending;
	int cqs;
};

struct fake_cq {
	struct ibv_cq cq;
	struct fake_comp *comp;
	struct ibv_wc *wc;
	int cap, head, count;
	bool armed;
	unsigned int unacked;
	int qps;
};

struct fake_id;

struct fake_qp {
	struct ibv_qp qp;
	struct fake_cq *cq;
	struct fake_id *fid; /* the rdma_cm id it belongs to */
	uint32_t max_send_wr;
	uint32_t outstanding; /* fabric: WRs posted, not yet completed */
	bool error;
};

/* An MR as the device keeps it: which PD, which access, which bytes. */
struct fake_mr {
	struct ibv_mr mr;
	int access;
	struct fake_mr *next;
};

/* An rdma_cm id; on a fabric it knows the id at the other end. */
struct fake_id {
	struct rdma_cm_id id;
	struct fake *owner;
	struct fake_id *peer;
	uint32_t dst_ip; /* host order, as resolve_addr was given it */
	uint16_t dst_port;
	uint8_t private_data[56];
	uint8_t private_len;
};

struct fake_cm {
	struct rdma_event_channel ch;
	int wfd;
	struct rdma_cm_event *q[FAKE_MAX_EVENTS];
	int n;
};

struct fake_wr {
	struct fake_qp *qp;
	uint64_t wr_id;
	uint64_t addr;
	uint32_t len;
	uint32_t lkey;
	uint64_t raddr;
	uint32_t rkey;
	bool sig;
	bool done;
};

struct fake_fabric;

struct fake {
	struct fake_fabric *fabric; /* NULL: a lone device, driven by hand */
	uint32_t ip;		    /* on a fabric: this node's address */
	struct fake_mr *mrs;	    /* live MRs, newest first */
	uint32_t mr_key_base;
	struct fake_dev devs[FAKE_MAX_DEV];
	int ndev;
	bool no_cm;
	bool auto_cm;
	struct ibv_context *route_dev; /* id->verbs after ADDR_RESOLVED */
	int calls[OP_MAX];
	int fail_nth[OP_MAX];
	int alive_pd, alive_mr, alive_cq, alive_qp, alive_id, alive_comp,
	    alive_cm;
	struct ibv_context *pd_ctx;
	struct fake_comp *comp;
	struct fake_cm *cm;
	struct rdma_cm_id *ids[FAKE_MAX_IDS];
	bool id_alive[FAKE_MAX_IDS];
	int n_ids;
	struct rdma_cm_id *listen_id;
	uint16_t bound_port;
	struct sockaddr_storage dst;
	struct fake_wr wr[FAKE_MAX_WR];
	int n_wr;
	size_t mr_len[FAKE_MAX_MRS];
	char *mr_addr[FAKE_MAX_MRS];
	int n_mr;
	uint32_t next_qpn;
	char log[FAKE_MAX_LOG][512];
	int n_log;
	char violation[256];
	struct event_base *base;
};

#define AS(type, p) ((struct type *)(void *)(p))

/* ---- the fabric: several fakes in one process that move bytes ----------
 *
 * Each node is a struct fake with its own device, PD, MRs and rdma_cm
 * channel, all on one event_base. rdma_connect reaches the node whose
 * address and listening port match the resolved destination (or is
 * rejected); the listener gets CONNECT_REQUEST (with the private data),
 * accept establishes both ends. A posted WRITE is executed later, from the
 * fabric's tick: the local SGE must lie in an MR of the QP's PD with that
 * lkey, the remote range in an MR of the peer QP's PD with that rkey and
 * REMOTE_WRITE, else the WR completes with LOC_PROT_ERR or REM_ACCESS_ERR
 * and the QP goes to error; otherwise the bytes are copied and a signalled
 * WR completes (tick_budget WRs per loop turn, if set). WRs behind an error, or posted on a QP in error, are
 * flushed at the next tick (never inside disconnect). hold_completions
 * keeps successful completions back until fabric_release. */

#define FAKE_MAX_NODES 8

struct fake_job {
	struct fake_job *next;
	struct fake *f;
	struct fake_qp *qp;
	struct fake_wr wr;
	enum ibv_wc_status status; /* of a held completion */
};

struct fake_fabric {
	struct event_base *base;
	struct event *tick;
	struct fake *nodes[FAKE_MAX_NODES];
	int n_nodes;
	struct fake_job *jobs, **jobs_tail; /* WRs to execute, in post order */
	struct fake_job *held, **held_tail; /* completions held back */
	bool hold_completions;
	bool silent;	      /* a crash: disconnects never reach the peer */
	uint32_t tick_budget; /* WRs executed per loop turn, 0: all */
	uint64_t bytes_written;
	uint32_t writes, access_errors;
	uint16_t next_src_port;
};

extern const struct rdma_verbs_ops fake_ops;

/* One device "fake0" with an ACTIVE port; CM answers by itself. */
struct fake *fake_new(void);
/* Asserts every resource was released without a violation, then frees. */
void fake_free(struct fake *f);
void fake_add_dev(struct fake *f, const char *name, enum ibv_port_state p1,
		  enum ibv_port_state p2);

/* The engine config tests start from, and engines on f's device. */
void fake_cfg_init(struct copy_engine_config *cfg);
struct copy_engine *fake_engine_new(struct fake *f,
				    const struct copy_engine_config *cfg);
struct copy_engine *fake_engine_default(struct fake *f);

/* Eight non-blocking turns of f's loop. */
void fake_run(struct fake *f);
bool fake_logged(const struct fake *f, const char *part);

/* Completions and events as the device and rdma_cm would queue them. */
void fake_cq_push(struct fake *f, struct fake_cq *cq, uint64_t wr_id,
		  enum ibv_wc_status status);
void fake_cm_push(struct fake *f, struct rdma_cm_id *id,
		  struct rdma_cm_id *listen_id, enum rdma_cm_event_type type,
		  int status);
/* ADDR_RESOLVED binds the id to a device; DISCONNECTED flushes its QP. */
void fake_cm_event(struct fake *f, struct rdma_cm_id *id,
		   enum rdma_cm_event_type type, int status);
struct rdma_cm_id *fake_id_new(struct fake *f, struct rdma_event_channel *ch,
			       void *context);
/* Completes the next n signalled WRs (and the unsignalled ones before
 * them on the same QP), in post order, then runs the loop. */
void fake_complete(struct fake *f, int n);
/* The oldest outstanding WR fails with status; the rest of its QP is
 * flushed, as hardware does. */
void fake_fail_next(struct fake *f, enum ibv_wc_status status);
int fake_n_signalled(const struct fake *f);
/* An async event on device d (ibv_get_async_event reads it later). */
void fake_async_event(struct fake *f, int d, enum ibv_event_type type,
		      void *element, int port);
struct rdma_cm_id *fake_last_live_id(struct fake *f);

/* A fabric and its nodes ("10.0.0.1", ...; several may share an address
 * and listen on different ports). Nodes are freed with the fabric, which
 * asserts each released everything (fake_free). */
struct fake_fabric *fabric_new(void);
struct fake *fabric_add_node(struct fake_fabric *fab, const char *ip);
void fabric_free(struct fake_fabric *fab);
/* Runs the loop until nothing is pending, at most `turns` turns. */
void fabric_run(struct fake_fabric *fab, int turns);
/* The link of node f goes down: every connected id of f and its peer get
 * DISCONNECTED, their QPs go to error. */
void fabric_cut(struct fake *f);
/* Delivers the completions held back by hold_completions. */
void fabric_release(struct fake_fabric *fab);

#endif
