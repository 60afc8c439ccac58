/* /metrics for mcrepl-master (metrics.h): libmcrepl's RFC counters, the
 * store's request, capacity, key, eviction and task figures, then the
 * families of metrics_net.c; written with the Prometheus helpers of
 * util/prom.h. The store's figures and libmcrepl's counters come from
 * one snapshot taken under one lock hold; the text is written after the
 * lock is released. */
#include <stdlib.h>

#include "metrics.h"
#include "util/prom.h"
#include "service.h"

/* The reason labels of the put refusals, in STORE_QUOTA_REFUSALS order. */
static const char *quota_reason(int i)
{
#define QUOTA_REASON(field, reason) reason,
	static const char *const reasons[] = {
	    STORE_QUOTA_REFUSALS(QUOTA_REASON)};
#undef QUOTA_REASON

	return reasons[i];
}

/* Puts refused by their bounds, by reason (store_quota.c). */
static void quota_metrics(const struct store_quota_figures *q,
			  struct mcu_prom *t)
{
#define QUOTA_COUNT(field, reason) q->field,
	const uint64_t v[] = {STORE_QUOTA_REFUSALS(QUOTA_COUNT)};
#undef QUOTA_COUNT

	mcu_prom_reasons(t, "mcrepl_master_put_refusals_total",
			 "PutStarts refused by a bound: QUOTA (the caller's "
			 "reserve or quota, its tenant's quota) or NO_SPACE "
			 "(fair_share)",
			 quota_reason, v, 0, (int)(sizeof(v) / sizeof(v[0])));
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

/* libmcrepl's counters from their copy, rendered straight into the
 * text. */
static void lib_metrics(const mcrepl_stats *st, struct mcu_prom *t)
{
	size_t need = 0;

	mcrepl_stats_render(st, NULL, 0, &need);
	while (mcu_prom_reserve(t, need + 1) &&
	       mcrepl_stats_render(st, t->buf + t->len, t->cap - t->len,
				   &need) == MCREPL_ENOSPC)
		;
	if (!t->oom)
		t->len += need;
}

/* The store's half of the page: one snapshot of the store's figures and
 * libmcrepl's counters under one lock hold, then the text. */
static void store_half(struct store *s, struct store_snapshot *snap,
		       struct mcu_prom *t)
{
	mcrepl_stats *st = NULL;

	if (mcrepl_stats_create(&st) != MCREPL_OK) {
		t->oom = true;
		return;
	}
	store_lock(s);
	store_snapshot(s, snap);
	store_copy_stats(s, st);
	store_unlock(s);
	lib_metrics(st, t);
	store_metrics(snap, t);
	mcrepl_stats_destroy(st);
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
