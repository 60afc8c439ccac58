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

struct fake_qp {
	struct ibv_qp qp;
	struct fake_cq *cq;
	uint32_t max_send_wr;
	bool error;
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

struct fake {
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
struct rdma_cm_id *fake_last_live_id(struct fake *f);

#endif
