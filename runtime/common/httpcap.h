/*
 * Connection caps for an evhttp server. libevent 2.1's evhttp
 * accepts every connection it is offered and has no hook before it reads a
 * request (evhttp_set_newreqcb is 2.2), so the cap sits in evhttp's
 * bufferevent factory (evhttp_set_bevcb): each new connection's bufferevent
 * is made here, held by one extra reference until a callback of the same
 * loop turn (before any of its input is read) judges the connection by its
 * peer address:
 *
 *   - admitted: counted (globally and per address) until evhttp frees it
 *     (evhttp_connection_set_closecb);
 *   - refused: "503 Service Unavailable" with the reason in the body,
 *     "Connection: close", then the connection is freed at once (its input
 *     so far discarded first, so the close is a FIN, not a reset).
 *
 * Caps (net_limits()->http, flags http_max_connections,
 * http_max_connections_per_peer, http_reserved_connections): at most
 * max_connections at once; the last `reserved` of them only for an address
 * holding no other HTTP connection (an operator's curl or a scraper gets in
 * while one address floods); at most max_per_peer from one address.
 * Refusal lines go through a ratelog.
 *
 * Lifetime: httpcap_free after evhttp_free (which reports the connections
 * it closes); net_http_free does both in that order.
 *
 * Thread-safety: the evhttp's loop thread only.
 */
#ifndef MCREPL_HTTPCAP_H
#define MCREPL_HTTPCAP_H

#include <stdint.h>

struct evhttp;
struct event_base;
struct httpcap;

struct httpcap_config {
	uint32_t max_connections; /* 0 = no cap */
	uint32_t max_per_peer;	  /* 0 = no cap */
	uint32_t reserved;	  /* of max_connections, see above */
};

struct httpcap_stats {
	uint64_t open;	       /* admitted and not yet closed */
	uint64_t accepted;     /* admitted, cumulative */
	uint64_t refused_cap;  /* refused: the global cap or the reserve */
	uint64_t refused_peer; /* refused: max_per_peer */
};

/* Installs the cap on http (its bufferevent factory); cfg NULL = from
 * net_limits()->http. tls: a server context (tls.h) to serve HTTPS with
 * (each connection an OpenSSL bufferevent; a refused one is closed
 * without the 503, which could not be read before a handshake), NULL =
 * plain HTTP; borrowed, must outlive the evhttp. NULL when out of
 * memory. */
struct ssl_ctx_st;
struct httpcap *httpcap_new(struct evhttp *http, struct event_base *base,
			    const struct httpcap_config *cfg,
			    struct ssl_ctx_st *tls);

/* After evhttp_free(http). Accepts NULL. */
void httpcap_free(struct httpcap *cap);

/* Appends <prefix>_connections (gauge) and <prefix>_refused_total{reason=
 * "cap"|"peer"} to a Prometheus page; nothing for a NULL cap. */
struct mcu_prom;
void httpcap_metrics(const struct httpcap *cap, const char *prefix,
		     struct mcu_prom *out);

#endif
