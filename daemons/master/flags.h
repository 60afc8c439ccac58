/* mcrepl-master command line and config file: Mooncake's flag names. */
#ifndef MCREPL_MASTER_FLAGS_H
#define MCREPL_MASTER_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

struct master_flags {
	struct master_opts opts;
	char rpc_address[64]; /* "" = by protected mode (protect.h) */
	char auth_file[1024]; /* "" = no authentication */
	uint32_t auth_timeout_ms;
	bool insecure;
	/* TLS (tls.h): "" = plain TCP */
	char tls_cert[1024], tls_key[1024], tls_ca[1024];
	uint32_t rpc_port;     /* 50051; 0 = ephemeral */
	uint32_t metrics_port; /* 9003; 0 = ephemeral */
	uint64_t max_frame_bytes;
	uint32_t sweep_interval_ms;
	uint32_t admission_batch;
	char log_level[8]; /* error|warn|info|debug */
	/* high availability on etcd (ha.h; "" = a single master) */
	char etcd_endpoints[1024];
	char ha_key[256];
	char ha_advertise[256]; /* RPC address in the leader key */
	uint32_t ha_lease_ttl_ms;
	uint32_t ha_poll_ms;
	uint32_t ha_recovery_ms;
};

/* The master's flag table (its rules are checked by tests). */
struct flag_set;
const struct flag_set *master_flag_set(void);

/* The store's options at their defaults: the opts part of the above. */
void master_opts_defaults(struct master_opts *o);

/* Parse argv (and any --config FILE). Returns 0 to run, 1 when --help or
 * --version was printed, -1 after printing one clear error line. */
int master_flags_parse(struct master_flags *f, int argc, char **argv);

/* Prints one "warning:" line to out per risky combination of values that
 * parsing accepts (eviction's watermark not above the dynamic copies'
 * target watermark; in enforce mode, a copy lease shorter than the
 * workers' default copy timeout) and returns how many. */
int master_flags_warn(const struct master_flags *f, FILE *out);

#endif
