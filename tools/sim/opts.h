/*
 * mcrepl-sim options: every flag of the simulator and every library knob
 * (--dynamic_replication_<knob> value, passed to mcrepl_config_set()).
 */
#ifndef SIM_OPTS_H
#define SIM_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mcrepl/mcrepl.h>

enum sim_workload {
	SIM_ZIPF,
	SIM_UNIFORM,
	SIM_TRACE,
	SIM_SHIFTING,
	SIM_FLASH,
	SIM_REHOT
};

struct sim_opts {
	uint32_t nodes;		 /* memory nodes (one NIC each) */
	uint32_t hosts_per_node; /* Store clients (segments) per node */
	uint32_t domains;	 /* node i is in domain i % domains */
	uint64_t keys;
	enum sim_workload workload;
	const char *trace_path;
	double theta;	       /* Zipf exponent */
	double shift_period;   /* s; shifting: ranking redrawn this often;
				  rehot: hot, cold, hot again this often */
	double shift_fraction; /* share of the ranking re-permuted, [0, 1] */
	double flash_at;       /* s; flash: when the unread key turns hot */
	double flash_seconds;  /* flash: how long it stays hot */
	double flash_share;    /* flash: share of the reads it takes */
	double speedup;	       /* trace time divided by this */
	double rate;	       /* reads/s (zipf, uniform) */
	uint64_t object_size;
	uint64_t node_memory; /* bytes per node; 0 = twice the primaries */
	double nic_gbps;
	double copy_share;    /* share of a NIC a worker gives copies */
	double latency_ms;    /* per copy, on top of size / bandwidth */
	double task_fetch_ms; /* FetchTasks poll delay of a worker */
	double duration;      /* seconds; 0 = 30, or the whole trace */
	double interval;      /* seconds per report row */
	uint64_t seed;
	uint32_t tick_ms;
	uint32_t admission_batch; /* triggers proposed per tick */
	uint32_t load_period_ms;  /* read_load refresh; 0 = interval */
	double evict_high;	  /* eviction_high_watermark_ratio */
	double evict_ratio;	  /* eviction_ratio */
	double kv_lease_ttl;	  /* default_kv_lease_ttl, ms */
	double join_at;		  /* s; > 0: the last domain joins then */
	double join_window;	  /* s of its reads counted after joining */
	bool warmup;		  /* warm the joining domain when it joins */
	bool random_puts;	  /* trace: new blocks on a random segment */
	uint32_t warmup_max_copies;
	uint64_t warmup_max_bytes;
	bool project_load;    /* bump a target's read_load at grant */
	bool read_load_order; /* pass node loads to order_replicas */
	bool quiet;	      /* no per-interval rows */
	const char *compare;  /* "cfgA;cfgB" */
	const char *plot;     /* PNG path */
	mcrepl_config cfg;    /* the library knobs */
	char sim_label[256];  /* simulator settings of a --compare list */
};

/*
 * Parse argv into o, every field (defaults from opts.c's table; the
 * library's knobs: mode off). Returns 0 on success, 1 when --help or
 * --version was printed, -1 on an error (already reported on stderr).
 */
int sim_opts_parse(struct sim_opts *o, int argc, char **argv);

/* Apply a space-separated list of name=value settings (a --compare
 * configuration). 0 or -1 (reported). */
int sim_opts_apply(struct sim_opts *o, const char *list);

/* The library knobs that differ from the defaults, "mode=enforce ...";
 * "defaults" when none do. */
void sim_opts_label(const struct sim_opts *o, char *buf, size_t cap);

#endif
