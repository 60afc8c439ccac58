/* Flag table and parsing of mcrepl-sim (flagparse.h does the rest). */
#include <string.h>

#include "flagparse.h"
#include "opts.h"

#define KNOB_PREFIX "dynamic_replication_"

/* FLAG_ENUM stores an int. */
_Static_assert(sizeof(enum sim_workload) == sizeof(int),
	       "enum sim_workload is int-sized");

/* Ranges: check_opts() in sim.c, which checks every configuration of a
 * --compare list as a whole, cross-flag rules too. */
#define O(f) FLAG_AT(struct sim_opts, f)
static const struct flag sim_flags[] = {
    {.name = "nodes",
     .type = FLAG_U32,
     .off = O(nodes),
     .def = "64",
     .help = "memory nodes, 1..100000"},
    {.name = "hosts_per_node",
     .type = FLAG_U32,
     .off = O(hosts_per_node),
     .def = "1",
     .help = "Store clients (segments) per node sharing its NIC"},
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(keys),
     .def = "100000",
     .help = "objects, up to 100000000"},
    {.name = "workload",
     .type = FLAG_ENUM,
     .off = O(workload),
     .def = "zipf",
     .help = "zipf | uniform | shifting | flash | rehot | trace FILE",
     .choices = "zipf|uniform|trace|shifting|flash|rehot"},
    {.name = "trace",
     .type = FLAG_STRP,
     .off = O(trace_path),
     .help = "JSONL trace (same as --workload trace FILE)"},
    {.name = "theta",
     .type = FLAG_DOUBLE,
     .off = O(theta),
     .def = "0.99",
     .help = "Zipf exponent"},
    {.name = "shift_period",
     .type = FLAG_DOUBLE,
     .off = O(shift_period),
     .def = "20",
     .help = "seconds; shifting: the Zipf ranking is redrawn this often; "
	     "rehot: the hot keys go cold, then hot again, this often"},
    {.name = "shift_fraction",
     .type = FLAG_DOUBLE,
     .off = O(shift_fraction),
     .def = "1",
     .help =
	 "shifting, rehot: share of the ranking re-permuted at each redraw, "
	 "[0, 1]"},
    {.name = "flash_at",
     .type = FLAG_DOUBLE,
     .off = O(flash_at),
     .def = "10",
     .help = "seconds; flash: when a key nobody read turns hot"},
    {.name = "flash_seconds",
     .type = FLAG_DOUBLE,
     .off = O(flash_seconds),
     .def = "1",
     .help = "flash: how long the key stays hot"},
    {.name = "flash_share",
     .type = FLAG_DOUBLE,
     .off = O(flash_share),
     .def = "0.5",
     .help = "flash: share of all reads the key takes while hot, [0, 1]"},
    {.name = "speedup",
     .type = FLAG_DOUBLE,
     .off = O(speedup),
     .def = "1",
     .help = "trace time is divided by this"},
    {.name = "rate",
     .type = FLAG_DOUBLE,
     .off = O(rate),
     .def = "100000",
     .help = "reads per second, zipf/uniform"},
    {.name = "object_size",
     .type = FLAG_SIZE,
     .off = O(object_size),
     .def = "1M",
     .help = "bytes, K/M/G suffixes"},
    {.name = "node_memory",
     .type = FLAG_SIZE,
     .off = O(node_memory),
     .def = "0",
     .help = "bytes per node; 0 = twice its share of primaries"},
    {.name = "nic_gbps",
     .type = FLAG_DOUBLE,
     .off = O(nic_gbps),
     .def = "100",
     .help = "NIC bandwidth per node, Gbit/s"},
    {.name = "copy_share",
     .type = FLAG_DOUBLE,
     .off = O(copy_share),
     .def = "0.5",
     .help = "share of a NIC given to copies, (0, 1]"},
    {.name = "latency_ms",
     .type = FLAG_DOUBLE,
     .off = O(latency_ms),
     .def = "0.5",
     .help = "per-copy latency, ms"},
    {.name = "task_fetch_ms",
     .type = FLAG_DOUBLE,
     .off = O(task_fetch_ms),
     .def = "10",
     .help = "delay before the source worker fetches its task, ms"},
    {.name = "duration",
     .type = FLAG_DOUBLE,
     .off = O(duration),
     .def = "0",
     .help = "simulated seconds; 0 = 30, or the whole trace"},
    {.name = "interval",
     .type = FLAG_DOUBLE,
     .off = O(interval),
     .def = "1",
     .help = "seconds per report row"},
    {.name = "seed",
     .type = FLAG_U64,
     .off = O(seed),
     .def = "1",
     .help = "seed of every random stream"},
    {.name = "tick_ms",
     .type = FLAG_U32,
     .off = O(tick_ms),
     .def = "1",
     .help = "clock tick, ms"},
    {.name = "admission_batch",
     .type = FLAG_U32,
     .off = O(admission_batch),
     .def = "256",
     .help = "triggers the admission worker proposes per tick"},
    {.name = "load_period_ms",
     .type = FLAG_U32,
     .off = O(load_period_ms),
     .def = "100",
     .help =
	 "how often the master refreshes read_load for placement, ms; 0 = every interval"},
    {.name = "domains",
     .type = FLAG_U32,
     .off = O(domains),
     .def = "1",
     .help = "domains: node i in domain i % N, readers too"},
    {.name = "join_at",
     .type = FLAG_DOUBLE,
     .off = O(join_at),
     .def = "0",
     .help = "seconds; > 0: the last domain's nodes and readers join then"},
    {.name = "join_window",
     .type = FLAG_DOUBLE,
     .off = O(join_window),
     .def = "60",
     .help =
	 "seconds of the joined domain's reads counted for its remote-miss share"},
    {.name = "random_puts",
     .type = FLAG_BOOL,
     .off = O(random_puts),
     .def = "false",
     .help =
	 "trace: put each new block on a uniformly random segment, as Mooncake's allocator, not the least-used one as this project's master"},
    {.name = "warmup",
     .type = FLAG_BOOL,
     .off = O(warmup),
     .def = "false",
     .help = "warm the joining domain with the hottest objects (domain-aware)"},
    {.name = "warmup_max_copies",
     .type = FLAG_U32,
     .off = O(warmup_max_copies),
     .def = "64",
     .help = "most copies one warmup queues"},
    {.name = "warmup_max_bytes",
     .type = FLAG_SIZE,
     .off = O(warmup_max_bytes),
     .def = "1G",
     .help = "most bytes one warmup copies"},
    {.name = "eviction_high_watermark_ratio",
     .type = FLAG_DOUBLE,
     .off = O(evict_high),
     .def = "0.90",
     .help = "evict when a node's used/capacity passes this"},
    {.name = "default_kv_lease_ttl",
     .type = FLAG_DOUBLE,
     .off = O(kv_lease_ttl),
     .def = "10000",
     .help = "ms a read keeps its object from eviction, as the master's"},
    {.name = "eviction_ratio",
     .type = FLAG_DOUBLE,
     .off = O(evict_ratio),
     .def = "0.05",
     .help = "share of capacity one eviction frees"},
    {.name = "project_load",
     .type = FLAG_BOOL,
     .off = O(project_load),
     .def = "true",
     .help =
	 "policy rfc: add a granted copy's expected reads to its target's load (policy auto always projects)"},
    {.name = "read_load_order",
     .type = FLAG_BOOL,
     .off = O(read_load_order),
     .def = "false",
     .help =
	 "readers pass node loads to mcrepl_order_replicas (policy auto always does)"},
    {.name = "quiet",
     .type = FLAG_BOOL,
     .off = O(quiet),
     .def = "false",
     .help = "print no per-interval rows"},
    {.name = "compare",
     .type = FLAG_STRP,
     .off = O(compare),
     .help = "\"cfgA;cfgB\": configurations of name=value, side by side"},
    {.name = "plot",
     .type = FLAG_STRP,
     .off = O(plot),
     .help = "write a gnuplot PNG of max/mean over time"},
};

static const struct flag_set sim_set = {
    .prog = "mcrepl-sim",
    .usage = "[--name value | --name=value]...",
    .intro = "Simulate libmcrepl dynamic hot replication on a cluster of "
	     "memory nodes.",
    .title = "simulator",
    .epilog = "example:\n  mcrepl-sim --nodes 64 --keys 100000 --workload zipf "
	      "--theta 0.99 --compare \"mode=off;mode=enforce "
	      "max_memory_replicas=16\"",
    .width = 30,
    .flags = sim_flags,
    .n = sizeof(sim_flags) / sizeof(sim_flags[0]),
};

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
		const struct flag *fl;
		char name[128];

		if (!eq || eq == tok || (size_t)(eq - tok) >= sizeof(name)) {
			fprintf(stderr, "mcrepl-sim: '%s': want name=value\n",
				tok);
			return -1;
		}
		memcpy(name, tok, (size_t)(eq - tok));
		name[eq - tok] = '\0';
		fl = flags_find(&sim_set, name);
		if (fl && (fl->type == FLAG_STRP || fl->type == FLAG_ENUM)) {
			fprintf(stderr,
				"mcrepl-sim: %s cannot change within "
				"--compare\n",
				name);
			return -1;
		}
		if (flags_set(&sim_set, o, &o->cfg, name, eq + 1, "--compare"))
			return -1;
		if (fl) {
			size_t len = strlen(o->sim_label);

			snprintf(o->sim_label + len, sizeof(o->sim_label) - len,
				 "%s%s", len ? " " : "", tok);
		}
	}
	return 0;
}

/* "--workload trace FILE": FILE is the one argument that is not a flag. */
static int trace_file(struct sim_opts *o, const struct flag_args *a)
{
	if (a->n && (o->workload != SIM_TRACE || o->trace_path)) {
		fprintf(stderr,
			"mcrepl-sim: unexpected argument '%s' (see --help)\n",
			a->v[0]);
		return -1;
	}
	if (a->n)
		o->trace_path = a->v[0];
	if (o->workload == SIM_TRACE && !o->trace_path) {
		fprintf(stderr, "mcrepl-sim: --workload trace needs a FILE\n");
		return -1;
	}
	if (o->trace_path)
		o->workload = SIM_TRACE;
	return 0;
}

int sim_opts_parse(struct sim_opts *o, int argc, char **argv)
{
	const char *args[1];
	struct flag_args a = {.v = args, .cap = 1};
	int rc;

	memset(o, 0, sizeof(*o));
	mcrepl_config_init(&o->cfg);
	flags_defaults(&sim_set, o);
	rc = flags_parse_args(&sim_set, o, &o->cfg, argc, argv, &a);
	if (rc)
		return rc;
	return trace_file(o, &a);
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
