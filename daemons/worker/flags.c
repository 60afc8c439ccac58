/* mcrepl-worker flags (see flagparse.h for the syntax). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flagparse.h"
#include "flags.h"
#include "netlimits.h"

#define O(f) FLAG_AT(struct worker_flags, f)
#define S(f) FLAG_STR_AT(struct worker_flags, f)
static const struct flag flags[] = {
    {"master", FLAG_STR, S(master), "127.0.0.1:50051",
     "mcrepl-master RPC address host:port", .min = 1},
    {"host_id", FLAG_STR, S(host_id), "", "host identity (default: hostname)",
     .min = 1},
    {"domain", FLAG_STR, S(domain), "",
     "domain of the segments (default: $MOONCAKE_STORE_DOMAIN, else default)"},
    {"segment_size", FLAG_SIZE, O(segment_size), 0, "1G",
     "bytes per segment; K, M, G suffixes", .min = 4096},
    {"segments", FLAG_U32, O(segments), 0, "1", "segments to mount", .min = 1,
     .max = 64},
    {"hugepages", FLAG_BOOL, O(hugepages), 0, "false",
     "try huge pages first (falls back to normal pages)"},
    {"data_address", FLAG_STR, S(data_address), "127.0.0.1",
     "data port bind address, advertised to the master"},
    {"data_port", FLAG_U32, O(data_port), 0, "0", "data port (0 = pick one)",
     .max = 65535},
    {"data_idle_timeout_ms", FLAG_U32, O(data_idle_timeout_ms), 0, "60000",
     "close a data connection idle this long (0 = never)"},
    {"metrics_port", FLAG_I32, O(metrics_port), 0, "-1",
     "HTTP /metrics port (-1 = off, 0 = pick one)", .min = -1, .max = 65535},
    {"transport", FLAG_STR, S(transport), "auto", "copy engine: auto|tcp|rdma",
     .choices = "auto|tcp|rdma"},
    {"rdma_device", FLAG_STR, S(rdma_device), "",
     "RDMA device (default: first active port)"},
    {"rdma_port", FLAG_U32, O(rdma_port), 0, "0", "rdma_cm port (0 = pick one)",
     .max = 65535},
    {"max_copies", FLAG_U32, O(max_copies), 0, "8", "copies in flight at once",
     .min = 1},
    {"max_copy_bytes", FLAG_SIZE, O(max_copy_bytes), 0, "256M",
     "bytes of copies in flight at once"},
    {"copy_timeout_ms", FLAG_U32, O(copy_timeout_ms), 0, "20000",
     "per-copy timeout (keep it below the master's lease TTL, 30 s)"},
    {"poll_interval_ms", FLAG_U32, O(poll_interval_ms), 0, "20",
     "FetchTasks poll period", .min = 1},
};

static const struct flag_set worker_set = {
    .prog = "mcrepl-worker",
    .title = "worker flags",
    .epilog = "Prints 'mcrepl-worker ready client_id=... data_port=... "
	      "segments=... transport=...' once mounted.",
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

int worker_flags_parse(struct worker_flags *f, int argc, char **argv)
{
	defaults(f);
	return flags_parse(&worker_set, f, NULL, argc, argv);
}
