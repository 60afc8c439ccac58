/* Configuration knobs: defaults, text parsing, validation. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "mcrepl/config.h"
#include "mcrepl/heat.h"

#define PREFIX "dynamic_replication_"

enum knob_type { K_MODE, K_MS, K_DOUBLE, K_U32, K_U64, K_BOOL, K_POLICY };

/* X(name, default, help, type, field, min, max, min_exclusive) */
#define KNOB_MAP(X)                                                            \
	X("mode", "off", "off | observe | enforce", K_MODE, mode, 0, 2, 0)     \
	X("heat_window_seconds", "10",                                         \
	  "sliding heat window length (seconds, > 0, <= 86400)", K_MS,         \
	  heat_window_ms, 0, 86400, 1)                                         \
	X("admission_qps_threshold", "0.8",                                    \
	  "admit when reads/s over the window reach this (>= 0)", K_DOUBLE,    \
	  admission_qps_threshold, 0, 1e9, 0)                                  \
	X("max_memory_replicas", "2",                                          \
	  "most readable MEMORY replicas per object, original included",       \
	  K_U32, max_memory_replicas, 1, 1024, 0)                              \
	X("action_cooldown_seconds", "30",                                     \
	  "after a dynamic copy ends or is revoked, no new one for the key",   \
	  K_MS, action_cooldown_ms, 0, 86400, 0)                               \
	X("lease_ttl_seconds", "30", "lifetime of a dynamic copy lease (> 0)", \
	  K_MS, lease_ttl_ms, 0, 86400, 1)                                     \
	X("recreate_cooldown_seconds", "60",                                   \
	  "after a dynamic replica is removed or its lease expires, no "       \
	  "recreate for this long",                                            \
	  K_MS, recreate_cooldown_ms, 0, 86400, 0)                             \
	X("heat_max_entries", "1000000",                                       \
	  "most keys tracked by the heat table (8..4294967295)", K_U64,        \
	  heat_max_entries, 8, 4294967295.0, 0)                                \
	X("admission_queue_limit", "10000",                                    \
	  "most admission triggers queued for the background worker", K_U32,   \
	  admission_queue_limit, 1, 100000000, 0)                              \
	X("target_high_watermark", "0.85",                                     \
	  "a target's used/capacity after the copy must stay at or below "     \
	  "this, in (0, 1]",                                                   \
	  K_DOUBLE, target_high_watermark, 0, 1, 1)                            \
	X("domain_aware", "false",                                             \
	  "second stage: admission per requester domain, targets in domain",   \
	  K_BOOL, domain_aware, 0, 1, 0)                                       \
	X("scale_threshold_by_replicas", "false",                              \
	  "multiply the threshold by the readable replica count", K_BOOL,      \
	  scale_threshold_by_replicas, 0, 1, 0)                                \
	X("read_load_aware_placement", "false",                                \
	  "prefer targets that served fewer recent reads", K_BOOL,             \
	  read_load_aware_placement, 0, 1, 0)                                  \
	X("proposal_retention_limit", "100000",                                \
	  "most proposal ids remembered for idempotency (>= 1)", K_U32,        \
	  proposal_retention_limit, 1, 100000000, 0)                           \
	X("cross_domain_qps_threshold", "0",                                   \
	  "domain-aware: reads/s from a domain holding no replica that admit " \
	  "its first one (0 = admission_qps_threshold)",                       \
	  K_DOUBLE, cross_domain_qps_threshold, 0, 1e9, 0)                     \
	X("policy", "auto",                                                    \
	  "auto (hotness relative to the cluster's reads, load-aware "         \
	  "targets, cold replicas retired) | rfc (the RFC's literal rules)",   \
	  K_POLICY, policy, 0, 1, 0)                                           \
	X("hot_share", "0.01",                                                 \
	  "auto: reads per replica, as a share of one node's fair share, "     \
	  "that make a key hot, in (0, 1000]",                                 \
	  K_DOUBLE, hot_share, 0, 1000, 1)                                     \
	X("balance_tolerance", "0.05",                                         \
	  "auto: fan out only from a segment loaded more than this above "     \
	  "the mean, in [0, 100]",                                             \
	  K_DOUBLE, balance_tolerance, 0, 100, 0)                              \
	X("auto_max_replicas", "0",                                            \
	  "auto: most readable MEMORY replicas per object (0 = one per node)", \
	  K_U32, auto_max_replicas, 0, 1048576, 0)                             \
	X("room_miss_cost", "0",                                               \
	  "full cluster: evict an only copy for a hot copy's room when the "   \
	  "relief exceeds this many reads per read of it (0 = never)",         \
	  K_U32, room_miss_cost, 0, 1000000000, 0)                             \
	X("room_fill_limit", "0.9",                                            \
	  "full cluster: a hot copy goes with nothing evicted where "          \
	  "used/capacity after it stays at or below this, in [0, 1] "          \
	  "(at or below target_high_watermark: never)",                        \
	  K_DOUBLE, room_fill_limit, 0, 1, 0)

struct knob {
	enum knob_type type;
	size_t offset;
	double min, max; /* inclusive; for K_MS in seconds */
	int min_open;	 /* 1: min is exclusive */
};

static const mcrepl_config_knob pub_knobs[] = {
#define PUB(n, d, h, t, f, lo, hi, open)                                       \
	{.name = PREFIX n, .default_text = d, .help = h},
    KNOB_MAP(PUB)
#undef PUB
};

static const struct knob knobs[] = {
#define IMPL(n, d, h, t, f, lo, hi, open)                                      \
	{.type = t,                                                            \
	 .offset = offsetof(mcrepl_config, f),                                 \
	 .min = lo,                                                            \
	 .max = hi,                                                            \
	 .min_open = open},
    KNOB_MAP(IMPL)
#undef IMPL
};

#define N_KNOBS (sizeof(knobs) / sizeof(knobs[0]))

void mcrepl_config_init(mcrepl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->struct_size = sizeof(*cfg);
	cfg->mode = MCREPL_MODE_OFF;
	cfg->heat_window_ms = 10000;
	cfg->admission_qps_threshold = 0.8;
	cfg->max_memory_replicas = 2;
	cfg->action_cooldown_ms = 30000;
	cfg->lease_ttl_ms = 30000;
	cfg->recreate_cooldown_ms = 60000;
	cfg->heat_max_entries = 1000000;
	cfg->admission_queue_limit = 10000;
	cfg->target_high_watermark = 0.85;
	cfg->proposal_retention_limit = 100000;
	cfg->cross_domain_qps_threshold = 0;
	cfg->policy = MCREPL_POLICY_AUTO;
	cfg->hot_share = 0.01;
	cfg->balance_tolerance = 0.05;
	cfg->auto_max_replicas = 0;
	cfg->room_miss_cost = 0;
	cfg->room_fill_limit = 0.90;
}

static const struct knob *find_knob(const char *name)
{
	size_t plen = strlen(PREFIX);

	for (size_t i = 0; i < N_KNOBS; i++) {
		const char *full = pub_knobs[i].name;

		if (strcmp(full, name) == 0 || strcmp(full + plen, name) == 0)
			return &knobs[i];
	}
	return NULL;
}

/* The knob's value as a double (ms knobs in seconds), for range checks. */
static double knob_value(const mcrepl_config *cfg, const struct knob *k)
{
	const char *base = (const char *)cfg + k->offset;
	uint64_t u64;
	uint32_t u32;
	double d;

	switch (k->type) {
	case K_MODE:
		return (double)*(const mcrepl_mode *)(const void *)base;
	case K_POLICY:
		return (double)*(const mcrepl_policy *)(const void *)base;
	case K_MS:
		memcpy(&u64, base, sizeof(u64));
		return (double)u64 / 1000.0;
	case K_DOUBLE:
		memcpy(&d, base, sizeof(d));
		return d;
	case K_U32:
		memcpy(&u32, base, sizeof(u32));
		return (double)u32;
	case K_U64:
		memcpy(&u64, base, sizeof(u64));
		return (double)u64;
	case K_BOOL:
		return *(const bool *)(const void *)base ? 1.0 : 0.0;
	}
	return NAN;
}

static bool in_range(const struct knob *k, double v)
{
	if (isnan(v) || v > k->max)
		return false;
	return k->min_open ? v > k->min : v >= k->min;
}

mcrepl_status mcrepl_config_validate(const mcrepl_config *cfg,
				     const char **field_out)
{
	const char *dummy;

	if (!field_out)
		field_out = &dummy;
	*field_out = NULL;
	if (!cfg)
		return MCREPL_EINVAL;
	for (size_t i = 0; i < N_KNOBS; i++) {
		if (!in_range(&knobs[i], knob_value(cfg, &knobs[i]))) {
			*field_out = pub_knobs[i].name;
			return MCREPL_ERANGE;
		}
	}
	if (cfg->heat_window_ms < 1 || cfg->lease_ttl_ms < 1) {
		*field_out = cfg->heat_window_ms < 1 ? pub_knobs[1].name
						     : pub_knobs[5].name;
		return MCREPL_ERANGE;
	}
	if (cfg->admission_qps_threshold * (double)cfg->heat_window_ms /
		1000.0 >
	    (double)MCREPL_HEAT_MAX_THRESHOLD) {
		*field_out = pub_knobs[2].name;
		return MCREPL_ERANGE;
	}
	if (cfg->cross_domain_qps_threshold * (double)cfg->heat_window_ms /
		1000.0 >
	    (double)MCREPL_HEAT_MAX_THRESHOLD) {
		*field_out = PREFIX "cross_domain_qps_threshold";
		return MCREPL_ERANGE;
	}
	return MCREPL_OK;
}

static bool parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = {"1", "true", "yes", "on"};
	static const char *const no[] = {"0", "false", "no", "off"};

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0)
			return (*out = true);
		if (strcasecmp(v, no[i]) == 0)
			return !(*out = false);
	}
	return false;
}

static bool parse_double(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return end != v && *end == '\0' && errno == 0 && isfinite(*out);
}

static bool parse_u64(const char *v, uint64_t *out)
{
	char *end;

	if (!isdigit((unsigned char)v[0]))
		return false;
	errno = 0;
	*out = strtoull(v, &end, 10);
	return *end == '\0' && errno == 0;
}

static bool parse_mode(const char *v, mcrepl_mode *out)
{
	static const char *const names[] = {"off", "observe", "enforce"};

	for (int i = 0; i < 3; i++) {
		if (strcasecmp(v, names[i]) == 0) {
			*out = (mcrepl_mode)i;
			return true;
		}
	}
	return false;
}

static bool parse_policy(const char *v, mcrepl_policy *out)
{
	if (strcasecmp(v, "rfc") == 0)
		*out = MCREPL_POLICY_RFC;
	else if (strcasecmp(v, "auto") == 0)
		*out = MCREPL_POLICY_AUTO;
	else
		return false;
	return true;
}

/* Parse v into the knob's field of cfg. Returns EPARSE or OK. */
static mcrepl_status parse_into(mcrepl_config *cfg, const struct knob *k,
				const char *v)
{
	void *field = (char *)cfg + k->offset;
	uint64_t u;
	double d;
	bool b;
	mcrepl_mode m;
	mcrepl_policy pol;

	switch (k->type) {
	case K_MODE:
		if (!parse_mode(v, &m))
			return MCREPL_EPARSE;
		memcpy(field, &m, sizeof(m));
		return MCREPL_OK;
	case K_POLICY:
		if (!parse_policy(v, &pol))
			return MCREPL_EPARSE;
		memcpy(field, &pol, sizeof(pol));
		return MCREPL_OK;
	case K_MS:
		if (!parse_double(v, &d) || d < 0 || d > 86400.0)
			return d < 0 || d > 86400.0 ? MCREPL_ERANGE
						    : MCREPL_EPARSE;
		u = (uint64_t)llround(d * 1000.0);
		memcpy(field, &u, sizeof(u));
		return MCREPL_OK;
	case K_DOUBLE:
		if (!parse_double(v, &d))
			return MCREPL_EPARSE;
		memcpy(field, &d, sizeof(d));
		return MCREPL_OK;
	case K_U32:
	case K_U64:
		if (!parse_u64(v, &u))
			return MCREPL_EPARSE;
		if (u > (uint64_t)k->max)
			return MCREPL_ERANGE;
		if (k->type == K_U32) {
			uint32_t u32 = (uint32_t)u;
			memcpy(field, &u32, sizeof(u32));
		} else {
			memcpy(field, &u, sizeof(u));
		}
		return MCREPL_OK;
	case K_BOOL:
		if (!parse_bool(v, &b))
			return MCREPL_EPARSE;
		memcpy(field, &b, sizeof(b));
		return MCREPL_OK;
	}
	return MCREPL_EPARSE;
}

mcrepl_status mcrepl_config_set(mcrepl_config *cfg, const char *name,
				const char *value)
{
	const struct knob *k;
	mcrepl_config tmp;
	mcrepl_status st;

	if (!cfg || !name || !value)
		return MCREPL_EINVAL;
	k = find_knob(name);
	if (!k)
		return MCREPL_ENOENT;
	tmp = *cfg;
	st = parse_into(&tmp, k, value);
	if (st != MCREPL_OK)
		return st;
	if (!in_range(k, knob_value(&tmp, k)))
		return MCREPL_ERANGE;
	if (k->type == K_MS && k->min_open && knob_value(&tmp, k) < 0.001)
		return MCREPL_ERANGE;
	*cfg = tmp;
	return MCREPL_OK;
}

static const char *trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

mcrepl_status mcrepl_config_parse(mcrepl_config *cfg, const char *kv)
{
	char buf[256];
	char *eq;
	size_t n;

	if (!cfg || !kv)
		return MCREPL_EINVAL;
	n = strlen(kv);
	if (n >= sizeof(buf))
		return MCREPL_EPARSE;
	memcpy(buf, kv, n + 1);
	eq = strchr(buf, '=');
	if (!eq)
		return MCREPL_EPARSE;
	*eq = '\0';
	return mcrepl_config_set(cfg, trim(buf), trim(eq + 1));
}

const mcrepl_config_knob *mcrepl_config_knobs(size_t *count)
{
	if (count)
		*count = N_KNOBS;
	return pub_knobs;
}

const char *mcrepl_mode_name(mcrepl_mode mode)
{
	switch (mode) {
	case MCREPL_MODE_OFF:
		return "off";
	case MCREPL_MODE_OBSERVE:
		return "observe";
	case MCREPL_MODE_ENFORCE:
		return "enforce";
	}
	return "unknown";
}

const char *mcrepl_policy_name(mcrepl_policy policy)
{
	switch (policy) {
	case MCREPL_POLICY_RFC:
		return "rfc";
	case MCREPL_POLICY_AUTO:
		return "auto";
	}
	return "unknown";
}

static int format_value(const mcrepl_config *cfg, const struct knob *k,
			char *buf, size_t cap)
{
	double v = knob_value(cfg, k);

	switch (k->type) {
	case K_MODE:
		return snprintf(buf, cap, "%s", mcrepl_mode_name(cfg->mode));
	case K_POLICY:
		return snprintf(buf, cap, "%s",
				mcrepl_policy_name(cfg->policy));
	case K_BOOL:
		return snprintf(buf, cap, "%s", v != 0 ? "true" : "false");
	case K_U32:
	case K_U64:
		return snprintf(buf, cap, "%.0f", v);
	case K_MS:
	case K_DOUBLE:
		return snprintf(buf, cap, "%g", v);
	}
	return -1;
}

mcrepl_status mcrepl_config_get(const mcrepl_config *cfg, const char *name,
				char *buf, size_t cap)
{
	const struct knob *k;
	int n;

	if (!cfg || !name || !buf)
		return MCREPL_EINVAL;
	k = find_knob(name);
	if (!k)
		return MCREPL_ENOENT;
	n = format_value(cfg, k, buf, cap);
	if (n < 0 || (size_t)n >= cap)
		return MCREPL_ENOSPC;
	return MCREPL_OK;
}

/* max(1, ceil(qps * window)), snapped so that 0.8 * 10 is 8, saturated. */
static uint32_t hit_count(double qps, uint64_t window_ms)
{
	double x = qps * (double)window_ms / 1000.0;
	double r = nearbyint(x);

	/* 0.8 * 10 must be 8, not 9: snap values within rounding noise. */
	if (fabs(x - r) <= 1e-9 * (r > 1.0 ? r : 1.0))
		x = r;
	x = ceil(x);
	if (!(x >= 1.0))
		return 1;
	if (x >= (double)MCREPL_HEAT_MAX_THRESHOLD)
		return MCREPL_HEAT_MAX_THRESHOLD;
	return (uint32_t)x;
}

uint32_t mcrepl_config_threshold(const mcrepl_config *cfg)
{
	return hit_count(cfg->admission_qps_threshold, cfg->heat_window_ms);
}

uint32_t mcrepl_config_cross_domain_threshold(const mcrepl_config *cfg)
{
	if (!cfg->domain_aware || !(cfg->cross_domain_qps_threshold > 0))
		return mcrepl_config_threshold(cfg);
	return hit_count(cfg->cross_domain_qps_threshold, cfg->heat_window_ms);
}
