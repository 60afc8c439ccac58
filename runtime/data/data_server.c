/* The worker's data port (see data_server.h). */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "clock.h"
#include "data_server.h"
#include "grant.h"
#include "hold.h"
#include "revoke.h"
#include "netlimits.h"
#include "netutil.h"
#include "ratelog.h"
#include "stamp.h"

struct slot {
	uint8_t *mem;
	uint64_t len, id;
	struct data_stats st;
	struct grant_key key;	   /* its segment's (grant.h) */
	struct revoke_set revoked; /* WRITE grants revoked (revoke.h) */
};

enum conn_state {
	C_HEADER,  /* waiting for a request header */
	C_PAYLOAD, /* streaming a granted WRITE into the segment */
	C_DISCARD, /* dropping the payload of a refused WRITE */
	C_CLOSING, /* bad stream: flush the reply, then close */
};

struct conn {
	struct conn *prev, *next;
	struct data_server *s;
	struct bufferevent *bev;
	struct event *direct; /* C_PAYLOAD: reads straight into the segment */
	struct event *hdr_timer; /* a partial header: header_timeout_ms */
	enum conn_state state;
	uint8_t *dst;
	uint64_t remaining;
	int slot;
	uint64_t length; /* of the WRITE being streamed */
	/* bounds: body_window() and hold_input() */
	struct event *body_timer;   /* the payload's progress window */
	uint64_t body_got;	    /* payload bytes in this window */
	uint64_t body_need;	    /* ... it must see by its end */
	uint64_t charged;	    /* input charged to input_budget */
	unsigned queued;	    /* replies not yet flushed */
	bool paused;		    /* reading stopped for unread replies */
	int64_t until_ms;	    /* its grant's expiry on the local clock */
	struct data_grant grant;    /* of the WRITE being streamed */
	uint64_t offset;	    /* ... and its region's start */
	struct conn *wprev, *wnext; /* the server's writers (C_PAYLOAD) */
	bool writing;		    /* ... in that list */
	struct hold_owner holds;    /* its READ replies in flight (hold.h) */
	/* bounds: reply_window() */
	struct event *reply_timer; /* the replies' progress window */
	bool window_on;		   /* ... is running */
	uint64_t out_added;	   /* reply bytes queued, cumulative */
	uint64_t drain_base;	   /* ... sent when the window began */
	uint64_t drain_need;	   /* ... to send by its end */
};

struct data_server {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *accept_retry;
	struct ratelog rl_accept, rl_refuse, rl_bound;
	uint32_t max_conns;
	struct data_server_config cfg;
	char host[NET_ADDRSTRLEN];
	uint16_t port;
	struct slot *slots;
	int n_slots;
	struct conn *conns;
	struct conn *writers;  /* WRITEs streaming into a segment */
	struct hold_set holds; /* READ replies in flight (hold.h) */
	struct data_server_counters counters;
	int64_t master_offset_ms; /* master clock - local clock (grant.h) */
};

void data_server_config_init(struct data_server_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->host = "127.0.0.1";
	cfg->max_io_bytes = 1ull << 30;
	cfg->out_high_water = 64u << 20;
	cfg->idle_timeout_ms = 60000;
	cfg->header_timeout_ms = net_limits()->data.header_timeout_ms;
	cfg->max_connections = net_limits()->data.max_connections;
	cfg->body_timeout_ms = net_limits()->data.body_timeout_ms;
	cfg->min_body_rate = net_limits()->data.min_body_rate;
	cfg->conn_input = net_limits()->data.conn_input;
	cfg->input_budget = net_limits()->data.input_budget;
}

static struct slot *find_slot(struct data_server *s, uint64_t id, int *idx)
{
	for (int i = 0; id && i < s->n_slots; i++) {
		if (s->slots[i].id == id) {
			*idx = i;
			return &s->slots[i];
		}
	}
	return NULL;
}

/* c streams a WRITE into a segment (READs of its range are refused) */
static void writer_enter(struct conn *c)
{
	struct data_server *s = c->s;

	c->writing = true;
	s->counters.writes_streaming++;
	c->wprev = NULL;
	c->wnext = s->writers;
	if (s->writers)
		s->writers->wprev = c;
	s->writers = c;
}

static void writer_leave(struct conn *c)
{
	if (!c->writing)
		return;
	if (c->wprev)
		c->wprev->wnext = c->wnext;
	else
		c->s->writers = c->wnext;
	if (c->wnext)
		c->wnext->wprev = c->wprev;
	c->writing = false;
	c->s->counters.writes_streaming--;
}

static void conn_free(struct conn *c)
{
	struct data_server *s = c->s;

	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	writer_leave(c);
	/* its replies are never sent now: their bytes are no longer held */
	hold_detach_all(&c->holds);
	if (c->reply_timer)
		event_free(c->reply_timer);
	event_free(c->direct);
	if (c->hdr_timer)
		event_free(c->hdr_timer);
	if (c->body_timer)
		event_free(c->body_timer);
	s->counters.input_held -= c->charged;
	bufferevent_free(c->bev);
	s->counters.connections--;
	free(c);
}

static void reply_window(struct conn *c);

/* The socket took a held reply's last byte, or its buffer was freed. */
static void unhold(const void *data, size_t len, void *h)
{
	(void)data;
	(void)len;
	hold_release(h);
}

/* Header plus payload; a payload from segment memory (slot >= 0, at
 * offset) is referenced, not copied, under a read hold (hold.h). */
static void reply_at(struct conn *c, enum data_status st, const void *payload,
		     uint64_t len, int slot, uint64_t offset)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	struct data_resp r = {.status = (uint16_t)st, .length = len};
	uint8_t hdr[DATA_RESP_BYTES];
	struct hold *h = NULL;

	if (len && slot >= 0) {
		h = hold_add(&c->s->holds, &c->holds, slot, offset, len);
		if (!h) {
			reply_at(c, DATA_E_INTERNAL, "out of memory", 13, -1,
				 0);
			return;
		}
	}
	data_resp_encode(&r, hdr);
	c->queued++;
	c->out_added += sizeof(hdr) + len;
	evbuffer_add(out, hdr, sizeof(hdr));
	if (h &&
	    evbuffer_add_reference(out, payload, (size_t)len, unhold, h) != 0)
		hold_release(h); /* out of memory: nothing references it */
	else if (!h && len)
		evbuffer_add(out, payload, (size_t)len);
	reply_window(c);
}

static void reply(struct conn *c, enum data_status st, const void *payload,
		  uint64_t len)
{
	reply_at(c, st, payload, len, -1, 0);
}

/* An error reply whose payload is one formatted line. */
static void reply_err(struct conn *c, enum data_status st, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reply_err(struct conn *c, enum data_status st, const char *fmt, ...)
{
	char text[DATA_ERR_MAX + 1];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > DATA_ERR_MAX)
		n = DATA_ERR_MAX;
	reply(c, st, text, (uint64_t)n);
}

/* The master's clock as this worker estimates it (never behind it). */
static int64_t master_now(const struct data_server *s)
{
	return net_now_ms() + s->master_offset_ms;
}

static void start_closing(struct conn *c)
{
	c->s->counters.bad_streams++;
	c->state = C_CLOSING;
	bufferevent_disable(c->bev, EV_READ);
}

/* A READ's region must still hold the object its grant names: its stamp
 * (stamp.h) names the grant's object and incarnation and the length. */
/* Under master HA (docs/HA.md) a version carries its term in its top 32
 * bits, so an object id names one object across every master's term: an
 * object a new leader recovered keeps the incarnation it was stamped
 * under, and its id alone proves the region holds it. A single master's
 * versions count from 1 (top bits 0): those need this master's
 * incarnation too. */
static bool stamp_id_spans_terms(uint64_t object_id)
{
	return object_id >> 32 != 0;
}

static bool holds_object(const struct data_req *r, const struct slot *sl)
{
	struct stamp_id id;
	uint32_t crc;

	return r->length >= STAMP_BYTES &&
	       stamp_read(sl->mem + r->offset, STAMP_BYTES, &id, &crc) ==
		   STAMP_OK &&
	       (id.incarnation == sl->key.incarnation ||
		stamp_id_spans_terms(id.object_id)) &&
	       id.object_id == r->grant.object_id &&
	       id.length == r->length - STAMP_BYTES;
}

/* The one answer to a grant that does not verify (see judge_grant). */
static void deny(struct conn *c, const struct data_req *r)
{
	const struct slot *sl = NULL;
	int idx = -1;

	sl = find_slot(c->s, r->segment_id, &idx);
	reply_err(c, DATA_E_DENIED,
		  "%s grant refused for segment %llu [%llu, +%llu)%s",
		  r->op == DATA_OP_READ ? "read" : "write",
		  (unsigned long long)r->segment_id,
		  (unsigned long long)r->offset, (unsigned long long)r->length,
		  sl && sl->key.set ? "" : ": not mounted with a master yet");
}

/* The grant of a READ or WRITE inside its segment, checked with that
 * segment's key (grant.h): DATA_OK, or the refusal sent. Whatever is wrong
 * with a grant that does not verify (its tag, or a READ's object against
 * the region's stamp), the answer is one: DENIED, one reason naming only
 * the request's own fields (no oracle, grant.h). */
static enum data_status judge_grant(struct conn *c, const struct data_req *r,
				    const struct slot *sl)
{
	struct data_server *s = c->s;
	const char *op = r->op == DATA_OP_READ ? "read" : "write";
	enum data_status st;

	if (s->cfg.grants_off)
		return DATA_OK;
	st = grant_check(&sl->key, r, master_now(s));
	if (st == DATA_OK && r->op == DATA_OP_WRITE &&
	    revoke_set_covers(&sl->revoked, r->offset, r->length,
			      r->grant.object_id, r->grant.expires_ms)) {
		st = DATA_E_DENIED; /* revoked: refused as a forged grant */
		s->counters.refused_revoked++;
	}
	if (st == DATA_E_DENIED) {
		s->counters.refused_grant++;
	} else if (st == DATA_OK && r->op == DATA_OP_READ &&
		   !holds_object(r, sl)) {
		st = DATA_E_DENIED;
		s->counters.refused_stale++;
	}
	if (st == DATA_E_DENIED) {
		deny(c, r);
	} else if (st == DATA_E_EXPIRED) {
		s->counters.refused_expired++;
		reply_err(
		    c, st,
		    "%s grant for segment %llu [%llu, +%llu) expired "
		    "%lld ms ago: ask the master again",
		    op, (unsigned long long)r->segment_id,
		    (unsigned long long)r->offset,
		    (unsigned long long)r->length,
		    (long long)(master_now(s) - (int64_t)r->grant.expires_ms));
	}
	return st;
}

/* Refusal for req against slot sl (NULL = unknown segment): the status and
 * its reason, or DATA_OK when the request may proceed. */
static enum data_status judge(struct conn *c, const struct data_req *r,
			      const struct slot *sl)
{
	enum data_status st;

	if (!sl) {
		reply_err(c, DATA_E_NO_SEGMENT,
			  "segment %llu is not served here",
			  (unsigned long long)r->segment_id);
		return DATA_E_NO_SEGMENT;
	}
	st = data_req_check(r, sl->len, c->s->cfg.max_io_bytes);
	if (st == DATA_E_TOO_LARGE) {
		reply_err(c, st, "length %llu is above the maximum %llu",
			  (unsigned long long)r->length,
			  (unsigned long long)c->s->cfg.max_io_bytes);
	} else if (st == DATA_E_RANGE) {
		reply_err(
		    c, st,
		    "range [%llu, +%llu) is outside segment %llu (%llu bytes)",
		    (unsigned long long)r->offset,
		    (unsigned long long)r->length,
		    (unsigned long long)r->segment_id,
		    (unsigned long long)sl->len);
	} else if (st == DATA_OK && r->op != DATA_OP_STATS) {
		st = judge_grant(c, r, sl);
	}
	return st;
}

/* A WRITE streams into r's range now: what a reply would carry is not
 * the object its grant names, whatever the stamp says. */
static bool being_written(const struct data_server *s, int slot,
			  const struct data_req *r)
{
	for (const struct conn *w = s->writers; w; w = w->wnext)
		if (w->slot == slot && r->offset < w->offset + w->length &&
		    w->offset < r->offset + r->length)
			return true;
	return false;
}

static void on_read_req(struct conn *c, const struct data_req *r)
{
	int idx = -1;
	struct slot *sl = find_slot(c->s, r->segment_id, &idx);

	if (judge(c, r, sl) != DATA_OK) {
		c->s->counters.refused_reads++;
		return;
	}
	if (being_written(c->s, idx, r)) {
		c->s->counters.refused_stale++;
		c->s->counters.refused_reads++;
		deny(c, r);
		return;
	}
	sl->st.reads++;
	sl->st.read_bytes += r->length;
	reply_at(c, DATA_OK, sl->mem + r->offset, r->length, idx, r->offset);
}

static void on_stats_req(struct conn *c, const struct data_req *r)
{
	int idx = -1;
	struct slot *sl = find_slot(c->s, r->segment_id, &idx);
	uint8_t buf[DATA_STATS_BYTES];

	if (!sl) {
		judge(c, r, sl);
		return;
	}
	data_stats_encode(&sl->st, buf);
	reply(c, DATA_OK, buf, sizeof(buf));
}

static void finish_write(struct conn *c)
{
	struct slot *sl = &c->s->slots[c->slot];

	writer_leave(c);
	sl->st.writes++;
	sl->st.write_bytes += c->length;
	c->state = C_HEADER;
	reply(c, DATA_OK, NULL, 0);
}

static struct conn *conn_of(struct hold_owner *o)
{
	return (struct conn *)(void *)((char *)o -
				       offsetof(struct conn, holds));
}

/* A WRITE into [r->offset, +r->length) of slot is about to land: every
 * other connection with a READ reply from there still unsent is closed
 * first (its reply outlived its read lease: the master gives a region away
 * only after), so no reply carries the new bytes. False when c's own reply
 * is one of them: the WRITE is refused (its payload discarded). */
static bool clear_holds(struct conn *c, int slot, const struct data_req *r)
{
	struct data_server *s = c->s;
	struct hold_owner *o;

	if (hold_owner_overlaps(&c->holds, slot, r->offset, r->length)) {
		s->counters.refused_writes++;
		reply_err(c, DATA_E_BAD_REQUEST,
			  "write into segment %llu [%llu, +%llu) while this "
			  "connection's read reply from there is unsent: "
			  "read it first",
			  (unsigned long long)r->segment_id,
			  (unsigned long long)r->offset,
			  (unsigned long long)r->length);
		c->state = C_DISCARD;
		c->remaining = r->length;
		return false;
	}
	while ((o = hold_find(&s->holds, slot, r->offset, r->length))) {
		s->counters.cut_replies++;
		ratelog(&s->rl_bound, LOG_WARN,
			"data_server: cut a read reply still unsent from "
			"segment %llu [%llu, +%llu): a write is landing there",
			(unsigned long long)r->segment_id,
			(unsigned long long)r->offset,
			(unsigned long long)r->length);
		conn_free(conn_of(o));
	}
	return true;
}

static void on_write_req(struct conn *c, const struct data_req *r)
{
	int idx = -1;
	struct slot *sl = find_slot(c->s, r->segment_id, &idx);
	enum data_status st = judge(c, r, sl);

	if (st != DATA_OK) {
		c->s->counters.refused_writes++;
		if (st == DATA_E_TOO_LARGE) {
			start_closing(c);
			return;
		}
		c->state = r->length ? C_DISCARD : C_HEADER;
		c->remaining = r->length;
		return;
	}
	if (r->length && !clear_holds(c, idx, r))
		return;
	c->slot = idx;
	c->length = r->length;
	c->grant = r->grant;
	c->offset = r->offset;
	c->until_ms = c->s->cfg.grants_off
			  ? INT64_MAX
			  : (int64_t)(r->grant.expires_ms > INT64_MAX / 2
					  ? INT64_MAX / 2
					  : r->grant.expires_ms) -
				c->s->master_offset_ms;
	c->dst = sl->mem + r->offset;
	c->remaining = r->length;
	c->state = C_PAYLOAD;
	if (r->length == 0)
		finish_write(c);
	else
		writer_enter(c);
}

static void on_header(struct conn *c, const uint8_t *hdr)
{
	struct data_req r;
	enum data_decode d = data_req_decode(hdr, &r);

	if (d != DATA_DECODE_OK) {
		reply_err(c, DATA_E_BAD_REQUEST, "%s; closing",
			  d == DATA_DECODE_BAD_MAGIC ? "bad magic"
			  : d == DATA_DECODE_BAD_VERSION
			      ? "unsupported protocol version (this worker "
				"speaks version 2: grants on every read and "
				"write)"
			      : "unknown op");
		start_closing(c);
		return;
	}
	if (r.op == DATA_OP_READ)
		on_read_req(c, &r);
	else if (r.op == DATA_OP_WRITE)
		on_write_req(c, &r);
	else
		on_stats_req(c, &r);
}

/* A granted WRITE still streaming when its grant expires is cut: no byte
 * lands after the expiry (the master may give the region to another
 * object then). The connection is closed (true; c is gone). */
static bool expired_mid_write(struct conn *c)
{
	if (net_now_ms() < c->until_ms)
		return false;
	c->s->counters.cut_writes++;
	c->s->counters.refused_expired++;
	conn_free(c);
	return true;
}

enum take { TAKE_MOVED, TAKE_EMPTY, TAKE_GONE };

/* Moves payload bytes: TAKE_EMPTY when the input is exhausted, TAKE_GONE
 * when the write's grant expired (c is freed). */
static enum take take_payload(struct conn *c, struct evbuffer *in)
{
	size_t avail = evbuffer_get_length(in);
	size_t n = c->remaining < avail ? (size_t)c->remaining : avail;

	if (n == 0)
		return TAKE_EMPTY;
	if (c->state == C_PAYLOAD && expired_mid_write(c))
		return TAKE_GONE;
	if (c->state == C_PAYLOAD) {
		evbuffer_remove(in, c->dst, n);
		c->dst += n;
	} else {
		evbuffer_drain(in, n);
	}
	c->remaining -= n;
	c->body_got += n;
	if (c->remaining == 0 && c->state == C_PAYLOAD)
		finish_write(c);
	else if (c->remaining == 0)
		c->state = C_HEADER;
	return TAKE_MOVED;
}

/* The idle timeout, or NULL for none. */
static const struct timeval *idle_tv(const struct data_server *s,
				     struct timeval *tv)
{
	uint32_t ms = s->cfg.idle_timeout_ms;

	tv->tv_sec = (time_t)(ms / 1000);
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
	return ms ? tv : NULL;
}

static bool reading_direct(const struct conn *c)
{
	return event_pending(c->direct, EV_READ, NULL);
}

/* The input buffer ran dry mid-payload: the rest is read straight into
 * the segment by the connection's own read event, bypassing libevent's
 * buffer chain; the bufferevent stops reading until the payload is in. */
static void start_direct(struct conn *c)
{
	struct timeval tv;

	bufferevent_disable(c->bev, EV_READ);
	event_add(c->direct, idle_tv(c->s, &tv));
}

/* Nothing is pending on an idle connection: close it (true). */
static bool close_if_idle(struct conn *c)
{
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) != 0)
		return false;
	c->s->counters.idle_closed++;
	conn_free(c);
	return true;
}

/* Receives payload into the segment: at most the rest of the granted range
 * (validated by on_write_req) and BULK_IO_BYTES per call. */
static void direct_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	size_t budget = BULK_IO_BYTES;

	if (what & EV_TIMEOUT) {
		close_if_idle(c);
		return;
	}
	while (c->remaining && budget) {
		size_t want;

		if (expired_mid_write(c))
			return;
		want = c->remaining < budget ? (size_t)c->remaining : budget;
		ssize_t n = recv(fd, c->dst, want, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) { /* closed or failed mid-payload */
			conn_free(c);
			return;
		}
		c->dst += n;
		c->remaining -= (uint64_t)n;
		c->body_got += (uint64_t)n;
		budget -= (size_t)n;
	}
	if (c->remaining)
		return;
	event_del(c->direct);
	bufferevent_enable(c->bev, EV_READ);
	finish_write(c);
}

/* Paused with request bytes buffered: they count against input_budget
 * until reading resumes; past it the connection is closed (false: c is
 * freed). */
static bool hold_input(struct conn *c)
{
	struct data_server *s = c->s;
	size_t held = evbuffer_get_length(bufferevent_get_input(c->bev));

	s->counters.paused++;
	if (s->counters.input_held + held > s->cfg.input_budget) {
		s->counters.budget_closed++;
		ratelog(&s->rl_bound, LOG_WARN,
			"data_server: closed a connection holding %zu request "
			"bytes while not reading its replies: past "
			"data_input_budget (%llu, %llu held by others)",
			held, (unsigned long long)s->cfg.input_budget,
			(unsigned long long)s->counters.input_held);
		conn_free(c);
		return false;
	}
	c->charged = held;
	s->counters.input_held += held;
	return true;
}

/* Replies flushed: the held input is no longer charged. */
static void release_input(struct conn *c)
{
	c->s->counters.input_held -= c->charged;
	c->charged = 0;
	c->queued = 0;
	c->paused = false;
}

/* Too much output unflushed (bytes or replies): stop reading. True when
 * reading stopped (c may then have been freed by hold_input). */
static bool backlogged(struct conn *c)
{
	struct evbuffer *out = bufferevent_get_output(c->bev);
	bool bytes = evbuffer_get_length(out) > c->s->cfg.out_high_water;

	if (!bytes && c->queued < DATA_MAX_QUEUED)
		return false;
	/* many small replies: what the socket takes now is no backlog (a
	 * pipelining peer that reads is not paused or charged) */
	if (!bytes) {
		(void)evbuffer_write(out, bufferevent_getfd(c->bev));
		if (evbuffer_get_length(out) == 0) {
			c->queued = 0;
			return false;
		}
	}
	bufferevent_disable(c->bev, EV_READ);
	if (!c->paused) {
		c->paused = true;
		(void)hold_input(c);
	}
	return true;
}

static void on_body_timer(evutil_socket_t fd, short what, void *arg);

/* A window of the payload's progress: by its end body_need bytes (the rate
 * over the window, or the rest) must have come. */
static void body_window(struct conn *c)
{
	uint32_t ms = c->s->cfg.body_timeout_ms;
	uint64_t rate = c->s->cfg.min_body_rate, need;
	struct timeval tv = net_timeval_ms(ms);

	if (!ms || !c->remaining)
		return;
	if (!c->body_timer)
		c->body_timer = evtimer_new(c->s->base, on_body_timer, c);
	if (!c->body_timer)
		return;
	need = rate > UINT64_MAX / ms ? UINT64_MAX : rate * ms / 1000;
	c->body_need = need < c->remaining ? need : c->remaining;
	c->body_got = 0;
	evtimer_add(c->body_timer, &tv);
}

static void on_body_timer(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->state != C_PAYLOAD && c->state != C_DISCARD)
		return; /* the payload is in */
	if (c->body_got >= c->body_need) {
		body_window(c);
		return;
	}
	c->s->counters.body_timeouts++;
	ratelog(&c->s->rl_bound, LOG_WARN,
		"data_server: closed a connection: %llu payload bytes in %u "
		"ms, under data_min_body_rate (%llu/s)",
		(unsigned long long)c->body_got, c->s->cfg.body_timeout_ms,
		(unsigned long long)c->s->cfg.min_body_rate);
	conn_free(c);
}

static void on_reply_timer(evutil_socket_t fd, short what, void *arg);

/* Replies wait to be sent: by the end of a window of body_timeout_ms the
 * socket must take drain_need bytes (min_body_rate over the window, or
 * all that waited) or the connection is closed, its holds with it. Armed
 * at a reply unless a window runs, and left to run when all is sent (a
 * timer per reply would cost more than the reply's checks): a window that
 * ends with nothing unsent stops, one that ends with bytes unsent but
 * enough sent starts the next, so a reply that stops draining is closed
 * within two windows. */
static void reply_window(struct conn *c)
{
	uint32_t ms = c->s->cfg.body_timeout_ms;
	uint64_t rate = c->s->cfg.min_body_rate, need, left;
	struct timeval tv = net_timeval_ms(ms);

	if (!ms || c->window_on)
		return;
	if (!c->reply_timer)
		c->reply_timer = evtimer_new(c->s->base, on_reply_timer, c);
	if (!c->reply_timer)
		return;
	left = evbuffer_get_length(bufferevent_get_output(c->bev));
	need = rate > UINT64_MAX / ms ? UINT64_MAX : rate * ms / 1000;
	c->drain_base = c->out_added - left;
	c->drain_need = need < left ? need : left;
	c->window_on = evtimer_add(c->reply_timer, &tv) == 0;
}

static void on_reply_timer(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	uint64_t left = evbuffer_get_length(bufferevent_get_output(c->bev));
	uint64_t sent = c->out_added - left - c->drain_base;

	(void)fd;
	(void)what;
	c->window_on = false;
	if (left == 0)
		return;
	if (sent >= c->drain_need) {
		reply_window(c);
		return;
	}
	c->s->counters.reply_timeouts++;
	ratelog(&c->s->rl_bound, LOG_WARN,
		"data_server: closed a connection: %llu reply bytes sent in %u "
		"ms, %llu unsent, under data_min_body_rate (%llu/s)",
		(unsigned long long)sent, c->s->cfg.body_timeout_ms,
		(unsigned long long)left,
		(unsigned long long)c->s->cfg.min_body_rate);
	conn_free(c);
}

static void on_header_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	c->s->counters.header_timeouts++;
	conn_free(c);
}

/* partial bytes of a header wait: its deadline runs from the first one
 * (0 = none waiting: the deadline is off). */
static void watch_header(struct conn *c, size_t partial)
{
	uint32_t ms = c->s->cfg.header_timeout_ms;
	struct timeval tv = net_timeval_ms(ms);

	if (!partial || !ms) {
		if (c->hdr_timer)
			event_del(c->hdr_timer);
		return;
	}
	if (!c->hdr_timer)
		c->hdr_timer = evtimer_new(c->s->base, on_header_timeout, c);
	if (c->hdr_timer && !evtimer_pending(c->hdr_timer, NULL))
		evtimer_add(c->hdr_timer, &tv);
}

/* A partial header whose magic or version is already wrong (an older
 * client's shorter header): answered and closed now (true). */
static bool bad_prefix(struct conn *c, struct evbuffer *in)
{
	uint8_t pre[DATA_REQ_PREFIX];
	enum data_decode d;

	if (evbuffer_get_length(in) < DATA_REQ_PREFIX ||
	    evbuffer_copyout(in, pre, sizeof(pre)) != (ssize_t)sizeof(pre))
		return false;
	d = data_req_decode_prefix(pre);
	if (d == DATA_DECODE_OK)
		return false;
	watch_header(c, 0);
	reply_err(c, DATA_E_BAD_REQUEST, "%s; closing",
		  d == DATA_DECODE_BAD_MAGIC
		      ? "bad magic"
		      : "unsupported protocol version (this worker speaks "
			"version 2: grants on every read and write)");
	start_closing(c);
	return true;
}

static void process(struct conn *c)
{
	struct evbuffer *in = bufferevent_get_input(c->bev);
	uint8_t hdr[DATA_REQ_BYTES];

	while (c->state != C_CLOSING) {
		if (c->state != C_HEADER) {
			enum take t = take_payload(c, in);

			if (t == TAKE_GONE)
				return;
			if (t == TAKE_MOVED)
				continue;
			if (c->state == C_PAYLOAD)
				start_direct(c);
			return;
		}
		if (backlogged(c))
			return;
		if (evbuffer_get_length(in) < DATA_REQ_BYTES) {
			if (bad_prefix(c, in))
				continue;
			watch_header(c, evbuffer_get_length(in));
			return;
		}
		watch_header(c, 0);
		evbuffer_remove(in, hdr, sizeof(hdr));
		on_header(c, hdr);
		if (c->state == C_PAYLOAD || c->state == C_DISCARD)
			body_window(c);
	}
	evbuffer_drain(in, evbuffer_get_length(in));
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	(void)bev;
	process(arg);
}

/* The output drained completely (low watermark 0). */
static void write_cb(struct bufferevent *bev, void *arg)
{
	struct conn *c = arg;

	if (c->state == C_CLOSING) {
		conn_free(c);
		return;
	}
	release_input(c);
	if (!(bufferevent_get_enabled(bev) & EV_READ) && !reading_direct(c)) {
		bufferevent_enable(bev, EV_READ);
		process(c);
	}
}

/* A read timeout with no reply pending is an idle connection: close it.
 * Otherwise the peer is receiving a long reply; libevent disabled reading
 * on the timeout, so turn it back on. */
static void on_timeout(struct conn *c)
{
	if (!close_if_idle(c))
		bufferevent_enable(c->bev, EV_READ);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		conn_free(arg);
	else if (what & BEV_EVENT_TIMEOUT)
		on_timeout(arg);
}

static void set_idle_timeout(struct conn *c)
{
	struct timeval tv;
	const struct timeval *t = idle_tv(c->s, &tv);

	if (t)
		bufferevent_set_timeouts(c->bev, t, NULL);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	struct data_server *s = arg;
	struct conn *c;

	(void)l;
	(void)sa;
	(void)salen;
	if (s->counters.connections >= s->max_conns) {
		s->counters.refused++;
		ratelog(&s->rl_refuse, LOG_WARN,
			"data_server: refused a connection: %u open, the limit "
			"(data_max_connections)",
			s->max_conns);
		evutil_closesocket(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (c)
		c->direct =
		    event_new(s->base, fd, EV_READ | EV_PERSIST, direct_cb, c);
	if (c && c->direct)
		c->bev =
		    bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (!c || !c->bev) {
		if (c && c->direct)
			event_free(c->direct);
		free(c);
		evutil_closesocket(fd);
		return;
	}
	net_set_nodelay(fd);
	c->s = s;
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->counters.connections++;
	s->counters.accepted++;
	bufferevent_setcb(c->bev, read_cb, write_cb, event_cb, c);
	/* libevent reads and writes 16 KiB per call by default: bulk data
	 * wants far larger syscalls */
	bufferevent_set_max_single_read(c->bev, BULK_IO_BYTES);
	bufferevent_set_max_single_write(c->bev, BULK_IO_BYTES);
	bufferevent_setwatermark(c->bev, EV_READ, 0, (size_t)s->cfg.conn_input);
	set_idle_timeout(c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct data_server *s = arg;

	(void)fd;
	(void)what;
	evconnlistener_enable(s->listener);
}

/* accept(2) failed (EMFILE, ...): back off instead of spinning. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct timeval tv = {.tv_usec = NET_ACCEPT_RETRY_MS * 1000};
	struct data_server *s = arg;

	ratelog(&s->rl_accept, LOG_WARN,
		"data_server: accept: %s; pausing %d ms", strerror(errno),
		NET_ACCEPT_RETRY_MS);
	evconnlistener_disable(l);
	evtimer_add(s->accept_retry, &tv);
}

static int bound_port(struct evconnlistener *l, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&ss,
			&sl) != 0)
		return -1;
	*port = ntohs(ss.ss_family == AF_INET6
			  ? ((struct sockaddr_in6 *)(void *)&ss)->sin6_port
			  : ((struct sockaddr_in *)(void *)&ss)->sin_port);
	return 0;
}

struct data_server *data_server_create(struct event_base *base,
				       const struct data_server_config *cfg,
				       char *err, size_t errlen)
{
	struct data_server *s = calloc(1, sizeof(*s));
	struct sockaddr_storage ss;
	socklen_t sl;
	unsigned flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->base = base;
	s->cfg = *cfg;
	snprintf(s->host, sizeof(s->host), "%s", cfg->host ? cfg->host : "");
	s->cfg.host = s->host;
	s->max_conns = net_conn_cap(cfg->max_connections);
	s->accept_retry = evtimer_new(base, accept_retry_cb, s);
	if (!s->accept_retry) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	if (net_resolve(s->host, cfg->port, 1, &ss, &sl, err, errlen))
		goto out_free;
	s->listener = evconnlistener_new_bind(base, accept_cb, s, flags, 128,
					      (struct sockaddr *)&ss, (int)sl);
	if (!s->listener) {
		snprintf(err, errlen, "cannot listen on %s:%u: %s", s->host,
			 cfg->port, strerror(errno));
		goto out_free;
	}
	evconnlistener_set_error_cb(s->listener, accept_error_cb);
	if (bound_port(s->listener, &s->port)) {
		snprintf(err, errlen, "getsockname: %s", strerror(errno));
		goto out_free_listener;
	}
	return s;
out_free_listener:
	evconnlistener_free(s->listener);
out_free:
	if (s->accept_retry)
		event_free(s->accept_retry);
	free(s);
	return NULL;
}

void data_server_destroy(struct data_server *s)
{
	if (!s)
		return;
	while (s->conns)
		conn_free(s->conns);
	evconnlistener_free(s->listener);
	event_free(s->accept_retry);
	hold_set_fini(&s->holds);
	for (int i = 0; i < s->n_slots; i++)
		revoke_set_fini(&s->slots[i].revoked);
	free(s->slots);
	free(s);
}

uint16_t data_server_port(const struct data_server *s)
{
	return s->port;
}

int data_server_add_segment(struct data_server *s, void *mem, uint64_t len)
{
	struct slot *n =
	    realloc(s->slots, (size_t)(s->n_slots + 1) * sizeof(*n));

	if (!n)
		return -1;
	s->slots = n;
	memset(&n[s->n_slots], 0, sizeof(*n));
	/* one revocation per region the master can free: a region holds at
	 * least a stamp and one byte */
	if (revoke_set_init(&n[s->n_slots].revoked,
			    (size_t)(len / (STAMP_BYTES + 1)) + 1) != 0)
		return -1;
	n[s->n_slots].mem = mem;
	n[s->n_slots].len = len;
	return s->n_slots++;
}

void data_server_bind(struct data_server *s, int slot, uint64_t segment_id)
{
	if (slot < 0 || slot >= s->n_slots)
		return;
	s->slots[slot].id = segment_id;
}

void data_server_set_grant_key(struct data_server *s, int slot,
			       const uint8_t key[GRANT_SECRET_BYTES],
			       uint64_t incarnation)
{
	if (slot < 0 || slot >= s->n_slots)
		return;
	if (!key)
		memset(&s->slots[slot].key, 0, sizeof(s->slots[slot].key));
	else
		grant_key_init(&s->slots[slot].key, key, incarnation);
	/* grants under the old key no longer verify: nothing to revoke */
	revoke_set_clear(&s->slots[slot].revoked);
}

int data_server_revoke_write(struct data_server *s, uint64_t segment_id,
			     uint64_t offset, uint64_t length,
			     uint64_t object_id, uint64_t until_ms)
{
	int idx = -1;
	struct slot *sl = find_slot(s, segment_id, &idx);
	struct conn *c, *next;

	if (!sl || revoke_set_add(&sl->revoked, offset, length, object_id,
				  until_ms, master_now(s)) != 0)
		return -1;
	/* a write in flight under the revoked grant is cut: nothing more of
	 * it lands */
	for (c = s->conns; c; c = next) {
		next = c->next;
		if (c->state == C_PAYLOAD && c->slot == idx &&
		    revoke_set_covers(&sl->revoked, c->offset, c->length,
				      c->grant.object_id,
				      c->grant.expires_ms)) {
			s->counters.cut_writes++;
			s->counters.refused_revoked++;
			conn_free(c);
		}
	}
	return 0;
}

void data_server_set_master_clock(struct data_server *s, uint64_t master_now_ms,
				  int64_t local_sent_ms)
{
	s->master_offset_ms = (int64_t)master_now_ms - local_sent_ms;
}

void data_server_slot_stats(const struct data_server *s, int slot,
			    struct data_stats *out)
{
	if (slot < 0 || slot >= s->n_slots)
		memset(out, 0, sizeof(*out));
	else
		*out = s->slots[slot].st;
}

void data_server_counters(const struct data_server *s,
			  struct data_server_counters *out)
{
	*out = s->counters;
	out->held_replies = s->holds.n;
}
