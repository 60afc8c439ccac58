/*
 * mcrepl-master: the metadata master. One libevent loop serves RPC and
 * HTTP (/metrics, /health) and runs one periodic timer (lease sweep, client
 * expiry, eviction); the admission worker is its own thread, so admission
 * never delays reads. The clock is read here and passed down.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "flags.h"
#include "rpc_server.h"
#include "service.h"

struct master {
	struct master_flags flags;
	struct event_base *base;
	struct store *store;
	struct master_service svc;
	rpc_server *rpc;
	struct evhttp *http;
	struct event *timer, *sigterm, *sigint;
	pthread_t admitter;
	atomic_bool stop;
	uint64_t last_evict_ms;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct master *m = arg;
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	size_t len = 0;
	char *text = master_metrics(m->store, &len);

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

static void on_health(struct evhttp_request *req, void *arg)
{
	struct evbuffer *out = evhttp_request_get_output_buffer(req);

	(void)arg;
	evbuffer_add_printf(out, "ok\n");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct master *m = arg;
	uint64_t now = now_ms();

	(void)fd;
	(void)what;
	store_lock(m->store);
	store_tick(m->store, now, &m->last_evict_ms);
	store_unlock(m->store);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct master *m = arg;

	(void)what;
	fprintf(stderr, "mcrepl-master: signal %d, shutting down\n", (int)sig);
	event_base_loopbreak(m->base);
}

/* The background admission worker: judge queued triggers in batches. */
static void *admission_main(void *arg)
{
	struct master *m = arg;
	const struct timespec idle = {0, 2 * 1000 * 1000};

	while (!atomic_load(&m->stop)) {
		if (dyn_admit_batch(m->store, m->flags.admission_batch,
				    now_ms()) == 0)
			nanosleep(&idle, NULL);
	}
	return NULL;
}

static int start_http(struct master *m, uint16_t *port_out)
{
	struct evhttp_bound_socket *sock;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	m->http = evhttp_new(m->base);
	if (!m->http)
		return -1;
	evhttp_set_cb(m->http, "/metrics", on_metrics, m);
	evhttp_set_cb(m->http, "/health", on_health, m);
	evhttp_set_allowed_methods(m->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	sock = evhttp_bind_socket_with_handle(m->http, m->flags.rpc_address,
					      (uint16_t)m->flags.metrics_port);
	if (!sock)
		return -1;
	net_http_limit(m->http, sock);
	if (getsockname(evhttp_bound_socket_get_fd(sock),
			(struct sockaddr *)&ss, &sl) != 0)
		return -1;
	*port_out = ntohs(ss.ss_family == AF_INET6
			      ? ((struct sockaddr_in6 *)&ss)->sin6_port
			      : ((struct sockaddr_in *)&ss)->sin_port);
	return 0;
}

static uint64_t random_key(void)
{
	uint64_t k = 0;

	if (getrandom(&k, sizeof(k), 0) != (ssize_t)sizeof(k))
		k = now_ms() * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
	return k ? k : 1;
}

static int start(struct master *m)
{
	rpc_server_config rc;
	struct timeval tv = {0, (long)m->flags.sweep_interval_ms * 1000};
	char err[256] = "";
	uint16_t http_port = 0;

	tv.tv_sec = tv.tv_usec / 1000000;
	tv.tv_usec %= 1000000;
	m->base = event_base_new();
	if (!m->base || store_create(&m->flags.opts, random_key(), &m->store))
		return fprintf(stderr, "mcrepl-master: out of memory\n"), -1;
	master_service_init(&m->svc, m->store, now_ms);
	rpc_server_config_init(&rc);
	rc.host = m->flags.rpc_address;
	rc.port = (uint16_t)m->flags.rpc_port;
	rc.max_frame_bytes = m->flags.max_frame_bytes;
	m->rpc = rpc_server_create(m->base, &rc, &m->svc.base.base, err,
				   sizeof(err));
	if (!m->rpc)
		return fprintf(stderr, "mcrepl-master: rpc: %s\n", err), -1;
	if (start_http(m, &http_port) != 0)
		return fprintf(stderr,
			       "mcrepl-master: cannot serve HTTP on "
			       "%s:%u\n",
			       m->flags.rpc_address, m->flags.metrics_port),
		       -1;
	m->timer = event_new(m->base, -1, EV_PERSIST, on_timer, m);
	m->sigterm = evsignal_new(m->base, SIGTERM, on_signal, m);
	m->sigint = evsignal_new(m->base, SIGINT, on_signal, m);
	if (!m->timer || !m->sigterm || !m->sigint ||
	    event_add(m->timer, &tv) || event_add(m->sigterm, NULL) ||
	    event_add(m->sigint, NULL))
		return fprintf(stderr, "mcrepl-master: event setup failed\n"),
		       -1;
	if (pthread_create(&m->admitter, NULL, admission_main, m) != 0)
		return fprintf(stderr, "mcrepl-master: no admission thread\n"),
		       -1;
	printf("mcrepl-master ready rpc_port=%u metrics_port=%u mode=%s\n",
	       rpc_server_port(m->rpc), http_port,
	       mcrepl_mode_name(m->flags.opts.cfg.mode));
	fflush(stdout);
	return 0;
}

static void stop(struct master *m, bool thread_started)
{
	if (thread_started) {
		atomic_store(&m->stop, true);
		pthread_join(m->admitter, NULL);
	}
	if (m->timer)
		event_free(m->timer);
	if (m->sigterm)
		event_free(m->sigterm);
	if (m->sigint)
		event_free(m->sigint);
	if (m->http)
		evhttp_free(m->http);
	rpc_server_destroy(m->rpc);
	store_destroy(m->store);
	if (m->base)
		event_base_free(m->base);
}

int main(int argc, char **argv)
{
	struct master m;
	int rc;

	memset(&m, 0, sizeof(m));
	atomic_init(&m.stop, false);
	signal(SIGPIPE, SIG_IGN);
	rc = master_flags_parse(&m.flags, argc, argv);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (start(&m) != 0) {
		stop(&m, m.admitter != 0);
		return 1;
	}
	event_base_dispatch(m.base);
	stop(&m, true);
	return 0;
}
