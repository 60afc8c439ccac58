/* mcrepl-worker command line. */
#ifndef MCREPL_WORKER_FLAGS_H
#define MCREPL_WORKER_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A stop, bounded (main.c): on SIGTERM the drain first (up to
 * --drain_timeout_ms, default WORKER_DRAIN_TIMEOUT_MS_DEFAULT), then the
 * copies in flight revoked and the segments unmounted within
 * WORKER_STOP_GRACE_MS, and a stop cut short (a second signal, the grace
 * over) still unmounts, blocking, for at most WORKER_STOP_UNMOUNT_MS. A
 * supervisor's stop timeout must exceed their sum (contrib/systemd). */
#define WORKER_DRAIN_TIMEOUT_MS_DEFAULT 10000
#define WORKER_STOP_GRACE_MS 5000
#define WORKER_STOP_UNMOUNT_MS 1000

struct worker_flags {
	char master[256];	    /* host:port of mcrepl-master */
	char host_id[256];	    /* default: hostname */
	char domain[128];	    /* --domain, else $MOONCAKE_STORE_DOMAIN */
	uint64_t segment_size;	    /* bytes per segment; K/M/G suffixes */
	uint32_t segments;	    /* how many */
	bool hugepages;		    /* try MAP_HUGETLB first */
	char data_address[64];	    /* data port bind address */
	char advertise_address[64]; /* "" = chosen (advertise.h) */
	uint32_t data_port;	    /* 0 = ephemeral */
	uint32_t data_idle_timeout_ms; /* 0 = keep idle connections */
	int32_t metrics_port;	       /* -1 = off, 0 = ephemeral */
	char transport[16];	       /* auto | tcp | rdma */
	char rdma_device[64];	       /* "" = first active port */
	uint32_t rdma_port;	       /* rdma_cm port */
	uint32_t max_copies;	       /* copies in flight */
	uint64_t max_copy_bytes;       /* bytes in flight */
	uint32_t copy_timeout_ms;
	uint32_t poll_interval_ms;
	uint32_t drain_timeout_ms;
	char principal[65];	/* "" = no credential */
	char secret_file[1024]; /* its secret (auth.h) */
	bool insecure;		/* non-loopback data port without one */
	/* --insecure_no_grants_for_benchmarks: serve without grants (the
	 * benchmark baseline; main.c: loopback only) */
	bool no_grants;
	/* TLS (tls.h, client_auth.h): "" = not given */
	char tls_cert[1024], tls_key[1024], tls_ca[1024];
	char etcd_endpoints[1024]; /* HA: find the master here (ha.c) */
	char ha_key[256];
	char log_level[8]; /* error|warn|info|debug */
};

/* The worker's flag table (its rules are checked by tests). */
struct flag_set;
const struct flag_set *worker_flag_set(void);

/* Parses argv (and any --config FILE). Returns 0 to run, 1 when --help or
 * --version was printed, -1 after one clear error line on stderr. */
int worker_flags_parse(struct worker_flags *f, int argc, char **argv);

/* Prints one "warning:" line to out per risky value (a copy timeout
 * longer than the default copy lease, segments larger than ram_bytes;
 * 0 = unknown) and returns how many. */
int worker_flags_warn(const struct worker_flags *f, uint64_t ram_bytes,
		      FILE *out);

#endif
