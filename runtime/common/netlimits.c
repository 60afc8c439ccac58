/* The ports' resource bounds and their flags (see netlimits.h). */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>

#include "httpcap.h"
#include "netlimits.h"
#include "ratelog.h"

/*
 * Every default written once: the number here is both the static
 * initializer's value (limits, in place before main() with no code run)
 * and, spelled by STR(), the flag table's default text that --help shows
 * and flags_defaults() parses. Sizes are in the unit their name says.
 */
#define STR_(x) #x
#define STR(x) STR_(x)
#define RPC_IDLE_TIMEOUT_MS 300000
#define RPC_FRAME_TIMEOUT_MS 10000
#define RPC_INPUT_BUDGET_MIB 32
#define RPC_MAX_CONNECTIONS 0
#define RPC_MAX_PER_PEER 1024
#define RPC_UNAUTH_SHARE 0.25
#define RPC_RESERVED_SHARE 0.0625
#define RPC_RESERVED_METHODS                                                   \
	"MountSegment,UnmountSegment,Heartbeat,FetchTasks,MarkTaskToComplete," \
	"Stats"
#define MAX_KEY_BYTES 1024
#define MAX_TENANT_BYTES 256
#define MAX_STRING_BYTES 4096
#define HTTP_MAX_HEADERS_KIB 8
#define HTTP_MAX_BODY_KIB 64
#define HTTP_TIMEOUT_MS 10000
#define HTTP_MAX_CONNECTIONS 128
#define HTTP_MAX_PER_PEER 16
#define HTTP_RESERVED 8
#define DATA_HEADER_TIMEOUT_MS 10000
#define DATA_MAX_CONNECTIONS 0
#define DATA_BODY_TIMEOUT_MS 10000
#define DATA_MIN_BODY_RATE_MIB 1
#define DATA_CONN_INPUT_MIB 1
#define DATA_INPUT_BUDGET_MIB 64

static struct net_limits limits = {
    .rpc =
	{
	    .idle_timeout_ms = RPC_IDLE_TIMEOUT_MS,
	    .frame_timeout_ms = RPC_FRAME_TIMEOUT_MS,
	    .input_budget = (uint64_t)RPC_INPUT_BUDGET_MIB << 20,
	    .max_connections = RPC_MAX_CONNECTIONS,
	    .max_per_peer = RPC_MAX_PER_PEER,
	    .unauth_share = RPC_UNAUTH_SHARE,
	    .reserved_share = RPC_RESERVED_SHARE,
	    .reserved_methods = RPC_RESERVED_METHODS,
	    .max_key_bytes = MAX_KEY_BYTES,
	    .max_tenant_bytes = MAX_TENANT_BYTES,
	    .max_string_bytes = MAX_STRING_BYTES,
	},
    .http =
	{
	    .max_headers_bytes = (uint64_t)HTTP_MAX_HEADERS_KIB << 10,
	    .max_body_bytes = (uint64_t)HTTP_MAX_BODY_KIB << 10,
	    .timeout_ms = HTTP_TIMEOUT_MS,
	    .max_connections = HTTP_MAX_CONNECTIONS,
	    .max_per_peer = HTTP_MAX_PER_PEER,
	    .reserved = HTTP_RESERVED,
	},
    .data =
	{
	    .header_timeout_ms = DATA_HEADER_TIMEOUT_MS,
	    .max_connections = DATA_MAX_CONNECTIONS,
	    .body_timeout_ms = DATA_BODY_TIMEOUT_MS,
	    .min_body_rate = (uint64_t)DATA_MIN_BODY_RATE_MIB << 20,
	    .conn_input = (uint64_t)DATA_CONN_INPUT_MIB << 20,
	    .input_budget = (uint64_t)DATA_INPUT_BUDGET_MIB << 20,
	},
};

#define R(f) FLAG_AT(struct net_rpc_limits, f)
static const struct flag rpc_flags[] = {
    {.name = "rpc_idle_timeout_ms",
     .type = FLAG_U32,
     .off = R(idle_timeout_ms),
     .def = STR(RPC_IDLE_TIMEOUT_MS),
     .help =
	 "close an RPC connection with nothing pending this long (0 = never)"},
    {.name = "rpc_frame_timeout_ms",
     .type = FLAG_U32,
     .off = R(frame_timeout_ms),
     .def = STR(RPC_FRAME_TIMEOUT_MS),
     .help = "close an RPC connection whose frame (or reply) takes longer (0 = "
	     "never)"},
    {.name = "rpc_input_budget",
     .type = FLAG_SIZE,
     .off = R(input_budget),
     .def = STR(RPC_INPUT_BUDGET_MIB) "M",
     .help =
	 "bytes of partial RPC frames over 64 KiB buffered, all connections; a "
	 "frame waits for room (raised to max_frame_bytes: 0 = one largest "
	 "frame)"},
    {.name = "rpc_max_connections",
     .type = FLAG_U32,
     .off = R(max_connections),
     .def = STR(RPC_MAX_CONNECTIONS),
     .help =
	 "RPC connections at once (0 = the fd limit - 256); more are refused "
	 "with TOO_MANY"},
    {.name = "rpc_max_connections_per_peer",
     .type = FLAG_U32,
     .off = R(max_per_peer),
     .def = STR(RPC_MAX_PER_PEER),
     .help = "RPC connections from one address (0 = no cap); with --auth_file, "
	     "connections not yet authenticated only"},
    {.name = "rpc_unauthenticated_share",
     .type = FLAG_RATIO,
     .off = R(unauth_share),
     .def = STR(RPC_UNAUTH_SHARE),
     .help =
	 "with --auth_file: share of rpc_max_connections that connections not "
	 "yet authenticated may hold; over it (or at any full cap) the oldest "
	 "of them is closed (1 = the whole limit)"},
    {.name = "rpc_reserved_share",
     .type = FLAG_RATIO,
     .off = R(reserved_share),
     .def = STR(RPC_RESERVED_SHARE),
     .help = "top share of rpc_max_connections whose first call must be one of "
	     "rpc_reserved_methods"},
    {.name = "rpc_reserved_methods",
     .type = FLAG_STR,
     FLAG_STR_AT(struct net_rpc_limits, reserved_methods),
     .def = RPC_RESERVED_METHODS,
     .help = "methods (workers', admin) that may open a reserved connection"},
    {.name = "max_key_bytes",
     .type = FLAG_U32,
     .off = R(max_key_bytes),
     .def = STR(MAX_KEY_BYTES),
     .help = "longest key in a request (INVALID_ARGUMENT above)",
     .min = 1,
     .max = 4095},
    {.name = "max_tenant_bytes",
     .type = FLAG_U32,
     .off = R(max_tenant_bytes),
     .def = STR(MAX_TENANT_BYTES),
     .help = "longest tenant in a request",
     .min = 1,
     .max = 4095},
    {.name = "max_string_bytes",
     .type = FLAG_U32,
     .off = R(max_string_bytes),
     .def = STR(MAX_STRING_BYTES),
     .help = "longest other string field in a request",
     .min = 64},
};

#define H(f) FLAG_AT(struct net_http_limits, f)
static const struct flag http_flags[] = {
    {.name = "http_max_headers_bytes",
     .type = FLAG_SIZE,
     .off = H(max_headers_bytes),
     .def = STR(HTTP_MAX_HEADERS_KIB) "K",
     .help = "HTTP request line and headers",
     .min = 1024},
    {.name = "http_max_body_bytes",
     .type = FLAG_SIZE,
     .off = H(max_body_bytes),
     .def = STR(HTTP_MAX_BODY_KIB) "K",
     .help = "HTTP request body (0 = none: /metrics and /health take no "
	     "body)"},
    {.name = "http_timeout_ms",
     .type = FLAG_U32,
     .off = H(timeout_ms),
     .def = STR(HTTP_TIMEOUT_MS),
     .help = "close an HTTP connection idle or stalled this long",
     .min = 100},
    {.name = "http_max_connections",
     .type = FLAG_U32,
     .off = H(max_connections),
     .def = STR(HTTP_MAX_CONNECTIONS),
     .help =
	 "HTTP connections at once (0 = no cap); more get 503 and are closed"},
    {.name = "http_max_connections_per_peer",
     .type = FLAG_U32,
     .off = H(max_per_peer),
     .def = STR(HTTP_MAX_PER_PEER),
     .help = "HTTP connections from one address (0 = no cap)"},
    {.name = "http_reserved_connections",
     .type = FLAG_U32,
     .off = H(reserved),
     .def = STR(HTTP_RESERVED),
     .help =
	 "last of http_max_connections kept for addresses holding no other "
	 "HTTP connection (an operator's /health while one address floods; 0 "
	 "= none kept)"},
};

#define D(f) FLAG_AT(struct net_data_limits, f)
static const struct flag data_flags[] = {
    {.name = "data_header_timeout_ms",
     .type = FLAG_U32,
     .off = D(header_timeout_ms),
     .def = STR(DATA_HEADER_TIMEOUT_MS),
     .help = "close a data connection whose request header takes longer (0 = "
	     "never)"},
    {.name = "data_max_connections",
     .type = FLAG_U32,
     .off = D(max_connections),
     .def = STR(DATA_MAX_CONNECTIONS),
     .help = "data connections at once (0 = the fd limit - 256)"},
    {.name = "data_body_timeout_ms",
     .type = FLAG_U32,
     .off = D(body_timeout_ms),
     .def = STR(DATA_BODY_TIMEOUT_MS),
     .help = "close a data connection whose WRITE payload (kept or discarded) "
	     "receives, or whose unsent replies send, less than "
	     "data_min_body_rate over this long (0 = never)"},
    {.name = "data_min_body_rate",
     .type = FLAG_SIZE,
     .off = D(min_body_rate),
     .def = STR(DATA_MIN_BODY_RATE_MIB) "M",
     .help = "bytes per second a WRITE payload, or a connection's unsent "
	     "replies, must keep up, per data_body_timeout_ms window (0 = no "
	     "minimum)"},
    {.name = "data_conn_input",
     .type = FLAG_SIZE,
     .off = D(conn_input),
     .def = STR(DATA_CONN_INPUT_MIB) "M",
     .help =
	 "request bytes a data connection buffers (payloads go straight to the "
	 "segment past this)",
     .min = 4096},
    {.name = "data_input_budget",
     .type = FLAG_SIZE,
     .off = D(input_budget),
     .def = STR(DATA_INPUT_BUDGET_MIB) "M",
     .help =
	 "request bytes held, all data connections, by connections paused "
	 "because they do not read their replies; past it such a connection "
	 "is closed (0 = closed at once)"},
};

const struct flag_set net_http_flags = {
    .title = "HTTP port bounds",
    .flags = http_flags,
    .n = sizeof(http_flags) / sizeof(http_flags[0]),
    .base = &limits.http,
};

const struct flag_set net_rpc_flags = {
    .title = "RPC port bounds",
    .flags = rpc_flags,
    .n = sizeof(rpc_flags) / sizeof(rpc_flags[0]),
    .base = &limits.rpc,
    .next = &net_http_flags,
};

const struct flag_set net_data_flags = {
    .title = "data port bounds",
    .flags = data_flags,
    .n = sizeof(data_flags) / sizeof(data_flags[0]),
    .base = &limits.data,
    .next = &net_http_flags,
};

struct net_limits *net_limits(void)
{
	return &limits;
}

uint32_t net_conn_cap(uint32_t cap)
{
	struct rlimit rl;

	if (cap)
		return cap;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 1u << 20;
	if (rl.rlim_cur < NET_FD_HEADROOM + 16)
		return 16;
	if (rl.rlim_cur - NET_FD_HEADROOM > UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)(rl.rlim_cur - NET_FD_HEADROOM);
}

static void reenable(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	evconnlistener_enable(arg);
}

static void accept_error(struct evconnlistener *l, void *arg)
{
	static struct ratelog rl;
	struct timeval tv = {0, NET_ACCEPT_RETRY_MS * 1000};
	int err = errno;

	(void)arg;
	ratelog(&rl, LOG_WARN, "accept on fd %d: %s; pausing %d ms",
		(int)evconnlistener_get_fd(l), strerror(err),
		NET_ACCEPT_RETRY_MS);
	evconnlistener_disable(l);
	if (event_base_once(evconnlistener_get_base(l), -1, EV_TIMEOUT,
			    reenable, l, &tv) != 0)
		evconnlistener_enable(l);
}

/* Makes accept(2) errors on l disable the listener for
 * NET_ACCEPT_RETRY_MS and log through a per-process ratelog. For
 * listeners whose callback argument is not ours (evhttp's); the RPC and
 * data servers keep a timer of their own. */
static void net_accept_backoff(struct evconnlistener *l)
{
	evconnlistener_set_error_cb(l, accept_error);
}

struct httpcap *net_http_limit(struct event_base *base, struct evhttp *http,
			       struct evhttp_bound_socket *sock,
			       struct ssl_ctx_st *tls)
{
	const struct net_http_limits *h = &net_limits()->http;
	struct timeval tv = {(time_t)(h->timeout_ms / 1000),
			     (suseconds_t)(h->timeout_ms % 1000) * 1000};

	evhttp_set_max_headers_size(http, (ev_ssize_t)h->max_headers_bytes);
	evhttp_set_max_body_size(http, (ev_ssize_t)h->max_body_bytes);
	evhttp_set_timeout_tv(http, &tv);
	if (sock)
		net_accept_backoff(evhttp_bound_socket_get_listener(sock));
	return httpcap_new(http, base, NULL, tls);
}

void net_http_free(struct evhttp *http, struct httpcap *cap)
{
	if (http)
		evhttp_free(http);
	httpcap_free(cap);
}
