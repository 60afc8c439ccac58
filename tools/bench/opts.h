/*
 * mcrepl-bench options: the workload (zipf, shifting, or trace FILE), the
 * cluster
 * (--master host:port, or --local N started by the bench) and the modes
 * to compare.
 */
#ifndef MBENCH_OPTS_H
#define MBENCH_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Shifting is Zipf whose ranking is redrawn every shift_period seconds;
 * rehot alternates the first ranking and one redraw every shift_period
 * (hot, cold, hot again); flash sends flash_share of the reads of
 * [flash_at, flash_at + flash_seconds) to a key nobody read before. The
 * rankings are ../common/popgen.h's, the same as mcrepl-sim's for a seed. */
enum bench_workload {
	BENCH_ZIPF,
	BENCH_TRACE,
	BENCH_SHIFTING,
	BENCH_FLASH,
	BENCH_REHOT
};

#define BENCH_MAX_MODES 4 /* off, observe, enforce, domain */
#define BENCH_MAX_WORKERS 64

struct bench_opts {
	enum bench_workload workload;
	const char *trace_path;
	uint64_t keys;	       /* zipf objects */
	double theta;	       /* Zipf exponent */
	double shift_period;   /* shifting: s between ranking redraws */
	double shift_fraction; /* shifting: share of the ranking moved */
	double flash_at;       /* flash: s after the reads begin */
	double flash_seconds;  /* flash: how long the key stays hot */
	double flash_share;    /* flash: share of the reads it takes */
	uint64_t object_size;  /* zipf object bytes */
	uint64_t block_bytes;  /* trace block bytes */
	uint32_t clients;      /* reader threads, one store_client each */
	double duration;       /* seconds; zipf 30, trace 0 = to its end */
	double rate;	       /* total reads/s; 0 = as fast as possible */
	double speedup;	       /* trace time divided by this */
	double interval;       /* seconds per report row */
	const char *master;    /* host:port of a running master, or NULL */
	uint32_t local;	       /* workers of a cluster started here */
	uint64_t segment_size; /* per local worker; 0 = sized to fit */
	uint32_t domains;  /* --local: worker i and reader j in d<i % domains>,
			     d<j % domains>; 0 when not given */
	const char *modes; /* "off,observe,enforce,domain" as given */
	const char *mode[BENCH_MAX_MODES];
	size_t n_modes;
	const char *master_flags; /* extra flags for a local master */
	const char *plot;	  /* PNG path or NULL */
	/* --master: credential (auth.h); --local makes its own */
	const char *principal, *secret_file;
	const char *tls_ca, *tls_cert, *tls_key; /* --master: TLS */
	const char *daemon_log; /* local daemons' stderr; NULL = ours */
	uint64_t seed;
	bool quiet; /* no interval rows */
};

/*
 * Parse argv into o, every field (argv[1] is the workload: zipf |
 * shifting | flash | rehot | trace FILE; the flags: opts.c's table). Returns 0, 1 when
 * --help or --version was printed, or -1 after printing one error line
 * on stderr. Strings point into argv (o->mode[] into a static copy of
 * --modes).
 */
int bench_opts_parse(struct bench_opts *o, int argc, char **argv);

#endif
