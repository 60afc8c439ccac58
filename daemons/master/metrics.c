/* /metrics for mcrepl-master: libmcrepl's RFC counters plus the store's
 * own request, capacity, key, eviction and task figures, written with the
 * Prometheus helpers of util/prom.h. */
#include <stdlib.h>

#include "util/prom.h"
#include "service.h"

/* Puts refused by their bounds, by reason (store_quota.c). */
static void quota_metrics(struct store *s, struct mcu_prom *t)
{
	struct store_quota_figures q;

	store_quota_figures(s, &q);
	mcu_prom_head(t, "mcrepl_master_put_refusals_total", "counter",
		      "PutStarts refused by a bound: QUOTA (the caller's "
		      "reserve or quota, its tenant's quota) or NO_SPACE "
		      "(fair_share)");
#define QUOTA_METRIC(field, reason)                                            \
	mcu_prom_u64(t, "mcrepl_master_put_refusals_total",                    \
		     (const struct mcu_prom_label[]){                          \
			 {.name = "reason", .value = reason}},                 \
		     1, q.field);
	STORE_QUOTA_REFUSALS(QUOTA_METRIC)
#undef QUOTA_METRIC
}

/* The store's figures, one metric per row of STORE_FIGURES. */
static void store_metrics(struct store *s, struct mcu_prom *t)
{
	struct store_figures f;

	store_figures(s, &f);
#define STORE_METRIC(field, name, type, help)                                  \
	mcu_prom_metric(t, "mcrepl_master_" name, #type, help, f.field);
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
		     2, f.reclaimed.field);
	STORE_RECLAIMS(STORE_RECLAIM)
#undef STORE_RECLAIM
	quota_metrics(s, t);
}

/* libmcrepl's counters, rendered straight into the text. */
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

char *master_metrics(struct store *s, size_t *len_out)
{
	struct mcu_prom t;

	mcu_prom_growing(&t);
	store_lock(s);
	lib_metrics(s, &t);
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
