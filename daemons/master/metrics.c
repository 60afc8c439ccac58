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

/* One metric in Prometheus text; the seam for a shared helper. */
static void metric(struct text *t, const char *name, const char *type,
		   const char *help, unsigned long long v)
{
	put(t, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", name, help, name, type,
	    name, v);
}

/* The store's figures, one line per row of STORE_FIGURES. */
static void store_metrics(struct store *s, struct text *t)
{
	struct store_figures f;

	store_figures(s, &f);
#define STORE_METRIC(field, name, type, help)                                  \
	metric(t, "mcrepl_master_" name, #type, help, f.field);
	STORE_FIGURES(STORE_METRIC)
#undef STORE_METRIC
	put(t, "# HELP mcrepl_master_reservations_reclaimed_total Reservations "
	       "the master gave back (owner gone or deadline passed)\n"
	       "# TYPE mcrepl_master_reservations_reclaimed_total counter\n");
#define STORE_RECLAIM(field, kind, reason)                                     \
	put(t,                                                                 \
	    "mcrepl_master_reservations_reclaimed_total{kind=\"" kind          \
	    "\",reason=\"" reason "\"} %llu\n",                                \
	    (unsigned long long)f.reclaimed.field);
	STORE_RECLAIMS(STORE_RECLAIM)
#undef STORE_RECLAIM
}

char *master_metrics(struct store *s, size_t *len_out)
{
	struct text t = {.buf = malloc(8192), .cap = 8192};
	size_t need = 0;

	if (!t.buf)
		return NULL;
	store_lock(s);
	if (store_render_stats(s, t.buf, t.cap, &need) == MCREPL_ENOSPC) {
		char *nb = realloc(t.buf, need + 8192);

		if (nb) {
			t.buf = nb;
			t.cap = need + 8192;
			store_render_stats(s, t.buf, t.cap, &need);
		} else {
			t.oom = true;
		}
	}
	t.len = t.oom ? 0 : need;
	store_metrics(s, &t);
	store_unlock(s);
	if (t.oom) {
		free(t.buf);
		return NULL;
	}
	if (len_out)
		*len_out = t.len;
	return t.buf;
}
