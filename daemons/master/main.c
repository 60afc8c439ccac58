/*
 * mcrepl-master: the metadata master. One libevent loop serves RPC and
 * HTTP (/metrics, /health) and runs one periodic timer (lease sweep, client
 * expiry, eviction); the admission worker is its own thread, so admission
 * never delays reads. The clock is read here and passed down.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "clock.h"
#include "exitcode.h"
#include "flags.h"
#include "ha.h"
#include "ha_gate.h"
#include "log.h"
#include "httpcap.h"
#include "metrics.h"
#include "tls.h"
#include "netlimits.h"
#include "protect.h"
#include "rpc_server.h"
#include "service.h"

struct master {
	struct master_flags flags;
	struct event_base *base;
	struct store *store;
	struct auth_table *auth;     /* NULL: no --auth_file */
	SSL_CTX *tls_rpc, *tls_http; /* NULL: no --tls_cert */
	struct master_service svc;
	rpc_server *rpc;
	struct evhttp *http;
	struct httpcap *http_cap;
	uint16_t http_port;
	struct event *timer, *drain, *sigterm, *sigint;
	struct dyn_admitter *admitter;
	uint64_t last_evict_ms;
	uint64_t started_ms;
	/* high availability (--etcd_endpoints): the store exists only while
	 * this master leads; the gate refuses requests otherwise */
	struct ha *ha;
	struct ha_gate gate;
	uint64_t elected_ms;
	/* RPC connections closed since the last tick (on_rpc_close): the
	 * tick releases the unfinished puts they started
	 * (store_conns_gone) */
	uint64_t *gone;
	size_t n_gone, cap_gone;
};

static uint64_t now_ms(void)
{
	return (uint64_t)net_now_ms();
}

/* /metrics: the page of metrics.c, sent as it is. */
static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct master *m = arg;
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	const struct metrics_sources src = {.store = m->store,
					    .rpc = m->rpc,
					    .http_cap = m->http_cap,
					    .auth = m->auth != NULL,
					    .tls = m->tls_rpc != NULL,
					    .auth_refused = m->svc.refused,
					    .ha = m->ha,
					    .ha_refused = m->gate.refused,
					    .ha_deferred = m->gate.deferred};
	size_t len = 0;
	char *text = metrics_page(&src, &len);

	if (!text) {
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evbuffer_add(out, text, len);
	free(text);
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
}

/* /health: a JSON object for probes and people (role: single, or with
 * --etcd_endpoints leader or standby, then its term and the leader). */
static void on_health(struct evhttp_request *req, void *arg)
{
	struct master *m = arg;
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	const struct master_opts *o = &m->flags.opts;
	struct store_figures f = {0};
	struct ha_figures h = {0};

	if (m->ha)
		ha_figures(m->ha, &h);
	if (m->store) {
		store_lock(m->store);
		store_figures(m->store, &f);
		store_unlock(m->store);
	}
	evbuffer_add_printf(out, "{\"status\":\"ok\",\"role\":\"%s\",",
			    !m->ha     ? "single"
			    : h.leader ? "leader"
				       : "standby");
	if (m->ha) /* HA (docs/HA.md): the term held, the leader known */
		evbuffer_add_printf(
		    out, "\"term\":%llu,\"leader\":\"%s\",\"serving\":%s,",
		    (unsigned long long)h.term, h.leader_addr,
		    h.serving ? "true" : "false");
	evbuffer_add_printf(
	    out,
	    "\"version\":\"%s\","
	    "\"mode\":\"%s\",\"segments\":%llu,\"clients\":%llu,"
	    "\"keys\":%llu,\"uptime_s\":%llu,\"incarnation\":\"%016llx\"}\n",
	    mcrepl_version(), mcrepl_mode_name(o->cfg.mode),
	    (unsigned long long)f.segments, (unsigned long long)f.clients,
	    (unsigned long long)f.keys,
	    (unsigned long long)((now_ms() - m->started_ms) / 1000),
	    (unsigned long long)(m->store ? store_incarnation(m->store) : 0));
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", "application/json");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
}

/* Leaving segments' replicas are dropped a chunk per loop turn, other
 * events served between turns (a zero timeout runs after the next poll). */
static void drain_later(struct master *m, bool more)
{
	static const struct timeval now = {0};

	if (more && !evtimer_pending(m->drain, NULL))
		evtimer_add(m->drain, &now);
}

static void on_drain(evutil_socket_t fd, short what, void *arg)
{
	struct master *m = arg;
	bool more;

	(void)fd;
	(void)what;
	store_lock(m->store);
	more = store_drain(m->store, now_ms());
	store_unlock(m->store);
	drain_later(m, more);
}

/* An RPC connection closed (rpc_server_config.on_close): noted for the
 * next tick, which runs within --sweep_interval_ms, outside any handler
 * and under the store lock. Without memory the id is dropped: its puts
 * then wait for their deadline, as before. */
static void on_rpc_close(void *arg, uint64_t conn_id)
{
	struct master *m = arg;

	if (m->n_gone == m->cap_gone) {
		size_t cap = m->cap_gone ? 2 * m->cap_gone : 64;
		uint64_t *p = realloc(m->gone, cap * sizeof(*p));

		if (!p)
			return;
		m->gone = p;
		m->cap_gone = cap;
	}
	m->gone[m->n_gone++] = conn_id;
}

/* HA: the fences of the mounts this leader expired go to etcd (store.h);
 * one that cannot be sent now is asked for again at the next tick. */
static void write_fences(struct master *m)
{
	uint64_t ids[16], inc = store_incarnation(m->store);
	size_t n;

	store_lock(m->store);
	n = store_fences_to_write(m->store, ids, 16);
	store_unlock(m->store);
	for (size_t i = 0; i < n; i++)
		if (ha_fence(m->ha, inc, ids[i]) != 0) {
			store_lock(m->store);
			store_fence_done(m->store, ids[i], false);
			store_unlock(m->store);
		}
}

static void ha_fenced(void *arg, uint64_t incarnation, uint64_t segment_id,
		      bool written)
{
	struct master *m = arg;

	if (!m->store || store_incarnation(m->store) != incarnation)
		return; /* another term's: its removes were answered */
	store_lock(m->store);
	store_fence_done(m->store, segment_id, written);
	store_unlock(m->store);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct master *m = arg;
	uint64_t now = now_ms();
	bool more;

	(void)fd;
	(void)what;
	/* an HA leader that does not serve (its lease uncertain) changes
	 * nothing: workers whose heartbeats it refuses are not expired */
	if (m->ha && !ha_serving(m->ha, net_now_ms()) && m->store)
		return;
	if (!m->store) {
		m->n_gone = 0; /* no store: no puts to release */
		return;
	}
	store_lock(m->store);
	store_conns_gone(m->store, m->gone, m->n_gone, now);
	m->n_gone = 0;
	store_tick(m->store, now, &m->last_evict_ms);
	more = store_backlog(m->store);
	store_unlock(m->store);
	if (m->ha)
		write_fences(m);
	drain_later(m, more);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct master *m = arg;

	(void)what;
	log_line(LOG_INFO, "signal %d, shutting down", (int)sig);
	event_base_loopbreak(m->base);
}

static uint64_t random_key(void)
{
	uint64_t k = 0;

	if (getrandom(&k, sizeof(k), 0) != (ssize_t)sizeof(k))
		k = now_ms() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	return k ? k : 1;
}

/* The grant secret (grant.h): 16 bytes from getrandom, new at every
 * start; without them the master does not start. */
static int random_secret(uint8_t out[GRANT_SECRET_BYTES], char *err,
			 size_t errlen)
{
	if (getrandom(out, GRANT_SECRET_BYTES, 0) ==
	    (ssize_t)GRANT_SECRET_BYTES)
		return 0;
	snprintf(err, errlen, "getrandom: %s (no grant secret)",
		 strerror(errno));
	return -1;
}

/* --insecure_no_grants_for_benchmarks: zero grants and stamp tags, for
 * the baseline of the benchmark that measures their cost (BENCHMARKS.md).
 * Only a command-line flag turns a security check off, never the
 * environment; and only where nobody else can reach: the RPC and HTTP
 * ports (both on --rpc_address) must be loopback, else the master does
 * not start (78). Said loudly when on. */
static int bench_grants_off(struct master *m, char *err, size_t errlen)
{
	if (!m->flags.opts.grants_off)
		return 0;
	if (!net_is_loopback(m->flags.rpc_address)) {
		snprintf(err, errlen,
			 "--insecure_no_grants_for_benchmarks: --rpc_address "
			 "%s (the RPC and HTTP ports) is not a loopback "
			 "address; without grants anyone who reaches the "
			 "workers' data ports reads and writes every object, "
			 "so this benchmark switch serves loopback only",
			 m->flags.rpc_address);
		return DAEMON_EXIT_CONFIG;
	}
	log_line(LOG_WARN, "--insecure_no_grants_for_benchmarks: "
			   "data-plane grants are OFF (a benchmark baseline; "
			   "workers started alike serve anyone)");
	return 0;
}

/* Each setup phase returns 0, or the exit status its failure calls for
 * (exitcode.h) with err filled. */
static int setup_store(struct master *m, char *err, size_t errlen)
{
	uint8_t secret[GRANT_SECRET_BYTES];
	int rc;

	if (random_secret(secret, err, errlen))
		return DAEMON_EXIT_RETRY;
	m->base = event_base_new();
	if (m->flags.auth_file[0] &&
	    auth_table_load(m->flags.auth_file, &m->auth, err, errlen))
		return DAEMON_EXIT_CONFIG;
	if (net_protected_bind(
		"mcrepl-master", "rpc_address", m->flags.rpc_address,
		sizeof(m->flags.rpc_address), "0.0.0.0", m->auth != NULL,
		m->flags.insecure, "--auth_file", stderr, err, errlen))
		return DAEMON_EXIT_CONFIG;
	rc = bench_grants_off(m, err, errlen); /* the address is known now */
	if (rc)
		return rc;
	m->svc.auth = m->auth; /* the service was made in start() */
	if (m->auth)
		log_line(LOG_INFO,
			 "authentication on: %zu principals "
			 "from %s",
			 m->auth->n, m->flags.auth_file);
	if (m->base && m->flags.etcd_endpoints[0])
		return 0; /* HA: the store comes with the leadership */
	if (!m->base ||
	    store_create(&m->flags.opts, secret, random_key(), &m->store)) {
		snprintf(err, errlen, "out of memory");
		return DAEMON_EXIT_RETRY;
	}
	m->svc.store = m->store;
	return 0;
}

/* --tls_cert, --tls_key, --tls_ca: the contexts of the RPC port (with
 * the CA: mutual TLS) and the HTTP port (server certificate only). */
static int setup_tls(struct master *m, char *err, size_t errlen)
{
	const struct master_flags *f = &m->flags;
	struct tls_files tf = {
	    .cert = f->tls_cert, .key = f->tls_key, .ca = f->tls_ca};

	if (tls_files_check(&tf, err, errlen))
		return DAEMON_EXIT_CONFIG;
	if (!tls_files_server(&tf)) {
		if (!f->tls_ca[0])
			return 0;
		snprintf(err, errlen,
			 "--tls_ca needs --tls_cert and --tls_key (mutual TLS "
			 "on the RPC port)");
		return DAEMON_EXIT_CONFIG;
	}
	m->tls_rpc =
	    tls_server_ctx(f->tls_cert, f->tls_key, f->tls_ca, err, errlen);
	if (m->tls_rpc)
		m->tls_http =
		    tls_server_ctx(f->tls_cert, f->tls_key, NULL, err, errlen);
	if (!m->tls_http)
		return DAEMON_EXIT_CONFIG;
	log_line(LOG_INFO, "TLS on the RPC and HTTP ports (%s)%s", f->tls_cert,
		 f->tls_ca[0] ? "; client certificates required (--tls_ca)"
			      : "");
	return 0;
}

static int setup_rpc(struct master *m, char *err, size_t errlen)
{
	rpc_server_config rc;
	char why[256] = "";

	rpc_server_config_init(&rc);
	rc.host = m->flags.rpc_address;
	rc.port = (uint16_t)m->flags.rpc_port;
	rc.max_frame_bytes = m->flags.max_frame_bytes;
	rc.auth = m->auth;
	rc.auth_timeout_ms = m->flags.auth_timeout_ms;
	rc.tls = m->tls_rpc;
	rc.tls_verify_clients = m->flags.tls_ca[0] != '\0';
	rc.on_close = on_rpc_close;
	rc.on_close_arg = m;
	m->rpc = rpc_server_create(
	    m->base, &rc,
	    m->flags.etcd_endpoints[0] ? &m->gate.base : &m->svc.base.base, why,
	    sizeof(why));
	if (!m->rpc) {
		snprintf(err, errlen, "rpc: %s", why);
		return DAEMON_EXIT_RETRY;
	}
	return 0;
}

static int bound_port(struct evhttp_bound_socket *sock, uint16_t *port_out)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(evhttp_bound_socket_get_fd(sock),
			(struct sockaddr *)&ss, &sl) != 0)
		return -1;
	*port_out = ntohs(ss.ss_family == AF_INET6
			      ? ((struct sockaddr_in6 *)&ss)->sin6_port
			      : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

static int setup_http(struct master *m, char *err, size_t errlen)
{
	struct evhttp_bound_socket *sock = NULL;

	m->http = evhttp_new(m->base);
	errno = 0;
	if (m->http) {
		evhttp_set_cb(m->http, "/metrics", on_metrics, m);
		evhttp_set_cb(m->http, "/health", on_health, m);
		evhttp_set_allowed_methods(m->http,
					   EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
		sock = evhttp_bind_socket_with_handle(
		    m->http, m->flags.rpc_address,
		    (uint16_t)m->flags.metrics_port);
	}
	if (sock)
		m->http_cap =
		    net_http_limit(m->base, m->http, sock, m->tls_http);
	if (!sock || !m->http_cap || bound_port(sock, &m->http_port) != 0) {
		snprintf(err, errlen,
			 "cannot serve HTTP on %s:%u: %s (set --metrics_port "
			 "to a free port; 0 picks one)",
			 m->flags.rpc_address, m->flags.metrics_port,
			 errno ? strerror(errno) : "cannot bind");
		return DAEMON_EXIT_RETRY;
	}
	return 0;
}

/* The periodic timer and the signals that stop the loop. */
static int setup_loop(struct master *m, char *err, size_t errlen)
{
	uint32_t ms = m->flags.sweep_interval_ms;
	struct timeval tv = net_timeval_ms(ms);

	m->timer = event_new(m->base, -1, EV_PERSIST, on_timer, m);
	m->drain = evtimer_new(m->base, on_drain, m);
	m->sigterm = evsignal_new(m->base, SIGTERM, on_signal, m);
	m->sigint = evsignal_new(m->base, SIGINT, on_signal, m);
	if (!m->timer || !m->drain || !m->sigterm || !m->sigint ||
	    event_add(m->timer, &tv) || event_add(m->sigterm, NULL) ||
	    event_add(m->sigint, NULL)) {
		snprintf(err, errlen, "event setup failed");
		return DAEMON_EXIT_RETRY;
	}
	return 0;
}

static int setup_admission(struct master *m, char *err, size_t errlen)
{
	if (!m->store)
		return 0; /* HA: started when elected */
	if (dyn_admitter_start(m->store, m->flags.admission_batch, now_ms,
			       &m->admitter) != 0) {
		snprintf(err, errlen, "no admission thread");
		return DAEMON_EXIT_RETRY;
	}
	return 0;
}

/* ---- high availability (ha.h) ---- */

static bool gate_open(void *arg, char *leader, size_t cap)
{
	struct master *m = arg;
	struct ha_figures f;

	if (m->store && ha_serving(m->ha, net_now_ms()))
		return true;
	ha_figures(m->ha, &f);
	snprintf(leader, cap, "%s", f.leader ? "" : f.leader_addr);
	return false;
}

static bool gate_recovering(void *arg)
{
	struct master *m = arg;
	bool held;

	if (now_ms() < m->elected_ms + m->flags.ha_recovery_ms)
		return true;
	store_lock(m->store);
	held = store_segments_held(m->store);
	store_unlock(m->store);
	return held;
}

static void ha_elected(void *arg, uint64_t term, uint64_t incarnation)
{
	struct master *m = arg;

	uint8_t secret[GRANT_SECRET_BYTES];
	char err[128];

	/* a new term, a new grant secret: old grants die with the old term */
	if (random_secret(secret, err, sizeof(err)) ||
	    store_create(&m->flags.opts, secret, incarnation, &m->store) != 0) {
		log_line(LOG_ERROR,
			 "out of memory taking term "
			 "%llu",
			 (unsigned long long)term);
		exit(DAEMON_EXIT_RETRY);
	}
	store_set_term(m->store, term);
	m->svc.store = m->store;
	if (dyn_admitter_start(m->store, m->flags.admission_batch, now_ms,
			       &m->admitter) != 0) {
		log_line(LOG_ERROR, "no admission thread");
		exit(DAEMON_EXIT_RETRY);
	}
	m->last_evict_ms = 0;
	m->elected_ms = now_ms();
}

static void ha_deposed(void *arg, const char *why)
{
	struct master *m = arg;

	(void)why;
	dyn_admitter_stop(m->admitter);
	m->admitter = NULL;
	store_lock(m->store); /* waiting removes: ask the next leader */
	store_abort_removes(m->store);
	store_unlock(m->store);
	store_destroy(m->store);
	m->store = NULL;
	m->svc.store = NULL;
}

static int advertised(struct master *m, char *out, size_t cap, char *err,
		      size_t errlen)
{
	const char *a = m->flags.rpc_address;

	if (m->flags.ha_advertise[0]) {
		snprintf(out, cap, "%s", m->flags.ha_advertise);
		return 0;
	}
	if (strcmp(a, "0.0.0.0") == 0 || strcmp(a, "::") == 0 || !a[0]) {
		snprintf(err, errlen,
			 "--etcd_endpoints with a wildcard --rpc_address "
			 "needs --ha_advertise_address host:port");
		return -1;
	}
	snprintf(out, cap, "%s:%u", a, rpc_server_port(m->rpc));
	return 0;
}

static int setup_ha(struct master *m, char *err, size_t errlen)
{
	struct ha_config hc = {
	    .endpoints = m->flags.etcd_endpoints,
	    .key = m->flags.ha_key,
	    .lease_ttl_ms = m->flags.ha_lease_ttl_ms,
	    .poll_ms = m->flags.ha_poll_ms,
	};
	struct ha_callbacks cb = {.elected = ha_elected,
				  .deposed = ha_deposed,
				  .fenced = ha_fenced,
				  .arg = m};
	char adv[256];

	if (!m->flags.etcd_endpoints[0])
		return 0;
	if (advertised(m, adv, sizeof(adv), err, errlen) != 0)
		return DAEMON_EXIT_CONFIG;
	hc.advertise = adv;
	/* fails only on --etcd_endpoints (or memory) */
	m->ha = ha_start(m->base, &hc, &cb, err, errlen);
	return m->ha ? 0 : DAEMON_EXIT_CONFIG;
}

/* The setup phases in order, then the ready line (with the address the
 * ports are bound to): 0, or the exit status of the phase that failed
 * (after its line). */
static int start(struct master *m)
{
	static int (*const phases[])(struct master *, char *, size_t) = {
	    setup_store, setup_tls,	  setup_rpc, setup_http,
	    setup_loop,	 setup_admission, setup_ha,
	};
	char err[512] = "";
	int rc;

	/* the gate needs the service's descriptor before it has a store */
	if (master_service_init(&m->svc, NULL, now_ms, NULL)) {
		log_line(LOG_ERROR, "out of memory");
		return DAEMON_EXIT_RETRY;
	}
	ha_gate_init(&m->gate, &m->svc.base.base, gate_open, gate_recovering,
		     m);
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		rc = phases[i](m, err, sizeof(err));
		if (rc) {
			log_line(LOG_ERROR, "%s", err);
			return rc;
		}
	}
	printf("mcrepl-master ready rpc_address=%s rpc_port=%u metrics_port=%u "
	       "mode=%s%s\n",
	       m->flags.rpc_address, rpc_server_port(m->rpc), m->http_port,
	       mcrepl_mode_name(m->flags.opts.cfg.mode),
	       m->ha ? " ha=etcd" : "");
	fflush(stdout);
	return 0;
}

/* Undo start() in reverse; safe after any phase failed. */
static void stop(struct master *m)
{
	ha_stop(m->ha, 1000); /* revoke the lease: a standby takes over now */
	dyn_admitter_stop(m->admitter);
	if (m->timer)
		event_free(m->timer);
	if (m->drain)
		event_free(m->drain);
	/* freeing the signal events restores the default action: a SIGTERM
	 * repeated now would kill the exiting master (143) */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	if (m->sigterm)
		event_free(m->sigterm);
	if (m->sigint)
		event_free(m->sigint);
	net_http_free(m->http, m->http_cap);
	if (m->store) { /* waiting removes: ask the next leader */
		store_lock(m->store);
		store_abort_removes(m->store);
		store_unlock(m->store);
	}
	rpc_server_destroy(m->rpc);
	master_service_fini(&m->svc);
	store_destroy(m->store);
	auth_table_free(m->auth);
	free(m->gone);
	SSL_CTX_free(m->tls_rpc);
	SSL_CTX_free(m->tls_http);
	if (m->base)
		event_base_free(m->base);
}

int main(int argc, char **argv)
{
	struct master m;
	int rc;

	memset(&m, 0, sizeof(m));
	signal(SIGPIPE, SIG_IGN);
	log_init("mcrepl-master", NULL);
	rc = master_flags_parse(&m.flags, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : DAEMON_EXIT_USAGE;
	log_init("mcrepl-master", m.flags.log_level);
	master_flags_warn(&m.flags, stderr);
	m.started_ms = now_ms();
	rc = start(&m);
	if (rc != 0) {
		stop(&m);
		return rc;
	}
	event_base_dispatch(m.base);
	stop(&m);
	return 0;
}
