/*
 * Resource bounds of the daemons' ports: what a hostile or
 * broken peer may hold of a daemon's fds, memory and time. One struct,
 * statically initialized to the defaults (no code runs at load time; in
 * netlimits.c one macro per value gives both the initializer and the flag
 * table's default text), overwritten by a daemon's flags, read by the
 * servers' config_init functions (rpc_server_config_init,
 * data_server_config_init) and by net_http_limit(). A program that never
 * parses flags gets the defaults.
 *
 * The tables are chained to a daemon's own table (flag_set.next):
 * mcrepl-master parses net_rpc_flags (then net_http_flags), mcrepl-worker
 * net_data_flags (then net_http_flags).
 *
 * Thread-safety: set from main() before any server is created (flags),
 * read-only afterwards.
 */
#ifndef MCREPL_NETLIMITS_H
#define MCREPL_NETLIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "flagparse.h"

struct event_base;
struct evhttp;
struct evhttp_bound_socket;
struct evconnlistener;
struct httpcap;

struct net_rpc_limits {
	uint32_t idle_timeout_ms;  /* nothing pending: close; 0 = never */
	uint32_t frame_timeout_ms; /* first byte to last of a frame, and
				      write progress of a reply */
	uint64_t input_budget;	   /* partial-frame bytes, all connections */
	uint32_t max_connections;  /* 0 = auto: the fd limit - headroom */
	uint32_t max_per_peer;	   /* connections from one address */
	double unauth_share;	   /* of max_connections, not yet
				      authenticated (with an auth file) */
	double reserved_share;	   /* of max_connections, for the methods: */
	char reserved_methods[256];
	uint32_t max_key_bytes;	   /* string fields "key" and "keys" */
	uint32_t max_tenant_bytes; /* string fields "tenant" */
	uint32_t max_string_bytes; /* any other string field */
};

struct net_http_limits {
	uint64_t max_headers_bytes;
	uint64_t max_body_bytes;
	uint32_t timeout_ms;	  /* read/write inactivity of a connection */
	uint32_t max_connections; /* at once; 0 = no cap (httpcap.h) */
	uint32_t max_per_peer;	  /* from one address; 0 = no cap */
	uint32_t reserved;	  /* of max_connections, for addresses
				     holding no other connection */
};

struct net_data_limits {
	uint32_t header_timeout_ms; /* first to last byte of a header */
	uint32_t max_connections;   /* 0 = auto: the fd limit - headroom */
	uint32_t body_timeout_ms;   /* a WRITE payload's progress window */
	uint64_t min_body_rate;	    /* bytes/s a payload must keep up */
	uint64_t conn_input;	    /* input buffered per connection */
	uint64_t input_budget;	    /* input held by paused connections */
};

struct net_limits {
	struct net_rpc_limits rpc;
	struct net_http_limits http;
	struct net_data_limits data;
};

/* fds kept free of connections when a cap is "auto": HTTP, files, the
 * master connection, the copy engines' own connections. */
#define NET_FD_HEADROOM 256

extern const struct flag_set net_rpc_flags;  /* then net_http_flags */
extern const struct flag_set net_data_flags; /* then net_http_flags */
extern const struct flag_set net_http_flags;

/* The process's limits: the flags as parsed, else their defaults. The
 * returned struct may be changed (tests) before servers are created. The
 * defaults are in place before main() runs (a static initializer). */
struct net_limits *net_limits(void);

/* A connection cap: `cap` when not 0, else the RLIMIT_NOFILE soft limit
 * less NET_FD_HEADROOM (at least 16). */
uint32_t net_conn_cap(uint32_t cap);

/* How long a listener stays disabled after an accept(2) error (EMFILE,
 * ENFILE, ENOBUFS, ...), instead of libevent's default: a warning per
 * retry, in a busy loop. */
#define NET_ACCEPT_RETRY_MS 100

/* Applies net_limits()->http to an evhttp on base and accept back-off to
 * its bound socket (sock may be NULL): header and body size caps, the
 * connection timeout, the connection caps (httpcap.h). Used by every
 * daemon's HTTP server. Returns the caps (NULL when out of memory: no cap),
 * to pass to net_http_free. tls: serve HTTPS with this server context
 * (tls.h; borrowed), NULL = plain HTTP. */
struct ssl_ctx_st;
struct httpcap *net_http_limit(struct event_base *base, struct evhttp *http,
			       struct evhttp_bound_socket *sock,
			       struct ssl_ctx_st *tls);

/* evhttp_free(http), then the caps (either may be NULL). */
void net_http_free(struct evhttp *http, struct httpcap *cap);

#endif
