/* The worker's /metrics (Prometheus text): reads and bytes served per
 * segment, writes accepted and refused, copies started/completed/failed. */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "worker.h"

static void per_segment(struct worker *w, struct evbuffer *out)
{
	static const char *const names[] = {"reads", "read_bytes", "writes",
					    "write_bytes"};
	struct data_stats st;

	for (size_t k = 0; k < 4; k++) {
		evbuffer_add_printf(
		    out, "# TYPE mcrepl_worker_%s_total counter\n", names[k]);
		for (uint32_t i = 0; i < w->n_segs; i++) {
			uint64_t v[4];

			data_server_slot_stats(w->ds, w->segs[i].slot, &st);
			v[0] = st.reads;
			v[1] = st.read_bytes;
			v[2] = st.writes;
			v[3] = st.write_bytes;
			evbuffer_add_printf(
			    out,
			    "mcrepl_worker_%s_total{segment=\"%llu\"} %llu\n",
			    names[k], (unsigned long long)w->segs[i].id,
			    (unsigned long long)v[k]);
		}
	}
}

static void counter(struct evbuffer *out, const char *name, uint64_t v)
{
	evbuffer_add_printf(out,
			    "# TYPE mcrepl_worker_%s counter\n"
			    "mcrepl_worker_%s %llu\n",
			    name, name, (unsigned long long)v);
}

static void render(struct worker *w, struct evbuffer *out)
{
	struct data_server_counters c;

	per_segment(w, out);
	data_server_counters(w->ds, &c);
	counter(out, "writes_refused_total", c.refused_writes);
	counter(out, "reads_refused_total", c.refused_reads);
	counter(out, "bad_streams_total", c.bad_streams);
	counter(out, "data_connections_accepted_total", c.accepted);
	counter(out, "data_connections_idle_closed_total", c.idle_closed);
	counter(out, "copies_started_total", w->ctr.copies_started);
	counter(out, "copies_completed_total", w->ctr.copies_completed);
	counter(out, "copies_failed_total", w->ctr.copies_failed);
	counter(out, "copy_bytes_total", w->ctr.copy_bytes);
	counter(out, "tasks_fetched_total", w->ctr.tasks_fetched);
	counter(out, "remounts_total", w->ctr.remounts);
	evbuffer_add_printf(out,
			    "# TYPE mcrepl_worker_copies_inflight gauge\n"
			    "mcrepl_worker_copies_inflight %u\n"
			    "# TYPE mcrepl_worker_data_connections gauge\n"
			    "mcrepl_worker_data_connections %llu\n",
			    tasks_copying(w),
			    (unsigned long long)c.connections);
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct evbuffer *out = evhttp_request_get_output_buffer(req);

	render(arg, out);
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", "text/plain; version=0.0.4");
	evhttp_send_reply(req, HTTP_OK, "OK", out);
}

int metrics_start(struct worker *w, char *err, size_t errlen)
{
	struct evhttp_bound_socket *sock;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	w->http = evhttp_new(w->base);
	if (!w->http)
		goto out_err;
	evhttp_set_cb(w->http, "/metrics", on_metrics, w);
	evhttp_set_allowed_methods(w->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	sock = evhttp_bind_socket_with_handle(w->http, w->flags.data_address,
					      (uint16_t)w->flags.metrics_port);
	if (!sock || getsockname(evhttp_bound_socket_get_fd(sock),
				 (struct sockaddr *)&ss, &sl) != 0)
		goto out_err;
	w->metrics_port =
	    ntohs(ss.ss_family == AF_INET6
		      ? ((struct sockaddr_in6 *)(void *)&ss)->sin6_port
		      : ((struct sockaddr_in *)(void *)&ss)->sin_port);
	return 0;
out_err:
	snprintf(err, errlen, "cannot serve /metrics on %s:%d",
		 w->flags.data_address, w->flags.metrics_port);
	metrics_stop(w);
	return -1;
}

void metrics_stop(struct worker *w)
{
	if (w->http)
		evhttp_free(w->http);
	w->http = NULL;
}
