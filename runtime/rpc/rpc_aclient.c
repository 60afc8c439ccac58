/* Asynchronous RPC client on a libevent loop (see rpc_client.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include "evframe.h"
#include "netutil.h"
#include "rpc_auth.h"
#include "rpc_client.h"
#include "tls.h"

/* One call waiting for its reply. */
struct pending {
	struct pending *prev, *next;
	rpc_aclient *client;
	struct event *timer;
	const ProtobufCMessageDescriptor *resp_desc;
	rpc_aclient_cb cb;
	void *arg;
	uint64_t id;
};

struct rpc_aclient {
	struct event_base *base;
	struct bufferevent *bev; /* NULL = not connected */
	bool connected;		 /* bev's connect has completed */
	bool destroying;	 /* refuse new calls from cancel callbacks */
	struct pending *pending;
	size_t npending;
	rpc_client_config cfg;
	struct sockaddr_storage addr;
	socklen_t addrlen;
	uint64_t next_id;
	/* with cfg.cred: the connection's handshake; until it is done the
	 * calls' frames wait in held */
	struct rpc_auth_client auth;
	struct evbuffer *held;
	bool authed;
	/* with cfg.tls: the host the certificate must name, and the
	 * connection's exported key once its handshake is done */
	char host[256];
	uint8_t tls_key[TLS_SESSION_KEY_BYTES];
	bool tls_keyed;
};

static void unlink_pending(struct pending *p)
{
	rpc_aclient *c = p->client;

	if (p->prev)
		p->prev->next = p->next;
	else
		c->pending = p->next;
	if (p->next)
		p->next->prev = p->prev;
	c->npending--;
}

static void link_pending(rpc_aclient *c, struct pending *p)
{
	p->prev = NULL;
	p->next = c->pending;
	if (c->pending)
		c->pending->prev = p;
	c->pending = p;
	c->npending++;
}

/* Calls back and frees; p must already be unlinked. */
static void finish(struct pending *p, int status, ProtobufCMessage *resp,
		   const char *error)
{
	event_free(p->timer);
	p->cb(status, resp, error, p->arg);
	free(p);
}

/* Drops the connection and fails every pending call with status. Calls
 * made from those callbacks start a fresh connection and list. */
static void disconnect(rpc_aclient *c, int status, const char *error)
{
	struct pending *list = c->pending, *p;

	if (c->bev)
		bufferevent_free(c->bev);
	c->bev = NULL;
	c->connected = false;
	c->authed = false;
	c->tls_keyed = false;
	if (c->held)
		evbuffer_drain(c->held, evbuffer_get_length(c->held));
	c->pending = NULL;
	c->npending = 0;
	while ((p = list) != NULL) {
		list = p->next;
		finish(p, status, NULL, error);
	}
}

static struct pending *find_pending(rpc_aclient *c, uint64_t id)
{
	struct pending *p;

	for (p = c->pending; p; p = p->next)
		if (p->id == id)
			return p;
	return NULL;
}

static void deliver(struct pending *p, const McreplRpc__Envelope *env)
{
	ProtobufCMessage *resp;

	if (env->status != MCREPL_RPC__CODE__OK) {
		finish(p, (int)env->status, NULL, env->error);
		return;
	}
	resp = protobuf_c_message_unpack(p->resp_desc, NULL, env->body.len,
					 env->body.data);
	if (!resp)
		finish(p, RPC_E_PROTOCOL, NULL, "reply body does not parse");
	else
		finish(p, RPC_OK, resp, "");
}

/* Handles one reply; returns false when the connection was dropped. */
static bool on_reply(rpc_aclient *c, const McreplRpc__Envelope *env)
{
	struct pending *p = find_pending(c, env->request_id);

	if (!p && env->request_id == 0 && env->status != MCREPL_RPC__CODE__OK) {
		/* The server refused the stream and is closing. */
		disconnect(c, (int)env->status, env->error);
		return false;
	}
	if (!p)
		return true; /* a reply that came after its call timed out */
	unlink_pending(p);
	deliver(p, env);
	return true;
}

/* A reply during the handshake: the next step, or the end of it (the
 * held calls go out), or a failure that fails every call. Returns false
 * when the connection was dropped. */
static bool on_auth(rpc_aclient *c, const McreplRpc__Envelope *env)
{
	char err[256] = "";
	uint8_t *frame;
	size_t len;
	int st =
	    rpc_auth_client_step(&c->auth, env, &frame, &len, err, sizeof(err));

	if (st == RPC_OK && frame) {
		st = bufferevent_write(c->bev, frame, len) ? RPC_E_NOMEM
							   : RPC_OK;
		free(frame);
		if (st == RPC_OK)
			return true;
		snprintf(err, sizeof(err), "out of memory");
	}
	if (st == RPC_OK) {
		c->authed = true;
		if (evbuffer_add_buffer(bufferevent_get_output(c->bev),
					c->held) == 0)
			return true;
		st = RPC_E_NOMEM;
		snprintf(err, sizeof(err), "out of memory");
	}
	disconnect(c, st, err);
	return false;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	rpc_aclient *c = arg;
	McreplRpc__Envelope *env;
	rpc_frame_result r;
	bool alive = true;

	while (alive && c->bev == bev) {
		r = rpc_evframe_take(bufferevent_get_input(bev),
				     c->cfg.max_frame_bytes, &env);
		if (r == RPC_FRAME_NEED_MORE)
			return;
		if (r != RPC_FRAME_OK) {
			uint8_t head[4];
			ev_ssize_t n = evbuffer_copyout(
			    bufferevent_get_input(bev), head, sizeof(head));
			bool http =
			    rpc_frame_is_http(head, n > 0 ? (size_t)n : 0);

			disconnect(c, http ? RPC_E_HTTP_PEER : RPC_E_PROTOCOL,
				   http ? rpc_status_str(RPC_E_HTTP_PEER)
					: rpc_frame_result_str(r));
			return;
		}
		alive = c->cfg.cred && !c->authed ? on_auth(c, env)
						  : on_reply(c, env);
		protobuf_c_message_free_unpacked(&env->base, NULL);
	}
}

/* Why the TLS connection could not be set up: the certificate's
 * verification, OpenSSL's error, or the socket's. */
static void tls_error(rpc_aclient *c, struct bufferevent *bev, char *text,
		      size_t len)
{
	unsigned long e = bufferevent_get_openssl_error(bev);
	SSL *ssl = bufferevent_openssl_get_ssl(bev);
	int sys = errno;

	(void)c;
	while (bufferevent_get_openssl_error(bev))
		;
	if (!e && ssl && SSL_in_before(ssl) && sys) {
		/* the TCP connect itself failed: no TLS byte was sent */
		snprintf(text, len, "connect failed: %s", strerror(sys));
		return;
	}
	tls_client_error(ssl, e, e ? 0 : sys, text, len);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	rpc_aclient *c = arg;
	char text[128];

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		c->connected = true;
		net_set_nodelay(bufferevent_getfd(bev));
		if (c->cfg.tls) {
			c->tls_keyed =
			    tls_session_key(bufferevent_openssl_get_ssl(bev),
					    c->tls_key) == 0;
			if (!c->tls_keyed) {
				disconnect(c, RPC_E_PROTOCOL,
					   "TLS: no session key");
				return;
			}
		}
		return;
	}
	if (c->cfg.tls && !c->connected)
		tls_error(c, bev, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%s: %s",
			 c->connected ? "connection lost" : "connect failed",
			 (what & BEV_EVENT_EOF) ? "closed by peer"
						: strerror(errno));
	disconnect(c, RPC_E_UNAVAILABLE, text);
}

static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pending *p = arg;
	rpc_aclient *c = p->client;

	(void)fd;
	(void)what;
	if (!c->connected) {
		/* Still connecting: nothing will get through this socket. */
		disconnect(c, RPC_E_TIMEOUT, "connect timed out");
		return;
	}
	unlink_pending(p);
	finish(p, RPC_E_TIMEOUT, NULL, "timed out");
}

/* With a credential: the hello goes first (sent once connected). */
static int start_auth(rpc_aclient *c)
{
	uint8_t *frame;
	size_t len;
	int st;

	c->authed = false;
	if (!c->cfg.cred)
		return RPC_OK;
	st = rpc_auth_client_hello(&c->auth, c->cfg.cred, &frame, &len);
	if (st)
		return st;
	st = bufferevent_write(c->bev, frame, len) ? RPC_E_NOMEM : RPC_OK;
	free(frame);
	return st;
}

/* A client-side TLS stream, not yet connected; the SSL is freed with it. */
static struct bufferevent *tls_bev(rpc_aclient *c)
{
	SSL *ssl = tls_client_ssl(c->cfg.tls, c->host);
	struct bufferevent *bev;

	if (!ssl)
		return NULL;
	bev = bufferevent_openssl_socket_new(c->base, -1, ssl,
					     BUFFEREVENT_SSL_CONNECTING,
					     BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

static int start_connect(rpc_aclient *c)
{
	int opts = BEV_OPT_CLOSE_ON_FREE;

	c->bev =
	    c->cfg.tls ? tls_bev(c) : bufferevent_socket_new(c->base, -1, opts);
	if (!c->bev)
		return RPC_E_NOMEM;
	if (start_auth(c)) {
		bufferevent_free(c->bev);
		c->bev = NULL;
		return RPC_E_NOMEM;
	}
	bufferevent_setcb(c->bev, read_cb, NULL, event_cb, c);
	bufferevent_enable(c->bev, EV_READ);
	if (bufferevent_socket_connect(c->bev, (struct sockaddr *)&c->addr,
				       (int)c->addrlen)) {
		bufferevent_free(c->bev);
		c->bev = NULL;
		return RPC_E_UNAVAILABLE;
	}
	return RPC_OK;
}

static struct pending *new_pending(rpc_aclient *c, uint64_t id,
				   const ProtobufCMessageDescriptor *resp_desc,
				   rpc_aclient_cb cb, void *arg)
{
	struct pending *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->timer = evtimer_new(c->base, timeout_cb, p);
	if (!p->timer) {
		free(p);
		return NULL;
	}
	p->client = c;
	p->id = id;
	p->resp_desc = resp_desc;
	p->cb = cb;
	p->arg = arg;
	return p;
}

static void arm_timer(rpc_aclient *c, struct pending *p)
{
	struct timeval tv;
	int ms = c->cfg.call_timeout_ms;

	if (ms < 0)
		return;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	evtimer_add(p->timer, &tv);
}

static int encode(rpc_aclient *c, uint64_t id, uint32_t method,
		  const ProtobufCMessage *req, uint8_t **frame, size_t *len)
{
	rpc_frame_head head = {
	    .request_id = id, .method = method, .status = MCREPL_RPC__CODE__OK};

	if (rpc_frame_encode_msg(&head, req, frame, len) != RPC_FRAME_OK)
		return RPC_E_NOMEM;
	if (*len - RPC_FRAME_PREFIX_BYTES > c->cfg.max_frame_bytes) {
		free(*frame);
		return RPC_E_INVALID;
	}
	return RPC_OK;
}

int rpc_aclient_call(rpc_aclient *client, uint32_t method,
		     const ProtobufCMessage *req,
		     const ProtobufCMessageDescriptor *resp_desc,
		     rpc_aclient_cb cb, void *arg)
{
	uint64_t id = ++client->next_id;
	struct pending *p;
	uint8_t *frame;
	size_t len;
	int st;

	if (client->destroying)
		return RPC_E_CANCELLED;
	st = encode(client, id, method, req, &frame, &len);
	if (st)
		return st;
	p = new_pending(client, id, resp_desc, cb, arg);
	if (!p) {
		st = RPC_E_NOMEM;
		goto out_free_frame;
	}
	if (!client->bev) {
		st = start_connect(client);
		if (st)
			goto out_free_pending;
	}
	if (client->cfg.cred && !client->authed
		? evbuffer_add(client->held, frame, len)
		: bufferevent_write(client->bev, frame, len)) {
		st = RPC_E_NOMEM;
		goto out_free_pending;
	}
	link_pending(client, p);
	arm_timer(client, p);
	free(frame);
	return RPC_OK;
out_free_pending:
	event_free(p->timer);
	free(p);
out_free_frame:
	free(frame);
	return st;
}

rpc_aclient *rpc_aclient_create(struct event_base *base, const char *addr,
				const rpc_client_config *cfg, char *err,
				size_t errlen)
{
	char host[256];
	uint16_t port;
	rpc_aclient *c;

	if (net_split_hostport(addr, host, sizeof(host), &port)) {
		snprintf(err, errlen, "bad address \"%s\" (want host:port)",
			 addr);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (net_resolve(host, port, 0, &c->addr, &c->addrlen, err, errlen)) {
		free(c);
		return NULL;
	}
	c->base = base;
	snprintf(c->host, sizeof(c->host), "%s", host);
	if (cfg)
		c->cfg = *cfg;
	else
		rpc_client_config_init(&c->cfg);
	if (!c->cfg.max_frame_bytes)
		c->cfg.max_frame_bytes = RPC_FRAME_DEFAULT_MAX_BYTES;
	c->held = evbuffer_new();
	if (!c->held) {
		snprintf(err, errlen, "out of memory");
		free(c);
		return NULL;
	}
	return c;
}

void rpc_aclient_destroy(rpc_aclient *client)
{
	if (!client)
		return;
	client->destroying = true;
	disconnect(client, RPC_E_CANCELLED, "client destroyed");
	evbuffer_free(client->held);
	free(client);
}

const uint8_t *rpc_aclient_session_key(const rpc_aclient *client)
{
	if (client->authed)
		return client->auth.session;
	return !client->cfg.cred && client->tls_keyed ? client->tls_key : NULL;
}

size_t rpc_aclient_pending(const rpc_aclient *client)
{
	return client->npending;
}
