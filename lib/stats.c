/* Aggregated counters and their Prometheus text rendering. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mcrepl/domain.h"
#include "mcrepl/stats.h"
#include "mcrepl/types.h"
#include "util/prom.h"

#define DOMAIN_PAIRS 64
#define REJECTED_METRIC "mcrepl_dynamic_admission_rejected_total"
#define PROPOSALS_METRIC "mcrepl_dynamic_proposals_total"

struct domain_pair {
	char requester[MCREPL_DOMAIN_MAX + 1];
	char target[MCREPL_DOMAIN_MAX + 1];
	uint64_t count;
};

struct mcrepl_stats {
	_Atomic int64_t value[MCREPL_STAT_COUNT];
	_Atomic uint64_t rejected[MCREPL_REASON_COUNT];
	pthread_mutex_t lock; /* guards pairs */
	size_t n_pairs;
	struct domain_pair pairs[DOMAIN_PAIRS + 1]; /* last: "other" */
};

static const char *const stat_metric[] = {
#define M(name, metric, type, help) metric,
    MCREPL_STAT_MAP(M)
#undef M
};
static const char *const stat_type[] = {
#define T(name, metric, type, help) type,
    MCREPL_STAT_MAP(T)
#undef T
};
static const char *const stat_help[] = {
#define H(name, metric, type, help) help,
    MCREPL_STAT_MAP(H)
#undef H
};

mcrepl_status mcrepl_stats_create(mcrepl_stats **out)
{
	mcrepl_stats *s;

	if (!out)
		return MCREPL_EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return MCREPL_ENOMEM;
	for (int i = 0; i < MCREPL_STAT_COUNT; i++)
		atomic_init(&s->value[i], 0);
	for (int i = 0; i < MCREPL_REASON_COUNT; i++)
		atomic_init(&s->rejected[i], 0);
	pthread_mutex_init(&s->lock, NULL);
	strcpy(s->pairs[DOMAIN_PAIRS].requester, "other");
	strcpy(s->pairs[DOMAIN_PAIRS].target, "other");
	*out = s;
	return MCREPL_OK;
}

void mcrepl_stats_destroy(mcrepl_stats *s)
{
	if (!s)
		return;
	pthread_mutex_destroy(&s->lock);
	free(s);
}

void mcrepl_stats_add(mcrepl_stats *s, mcrepl_stat which, int64_t delta)
{
	if (s && (unsigned)which < MCREPL_STAT_COUNT)
		atomic_fetch_add_explicit(&s->value[which], delta,
					  memory_order_relaxed);
}

void mcrepl_stats_set(mcrepl_stats *s, mcrepl_stat which, int64_t value)
{
	if (s && (unsigned)which < MCREPL_STAT_COUNT)
		atomic_store_explicit(&s->value[which], value,
				      memory_order_relaxed);
}

int64_t mcrepl_stats_get(const mcrepl_stats *s, mcrepl_stat which)
{
	if (!s || (unsigned)which >= MCREPL_STAT_COUNT)
		return 0;
	return atomic_load_explicit(
	    &((mcrepl_stats *)(uintptr_t)s)->value[which],
	    memory_order_relaxed);
}

void mcrepl_stats_reject(mcrepl_stats *s, mcrepl_reason why)
{
	if (!s || (unsigned)why >= MCREPL_REASON_COUNT ||
	    why == MCREPL_REASON_NONE)
		return;
	if (why == MCREPL_REASON_MODE_OBSERVE) {
		mcrepl_stats_add(s, MCREPL_STAT_WOULD_PROPOSE, 1);
		return;
	}
	if (why == MCREPL_REASON_RECREATE_COOLDOWN)
		mcrepl_stats_add(s, MCREPL_STAT_RECREATE_COOLDOWN_HITS, 1);
	atomic_fetch_add_explicit(&s->rejected[why], 1, memory_order_relaxed);
}

uint64_t mcrepl_stats_rejected(const mcrepl_stats *s, mcrepl_reason why)
{
	if (!s || (unsigned)why >= MCREPL_REASON_COUNT)
		return 0;
	return atomic_load_explicit(
	    &((mcrepl_stats *)(uintptr_t)s)->rejected[why],
	    memory_order_relaxed);
}

static void copy_domain(char *dst, const char *src)
{
	snprintf(dst, MCREPL_DOMAIN_MAX + 1, "%s", mcrepl_domain_name(src));
}

void mcrepl_stats_domain_proposal(mcrepl_stats *s, const char *requester,
				  const char *target)
{
	struct domain_pair key;
	size_t i;

	if (!s)
		return;
	copy_domain(key.requester, requester);
	copy_domain(key.target, target);
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->n_pairs; i++) {
		if (strcmp(s->pairs[i].requester, key.requester) == 0 &&
		    strcmp(s->pairs[i].target, key.target) == 0)
			break;
	}
	if (i == s->n_pairs && s->n_pairs < DOMAIN_PAIRS) {
		key.count = 0;
		s->pairs[s->n_pairs++] = key;
	}
	s->pairs[i].count++;
	pthread_mutex_unlock(&s->lock);
}

/* src's domain pairs into dst's, both locks held (the lower address's
 * first, so two copies the other way round cannot deadlock). */
static void copy_pairs(mcrepl_stats *dst, mcrepl_stats *src)
{
	mcrepl_stats *first = dst < src ? dst : src;
	mcrepl_stats *second = first == dst ? src : dst;

	pthread_mutex_lock(&first->lock);
	pthread_mutex_lock(&second->lock);
	dst->n_pairs = src->n_pairs;
	memcpy(dst->pairs, src->pairs, sizeof(dst->pairs));
	pthread_mutex_unlock(&second->lock);
	pthread_mutex_unlock(&first->lock);
}

mcrepl_status mcrepl_stats_copy(mcrepl_stats *dst, const mcrepl_stats *src)
{
	mcrepl_stats *from = (mcrepl_stats *)(uintptr_t)src;

	if (!dst || !src || dst == src)
		return MCREPL_EINVAL;
	for (int i = 0; i < MCREPL_STAT_COUNT; i++)
		mcrepl_stats_set(dst, (mcrepl_stat)i,
				 mcrepl_stats_get(src, (mcrepl_stat)i));
	for (int r = 0; r < MCREPL_REASON_COUNT; r++)
		atomic_store_explicit(
		    &dst->rejected[r],
		    atomic_load_explicit(&from->rejected[r],
					 memory_order_relaxed),
		    memory_order_relaxed);
	copy_pairs(dst, from);
	return MCREPL_OK;
}

static void render_counters(const mcrepl_stats *s, struct mcu_prom *o)
{
	for (int i = 0; i < MCREPL_STAT_COUNT; i++) {
		mcu_prom_head(o, stat_metric[i], stat_type[i], stat_help[i]);
		mcu_prom_i64(o, stat_metric[i], NULL, 0,
			     mcrepl_stats_get(s, (mcrepl_stat)i));
	}
}

static void render_rejections(const mcrepl_stats *s, struct mcu_prom *o)
{
	mcu_prom_head(o, REJECTED_METRIC, "counter",
		      "Admissions rejected, by reason");
	for (int r = 1; r < MCREPL_REASON_COUNT; r++) {
		struct mcu_prom_label l = {
		    .name = "reason",
		    .value = mcrepl_reason_name((mcrepl_reason)r)};

		if (r != MCREPL_REASON_MODE_OBSERVE)
			mcu_prom_u64(
			    o, REJECTED_METRIC, &l, 1,
			    mcrepl_stats_rejected(s, (mcrepl_reason)r));
	}
}

static void render_pairs(mcrepl_stats *s, struct mcu_prom *o)
{
	pthread_mutex_lock(&s->lock);
	if (s->n_pairs > 0)
		mcu_prom_head(o, PROPOSALS_METRIC, "counter",
			      "Proposals by requester and target domain");
	for (size_t i = 0; i <= DOMAIN_PAIRS; i++) {
		const struct domain_pair *p = &s->pairs[i];
		const struct mcu_prom_label l[] = {
		    {.name = "requester_domain", .value = p->requester},
		    {.name = "target_domain", .value = p->target}};

		if (i >= s->n_pairs && (i < DOMAIN_PAIRS || p->count == 0))
			continue;
		mcu_prom_u64(o, PROPOSALS_METRIC, l, 2, p->count);
	}
	pthread_mutex_unlock(&s->lock);
}

mcrepl_status mcrepl_stats_render(const mcrepl_stats *s, char *buf, size_t cap,
				  size_t *len_out)
{
	struct mcu_prom o;

	if (!s)
		return MCREPL_EINVAL;
	mcu_prom_fixed(&o, buf, cap);
	render_counters(s, &o);
	render_rejections(s, &o);
	render_pairs((mcrepl_stats *)(uintptr_t)s, &o);
	if (len_out)
		*len_out = o.len;
	return o.len < o.cap ? MCREPL_OK : MCREPL_ENOSPC;
}
