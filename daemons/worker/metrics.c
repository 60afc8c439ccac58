/* The worker's /metrics (Prometheus text): reads and bytes served per
 * segment, writes accepted and refused, copies started/completed/failed. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/http.h>

#include "prom.h"
#include "httpcap.h"
#include "netlimits.h"
#include "worker.h"

static void per_segment(struct worker *w, struct mcu_prom *out)
{
	static const char *const names[] = {
	    "mcrepl_worker_reads_total", "mcrepl_worker_read_bytes_total",
	    "mcrepl_worker_writes_total", "mcrepl_worker_write_bytes_total"};
	struct data_stats st;

	for (size_t k = 0; k < 4; k++) {
		mcu_prom_head(out, names[k], "counter", NULL);
		for (uint32_t i = 0; i < w->n_segs; i++) {
			char id[24];
			struct mcu_prom_label l = {"segment", id};
			uint64_t v[4];

			data_server_slot_stats(w->ds, w->segs[i].slot, &st);
			v[0] = st.reads;
			v[1] = st.read_bytes;
			v[2] = st.writes;
			v[3] = st.write_bytes;
			snprintf(id, sizeof(id), "%llu",
				 (unsigned long long)w->segs[i].id);
			mcu_prom_u64(out, names[k], &l, 1, v[k]);
		}
	}
}

/* Data-plane requests refused for their grant (grant.h), by reason. */
static void grant_refusals(const struct data_server_counters *c,
			   struct mcu_prom *out)
{
	static const char name[] = "mcrepl_worker_grant_refusals_total";
	const struct {
		const char *reason;
		uint64_t v;
	} rows[] = {
	    {"invalid", c->refused_grant},
	    {"expired", c->refused_expired},
	    {"stale_region", c->refused_stale},
	};

	mcu_prom_head(out, name, "counter",
		      "READs and WRITEs refused for their grant: forged or for "
		      "another op, region or object (invalid), expired "
		      "(writes cut mid-stream included), or a READ of a region "
		      "holding another object (stale_region)");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct mcu_prom_label l = {"reason", rows[i].reason};

		mcu_prom_u64(out, name, &l, 1, rows[i].v);
	}
	mcu_prom_metric(out, "mcrepl_worker_writes_cut_total", "counter",
			"WRITEs cut when their grant expired mid-stream",
			c->cut_writes);
}

/* The worker-wide counters and gauges. */
/* Committed replicas in the HA index, all segments. */
static uint64_t index_objects(const struct worker *w)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < w->n_segs; i++)
		n += ha_index_size(&w->segs[i]);
	return n;
}

static void totals(struct worker *w, const struct data_server_counters *c,
		   struct mcu_prom *out)
{
	const struct {
		const char *name, *type;
		uint64_t v;
	} rows[] = {
	    {"mcrepl_worker_writes_refused_total", "counter",
	     c->refused_writes},
	    {"mcrepl_worker_reads_refused_total", "counter", c->refused_reads},
	    {"mcrepl_worker_bad_streams_total", "counter", c->bad_streams},
	    {"mcrepl_worker_data_connections_accepted_total", "counter",
	     c->accepted},
	    {"mcrepl_worker_data_connections_idle_closed_total", "counter",
	     c->idle_closed},
	    {"mcrepl_worker_copies_started_total", "counter",
	     w->ctr.copies_started},
	    {"mcrepl_worker_copies_stale_source_total", "counter",
	     w->ctr.copies_stale_source},
	    {"mcrepl_worker_copies_completed_total", "counter",
	     w->ctr.copies_completed},
	    {"mcrepl_worker_copies_failed_total", "counter",
	     w->ctr.copies_failed},
	    {"mcrepl_worker_copy_bytes_total", "counter", w->ctr.copy_bytes},
	    {"mcrepl_worker_tasks_fetched_total", "counter",
	     w->ctr.tasks_fetched},
	    {"mcrepl_worker_remounts_total", "counter", w->ctr.remounts},
	    /* HA (ha.c, docs/HA.md) */
	    {"mcrepl_worker_leader_changes_total", "counter",
	     w->ctr.leader_changes},
	    {"mcrepl_worker_objects_registered_total", "counter",
	     w->ctr.objects_registered},
	    {"mcrepl_worker_objects_register_refused_total", "counter",
	     w->ctr.register_refused},
	    {"mcrepl_worker_index_stamps_bad_total", "counter",
	     w->ctr.stamps_bad},
	    {"mcrepl_worker_index_objects", "gauge", index_objects(w)},
	    {"mcrepl_worker_copies_inflight", "gauge", tasks_copying(w)},
	    {"mcrepl_worker_data_connections", "gauge", c->connections},
	    /* the data port's bounds (issue 17) */
	    {"mcrepl_worker_data_connections_refused_total", "counter",
	     c->refused},
	    {"mcrepl_worker_data_header_timeouts_total", "counter",
	     c->header_timeouts},
	    {"mcrepl_worker_data_body_timeouts_total", "counter",
	     c->body_timeouts},
	    {"mcrepl_worker_data_paused_total", "counter", c->paused},
	    {"mcrepl_worker_data_budget_closed_total", "counter",
	     c->budget_closed},
	    {"mcrepl_worker_data_input_held_bytes", "gauge", c->input_held},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		mcu_prom_metric(out, rows[i].name, rows[i].type, NULL,
				rows[i].v);
	httpcap_metrics(w->http_cap, "mcrepl_worker_http", out);
	grant_refusals(c, out);
}

static void render(struct worker *w, struct mcu_prom *out)
{
	struct data_server_counters c;

	per_segment(w, out);
	data_server_counters(w->ds, &c);
	totals(w, &c, out);
}

static void on_metrics(struct evhttp_request *req, void *arg)
{
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	struct mcu_prom text;

	mcu_prom_growing(&text);
	render(arg, &text);
	if (text.oom) {
		free(text.buf);
		evhttp_send_error(req, HTTP_INTERNAL, "out of memory");
		return;
	}
	evbuffer_add(out, text.buf, text.len);
	free(text.buf);
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
	errno = 0;
	sock = evhttp_bind_socket_with_handle(w->http, w->flags.data_address,
					      (uint16_t)w->flags.metrics_port);
	if (sock)
		w->http_cap =
		    net_http_limit(w->base, w->http, sock, w->tls_http);
	if (!sock || !w->http_cap ||
	    getsockname(evhttp_bound_socket_get_fd(sock),
			(struct sockaddr *)&ss, &sl) != 0)
		goto out_err;
	w->metrics_port =
	    ntohs(ss.ss_family == AF_INET6
		      ? ((struct sockaddr_in6 *)(void *)&ss)->sin6_port
		      : ((struct sockaddr_in *)(void *)&ss)->sin_port);
	return 0;
out_err:
	snprintf(err, errlen,
		 "cannot serve /metrics on %s:%d: %s (set --metrics_port to a "
		 "free port, 0 picks one, -1 turns /metrics off)",
		 w->flags.data_address, w->flags.metrics_port,
		 errno ? strerror(errno) : "unknown error");
	metrics_stop(w);
	return -1;
}

void metrics_stop(struct worker *w)
{
	net_http_free(w->http, w->http_cap);
	w->http = NULL;
	w->http_cap = NULL;
}
