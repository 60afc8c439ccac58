/* RPC server: listener, connections, framing and service dispatch. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <netinet/in.h>

#include "evframe.h"
#include "netutil.h"
#include "rpc_dispatch.h"
#include "rpc_server.h"

/* Seconds a refused connection may take to flush and close. */
#define CLOSE_LINGER_TIMEOUT_S 5
#define ACCEPT_RETRY_MS 100

struct rpc_conn {
	rpc_server *server;
	struct bufferevent *bev;
	rpc_conn *prev, *next;
	uint64_t id;
	bool closing; /* no more requests; closed once output is flushed */
	bool linger;  /* refused stream: after the flush, shut down our side
			 and discard input until the peer closes, so the
			 last reply is not lost to a reset */
	bool shut;    /* linger: SHUT_WR done */
	bool paused;  /* reading stopped: reply backlog above high water */
	char peer[NET_ADDRSTRLEN];
};

struct rpc_server {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *accept_retry;
	ProtobufCService *service;
	rpc_server_config cfg;
	rpc_conn *conns;
	size_t nconns;
	uint64_t next_conn_id;
	rpc_conn *current;
	uint16_t port;
};

void rpc_server_config_init(rpc_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_frame_bytes = RPC_FRAME_DEFAULT_MAX_BYTES;
	cfg->out_high_water = RPC_SERVER_DEFAULT_OUT_HIGH_WATER;
	cfg->backlog = 128;
}

static void conn_free(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	if (conn->prev)
		conn->prev->next = conn->next;
	else
		s->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	s->nconns--;
	bufferevent_free(conn->bev);
	free(conn);
}

static size_t out_len(const rpc_conn *conn)
{
	return evbuffer_get_length(bufferevent_get_output(conn->bev));
}

static void free_frame(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)(uintptr_t)data);
}

/* Queues a malloc'd frame without copying; the buffer frees it. */
static void conn_send(rpc_conn *conn, uint8_t *frame, size_t len)
{
	struct evbuffer *out = bufferevent_get_output(conn->bev);

	if (evbuffer_add_reference(out, frame, len, free_frame, NULL)) {
		free(frame);
		conn->closing = true;
	}
}

static void reply_error(rpc_conn *conn, uint64_t request_id, uint32_t method,
			McreplRpc__Code status, const char *text)
{
	rpc_frame_head head = {request_id, method, status, text};
	uint8_t *frame;
	size_t len;

	if (rpc_frame_encode(&head, NULL, 0, &frame, &len) != RPC_FRAME_OK) {
		conn->closing = true;
		return;
	}
	conn_send(conn, frame, len);
}

/* rpc_dispatch's reply: one frame with the response or the error. */
static void reply(void *arg, const rpc_frame_head *head,
		  const ProtobufCMessage *msg)
{
	rpc_conn *conn = arg;
	size_t max = conn->server->cfg.max_frame_bytes;
	uint8_t *frame;
	size_t len;

	if (!msg) {
		reply_error(conn, head->request_id, head->method, head->status,
			    head->error);
		return;
	}
	if (rpc_frame_encode_msg(head, msg, &frame, &len) != RPC_FRAME_OK) {
		reply_error(conn, head->request_id, head->method,
			    MCREPL_RPC__CODE__INTERNAL, "out of memory");
		return;
	}
	if (len - RPC_FRAME_PREFIX_BYTES > max) {
		free(frame);
		reply_error(conn, head->request_id, head->method,
			    MCREPL_RPC__CODE__INTERNAL, "response too large");
		return;
	}
	conn_send(conn, frame, len);
}

/* Serves one request; always queues one reply. */
static void dispatch(rpc_conn *conn, const McreplRpc__Envelope *env)
{
	conn->server->current = conn;
	rpc_dispatch(conn->server->service, env, reply, conn);
	conn->server->current = NULL;
}

/* A stream we cannot follow: say why, then close once that is flushed. */
static void refuse(rpc_conn *conn, rpc_frame_result r)
{
	struct timeval linger = {CLOSE_LINGER_TIMEOUT_S, 0};
	char text[128];

	if (r == RPC_FRAME_TOO_LARGE) {
		snprintf(text, sizeof(text), "frame exceeds %zu bytes",
			 conn->server->cfg.max_frame_bytes);
		reply_error(conn, 0, 0, MCREPL_RPC__CODE__FRAME_TOO_LARGE, text);
	} else if (r == RPC_FRAME_BAD_ENVELOPE) {
		reply_error(conn, 0, 0, MCREPL_RPC__CODE__BAD_REQUEST,
			    "malformed envelope");
	}
	conn->closing = true;
	conn->linger = true;
	bufferevent_set_timeouts(conn->bev, &linger, &linger);
}

static void update_reading(rpc_conn *conn)
{
	bool over = out_len(conn) > conn->server->cfg.out_high_water;

	if (conn->linger)
		return; /* keeps reading, to discard */
	if (conn->closing || over) {
		bufferevent_disable(conn->bev, EV_READ);
		conn->paused = !conn->closing;
	} else if (conn->paused) {
		bufferevent_enable(conn->bev, EV_READ);
		conn->paused = false;
	}
}

/* Output flushed on a closing connection: close, or start lingering. */
static void finish_close(rpc_conn *conn)
{
	if (!conn->linger) {
		conn_free(conn);
		return;
	}
	if (!conn->shut)
		shutdown(bufferevent_getfd(conn->bev), SHUT_WR);
	conn->shut = true;
}

/* Serves every whole frame in the input, within the high-water mark. May
 * free conn (when closing with nothing left to flush). */
static void process_input(rpc_conn *conn)
{
	struct evbuffer *in = bufferevent_get_input(conn->bev);
	size_t max = conn->server->cfg.max_frame_bytes;
	McreplRpc__Envelope *env;
	rpc_frame_result r;

	while (!conn->closing &&
	       out_len(conn) <= conn->server->cfg.out_high_water) {
		r = rpc_evframe_take(in, max, &env);
		if (r == RPC_FRAME_NEED_MORE)
			break;
		if (r != RPC_FRAME_OK) {
			refuse(conn, r);
			break;
		}
		dispatch(conn, env);
		protobuf_c_message_free_unpacked(&env->base, NULL);
	}
	if (conn->linger)
		evbuffer_drain(in, evbuffer_get_length(in));
	update_reading(conn);
	if (conn->closing && out_len(conn) == 0)
		finish_close(conn);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	process_input(arg);
}

/* Called when the output has drained completely (low watermark 0). */
static void write_cb(struct bufferevent *bev, void *arg)
{
	rpc_conn *conn = arg;

	(void)bev;
	if (conn->closing || conn->paused)
		process_input(conn);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	rpc_conn *conn = arg;

	(void)bev;
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    out_len(conn) > 0 && !conn->closing) {
		/* Half-closed peer: flush what it asked for, then close. */
		conn->closing = true;
		update_reading(conn);
		return;
	}
	conn_free(conn);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	rpc_server *s = arg;
	rpc_conn *conn = calloc(1, sizeof(*conn));

	(void)l;
	if (!conn)
		goto out_close;
	conn->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!conn->bev)
		goto out_free_conn;
	conn->server = s;
	conn->id = ++s->next_conn_id;
	net_format_addr(sa, (socklen_t)salen, conn->peer, sizeof(conn->peer));
	net_set_nodelay(fd);
	bufferevent_setcb(conn->bev, read_cb, write_cb, event_cb, conn);
	bufferevent_enable(conn->bev, EV_READ);
	conn->next = s->conns;
	if (s->conns)
		s->conns->prev = conn;
	s->conns = conn;
	s->nconns++;
	return;
out_free_conn:
	free(conn);
out_close:
	evutil_closesocket(fd);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	rpc_server *s = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(s->listener);
}

/* accept(2) failed (EMFILE, ENOBUFS, ...): back off instead of spinning. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct timeval tv = {0, ACCEPT_RETRY_MS * 1000};
	rpc_server *s = arg;

	fprintf(stderr, "rpc_server: accept: %s\n", strerror(errno));
	evconnlistener_disable(l);
	evtimer_add(s->accept_retry, &tv);
}

static int server_listen(rpc_server *s, const char *host, char *err,
			 size_t errlen)
{
	unsigned flags =
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC;
	struct sockaddr_storage ss;
	socklen_t len;

	if (net_resolve(host, s->cfg.port, 1, &ss, &len, err, errlen))
		return -1;
	s->listener = evconnlistener_new_bind(s->base, accept_cb, s, flags,
					      s->cfg.backlog,
					      (struct sockaddr *)&ss, (int)len);
	if (!s->listener) {
		snprintf(err, errlen, "listen on %s:%u: %s", host,
			 (unsigned)s->cfg.port, strerror(errno));
		return -1;
	}
	evconnlistener_set_error_cb(s->listener, accept_error_cb);
	len = sizeof(ss);
	if (getsockname(evconnlistener_get_fd(s->listener),
			(struct sockaddr *)&ss, &len) == 0)
		s->port = ntohs(ss.ss_family == AF_INET6
				    ? ((struct sockaddr_in6 *)&ss)->sin6_port
				    : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

/* Copies cfg, zero fields taking their defaults; host is not kept. */
static void set_config(rpc_server *s, const rpc_server_config *cfg)
{
	rpc_server_config def;

	rpc_server_config_init(&def);
	s->cfg = *cfg;
	s->cfg.host = NULL;
	if (!s->cfg.max_frame_bytes)
		s->cfg.max_frame_bytes = def.max_frame_bytes;
	if (!s->cfg.out_high_water)
		s->cfg.out_high_water = def.out_high_water;
	if (s->cfg.backlog <= 0)
		s->cfg.backlog = def.backlog;
}

rpc_server *rpc_server_create(struct event_base *base,
			      const rpc_server_config *cfg,
			      ProtobufCService *service, char *err,
			      size_t errlen)
{
	rpc_server *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->base = base;
	s->service = service;
	set_config(s, cfg);
	s->accept_retry = evtimer_new(base, accept_retry_cb, s);
	if (!s->accept_retry) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	if (server_listen(s, cfg->host && *cfg->host ? cfg->host : "0.0.0.0",
			  err, errlen))
		goto out_free_timer;
	return s;
out_free_timer:
	event_free(s->accept_retry);
out_free:
	free(s);
	return NULL;
}

void rpc_server_destroy(rpc_server *server)
{
	if (!server)
		return;
	while (server->conns)
		conn_free(server->conns);
	evconnlistener_free(server->listener);
	event_free(server->accept_retry);
	free(server);
}

uint16_t rpc_server_port(const rpc_server *server)
{
	return server->port;
}

size_t rpc_server_conn_count(const rpc_server *server)
{
	return server->nconns;
}

rpc_conn *rpc_server_current_conn(const rpc_server *server)
{
	return server->current;
}

rpc_conn *rpc_server_closure_conn(const void *closure_data)
{
	return rpc_dispatch_arg(closure_data);
}

const char *rpc_conn_peer(const rpc_conn *conn)
{
	return conn->peer;
}

uint64_t rpc_conn_id(const rpc_conn *conn)
{
	return conn->id;
}
