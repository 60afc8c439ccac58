/*
 * mcrepl-cli: object operations against mcrepl-master and its workers,
 * through the store client (runtime/client/store_client.h).
 *
 *   mcrepl-cli [--master host:port] [--tenant T] [--replicas N]
 *              [--local_host H] [--principal P --secret_file F]
 *              [--tls_ca CA [--tls_cert C --tls_key K]]
 *              COMMAND ARGS
 *
 * Exit status: 0 success, 1 the operation failed (one line on stderr),
 * 2 usage error. `exist` exits 0 when the key exists and 1 when not.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mcrepl/mcrepl.h>

#include "auth.h"
#include "client_auth.h"
#include "flagparse.h"
#include "store_client.h"

#define CLI_MAX_INPUT (1ull << 34)

struct cli {
	const char *master, *etcd_endpoints, *tenant, *local_host, *domain;
	const char *principal, *secret_file; /* NULL: no credential */
	struct tls_files tls;		     /* NULLs: plain TCP */
	uint32_t replicas;
	char etcd[1100]; /* "etcd://" + --etcd_endpoints */
	const char *cmd;
	const char *args[2];
	int n_args;
};

#define O(f) FLAG_AT(struct cli, f)
static const struct flag cli_flags[] = {
    {.name = "master",
     .type = FLAG_STRP,
     .off = O(master),
     .def = "127.0.0.1:50051",
     .help = "host:port of mcrepl-master (its RPC port)",
     .min = 1},
    {.name = "etcd_endpoints",
     .type = FLAG_STRP,
     .off = O(etcd_endpoints),
     .help = "host:port[,host:port]: follow the leader master elected "
	     "there (HA), instead of --master"},
    {.name = "tenant",
     .type = FLAG_STRP,
     .off = O(tenant),
     .def = "default",
     .help = "the tenant whose keys these are",
     .min = 1},
    {.name = "replicas",
     .type = FLAG_U32,
     .off = O(replicas),
     .def = "1",
     .help = "replicas of a put",
     .min = 1,
     .max = 16},
    {.name = "local_host",
     .type = FLAG_STRP,
     .off = O(local_host),
     .help = "this host's id: prefer its replicas"},
    {.name = "domain",
     .type = FLAG_STRP,
     .off = O(domain),
     .help = "the reader's domain (else $MOONCAKE_STORE_DOMAIN)"},
    {.name = "principal",
     .type = FLAG_STRP,
     .off = O(principal),
     .help = "authenticate as P to a master started with --auth_file "
	     "(with --secret_file)"},
    {.name = "secret_file",
     .type = FLAG_STRP,
     .off = O(secret_file),
     .help = "the file holding the secret of --principal"},
    {.name = "tls_ca",
     .type = FLAG_STRP,
     .off = O(tls.ca),
     .help = "TLS to the master: its certificate must chain to this CA and "
	     "name the host of --master"},
    {.name = "tls_cert",
     .type = FLAG_STRP,
     .off = O(tls.cert),
     .help = "client certificate for a master with mutual TLS (with "
	     "--tls_key); with --principal P and no --secret_file, "
	     "authenticate by it (CN = P, auth=cert)"},
    {.name = "tls_key",
     .type = FLAG_STRP,
     .off = O(tls.key),
     .help = "the private key of --tls_cert"},
};

static const struct flag_set cli_set = {
    .prog = "mcrepl-cli",
    .usage = "[--master host:port | --etcd_endpoints host:port[,host:port]] "
	     "[--tenant T] [--replicas N] [--local_host H] [--domain D] "
	     "COMMAND",
    .intro =
	"commands:\n"
	"  put KEY FILE|-     store FILE (or stdin) under KEY\n"
	"  get KEY [FILE|-]   write KEY's bytes to FILE (default stdout)\n"
	"  rm KEY             remove KEY\n"
	"  exist KEY          print yes/no (exit 0 yes, 1 no)\n"
	"  stat KEY           list KEY's readable replicas (not a read: no "
	"heat)\n"
	"  segments           list mounted segments\n"
	"  metrics            print the master's metrics\n"
	"  drain HOST         copy the objects only HOST holds to other hosts "
	"(admin), waiting up to 60 s; then stop HOST's worker\n"
	"  warmup DOMAIN      copy the hottest objects into DOMAIN "
	"(domain-aware master)",
    .title = "flags",
    .width = 14,
    .flags = cli_flags,
    .n = sizeof(cli_flags) / sizeof(cli_flags[0]),
};

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mcrepl-cli: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see --help)\n");
	return 2;
}

/* 0 to run, -1 when --help or --version was printed, 2 after a usage
 * error. */
static int parse(struct cli *c, int argc, char **argv)
{
	const char *args[3];
	struct flag_args a = {.v = args, .cap = 3};
	int rc;

	memset(c, 0, sizeof(*c));
	flags_defaults(&cli_set, c);
	rc = flags_parse_args(&cli_set, c, NULL, argc, argv, &a);
	if (rc)
		return rc > 0 ? -1 : 2;
	if (c->etcd_endpoints) { /* HA: follow the leader */
		if (strlen(c->etcd_endpoints) + 8 > sizeof(c->etcd))
			return usage_error("--etcd_endpoints too long");
		snprintf(c->etcd, sizeof(c->etcd), "etcd://%s",
			 c->etcd_endpoints);
		c->master = c->etcd;
	}
	if (!a.n)
		return usage_error("no command given");
	c->cmd = args[0];
	for (int i = 1; i < a.n; i++)
		c->args[c->n_args++] = args[i];
	return 0;
}

/* Arity of each command: min and max arguments. */
static int check_args(const struct cli *c)
{
	static const struct {
		const char *name;
		int min, max;
	} cmds[] = {{"put", 2, 2},     {"get", 1, 2},	 {"rm", 1, 1},
		    {"exist", 1, 1},   {"stat", 1, 1},	 {"segments", 0, 0},
		    {"metrics", 0, 0}, {"warmup", 1, 1}, {"drain", 1, 1}};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		if (strcmp(cmds[i].name, c->cmd))
			continue;
		if (c->n_args < cmds[i].min || c->n_args > cmds[i].max)
			return usage_error("wrong number of arguments for %s",
					   c->cmd);
		if (cmds[i].min && !c->args[0][0])
			return usage_error("empty %s",
					   !strcmp(c->cmd, "warmup")  ? "domain"
					   : !strcmp(c->cmd, "drain") ? "host"
								      : "key");
		return 0;
	}
	return usage_error("unknown command '%s'", c->cmd);
}

/* ---- input ------------------------------------------------------------------ */

static int read_stream(FILE *f, const char *name, uint8_t **buf, size_t *len)
{
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *p = malloc(cap), *q;

	while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n < cap)
			continue;
		q = cap < CLI_MAX_INPUT ? realloc(p, cap * 2) : NULL;
		if (!q) {
			free(p);
			p = NULL;
			break;
		}
		p = q;
		cap *= 2;
	}
	if (!p || ferror(f)) {
		fprintf(stderr, "mcrepl-cli: cannot read %s: %s\n", name,
			p ? strerror(errno) : "too large or out of memory");
		free(p);
		return 1;
	}
	*buf = p;
	*len = n;
	return 0;
}

static int read_input(const char *path, uint8_t **buf, size_t *len)
{
	FILE *f;
	int rc;

	if (!strcmp(path, "-"))
		return read_stream(stdin, "stdin", buf, len);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "mcrepl-cli: cannot open %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	rc = read_stream(f, path, buf, len);
	fclose(f);
	return rc;
}

/* ---- commands ------------------------------------------------------------------ */

/* The client's errors name their operation ("get: key 'k' not found");
 * what is added only when they do not. */
static int op_failed(store_client *sc, const char *what)
{
	const char *e = store_client_error(sc);
	size_t n = strlen(what);

	if (strncmp(e, what, n) == 0 && e[n] == ':')
		fprintf(stderr, "mcrepl-cli: %s%s\n", e, client_auth_hint(e));
	else
		fprintf(stderr, "mcrepl-cli: %s: %s%s\n", what, e,
			client_auth_hint(e));
	return 1;
}

static int cmd_put(store_client *sc, const struct cli *c)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = read_input(c->args[1], &buf, &len);

	if (rc)
		return rc;
	if (len == 0) {
		free(buf);
		fprintf(stderr, "mcrepl-cli: put %s: %s is empty\n", c->args[0],
			c->args[1]);
		return 1;
	}
	rc = store_client_put(sc, c->args[0], buf, len);
	free(buf);
	if (rc)
		return op_failed(sc, "put");
	printf("put %s: %zu bytes, %u replica(s)\n", c->args[0], len,
	       c->replicas);
	return 0;
}

static int write_output(const char *path, const void *buf, uint64_t len)
{
	FILE *f = path && strcmp(path, "-") ? fopen(path, "wb") : stdout;
	int bad;

	if (!f) {
		fprintf(stderr, "mcrepl-cli: cannot create %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	bad = fwrite(buf, 1, (size_t)len, f) != len;
	bad |= f == stdout ? fflush(f) != 0 : fclose(f) != 0;
	if (bad)
		fprintf(stderr, "mcrepl-cli: cannot write %s: %s\n",
			path ? path : "stdout", strerror(errno));
	return bad;
}

static int cmd_get(store_client *sc, const struct cli *c)
{
	struct store_read_info info;
	const char *path = c->n_args > 1 ? c->args[1] : "-";
	uint64_t len = 0;
	void *buf = NULL;
	int rc;

	if (store_client_get(sc, c->args[0], &buf, &len, &info))
		return op_failed(sc, "get");
	rc = write_output(path, buf, len);
	free(buf);
	if (!rc)
		fprintf(strcmp(path, "-") ? stdout : stderr,
			"get %s: %llu bytes from segment %llu on %s%s%s\n",
			c->args[0], (unsigned long long)len,
			(unsigned long long)info.segment_id, info.host_id,
			info.dynamic ? " (dynamic replica)" : "",
			info.hedged ? " (hedged: the first replica was slow)"
				    : "");
	return rc;
}

static int cmd_rm(store_client *sc, const struct cli *c)
{
	if (store_client_remove(sc, c->args[0]))
		return op_failed(sc, "remove");
	printf("removed %s\n", c->args[0]);
	return 0;
}

static int cmd_exist(store_client *sc, const struct cli *c)
{
	bool yes = false;

	if (store_client_exist(sc, c->args[0], &yes))
		return op_failed(sc, "exist");
	printf("%s\n", yes ? "yes" : "no");
	return yes ? 0 : 1;
}

static int cmd_stat(store_client *sc, const struct cli *c)
{
	struct store_object_info *o = malloc(sizeof(*o));

	if (!o) {
		fprintf(stderr, "mcrepl-cli: out of memory\n");
		return 1;
	}
	if (store_client_stat(sc, c->args[0], o)) {
		free(o);
		return op_failed(sc, "stat");
	}
	printf("key %s: %llu bytes, version %llu, %zu readable replica(s)\n",
	       c->args[0], (unsigned long long)o->size,
	       (unsigned long long)o->version, o->n_replicas);
	printf("%-8s %-20s %-10s %-22s %-9s %s\n", "SEGMENT", "HOST", "DOMAIN",
	       "ENDPOINT", "STATUS", "KIND");
	for (size_t i = 0; i < o->n_replicas; i++) {
		const struct store_replica_info *r = &o->replicas[i];

		printf("%-8llu %-20s %-10s %-22s %-9s %s\n",
		       (unsigned long long)r->segment_id, r->host_id, r->domain,
		       r->endpoint, r->complete ? "COMPLETE" : "PROCESSING",
		       r->dynamic ? "dynamic" : "put");
	}
	free(o);
	return 0;
}

static int cmd_segments(store_client *sc)
{
	struct store_segment_info *s = NULL;
	size_t n = 0;

	if (store_client_stats(sc, &s, &n, NULL))
		return op_failed(sc, "segments");
	printf("%-8s %-20s %-10s %-22s %14s %14s %10s\n", "SEGMENT", "HOST",
	       "DOMAIN", "ENDPOINT", "CAPACITY", "USED", "READS");
	for (size_t i = 0; i < n; i++)
		printf("%-8llu %-20s %-10s %-22s %14llu %14llu %10llu\n",
		       (unsigned long long)s[i].segment_id, s[i].host_id,
		       s[i].domain, s[i].endpoint,
		       (unsigned long long)s[i].capacity,
		       (unsigned long long)s[i].used,
		       (unsigned long long)s[i].reads);
	free(s);
	return 0;
}

static int cmd_metrics(store_client *sc)
{
	char *text = NULL;

	if (store_client_stats(sc, NULL, NULL, &text))
		return op_failed(sc, "metrics");
	fputs(text, stdout);
	free(text);
	return 0;
}

static int cmd_warmup(store_client *sc, const struct cli *c)
{
	uint32_t queued = 0;

	if (store_client_warmup(sc, c->args[0], 0, 0, &queued))
		return op_failed(sc, "warmup");
	printf("warmup of %s: %u copies queued\n", c->args[0], queued);
	return 0;
}

/* Drain HOST: ask, then ask again for progress until nothing is left,
 * nothing more can move, or 60 s passed. */
static int cmd_drain(store_client *sc, const struct cli *c)
{
	struct store_drain_info d;
	uint64_t queued = 0;

	for (int t = 0; t < 600; t++) {
		if (store_client_drain(sc, c->args[0], &d))
			return op_failed(sc, "drain");
		queued += d.copies_queued;
		if (d.objects_left == 0 || d.copies_pending == 0)
			break;
		nanosleep(&(struct timespec){0, 100 * 1000000L}, NULL);
	}
	printf("drain %s: %u segment(s), %llu copies queued, %llu object(s) "
	       "left (%llu no other segment can take)\n",
	       c->args[0], d.segments, (unsigned long long)queued,
	       (unsigned long long)d.objects_left,
	       (unsigned long long)d.no_target);
	return d.objects_left ? 1 : 0;
}

static int run(store_client *sc, const struct cli *c)
{
	if (!strcmp(c->cmd, "drain"))
		return cmd_drain(sc, c);
	if (!strcmp(c->cmd, "put"))
		return cmd_put(sc, c);
	if (!strcmp(c->cmd, "get"))
		return cmd_get(sc, c);
	if (!strcmp(c->cmd, "rm"))
		return cmd_rm(sc, c);
	if (!strcmp(c->cmd, "exist"))
		return cmd_exist(sc, c);
	if (!strcmp(c->cmd, "stat"))
		return cmd_stat(sc, c);
	if (!strcmp(c->cmd, "segments"))
		return cmd_segments(sc);
	if (!strcmp(c->cmd, "warmup"))
		return cmd_warmup(sc, c);
	return cmd_metrics(sc);
}

int main(int argc, char **argv)
{
	struct store_client_config cfg;
	struct client_auth auth;
	store_client *sc = NULL;
	struct cli c;
	char err[512];
	int rc = parse(&c, argc, argv);

	if (rc)
		return rc < 0 ? 0 : rc;
	rc = check_args(&c);
	if (rc)
		return rc;
	store_client_config_init(&cfg);
	cfg.replicas = c.replicas;
	cfg.local_host = c.local_host;
	cfg.domain = c.domain;
	if (client_auth_setup(&auth, c.principal, c.secret_file, &c.tls, false,
			      err, sizeof(err))) {
		fprintf(stderr, "mcrepl-cli: %s\n", err);
		client_auth_free(&auth);
		return 2;
	}
	cfg.cred = auth.has_cred ? &auth.cred : NULL;
	cfg.tls = auth.tls;
	if (store_client_open(&sc, c.master, c.tenant, &cfg, err,
			      sizeof(err))) {
		fprintf(stderr, "mcrepl-cli: %s%s\n", err,
			client_auth_hint(err));
		client_auth_free(&auth);
		return 1;
	}
	rc = run(sc, &c);
	store_client_close(sc);
	client_auth_free(&auth);
	return rc;
}
