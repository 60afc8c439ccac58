/*
 * libmcrepl configuration: the RFC knobs plus the constants upstream
 * Mooncake hard-codes, made configurable with the same defaults.
 *
 * This header is the contract: what is not declared here is private.
 *
 * Every knob has a text name used by mcrepl_config_set() so that daemons,
 * config files and embedding hosts share one spelling (Mooncake's flag names,
 * e.g. "dynamic_replication_mode"). Durations are given in seconds in text
 * (fractions allowed: "0.25") and kept in milliseconds in the struct.
 *
 * Thread-safety: all functions are pure with respect to their arguments; a
 * config that is not being written may be read from any thread.
 */
#ifndef MCREPL_CONFIG_H
#define MCREPL_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mcrepl_mode {
	MCREPL_MODE_OFF = 0,	 /* no heat work at all (the default) */
	MCREPL_MODE_OBSERVE = 1, /* heat + admission counted, nothing copied */
	MCREPL_MODE_ENFORCE = 2	 /* admitted keys get dynamic replicas */
} mcrepl_mode;

/* Which admission and placement rules apply (see mcrepl/policy.h). */
typedef enum mcrepl_policy {
	MCREPL_POLICY_RFC = 0, /* the RFC's literal rules: absolute threshold,
				  utilization-first targets, fixed cap */
	MCREPL_POLICY_AUTO = 1 /* the default: hotness relative to what the
				  cluster serves, load-aware targets */
} mcrepl_policy;

typedef struct mcrepl_config {
	/* Set by mcrepl_config_init() to sizeof(mcrepl_config); lets later
	 * versions add fields at the end without breaking callers. */
	uint32_t struct_size;
	mcrepl_mode mode;		/* off */
	uint64_t heat_window_ms;	/* 10000 */
	double admission_qps_threshold; /* 0.8 */
	uint32_t max_memory_replicas;	/* 2: all readable MEMORY replicas */
	uint64_t action_cooldown_ms;	/* 30000 after a completed copy */
	uint64_t lease_ttl_ms;		/* 30000 */
	uint64_t recreate_cooldown_ms;	/* 60000 after a dynamic replica goes */
	uint64_t heat_max_entries;	/* 1000000 keys in the heat table */
	uint32_t admission_queue_limit; /* 10000 queued triggers */
	double target_high_watermark;	/* 0.85 used/capacity after the copy */
	bool domain_aware;		/* false: first-stage behaviour */
	bool scale_threshold_by_replicas;  /* false: RFC threshold */
	bool read_load_aware_placement;	   /* false: RFC target order */
	uint32_t proposal_retention_limit; /* 100000 idempotency records */
	/* Domain-aware: reads/s from a domain that holds no readable replica
	 * that admit its first one; 0 = admission_qps_threshold. Lets a
	 * deployment keep remote reads local at a lower rate than the one
	 * that fans a key out for load. */
	double cross_domain_qps_threshold; /* 0 */
	/* Self-tuning admission and placement (mcrepl/policy.h). "auto"
	 * applies only where the host passes a cluster view; without one
	 * (or with "rfc") every rule is the RFC's. */
	mcrepl_policy policy; /* auto */
	/* auto: a key gains a replica while its reads per replica reach this
	 * share of one node's fair share (cluster reads / nodes) and the
	 * RFC's hit count; it loses one when they fall under half of it. */
	double hot_share; /* 0.01 */
	/* auto: a key fans out only while one of its replicas sits on a
	 * segment whose read load exceeds the mean by more than this. */
	double balance_tolerance; /* 0.05 */
	/* auto: most readable replicas per object; 0 = one per node. Under
	 * auto, max_memory_replicas (the RFC's fixed cap) does not apply. */
	uint32_t auto_max_replicas; /* 0 */
	/* A full cluster: what one miss costs, in reads a hot copy relieves.
	 * Room for a hot copy evicts an object's only copy only when the
	 * relief exceeds this times its reads over the window
	 * (mcrepl_room_classify()); 0 = never: room comes only from copies
	 * with another readable copy. */
	uint32_t room_miss_cost; /* 0 */
	/* A full cluster: a hot copy may still go, with nothing evicted,
	 * where the segment's used/capacity after it stays at or below this
	 * fill line (above target_high_watermark; at or below it: no
	 * headroom). Keep it at or below the host's eviction line (the
	 * master's --eviction_high_watermark_ratio, 0.90), so the copy costs
	 * nothing now; the host gives such copies back first when it evicts. */
	double room_fill_limit; /* 0.90 */
} mcrepl_config;

/* Fill every field with its default (mode off). Never fails. */
MCREPL_API void mcrepl_config_init(mcrepl_config *cfg);

/*
 * Check a config for nonsense. Returns MCREPL_OK, or MCREPL_EINVAL /
 * MCREPL_ERANGE and, when field_out is not NULL, points *field_out at the
 * static text name of the first offending knob.
 */
MCREPL_API mcrepl_status mcrepl_config_validate(const mcrepl_config *cfg,
						const char **field_out);

/*
 * Set one knob from its text name and value. Accepts the full name
 * ("dynamic_replication_heat_window_seconds") or the name without the
 * "dynamic_replication_" prefix. Returns MCREPL_ENOENT for an unknown name,
 * MCREPL_EPARSE for a value that does not parse, MCREPL_ERANGE for a value
 * outside the knob's range; cfg is left unchanged on failure.
 * Both strings are read only during the call.
 */
MCREPL_API mcrepl_status mcrepl_config_set(mcrepl_config *cfg, const char *name,
					   const char *value);

/* Parse one "name=value" string (surrounding blanks ignored) and set it. */
MCREPL_API mcrepl_status mcrepl_config_parse(mcrepl_config *cfg,
					     const char *name_eq_value);

/* Description of one knob, for --help texts and documentation. */
typedef struct mcrepl_config_knob {
	const char *name;	  /* full text name */
	const char *default_text; /* default as text */
	const char *help;	  /* one line */
} mcrepl_config_knob;

/* The table of knobs (static storage); *count receives its length. */
MCREPL_API const mcrepl_config_knob *mcrepl_config_knobs(size_t *count);

/*
 * Write the current value of knob `name` as text into buf (NUL terminated).
 * Returns MCREPL_ENOENT for unknown names, MCREPL_ENOSPC if cap is too small.
 */
MCREPL_API mcrepl_status mcrepl_config_get(const mcrepl_config *cfg,
					   const char *name, char *buf,
					   size_t cap);

/* "off" / "observe" / "enforce"; "unknown" otherwise. */
MCREPL_API const char *mcrepl_mode_name(mcrepl_mode mode);

/* "rfc" / "auto"; "unknown" otherwise. */
MCREPL_API const char *mcrepl_policy_name(mcrepl_policy policy);

/*
 * The admission hit count: max(1, ceil(qps * window_seconds)), computed so
 * that 0.8 * 10 is exactly 8 (no floating-point surprise). Saturates at
 * MCREPL_HEAT_MAX_THRESHOLD.
 */
MCREPL_API uint32_t mcrepl_config_threshold(const mcrepl_config *cfg);

/*
 * The hit count that admits the first replica into a domain that holds none
 * (domain-aware): cross_domain_qps_threshold over the window, rounded as
 * above; mcrepl_config_threshold() when that knob is 0 or domain_aware is
 * off.
 */
MCREPL_API uint32_t
mcrepl_config_cross_domain_threshold(const mcrepl_config *cfg);

#ifdef __cplusplus
}
#endif
#endif
