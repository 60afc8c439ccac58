/* Flag table, parsing and --help of mcrepl-sim. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"

#define KNOB_PREFIX "dynamic_replication_"

enum opt_type { O_U32, O_U64, O_SIZE, O_DBL, O_BOOL, O_STR, O_WORKLOAD };

struct opt {
	const char *name;
	enum opt_type type;
	size_t off;
	const char *help;
};

#define OPT(n, t, f, h)                                                        \
	{                                                                      \
		n, t, offsetof(struct sim_opts, f), h                          \
	}

static const struct opt opts[] = {
    OPT("nodes", O_U32, nodes, "memory nodes, 1..100000 (64)"),
    OPT("hosts_per_node", O_U32, hosts_per_node,
	"Store clients (segments) per node sharing its NIC (1)"),
    OPT("keys", O_U64, keys, "objects, up to 100000000 (100000)"),
    OPT("workload", O_WORKLOAD, workload,
	"zipf | uniform | shifting | trace FILE (zipf)"),
    OPT("trace", O_STR, trace_path, "JSONL trace (same as workload trace)"),
    OPT("theta", O_DBL, theta, "Zipf exponent (0.99)"),
    OPT("shift_period", O_DBL, shift_period,
	"seconds; shifting: the Zipf ranking is redrawn this often (20)"),
    OPT("shift_fraction", O_DBL, shift_fraction,
	"shifting: share of the ranking re-permuted at each redraw, "
	"[0, 1] (1)"),
    OPT("speedup", O_DBL, speedup, "trace time is divided by this (1)"),
    OPT("rate", O_DBL, rate, "reads per second, zipf/uniform (100000)"),
    OPT("object_size", O_SIZE, object_size, "bytes, K/M/G suffixes (1M)"),
    OPT("node_memory", O_SIZE, node_memory,
	"bytes per node; 0 = twice its share of primaries (0)"),
    OPT("nic_gbps", O_DBL, nic_gbps, "NIC bandwidth per node, Gbit/s (100)"),
    OPT("copy_share", O_DBL, copy_share,
	"share of a NIC given to copies, (0, 1] (0.5)"),
    OPT("latency_ms", O_DBL, latency_ms, "per-copy latency, ms (0.5)"),
    OPT("task_fetch_ms", O_DBL, task_fetch_ms,
	"delay before the source worker fetches its task, ms (10)"),
    OPT("duration", O_DBL, duration,
	"simulated seconds; 0 = 30, or the whole trace (0)"),
    OPT("interval", O_DBL, interval, "seconds per report row (1)"),
    OPT("seed", O_U64, seed, "seed of every random stream (1)"),
    OPT("tick_ms", O_U32, tick_ms, "clock tick, ms (1)"),
    OPT("admission_batch", O_U32, admission_batch,
	"triggers the admission worker proposes per tick (256)"),
    OPT("load_period_ms", O_U32, load_period_ms,
	"how often the master refreshes read_load for placement, ms; "
	"0 = every interval (100)"),
    OPT("domains", O_U32, domains,
	"domains: node i in domain i % N, readers too (1)"),
    OPT("join_at", O_DBL, join_at,
	"seconds; > 0: the last domain's nodes and readers join then (0)"),
    OPT("join_window", O_DBL, join_window,
	"seconds of the joined domain's reads counted for its remote-miss "
	"share (60)"),
    OPT("random_puts", O_BOOL, random_puts,
	"trace: put each new block on a uniformly random segment, as "
	"Mooncake's allocator, not the least-used one as this project's "
	"master (0)"),
    OPT("warmup", O_BOOL, warmup,
	"warm the joining domain with the hottest objects (domain-aware) (0)"),
    OPT("warmup_max_copies", O_U32, warmup_max_copies,
	"most copies one warmup queues (64)"),
    OPT("warmup_max_bytes", O_SIZE, warmup_max_bytes,
	"most bytes one warmup copies (1G)"),
    OPT("eviction_high_watermark_ratio", O_DBL, evict_high,
	"evict when a node's used/capacity passes this (0.90)"),
    OPT("default_kv_lease_ttl", O_DBL, kv_lease_ttl,
	"ms a read keeps its object from eviction, as the master's (10000)"),
    OPT("eviction_ratio", O_DBL, evict_ratio,
	"share of capacity one eviction frees (0.05)"),
    OPT("project_load", O_BOOL, project_load,
	"policy rfc: add a granted copy's expected reads to its target's "
	"load (1; policy auto always projects)"),
    OPT("read_load_order", O_BOOL, read_load_order,
	"readers pass node loads to mcrepl_order_replicas (0; policy auto "
	"always does)"),
    OPT("quiet", O_BOOL, quiet, "print no per-interval rows (0)"),
    OPT("compare", O_STR, compare,
	"\"cfgA;cfgB\": configurations of name=value, side by side"),
    OPT("plot", O_STR, plot, "write a gnuplot PNG of max/mean over time"),
};

#define N_OPTS (sizeof(opts) / sizeof(opts[0]))

void sim_opts_init(struct sim_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nodes = 64;
	o->hosts_per_node = 1;
	o->domains = 1;
	o->keys = 100000;
	o->workload = SIM_ZIPF;
	o->theta = 0.99;
	o->shift_period = 20;
	o->shift_fraction = 1;
	o->speedup = 1;
	o->rate = 100000;
	o->object_size = 1 << 20;
	o->nic_gbps = 100;
	o->copy_share = 0.5;
	o->latency_ms = 0.5;
	o->task_fetch_ms = 10;
	o->interval = 1;
	o->seed = 1;
	o->tick_ms = 1;
	o->admission_batch = 256;
	o->load_period_ms = 100;
	o->evict_high = 0.90;
	o->evict_ratio = 0.05;
	o->kv_lease_ttl = 10000;
	o->project_load = true;
	o->join_window = 60;
	o->warmup_max_copies = 64;
	o->warmup_max_bytes = 1ULL << 30;
	mcrepl_config_init(&o->cfg);
}

static int bad(const char *name, const char *value, const char *why)
{
	fprintf(stderr, "mcrepl-sim: --%s %s: %s\n", name, value, why);
	return -1;
}

static int parse_u64(const char *s, uint64_t *out, bool size)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	if (size && *end) {
		const char *units = "KMGT";
		const char *u = strchr(units, *end);

		if (!u || end[1])
			return -1;
		for (long i = 0; i <= u - units; i++) {
			if (v > (~0ULL >> 10))
				return -1;
			v <<= 10;
		}
		end++;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, bool *out)
{
	if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "on")) {
		*out = true;
		return 0;
	}
	if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "off")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int parse_workload(const char *s, enum sim_workload *w)
{
	if (!strcmp(s, "zipf"))
		*w = SIM_ZIPF;
	else if (!strcmp(s, "uniform"))
		*w = SIM_UNIFORM;
	else if (!strcmp(s, "shifting"))
		*w = SIM_SHIFTING;
	else if (!strcmp(s, "trace"))
		*w = SIM_TRACE;
	else
		return -1;
	return 0;
}

static int set_opt(struct sim_opts *o, const struct opt *d, const char *v)
{
	char *field = (char *)o + d->off;
	uint64_t u = 0;
	char *end;

	switch (d->type) {
	case O_U32:
		if (parse_u64(v, &u, false) || u > UINT32_MAX)
			return bad(d->name, v, "not a 32-bit unsigned integer");
		*(uint32_t *)(void *)field = (uint32_t)u;
		return 0;
	case O_U64:
	case O_SIZE:
		if (parse_u64(v, &u, d->type == O_SIZE))
			return bad(d->name, v, "not an unsigned integer");
		*(uint64_t *)(void *)field = u;
		return 0;
	case O_DBL:
		errno = 0;
		*(double *)(void *)field = strtod(v, &end);
		if (errno || end == v || *end ||
		    !isfinite(*(double *)(void *)field))
			return bad(d->name, v, "not a number");
		return 0;
	case O_BOOL:
		if (parse_bool(v, (bool *)(void *)field))
			return bad(d->name, v, "not a boolean (1/0)");
		return 0;
	case O_STR:
		*(const char **)(void *)field = v;
		return 0;
	case O_WORKLOAD:
		if (parse_workload(v, &o->workload))
			return bad(d->name, v,
				   "not zipf, uniform, shifting or trace");
		return 0;
	}
	return -1;
}

/* borrowed: value dies after the call (a --compare list). */
static int set_named(struct sim_opts *o, const char *name, const char *value,
		     bool borrowed)
{
	mcrepl_status st;

	for (size_t i = 0; i < N_OPTS; i++) {
		const struct opt *d = &opts[i];

		if (strcmp(d->name, name))
			continue;
		if (borrowed && (d->type == O_STR || d->type == O_WORKLOAD)) {
			fprintf(stderr,
				"mcrepl-sim: %s cannot change within "
				"--compare\n",
				name);
			return -1;
		}
		return set_opt(o, d, value);
	}
	st = mcrepl_config_set(&o->cfg, name, value);
	if (st == MCREPL_OK)
		return 0;
	if (st == MCREPL_ENOENT) {
		fprintf(stderr,
			"mcrepl-sim: unknown option --%s (see --help)\n", name);
		return -1;
	}
	return bad(name, value, mcrepl_strerror(st));
}

int sim_opts_set(struct sim_opts *o, const char *name, const char *value)
{
	return set_named(o, name, value, false);
}

static bool is_sim_opt(const char *name)
{
	for (size_t i = 0; i < N_OPTS; i++)
		if (!strcmp(opts[i].name, name))
			return true;
	return false;
}

int sim_opts_apply(struct sim_opts *o, const char *list)
{
	char buf[1024], *save = NULL;

	if (strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "mcrepl-sim: configuration too long\n");
		return -1;
	}
	strcpy(buf, list);
	for (char *tok = strtok_r(buf, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		char name[128];

		if (!eq || eq == tok || (size_t)(eq - tok) >= sizeof(name)) {
			fprintf(stderr, "mcrepl-sim: '%s': want name=value\n",
				tok);
			return -1;
		}
		memcpy(name, tok, (size_t)(eq - tok));
		name[eq - tok] = '\0';
		if (set_named(o, name, eq + 1, true))
			return -1;
		if (is_sim_opt(name)) {
			size_t len = strlen(o->sim_label);

			snprintf(o->sim_label + len, sizeof(o->sim_label) - len,
				 "%s%s", len ? " " : "", tok);
		}
	}
	return 0;
}

/* "--name value" or "--name=value"; "--workload trace FILE". */
int sim_opts_parse(struct sim_opts *o, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char name[128];
		const char *arg = argv[i], *eq, *value;
		size_t len;

		if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
			sim_opts_usage(stdout);
			return 1;
		}
		if (strncmp(arg, "--", 2) != 0) {
			fprintf(stderr, "mcrepl-sim: unexpected '%s'\n", arg);
			return -1;
		}
		arg += 2;
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		if (len == 0 || len >= sizeof(name)) {
			fprintf(stderr, "mcrepl-sim: bad option '%s'\n",
				argv[i]);
			return -1;
		}
		memcpy(name, arg, len);
		name[len] = '\0';
		if (!strcmp(name, "quiet") && !eq) {
			o->quiet = true;
			continue;
		}
		if (!eq && i + 1 >= argc) {
			fprintf(stderr, "mcrepl-sim: --%s needs a value\n",
				name);
			return -1;
		}
		value = eq ? eq + 1 : argv[++i];
		if (sim_opts_set(o, name, value))
			return -1;
		if (!strcmp(name, "workload") && o->workload == SIM_TRACE &&
		    !o->trace_path) {
			if (i + 1 >= argc || !strncmp(argv[i + 1], "--", 2)) {
				fprintf(stderr, "mcrepl-sim: --workload trace "
						"needs a FILE\n");
				return -1;
			}
			o->trace_path = argv[++i];
		}
	}
	if (o->trace_path)
		o->workload = SIM_TRACE;
	return 0;
}

void sim_opts_label(const struct sim_opts *o, char *buf, size_t cap)
{
	mcrepl_config def;
	size_t n_knobs, len = 0;
	const mcrepl_config_knob *k = mcrepl_config_knobs(&n_knobs);

	mcrepl_config_init(&def);
	buf[0] = '\0';
	for (size_t i = 0; i < n_knobs; i++) {
		char a[64], b[64];
		const char *name = k[i].name;

		if (mcrepl_config_get(&o->cfg, name, a, sizeof(a)) ||
		    mcrepl_config_get(&def, name, b, sizeof(b)) ||
		    !strcmp(a, b))
			continue;
		if (!strncmp(name, KNOB_PREFIX, strlen(KNOB_PREFIX)))
			name += strlen(KNOB_PREFIX);
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0,
					"%s%s=%s", len ? " " : "", name, a);
	}
	if (!len)
		len = (size_t)snprintf(buf, cap, "defaults");
	if (o->sim_label[0] && len < cap)
		snprintf(buf + len, cap - len, " | %s", o->sim_label);
}

void sim_opts_usage(FILE *f)
{
	size_t n_knobs;
	const mcrepl_config_knob *k = mcrepl_config_knobs(&n_knobs);

	fprintf(f, "usage: mcrepl-sim [--name value | --name=value]...\n"
		   "Simulate libmcrepl dynamic hot replication on a cluster "
		   "of memory nodes.\n\nsimulator:\n");
	for (size_t i = 0; i < N_OPTS; i++)
		fprintf(f, "  --%-30s %s\n", opts[i].name, opts[i].help);
	fprintf(f, "\nlibrary knobs (mcrepl_config_set; the prefix is "
		   "optional inside --compare):\n");
	for (size_t i = 0; i < n_knobs; i++)
		fprintf(f, "  --%s (%s)\n      %s\n", k[i].name,
			k[i].default_text, k[i].help);
	fprintf(f, "\nexample:\n  mcrepl-sim --nodes 64 --keys 100000 "
		   "--workload zipf --theta 0.99 --compare \"mode=off;"
		   "mode=enforce max_memory_replicas=16\"\n");
}
