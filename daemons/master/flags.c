/* Flags for mcrepl-master (Mooncake's names): the table below is the one
 * place their defaults are written; see flagparse.h for the syntax. */
#include <stdio.h>
#include <string.h>

#include "flagparse.h"
#include "flags.h"
#include "log.h"
#include "netlimits.h"

#define O(f) FLAG_AT(struct master_flags, f)
static const struct flag flags[] = {
    {"rpc_address", FLAG_STR, FLAG_STR_AT(struct master_flags, rpc_address), "",
     "RPC and HTTP bind address (default: 0.0.0.0 with --auth_file, else "
     "127.0.0.1: protected mode)"},
    {"auth_file", FLAG_STR, FLAG_STR_AT(struct master_flags, auth_file), "",
     "principals and secrets (docs/SECURITY.md); every RPC connection "
     "then authenticates and every call is authorized"},
    {"auth_timeout_ms", FLAG_U32, O(auth_timeout_ms), 0, "5000",
     "close an RPC connection that has not authenticated by then", .min = 1},
    {"tls_cert", FLAG_STR, FLAG_STR_AT(struct master_flags, tls_cert), "",
     "PEM certificate (chain) of the RPC and HTTP ports: serve TLS "
     "(with --tls_key)"},
    {"tls_key", FLAG_STR, FLAG_STR_AT(struct master_flags, tls_key), "",
     "PEM private key of --tls_cert (mode 600)"},
    {"tls_ca", FLAG_STR, FLAG_STR_AT(struct master_flags, tls_ca), "",
     "PEM CA: require RPC clients' certificates signed by it (mutual "
     "TLS; auth=cert principals log in by their CN)"},
    {"insecure", FLAG_BOOL, O(insecure), 0, "false",
     "without --auth_file, serve a non-loopback --rpc_address anyway "
     "(anyone who reaches it can use it)"},
    {"rpc_port", FLAG_U32, O(rpc_port), 0, "50051", "RPC port (0 = pick one)",
     .max = 65535},
    {"metrics_port", FLAG_U32, O(metrics_port), 0, "9003",
     "HTTP port for /metrics and /health (0 = pick one)", .max = 65535},
    {"client_ttl", FLAG_MS, O(opts.client_ttl_ms), 0, "10",
     "seconds without heartbeat before a client's segments are dropped",
     .min = 100},
    {"default_kv_lease_ttl", FLAG_U64, O(opts.kv_lease_ttl_ms), 0, "10000",
     "read lease granted by each Get, in milliseconds", .min = 1},
    {"put_start_discard_timeout_sec", FLAG_MS, O(opts.put_discard_ms), 0, "30",
     "seconds after which a new PutStart of the key may replace a put "
     "never ended"},
    {"put_start_release_timeout_sec", FLAG_MS, O(opts.put_release_ms), 0, "600",
     "seconds after which the master reclaims a put never ended (its "
     "space freed; also when its writer's client id expires)",
     .min = 100},
    {"copy_start_release_timeout_sec", FLAG_MS, O(opts.copy_release_ms), 0,
     "60",
     "seconds after which the master reclaims an ordinary copy never "
     "ended (the target freed, the object unpinned; also when the "
     "CopyStart caller's client id expires)",
     .min = 100},
    {"max_heartbeat_segments", FLAG_U32, O(opts.max_heartbeat_segments), 0,
     "4096",
     "most segment ids one Heartbeat may name (INVALID_ARGUMENT "
     "above)",
     .min = 1},
    {"eviction_ratio", FLAG_RATIO, O(opts.eviction_ratio), 0, "0.05",
     "share of a segment's capacity one eviction pass frees"},
    {"eviction_high_watermark_ratio", FLAG_RATIO,
     O(opts.eviction_high_watermark), 0, "0.90",
     "segment usage above which eviction runs"},
    {"max_batch_keys", FLAG_U32, O(opts.max_batch_keys), 0, "4096",
     "most keys in one BatchGetReplicaList", .min = 1},
    {"max_frame_bytes", FLAG_U64, O(max_frame_bytes), 0, "16777216",
     "largest RPC frame accepted", .min = 1024},
    {"read_load_order", FLAG_BOOL, O(opts.read_load_order), 0, "false",
     "order a key's replicas by the reads routed to their segments in the "
     "last second (else: evenly by a per-read salt)"},
    {"enable_proposal_rpc", FLAG_BOOL, O(opts.enable_proposal_rpc), 0, "false",
     "serve SubmitReplicaActionProposal (internal by default, per the RFC)"},
    {"warmup_max_copies", FLAG_U32, O(opts.warmup_max_copies), 0, "64",
     "most copies one warmup of a new domain queues (domain-aware)"},
    {"warmup_max_bytes", FLAG_U64, O(opts.warmup_max_bytes), 0, "1073741824",
     "most bytes one warmup of a new domain copies (domain-aware)"},
    {"sweep_interval_ms", FLAG_U32, O(sweep_interval_ms), 0, "50",
     "period of the lease sweep, client expiry and eviction timer", .min = 1},
    {"admission_batch", FLAG_U32, O(admission_batch), 0, "256",
     "most triggers the admission worker judges per turn", .min = 1},
    {"log_level", FLAG_STR, FLAG_STR_AT(struct master_flags, log_level), "info",
     "log lines at this level and above: error, warn, info (mounts, "
     "unmounts, expiries, copy outcomes), debug",
     .choices = LOG_LEVEL_CHOICES},
    {"etcd_endpoints", FLAG_STR,
     FLAG_STR_AT(struct master_flags, etcd_endpoints), "",
     "etcd host:port[,host:port...]: campaign for leadership there "
     "(docs/HA.md); empty = a single master"},
    {"ha_key", FLAG_STR, FLAG_STR_AT(struct master_flags, ha_key),
     "/mcrepl/master/leader",
     "etcd key the masters campaign for (its value: the leader's RPC "
     "address)",
     .min = 1},
    {"ha_advertise_address", FLAG_STR,
     FLAG_STR_AT(struct master_flags, ha_advertise), "",
     "host:port clients and workers reach this master's RPC at (default: "
     "--rpc_address and the bound port; required with a wildcard "
     "--rpc_address on a multi-host cluster)"},
    {"ha_lease_ttl_ms", FLAG_U32, O(ha_lease_ttl_ms), 0, "3000",
     "etcd lease of the leader (whole seconds); it stops serving after "
     "half of it without a renewal, a standby takes over after all of it",
     .min = 2000, .max = 600000},
    {"ha_poll_ms", FLAG_U32, O(ha_poll_ms), 0, "200",
     "how often a standby looks at the leader key", .min = 10, .max = 60000},
    {"ha_recovery_ms", FLAG_U32, O(ha_recovery_ms), 0, "1000",
     "after winning, for this long (and while a worker re-registers) puts "
     "and reads that find nothing are answered 'recovering' (clients ask "
     "again)",
     .max = 600000},
};

static const struct flag_set master_set = {
    .prog = "mcrepl-master",
    .title = "master flags",
    .width = 34,
    .flags = flags,
    .n = sizeof(flags) / sizeof(flags[0]),
    .next = &net_rpc_flags,
};

void master_flags_defaults(struct master_flags *f)
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

/* The workers' default --copy_timeout_ms (daemons/worker/flags.c). */
#define WORKER_COPY_TIMEOUT_MS 20000

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
	}
	if (c->mode == MCREPL_MODE_ENFORCE &&
	    c->lease_ttl_ms < WORKER_COPY_TIMEOUT_MS) {
		fprintf(out,
			"mcrepl-master: warning: "
			"--dynamic_replication_lease_ttl_seconds %.3g is "
			"shorter than the workers' default --copy_timeout_ms "
			"(%d ms): a slow copy is revoked before it times out; "
			"lower the workers' --copy_timeout_ms to match\n",
			(double)c->lease_ttl_ms / 1000, WORKER_COPY_TIMEOUT_MS);
		n++;
	}
	return n;
}
