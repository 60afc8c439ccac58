/* /metrics for mcrepl-master: libmcrepl's RFC counters plus the store's
 * own request, capacity, key, eviction and task figures. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

struct text {
	char *buf;
	size_t len, cap;
	bool oom;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->buf + t->len, room, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if ((size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		char *nb = realloc(t->buf, 2 * t->cap + (size_t)n);
		if (!nb) {
			t->oom = true;
			return;
		}
		t->buf = nb;
		t->cap = 2 * t->cap + (size_t)n;
	}
}

static void gauge(struct text *t, const char *name, const char *help,
		  const char *type, unsigned long long v)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type,
	    name, v);
}

static void store_figures(struct store *s, struct text *t)
{
	unsigned long long cap = 0, used = 0;
	size_t tasks = mcu_map_size(&s->tasks);

	for (size_t i = 0; i < s->n_segs; i++) {
		cap += s->segs[i]->capacity;
		used += store_used(s->segs[i]);
	}
	gauge(t, "mcrepl_master_segments", "Mounted segments", "gauge",
	      s->n_segs);
	gauge(t, "mcrepl_master_clients", "Live store clients", "gauge",
	      s->n_clients);
	gauge(t, "mcrepl_master_capacity_bytes", "Capacity of all segments",
	      "gauge", cap);
	gauge(t, "mcrepl_master_used_bytes", "Bytes allocated to replicas",
	      "gauge", used);
	gauge(t, "mcrepl_master_keys", "Objects stored", "gauge",
	      mcu_map_size(&s->objects));
	gauge(t, "mcrepl_master_dynamic_replica_bytes",
	      "Bytes held by readable dynamic replicas", "gauge",
	      s->dyn_replica_bytes);
	gauge(t, "mcrepl_master_tasks", "Tasks queued or running", "gauge",
	      tasks);
	gauge(t, "mcrepl_master_put_requests_total",
	      "PutStart requests accepted", "counter", s->puts);
	gauge(t, "mcrepl_master_get_requests_total",
	      "GetReplicaList and BatchGetReplicaList requests", "counter",
	      s->gets);
	gauge(t, "mcrepl_master_get_keys_total", "Keys looked up by reads",
	      "counter", s->get_keys);
	gauge(t, "mcrepl_master_stat_requests_total",
	      "Stat requests (heat-free lookups)", "counter", s->stats_req);
	gauge(t, "mcrepl_master_remove_requests_total", "Objects removed",
	      "counter", s->removes);
	gauge(t, "mcrepl_master_eviction_runs_total", "Eviction passes",
	      "counter", s->evictions_runs);
	gauge(t, "mcrepl_master_evicted_objects_total", "Objects evicted",
	      "counter", s->evicted_objects);
	gauge(t, "mcrepl_master_evicted_bytes_total", "Replica bytes evicted",
	      "counter", s->evicted_bytes);
	gauge(t, "mcrepl_master_admission_queue", "Admission triggers queued",
	      "gauge", mcrepl_triggers_len(s->triggers));
	gauge(t, "mcrepl_master_warmup_runs_total", "Warmups of a domain run",
	      "counter", s->warmup_runs);
	gauge(t, "mcrepl_master_warmup_copies_total",
	      "Copies queued by warmups", "counter", s->warmup_queued);
	gauge(t, "mcrepl_master_warmup_copies_completed_total",
	      "Warmup copies that became readable replicas", "counter",
	      s->warmup_done);
	gauge(t, "mcrepl_master_warmup_copies_failed_total",
	      "Warmup copies revoked, failed or expired", "counter",
	      s->warmup_failed);
	gauge(t, "mcrepl_master_warmup_copies_inflight",
	      "Warmup copies queued and not yet ended", "gauge",
	      s->warmup_queued - s->warmup_done - s->warmup_failed);
}

char *master_metrics(struct store *s, size_t *len_out)
{
	struct text t = {malloc(8192), 0, 8192, false};
	size_t need = 0;

	if (!t.buf)
		return NULL;
	store_lock(s);
	if (mcrepl_stats_render(s->stats, t.buf, t.cap, &need) ==
	    MCREPL_ENOSPC) {
		char *nb = realloc(t.buf, need + 8192);

		if (nb) {
			t.buf = nb;
			t.cap = need + 8192;
			mcrepl_stats_render(s->stats, t.buf, t.cap, &need);
		} else {
			t.oom = true;
		}
	}
	t.len = t.oom ? 0 : need;
	store_figures(s, &t);
	store_unlock(s);
	if (t.oom) {
		free(t.buf);
		return NULL;
	}
	if (len_out)
		*len_out = t.len;
	return t.buf;
}
