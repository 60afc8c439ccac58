/*
 * The fake RDMA fabric between processes (see fabric_verbs.c): what its
 * two files share. Test support only.
 */
#ifndef MCREPL_TEST_RDMA_FABRIC_H
#define MCREPL_TEST_RDMA_FABRIC_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "copy_engine_rdma.h"

#define FV_HDR 4096u
#define FV_MAGIC 0x4d435246u /* "MCRF" */
#define FV_MAX_MSG (256u << 10)
#define FV_MAX_QP_WR 8
#define FV_PDATA 56

/* The header page of an MR file, shared with every peer that maps it. */
struct fv_hdr {
	uint32_t magic;
	volatile uint32_t valid;
	uint32_t node, pd;
	uint64_t addr, len;
	uint32_t access, rkey;
};

struct fv_mr {
	struct ibv_mr mr;
	int access;
	int fd;
	struct fv_hdr *hdr;
	char path[300];
	struct fv_mr *next;
};

/* A peer's MR file, mapped (cached until the engine closes). */
struct fv_rmap {
	uint32_t node, rkey;
	struct fv_hdr *hdr;
	size_t maplen;
	struct fv_rmap *next;
};

struct fv_cq;

struct fv_comp {
	struct ibv_comp_channel ch;
	int wfd;
	struct fv_cq *pending[256];
	int n_pending;
};

struct fv_cq {
	struct ibv_cq cq;
	struct fv_comp *comp;
	struct ibv_wc *wc;
	int cap, head, count;
	bool armed;
};

struct fv_id;

struct fv_qp {
	struct ibv_qp qp;
	struct fv_cq *cq;
	struct fv_id *fid;
	uint32_t max_send_wr;
	bool error;
	struct fv_qp *next;
};

struct fv_cm {
	struct rdma_event_channel ch;
	int wfd;
	struct rdma_cm_event *q[64];
	int n;
	struct fv_cm *next;
};

struct fv_id {
	struct rdma_cm_id id;
	struct fv_cm *cm;
	int sock;
	struct event *sock_ev;
	bool listener, inbound, connected;
	uint32_t peer_node, peer_pd;
	uint8_t pdata[FV_PDATA];
	uint8_t pdata_len;
	struct fv_id *pending; /* inbound: its listener, until the request */
	struct fv_id *next_pending;
};

enum { MSG_REQ = 1, MSG_REP, MSG_REJ, MSG_DREQ };

struct fv_msg {
	uint32_t type;
	uint32_t node, pd, qpn;
	uint16_t src_port;
	uint8_t pdata_len;
	uint8_t pdata[FV_PDATA];
};

struct fv_job {
	struct fv_job *next;
	struct fv_qp *qp;
	struct ibv_send_wr wr;
	struct ibv_sge sge;
};

struct fv {
	struct event_base *base;
	char dir[96];
	uint32_t node;
	uint32_t next_key;
	uint16_t next_src_port;
	unsigned wr_delay_ms;
	uint64_t mr_limit;
	bool bad_rkey, silent, dead;
	struct ibv_device dev;
	struct ibv_context ctx;
	struct ibv_context *ctx_list[2];
	struct ibv_device *dev_list[2];
	int async_wfd;
	struct ibv_async_event async_q[8];
	int n_async;
	struct fv_mr *mrs;
	struct fv_rmap *rmaps;
	struct fv_qp *qps;
	struct fv_cm *cms;
	struct fv_id *pend; /* accepted sockets whose request has not come */
	struct fv_job *jobs, **jobs_tail;
	struct event *tick;
	struct event *sig_ev;
	int ids;
	uint64_t writes, bytes;
	uint32_t access_errors, flushed;
};

/* The one fabric node of this process. */
extern struct fv fv_state;

void fv_log(struct fv *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Rewrites DIR/state-<pid>. */
void fv_state_dump(struct fv *f);
void fv_poke(int wfd);
int fv_make_pipe(int *rfd, int *wfd);
/* Arms the timer that executes queued WRs, if any are queued. */
void fv_kick(struct fv *f);

/* fabric_cm.c: an event on cm's channel (fid, listen may be NULL). */
void fv_cm_push(struct fv_cm *cm, struct fv_id *fid, struct fv_id *listen,
		enum rdma_cm_event_type type, int status);
/* The rdma_cm members of the ops table (and create_qp, destroy_qp). */
void fv_cm_ops(struct rdma_verbs_ops *ops);

#endif
