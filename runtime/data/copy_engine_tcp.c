/*
 * The TCP copy engine: WRITE requests of data_proto.h to the target
 * worker's data port. One connection per peer, reused; copies to one peer
 * are pipelined on it and answered in order. Copies beyond max_inflight or
 * max_inflight_bytes wait in a FIFO (one copy larger than the byte bound
 * runs alone). Payloads are fed into the socket in chunks as it drains, so
 * the loop never stalls on one large copy.
 *
 * Payload is not copied: the output buffer references the source in
 * chunks (evbuffer_add_reference), and the socket writes straight from it.
 * A refusal can arrive before the whole payload was sent: the rest of the
 * payload goes out as zeros, which the target discards, so the connection
 * stays in step for the copies behind it, and the copy completes once the
 * chunks of its source already queued were sent or dropped (libevent
 * releases each one), never before: the source is not read after the
 * completion callback.
 *
 * A connection that is lost (closed or reset by the peer, not a refusal or
 * a timeout) takes its copies down with it; each copy that went out on a
 * reused connection is retried once on a fresh one: the target may have
 * closed an idle connection just as the copy was sent (workers close idle
 * data connections). A write is safe to repeat: the same bytes into the
 * same granted region, and the replica stays unreadable until the copy is
 * reported done.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "clock.h"
#include "copy_engine_tcp.h"
#include "data_proto.h"
#include "netutil.h"
#include "span.h"

#define FEED_CHUNK (1u << 20)
#define OUT_HIGH (4u << 20)
#define ENDPOINT_MAX 256

struct tcp_peer;

struct tcp_copy {
	struct tcp_copy *next; /* wait queue, the peer's wire list or done */
	struct tcp_engine *e;
	struct tcp_peer *peer; /* connection it was sent on, or NULL */
	const uint8_t *src;
	uint64_t len;
	struct copy_target dst;
	char endpoint[ENDPOINT_MAX];
	copy_done_cb cb;
	void *arg;
	struct event *timer;
	bool admitted, hdr_sent;
	bool reused;  /* went out on a connection opened before it */
	bool retried; /* already sent again once */
	/* Chunks of src referenced by an output buffer, not yet released.
	 * A copy answered while some remain waits (answered) with its
	 * outcome until the last one is released. */
	uint32_t refs;
	bool answered;
	int status;
	char why[ENDPOINT_MAX + DATA_ERR_MAX + 64];
};

struct tcp_peer {
	struct tcp_peer *next;
	struct tcp_engine *e;
	char endpoint[ENDPOINT_MAX];
	struct bufferevent *bev;
	bool connected;
	struct tcp_copy *wire, *wire_tail; /* on this connection, in order */
	struct tcp_copy *feed_copy;	   /* payload being fed, or NULL */
	const uint8_t *feed_src;	   /* NULL: feed zeros */
	uint64_t feed_left;
	bool have_resp;
	struct data_resp resp;
};

struct tcp_engine {
	struct copy_engine base; /* first: the ops cast back */
	struct copy_engine_config cfg;
	struct tcp_peer *peers;
	struct tcp_copy *wait, *wait_tail;
	struct tcp_copy *done; /* answered and released: to complete */
	struct event *kick;
	struct copy_engine_tcp_stats st;
	bool destroying;
};

static const uint8_t zeros[64 << 10];

static struct tcp_engine *engine_of(struct copy_engine *e)
{
	return (struct tcp_engine *)(void *)e;
}

static void kick(struct tcp_engine *e)
{
	event_active(e->kick, EV_TIMEOUT, 1);
}

/* Calls back and frees c, already unlinked from any list. */
static void complete(struct tcp_copy *c, int status, const char *error)
{
	struct tcp_engine *e = c->e;

	if (c->admitted) {
		e->st.inflight--;
		e->st.inflight_bytes -= c->len;
	}
	if (status == 0) {
		e->st.completed++;
		e->st.bytes_copied += c->len;
	} else {
		e->st.failed++;
	}
	event_free(c->timer);
	c->cb(status, status ? error : NULL, c->arg);
	free(c);
	kick(e);
}

/* Completes c now, or once the last chunk of its source still referenced
 * by an output buffer is released. */
static void settle(struct tcp_copy *c, int status, const char *error)
{
	if (!c->refs) {
		complete(c, status, error);
		return;
	}
	c->e->st.held++;
	c->answered = true;
	c->status = status;
	snprintf(c->why, sizeof(c->why), "%s", error ? error : "");
}

/* libevent released a chunk of c's source (sent or dropped). After the
 * last one an answered copy completes, from the engine's own event rather
 * than inside libevent's buffer code. */
static void on_release(const void *data, size_t len, void *arg)
{
	struct tcp_copy *c = arg;
	struct tcp_engine *e = c->e;

	(void)data;
	(void)len;
	if (--c->refs || !c->answered)
		return;
	evtimer_del(c->timer);
	c->peer = NULL;
	c->next = e->done;
	e->done = c;
	kick(e);
}

static void complete_released(struct tcp_engine *e)
{
	struct tcp_copy *c;

	while ((c = e->done) != NULL) {
		e->done = c->next;
		complete(c, c->status, c->why);
	}
}

static void unlink_peer(struct tcp_peer *p)
{
	struct tcp_peer **pp = &p->e->peers;

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	p->e->st.peers--;
}

/* Puts c back at the head of the wait queue (ahead of copies posted after
 * it), to be sent again on a new connection. */
static void requeue(struct tcp_engine *e, struct tcp_copy *c,
		    struct tcp_copy **tail)
{
	if (c->admitted) {
		e->st.inflight--;
		e->st.inflight_bytes -= c->len;
	}
	evtimer_del(c->timer);
	c->peer = NULL;
	c->admitted = c->hdr_sent = c->reused = false;
	c->retried = true;
	if (*tail) { /* after the copies requeued before it */
		c->next = (*tail)->next;
		(*tail)->next = c;
	} else {
		c->next = e->wait;
		e->wait = c;
	}
	if (!c->next)
		e->wait_tail = c;
	*tail = c;
	e->st.queued++;
	e->st.retried++;
}

/* Frees p's connection. Its output buffer is emptied first: libevent frees
 * a bufferevent's buffers later, and the chunks of source it references
 * must be released now. */
static void free_conn(struct tcp_peer *p)
{
	struct evbuffer *out = bufferevent_get_output(p->bev);

	evbuffer_unfreeze(out, 1); /* a socket bufferevent freezes its front */
	evbuffer_drain(out, evbuffer_get_length(out));
	bufferevent_free(p->bev);
}

/* Drops the connection and fails every copy on it: culprit with
 * (status, reason), the others as collateral. lost: the peer closed or
 * reset it; copies sent on it as a reused connection go again instead. */
static void reset_peer(struct tcp_peer *p, struct tcp_copy *culprit, int status,
		       const char *reason, bool lost)
{
	struct tcp_copy *list = p->wire, *c, *tail = NULL;
	struct tcp_engine *e = p->e;
	char other[ENDPOINT_MAX + 64];

	snprintf(other, sizeof(other), "connection to %s reset: %s",
		 p->endpoint, reason);
	unlink_peer(p);
	free_conn(p);
	free(p);
	while ((c = list) != NULL) {
		list = c->next;
		if (lost && c->reused && !c->retried)
			requeue(e, c, &tail);
		else if (!culprit || c == culprit)
			complete(c, status, reason);
		else
			complete(c, -ECONNABORTED, other);
	}
	if (tail)
		kick(e);
}

/* Queues the next chunk of payload; false when out of memory (the copy's
 * timeout, if any, ends the stall). */
static bool feed_payload(struct tcp_peer *p, struct evbuffer *out)
{
	size_t n =
	    p->feed_left < FEED_CHUNK ? (size_t)p->feed_left : FEED_CHUNK;

	if (p->feed_src) {
		if (evbuffer_add_reference(out, p->feed_src, n, on_release,
					   p->feed_copy))
			return false;
		p->feed_copy->refs++;
		p->feed_src += n;
	} else {
		n = n < sizeof(zeros) ? n : sizeof(zeros);
		if (evbuffer_add_reference(out, zeros, n, NULL, NULL))
			return false;
	}
	p->feed_left -= n;
	if (p->feed_left == 0)
		p->feed_copy = NULL;
	return true;
}

static struct tcp_copy *next_unsent(struct tcp_peer *p)
{
	struct tcp_copy *c = p->wire;

	while (c && c->hdr_sent)
		c = c->next;
	return c;
}

static void feed_header(struct tcp_peer *p, struct tcp_copy *c,
			struct evbuffer *out)
{
	struct data_req r = {.op = DATA_OP_WRITE,
			     .segment_id = c->dst.segment_id,
			     .offset = c->dst.offset,
			     .length = c->len,
			     .grant = c->dst.grant};
	uint8_t hdr[DATA_REQ_BYTES];

	data_req_encode(&r, hdr);
	evbuffer_add(out, hdr, sizeof(hdr));
	c->hdr_sent = true;
	p->feed_copy = c->len ? c : NULL;
	p->feed_src = c->src;
	p->feed_left = c->len;
}

/* Tops the output up to OUT_HIGH with headers and payload, in order. */
static void feed(struct tcp_peer *p)
{
	struct evbuffer *out = bufferevent_get_output(p->bev);
	struct tcp_copy *c;

	while (evbuffer_get_length(out) < OUT_HIGH) {
		if (p->feed_left) {
			if (!feed_payload(p, out))
				return;
			continue;
		}
		c = next_unsent(p);
		if (!c)
			return;
		feed_header(p, c, out);
	}
}

/* The reply (and its text) for the copy at the head of the wire. */
static void on_reply(struct tcp_peer *p, const char *text)
{
	struct tcp_copy *c = p->wire;
	char why[ENDPOINT_MAX + DATA_ERR_MAX + 64];

	p->wire = c->next;
	if (!p->wire)
		p->wire_tail = NULL;
	if (p->feed_copy == c) { /* refused early: finish with zeros */
		p->feed_copy = NULL;
		p->feed_src = NULL;
	}
	if (p->resp.status == DATA_OK) {
		settle(c, 0, NULL);
		return;
	}
	snprintf(why, sizeof(why), "%s refused the write: %s (%s)", p->endpoint,
		 text, data_status_str(p->resp.status));
	settle(c, data_status_errno(p->resp.status), why);
}

/* Takes one whole reply off in; false when more bytes are needed or the
 * peer was reset (then p is gone: *alive is false). */
static bool take_reply(struct tcp_peer *p, struct evbuffer *in, bool *alive)
{
	uint8_t hdr[DATA_RESP_BYTES];
	char text[DATA_ERR_MAX + 1];

	if (!p->have_resp) {
		if (evbuffer_get_length(in) < DATA_RESP_BYTES)
			return false;
		evbuffer_remove(in, hdr, sizeof(hdr));
		if (data_resp_decode(hdr, &p->resp) != 0 || !p->wire ||
		    !p->wire->hdr_sent || p->resp.length > DATA_ERR_MAX ||
		    (p->resp.status == DATA_OK && p->resp.length)) {
			*alive = false;
			reset_peer(p, NULL, -EPROTO,
				   "malformed or unexpected reply", false);
			return false;
		}
		p->have_resp = true;
	}
	if (evbuffer_get_length(in) < p->resp.length)
		return false;
	evbuffer_remove(in, text, (size_t)p->resp.length);
	text[p->resp.length] = '\0';
	p->have_resp = false;
	on_reply(p, text);
	return true;
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	struct tcp_peer *p = arg;
	bool alive = true;

	while (take_reply(p, bufferevent_get_input(bev), &alive))
		;
	if (alive)
		feed(p);
}

static void write_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	feed(arg);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tcp_peer *p = arg;
	int err = EVUTIL_SOCKET_ERROR();
	char why[ENDPOINT_MAX + 128];

	if (what & BEV_EVENT_CONNECTED) {
		p->connected = true;
		net_set_nodelay(bufferevent_getfd(bev));
		return;
	}
	if (!err || (what & BEV_EVENT_EOF))
		err = ECONNRESET;
	if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof(why), "%s closed the connection%s",
			 p->endpoint, p->wire ? " mid-copy" : "");
	else
		snprintf(why, sizeof(why), "%s %s: %s",
			 p->connected ? "connection lost to"
				      : "cannot connect to",
			 p->endpoint, strerror(err));
	reset_peer(p, NULL, -err, why, true);
}

static struct tcp_peer *find_peer(struct tcp_engine *e, const char *endpoint)
{
	for (struct tcp_peer *p = e->peers; p; p = p->next)
		if (strcmp(p->endpoint, endpoint) == 0)
			return p;
	return NULL;
}

static int connect_peer(struct tcp_peer *p, char *err, size_t errlen)
{
	char host[ENDPOINT_MAX];
	struct sockaddr_storage ss;
	socklen_t sl;
	uint16_t port;

	if (net_split_hostport(p->endpoint, host, sizeof(host), &port) ||
	    net_resolve(host, port, 0, &ss, &sl, err, errlen)) {
		if (!err[0])
			snprintf(err, errlen, "bad endpoint %s", p->endpoint);
		return -EINVAL;
	}
	p->bev =
	    bufferevent_socket_new(p->e->base.base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!p->bev) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	bufferevent_setcb(p->bev, read_cb, write_cb, event_cb, p);
	bufferevent_set_max_single_read(p->bev, BULK_IO_BYTES);
	bufferevent_set_max_single_write(p->bev, BULK_IO_BYTES);
	bufferevent_setwatermark(p->bev, EV_WRITE, OUT_HIGH / 2, 0);
	bufferevent_enable(p->bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(p->bev, (struct sockaddr *)&ss,
				       (int)sl)) {
		snprintf(err, errlen, "cannot connect to %s: %s", p->endpoint,
			 strerror(errno));
		bufferevent_free(p->bev);
		return -ECONNREFUSED;
	}
	return 0;
}

static struct tcp_peer *get_peer(struct tcp_engine *e, const char *endpoint,
				 int *status, char *err, size_t errlen)
{
	struct tcp_peer *p = find_peer(e, endpoint);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p) {
		*status = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->e = e;
	snprintf(p->endpoint, sizeof(p->endpoint), "%s", endpoint);
	*status = connect_peer(p, err, errlen);
	if (*status) {
		free(p);
		return NULL;
	}
	p->next = e->peers;
	e->peers = p;
	e->st.peers++;
	return p;
}

static void arm_timer(struct tcp_copy *c)
{
	uint32_t ms = c->e->cfg.timeout_ms;
	struct timeval tv = net_timeval_ms(ms);

	if (ms)
		evtimer_add(c->timer, &tv);
}

static void start(struct tcp_engine *e, struct tcp_copy *c)
{
	char err[ENDPOINT_MAX + 128] = "";
	int status = 0;
	struct tcp_peer *p;

	c->admitted = true;
	e->st.inflight++;
	e->st.inflight_bytes += c->len;
	if (e->st.inflight > e->st.max_inflight_seen)
		e->st.max_inflight_seen = e->st.inflight;
	if (e->st.inflight_bytes > e->st.max_inflight_bytes_seen)
		e->st.max_inflight_bytes_seen = e->st.inflight_bytes;
	c->reused = find_peer(e, c->endpoint) != NULL;
	p = get_peer(e, c->endpoint, &status, err, sizeof(err));
	if (!p) {
		complete(c, status, err);
		return;
	}
	arm_timer(c);
	c->peer = p;
	c->next = NULL;
	if (p->wire_tail)
		p->wire_tail->next = c;
	else
		p->wire = c;
	p->wire_tail = c;
	feed(p);
}

static bool fits(const struct tcp_engine *e, const struct tcp_copy *c)
{
	uint32_t max_n = e->cfg.max_inflight ? e->cfg.max_inflight : 1;

	if (e->st.inflight == 0)
		return true;
	return e->st.inflight < max_n &&
	       (!e->cfg.max_inflight_bytes ||
		span_within(e->st.inflight_bytes, c->len,
			    e->cfg.max_inflight_bytes));
}

/* Admits waiting copies while the bounds allow, oldest first. */
static void pump(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_engine *e = arg;
	struct tcp_copy *c;

	(void)fd;
	(void)what;
	complete_released(e);
	while ((c = e->wait) != NULL && fits(e, c)) {
		e->wait = c->next;
		if (!e->wait)
			e->wait_tail = NULL;
		e->st.queued--;
		start(e, c);
	}
}

/* The copy's deadline passed (unanswered, or answered but its source
 * still queued): its connection is in an unknown state. */
static void timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tcp_copy *c = arg;
	char why[ENDPOINT_MAX + 64];

	(void)fd;
	(void)what;
	snprintf(why, sizeof(why), "copy to %s timed out after %u ms",
		 c->endpoint, c->e->cfg.timeout_ms);
	if (c->peer)
		reset_peer(c->peer, c, -ETIMEDOUT, why, false);
}

static int tcp_post_write(struct copy_engine *base, const void *src,
			  uint64_t len, const struct copy_target *dst,
			  copy_done_cb cb, void *arg)
{
	struct tcp_engine *e = engine_of(base);
	struct tcp_copy *c;

	if (e->destroying)
		return -ECANCELED;
	if (!dst || !dst->endpoint || !cb || (!src && len) ||
	    len != dst->length || strlen(dst->endpoint) >= ENDPOINT_MAX)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->timer = evtimer_new(base->base, timeout_cb, c);
	if (!c->timer) {
		free(c);
		return -ENOMEM;
	}
	c->e = e;
	c->src = src;
	c->len = len;
	c->dst = *dst;
	snprintf(c->endpoint, sizeof(c->endpoint), "%s", dst->endpoint);
	c->dst.endpoint = c->endpoint;
	c->cb = cb;
	c->arg = arg;
	if (e->wait_tail)
		e->wait_tail->next = c;
	else
		e->wait = c;
	e->wait_tail = c;
	e->st.queued++;
	e->st.posted++;
	kick(e);
	return 0;
}

static int tcp_register(struct copy_engine *e, void *base, size_t len,
			uint64_t *addr_out, uint32_t *rkey_out)
{
	(void)e;
	(void)len;
	if (addr_out)
		*addr_out = (uint64_t)(uintptr_t)base;
	if (rkey_out)
		*rkey_out = 0;
	return 0;
}

static void tcp_destroy(struct copy_engine *base)
{
	struct tcp_engine *e = engine_of(base);
	struct tcp_copy *c;

	e->destroying = true;
	while (e->peers)
		reset_peer(e->peers, NULL, -ECANCELED, "copy engine shut down",
			   false);
	complete_released(e);
	while ((c = e->wait) != NULL) {
		e->wait = c->next;
		e->st.queued--;
		complete(c, -ECANCELED, "copy engine shut down");
	}
	event_free(e->kick);
	free(e);
}

static const struct copy_engine_ops tcp_ops = {
    .name = "tcp",
    .register_memory = tcp_register,
    .post_write = tcp_post_write,
    .destroy = tcp_destroy,
};

struct copy_engine *copy_engine_tcp_create(struct event_base *base,
					   const struct copy_engine_config *cfg,
					   char *err, size_t errlen)
{
	struct tcp_engine *e;

	if (!base || !cfg) {
		snprintf(err, errlen, "tcp engine: no event base or config");
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		goto out_nomem;
	e->kick = event_new(base, -1, 0, pump, e);
	if (!e->kick)
		goto out_free;
	e->base.ops = &tcp_ops;
	e->base.base = base;
	e->cfg = *cfg;
	e->cfg.rdma_device = NULL;
	return &e->base;
out_free:
	free(e);
out_nomem:
	snprintf(err, errlen, "out of memory");
	return NULL;
}

void copy_engine_tcp_stats(const struct copy_engine *e,
			   struct copy_engine_tcp_stats *out)
{
	if (!e || e->ops != &tcp_ops) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = ((const struct tcp_engine *)(const void *)e)->st;
}
