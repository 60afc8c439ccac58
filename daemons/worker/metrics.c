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

#include <mcrepl/mcrepl.h>

#include "util/prom.h"
#include "httpcap.h"
#include "netlimits.h"
#include "worker.h"

static void per_segment(struct worker *w, struct mcu_prom *out)
{
	static const char *const names[] = {
	    "mcrepl_worker_reads_total", "mcrepl_worker_read_bytes_total",
	    "mcrepl_worker_writes_total", "mcrepl_worker_write_bytes_total"};
	static const char *const helps[] = {
	    "READs served, by segment", "bytes read, by segment",
	    "WRITEs accepted, by segment", "bytes written, by segment"};
	struct data_stats st;

	for (size_t k = 0; k < 4; k++) {
		mcu_prom_head(out, names[k], "counter", helps[k]);
		for (uint32_t i = 0; i < w->n_segs; i++) {
			char id[24];
			struct mcu_prom_label l = {.name = "segment",
						   .value = id};
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

/* The reason labels of grant refusals, in grant_refusals' order. */
static const char *grant_reason(int i)
{
	static const char *const reasons[] = {"invalid", "expired",
					      "stale_region"};

	return reasons[i];
}

/* Data-plane requests refused for their grant (grant.h), by reason. */
static void grant_refusals(const struct data_server_counters *c,
			   struct mcu_prom *out)
{
	const uint64_t v[] = {c->refused_grant, c->refused_expired,
			      c->refused_stale};

	mcu_prom_reasons(
	    out, "mcrepl_worker_grant_refusals_total",
	    "READs and WRITEs refused for their grant: forged or for "
	    "another op, region or object (invalid), expired "
	    "(writes cut mid-stream included), or a READ of a region "
	    "holding another object (stale_region)",
	    grant_reason, v, 0, (int)(sizeof(v) / sizeof(v[0])));
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

/* One metric per row of a local table of {name, type, help, v}. */
#define EMIT_ROWS(out, rows)                                                   \
	for (size_t i_ = 0; i_ < sizeof(rows) / sizeof(rows[0]); i_++)         \
	mcu_prom_metric(out, rows[i_].name, rows[i_].type, rows[i_].help,      \
			rows[i_].v)

#define METRIC_ROW                                                             \
	struct {                                                               \
		const char *name, *type, *help;                                \
		uint64_t v;                                                    \
	}

/* Copies, HA and the index; the data port's totals. */
static void worker_totals(struct worker *w,
			  const struct data_server_counters *c,
			  struct mcu_prom *out)
{
	const METRIC_ROW rows[] = {
	    {"mcrepl_worker_writes_refused_total", "counter",
	     "WRITEs refused (grant, range or size)", c->refused_writes},
	    {"mcrepl_worker_reads_refused_total", "counter",
	     "READs refused (grant, range or size)", c->refused_reads},
	    {"mcrepl_worker_bad_streams_total", "counter",
	     "data connections closed for bad input", c->bad_streams},
	    {"mcrepl_worker_data_connections_accepted_total", "counter",
	     "data connections accepted", c->accepted},
	    {"mcrepl_worker_data_connections_idle_closed_total", "counter",
	     "data connections closed by the idle timeout", c->idle_closed},
	    {"mcrepl_worker_copies_started_total", "counter",
	     "replica copies started (tasks from the master)",
	     w->ctr.copies_started},
	    {"mcrepl_worker_copies_stale_source_total", "counter",
	     "copies abandoned: the source region no longer held the object",
	     w->ctr.copies_stale_source},
	    {"mcrepl_worker_copies_completed_total", "counter",
	     "replica copies completed", w->ctr.copies_completed},
	    {"mcrepl_worker_copies_failed_total", "counter",
	     "replica copies failed", w->ctr.copies_failed},
	    {"mcrepl_worker_copy_bytes_total", "counter",
	     "bytes copied into this worker's segments", w->ctr.copy_bytes},
	    {"mcrepl_worker_tasks_fetched_total", "counter",
	     "tasks fetched from the master", w->ctr.tasks_fetched},
	    {"mcrepl_worker_remounts_total", "counter",
	     "re-mounts after the master forgot this client", w->ctr.remounts},
	    /* HA (ha.c, docs/HA.md) */
	    {"mcrepl_worker_leader_changes_total", "counter",
	     "times the worker moved to a new master leader",
	     w->ctr.leader_changes},
	    {"mcrepl_worker_objects_registered_total", "counter",
	     "objects re-registered at a new leader",
	     w->ctr.objects_registered},
	    {"mcrepl_worker_objects_register_refused_total", "counter",
	     "objects a new leader refused to re-register",
	     w->ctr.register_refused},
	    {"mcrepl_worker_index_stamps_bad_total", "counter",
	     "index entries dropped: their region's stamp no longer matched",
	     w->ctr.stamps_bad},
	    {"mcrepl_worker_index_forgotten_total", "counter",
	     "segment indexes forgotten, not re-registered: a master expired "
	     "the worker",
	     w->indexes_forgotten},
	    {"mcrepl_worker_fences_found_total", "counter",
	     "mounts found fenced at a new leader (the last one expired them)",
	     w->ctr.fences_found},
	    {"mcrepl_worker_index_objects", "gauge",
	     "committed replicas in the worker's HA index", index_objects(w)},
	    {"mcrepl_worker_copies_inflight", "gauge", "copies in flight",
	     tasks_copying(w)},
	    {"mcrepl_worker_data_connections", "gauge", "open data connections",
	     c->connections},
	};

	EMIT_ROWS(out, rows);
}

/* The data port's bounds, and what /health says. */
static void bound_totals(struct worker *w, const struct data_server_counters *c,
			 struct mcu_prom *out)
{
	const METRIC_ROW rows[] = {
	    /* the data port's bounds */
	    {"mcrepl_worker_data_connections_refused_total", "counter",
	     "data connections refused at the connection cap", c->refused},
	    {"mcrepl_worker_data_header_timeouts_total", "counter",
	     "data connections closed by the header timeout",
	     c->header_timeouts},
	    {"mcrepl_worker_data_body_timeouts_total", "counter",
	     "data connections closed: a payload slower than the minimum rate",
	     c->body_timeouts},
	    {"mcrepl_worker_data_paused_total", "counter",
	     "times reading paused for unread replies", c->paused},
	    {"mcrepl_worker_data_budget_closed_total", "counter",
	     "data connections closed past the input budget while paused",
	     c->budget_closed},
	    {"mcrepl_worker_data_input_held_bytes", "gauge",
	     "bytes held now by paused data connections", c->input_held},
	    {"mcrepl_worker_data_replies_cut_total", "counter",
	     "data connections closed: a WRITE landed where their READ reply "
	     "was still unsent",
	     c->cut_replies},
	    {"mcrepl_worker_data_reply_timeouts_total", "counter",
	     "data connections closed: replies sent slower than the minimum "
	     "rate",
	     c->reply_timeouts},
	    {"mcrepl_worker_data_replies_held", "gauge",
	     "READ replies sent from segment memory, not yet all sent",
	     c->held_replies},
	    {"mcrepl_worker_data_writes_streaming", "gauge",
	     "granted WRITEs whose payload is landing now (READs of their "
	     "range are refused)",
	     c->writes_streaming},
	    /* /health */
	    {"mcrepl_worker_segments_mounted", "gauge",
	     "segments the master has mounted now", worker_mounted_count(w)},
	    {"mcrepl_worker_master_reachable", "gauge",
	     "1 while the master (leader) answers", !w->master_down_logged},
	};

	EMIT_ROWS(out, rows);
}

static void totals(struct worker *w, const struct data_server_counters *c,
		   struct mcu_prom *out)
{
	worker_totals(w, c, out);
	bound_totals(w, c, out);
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
/* s as a JSON string's content: quotes, backslashes and control bytes
 * become '?' (host ids and addresses have none of them in practice). */
static const char *json_safe(const char *s, char *buf, size_t cap)
{
	size_t n = 0;

	for (; *s && n + 1 < cap; s++, n++)
		buf[n] = *s == '"' || *s == '\\' || (unsigned char)*s < 0x20
			     ? '?'
			     : *s;
	buf[n] = '\0';
	return buf;
}

/* /health: a JSON object for probes and people, like the master's: role
 * "worker", "ok" (200) while every segment is mounted and the master
 * answers, else "unavailable" (503) with why in the fields. */
static void on_health(struct evhttp_request *req, void *arg)
{
	struct worker *w = arg;
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	uint32_t mounted = worker_mounted_count(w);
	bool reachable = !w->master_down_logged && w->flags.master[0];
	bool ok = reachable && mounted == w->n_segs && !w->stopping;
	char host[sizeof(w->flags.host_id)], master[sizeof(w->flags.master)];

	evbuffer_add_printf(
	    out,
	    "{\"status\":\"%s\",\"role\":\"worker\",\"version\":\"%s\","
	    "\"host_id\":\"%s\",\"segments\":%u,\"mounted_segments\":%u,"
	    "\"master\":\"%s\",\"master_reachable\":%s,"
	    "\"stopping\":%s,\"transport\":\"%s\"}\n",
	    ok ? "ok" : "unavailable", mcrepl_version(),
	    json_safe(w->flags.host_id, host, sizeof(host)), w->n_segs, mounted,
	    json_safe(w->flags.master, master, sizeof(master)),
	    reachable ? "true" : "false", w->stopping ? "true" : "false",
	    w->transport ? w->transport : "");
	evhttp_add_header(evhttp_request_get_output_headers(req),
			  "Content-Type", "application/json");
	evhttp_send_reply(req, ok ? HTTP_OK : HTTP_SERVUNAVAIL,
			  ok ? "OK" : "Service Unavailable", out);
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
	evhttp_set_cb(w->http, "/health", on_health, w);
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
