/* Flags for mcrepl-master: `--name value`, `--name=value`, or `name=value`
 * lines in --config FILE. Library knobs are passed to libmcrepl's parser. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"

enum ftype { F_STR, F_U32, F_U64, F_MS, F_RATIO, F_BOOL };

struct flag {
	const char *name;
	enum ftype type;
	size_t off;
	const char *def, *help;
};

#define O(f) offsetof(struct master_flags, f)
static const struct flag flags[] = {
    {"rpc_address", F_STR, O(rpc_address), "0.0.0.0", "RPC bind address"},
    {"rpc_port", F_U32, O(rpc_port), "50051", "RPC port (0 = pick one)"},
    {"metrics_port", F_U32, O(metrics_port), "9003",
     "HTTP port for /metrics and /health (0 = pick one)"},
    {"client_ttl", F_MS, O(opts.client_ttl_ms), "10",
     "seconds without heartbeat before a client's segments are dropped"},
    {"default_kv_lease_ttl", F_U64, O(opts.kv_lease_ttl_ms), "10000",
     "read lease granted by each Get, in milliseconds"},
    {"eviction_ratio", F_RATIO, O(opts.eviction_ratio), "0.05",
     "share of a segment's capacity one eviction pass frees"},
    {"eviction_high_watermark_ratio", F_RATIO, O(opts.eviction_high_watermark),
     "0.90", "segment usage above which eviction runs"},
    {"max_batch_keys", F_U32, O(opts.max_batch_keys), "4096",
     "most keys in one BatchGetReplicaList"},
    {"max_frame_bytes", F_U64, O(max_frame_bytes), "16777216",
     "largest RPC frame accepted"},
    {"read_load_order", F_BOOL, O(opts.read_load_order), "false",
     "order a key's replicas by the reads routed to their segments in the "
     "last second (else: evenly by a per-read salt)"},
    {"enable_proposal_rpc", F_BOOL, O(opts.enable_proposal_rpc), "false",
     "serve SubmitReplicaActionProposal (internal by default, per the RFC)"},
    {"warmup_max_copies", F_U32, O(opts.warmup_max_copies), "64",
     "most copies one warmup of a new domain queues (domain-aware)"},
    {"warmup_max_bytes", F_U64, O(opts.warmup_max_bytes), "1073741824",
     "most bytes one warmup of a new domain copies (domain-aware)"},
    {"sweep_interval_ms", F_U32, O(sweep_interval_ms), "50",
     "period of the lease sweep, client expiry and eviction timer"},
    {"admission_batch", F_U32, O(admission_batch), "256",
     "most triggers the admission worker judges per turn"},
};
#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))

static int set_value(struct master_flags *f, const struct flag *fl,
		     const char *v)
{
	char *p = (char *)f + fl->off, *end;
	double d;
	unsigned long long u;

	errno = 0;
	switch (fl->type) {
	case F_STR:
		if (strlen(v) >= sizeof(f->rpc_address))
			return -1;
		strcpy(p, v);
		return 0;
	case F_BOOL:
		if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "1") &&
		    strcmp(v, "0"))
			return -1;
		*(bool *)(void *)p = !strcmp(v, "true") || !strcmp(v, "1");
		return 0;
	case F_MS:
	case F_RATIO:
		d = strtod(v, &end);
		if (end == v || *end || errno || !isfinite(d) || d < 0 ||
		    (fl->type == F_RATIO && (d <= 0 || d > 1)))
			return -1;
		if (fl->type == F_MS)
			*(uint64_t *)(void *)p = (uint64_t)llround(d * 1000);
		else
			*(double *)(void *)p = d;
		return 0;
	case F_U32:
	case F_U64:
		u = strtoull(v, &end, 10);
		if (end == v || *end || errno || v[0] == '-' ||
		    (fl->type == F_U32 && u > UINT32_MAX))
			return -1;
		if (fl->type == F_U32)
			*(uint32_t *)(void *)p = (uint32_t)u;
		else
			*(uint64_t *)(void *)p = u;
		return 0;
	}
	return -1;
}

static void usage(void)
{
	size_t n;
	const mcrepl_config_knob *k = mcrepl_config_knobs(&n);

	printf("usage: mcrepl-master [--flag value | --flag=value]... "
	       "[--config FILE]\n\nmaster flags:\n");
	for (size_t i = 0; i < N_FLAGS; i++)
		printf("  --%-34s %s (default %s)\n", flags[i].name,
		       flags[i].help, flags[i].def);
	printf("\ndynamic replication (libmcrepl) flags:\n");
	for (size_t i = 0; i < n; i++)
		printf("  --%-34s %s (default %s)\n", k[i].name, k[i].help,
		       k[i].default_text);
	printf("\n  --config FILE   read name=value lines (# comments)\n"
	       "  --help, --version\n");
}

/* Apply name=value; prints the error. */
static int apply(struct master_flags *f, const char *name, const char *v,
		 const char *where);

static int read_config(struct master_flags *f, const char *path)
{
	char line[512], where[600];
	FILE *fp = fopen(path, "r");
	int lineno = 0;

	if (!fp) {
		fprintf(stderr, "mcrepl-master: --config %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), fp)) {
		char *s = line, *eq, *e;

		lineno++;
		s += strspn(s, " \t");
		e = s + strcspn(s, "#\r\n");
		*e = '\0';
		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			*--e = '\0';
		if (!*s)
			continue;
		if (s[0] == '-' && s[1] == '-')
			s += 2;
		eq = strchr(s, '=');
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		if (!eq) {
			fprintf(stderr,
				"mcrepl-master: %s: expected name=value\n",
				where);
			fclose(fp);
			return -1;
		}
		*eq = '\0';
		for (e = eq; e > s && (e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		eq++;
		eq += strspn(eq, " \t");
		if (apply(f, s, eq, where) != 0) {
			fclose(fp);
			return -1;
		}
	}
	fclose(fp);
	return 0;
}

static int apply(struct master_flags *f, const char *name, const char *v,
		 const char *where)
{
	mcrepl_status st;

	if (strcmp(name, "config") == 0)
		return read_config(f, v);
	for (size_t i = 0; i < N_FLAGS; i++) {
		if (strcmp(flags[i].name, name) != 0)
			continue;
		if (set_value(f, &flags[i], v) == 0)
			return 0;
		fprintf(stderr,
			"mcrepl-master: %s: invalid value '%s' for "
			"--%s (%s)\n",
			where, v, name, flags[i].help);
		return -1;
	}
	st = strncmp(name, "dynamic_replication_", 20) == 0
		 ? mcrepl_config_set(&f->opts.cfg, name, v)
		 : MCREPL_ENOENT;
	if (st == MCREPL_OK)
		return 0;
	if (st == MCREPL_ENOENT)
		fprintf(stderr,
			"mcrepl-master: %s: unknown flag --%s (see "
			"--help)\n",
			where, name);
	else
		fprintf(stderr,
			"mcrepl-master: %s: invalid value '%s' for --%s: "
			"%s\n",
			where, v, name, mcrepl_strerror(st));
	return -1;
}

static void defaults(struct master_flags *f)
{
	memset(f, 0, sizeof(*f));
	master_opts_init(&f->opts);
	for (size_t i = 0; i < N_FLAGS; i++)
		set_value(f, &flags[i], flags[i].def);
}

int master_flags_parse(struct master_flags *f, int argc, char **argv)
{
	const char *field = NULL;

	defaults(f);
	for (int i = 1; i < argc; i++) {
		char name[128];
		const char *a = argv[i], *v, *eq;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage();
			return 1;
		}
		if (!strcmp(a, "--version")) {
			printf("mcrepl-master (libmcrepl %s)\n",
			       mcrepl_version());
			return 1;
		}
		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr,
				"mcrepl-master: unexpected argument '%s' "
				"(see --help)\n",
				a);
			return -1;
		}
		a += 2;
		eq = strchr(a, '=');
		if (eq) {
			v = eq + 1;
		} else if (i + 1 < argc) {
			v = argv[++i];
		} else {
			fprintf(stderr, "mcrepl-master: --%s needs a value\n",
				a);
			return -1;
		}
		snprintf(name, sizeof(name), "%.*s",
			 (int)(eq ? (size_t)(eq - a) : strlen(a)), a);
		if (apply(f, name, v, "command line") != 0)
			return -1;
	}
	if (mcrepl_config_validate(&f->opts.cfg, &field) != MCREPL_OK) {
		fprintf(stderr, "mcrepl-master: invalid value for --%s\n",
			field);
		return -1;
	}
	if (f->rpc_port > 65535 || f->metrics_port > 65535 ||
	    f->sweep_interval_ms == 0 || f->admission_batch == 0 ||
	    f->opts.max_batch_keys == 0 || f->max_frame_bytes < 1024) {
		fprintf(stderr,
			"mcrepl-master: ports must be <= 65535, "
			"intervals, batches and frame sizes positive\n");
		return -1;
	}
	return 0;
}
