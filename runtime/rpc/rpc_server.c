/* RPC server: listener, connections, framing and service dispatch. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>
#include <openssl/err.h>
#include <netinet/in.h>

#include "clock.h"
#include "bytes.h"
#include "evframe.h"
#include "netlimits.h"
#include "netutil.h"
#include "peer_table.h"
#include "ratelog.h"
#include "rpc_dispatch.h"
#include "rpc_server.h"
#include "tls.h"

/* Seconds a refused connection may take to flush and close. */
#define CLOSE_LINGER_TIMEOUT_S 5
#define ACCEPT_RETRY_MS NET_ACCEPT_RETRY_MS
/* Connections accepted per loop turn: a burst of thousands is taken in
 * slices, between which the loop serves the connections it has. An accept
 * (and its refusal or admission) costs 10-20 us: 4 keep a slice under
 * 0.1 ms, the wait it adds to a request of an established connection. */
#define ACCEPT_BATCH 4
/* Requests served from one connection per loop turn: a peer pipelining
 * a thousand calls gets 16, then the other ready connections their turn,
 * then 16 more (its read callback re-runs, deferred, next turn). */
#define FRAMES_PER_TURN 16
/* Connections closed per loop turn when peers leave in a crowd (a storm's
 * 2,000 at once): the rest wait a turn, behind the calls that are ready. */
#define CLOSES_PER_TURN 32
/* Refused connections still flushing their TOO_MANY; beyond this a refused
 * connection is closed without a word. */
#define MAX_REFUSING 64

struct rpc_conn {
	rpc_server *server;
	struct bufferevent *bev;
	struct event *timer; /* idle and frame deadlines */
	rpc_conn *prev, *next;
	rpc_conn *wait_prev, *wait_next; /* in the input budget queue */
	rpc_conn *reap_next;		 /* in the queue to close */
	rpc_conn *anon_prev, *anon_next; /* unauthenticated, oldest first */
	struct peer_entry *peer_ent;
	uint64_t id;
	int64_t active_ms; /* last request taken (or accepted) */
	int64_t frame_ms;  /* first byte of the partial frame; 0 = none */
	int64_t timer_ms;  /* when the timer fires; 0 = not armed */
	size_t want;	   /* the partial frame's length, when waiting */
	size_t granted;	   /* input budget held by the partial frame */
	bool waiting;	   /* in the budget queue */
	bool reserve;	   /* admitted into the reserved share */
	bool refused;	   /* over a cap: flushing TOO_MANY, then closed */
	bool closing;	   /* no more requests; closed once output is flushed */
	bool linger;	   /* refused stream: after the flush, shut down our
			      side and discard input until the peer closes, so
			      the last reply is not lost to a reset */
	bool shut;	   /* linger: SHUT_WR done */
	bool paused;	   /* reading stopped: reply backlog above high water */
	bool reaping;	   /* peer gone: closed by reap_cb, a turn later */
	bool anon;	   /* in the unauthenticated queue (with cfg.auth) */
	bool tls_wait;	   /* TLS: the handshake is not done yet */
	bool tls_keyed;	   /* TLS: tls_key exported */
	uint8_t tls_key[TLS_SESSION_KEY_BYTES];
	char peer[NET_ADDRSTRLEN];
	struct rpc_auth_server auth; /* with cfg.auth: the handshake */
	int64_t auth_deadline_ms;    /* handshake not done by then: close */
};

struct rpc_server {
	struct event_base *base;
	struct evconnlistener *listener;
	struct event *accept_retry;
	ProtobufCService *service;
	rpc_server_config cfg;
	rpc_conn *conns;
	size_t nconns, nrefusing;
	uint64_t next_conn_id;
	bool destroying; /* no on_close from rpc_server_destroy() */
	rpc_conn *current;
	uint16_t port;
	unsigned accepted_turn; /* accepts since the listener was enabled */
	uint64_t reserved_mask; /* bit i: method i may enter the reserve */
	pb_string_limits strlim;
	struct peer_table peers;
	rpc_conn *wait_head, *wait_tail;
	rpc_conn *anon_head, *anon_tail; /* with cfg.auth: not yet in */
	size_t nanon;
	rpc_conn *reap_head;  /* peers gone, to close CLOSES_PER_TURN a turn */
	struct event *reaper; /* a zero timer: runs after the turn's I/O */
	struct ratelog rl_accept, rl_refuse, rl_auth, rl_tls;
	rpc_server_stats st;
};

void rpc_server_config_init(rpc_server_config *cfg)
{
	const struct net_rpc_limits *l = &net_limits()->rpc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->max_frame_bytes = RPC_FRAME_DEFAULT_MAX_BYTES;
	cfg->out_high_water = RPC_SERVER_DEFAULT_OUT_HIGH_WATER;
	cfg->backlog = 128;
	cfg->idle_timeout_ms = l->idle_timeout_ms;
	cfg->frame_timeout_ms = l->frame_timeout_ms;
	cfg->input_budget = (size_t)l->input_budget;
	cfg->max_connections = l->max_connections;
	cfg->max_per_peer = l->max_per_peer;
	cfg->unauth_share = l->unauth_share;
	cfg->reserved_share = l->reserved_share;
	cfg->reserved_methods = l->reserved_methods;
	cfg->max_key_bytes = l->max_key_bytes;
	cfg->max_tenant_bytes = l->max_tenant_bytes;
	cfg->max_string_bytes = l->max_string_bytes;
}

/* ---- input budget ------------------------------------------------------ */

static void set_read_high(rpc_conn *conn, size_t high)
{
	bufferevent_setwatermark(conn->bev, EV_READ, 0, high);
}

static void wait_remove(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	if (!conn->waiting)
		return;
	if (conn->wait_prev)
		conn->wait_prev->wait_next = conn->wait_next;
	else
		s->wait_head = conn->wait_next;
	if (conn->wait_next)
		conn->wait_next->wait_prev = conn->wait_prev;
	else
		s->wait_tail = conn->wait_prev;
	conn->wait_prev = conn->wait_next = NULL;
	conn->waiting = false;
	s->st.budget_waiting--;
}

static bool budget_fits(const rpc_server *s, size_t n)
{
	return s->st.budget_used + n <= s->cfg.input_budget;
}

static void update_reading(rpc_conn *conn);

static void grant(rpc_conn *conn, size_t n)
{
	conn->granted = n;
	conn->server->st.budget_used += n;
	set_read_high(conn, n);
	update_reading(conn); /* reads again, unless paused for output */
}

/* Grants waiting frames in arrival order while they fit. */
static void budget_wake(rpc_server *s)
{
	rpc_conn *c;

	while ((c = s->wait_head) && budget_fits(s, c->want)) {
		wait_remove(c);
		grant(c, c->want);
	}
}

/* The partial frame is done with (taken, or its connection closing). */
static void budget_release(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	wait_remove(conn);
	if (!conn->granted)
		return;
	s->st.budget_used -= conn->granted;
	conn->granted = 0;
	set_read_high(conn, RPC_INPUT_ALLOWANCE);
	budget_wake(s);
}

/* A partial frame larger than the allowance gets budget, or queues. */
static void budget_claim(rpc_conn *conn)
{
	struct evbuffer *in = bufferevent_get_input(conn->bev);
	rpc_server *s = conn->server;
	uint8_t prefix[RPC_FRAME_PREFIX_BYTES];
	size_t len;

	if (conn->granted || conn->waiting ||
	    evbuffer_copyout(in, prefix, sizeof(prefix)) !=
		(ev_ssize_t)sizeof(prefix))
		return;
	len = RPC_FRAME_PREFIX_BYTES + get_be32(prefix);
	if (len <= RPC_INPUT_ALLOWANCE)
		return;
	if (!s->wait_head && budget_fits(s, len)) {
		grant(conn, len);
		return;
	}
	conn->want = len;
	conn->waiting = true;
	conn->wait_prev = s->wait_tail;
	if (s->wait_tail)
		s->wait_tail->wait_next = conn;
	else
		s->wait_head = conn;
	s->wait_tail = conn;
	s->st.budget_waits++;
	s->st.budget_waiting++;
}

/* ---- connections ------------------------------------------------------- */

static void anon_remove(rpc_conn *conn);

static void conn_free(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	budget_release(conn);
	anon_remove(conn);
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		s->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	if (conn->refused)
		s->nrefusing--;
	else
		s->nconns--;
	if (!conn->refused && !s->destroying && s->cfg.on_close)
		s->cfg.on_close(s->cfg.on_close_arg, conn->id);
	peer_table_put(&s->peers, conn->peer_ent);
	if (conn->timer)
		event_free(conn->timer);
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

	if (conn->server->cfg.tls) {
		/* copied, so replies share chains: libevent's OpenSSL stream
		 * makes a TLS record and a write(2) per chain, and one per
		 * reply cost 4x the CPU of plain TCP */
		if (evbuffer_add(out, frame, len))
			conn->closing = true;
		free(frame);
		return;
	}
	if (evbuffer_add_reference(out, frame, len, free_frame, NULL)) {
		free(frame);
		conn->closing = true;
	}
}

static void reply_error(rpc_conn *conn, uint64_t request_id, uint32_t method,
			McreplRpc__Code status, const char *text)
{
	rpc_frame_head head = {.request_id = request_id,
			       .method = method,
			       .status = status,
			       .error = text};
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

/* A deferred reply (rpc_call_defer()): to its connection, if still open. */
static void reply_later(void *arg, uint64_t conn_id, const rpc_frame_head *head,
			const ProtobufCMessage *msg)
{
	rpc_server *s = arg;

	for (rpc_conn *c = s->conns; c; c = c->next)
		if (c->id == conn_id) {
			if (!c->closing)
				reply(c, head, msg);
			return;
		}
}

/* Serves one request; always queues one reply (or defers it). */
static void dispatch(rpc_conn *conn, const McreplRpc__Envelope *env)
{
	/* the session key: the handshake's, else TLS's own (both ends of a
	 * TLS connection without a principal seal with it too) */
	struct rpc_caller from = {
	    .principal = conn->auth.principal,
	    .session = conn->auth.principal ? conn->auth.session
		       : conn->tls_keyed    ? conn->tls_key
					    : NULL,
	    .peer = conn->peer,
	    .conn_id = conn->id,
	    .later = reply_later,
	    .later_arg = conn->server,
	};

	conn->server->current = conn;
	rpc_dispatch_as(conn->server->service, env, &conn->server->strlim,
			&from, reply, conn);
	conn->server->current = NULL;
}

/* No more requests: flush what is queued, then close gracefully. */
static void start_linger(rpc_conn *conn)
{
	struct timeval linger = {.tv_sec = CLOSE_LINGER_TIMEOUT_S};

	budget_release(conn);
	conn->closing = true;
	conn->linger = true;
	bufferevent_set_timeouts(conn->bev, &linger, &linger);
}

static bool authenticating(const rpc_conn *conn)
{
	return conn->server->cfg.auth && conn->auth.state != RPC_AUTH_DONE;
}

/* The largest frame conn may send now: a handshake's is small, so an
 * unauthenticated peer never holds input budget. */
static size_t frame_limit(const rpc_conn *conn)
{
	return authenticating(conn) ? RPC_AUTH_MAX_FRAME_BYTES
				    : conn->server->cfg.max_frame_bytes;
}

/* A stream we cannot follow: say why, then close once that is flushed. */
static void refuse(rpc_conn *conn, rpc_frame_result r)
{
	char text[128];

	if (authenticating(conn))
		conn->server->st.auth_failed[RPC_AUTH_FAIL_malformed]++;
	if (r == RPC_FRAME_TOO_LARGE) {
		snprintf(text, sizeof(text), "frame exceeds %zu bytes%s",
			 frame_limit(conn),
			 authenticating(conn) ? " (before authentication)"
					      : "");
		reply_error(conn, 0, 0, MCREPL_RPC__CODE__FRAME_TOO_LARGE,
			    text);
	} else if (r == RPC_FRAME_BAD_ENVELOPE) {
		reply_error(conn, 0, 0, MCREPL_RPC__CODE__BAD_REQUEST,
			    "malformed envelope");
	}
	start_linger(conn);
}

/* The first request on a connection in the reserved share: is it one of
 * the methods the reserve is kept for? If not, refuse and close. */
static bool reserve_admits(rpc_conn *conn, const McreplRpc__Envelope *env)
{
	rpc_server *s = conn->server;
	char text[200];

	if (env->method < 64 && (s->reserved_mask >> env->method & 1)) {
		conn->reserve = false;
		return true;
	}
	snprintf(text, sizeof(text),
		 "server near its connection limit (%zu of %zu open); the last "
		 "%zu are kept for %s",
		 s->nconns, s->st.max_connections, s->st.reserved,
		 s->cfg.reserved_methods ? s->cfg.reserved_methods : "-");
	reply_error(conn, env->request_id, env->method,
		    MCREPL_RPC__CODE__TOO_MANY, text);
	s->st.refused_reserve++;
	ratelog(&s->rl_refuse, LOG_WARN, "rpc_server: refused %s: %s",
		conn->peer, text);
	start_linger(conn);
	return false;
}

static void update_reading(rpc_conn *conn)
{
	bool over = out_len(conn) > conn->server->cfg.out_high_water;

	if (conn->linger)
		return; /* keeps reading, to discard */
	/* A connection waiting for budget stops reading outright: at its
	 * read high-water mark libevent 2.1 would call read_cb again at once,
	 * and again, while reading stays enabled. */
	if (conn->closing || over || conn->waiting) {
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

/* ---- deadlines --------------------------------------------------------- */

/* The next deadline of conn: the frame's, else the idle one; 0 = none. */
static int64_t next_deadline(const rpc_conn *conn)
{
	const rpc_server_config *c = &conn->server->cfg;

	if (conn->tls_wait && c->frame_timeout_ms &&
	    (!authenticating(conn) ||
	     conn->active_ms + c->frame_timeout_ms < conn->auth_deadline_ms))
		return conn->active_ms + c->frame_timeout_ms;
	if (authenticating(conn))
		return conn->auth_deadline_ms;
	if (conn->frame_ms)
		return c->frame_timeout_ms
			   ? conn->frame_ms + c->frame_timeout_ms
			   : 0;
	/* a connection in the reserve has frame_timeout_ms to call */
	if (conn->reserve && c->frame_timeout_ms)
		return conn->active_ms + c->frame_timeout_ms;
	return c->idle_timeout_ms ? conn->active_ms + c->idle_timeout_ms : 0;
}

/* Arms the timer for the next deadline, unless it fires before then
 * anyway (firing early only re-arms). */
static void arm_timer(rpc_conn *conn, int64_t now, bool force)
{
	int64_t at = next_deadline(conn), ms;
	struct timeval tv;

	if (!at || (!force && conn->timer_ms && conn->timer_ms <= at))
		return;
	ms = at > now ? at - now : 0;
	tv.tv_sec = (time_t)(ms / 1000);
	tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
	conn->timer_ms = at;
	evtimer_add(conn->timer, &tv);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	rpc_conn *conn = arg;
	int64_t now = net_now_ms(), at = next_deadline(conn);

	(void)fd;
	(void)what;
	conn->timer_ms = 0;
	if (conn->closing || !at)
		return; /* a closing connection has its linger timeouts */
	if (now < at) {
		arm_timer(conn, now, true);
		return;
	}
	if (conn->tls_wait && conn->server->cfg.frame_timeout_ms &&
	    at == conn->active_ms + conn->server->cfg.frame_timeout_ms) {
		conn->server->st.frame_timeouts++;
		ratelog(&conn->server->rl_tls, LOG_WARN,
			"rpc_server: %s: no TLS handshake within %u ms, closed",
			conn->peer, conn->server->cfg.frame_timeout_ms);
		conn_free(conn);
	} else if (authenticating(conn)) {
		conn->server->st.auth_failed[RPC_AUTH_FAIL_timeout]++;
		ratelog(&conn->server->rl_auth, LOG_WARN,
			"rpc_server: %s: no handshake within %u ms, closed",
			conn->peer, conn->server->cfg.auth_timeout_ms);
		conn_free(conn);
	} else if (conn->frame_ms) {
		conn->server->st.frame_timeouts++;
		conn_free(conn);
	} else if (out_len(conn) == 0) {
		conn->server->st.idle_closed++;
		conn_free(conn);
	} else {
		conn->active_ms = now; /* a reply is flushing: not idle */
		arm_timer(conn, now, true);
	}
}

/* After input was consumed: start, keep or end the partial frame. */
static void track_frame(rpc_conn *conn, bool took, int64_t now)
{
	struct evbuffer *in = bufferevent_get_input(conn->bev);

	if (evbuffer_get_length(in) == 0) {
		conn->frame_ms = 0;
		return;
	}
	if (took || !conn->frame_ms) {
		conn->frame_ms = now;
		arm_timer(conn, now, false);
	}
	budget_claim(conn);
}

/* ---- unauthenticated connections (with cfg.auth) -----------------------
 * Every connection starts in the queue, oldest first, and in its
 * address's count (the per-peer cap); it leaves both when it
 * authenticates. Under pressure the oldest in the queue is closed to make
 * room, so connections that have not authenticated never keep one that
 * does out. */

static void anon_remove(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	if (!conn->anon)
		return;
	if (conn->anon_prev)
		conn->anon_prev->anon_next = conn->anon_next;
	else
		s->anon_head = conn->anon_next;
	if (conn->anon_next)
		conn->anon_next->anon_prev = conn->anon_prev;
	else
		s->anon_tail = conn->anon_prev;
	conn->anon_prev = conn->anon_next = NULL;
	conn->anon = false;
	s->nanon--;
}

static void anon_add(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	conn->anon = true;
	conn->anon_prev = s->anon_tail;
	if (s->anon_tail)
		s->anon_tail->anon_next = conn;
	else
		s->anon_head = conn;
	s->anon_tail = conn;
	s->nanon++;
}

/* Whether the n-th connection falls in the reserved share. */
static bool in_reserve(const rpc_server *s, size_t n)
{
	return n > s->st.max_connections - s->st.reserved;
}

/* The handshake is done: out of the queue and of its address's count;
 * in the reserve when the authenticated connections reach it (those not
 * yet in do not count, so they cannot push a principal into it). */
static void conn_authenticated(rpc_conn *conn)
{
	rpc_server *s = conn->server;

	s->st.auth_ok++;
	if (!conn->anon)
		return;
	anon_remove(conn);
	peer_table_put(&s->peers, conn->peer_ent);
	conn->peer_ent = NULL;
	conn->reserve = in_reserve(s, s->nconns - s->nanon);
}

/* Closes unauthenticated conn to make room: one TOO_MANY frame saying
 * why, then closed (at once when it was closing already or too many
 * refusals are flushing). */
static void anon_close(rpc_conn *conn, const char *why, uint64_t *counter)
{
	rpc_server *s = conn->server;

	(*counter)++;
	ratelog(&s->rl_refuse, LOG_WARN, "rpc_server: closed %s: %s",
		conn->peer, why);
	anon_remove(conn);
	if (conn->closing || s->nrefusing >= MAX_REFUSING) {
		conn_free(conn);
		return;
	}
	peer_table_put(&s->peers, conn->peer_ent);
	conn->peer_ent = NULL;
	s->nconns--;
	s->nrefusing++;
	conn->refused = true;
	reply_error(conn, 0, 0, MCREPL_RPC__CODE__TOO_MANY, why);
	start_linger(conn);
	update_reading(conn);
	if (out_len(conn) == 0 && !conn->tls_wait)
		finish_close(conn);
}

/* The oldest unauthenticated connection from e's address (any address
 * when e is NULL), or NULL. */
static rpc_conn *anon_oldest(const rpc_server *s, const struct peer_entry *e)
{
	rpc_conn *c = s->anon_head;

	while (c && e && c->peer_ent != e)
		c = c->anon_next;
	return c;
}

/* With cfg.auth, before admitting a connection from sa: closes the
 * oldest unauthenticated connections while a cap is full (its address's,
 * the unauthenticated share, the limit). NULL when there is room, else
 * why not (in buf): the limit is full of authenticated connections. */
static const char *anon_make_room(rpc_server *s, struct sockaddr *sa, char *buf,
				  size_t len)
{
	rpc_conn *c;

	if (s->cfg.max_per_peer &&
	    peer_table_count(&s->peers, sa) >= s->cfg.max_per_peer &&
	    (c = anon_oldest(s, peer_table_find(&s->peers, sa)))) {
		snprintf(buf, len,
			 "%u unauthenticated connections from this address, "
			 "the limit (rpc_max_connections_per_peer): closing "
			 "the oldest",
			 s->cfg.max_per_peer);
		anon_close(c, buf, &s->st.anon_closed_peer);
	}
	if (s->nanon >= s->st.unauth_cap && (c = s->anon_head)) {
		snprintf(buf, len,
			 "%zu unauthenticated connections, their share "
			 "(rpc_unauthenticated_share): closing the oldest",
			 s->st.unauth_cap);
		anon_close(c, buf, &s->st.anon_closed_share);
	}
	if (s->nconns >= s->st.max_connections && (c = s->anon_head)) {
		snprintf(buf, len,
			 "server at its connection limit (%zu, "
			 "rpc_max_connections): closing the oldest "
			 "unauthenticated connection",
			 s->st.max_connections);
		anon_close(c, buf, &s->st.anon_closed_limit);
	}
	if (s->nconns < s->st.max_connections)
		return NULL;
	s->st.refused_cap++;
	snprintf(buf, len,
		 "server at its connection limit (%zu, rpc_max_connections), "
		 "every one authenticated",
		 s->st.max_connections);
	return buf;
}

/* A frame before the handshake is done: the next step, or a refusal after
 * which the connection closes. */
static void auth_step(rpc_conn *conn, const McreplRpc__Envelope *env)
{
	rpc_server *s = conn->server;
	enum rpc_auth_fail f;
	uint8_t *frame;
	size_t len;

	f = rpc_auth_server_step(&conn->auth, s->cfg.auth, env, &frame, &len);
	if (frame)
		conn_send(conn, frame, len);
	else
		conn->closing = true;
	if (f == RPC_AUTH_OK) {
		if (conn->auth.state == RPC_AUTH_DONE)
			conn_authenticated(conn);
		return;
	}
	s->st.auth_failed[f]++;
	ratelog(&s->rl_auth, LOG_WARN,
		"rpc_server: %s: authentication failed for principal '%s' "
		"(%s)",
		conn->peer, conn->auth.claimed_name, rpc_auth_fail_name(f));
	start_linger(conn);
}

/* A handshake on a connection its certificate authenticated already
 * (auth=cert): such a principal has no secret. */
static void refuse_hello(rpc_conn *conn, const McreplRpc__Envelope *env)
{
	rpc_server *s = conn->server;
	char text[200];

	snprintf(text, sizeof(text),
		 "principal '%s' authenticates by its certificate (auth=cert), "
		 "not by a secret: drop --secret_file",
		 conn->auth.principal->name);
	reply_error(conn, env->request_id, env->method,
		    MCREPL_RPC__CODE__UNAUTHENTICATED, text);
	s->st.auth_failed[RPC_AUTH_FAIL_cert_required]++;
	ratelog(&s->rl_auth, LOG_WARN,
		"rpc_server: %s: authentication failed (%s)", conn->peer,
		rpc_auth_fail_name(RPC_AUTH_FAIL_cert_required));
	start_linger(conn);
}

/* The TLS handshake is done: judge the client's certificate (which may
 * authenticate the connection). false when conn is refused (closing). */
static bool tls_connected(rpc_conn *conn)
{
	rpc_server *s = conn->server;
	SSL *ssl = bufferevent_openssl_get_ssl(conn->bev);
	char cn[AUTH_NAME_MAX + 2], why[160];
	enum rpc_auth_fail f;
	uint8_t *frame;
	size_t len;
	int peer;

	conn->tls_wait = false;
	s->st.tls_ok++;
	if (conn->refused)
		return true; /* its TOO_MANY goes out now */
	conn->tls_keyed = tls_session_key(ssl, conn->tls_key) == 0;
	peer = tls_peer_check(ssl, cn, sizeof(cn), why, sizeof(why));
	f = rpc_auth_server_cert(&conn->auth, s->cfg.auth,
				 s->cfg.tls_verify_clients, peer, cn, why,
				 &frame, &len);
	if (f == RPC_AUTH_OK && !conn->tls_keyed) {
		conn->auth.state = RPC_AUTH_WANT_HELLO;
		conn->auth.principal = NULL;
		f = RPC_AUTH_FAIL_internal;
	}
	if (f == RPC_AUTH_OK && conn->auth.state == RPC_AUTH_DONE) {
		memcpy(conn->auth.session, conn->tls_key,
		       sizeof(conn->auth.session));
		conn_authenticated(conn);
	}
	if (f == RPC_AUTH_OK) {
		arm_timer(conn, net_now_ms(), true);
		return true;
	}
	if (frame)
		conn_send(conn, frame, len);
	s->st.auth_failed[f]++;
	ratelog(&s->rl_auth, LOG_WARN,
		"rpc_server: %s: authentication failed (%s)", conn->peer,
		rpc_auth_fail_name(f));
	start_linger(conn);
	update_reading(conn);
	if (out_len(conn) == 0)
		finish_close(conn);
	return false;
}

/* Serves every whole frame in the input, within the high-water mark. May
 * free conn (when closing with nothing left to flush). */
static void process_input(rpc_conn *conn)
{
	struct evbuffer *in = bufferevent_get_input(conn->bev);
	int64_t now = net_now_ms();
	McreplRpc__Envelope *env;
	rpc_frame_result r;
	bool took = false;
	unsigned served = 0;

	while (!conn->closing &&
	       out_len(conn) <= conn->server->cfg.out_high_water) {
		if (served++ == FRAMES_PER_TURN) {
			bufferevent_trigger(conn->bev, EV_READ,
					    BEV_TRIG_DEFER_CALLBACKS);
			break;
		}
		r = rpc_evframe_take(in, frame_limit(conn), &env);
		if (r == RPC_FRAME_NEED_MORE)
			break;
		if (r != RPC_FRAME_OK) {
			refuse(conn, r);
			break;
		}
		took = true;
		conn->active_ms = now;
		budget_release(conn);
		if (authenticating(conn))
			auth_step(conn, env);
		else if (env->method == RPC_AUTH_HELLO && conn->auth.principal)
			refuse_hello(conn, env);
		else if (!conn->reserve || reserve_admits(conn, env))
			dispatch(conn, env);
		protobuf_c_message_free_unpacked(&env->base, NULL);
	}
	if (conn->linger)
		evbuffer_drain(in, evbuffer_get_length(in));
	if (!conn->closing)
		track_frame(conn, took, now);
	update_reading(conn);
	if (conn->closing && out_len(conn) == 0)
		finish_close(conn);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
	rpc_conn *conn = arg;

	(void)bev;
	if (conn->tls_wait && !tls_connected(conn))
		return;
	process_input(conn);
}

/* Called when the output has drained completely (low watermark 0). */
static void write_cb(struct bufferevent *bev, void *arg)
{
	rpc_conn *conn = arg;

	(void)bev;
	if (conn->closing || conn->paused)
		process_input(conn);
}

/* The peer is gone: stop everything now, close in reap_cb. */
static void conn_retire(rpc_conn *conn)
{
	static const struct timeval now = {0};
	rpc_server *s = conn->server;

	conn->reaping = true;
	anon_remove(conn);
	bufferevent_disable(conn->bev, EV_READ | EV_WRITE);
	bufferevent_setcb(conn->bev, NULL, NULL, NULL, NULL);
	if (conn->timer)
		evtimer_del(conn->timer);
	budget_release(conn);
	conn->reap_next = s->reap_head;
	s->reap_head = conn;
	if (!evtimer_pending(s->reaper, NULL))
		evtimer_add(s->reaper, &now);
}

static void reap_cb(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval now = {0};
	rpc_server *s = arg;
	rpc_conn *c;

	(void)fd;
	(void)what;
	for (int n = 0; n < CLOSES_PER_TURN && (c = s->reap_head); n++) {
		s->reap_head = c->reap_next;
		conn_free(c);
	}
	if (s->reap_head)
		evtimer_add(s->reaper, &now);
}

/* The handshake failed on the first bytes: they were not TLS. */
static bool not_tls(unsigned long e)
{
	int r = ERR_GET_REASON(e);

	return ERR_GET_LIB(e) == ERR_LIB_SSL &&
	       (r == SSL_R_WRONG_VERSION_NUMBER || r == SSL_R_HTTP_REQUEST ||
		r == SSL_R_HTTPS_PROXY_REQUEST ||
		r == SSL_R_PACKET_LENGTH_TOO_LONG ||
		r == SSL_R_UNKNOWN_PROTOCOL ||
		r == SSL_R_RECORD_LENGTH_MISMATCH);
}

/* A plaintext client on the TLS port: one plain BAD_REQUEST frame saying
 * so, straight on the socket (the stream is dead for TLS anyway), so it
 * fails with a reason instead of a bare reset. */
static void plain_notice(rpc_conn *conn)
{
	rpc_frame_head head = {.status = MCREPL_RPC__CODE__BAD_REQUEST,
			       .error =
				   "this master serves TLS on its RPC port: "
				   "connect with --tls_ca"};
	uint8_t *frame;
	size_t len;

	if (rpc_frame_encode_msg(&head, NULL, &frame, &len) != RPC_FRAME_OK)
		return;
	(void)!send(bufferevent_getfd(conn->bev), frame, len,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
	free(frame);
}

/* The TLS handshake failed (a plaintext client, not TLS at all, no
 * common version): counted and logged, the connection then retires. */
static void tls_failed(rpc_conn *conn)
{
	rpc_server *s = conn->server;
	unsigned long e = bufferevent_get_openssl_error(conn->bev);
	char text[160] = "connection closed";

	if (e)
		ERR_error_string_n(e, text, sizeof(text));
	while (bufferevent_get_openssl_error(conn->bev))
		;
	if (not_tls(e))
		plain_notice(conn);
	conn->tls_wait = false;
	s->st.auth_failed[RPC_AUTH_FAIL_tls]++;
	ratelog(&s->rl_tls, LOG_WARN,
		"rpc_server: %s: TLS handshake failed: %s", conn->peer, text);
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
	rpc_conn *conn = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		if (conn->tls_wait)
			tls_connected(conn);
		return;
	}
	if (conn->tls_wait)
		tls_failed(conn);
	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) &&
	    out_len(conn) > 0 && !conn->closing) {
		/* Half-closed peer: flush what it asked for, then close. */
		conn->closing = true;
		update_reading(conn);
		return;
	}
	if ((what & BEV_EVENT_TIMEOUT) && !conn->linger)
		conn->server->st.frame_timeouts++;
	conn_retire(conn);
}

/* ---- admission --------------------------------------------------------- */

/* A server-side TLS stream on fd; the SSL is freed with it. */
static struct bufferevent *tls_bev(rpc_server *s, evutil_socket_t fd)
{
	SSL *ssl = SSL_new(s->cfg.tls);
	struct bufferevent *bev;

	if (!ssl)
		return NULL;
	bev = bufferevent_openssl_socket_new(
	    s->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

static rpc_conn *conn_new(rpc_server *s, evutil_socket_t fd,
			  struct sockaddr *sa, int salen)
{
	rpc_conn *conn = calloc(1, sizeof(*conn));

	if (!conn)
		return NULL;
	conn->bev = s->cfg.tls ? tls_bev(s, fd)
			       : bufferevent_socket_new(s->base, fd,
							BEV_OPT_CLOSE_ON_FREE);
	if (!conn->bev) {
		free(conn);
		return NULL;
	}
	conn->tls_wait = s->cfg.tls != NULL;
	conn->server = s;
	conn->id = ++s->next_conn_id;
	net_format_addr(sa, (socklen_t)salen, conn->peer, sizeof(conn->peer));
	bufferevent_setcb(conn->bev, read_cb, write_cb, event_cb, conn);
	conn->next = s->conns;
	if (s->conns)
		s->conns->prev = conn;
	s->conns = conn;
	return conn;
}

/* Over a cap: one TOO_MANY frame, then closed (or closed at once when too
 * many refusals are already flushing). */
static void refuse_conn(rpc_server *s, evutil_socket_t fd, struct sockaddr *sa,
			int salen, const char *text)
{
	rpc_conn *conn = NULL;

	ratelog(&s->rl_refuse, LOG_WARN, "rpc_server: refused a connection: %s",
		text);
	if (s->nrefusing < MAX_REFUSING)
		conn = conn_new(s, fd, sa, salen);
	if (!conn) {
		evutil_closesocket(fd);
		return;
	}
	conn->refused = true;
	s->nrefusing++;
	reply_error(conn, 0, 0, MCREPL_RPC__CODE__TOO_MANY, text);
	start_linger(conn);
	bufferevent_enable(conn->bev, EV_READ);
}

/* NULL when sa may connect, else why not (in buf). */
static const char *over_cap(rpc_server *s, struct sockaddr *sa, int salen,
			    char *buf, size_t len)
{
	char addr[NET_ADDRSTRLEN], *port;
	uint32_t n;

	if (s->nconns >= s->st.max_connections) {
		s->st.refused_cap++;
		snprintf(buf, len,
			 "server at its connection limit (%zu, "
			 "rpc_max_connections)",
			 s->st.max_connections);
		return buf;
	}
	n = peer_table_count(&s->peers, sa);
	if (s->nconns >= s->st.max_connections - s->st.reserved &&
	    n >= RPC_RESERVE_PER_PEER) {
		s->st.refused_cap++;
		snprintf(buf, len,
			 "server near its connection limit (%zu); the last %zu "
			 "are kept for addresses with fewer than %u "
			 "connections",
			 s->st.max_connections, s->st.reserved,
			 RPC_RESERVE_PER_PEER);
		return buf;
	}
	if (s->cfg.max_per_peer && n >= s->cfg.max_per_peer) {
		s->st.refused_peer++;
		net_format_addr(sa, (socklen_t)salen, addr, sizeof(addr));
		port = strrchr(addr, ':');
		if (port)
			*port = '\0'; /* the address, not the port */
		snprintf(buf, len,
			 "%s: %u connections from this address, the limit "
			 "(rpc_max_connections_per_peer)",
			 addr, n);
		return buf;
	}
	return NULL;
}

static void admit(rpc_server *s, evutil_socket_t fd, struct sockaddr *sa,
		  int salen)
{
	struct timeval wt = net_timeval_ms(s->cfg.frame_timeout_ms);
	rpc_conn *conn = conn_new(s, fd, sa, salen);

	if (!conn) {
		evutil_closesocket(fd);
		return;
	}
	s->nconns++;
	conn->reserve = !s->cfg.auth && in_reserve(s, s->nconns);
	conn->peer_ent = peer_table_add(&s->peers, sa);
	conn->timer = evtimer_new(s->base, on_deadline, conn);
	if (!conn->peer_ent || !conn->timer) {
		conn_free(conn);
		return;
	}
	if (s->cfg.auth)
		anon_add(conn);
	conn->active_ms = net_now_ms();
	conn->auth_deadline_ms = conn->active_ms + s->cfg.auth_timeout_ms;
	arm_timer(conn, conn->active_ms, true);
	net_set_nodelay(fd);
	set_read_high(conn, RPC_INPUT_ALLOWANCE);
	if (s->cfg.frame_timeout_ms)
		bufferevent_set_timeouts(conn->bev, NULL, &wt);
	bufferevent_enable(conn->bev, EV_READ);
}

static void accept_cb(struct evconnlistener *l, evutil_socket_t fd,
		      struct sockaddr *sa, int salen, void *arg)
{
	rpc_server *s = arg;
	char why[160];
	const char *no = s->cfg.auth ? anon_make_room(s, sa, why, sizeof(why))
				     : over_cap(s, sa, salen, why, sizeof(why));

	if (no)
		refuse_conn(s, fd, sa, salen, no);
	else
		admit(s, fd, sa, salen);
	if (++s->accepted_turn >= ACCEPT_BATCH) {
		evconnlistener_disable(l);
		event_active(s->accept_retry, EV_TIMEOUT, 0);
	}
}

static void accept_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	rpc_server *s = arg;

	(void)fd;
	(void)what;
	s->accepted_turn = 0;
	evconnlistener_enable(s->listener);
}

/* accept(2) failed (EMFILE, ENOBUFS, ...): back off instead of spinning. */
static void accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct timeval tv = {.tv_usec = ACCEPT_RETRY_MS * 1000};
	rpc_server *s = arg;

	ratelog(&s->rl_accept, LOG_WARN,
		"rpc_server: accept: %s; pausing %d ms", strerror(errno),
		ACCEPT_RETRY_MS);
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

/* The reserved methods by index; -1 after naming an unknown one in err. */
static int parse_reserved(rpc_server *s, char *err, size_t errlen)
{
	const ProtobufCServiceDescriptor *sd = s->service->descriptor;
	const char *p = s->cfg.reserved_methods;

	for (size_t n; p && *p; p += n + (p[n] == ',')) {
		unsigned i = 0;

		n = strcspn(p, ",");
		while (i < sd->n_methods &&
		       (strlen(sd->methods[i].name) != n ||
			strncmp(sd->methods[i].name, p, n)))
			i++;
		if (i == sd->n_methods || i >= 64) {
			snprintf(err, errlen, "reserved method '%.*s' unknown",
				 (int)n, p);
			return -1;
		}
		s->reserved_mask |= 1ull << i;
	}
	return 0;
}

/* Copies cfg, zero fields taking their defaults; strings are not kept. */
static void set_config(rpc_server *s, const rpc_server_config *cfg)
{
	rpc_server_config def;
	size_t cap;

	rpc_server_config_init(&def);
	s->cfg = *cfg;
	s->cfg.host = NULL;
	if (!s->cfg.max_frame_bytes)
		s->cfg.max_frame_bytes = def.max_frame_bytes;
	if (!s->cfg.out_high_water)
		s->cfg.out_high_water = def.out_high_water;
	if (s->cfg.backlog <= 0)
		s->cfg.backlog = def.backlog;
	if (!s->cfg.auth_timeout_ms)
		s->cfg.auth_timeout_ms = RPC_AUTH_DEFAULT_TIMEOUT_MS;
	/* one whole largest frame always fits */
	if (s->cfg.input_budget <
	    s->cfg.max_frame_bytes + RPC_FRAME_PREFIX_BYTES)
		s->cfg.input_budget =
		    s->cfg.max_frame_bytes + RPC_FRAME_PREFIX_BYTES;
	cap = net_conn_cap(s->cfg.max_connections);
	s->st.max_connections = cap;
	s->st.unauth_cap = s->cfg.unauth_share > 0
			       ? (size_t)((double)cap * s->cfg.unauth_share)
			       : cap;
	if (!s->st.unauth_cap)
		s->st.unauth_cap = 1;
	s->st.reserved = (size_t)((double)cap * s->cfg.reserved_share);
	if (s->st.reserved >= cap)
		s->st.reserved = cap - 1;
	s->strlim = (pb_string_limits){.key = s->cfg.max_key_bytes,
				       .tenant = s->cfg.max_tenant_bytes,
				       .other = s->cfg.max_string_bytes};
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
	if (parse_reserved(s, err, errlen))
		goto out_free;
	if (peer_table_init(&s->peers)) {
		snprintf(err, errlen, "out of memory");
		goto out_free;
	}
	s->accept_retry = evtimer_new(base, accept_retry_cb, s);
	s->reaper = evtimer_new(base, reap_cb, s);
	if (!s->accept_retry || !s->reaper) {
		snprintf(err, errlen, "out of memory");
		goto out_free_timer;
	}
	if (server_listen(s, cfg->host && *cfg->host ? cfg->host : "0.0.0.0",
			  err, errlen))
		goto out_free_timer;
	return s;
out_free_timer:
	if (s->accept_retry)
		event_free(s->accept_retry);
	if (s->reaper)
		event_free(s->reaper);
	peer_table_fini(&s->peers);
out_free:
	free(s);
	return NULL;
}

void rpc_server_destroy(rpc_server *server)
{
	if (!server)
		return;
	server->destroying = true;
	while (server->conns) /* those in the reap queue too */
		conn_free(server->conns);
	evconnlistener_free(server->listener);
	event_free(server->accept_retry);
	event_free(server->reaper);
	peer_table_fini(&server->peers);
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

void rpc_server_stats_get(const rpc_server *server, rpc_server_stats *out)
{
	*out = server->st;
	out->unauth_now = server->nanon;
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
