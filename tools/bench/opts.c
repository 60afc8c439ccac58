/* Flag table, parsing and --help of mcrepl-bench. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

enum opt_type { O_U32, O_U64, O_SIZE, O_DBL, O_BOOL, O_STR };

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;
	double min, max; /* numeric range, inclusive */
	const char *help;
};

#define OPT(n, t, f, lo, hi, h)                                                \
	{                                                                      \
		n, t, offsetof(struct bench_opts, f), lo, hi, h                \
	}

static const struct opt opts[] = {
    OPT("keys", O_U64, keys, 1, 10000000, "zipf: objects (10000)"),
    OPT("theta", O_DBL, theta, 0, 10, "zipf: exponent (0.99)"),
    OPT("shift_period", O_DBL, shift_period, 0.05, 86400,
	"shifting: seconds between redraws of the Zipf ranking (20)"),
    OPT("shift_fraction", O_DBL, shift_fraction, 0, 1,
	"shifting: share of the ranking re-permuted at each redraw (1)"),
    OPT("object_size", O_SIZE, object_size, 16, 64 << 20,
	"zipf: object bytes, K/M suffixes (64K)"),
    OPT("block_bytes", O_SIZE, block_bytes, 16, 64 << 20,
	"trace: bytes per prefix block object (16K)"),
    OPT("speedup", O_DBL, speedup, 1e-3, 1e6,
	"trace: timestamps are divided by this (1)"),
    OPT("clients", O_U32, clients, 1, 256,
	"reader threads, each with its own client (4)"),
    OPT("duration", O_DBL, duration, 0, 86400,
	"seconds of reads (zipf 30; trace: 0 = to its end)"),
    OPT("rate", O_DBL, rate, 0, 1e9,
	"zipf: total reads/s, 0 = as fast as possible (0)"),
    OPT("interval", O_DBL, interval, 0.05, 3600, "seconds per row (1)"),
    OPT("master", O_STR, master, 0, 0, "host:port of a running master"),
    OPT("local", O_U32, local, 1, BENCH_MAX_WORKERS,
	"start a master and N workers on loopback, stop them after"),
    OPT("segment_size", O_SIZE, segment_size, 0, 1ull << 40,
	"--local: bytes per worker segment (0 = three times its share)"),
    OPT("domains", O_U32, domains, 1, BENCH_MAX_WORKERS,
	"--local: worker i and reader j in domain d<i % N>, d<j % N> (1)"),
    OPT("modes", O_STR, modes, 0, 0,
	"--local: off,observe,enforce,domain runs, side by side (enforce)"),
    OPT("master_flags", O_STR, master_flags, 0, 0,
	"--local: extra master flags, \"--a=1 --b=2\""),
    OPT("daemon_log", O_STR, daemon_log, 0, 0,
	"--local: append the daemons' stderr here (default: ours)"),
    OPT("principal", O_STR, principal, 0, 0,
	"--master: the client principal to authenticate as (admin: the "
	"bench reads Stats' segments)"),
    OPT("secret_file", O_STR, secret_file, 0, 0,
	"--master: the file holding its secret"),
    OPT("tls_ca", O_STR, tls_ca, 0, 0,
	"--master: TLS to it; its certificate must chain to this CA"),
    OPT("tls_cert", O_STR, tls_cert, 0, 0,
	"--master: client certificate (mutual TLS; with --principal and no "
	"--secret_file: authenticate by it)"),
    OPT("tls_key", O_STR, tls_key, 0, 0,
	"--master: the private key of --tls_cert"),
    OPT("plot", O_STR, plot, 0, 0, "write a gnuplot PNG chart here"),
    OPT("seed", O_U64, seed, 0, 18446744073709551615.0, "random seed (1)"),
    OPT("quiet", O_BOOL, quiet, 0, 1, "true: no per-interval rows (false)"),
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

void bench_opts_init(struct bench_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->keys = 10000;
	o->theta = 0.99;
	o->shift_period = 20;
	o->shift_fraction = 1;
	o->object_size = 64 << 10;
	o->block_bytes = 16 << 10;
	o->speedup = 1;
	o->clients = 4;
	o->duration = -1;
	o->interval = 1;
	o->seed = 1;
}

void bench_opts_usage(FILE *f)
{
	fprintf(f,
		"usage: mcrepl-bench zipf|shifting|trace FILE [--flag value | "
		"--flag=value]...\n\n"
		"  zipf         Zipf reads over --keys objects put first\n"
		"  shifting     zipf whose ranking is redrawn every "
		"--shift_period s\n"
		"  trace FILE   replay a Mooncake JSONL trace (timestamp ms, "
		"hash_ids)\n\nflags:\n");
	for (size_t i = 0; i < N_OPTS; i++)
		fprintf(f, "  --%-14s %s\n", opts[i].name, opts[i].help);
	fprintf(
	    f,
	    "\nOne of --master or --local is needed. Each run prints "
	    "interval rows and one\n'{\"summary\":{...}}' line per mode.\n"
	    "\nModes (--local, a fresh cluster each): off, observe, enforce "
	    "set the master's\n--dynamic_replication_mode; domain is enforce "
	    "plus\n--dynamic_replication_domain_aware=true. --master_flags "
	    "come after them and win.\n"
	    "\nDomains: with --local --domains N, worker i runs with "
	    "--domain d<i %% N> (N > 1)\nand reader j is in domain d<j %% N>; "
	    "with --master the readers are spread over\nthe domains of the "
	    "master's segments. Bytes read from a worker in another\ndomain "
	    "than the reader's are reported (xdom%%, cross_domain_share).\n");
}

int bench_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	errno = 0;
	if (!s || *s < '0' || *s > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		mul = 1ull << 10;
		end++;
		break;
	case 'M':
	case 'm':
		mul = 1ull << 20;
		end++;
		break;
	case 'G':
	case 'g':
		mul = 1ull << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' || *end == 'B')
		end += *end == 'i' && end[1] == 'B' ? 2 : 1;
	if (*end || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

static int parse_number(const struct opt *op, const char *v, double *out)
{
	char *end;
	uint64_t sz;

	if (op->type == O_SIZE) {
		if (bench_parse_size(v, &sz) != 0)
			return -1;
		*out = (double)sz;
		return 0;
	}
	/* Integers: plain digits only (no "1e3", no sign), and in range. */
	if (op->type != O_DBL && (!*v || v[strspn(v, "0123456789")]))
		return -1;
	if (op->type != O_DBL) {
		errno = 0;
		(void)strtoull(v, NULL, 10);
		if (errno)
			return -1;
	}
	errno = 0;
	*out = strtod(v, &end);
	if (errno || end == v || *end || !isfinite(*out))
		return -1;
	return 0;
}

static int parse_bool(const char *v, double *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
		*out = 1;
	else if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int set_opt(struct bench_opts *o, const struct opt *op, const char *v)
{
	char *base = (char *)o + op->off;
	double d;
	int rc;

	if (op->type == O_STR) {
		memcpy(base, &v, sizeof(v));
		return 0;
	}
	rc = op->type == O_BOOL ? parse_bool(v, &d) : parse_number(op, v, &d);
	if (rc != 0 || d < op->min || d > op->max) {
		fprintf(
		    stderr,
		    "mcrepl-bench: bad value '%s' for --%s (want %s%g..%g)\n",
		    v, op->name, op->type == O_BOOL ? "a boolean, " : "",
		    op->min, op->max);
		return -1;
	}
	if (op->type == O_BOOL)
		*(bool *)(void *)base = d != 0;
	else if (op->type == O_U32)
		*(uint32_t *)(void *)base = (uint32_t)d;
	else if (op->type == O_U64)
		*(uint64_t *)(void *)base = strtoull(v, NULL, 10);
	else if (op->type == O_SIZE)
		*(uint64_t *)(void *)base = (uint64_t)d;
	else
		*(double *)(void *)base = d;
	return 0;
}

static const struct opt *find_opt(const char *name, size_t len)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (strlen(opts[i].name) == len &&
		    strncmp(opts[i].name, name, len) == 0)
			return &opts[i];
	return NULL;
}

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
	if (o->duration < 0)
		o->duration = o->workload != BENCH_TRACE ? 30 : 0;
	if (o->workload != BENCH_TRACE && o->duration <= 0) {
		fprintf(stderr, "mcrepl-bench: zipf and shifting need "
				"--duration > 0\n");
		return -1;
	}
	return 0;
}

static int parse_flag(struct bench_opts *o, int argc, char **argv, int *i)
{
	const char *arg = argv[*i], *name = arg + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct opt *op = find_opt(name, len);
	const char *v = eq ? eq + 1 : NULL;

	if (strncmp(arg, "--", 2) != 0 || !op) {
		fprintf(stderr,
			"mcrepl-bench: unknown flag '%s' (see --help)\n", arg);
		return -1;
	}
	if (!v) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "mcrepl-bench: --%s needs a value\n",
				op->name);
			return -1;
		}
		v = argv[++*i];
	}
	return set_opt(o, op, v);
}

int bench_opts_parse(struct bench_opts *o, int argc, char **argv)
{
	int i = 2;

	if (argc < 2) {
		fprintf(stderr, "mcrepl-bench: missing workload (zipf | "
				"shifting | trace FILE; see --help)\n");
		return -1;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		bench_opts_usage(stdout);
		return 1;
	}
	if (strcmp(argv[1], "zipf") == 0) {
		o->workload = BENCH_ZIPF;
	} else if (strcmp(argv[1], "shifting") == 0) {
		o->workload = BENCH_SHIFTING;
	} else if (strcmp(argv[1], "trace") == 0) {
		if (argc < 3 || strncmp(argv[2], "--", 2) == 0) {
			fprintf(stderr, "mcrepl-bench: trace needs a FILE\n");
			return -1;
		}
		o->workload = BENCH_TRACE;
		o->trace_path = argv[2];
		i = 3;
	} else {
		fprintf(stderr,
			"mcrepl-bench: unknown workload '%s' (zipf | shifting "
			"| trace FILE)\n",
			argv[1]);
		return -1;
	}
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0) {
			bench_opts_usage(stdout);
			return 1;
		}
		if (parse_flag(o, argc, argv, &i) != 0)
			return -1;
	}
	return validate(o);
}
