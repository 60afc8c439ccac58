/* The real rdma_verbs_ops: thin wrappers over libibverbs and librdmacm. */
#include <stdio.h>

#include "log.h"
#include "rdma_verbs.h"

static struct ibv_device **real_get_device_list(void *ctx, int *num)
{
	(void)ctx;
	return ibv_get_device_list(num);
}

static void real_free_device_list(void *ctx, struct ibv_device **list)
{
	(void)ctx;
	ibv_free_device_list(list);
}

static struct ibv_context **real_get_devices(void *ctx, int *num)
{
	(void)ctx;
	return rdma_get_devices(num);
}

static void real_free_devices(void *ctx, struct ibv_context **list)
{
	(void)ctx;
	rdma_free_devices(list);
}

static int real_query_device(void *ctx, struct ibv_context *dev,
			     struct ibv_device_attr *attr)
{
	(void)ctx;
	return ibv_query_device(dev, attr);
}

static int real_query_port(void *ctx, struct ibv_context *dev, uint8_t port,
			   struct ibv_port_attr *attr)
{
	(void)ctx;
	return ibv_query_port(dev, port, attr);
}

static int real_get_async_event(void *ctx, struct ibv_context *dev,
				struct ibv_async_event *ev)
{
	(void)ctx;
	return ibv_get_async_event(dev, ev);
}

static void real_ack_async_event(void *ctx, struct ibv_async_event *ev)
{
	(void)ctx;
	ibv_ack_async_event(ev);
}

static struct ibv_pd *real_alloc_pd(void *ctx, struct ibv_context *dev)
{
	(void)ctx;
	return ibv_alloc_pd(dev);
}

static int real_dealloc_pd(void *ctx, struct ibv_pd *pd)
{
	(void)ctx;
	return ibv_dealloc_pd(pd);
}

static struct ibv_mr *real_reg_mr(void *ctx, struct ibv_pd *pd, void *addr,
				  size_t len, int access)
{
	(void)ctx;
	return ibv_reg_mr(pd, addr, len, access);
}

static int real_dereg_mr(void *ctx, struct ibv_mr *mr)
{
	(void)ctx;
	return ibv_dereg_mr(mr);
}

static struct ibv_comp_channel *
real_create_comp_channel(void *ctx, struct ibv_context *dev)
{
	(void)ctx;
	return ibv_create_comp_channel(dev);
}

static int real_destroy_comp_channel(void *ctx, struct ibv_comp_channel *ch)
{
	(void)ctx;
	return ibv_destroy_comp_channel(ch);
}

static struct ibv_cq *real_create_cq(void *ctx, struct ibv_context *dev,
				     int cqe, void *cq_context,
				     struct ibv_comp_channel *ch)
{
	(void)ctx;
	return ibv_create_cq(dev, cqe, cq_context, ch, 0);
}

static int real_destroy_cq(void *ctx, struct ibv_cq *cq)
{
	(void)ctx;
	return ibv_destroy_cq(cq);
}

static int real_req_notify_cq(void *ctx, struct ibv_cq *cq)
{
	(void)ctx;
	return ibv_req_notify_cq(cq, 0);
}

static int real_get_cq_event(void *ctx, struct ibv_comp_channel *ch,
			     struct ibv_cq **cq, void **cq_context)
{
	(void)ctx;
	return ibv_get_cq_event(ch, cq, cq_context);
}

static void real_ack_cq_events(void *ctx, struct ibv_cq *cq, unsigned int n)
{
	(void)ctx;
	ibv_ack_cq_events(cq, n);
}

static int real_poll_cq(void *ctx, struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	(void)ctx;
	return ibv_poll_cq(cq, n, wc);
}

static int real_post_send(void *ctx, struct ibv_qp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad_wr)
{
	(void)ctx;
	return ibv_post_send(qp, wr, bad_wr);
}

static struct rdma_event_channel *real_create_event_channel(void *ctx)
{
	(void)ctx;
	return rdma_create_event_channel();
}

static void real_destroy_event_channel(void *ctx, struct rdma_event_channel *ch)
{
	(void)ctx;
	rdma_destroy_event_channel(ch);
}

static int real_create_id(void *ctx, struct rdma_event_channel *ch,
			  struct rdma_cm_id **id, void *context)
{
	(void)ctx;
	return rdma_create_id(ch, id, context, RDMA_PS_TCP);
}

static int real_destroy_id(void *ctx, struct rdma_cm_id *id)
{
	(void)ctx;
	return rdma_destroy_id(id);
}

static int real_bind_addr(void *ctx, struct rdma_cm_id *id, struct sockaddr *sa)
{
	(void)ctx;
	return rdma_bind_addr(id, sa);
}

static int real_listen(void *ctx, struct rdma_cm_id *id, int backlog)
{
	(void)ctx;
	return rdma_listen(id, backlog);
}

static int real_resolve_addr(void *ctx, struct rdma_cm_id *id,
			     struct sockaddr *dst, int timeout_ms)
{
	(void)ctx;
	return rdma_resolve_addr(id, NULL, dst, timeout_ms);
}

static int real_resolve_route(void *ctx, struct rdma_cm_id *id, int timeout_ms)
{
	(void)ctx;
	return rdma_resolve_route(id, timeout_ms);
}

static int real_create_qp(void *ctx, struct rdma_cm_id *id, struct ibv_pd *pd,
			  struct ibv_qp_init_attr *attr)
{
	(void)ctx;
	return rdma_create_qp(id, pd, attr);
}

static void real_destroy_qp(void *ctx, struct rdma_cm_id *id)
{
	(void)ctx;
	rdma_destroy_qp(id);
}

static int real_connect(void *ctx, struct rdma_cm_id *id,
			struct rdma_conn_param *param)
{
	(void)ctx;
	return rdma_connect(id, param);
}

static int real_accept(void *ctx, struct rdma_cm_id *id,
		       struct rdma_conn_param *param)
{
	(void)ctx;
	return rdma_accept(id, param);
}

static int real_reject(void *ctx, struct rdma_cm_id *id)
{
	(void)ctx;
	return rdma_reject(id, NULL, 0);
}

static int real_disconnect(void *ctx, struct rdma_cm_id *id)
{
	(void)ctx;
	return rdma_disconnect(id);
}

static int real_get_cm_event(void *ctx, struct rdma_event_channel *ch,
			     struct rdma_cm_event **ev)
{
	(void)ctx;
	return rdma_get_cm_event(ch, ev);
}

static int real_ack_cm_event(void *ctx, struct rdma_cm_event *ev)
{
	(void)ctx;
	return rdma_ack_cm_event(ev);
}

static void real_log(void *ctx, const char *line)
{
	(void)ctx;
	log_line(LOG_WARN, "%s", line);
}

const struct rdma_verbs_ops rdma_verbs_real = {
    .get_device_list = real_get_device_list,
    .free_device_list = real_free_device_list,
    .get_devices = real_get_devices,
    .free_devices = real_free_devices,
    .query_device = real_query_device,
    .query_port = real_query_port,
    .get_async_event = real_get_async_event,
    .ack_async_event = real_ack_async_event,
    .alloc_pd = real_alloc_pd,
    .dealloc_pd = real_dealloc_pd,
    .reg_mr = real_reg_mr,
    .dereg_mr = real_dereg_mr,
    .create_comp_channel = real_create_comp_channel,
    .destroy_comp_channel = real_destroy_comp_channel,
    .create_cq = real_create_cq,
    .destroy_cq = real_destroy_cq,
    .req_notify_cq = real_req_notify_cq,
    .get_cq_event = real_get_cq_event,
    .ack_cq_events = real_ack_cq_events,
    .poll_cq = real_poll_cq,
    .post_send = real_post_send,
    .create_event_channel = real_create_event_channel,
    .destroy_event_channel = real_destroy_event_channel,
    .create_id = real_create_id,
    .destroy_id = real_destroy_id,
    .bind_addr = real_bind_addr,
    .listen = real_listen,
    .resolve_addr = real_resolve_addr,
    .resolve_route = real_resolve_route,
    .create_qp = real_create_qp,
    .destroy_qp = real_destroy_qp,
    .connect = real_connect,
    .accept = real_accept,
    .reject = real_reject,
    .disconnect = real_disconnect,
    .get_cm_event = real_get_cm_event,
    .ack_cm_event = real_ack_cm_event,
    .log = real_log,
};
