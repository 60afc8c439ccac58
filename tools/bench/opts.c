/* Flag table and parsing of mcrepl-bench (flagparse.h does the rest). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flagparse.h"
#include "opts.h"

#define O(f) FLAG_AT(struct bench_opts, f)
static const struct flag bench_flags[] = {
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(keys),
     .def = "10000",
     .help = "zipf: objects",
     .min = 1,
     .max = 10000000},
    {.name = "theta",
     .type = FLAG_DOUBLE,
     .off = O(theta),
     .def = "0.99",
     .help = "zipf: exponent (0 = uniform)",
     .dmin = 0,
     .dmax = 10},
    {.name = "shift_period",
     .type = FLAG_DOUBLE,
     .off = O(shift_period),
     .def = "20",
     .help = "shifting: seconds between redraws of the Zipf ranking; "
	     "rehot: the hot keys go cold, then hot again, this often",
     .dmin = 0.05,
     .dmax = 86400},
    {.name = "shift_fraction",
     .type = FLAG_DOUBLE,
     .off = O(shift_fraction),
     .def = "1",
     .help = "shifting, rehot: share of the ranking re-permuted at each "
	     "redraw (0 = none)",
     .dmin = 0,
     .dmax = 1},
    {.name = "flash_at",
     .type = FLAG_DOUBLE,
     .off = O(flash_at),
     .def = "10",
     .help = "flash: seconds after the reads begin that a key nobody read "
	     "turns hot",
     .dmin = 0,
     .dmax = 86400},
    {.name = "flash_seconds",
     .type = FLAG_DOUBLE,
     .off = O(flash_seconds),
     .def = "1",
     .help = "flash: how long the key stays hot",
     .dmin = 0,
     .dmax = 86400},
    {.name = "flash_share",
     .type = FLAG_DOUBLE,
     .off = O(flash_share),
     .def = "0.5",
     .help = "flash: share of all reads the key takes while hot",
     .dmin = 0,
     .dmax = 1},
    {.name = "object_size",
     .type = FLAG_SIZE,
     .off = O(object_size),
     .def = "64K",
     .help = "zipf: object bytes, K/M suffixes",
     .min = 16,
     .max = 64 << 20},
    {.name = "block_bytes",
     .type = FLAG_SIZE,
     .off = O(block_bytes),
     .def = "16K",
     .help = "trace: bytes per prefix block object",
     .min = 16,
     .max = 64 << 20},
    {.name = "speedup",
     .type = FLAG_DOUBLE,
     .off = O(speedup),
     .def = "1",
     .help = "trace: timestamps are divided by this",
     .dmin = 1e-3,
     .dmax = 1e6},
    {.name = "clients",
     .type = FLAG_U32,
     .off = O(clients),
     .def = "4",
     .help = "reader threads, each with its own client",
     .min = 1,
     .max = 256},
    {.name = "duration",
     .type = FLAG_DOUBLE,
     .off = O(duration),
     .help = "seconds of reads (zipf 30; trace: 0 = to its end)",
     .dmin = 0,
     .dmax = 86400},
    {.name = "rate",
     .type = FLAG_DOUBLE,
     .off = O(rate),
     .def = "0",
     .help = "zipf: total reads/s, 0 = as fast as possible",
     .dmin = 0,
     .dmax = 1e9},
    {.name = "interval",
     .type = FLAG_DOUBLE,
     .off = O(interval),
     .def = "1",
     .help = "seconds per row",
     .dmin = 0.05,
     .dmax = 3600},
    {.name = "master",
     .type = FLAG_STRP,
     .off = O(master),
     .help = "host:port of a running master"},
    {.name = "local",
     .type = FLAG_U32,
     .off = O(local),
     .help = "start a master and N workers on loopback, stop them after",
     .min = 1,
     .max = BENCH_MAX_WORKERS},
    {.name = "segment_size",
     .type = FLAG_SIZE,
     .off = O(segment_size),
     .def = "0",
     .help = "--local: bytes per worker segment (0 = three times its share)",
     .max = 1ll << 40},
    {.name = "domains",
     .type = FLAG_U32,
     .off = O(domains),
     .help = "--local: worker i and reader j in domain d<i % N>, d<j % N> "
	     "(1 when not given)",
     .min = 1,
     .max = BENCH_MAX_WORKERS},
    {.name = "modes",
     .type = FLAG_STRP,
     .off = O(modes),
     .help = "--local: off,observe,enforce,domain runs, side by side "
	     "(enforce when not given)"},
    {.name = "master_flags",
     .type = FLAG_STRP,
     .off = O(master_flags),
     .help = "--local: extra master flags, \"--a=1 --b=2\""},
    {.name = "daemon_log",
     .type = FLAG_STRP,
     .off = O(daemon_log),
     .help = "--local: append the daemons' stderr here (else: ours)"},
    {.name = "principal",
     .type = FLAG_STRP,
     .off = O(principal),
     .help = "--master: the client principal to authenticate as (admin: the "
	     "bench reads Stats' segments)"},
    {.name = "secret_file",
     .type = FLAG_STRP,
     .off = O(secret_file),
     .help = "--master: the file holding its secret"},
    {.name = "tls_ca",
     .type = FLAG_STRP,
     .off = O(tls_ca),
     .help = "--master: TLS to it; its certificate must chain to this CA"},
    {.name = "tls_cert",
     .type = FLAG_STRP,
     .off = O(tls_cert),
     .help = "--master: client certificate (mutual TLS; with --principal "
	     "and no --secret_file: authenticate by it)"},
    {.name = "tls_key",
     .type = FLAG_STRP,
     .off = O(tls_key),
     .help = "--master: the private key of --tls_cert"},
    {.name = "plot",
     .type = FLAG_STRP,
     .off = O(plot),
     .help = "write a gnuplot PNG chart here"},
    {.name = "seed",
     .type = FLAG_U64,
     .off = O(seed),
     .def = "1",
     .help = "random seed (0 = a seed like any other)"},
    {.name = "quiet",
     .type = FLAG_BOOL,
     .off = O(quiet),
     .def = "false",
     .help = "true: no per-interval rows"},
};

static const struct flag_set bench_set = {
    .prog = "mcrepl-bench",
    .usage = "zipf|shifting|flash|rehot|trace FILE [--flag value | "
	     "--flag=value]...",
    .intro =
	"\n"
	"  zipf         Zipf reads over --keys objects put first\n"
	"  shifting     zipf whose ranking is redrawn every "
	"--shift_period s\n"
	"  flash        zipf, and a key nobody read takes --flash_share "
	"of the reads\n"
	"               for --flash_seconds from --flash_at s\n"
	"  rehot        zipf whose hot keys go cold, then hot again, every "
	"--shift_period s\n"
	"  trace FILE   replay a Mooncake JSONL trace (timestamp ms, "
	"hash_ids)",
    .title = "flags",
    .epilog =
	"One of --master or --local is needed. Each run prints interval rows "
	"and one\n'{\"summary\":{...}}' line per mode.\n"
	"\nModes (--local, a fresh cluster each): off, observe, enforce set "
	"the master's\n--dynamic_replication_mode; domain is enforce plus\n"
	"--dynamic_replication_domain_aware=true. --master_flags come after "
	"them and win.\n"
	"\nDomains: with --local --domains N, worker i runs with --domain "
	"d<i % N> (N > 1)\nand reader j is in domain d<j % N>; with --master "
	"the readers are spread over\nthe domains of the master's segments. "
	"Bytes read from a worker in another\ndomain than the reader's are "
	"reported (xdom%, cross_domain_share).",
    .width = 14,
    .flags = bench_flags,
    .n = sizeof(bench_flags) / sizeof(bench_flags[0]),
};

/* --modes: a comma list of off | observe | enforce | domain, no repeats
 * (domain = enforce on a domain-aware master, see cluster.c). */
static int parse_modes(struct bench_opts *o)
{
	static char copy[64];
	static const char *const known[] = {"off", "observe", "enforce",
					    "domain"};
	const size_t n_known = sizeof(known) / sizeof(known[0]);
	char *save = NULL, *tok;

	o->n_modes = 0;
	if (strlen(o->modes) >= sizeof(copy))
		goto bad;
	strcpy(copy, o->modes);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t k;

		for (k = 0; k < n_known && strcmp(tok, known[k]) != 0; k++)
			;
		if (k == n_known || o->n_modes == BENCH_MAX_MODES)
			goto bad;
		for (size_t j = 0; j < o->n_modes; j++)
			if (strcmp(o->mode[j], known[k]) == 0)
				goto bad;
		o->mode[o->n_modes++] = known[k];
	}
	if (o->n_modes > 0)
		return 0;
bad:
	fprintf(stderr,
		"mcrepl-bench: bad --modes '%s' (want a comma list of "
		"off, observe, enforce, domain)\n",
		o->modes);
	return -1;
}

/* Cross-flag rules; one error line each. */
static int validate(struct bench_opts *o)
{
	if (!o->master == !o->local) {
		fprintf(stderr, "mcrepl-bench: give exactly one of --master "
				"host:port or --local N\n");
		return -1;
	}
	if (o->modes && parse_modes(o) != 0)
		return -1;
	if (!o->modes) {
		o->mode[0] = o->master ? "remote" : "enforce";
		o->n_modes = 1;
	}
	if (o->master &&
	    (o->modes || o->master_flags || o->segment_size || o->daemon_log)) {
		fprintf(stderr,
			"mcrepl-bench: --modes, --master_flags, "
			"--segment_size and --daemon_log need --local\n");
		return -1;
	}
	if (o->local && (o->principal || o->secret_file || o->tls_ca ||
			 o->tls_cert || o->tls_key)) {
		fprintf(stderr,
			"mcrepl-bench: --principal, --secret_file and --tls_* "
			"need "
			"--master (a --local cluster makes its own throwaway "
			"auth file)\n");
		return -1;
	}
	if (o->master && o->domains) {
		fprintf(stderr,
			"mcrepl-bench: --domains needs --local (with --master "
			"the readers are spread over the domains the master's "
			"segments report)\n");
		return -1;
	}
	if (o->local && o->domains > o->local) {
		fprintf(stderr,
			"mcrepl-bench: --domains %u is more than the %u "
			"--local workers (each domain needs a worker)\n",
			o->domains, o->local);
		return -1;
	}
	if (o->local && !o->domains)
		o->domains = 1;
	if (o->segment_size && o->segment_size < (1u << 20)) {
		fprintf(stderr, "mcrepl-bench: --segment_size must be 0 (auto) "
				"or at least 1M\n");
		return -1;
	}
	if (o->workload == BENCH_FLASH && o->keys < 2) {
		fprintf(stderr, "mcrepl-bench: flash needs --keys >= 2\n");
		return -1;
	}
	if (isnan(o->duration))
		o->duration = o->workload != BENCH_TRACE ? 30 : 0;
	if (o->workload != BENCH_TRACE && o->duration <= 0) {
		fprintf(stderr, "mcrepl-bench: zipf, shifting, flash and rehot "
				"need --duration > 0\n");
		return -1;
	}
	return 0;
}

/* The workload: zipf | shifting | flash | rehot | trace FILE, from the
 * arguments that are not flags. */
static int workload(struct bench_opts *o, const struct flag_args *a)
{
	if (a->n == 0) {
		fprintf(stderr, "mcrepl-bench: missing workload (zipf | "
				"shifting | flash | rehot | trace FILE; see "
				"--help)\n");
		return -1;
	}
	if (strcmp(a->v[0], "zipf") == 0) {
		o->workload = BENCH_ZIPF;
	} else if (strcmp(a->v[0], "shifting") == 0) {
		o->workload = BENCH_SHIFTING;
	} else if (strcmp(a->v[0], "flash") == 0) {
		o->workload = BENCH_FLASH;
	} else if (strcmp(a->v[0], "rehot") == 0) {
		o->workload = BENCH_REHOT;
	} else if (strcmp(a->v[0], "trace") == 0) {
		if (a->n < 2) {
			fprintf(stderr, "mcrepl-bench: trace needs a FILE\n");
			return -1;
		}
		o->workload = BENCH_TRACE;
		o->trace_path = a->v[1];
		return 0;
	} else {
		fprintf(stderr,
			"mcrepl-bench: unknown workload '%s' (zipf | shifting "
			"| flash | rehot | trace FILE)\n",
			a->v[0]);
		return -1;
	}
	if (a->n > 1) {
		fprintf(stderr,
			"mcrepl-bench: unexpected argument '%s' (see --help)\n",
			a->v[1]);
		return -1;
	}
	return 0;
}

int bench_opts_parse(struct bench_opts *o, int argc, char **argv)
{
	const char *args[2];
	struct flag_args a = {.v = args, .cap = 2};
	int rc;

	memset(o, 0, sizeof(*o));
	o->duration = NAN; /* not given: by workload, in validate() */
	flags_defaults(&bench_set, o);
	rc = flags_parse_args(&bench_set, o, NULL, argc, argv, &a);
	if (rc != 0)
		return rc;
	if (workload(o, &a) != 0)
		return -1;
	return validate(o);
}
