/* Aggregated counters and their Prometheus text rendering. */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mcrepl/domain.h"
#include "mcrepl/stats.h"
#include "mcrepl/types.h"

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

/* A bounded appender: counts the full length even when buf is short. */
struct out {
	char *buf;
	size_t cap, len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->len < o->cap ? o->cap - o->len : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static void render_counters(const mcrepl_stats *s, struct out *o)
{
	for (int i = 0; i < MCREPL_STAT_COUNT; i++) {
		put(o, "# HELP %s %s\n# TYPE %s %s\n%s %lld\n", stat_metric[i],
		    stat_help[i], stat_metric[i], stat_type[i], stat_metric[i],
		    (long long)mcrepl_stats_get(s, (mcrepl_stat)i));
	}
}

static void render_rejections(const mcrepl_stats *s, struct out *o)
{
	put(o, "# HELP %s Admissions rejected, by reason\n# TYPE %s counter\n",
	    REJECTED_METRIC, REJECTED_METRIC);
	for (int r = 1; r < MCREPL_REASON_COUNT; r++) {
		if (r == MCREPL_REASON_MODE_OBSERVE)
			continue;
		put(o, "%s{reason=\"%s\"} %llu\n", REJECTED_METRIC,
		    mcrepl_reason_name((mcrepl_reason)r),
		    (unsigned long long)mcrepl_stats_rejected(
			s, (mcrepl_reason)r));
	}
}

static void render_pairs(mcrepl_stats *s, struct out *o)
{
	pthread_mutex_lock(&s->lock);
	if (s->n_pairs > 0)
		put(o,
		    "# HELP %s Proposals by requester and target domain\n"
		    "# TYPE %s counter\n",
		    PROPOSALS_METRIC, PROPOSALS_METRIC);
	for (size_t i = 0; i <= DOMAIN_PAIRS; i++) {
		const struct domain_pair *p = &s->pairs[i];

		if (i >= s->n_pairs && (i < DOMAIN_PAIRS || p->count == 0))
			continue;
		put(o,
		    "%s{requester_domain=\"%s\",target_domain=\"%s\"} %llu\n",
		    PROPOSALS_METRIC, p->requester, p->target,
		    (unsigned long long)p->count);
	}
	pthread_mutex_unlock(&s->lock);
}

mcrepl_status mcrepl_stats_render(const mcrepl_stats *s, char *buf, size_t cap,
				  size_t *len_out)
{
	struct out o = {buf, buf ? cap : 0, 0};

	if (!s)
		return MCREPL_EINVAL;
	if (o.cap > 0)
		buf[0] = '\0';
	render_counters(s, &o);
	render_rejections(s, &o);
	render_pairs((mcrepl_stats *)(uintptr_t)s, &o);
	if (len_out)
		*len_out = o.len;
	return o.len < o.cap ? MCREPL_OK : MCREPL_ENOSPC;
}
