/* Connection caps for an evhttp server (see httpcap.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <openssl/ssl.h>

#include "httpcap.h"
#include "netlimits.h"
#include "netutil.h"
#include "peer_table.h"
#include "util/prom.h"
#include "ratelog.h"

/* Input of a refused connection read and dropped before it is closed, so
 * that the close sends a FIN after the 503 rather than a reset. */
#define REFUSE_DRAIN_BYTES (64u << 10)
/* Bytes one read of an HTTP connection takes: a request line and the
 * usual headers; more come a loop turn later. */
#define HTTP_READ_BYTES 4096

struct hc_conn {
	struct httpcap *cap;
	struct hc_conn *next;	 /* pending: waiting to be judged */
	struct bufferevent *bev; /* pending: our reference */
	struct peer_entry *peer; /* admitted */
};

struct httpcap {
	struct event_base *base;
	SSL_CTX *tls; /* NULL = plain HTTP */
	struct httpcap_config cfg;
	struct event *judge_ev;
	struct hc_conn *pending;
	struct peer_table peers;
	struct ratelog rl;
	struct httpcap_stats st;
};

/* evhttp closes an admitted connection. */
static void on_close(struct evhttp_connection *evcon, void *arg)
{
	struct hc_conn *t = arg;

	(void)evcon;
	peer_table_put(&t->cap->peers, t->peer);
	t->cap->st.open--;
	free(t);
}

/* NULL when sa may connect, else why not (in buf). */
static const char *over_cap(struct httpcap *c, const struct sockaddr *sa,
			    socklen_t salen, char *buf, size_t len)
{
	const struct httpcap_config *k = &c->cfg;
	uint32_t n = peer_table_count(&c->peers, sa);
	char addr[NET_ADDRSTRLEN], *port;

	if (k->max_connections && c->st.open >= k->max_connections) {
		c->st.refused_cap++;
		snprintf(buf, len,
			 "server at its HTTP connection limit (%u, "
			 "http_max_connections)",
			 k->max_connections);
		return buf;
	}
	if (k->max_connections && n &&
	    c->st.open + k->reserved >= k->max_connections) {
		c->st.refused_cap++;
		snprintf(buf, len,
			 "server near its HTTP connection limit (%u); the last "
			 "%u are kept for addresses with no other connection",
			 k->max_connections, k->reserved);
		return buf;
	}
	if (k->max_per_peer && n >= k->max_per_peer) {
		c->st.refused_peer++;
		net_format_addr(sa, salen, addr, sizeof(addr));
		port = strrchr(addr, ':');
		if (port)
			*port = '\0';
		snprintf(buf, len,
			 "%s: %u HTTP connections from this address, the "
			 "limit (http_max_connections_per_peer)",
			 addr, n);
		return buf;
	}
	return NULL;
}

/* 503 with the reason, then the connection is freed. */
static void refuse(struct httpcap *c, struct evhttp_connection *evcon,
		   evutil_socket_t fd, const char *why)
{
	char msg[512], junk[4096];
	size_t dropped = 0;
	ssize_t n;
	int len;

	ratelog(&c->rl, LOG_WARN, "http: refused a connection: %s", why);
	if (c->tls) { /* no plain bytes into a TLS stream */
		shutdown(fd, SHUT_RDWR);
		evhttp_connection_free(evcon);
		return;
	}
	len = snprintf(msg, sizeof(msg),
		       "HTTP/1.1 503 Service Unavailable\r\n"
		       "Content-Type: text/plain\r\n"
		       "Content-Length: %zu\r\n"
		       "Connection: close\r\n"
		       "Retry-After: 1\r\n\r\n%s\n",
		       strlen(why) + 1, why);
	/* a new socket's send buffer takes these few hundred bytes */
	(void)!send(fd, msg, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(fd, SHUT_WR);
	while (dropped < REFUSE_DRAIN_BYTES &&
	       (n = recv(fd, junk, sizeof(junk), MSG_DONTWAIT)) > 0)
		dropped += (size_t)n;
	evhttp_connection_free(evcon);
}

/* Admits or refuses t's connection; t is freed unless admitted. */
static void judge(struct httpcap *c, struct hc_conn *t)
{
	struct bufferevent *bev = t->bev;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	evutil_socket_t fd = bufferevent_getfd(bev);
	void *evcon = NULL;
	const char *no;
	char why[200];

	/* evhttp clears the callbacks when it frees the connection (it did
	 * if it failed to set it up); our reference kept bev itself alive */
	bufferevent_getcb(bev, NULL, NULL, NULL, &evcon);
	if (!evcon || fd < 0 ||
	    getpeername(fd, (struct sockaddr *)&ss, &sl) != 0) {
		bufferevent_decref(bev);
		free(t);
		return;
	}
	no = over_cap(c, (struct sockaddr *)&ss, sl, why, sizeof(why));
	if (!no &&
	    !(t->peer = peer_table_add(&c->peers, (struct sockaddr *)&ss))) {
		c->st.refused_cap++;
		no = "out of memory";
	}
	if (no) {
		refuse(c, evcon, fd, no);
		bufferevent_decref(bev); /* the last reference: closes fd */
		free(t);
		return;
	}
	t->bev = NULL;
	c->st.open++;
	c->st.accepted++;
	evhttp_connection_set_closecb(evcon, on_close, t);
	bufferevent_decref(bev);
}

static void judge_cb(evutil_socket_t fd, short what, void *arg)
{
	struct httpcap *c = arg;
	struct hc_conn *t;

	(void)fd;
	(void)what;
	while ((t = c->pending)) {
		c->pending = t->next;
		judge(c, t);
	}
}

/* An HTTPS connection's stream; evhttp sets its fd. The SSL goes with
 * it. */
static struct bufferevent *tls_bev(struct httpcap *c, struct event_base *base)
{
	SSL *ssl = SSL_new(c->tls);
	struct bufferevent *bev;

	if (!ssl)
		return NULL;
	bev = bufferevent_openssl_socket_new(
	    base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		SSL_free(ssl);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

/* evhttp's bufferevent factory: called for each accepted connection
 * before evhttp sets its fd and reads from it. */
static struct bufferevent *make_bev(struct event_base *base, void *arg)
{
	struct httpcap *c = arg;
	struct hc_conn *t = calloc(1, sizeof(*t));
	struct bufferevent *bev;

	if (!t)
		return NULL;
	bev = c->tls ? tls_bev(c, base)
		     : bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		free(t);
		return NULL;
	}
	/* bounded work per callback: evhttp parses what one read brings (16
	 * KiB by default: a flood of header lines costs ~0.1 ms a read) */
	bufferevent_set_max_single_read(bev, HTTP_READ_BYTES);
	bufferevent_incref(bev);
	t->cap = c;
	t->bev = bev;
	t->next = c->pending;
	c->pending = t;
	event_active(c->judge_ev, EV_TIMEOUT, 0);
	return bev;
}

struct httpcap *httpcap_new(struct evhttp *http, struct event_base *base,
			    const struct httpcap_config *cfg, SSL_CTX *tls)
{
	const struct net_http_limits *h = &net_limits()->http;
	struct httpcap *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->base = base;
	c->tls = tls;
	if (cfg)
		c->cfg = *cfg;
	else
		c->cfg = (struct httpcap_config){
		    .max_connections = h->max_connections,
		    .max_per_peer = h->max_per_peer,
		    .reserved = h->reserved};
	if (c->cfg.reserved >= c->cfg.max_connections)
		c->cfg.reserved =
		    c->cfg.max_connections ? c->cfg.max_connections - 1 : 0;
	if (peer_table_init(&c->peers) != 0) {
		free(c);
		return NULL;
	}
	c->judge_ev = event_new(base, -1, 0, judge_cb, c);
	if (!c->judge_ev) {
		peer_table_fini(&c->peers);
		free(c);
		return NULL;
	}
	/* before any read of the new connections, whatever their priority */
	event_priority_set(c->judge_ev, 0);
	evhttp_set_bevcb(http, make_bev, c);
	return c;
}

void httpcap_free(struct httpcap *c)
{
	struct hc_conn *t;

	if (!c)
		return;
	while ((t = c->pending)) {
		c->pending = t->next;
		bufferevent_decref(t->bev);
		free(t);
	}
	event_free(c->judge_ev);
	peer_table_fini(&c->peers);
	free(c);
}

void httpcap_metrics(const struct httpcap *c, const char *prefix,
		     struct mcu_prom *out)
{
	char name[96];

	if (!c)
		return;
	snprintf(name, sizeof(name), "%s_connections", prefix);
	mcu_prom_metric(out, name, "gauge", "Open HTTP connections",
			c->st.open);
	snprintf(name, sizeof(name), "%s_refused_total", prefix);
	mcu_prom_head(out, name, "counter",
		      "HTTP connections refused (503), by cap");
	mcu_prom_u64(
	    out, name,
	    (const struct mcu_prom_label[]){{.name = "reason", .value = "cap"}},
	    1, c->st.refused_cap);
	mcu_prom_u64(out, name,
		     (const struct mcu_prom_label[]){
			 {.name = "reason", .value = "peer"}},
		     1, c->st.refused_peer);
}
