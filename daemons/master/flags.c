/* Flags for mcrepl-master (Mooncake's names): the table below is the one
 * place their defaults are written; see flagparse.h for the syntax. */
#include <stdio.h>
#include <string.h>

#include "defaults.h"
#include "flagparse.h"
#include "flags.h"
#include "log.h"
#include "netlimits.h"

#define O(f) FLAG_AT(struct master_flags, f)
static const struct flag flags[] = {
    {.name = "rpc_address",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, rpc_address),
     .def = "",
     .help =
	 "RPC and HTTP bind address (default: 0.0.0.0 with --auth_file, else "
	 "127.0.0.1: protected mode)"},
    {.name = "auth_file",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, auth_file),
     .def = "",
     .help = "principals and secrets (docs/SECURITY.md); every RPC connection "
	     "then authenticates and every call is authorized"},
    {.name = "auth_timeout_ms",
     .type = FLAG_U32,
     .off = O(auth_timeout_ms),
     .def = "5000",
     .help = "close an RPC connection that has not authenticated by then",
     .min = 1},
    {.name = "tls_cert",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, tls_cert),
     .def = "",
     .help = "PEM certificate (chain) of the RPC and HTTP ports: serve TLS "
	     "(with --tls_key)"},
    {.name = "tls_key",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, tls_key),
     .def = "",
     .help = "PEM private key of --tls_cert (mode 600)"},
    {.name = "tls_ca",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, tls_ca),
     .def = "",
     .help = "PEM CA: require RPC clients' certificates signed by it (mutual "
	     "TLS; auth=cert principals log in by their CN)"},
    {.name = "insecure",
     .type = FLAG_BOOL,
     .off = O(insecure),
     .def = "false",
     .help = "without --auth_file, serve a non-loopback --rpc_address anyway "
	     "(anyone who reaches it can use it)"},
    {.name = "insecure_no_grants_for_benchmarks",
     .type = FLAG_BOOL,
     .off = O(opts.grants_off),
     .def = "false",
     .help = "sign no data-plane grant and no stamp tag (workers started "
	     "alike serve anyone): only the baseline of the benchmark that "
	     "measures their cost; refused (exit 78) unless --rpc_address is "
	     "loopback"},
    {.name = "integrity",
     .type = FLAG_BOOL,
     .off = O(opts.integrity),
     .def = "false",
     .help = "require a payload digest with every PutEnd (readers check "
	     "the bytes against it) for tenants whose auth-file line does not "
	     "say integrity=on or off"},
    {.name = "rpc_port",
     .type = FLAG_U32,
     .off = O(rpc_port),
     .def = "50051",
     .help = "RPC port (0 = pick one)",
     .max = 65535},
    {.name = "metrics_port",
     .type = FLAG_U32,
     .off = O(metrics_port),
     .def = "9003",
     .help = "HTTP port for /metrics and /health (0 = pick one)",
     .max = 65535},
    {.name = "client_ttl",
     .type = FLAG_MS,
     .off = O(opts.client_ttl_ms),
     .def = "10",
     .help = "seconds without heartbeat before a client's segments are dropped",
     .min = 100},
    {.name = "default_kv_lease_ttl",
     .type = FLAG_U64,
     .off = O(opts.kv_lease_ttl_ms),
     .def = "10000",
     .help = "read lease granted by each Get, in milliseconds",
     .min = 1},
    {.name = "put_start_discard_timeout_sec",
     .type = FLAG_MS,
     .off = O(opts.put_discard_ms),
     .def = "30",
     .help = "seconds after which a new PutStart of the key may replace a put "
	     "never ended (0 = at once)"},
    {.name = "put_start_release_timeout_sec",
     .type = FLAG_MS,
     .off = O(opts.put_release_ms),
     .def = "600",
     .help = "seconds after which the master reclaims a put never ended (its "
	     "space freed; also when its writer's client id expires)",
     .min = 100},
    {.name = "copy_start_release_timeout_sec",
     .type = FLAG_MS,
     .off = O(opts.copy_release_ms),
     .def = "60",
     .help = "seconds after which the master reclaims an ordinary copy never "
	     "ended (the target freed, the object unpinned; also when the "
	     "CopyStart caller's client id expires)",
     .min = 100},
    {.name = "max_heartbeat_segments",
     .type = FLAG_U32,
     .off = O(opts.max_heartbeat_segments),
     .def = "4096",
     .help = "most segment ids one Heartbeat may name (INVALID_ARGUMENT "
	     "above)",
     .min = 1},
    {.name = "eviction_ratio",
     .type = FLAG_RATIO,
     .off = O(opts.eviction_ratio),
     .def = "0.05",
     .help = "share of a segment's capacity one eviction pass frees"},
    {.name = "eviction_high_watermark_ratio",
     .type = FLAG_RATIO,
     .off = O(opts.eviction_high_watermark),
     .def = "0.90",
     .help = "segment usage above which eviction runs"},
    {.name = "max_batch_keys",
     .type = FLAG_U32,
     .off = O(opts.max_batch_keys),
     .def = "4096",
     .help = "most keys in one BatchGetReplicaList",
     .min = 1},
    {.name = "max_frame_bytes",
     .type = FLAG_U64,
     .off = O(max_frame_bytes),
     .def = "16777216",
     .help = "largest RPC frame accepted",
     .min = 1024},
    {.name = "read_load_order",
     .type = FLAG_BOOL,
     .off = O(opts.read_load_order),
     .def = "false",
     .help =
	 "order a key's replicas by the reads routed to their segments in the "
	 "last second (else: evenly by a per-read salt)"},
    {.name = "enable_proposal_rpc",
     .type = FLAG_BOOL,
     .off = O(opts.enable_proposal_rpc),
     .def = "false",
     .help =
	 "serve SubmitReplicaActionProposal (internal by default, per the RFC)"},
    {.name = "warmup_max_copies",
     .type = FLAG_U32,
     .off = O(opts.warmup_max_copies),
     .def = "64",
     .help = "most copies one warmup of a new domain queues (domain-aware; "
	     "0 = no warmup)"},
    {.name = "warmup_max_bytes",
     .type = FLAG_U64,
     .off = O(opts.warmup_max_bytes),
     .def = "1073741824",
     .help = "most bytes one warmup of a new domain copies (domain-aware; 0 "
	     "= no warmup)"},
    {.name = "sweep_interval_ms",
     .type = FLAG_U32,
     .off = O(sweep_interval_ms),
     .def = "50",
     .help = "period of the lease sweep, client expiry and eviction timer",
     .min = 1},
    {.name = "admission_batch",
     .type = FLAG_U32,
     .off = O(admission_batch),
     .def = "256",
     .help = "most triggers the admission worker judges per turn",
     .min = 1},
    {.name = "log_level",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, log_level),
     .def = "info",
     .help = "log lines at this level and above: error, warn, info (mounts, "
	     "unmounts, expiries, copy outcomes), debug",
     .choices = LOG_LEVEL_CHOICES},
    {.name = "etcd_endpoints",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, etcd_endpoints),
     .def = "",
     .help = "etcd host:port[,host:port...]: campaign for leadership there "
	     "(docs/HA.md); empty = a single master"},
    {.name = "ha_key",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, ha_key),
     .def = "/mcrepl/master/leader",
     .help = "etcd key the masters campaign for (its value: the leader's RPC "
	     "address)",
     .min = 1},
    {.name = "ha_advertise_address",
     .type = FLAG_STR,
     FLAG_STR_AT(struct master_flags, ha_advertise),
     .def = "",
     .help =
	 "host:port clients and workers reach this master's RPC at (default: "
	 "--rpc_address and the bound port; required with a wildcard "
	 "--rpc_address on a multi-host cluster)"},
    {.name = "ha_lease_ttl_ms",
     .type = FLAG_U32,
     .off = O(ha_lease_ttl_ms),
     .def = "3000",
     .help =
	 "etcd lease of the leader (whole seconds); it pauses serving after "
	 "half of it without a confirmed renewal and steps down after all "
	 "of it (sizing: docs/HA.md)",
     .min = 2000,
     .max = 600000},
    {.name = "ha_poll_ms",
     .type = FLAG_U32,
     .off = O(ha_poll_ms),
     .def = "200",
     .help = "how often a standby looks at the leader key",
     .min = 10,
     .max = 60000},
    {.name = "ha_recovery_ms",
     .type = FLAG_U32,
     .off = O(ha_recovery_ms),
     .def = "1000",
     .help =
	 "after winning, for this long (and while a worker re-registers) "
	 "puts, removes, warmups, proposals and reads that find nothing are "
	 "answered 'recovering' (clients ask again; 0 = only while a worker "
	 "re-registers)",
     .max = 600000},
};

static const struct flag_set master_set = {
    .prog = "mcrepl-master",
    .title = "master flags",
    .epilog = "Prints 'mcrepl-master ready rpc_address=A rpc_port=N "
	      "metrics_port=M mode=...' once serving. Exits 2 on an invalid "
	      "flag, 78 on a configuration that cannot work (the auth or TLS "
	      "files, protected mode, --etcd_endpoints, "
	      "--insecure_no_grants_for_benchmarks off loopback), 1 on other "
	      "failures.",
    .width = 34,
    .flags = flags,
    .n = sizeof(flags) / sizeof(flags[0]),
    .next = &net_rpc_flags,
};

const struct flag_set *master_flag_set(void)
{
	return &master_set;
}

/* Every flag at its default (the flags table is the one source of the
 * master's defaults, library knobs from mcrepl_config_init()). */
static void master_flags_defaults(struct master_flags *f)
{
	memset(f, 0, sizeof(*f));
	mcrepl_config_init(&f->opts.cfg);
	flags_defaults(&master_set, f);
}

void master_opts_defaults(struct master_opts *o)
{
	struct master_flags f;

	master_flags_defaults(&f);
	*o = f.opts;
}

int master_flags_parse(struct master_flags *f, int argc, char **argv)
{
	master_flags_defaults(f);
	return flags_parse(&master_set, f, &f->opts.cfg, argc, argv);
}

int master_flags_warn(const struct master_flags *f, FILE *out)
{
	const mcrepl_config *c = &f->opts.cfg;
	int n = 0;

	if (f->opts.eviction_high_watermark <= c->target_high_watermark) {
		fprintf(
		    out,
		    "mcrepl-master: warning: --eviction_high_watermark_ratio "
		    "%.2f is not above --dynamic_replication_target_high_"
		    "watermark %.2f: dynamic copies can fill a segment to "
		    "the point where eviction starts; keep eviction's "
		    "watermark the higher\n",
		    f->opts.eviction_high_watermark, c->target_high_watermark);
		n++;
	} else if (c->room_fill_limit > c->target_high_watermark &&
		   f->opts.eviction_high_watermark < c->room_fill_limit) {
		fprintf(out,
			"mcrepl-master: warning: --eviction_high_watermark_"
			"ratio %.2f is below --dynamic_replication_room_fill_"
			"limit %.2f: a hot copy placed in headroom on a full "
			"cluster starts eviction at once; keep the fill limit "
			"at or below eviction's watermark\n",
			f->opts.eviction_high_watermark, c->room_fill_limit);
		n++;
	}
	if (c->mode == MCREPL_MODE_ENFORCE &&
	    c->lease_ttl_ms < COPY_TIMEOUT_MS_DEFAULT) {
		fprintf(out,
			"mcrepl-master: warning: "
			"--dynamic_replication_lease_ttl_seconds %.3g is "
			"shorter than the workers' default --copy_timeout_ms "
			"(%d ms): a slow copy is revoked before it times out; "
			"lower the workers' --copy_timeout_ms to match\n",
			(double)c->lease_ttl_ms / 1000,
			COPY_TIMEOUT_MS_DEFAULT);
		n++;
	}
	return n;
}
