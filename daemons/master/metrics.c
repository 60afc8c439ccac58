/* /metrics for mcrepl-master (metrics.h): libmcrepl's RFC counters, the
 * store's request, capacity, key, eviction and task figures, then the
 * families of metrics_net.c; written with the Prometheus helpers of
 * util/prom.h. The store's figures come from one snapshot taken under
 * one lock hold; the text is written after the lock is released. */
#include <stdlib.h>

#include "metrics.h"
#include "util/prom.h"
#include "service.h"

/* Puts refused by their bounds, by reason (store_quota.c). */
static void quota_metrics(const struct store_quota_figures *q,
			  struct mcu_prom *t)
{
	mcu_prom_head(t, "mcrepl_master_put_refusals_total", "counter",
		      "PutStarts refused by a bound: QUOTA (the caller's "
		      "reserve or quota, its tenant's quota) or NO_SPACE "
		      "(fair_share)");
#define QUOTA_METRIC(field, reason)                                            \
	mcu_prom_u64(t, "mcrepl_master_put_refusals_total",                    \
		     (const struct mcu_prom_label[]){                          \
			 {.name = "reason", .value = reason}},                 \
		     1, q->field);
	STORE_QUOTA_REFUSALS(QUOTA_METRIC)
#undef QUOTA_METRIC
}

/* The store's figures, one metric per row of STORE_FIGURES. */
static void store_metrics(const struct store_snapshot *snap, struct mcu_prom *t)
{
	const struct store_figures *f = &snap->fig;

#define STORE_METRIC(field, name, type, help)                                  \
	mcu_prom_metric(t, "mcrepl_master_" name, #type, help, f->field);
	STORE_FIGURES(STORE_METRIC)
#undef STORE_METRIC
	mcu_prom_head(t, "mcrepl_master_reservations_reclaimed_total",
		      "counter",
		      "Reservations the master gave back (owner gone or "
		      "deadline passed)");
#define STORE_RECLAIM(field, kind, reason)                                     \
	mcu_prom_u64(t, "mcrepl_master_reservations_reclaimed_total",          \
		     (const struct mcu_prom_label[]){                          \
			 {.name = "kind", .value = kind},                      \
			 {.name = "reason", .value = reason}},                 \
		     2, f->reclaimed.field);
	STORE_RECLAIMS(STORE_RECLAIM)
#undef STORE_RECLAIM
	quota_metrics(&snap->quota, t);
}

/* libmcrepl's counters, rendered straight into the text (atomics: no
 * store lock needed, store.h). */
static void lib_metrics(struct store *s, struct mcu_prom *t)
{
	size_t need = 0;

	store_render_stats(s, NULL, 0, &need);
	while (mcu_prom_reserve(t, need + 1) &&
	       store_render_stats(s, t->buf + t->len, t->cap - t->len, &need) ==
		   MCREPL_ENOSPC)
		;
	if (!t->oom)
		t->len += need;
}

/* The store's half of the page: one snapshot, then the text. */
static void store_half(struct store *s, struct store_snapshot *snap,
		       struct mcu_prom *t)
{
	store_lock(s);
	store_snapshot(s, snap);
	store_unlock(s);
	lib_metrics(s, t);
	store_metrics(snap, t);
}

static char *finish(struct mcu_prom *t, size_t *len_out)
{
	if (t->oom) {
		free(t->buf);
		return NULL;
	}
	if (!t->buf) /* nothing written: an empty page */
		t->buf = calloc(1, 1);
	if (len_out)
		*len_out = t->len;
	return t->buf;
}

char *master_metrics(struct store *s, size_t *len_out)
{
	struct store_snapshot snap;
	struct mcu_prom t;

	mcu_prom_growing(&t);
	store_half(s, &snap, &t);
	return finish(&t, len_out);
}

char *metrics_page(const struct metrics_sources *src, size_t *len_out)
{
	struct store_snapshot snap = {0};
	struct mcu_prom t;

	mcu_prom_growing(&t);
	if (src->store)
		store_half(src->store, &snap, &t);
	if (src->rpc)
		metrics_net(src, &t);
	metrics_ha(src, &snap.ha, &t);
	return finish(&t, len_out);
}
