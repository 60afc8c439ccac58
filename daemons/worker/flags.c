/* mcrepl-worker flags: `--name value` or `--name=value`; boolean flags may
 * stand alone (`--hugepages`). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flags.h"

enum ftype { F_STR, F_U32, F_I32, F_SIZE, F_BOOL };

struct flag {
	const char *name;
	enum ftype type;
	size_t off, cap; /* cap: string buffer size */
	const char *def, *help;
};

#define O(f) offsetof(struct worker_flags, f)
#define S(f) O(f), sizeof(((struct worker_flags *)0)->f)
static const struct flag flags[] = {
    {"master", F_STR, S(master), "127.0.0.1:50051",
     "mcrepl-master RPC address host:port"},
    {"host_id", F_STR, S(host_id), "", "host identity (default: hostname)"},
    {"domain", F_STR, S(domain), "",
     "domain of the segments (default: $MOONCAKE_STORE_DOMAIN, else default)"},
    {"segment_size", F_SIZE, O(segment_size), 0, "1G",
     "bytes per segment; K, M, G suffixes"},
    {"segments", F_U32, O(segments), 0, "1", "segments to mount"},
    {"hugepages", F_BOOL, O(hugepages), 0, "false",
     "try huge pages first (falls back to normal pages)"},
    {"data_address", F_STR, S(data_address), "127.0.0.1",
     "data port bind address, advertised to the master"},
    {"data_port", F_U32, O(data_port), 0, "0", "data port (0 = pick one)"},
    {"data_idle_timeout_ms", F_U32, O(data_idle_timeout_ms), 0, "60000",
     "close a data connection idle this long (0 = never)"},
    {"metrics_port", F_I32, O(metrics_port), 0, "-1",
     "HTTP /metrics port (-1 = off, 0 = pick one)"},
    {"transport", F_STR, S(transport), "auto", "copy engine: auto|tcp|rdma"},
    {"rdma_device", F_STR, S(rdma_device), "",
     "RDMA device (default: first active port)"},
    {"rdma_port", F_U32, O(rdma_port), 0, "0", "rdma_cm port (0 = 20886)"},
    {"max_copies", F_U32, O(max_copies), 0, "8", "copies in flight at once"},
    {"max_copy_bytes", F_SIZE, O(max_copy_bytes), 0, "256M",
     "bytes of copies in flight at once"},
    {"copy_timeout_ms", F_U32, O(copy_timeout_ms), 0, "20000",
     "per-copy timeout (keep it below the master's lease TTL, 30 s)"},
    {"poll_interval_ms", F_U32, O(poll_interval_ms), 0, "20",
     "FetchTasks poll period"},
};
#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

static int suffix_shift(const char *s, unsigned *shift)
{
	static const char units[] = "KMGT";
	const char *u;

	*shift = 0;
	if (!*s)
		return 0;
	u = strchr(units, s[0] & ~0x20);
	if (!u || !*u)
		return -1;
	*shift = 10u * (unsigned)(u - units + 1);
	s++;
	if ((s[0] == 'i' || s[0] == 'I') && (s[1] == 'B' || s[1] == 'b'))
		s += 2;
	else if (s[0] == 'B' || s[0] == 'b')
		s++;
	return *s ? -1 : 0;
}

int worker_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift;
	char *end;

	errno = 0;
	if (!s || s[0] < '0' || s[0] > '9')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || suffix_shift(end, &shift) ||
	    (shift && v > (UINT64_MAX >> shift)))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static int parse_num(const char *v, long long lo, long long hi, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(v, &end, 10);
	return end == v || *end || errno || *out < lo || *out > hi ? -1 : 0;
}

static int set_value(struct worker_flags *f, const struct flag *fl,
		     const char *v)
{
	char *p = (char *)f + fl->off;
	long long n;

	switch (fl->type) {
	case F_STR:
		if (strlen(v) >= fl->cap)
			return -1;
		memcpy(p, v, strlen(v) + 1);
		return 0;
	case F_BOOL:
		if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") &&
		    strcmp(v, "0"))
			return -1;
		*(bool *)(void *)p = !strcmp(v, "true") || !strcmp(v, "1");
		return 0;
	case F_SIZE:
		return worker_parse_size(v, (uint64_t *)(void *)p);
	case F_U32:
		if (parse_num(v, 0, UINT32_MAX, &n))
			return -1;
		*(uint32_t *)(void *)p = (uint32_t)n;
		return 0;
	case F_I32:
		if (parse_num(v, -1, INT32_MAX, &n))
			return -1;
		*(int32_t *)(void *)p = (int32_t)n;
		return 0;
	}
	return -1;
}

static void usage(void)
{
	printf("usage: mcrepl-worker [--flag value | --flag=value]...\n\n");
	for (size_t i = 0; i < N_FLAGS; i++)
		printf("  --%-18s %s (default %s)\n", flags[i].name,
		       flags[i].help, flags[i].def[0] ? flags[i].def : "-");
	printf(
	    "  --help\n\nPrints 'mcrepl-worker ready client_id=... data_port=... segments=... transport=...' once mounted.\n");
}

static const struct flag *find_flag(const char *name, size_t len)
{
	for (size_t i = 0; i < N_FLAGS; i++)
		if (strlen(flags[i].name) == len &&
		    strncmp(flags[i].name, name, len) == 0)
			return &flags[i];
	return NULL;
}

static void defaults(struct worker_flags *f)
{
	const char *env = getenv("MOONCAKE_STORE_DOMAIN");

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < N_FLAGS; i++)
		set_value(f, &flags[i], flags[i].def);
	if (gethostname(f->host_id, sizeof(f->host_id)) != 0 || !f->host_id[0])
		snprintf(f->host_id, sizeof(f->host_id), "localhost");
	f->host_id[sizeof(f->host_id) - 1] = '\0';
	snprintf(f->domain, sizeof(f->domain), "%s",
		 env && env[0] ? env : "default");
}

static int check(const struct worker_flags *f)
{
	const char *why = NULL;

	if (f->segment_size < 4096)
		why = "--segment_size must be at least 4K";
	else if (f->segments == 0 || f->segments > 64)
		why = "--segments must be 1..64";
	else if (f->data_port > 65535 || f->rdma_port > 65535 ||
		 f->metrics_port > 65535)
		why = "ports must be <= 65535";
	else if (f->max_copies == 0 || f->poll_interval_ms == 0)
		why = "--max_copies and --poll_interval_ms must be positive";
	else if (!f->host_id[0] || !f->master[0])
		why = "--host_id and --master must not be empty";
	else if (strcmp(f->transport, "auto") && strcmp(f->transport, "tcp") &&
		 strcmp(f->transport, "rdma"))
		why = "--transport must be auto, tcp or rdma";
	if (why)
		fprintf(stderr, "mcrepl-worker: %s\n", why);
	return why ? -1 : 0;
}

/* One argument at argv[*i]; consumes its value. */
static int parse_one(struct worker_flags *f, int argc, char **argv, int *i)
{
	const char *a = argv[*i] + 2, *eq = strchr(a, '='), *v;
	const struct flag *fl = find_flag(a, eq ? (size_t)(eq - a) : strlen(a));

	if (!fl) {
		fprintf(stderr, "mcrepl-worker: unknown flag %s (see --help)\n",
			argv[*i]);
		return -1;
	}
	if (eq)
		v = eq + 1;
	else if (fl->type == F_BOOL &&
		 (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0))
		v = "true";
	else if (*i + 1 < argc)
		v = argv[++*i];
	else {
		fprintf(stderr, "mcrepl-worker: --%s needs a value\n",
			fl->name);
		return -1;
	}
	if (set_value(f, fl, v) == 0)
		return 0;
	fprintf(stderr, "mcrepl-worker: invalid value '%s' for --%s (%s)\n", v,
		fl->name, fl->help);
	return -1;
}

int worker_flags_parse(struct worker_flags *f, int argc, char **argv)
{
	defaults(f);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage();
			return 1;
		}
		if (strncmp(argv[i], "--", 2) != 0) {
			fprintf(
			    stderr,
			    "mcrepl-worker: unexpected argument '%s' (see --help)\n",
			    argv[i]);
			return -1;
		}
		if (parse_one(f, argc, argv, &i))
			return -1;
	}
	return check(f);
}
