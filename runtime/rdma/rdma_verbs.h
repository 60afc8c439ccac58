/*
 * The RDMA engine's view of libibverbs and librdmacm: every call the engine
 * makes to the hardware goes through this table, so its logic (device
 * choice, splitting, queueing, signalling, teardown) runs in tests against
 * a fake device. Private to runtime/rdma and its tests.
 *
 * Each member wraps the library call of the same name and keeps its return
 * convention exactly (verbs calls return 0 or a positive errno value;
 * rdma_cm calls and ibv_get_cq_event return -1 with errno set; poll_cq
 * returns a count or a negative value; constructors return NULL with errno
 * set). ctx is the ops_ctx given to copy_engine_rdma_create_with(); the
 * real table ignores it.
 *
 * Threading: as for the engine, every call happens on the thread running
 * the engine's event_base.
 */
#ifndef MCREPL_DAEMON_RDMA_VERBS_H
#define MCREPL_DAEMON_RDMA_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

struct rdma_verbs_ops {
	/* Devices: verbs' list (to say "no device"), then rdma_cm's opened
	 * contexts: a PD must come from id->verbs' context to be usable on
	 * a QP that rdma_cm creates, so the engine uses rdma_cm's. */
	struct ibv_device **(*get_device_list)(void *ctx, int *num);
	void (*free_device_list)(void *ctx, struct ibv_device **list);
	struct ibv_context **(*get_devices)(void *ctx, int *num);
	void (*free_devices)(void *ctx, struct ibv_context **list);
	int (*query_device)(void *ctx, struct ibv_context *dev,
			    struct ibv_device_attr *attr);
	int (*query_port)(void *ctx, struct ibv_context *dev, uint8_t port,
			  struct ibv_port_attr *attr);
	/* Asynchronous events on dev->async_fd (non-blocking: -1, EAGAIN). */
	int (*get_async_event)(void *ctx, struct ibv_context *dev,
			       struct ibv_async_event *ev);
	void (*ack_async_event)(void *ctx, struct ibv_async_event *ev);

	/* Protection domain and memory registration. */
	struct ibv_pd *(*alloc_pd)(void *ctx, struct ibv_context *dev);
	int (*dealloc_pd)(void *ctx, struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(void *ctx, struct ibv_pd *pd, void *addr,
				 size_t len, int access);
	int (*dereg_mr)(void *ctx, struct ibv_mr *mr);

	/* Completion channel and queues. */
	struct ibv_comp_channel *(*create_comp_channel)(
	    void *ctx, struct ibv_context *dev);
	int (*destroy_comp_channel)(void *ctx, struct ibv_comp_channel *ch);
	struct ibv_cq *(*create_cq)(void *ctx, struct ibv_context *dev, int cqe,
				    void *cq_context,
				    struct ibv_comp_channel *ch);
	int (*destroy_cq)(void *ctx, struct ibv_cq *cq);
	int (*req_notify_cq)(void *ctx, struct ibv_cq *cq);
	int (*get_cq_event)(void *ctx, struct ibv_comp_channel *ch,
			    struct ibv_cq **cq, void **cq_context);
	void (*ack_cq_events)(void *ctx, struct ibv_cq *cq, unsigned int n);
	int (*poll_cq)(void *ctx, struct ibv_cq *cq, int n, struct ibv_wc *wc);
	int (*post_send)(void *ctx, struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);

	/* rdma_cm: event channel, ids, connection setup and teardown. */
	struct rdma_event_channel *(*create_event_channel)(void *ctx);
	void (*destroy_event_channel)(void *ctx, struct rdma_event_channel *ch);
	int (*create_id)(void *ctx, struct rdma_event_channel *ch,
			 struct rdma_cm_id **id, void *context);
	int (*destroy_id)(void *ctx, struct rdma_cm_id *id);
	int (*bind_addr)(void *ctx, struct rdma_cm_id *id, struct sockaddr *sa);
	int (*listen)(void *ctx, struct rdma_cm_id *id, int backlog);
	int (*resolve_addr)(void *ctx, struct rdma_cm_id *id,
			    struct sockaddr *dst, int timeout_ms);
	int (*resolve_route)(void *ctx, struct rdma_cm_id *id, int timeout_ms);
	int (*create_qp)(void *ctx, struct rdma_cm_id *id, struct ibv_pd *pd,
			 struct ibv_qp_init_attr *attr);
	void (*destroy_qp)(void *ctx, struct rdma_cm_id *id);
	int (*connect)(void *ctx, struct rdma_cm_id *id,
		       struct rdma_conn_param *param);
	int (*accept)(void *ctx, struct rdma_cm_id *id,
		      struct rdma_conn_param *param);
	int (*reject)(void *ctx, struct rdma_cm_id *id);
	int (*disconnect)(void *ctx, struct rdma_cm_id *id);
	int (*get_cm_event)(void *ctx, struct rdma_event_channel *ch,
			    struct rdma_cm_event **ev);
	int (*ack_cm_event)(void *ctx, struct rdma_cm_event *ev);

	/* Where the engine's log lines go (one line, no newline). The real
	 * table writes them to stderr. */
	void (*log)(void *ctx, const char *line);
};

/* libibverbs + librdmacm themselves (rdma_verbs_real.c). */
extern const struct rdma_verbs_ops rdma_verbs_real;

#endif
