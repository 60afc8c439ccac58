/* Local cluster start/stop and the segment -> worker map (see cluster.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster.h"
#include "mcrepl/domain.h"

#define MAX_MASTER_FLAGS 48

/* Split the --master_flags string on blanks into a NULL-terminated list
 * of pointers into buf. -1 when there are too many. */
static int split_flags(const char *s, char *buf, size_t cap, const char **out,
		       size_t max)
{
	size_t n = 0;
	char *save = NULL, *tok;

	snprintf(buf, cap, "%s", s ? s : "");
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (n + 1 >= max)
			return -1;
		out[n++] = tok;
	}
	out[n] = NULL;
	return 0;
}

static int start_master(struct cluster *c, const struct bench_opts *o,
			const char *mode, char *err, size_t errlen)
{
	static char buf[4096];
	const char *flags[MAX_MASTER_FLAGS + 4];
	char mode_flag[64];
	bool domain = strcmp(mode, "domain") == 0;
	size_t n = 0;

	/* domain: first-stage enforce plus domain-aware admission. */
	snprintf(mode_flag, sizeof(mode_flag), "--dynamic_replication_mode=%s",
		 domain ? "enforce" : mode);
	flags[n++] = mode_flag;
	if (domain)
		flags[n++] = "--dynamic_replication_domain_aware=true";
	flags[n++] = c->auth_flag;
	if (strlen(o->master_flags ? o->master_flags : "") >= sizeof(buf) ||
	    split_flags(o->master_flags, buf, sizeof(buf), flags + n,
			MAX_MASTER_FLAGS) != 0) {
		snprintf(err, errlen,
			 "--master_flags: too long (at most %d "
			 "flags)",
			 MAX_MASTER_FLAGS - 1);
		return -1;
	}
	if (master_start(&c->master, flags) != 0) {
		snprintf(err, errlen,
			 "mcrepl-master did not start (bad --master_flags? "
			 "MCREPL_BIN_DIR=%s)",
			 getenv("MCREPL_BIN_DIR") ? getenv("MCREPL_BIN_DIR")
						  : "unset");
		return -1;
	}
	snprintf(c->addr, sizeof(c->addr), "127.0.0.1:%u",
		 (unsigned)proc_field(&c->master, "rpc_port"));
	return 0;
}

static int start_worker(struct cluster *c, uint32_t i, uint64_t seg_bytes,
			char *err, size_t errlen)
{
	char bin[512], master[96], host[32], size[48], domain[32];
	char *argv[] = {
	    (char *)(uintptr_t)harness_bin("mcrepl-worker", bin, sizeof(bin)),
	    master,
	    host,
	    size,
	    (char *)(uintptr_t) "--data_port=0",
	    c->auth.principal_flag[0],
	    c->auth.secret_flag[0],
	    c->fixed_domains ? domain : NULL,
	    NULL};

	snprintf(master, sizeof(master), "--master=%s", c->addr);
	snprintf(host, sizeof(host), "--host_id=host-%u", i + 1);
	snprintf(size, sizeof(size), "--segment_size=%llu",
		 (unsigned long long)seg_bytes);
	snprintf(domain, sizeof(domain), "--domain=%s",
		 c->fixed_domains ? c->domain[i % c->fixed_domains] : "");
	if (proc_start(&c->workers[i], argv, "mcrepl-worker ready", 10000) !=
	    0) {
		snprintf(err, errlen, "mcrepl-worker %u did not start (%s)",
			 i + 1, size);
		return -1;
	}
	c->n_started = i + 1;
	return 0;
}

/* Index of domain d ("" = default) in c->domain[], added when new;
 * UINT32_MAX when full (fixed domains plus as many unexpected ones). */
static uint32_t domain_slot(struct cluster *c, const char *d)
{
	uint32_t k;

	d = mcrepl_domain_name(d);
	for (k = 0; k < c->n_domains; k++)
		if (strcmp(c->domain[k], d) == 0)
			return k;
	if (k == BENCH_MAX_WORKERS)
		return UINT32_MAX;
	snprintf(c->domain[k], sizeof(c->domain[k]), "%.63s", d);
	c->n_domains++;
	return k;
}

/* Domains found in the segments (not fixed up front): sorted by name, so
 * readers are assigned to them the same way in every run. */
static void sort_domains(struct cluster *c)
{
	for (uint32_t i = 1; i < c->n_domains; i++)
		for (uint32_t j = i;
		     j > 0 && strcmp(c->domain[j - 1], c->domain[j]) > 0; j--) {
			char tmp[sizeof(c->domain[0])];

			memcpy(tmp, c->domain[j], sizeof(tmp));
			memcpy(c->domain[j], c->domain[j - 1], sizeof(tmp));
			memcpy(c->domain[j - 1], tmp, sizeof(tmp));
			for (uint32_t w = 0; w < c->n_workers; w++)
				if (c->worker_domain[w] == j)
					c->worker_domain[w] = j - 1;
				else if (c->worker_domain[w] == j - 1)
					c->worker_domain[w] = j;
		}
}

static uint32_t worker_slot(struct cluster *c,
			    const struct store_segment_info *s)
{
	uint32_t w, d;

	for (w = 0; w < c->n_workers; w++)
		if (c->worker_client[w] == s->client_id)
			return w;
	if (w == BENCH_MAX_WORKERS)
		return UINT32_MAX;
	d = domain_slot(c, s->domain);
	if (d == UINT32_MAX)
		return UINT32_MAX;
	c->worker_client[w] = s->client_id;
	snprintf(c->name[w], sizeof(c->name[w]), "%.63s", s->host_id);
	c->worker_domain[w] = d;
	c->n_workers++;
	return w;
}

/* Segment map from Stats; 0 when at least `want` workers are listed
 * (and, with fixed domains, in no other domain than those). */
static int map_segments(struct cluster *c, store_client *sc, uint32_t want)
{
	struct store_segment_info *segs = NULL;
	size_t n = 0;

	if (store_client_stats(sc, &segs, &n, NULL) != 0)
		return -1;
	c->n_segs = 0;
	c->n_workers = 0;
	c->n_domains = c->fixed_domains;
	for (size_t i = 0; i < n && c->n_segs < BENCH_MAX_SEGS; i++) {
		uint32_t w = worker_slot(c, &segs[i]);

		if (w == UINT32_MAX)
			break;
		c->seg_id[c->n_segs] = segs[i].segment_id;
		c->seg_worker[c->n_segs++] = w;
	}
	free(segs);
	if (!c->fixed_domains)
		sort_domains(c);
	if (c->fixed_domains && c->n_domains != c->fixed_domains)
		return -1;
	return c->n_workers >= want && c->n_workers > 0 ? 0 : -1;
}

static int wait_workers(struct cluster *c, uint32_t want, char *err,
			size_t errlen)
{
	struct store_client_config cfg;
	store_client *sc = NULL;
	int rc = -1;

	store_client_config_init(&cfg);
	cfg.cred = c->cred;
	cfg.tls = c->tls;
	if (store_client_open(&sc, c->addr, NULL, &cfg, err, errlen) != 0)
		return -1;
	for (int tries = 0; tries < 100 && rc != 0; tries++) {
		rc = map_segments(c, sc, want);
		if (rc != 0)
			harness_sleep_ms(100);
	}
	if (rc != 0 && c->fixed_domains && c->n_domains != c->fixed_domains)
		snprintf(err, errlen,
			 "master %s lists workers in %u domains, want "
			 "d0..d%u only",
			 c->addr, c->n_domains, c->fixed_domains - 1);
	else if (rc != 0)
		snprintf(err, errlen, "master %s lists %u workers, want %u",
			 c->addr, c->n_workers, want ? want : 1);
	store_client_close(sc);
	return rc;
}

/* Point our stderr at path while the daemons are forked (they inherit
 * it); *saved is the original to restore, or -1 when path is NULL. */
static int redirect_stderr(const char *path, int *saved, char *err,
			   size_t errlen)
{
	int fd;

	*saved = -1;
	if (!path)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(err, errlen, "--daemon_log %s: %s", path,
			 strerror(errno));
		return -1;
	}
	fflush(stderr);
	*saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	dup2(fd, STDERR_FILENO);
	close(fd);
	return 0;
}

int cluster_start(struct cluster *c, const struct bench_opts *o,
		  const char *mode, uint64_t segment_bytes, char *err,
		  size_t errlen)
{
	int saved, rc;

	memset(c, 0, sizeof(*c));
	c->master.pid = -1;
	if (o->master) {
		snprintf(c->addr, sizeof(c->addr), "%s", o->master);
		struct tls_files tf = {
		    .cert = o->tls_cert, .key = o->tls_key, .ca = o->tls_ca};

		if (client_auth_setup(&c->given, o->principal, o->secret_file,
				      &tf, false, err, errlen))
			return -1;
		c->cred = c->given.has_cred ? &c->given.cred : NULL;
		c->tls = c->given.tls;
		return wait_workers(c, 1, err, errlen);
	}
	if (harness_auth_setup(&c->auth, NULL) != 0 ||
	    auth_cred_load("admin",
			   c->auth.secret_flag[1] + strlen("--secret_file="),
			   &c->own, err, errlen) != 0) {
		snprintf(err, errlen, "cannot write an auth file");
		return -1;
	}
	c->cred = &c->own;
	snprintf(c->auth_flag, sizeof(c->auth_flag), "--auth_file=%s",
		 c->auth.file);
	for (uint32_t k = 0; o->domains > 1 && k < o->domains; k++)
		snprintf(c->domain[k], sizeof(c->domain[k]), "d%u", k);
	c->fixed_domains = o->domains > 1 ? o->domains : 0;
	if (redirect_stderr(o->daemon_log, &saved, err, errlen) != 0)
		return -1;
	rc = start_master(c, o, mode, err, errlen);
	for (uint32_t i = 0; rc == 0 && i < o->local; i++)
		rc = start_worker(c, i, segment_bytes, err, errlen);
	if (saved >= 0) {
		dup2(saved, STDERR_FILENO);
		close(saved);
	}
	return rc == 0 ? wait_workers(c, o->local, err, errlen) : -1;
}

void cluster_stop(struct cluster *c)
{
	/* All at once first: each proc_stop() may wait up to 3 s. */
	for (uint32_t i = 0; i < c->n_started; i++)
		kill(c->workers[i].pid, SIGTERM);
	for (uint32_t i = c->n_started; i > 0; i--)
		proc_stop(&c->workers[i - 1]);
	c->n_started = 0;
	if (c->master.pid > 0)
		proc_stop(&c->master);
	harness_auth_cleanup(&c->auth);
	client_auth_free(&c->given);
}

int cluster_worker_of(const struct cluster *c, uint64_t segment_id)
{
	for (size_t i = 0; i < c->n_segs; i++)
		if (c->seg_id[i] == segment_id)
			return (int)c->seg_worker[i];
	return -1;
}

uint32_t cluster_reader_domain(const struct cluster *c, uint32_t reader)
{
	return c->n_domains ? reader % c->n_domains : 0;
}
