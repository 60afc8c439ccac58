/* mcrepl-worker flags (see flagparse.h for the syntax). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mcrepl/config.h>
#include <mcrepl/domain.h>
#include <mcrepl/types.h>

#include "defaults.h"
#include "flagparse.h"
#include "log.h"
#include "flags.h"
#include "netlimits.h"

#define XSTR(x) #x
#define STR(x) XSTR(x)
#define DOMAIN_RULE                                                            \
	"up to " STR(MCREPL_DOMAIN_MAX) " characters of A-Z a-z 0-9 . _ - "    \
					"(empty = default)"

static bool domain_ok(const char *v)
{
	return mcrepl_domain_is_valid(v);
}

#define O(f) FLAG_AT(struct worker_flags, f)
#define S(f) FLAG_STR_AT(struct worker_flags, f)
static const struct flag flags[] = {
    {.name = "log_level",
     .type = FLAG_STR,
     S(log_level),
     .def = "info",
     .help = "log lines at this level and above: error, warn, info (mounts, "
	     "leader changes, transport), debug",
     .choices = LOG_LEVEL_CHOICES},
    {.name = "master",
     .type = FLAG_STR,
     S(master),
     .def = "127.0.0.1:50051",
     .help = "mcrepl-master RPC address host:port",
     .min = 1},
    {.name = "host_id",
     .type = FLAG_STR,
     S(host_id),
     .def = "",
     .help = "host identity (default: hostname)",
     .min = 1},
    {.name = "domain",
     .type = FLAG_STR,
     S(domain),
     .def = "",
     .help =
	 "domain of the segments (default: $MOONCAKE_STORE_DOMAIN, else default)",
     .valid = domain_ok,
     .rule = DOMAIN_RULE},
    {.name = "segment_size",
     .type = FLAG_SIZE,
     .off = O(segment_size),
     .def = "1G",
     .help = "bytes per segment; K, M, G suffixes",
     .min = 4096},
    {.name = "segments",
     .type = FLAG_U32,
     .off = O(segments),
     .def = "1",
     .help = "segments to mount",
     .min = 1,
     .max = 64},
    {.name = "hugepages",
     .type = FLAG_BOOL,
     .off = O(hugepages),
     .def = "false",
     .help = "try huge pages first (falls back to normal pages)"},
    {.name = "data_address",
     .type = FLAG_STR,
     S(data_address),
     .def = "127.0.0.1",
     .help = "data port bind address (0.0.0.0 = every address)"},
    {.name = "advertise_address",
     .type = FLAG_STR,
     S(advertise_address),
     .def = "",
     .help =
	 "address given to the master for this worker's data port (default: "
	 "--data_address, or the first non-loopback IPv4 address when that is "
	 "0.0.0.0)"},
    {.name = "data_port",
     .type = FLAG_U32,
     .off = O(data_port),
     .def = "0",
     .help = "data port (0 = pick one)",
     .max = 65535},
    {.name = "data_idle_timeout_ms",
     .type = FLAG_U32,
     .off = O(data_idle_timeout_ms),
     .def = "60000",
     .help = "close a data connection idle this long (0 = never)"},
    {.name = "metrics_port",
     .type = FLAG_I32,
     .off = O(metrics_port),
     .def = "-1",
     .help = "HTTP /metrics port (-1 = off, 0 = pick one)",
     .min = -1,
     .max = 65535},
    {.name = "transport",
     .type = FLAG_STR,
     S(transport),
     .def = "auto",
     .help = "copy engine: auto|tcp|rdma",
     .choices = "auto|tcp|rdma"},
    {.name = "rdma_device",
     .type = FLAG_STR,
     S(rdma_device),
     .def = "",
     .help = "RDMA device (default: first active port)"},
    {.name = "rdma_port",
     .type = FLAG_U32,
     .off = O(rdma_port),
     .def = "0",
     .help = "rdma_cm port (0 = 20886)",
     .max = 65535},
    {.name = "max_copies",
     .type = FLAG_U32,
     .off = O(max_copies),
     .def = "8",
     .help = "copies in flight at once",
     .min = 1},
    {.name = "max_copy_bytes",
     .type = FLAG_SIZE,
     .off = O(max_copy_bytes),
     .def = "256M",
     .help = "bytes of copies in flight at once (0 = no bound; one copy "
	     "larger than the bound runs alone)"},
    {.name = "copy_timeout_ms",
     .type = FLAG_U32,
     .off = O(copy_timeout_ms),
     .def = FLAG_DEFAULT(COPY_TIMEOUT_MS_DEFAULT),
     .help = "per-copy timeout (keep it below the master's "
	     "dynamic_replication_lease_ttl_seconds, 30 s by default; 0 = no "
	     "timeout)"},
    {.name = "drain_timeout_ms",
     .type = FLAG_U32,
     .off = O(drain_timeout_ms),
     .def = FLAG_DEFAULT(WORKER_DRAIN_TIMEOUT_MS_DEFAULT),
     .help =
	 "on SIGTERM, first have the master copy the objects only this "
	 "worker holds to other workers, waiting up to this long (0 = unmount "
	 "at once)"},
    {.name = "poll_interval_ms",
     .type = FLAG_U32,
     .off = O(poll_interval_ms),
     .def = "20",
     .help = "FetchTasks poll period",
     .min = 1},
    {.name = "principal",
     .type = FLAG_STR,
     S(principal),
     .def = "",
     .help =
	 "worker principal to authenticate to the master as (its auth file)"},
    {.name = "secret_file",
     .type = FLAG_STR,
     S(secret_file),
     .def = "",
     .help = "file whose first line is the principal's secret (mode 600)"},
    {.name = "tls_cert",
     .type = FLAG_STR,
     S(tls_cert),
     .def = "",
     .help = "PEM certificate: /metrics over TLS, and the client certificate "
	     "shown to a master with mutual TLS (with --tls_key; with "
	     "--principal and no --secret_file: authenticate by it, CN = "
	     "principal)"},
    {.name = "tls_key",
     .type = FLAG_STR,
     S(tls_key),
     .def = "",
     .help = "PEM private key of --tls_cert (mode 600)"},
    {.name = "tls_ca",
     .type = FLAG_STR,
     S(tls_ca),
     .def = "",
     .help =
	 "PEM CA: talk TLS to the master, whose certificate must chain to it "
	 "and name the host of --master"},
    {.name = "insecure",
     .type = FLAG_BOOL,
     .off = O(insecure),
     .def = "false",
     .help = "without --principal, serve a non-loopback --data_address anyway"},
    {.name = "insecure_no_grants_for_benchmarks",
     .type = FLAG_BOOL,
     .off = O(no_grants),
     .def = "false",
     .help = "read and write without checking grants (anyone reaching the "
	     "data port may): only the baseline of the benchmark that "
	     "measures their cost, with a master started alike; refused "
	     "(exit 78) unless --data_address is loopback"},
    {.name = "etcd_endpoints",
     .type = FLAG_STR,
     S(etcd_endpoints),
     .def = "",
     .help =
	 "etcd host:port[,host:port...]: follow the master leader named there "
	 "instead of --master (docs/HA.md)"},
    {.name = "ha_key",
     .type = FLAG_STR,
     S(ha_key),
     .def = "/mcrepl/master/leader",
     .help = "etcd key naming the master leader",
     .min = 1},
};

static const struct flag_set worker_set = {
    .prog = "mcrepl-worker",
    .title = "worker flags",
    .epilog = "Prints 'mcrepl-worker ready client_id=... data_port=... "
	      "segments=N segment_ids=ID,... transport=...' once mounted. "
	      "Exits 2 on an invalid flag, 78 on a configuration that cannot "
	      "work (refused by the master for good, protected mode, files, "
	      "--insecure_no_grants_for_benchmarks off loopback), 1 on other "
	      "failures.",
    .width = 20,
    .flags = flags,
    .n = sizeof(flags) / sizeof(flags[0]),
    .next = &net_data_flags,
};

/* The table's defaults, then the host name and $MOONCAKE_STORE_DOMAIN. */
static void defaults(struct worker_flags *f)
{
	const char *env = getenv("MOONCAKE_STORE_DOMAIN");

	memset(f, 0, sizeof(*f));
	flags_defaults(&worker_set, f);
	if (gethostname(f->host_id, sizeof(f->host_id)) != 0 || !f->host_id[0])
		snprintf(f->host_id, sizeof(f->host_id), "localhost");
	f->host_id[sizeof(f->host_id) - 1] = '\0';
	snprintf(f->domain, sizeof(f->domain), "%s",
		 env && env[0] ? env : "default");
}

const struct flag_set *worker_flag_set(void)
{
	return &worker_set;
}

int worker_flags_parse(struct worker_flags *f, int argc, char **argv)
{
	int rc;

	defaults(f);
	rc = flags_parse(&worker_set, f, NULL, argc, argv);
	if (rc == 0 && !mcrepl_domain_is_valid(f->domain)) {
		fprintf(stderr,
			"mcrepl-worker: $MOONCAKE_STORE_DOMAIN: invalid value "
			"'%s' for --domain; allowed: %s\n",
			f->domain, DOMAIN_RULE);
		return -1;
	}
	return rc;
}

int worker_flags_warn(const struct worker_flags *f, uint64_t ram_bytes,
		      FILE *out)
{
	mcrepl_config cfg;
	uint64_t total = f->segment_size * f->segments;
	int n = 0;

	mcrepl_config_init(&cfg);
	if (f->copy_timeout_ms > cfg.lease_ttl_ms) {
		fprintf(
		    out,
		    "mcrepl-worker: warning: --copy_timeout_ms %u is longer "
		    "than the master's default copy lease (%llu ms, "
		    "dynamic_replication_lease_ttl_seconds): a slow copy "
		    "outlives its lease and is wasted; lower it\n",
		    f->copy_timeout_ms, (unsigned long long)cfg.lease_ttl_ms);
		n++;
	}
	if (ram_bytes && total > ram_bytes) {
		fprintf(out,
			"mcrepl-worker: warning: --segment_size x --segments = "
			"%llu bytes is more than this host's RAM (%llu bytes); "
			"writes may fail or swap: lower --segment_size\n",
			(unsigned long long)total,
			(unsigned long long)ram_bytes);
		n++;
	}
	return n;
}
