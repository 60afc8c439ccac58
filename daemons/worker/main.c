/*
 * mcrepl-worker: mounts MEMORY segments on mcrepl-master, serves their
 * bytes on a data port, and executes REPLICA_COPY tasks through a copy
 * engine (rdma or tcp). One libevent loop: the data server, the async RPC
 * client, /metrics, and one periodic timer (mount retries, heartbeat,
 * FetchTasks, shutdown progress). SIGTERM/SIGINT: drain (drain.c), then
 * stop fetching, revoke the copies in flight, unmount, exit 0; a second
 * signal exits at once after a blocking unmount of what is still mounted
 * (at most 1 s). Exit statuses: exitcode.h.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "advertise.h"
#include "exitcode.h"
#include "netutil.h"
#include "protect.h"
#include "worker.h"

static uint64_t random_id(void)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id = (uint64_t)net_now_ms() * 0x9e3779b97f4a7c15ULL ^
		     (uint64_t)getpid();
	id &= 0x7fffffffffffffffULL; /* readable in any signed tool */
	return id ? id : 1;
}

static uint64_t ram_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : 0;
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct worker *w = arg;
	int64_t now = net_now_ms();

	(void)fd;
	(void)what;
	control_tick(w, now);
	tasks_tick(w);
	drain_tick(w, now);
	if (!w->stopping)
		return;
	if (now >= w->stop_deadline_ms) {
		log_line(LOG_WARN, "shutdown grace period over");
		event_base_loopbreak(w->base);
	} else if (w->n_tasks == 0 && !w->unmounting) {
		control_unmount_all(w);
	}
}

void worker_stop(struct worker *w)
{
	log_line(LOG_INFO, "stopping (%u task(s) in flight)", w->n_tasks);
	w->draining = false;
	w->stopping = true;
	w->stop_deadline_ms = net_now_ms() + WORKER_STOP_GRACE_MS;
	/* Fails the copies in flight: their tasks revoke and report. */
	copy_engine_destroy(w->engine);
	copy_engine_destroy(w->tcp_engine);
	w->engine = NULL;
	w->tcp_engine = NULL;
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct worker *w = arg;

	(void)what;
	if (w->stopping) { /* again: exit now; main() still unmounts */
		event_base_loopbreak(w->base);
		return;
	}
	log_line(LOG_INFO, "signal %d", (int)sig);
	if (w->draining || !drain_begin(w)) /* again while draining: stop */
		worker_stop(w);
}

/* Each setup phase returns 0, or the exit status its failure calls for
 * (exitcode.h) with err filled. */
static int setup_segments(struct worker *w, char *err, size_t errlen)
{
	w->segs = calloc(w->flags.segments, sizeof(*w->segs));
	if (!w->segs) {
		snprintf(err, errlen, "out of memory");
		return DAEMON_EXIT_RETRY;
	}
	for (uint32_t i = 0; i < w->flags.segments; i++) {
		struct wseg *s = &w->segs[i];

		s->w = w;
		if (segment_map(s, w->flags.segment_size, w->flags.hugepages,
				err, errlen))
			return DAEMON_EXIT_RETRY;
		w->n_segs = i + 1;
		s->slot = data_server_add_segment(w->ds, s->mem, s->len);
		if (s->slot < 0) {
			snprintf(err, errlen, "out of memory");
			return DAEMON_EXIT_RETRY;
		}
		snprintf(s->name, sizeof(s->name), "%s/%016llx/%u",
			 w->flags.host_id, (unsigned long long)w->client_id, i);
	}
	return 0;
}

/* The address the master hands to readers and copy sources. */
static int choose_advertised(struct worker *w, char *out, size_t cap, char *err,
			     size_t errlen)
{
	struct host_addr addrs[32];
	size_t n = advertise_host_addrs(addrs, 32);
	const char *m = w->flags.master;

	if (advertise_choose(w->flags.advertise_address, w->flags.data_address,
			     addrs, n, out, cap, err, errlen))
		return -1;
	if (advertise_is_loopback(out) && !advertise_is_loopback(m))
		log_line(LOG_WARN,
			 "advertising %s to a master at "
			 "%s: other hosts cannot read this worker; set "
			 "--data_address or --advertise_address",
			 out, m);
	return 0;
}

/* --insecure_no_grants_for_benchmarks: serve without grants, for the
 * baseline of the benchmark that measures their cost (BENCHMARKS.md).
 * Only a command-line flag turns a security check off, never the
 * environment; and only where nobody else can reach: the data and
 * metrics ports (both on --data_address) must be loopback, else the
 * worker does not start (78). Said loudly when on. */
static int bench_grants_off(const struct worker *w, char *err, size_t errlen)
{
	if (!w->flags.no_grants)
		return 0;
	if (!net_is_loopback(w->flags.data_address)) {
		snprintf(err, errlen,
			 "--insecure_no_grants_for_benchmarks: --data_address "
			 "%s (the data and metrics ports) is not a loopback "
			 "address; without grants anyone who reaches it reads "
			 "and writes every object, so this benchmark switch "
			 "serves loopback only",
			 w->flags.data_address);
		return DAEMON_EXIT_CONFIG;
	}
	log_line(LOG_WARN, "--insecure_no_grants_for_benchmarks: "
			   "data-plane grants are OFF (a benchmark baseline): "
			   "anyone reaching the data port reads and writes");
	return 0;
}

static int setup_data(struct worker *w, char *err, size_t errlen)
{
	struct data_server_config dc;
	char adv[64];
	int rc = bench_grants_off(w, err, errlen);

	if (rc)
		return rc;
	if (choose_advertised(w, adv, sizeof(adv), err, errlen))
		return DAEMON_EXIT_CONFIG;
	data_server_config_init(&dc);
	dc.host = w->flags.data_address;
	dc.port = (uint16_t)w->flags.data_port;
	dc.max_io_bytes = w->flags.segment_size;
	dc.idle_timeout_ms = w->flags.data_idle_timeout_ms;
	dc.grants_off = w->flags.no_grants;
	w->ds = data_server_create(w->base, &dc, err, errlen);
	if (!w->ds)
		return DAEMON_EXIT_RETRY;
	snprintf(w->endpoint, sizeof(w->endpoint),
		 strchr(adv, ':') ? "[%s]:%u" : "%s:%u", adv,
		 data_server_port(w->ds));
	return 0;
}

/* rdma: where peers dial this worker's engine, advertised with each
 * segment as a numeric address (the engine never resolves names on its
 * loop); and the tcp engine for targets that come without one. */
static int setup_rdma_peers(struct worker *w,
			    const struct copy_engine_config *cc, char *err,
			    size_t errlen)
{
	const char *adv = w->flags.data_address;
	struct sockaddr_storage ss;
	socklen_t sslen;
	char why[200];

	if (!w->engine->listen_port)
		return 0;
	if (!strcmp(adv, "0.0.0.0") || !strcmp(adv, "::") || !adv[0])
		adv = w->flags.host_id;
	if (net_resolve(adv, w->engine->listen_port, 0, &ss, &sslen, why,
			sizeof(why))) {
		snprintf(
		    err, errlen,
		    "rdma: cannot advertise '%.64s' to peers (%s); set --data_address to this host's RDMA address",
		    adv, why);
		return DAEMON_EXIT_CONFIG;
	}
	net_format_addr((struct sockaddr *)&ss, sslen, w->rdma_endpoint,
			sizeof(w->rdma_endpoint));
	w->tcp_engine = copy_engine_tcp_create(w->base, cc, err, errlen);
	if (!w->tcp_engine)
		return DAEMON_EXIT_RETRY;
	log_line(LOG_INFO, "rdma peers dial %s", w->rdma_endpoint);
	return 0;
}

static int setup_engine(struct worker *w, char *err, size_t errlen)
{
	struct copy_engine_config cc;
	const char *why = "";

	copy_engine_config_init(&cc);
	cc.max_inflight = w->flags.max_copies;
	cc.max_inflight_bytes = w->flags.max_copy_bytes;
	cc.timeout_ms = w->flags.copy_timeout_ms;
	cc.rdma_device = w->flags.rdma_device[0] ? w->flags.rdma_device : NULL;
	cc.rdma_port = (uint16_t)w->flags.rdma_port;
	/* the transport asked for is not on this host (not built, no
	 * device) */
	w->engine = copy_engine_select(w->base, w->flags.transport, &cc, &why,
				       err, errlen);
	if (!w->engine)
		return DAEMON_EXIT_CONFIG;
	w->transport = w->engine->ops->name;
	for (uint32_t i = 0; i < w->n_segs; i++)
		if (w->engine->ops->register_memory(
			w->engine, w->segs[i].mem, (size_t)w->segs[i].len,
			&w->segs[i].base_addr, &w->segs[i].rkey) != 0) {
			snprintf(err, errlen,
				 "%s engine cannot register segment memory",
				 w->transport);
			return DAEMON_EXIT_RETRY;
		}
	log_line(LOG_INFO, "transport %s (%s)", w->transport, why);
	return setup_rdma_peers(w, &cc, err, errlen);
}

static int setup_loop(struct worker *w, char *err, size_t errlen)
{
	int ms = (int)w->flags.poll_interval_ms;
	struct timeval tv = net_timeval_ms(ms);

	rpc_client_config rc;
	char host[256];
	uint16_t port;

	if (net_split_hostport(w->flags.master, host, sizeof(host), &port)) {
		snprintf(err, errlen,
			 "--master: bad address \"%s\" (want host:port)",
			 w->flags.master);
		return DAEMON_EXIT_CONFIG;
	}
	/* a name that does not resolve yet (DNS at boot) may later */
	worker_rpc_config(w, &rc);
	w->rpc = rpc_aclient_create(w->base, w->flags.master, &rc, err, errlen);
	if (!w->rpc)
		return DAEMON_EXIT_RETRY;
	if (ha_setup(w, err, errlen) != 0)
		return DAEMON_EXIT_CONFIG;
	if (w->etcd) /* the leader is looked up before the first mount */
		w->flags.master[0] = '\0';
	w->tick = event_new(w->base, -1, EV_PERSIST, on_tick, w);
	w->sigterm = evsignal_new(w->base, SIGTERM, on_signal, w);
	w->sigint = evsignal_new(w->base, SIGINT, on_signal, w);
	if (!w->tick || !w->sigterm || !w->sigint || event_add(w->tick, &tv) ||
	    event_add(w->sigterm, NULL) || event_add(w->sigint, NULL)) {
		snprintf(err, errlen, "event setup failed");
		return DAEMON_EXIT_RETRY;
	}
	return 0;
}

/* The credential (--principal, --secret_file) and protected mode: without
 * one, the data and metrics ports stay on loopback (protect.h). */
static int setup_auth(struct worker *w, char *err, size_t errlen)
{
	struct worker_flags *f = &w->flags;
	struct tls_files tf = {
	    .cert = f->tls_cert, .key = f->tls_key, .ca = f->tls_ca};

	if (client_auth_setup(&w->auth, f->principal, f->secret_file, &tf, true,
			      err, errlen))
		return DAEMON_EXIT_CONFIG;
	/* a master with an auth file takes only ids of our principal's
	 * space (auth.h) */
	if (f->principal[0])
		w->client_id =
		    auth_client_id(f->principal, (uint32_t)random_id());
	if (tls_files_server(&tf)) {
		w->tls_http =
		    tls_server_ctx(f->tls_cert, f->tls_key, NULL, err, errlen);
		if (!w->tls_http)
			return DAEMON_EXIT_CONFIG;
	}
	return net_protected_bind("mcrepl-worker", "data_address",
				  f->data_address, sizeof(f->data_address),
				  "0.0.0.0", client_auth_any(&w->auth),
				  f->insecure, "--principal", stderr, err,
				  errlen)
		   ? DAEMON_EXIT_CONFIG
		   : 0;
}

void worker_rpc_config(const struct worker *w, rpc_client_config *cfg)
{
	rpc_client_config_init(cfg);
	client_auth_apply(&w->auth, cfg);
}

static int setup_metrics(struct worker *w, char *err, size_t errlen)
{
	if (w->flags.metrics_port < 0)
		return 0;
	return metrics_start(w, err, errlen) ? DAEMON_EXIT_RETRY : 0;
}

/* The setup phases in order: 0, or the exit status of the one that
 * failed (after its line). */
static int start(struct worker *w)
{
	static int (*const phases[])(struct worker *, char *, size_t) = {
	    setup_auth,	  setup_data,	 setup_segments,
	    setup_engine, setup_metrics, setup_loop,
	};
	char err[512] = "";
	int rc;

	w->client_id = random_id();
	snprintf(w->caps[0], sizeof(w->caps[0]), "dynamic_copy");
	snprintf(w->caps[1], sizeof(w->caps[1]), "rdma");
	w->base = event_base_new();
	if (!w->base) {
		log_line(LOG_ERROR, "cannot create event loop");
		return DAEMON_EXIT_RETRY;
	}
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		rc = phases[i](w, err, sizeof(err));
		if (rc) {
			log_line(LOG_ERROR, "%s", err);
			return rc;
		}
	}
	return 0;
}

static void stop(struct worker *w)
{
	copy_engine_destroy(w->engine);
	copy_engine_destroy(w->tcp_engine);
	w->engine = NULL;
	w->tcp_engine = NULL;
	/* Cancels pending calls: every task's chain ends and frees it. */
	rpc_aclient_destroy(w->rpc);
	ha_teardown(w);
	if (w->tick)
		event_free(w->tick);
	/* freeing the signal events restores the default action: a SIGTERM
	 * repeated now (a supervisor's) would kill the exiting worker (143) */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	if (w->sigterm)
		event_free(w->sigterm);
	if (w->sigint)
		event_free(w->sigint);
	metrics_stop(w);
	data_server_destroy(w->ds);
	if (w->base)
		event_base_free(w->base);
	for (uint32_t i = 0; i < w->n_segs; i++)
		segment_unmap(&w->segs[i]);
	free(w->segs);
	client_auth_free(&w->auth);
	SSL_CTX_free(w->tls_http);
}

int main(int argc, char **argv)
{
	struct worker w;
	int rc;

	memset(&w, 0, sizeof(w));
	signal(SIGPIPE, SIG_IGN);
	log_init("mcrepl-worker", NULL);
	rc = worker_flags_parse(&w.flags, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : DAEMON_EXIT_USAGE;
	log_init("mcrepl-worker", w.flags.log_level);
	worker_flags_warn(&w.flags, ram_bytes(), stderr);
	rc = start(&w);
	if (rc != 0) {
		stop(&w);
		return rc;
	}
	event_base_dispatch(w.base);
	if (w.stopping || w.fatal) /* the master must not keep placing on us */
		control_unmount_sync(&w, WORKER_STOP_UNMOUNT_MS);
	stop(&w);
	/* refused for good: a restart would be refused the same way */
	return w.fatal ? DAEMON_EXIT_CONFIG : 0;
}
