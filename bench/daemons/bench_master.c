/*
 * bench_master: GetReplicaList and BatchGetReplicaList throughput of a real
 * mcrepl-master with dynamic replication off vs enforce, measured in the
 * same run (two masters, loaded alike, measured in alternation; medians;
 * the ratio is the median of the per-round enforce/off ratios).
 * One client process, pipelined requests on the async client.
 *
 *   bench_master [--keys N] [--seconds S] [--reps R] [--compare mode|auth|grants|tls] [--grants]
 * --compare tls: both masters in enforce mode with an auth file (clients
 * authenticate by secret), the second serving TLS (a throw-away EC P-256
 * certificate made with the openssl command): columns plain / tls.
 * --grants (or --compare grants): compare the data-plane checks, grants
 * and stamp tags (both masters mode off; the baseline started with
 * --insecure_no_grants_for_benchmarks on loopback, which signs no grant
 * and tags no stamp): the
 * columns then say nochecks / checks; it also prints grant_tag_ns= and
 * stamp_tag_ns= (ns per grant MAC and per stamp tag, in this process).
 * --compare auth: both masters in enforce mode, one without
 * authentication and one with --auth_file, read by an authenticated
 * client (the handshake once per connection, then every call authorized);
 * the columns and the last line then say auth_off / auth_on.
 * Beside throughput it reads the master's own CPU time (utime + stime from
 * /proc/PID/stat) around each measurement: CPU per read does not depend on
 * how much of the machine other processes take, so cpu_ratio (median of the
 * per-round off/enforce CPU-per-read ratios) is the steadier overhead
 * figure on a shared machine.
 * Last line: master_get_kps_off=<n> master_get_kps_enforce=<n> ratio=<x>
 * batch_kps=<n> cpu_us_off=<x> cpu_us_enforce=<x> cpu_ratio=<x>
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "auth.h"
#include "bench_flags.h"
#include "clock.h"
#include "grant.h"
#include "harness.h"
#include "stamp.h"
#include "util/hash.h"
#include "preload.h"
#include "tls.h"

#define WINDOW 64
#define BATCH 256

struct load {
	struct event_base *base;
	rpc_aclient *ac;
	int m_get, m_batch;
	uint64_t next, total, done, inflight;
	uint64_t rng;
	double deadline;
	bool batch;
	char keybuf[WINDOW][BATCH][32];
};

static const ProtobufCMessageDescriptor *out_desc(int m)
{
	return mcrepl_rpc__master__descriptor.methods[m].output;
}

static void get_issue(struct load *l);

static void on_get(int st, ProtobufCMessage *resp, const char *err, void *arg)
{
	struct load *l = arg;

	if (st != 0) {
		fprintf(stderr, "bench_master: get: %s\n", err);
		exit(1);
	}
	protobuf_c_message_free_unpacked(resp, NULL);
	l->inflight--;
	l->done += l->batch ? BATCH : 1;
	get_issue(l);
}

static void get_issue(struct load *l)
{
	while (l->inflight < (l->batch ? 8 : WINDOW) &&
	       net_now_s() < l->deadline) {
		char *keys[BATCH];
		size_t slot = l->next++ % WINDOW, n = l->batch ? BATCH : 1;

		for (size_t i = 0; i < n; i++) {
			keys[i] = l->keybuf[slot][i];
			snprintf(keys[i], 32, "key-%llu",
				 (unsigned long long)(mcu_splitmix64(&l->rng) %
						      l->total));
		}
		if (l->batch) {
			McreplRpc__BatchGetReplicaListRequest b;

			mcrepl_rpc__batch_get_replica_list_request__init(&b);
			b.tenant = (char *)(uintptr_t) "";
			b.keys = keys;
			b.n_keys = n;
			rpc_aclient_call(l->ac, (uint32_t)l->m_batch, &b.base,
					 out_desc(l->m_batch), on_get, l);
		} else {
			McreplRpc__GetReplicaListRequest g;

			mcrepl_rpc__get_replica_list_request__init(&g);
			g.tenant = (char *)(uintptr_t) "";
			g.key = keys[0];
			rpc_aclient_call(l->ac, (uint32_t)l->m_get, &g.base,
					 out_desc(l->m_get), on_get, l);
		}
		l->inflight++;
	}
	if (l->inflight == 0)
		event_base_loopbreak(l->base);
}

struct server {
	struct proc proc;
	struct load *load;
	struct preload_keeper *keeper; /* the bench segment's heartbeats */
};

/* --compare auth: the throwaway auth file and its two credentials. */
static struct {
	struct harness_auth file;
	struct auth_cred worker, admin;
	char flag[400];
} auth;

static int auth_setup(void)
{
	char err[256];
	const char *skip = "--secret_file=";

	if (harness_auth_setup(&auth.file, NULL) ||
	    auth_cred_load("worker", auth.file.secret_flag[0] + strlen(skip),
			   &auth.worker, err, sizeof(err)) ||
	    auth_cred_load("admin", auth.file.secret_flag[1] + strlen(skip),
			   &auth.admin, err, sizeof(err)))
		return -1;
	snprintf(auth.flag, sizeof(auth.flag), "--auth_file=%s",
		 auth.file.file);
	return 0;
}

/* --compare tls: a throw-away CA and server certificate (EC P-256, SAN
 * 127.0.0.1) beside the auth file, the master's flags and the clients'
 * context. */
static struct {
	char cert[460], key[460];
	SSL_CTX *ctx;
} tls;

static int tls_setup(void)
{
	const char *d = auth.file.dir;
	char ca[400], err[256];

	if (harness_make_certs(d))
		return -1;
	snprintf(tls.cert, sizeof(tls.cert), "--tls_cert=%s/server.pem", d);
	snprintf(tls.key, sizeof(tls.key), "--tls_key=%s/server.key", d);
	snprintf(ca, sizeof(ca), "%s/ca.pem", d);
	tls.ctx = tls_client_ctx(ca, NULL, NULL, err, sizeof(err));
	if (!tls.ctx)
		fprintf(stderr, "bench_master: %s\n", err);
	return tls.ctx ? 0 : -1;
}

static void tls_cleanup(void)
{
	harness_remove_certs(auth.file.dir);
	SSL_CTX_free(tls.ctx);
}

/* A master in mode, with --auth_file when authed, signing no grants when
 * no_grants (the grants baseline), over TLS when with_tls, loaded with
 * keys. */
static int server_start(struct server *s, const char *mode, bool authed,
			bool no_grants, bool with_tls, uint64_t keys)
{
	char mode_flag[64];
	const char *flags[8] = {mode_flag, "--max_batch_keys=4096"};
	size_t nf = 2;
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;
	char addr[64], err[256];
	struct load *l = calloc(1, sizeof(*l));
	rpc_client_config cfg;

	snprintf(mode_flag, sizeof(mode_flag), "--dynamic_replication_mode=%s",
		 mode);
	/* master_start binds loopback, which the no-grants flag requires */
	if (no_grants)
		flags[nf++] = "--insecure_no_grants_for_benchmarks";
	if (authed)
		flags[nf++] = auth.flag;
	if (authed && with_tls) { /* TLS is compared between authed masters */
		flags[nf++] = tls.cert;
		flags[nf++] = tls.key;
	}
	rpc_client_config_init(&cfg);
	cfg.cred = authed ? &auth.admin : NULL;
	cfg.tls = with_tls ? tls.ctx : NULL;
	harness_set_tls(cfg.tls);
	s->keeper = NULL; /* its thread connects at once, with the TLS set */
	if (!l || master_start(&s->proc, flags) != 0 ||
	    !(s->keeper =
		  preload_keep((uint16_t)proc_field(&s->proc, "rpc_port"),
			       authed ? &auth.worker : NULL)) ||
	    preload_master_as((uint16_t)proc_field(&s->proc, "rpc_port"), keys,
			      authed ? &auth.worker : NULL, cfg.cred) != 0) {
		preload_release(s->keeper);
		free(l);
		return -1;
	}
	harness_set_tls(NULL);
	snprintf(addr, sizeof(addr), "127.0.0.1:%llu",
		 (unsigned long long)proc_field(&s->proc, "rpc_port"));
	l->base = event_base_new();
	l->ac = rpc_aclient_create(l->base, addr, &cfg, err, sizeof(err));
	if (!l->ac)
		return -1;
	l->m_get = rpc_method_index(d, "GetReplicaList");
	l->m_batch = rpc_method_index(d, "BatchGetReplicaList");
	l->total = keys;
	l->rng = 42;
	s->load = l;
	return 0;
}

/* keys/s over `seconds` of pipelined reads; *cpu_us: the master's CPU
 * microseconds per key read. */
static double measure(struct server *s, bool batch, double seconds,
		      double *cpu_us)
{
	struct load *l = s->load;
	double t0 = net_now_s(), c0 = proc_cpu_s(s->proc.pid), c1;

	l->batch = batch;
	l->done = l->next = l->inflight = 0;
	l->deadline = t0 + seconds;
	get_issue(l);
	event_base_dispatch(l->base);
	c1 = proc_cpu_s(s->proc.pid);
	if (cpu_us)
		*cpu_us = c0 >= 0 && c1 >= 0 && l->done
			      ? (c1 - c0) * 1e6 / (double)l->done
			      : -1;
	return (double)l->done / (net_now_s() - t0);
}

static void server_stop(struct server *s)
{
	rpc_aclient_destroy(s->load->ac);
	event_base_free(s->load->base);
	free(s->load);
	preload_release(s->keeper);
	proc_stop(&s->proc);
}

static const uint8_t bench_secret[GRANT_SECRET_BYTES] = "bench-grant-key";

/* The MACs the master adds to a read: a grant per replica, a stamp tag
 * per object; over inputs varying with i. */
static uint64_t one_grant_tag(uint64_t i)
{
	static struct grant_key k;

	if (!k.set)
		grant_key_init(&k, bench_secret, 42);
	return grant_tag(&k, DATA_OP_READ, i & 7, i * 4160, 4160, i, i + 20000);
}

static uint64_t one_stamp_tag(uint64_t i)
{
	static struct mcu_siphash_key k;
	const struct stamp_id id = {.incarnation = 42,
				    .object_id = i,
				    .key_hash = i * 0x9e3779b97f4a7c15ULL,
				    .length = 4096};

	if (!k.k0)
		k = stamp_key_derive(bench_secret);
	return stamp_tag(&k, &id);
}

/* ns per call of tag (a MAC): median of 5 runs of 2 M calls. */
static double tag_ns(uint64_t (*tag)(uint64_t i))
{
	volatile uint64_t sink = 0;
	double runs[5], t;

	for (int r = 0; r < 5; r++) {
		t = net_now_s();
		for (uint64_t i = 0; i < 2000000; i++)
			sink += tag(i);
		runs[r] = (net_now_s() - t) * 1e9 / 2000000;
	}
	for (int i = 1; i < 5; i++) /* insertion sort of 5 */
		for (int j = i; j > 0 && runs[j] < runs[j - 1]; j--) {
			t = runs[j];
			runs[j] = runs[j - 1];
			runs[j - 1] = t;
		}
	(void)sink;
	return runs[2];
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum compare { COMPARE_MODE, COMPARE_AUTH, COMPARE_GRANTS, COMPARE_TLS };
_Static_assert(sizeof(enum compare) == sizeof(int), "FLAG_ENUM is an int");

struct master_bench_opts {
	uint64_t keys;
	double seconds;
	int32_t reps;
	enum compare compare;
	bool grants;
};

#define O(f) FLAG_AT(struct master_bench_opts, f)
static const struct flag master_flags[] = {
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(keys),
     .def = "1000000",
     .help = "objects loaded into each master",
     .min = 1,
     .max = 100000000},
    {.name = "seconds",
     .type = FLAG_DOUBLE,
     .off = O(seconds),
     .def = "2",
     .help = "seconds per measurement",
     .dmin = 0.01,
     .dmax = 3600},
    {.name = "reps",
     .type = FLAG_I32,
     .off = O(reps),
     .def = "7",
     .help = "rounds, each measuring both masters",
     .min = 1,
     .max = 16},
    {.name = "compare",
     .type = FLAG_ENUM,
     .off = O(compare),
     .def = "mode",
     .help = "mode: off vs enforce; auth: without vs with --auth_file; "
	     "grants: as --grants; tls: plain vs TLS",
     .choices = "mode|auth|grants|tls"},
    {.name = "grants",
     .type = FLAG_BOOL,
     .off = O(grants),
     .def = "false",
     .help = "compare the data-plane checks (grants, stamp tags) vs none"},
};
#undef O

static const struct flag_set master_set = {
    .prog = "bench_master",
    .intro = "GetReplicaList throughput and master CPU per read, two real "
	     "masters side by side",
    .title = "bench_master flags",
    .width = 8,
    .flags = master_flags,
    .n = sizeof(master_flags) / sizeof(master_flags[0]),
};

/* Per round, sorted after the rounds: off and enforce (or the compared
 * sides) gets/s, batch keys/s, master CPU per read and the ratios. */
struct figures {
	double off[16], enf[16], bat[16], ratio[16];
	double cpu_off[16], cpu_enf[16], cpu_ratio[16];
};

/* reps rounds over both masters, one row each; then the figures sorted. */
static void rounds(struct server *s_off, struct server *s_enf, int reps,
		   double secs, const char *a, const char *b, struct figures *f)
{
	printf("%-4s %10s_kps %10s_kps %14s %10s_us %10s_us\n", "rep", a, b,
	       "batch_kps", a, b);
	for (int r = 0; r < reps; r++) {
		/* alternate which mode goes first: drift hits both alike */
		if (r % 2 == 0) {
			f->off[r] = measure(s_off, false, secs, &f->cpu_off[r]);
			f->enf[r] = measure(s_enf, false, secs, &f->cpu_enf[r]);
		} else {
			f->enf[r] = measure(s_enf, false, secs, &f->cpu_enf[r]);
			f->off[r] = measure(s_off, false, secs, &f->cpu_off[r]);
		}
		f->ratio[r] = f->enf[r] / f->off[r];
		f->cpu_ratio[r] =
		    f->cpu_enf[r] > 0 ? f->cpu_off[r] / f->cpu_enf[r] : 0;
		f->bat[r] = measure(s_enf, true, secs, NULL);
		printf("%-4d %14.0f %14.0f %14.0f %12.3f %12.3f\n", r,
		       f->off[r], f->enf[r], f->bat[r], f->cpu_off[r],
		       f->cpu_enf[r]);
	}
	qsort(f->off, (size_t)reps, sizeof(double), cmp);
	qsort(f->enf, (size_t)reps, sizeof(double), cmp);
	qsort(f->bat, (size_t)reps, sizeof(double), cmp);
	qsort(f->ratio, (size_t)reps, sizeof(double), cmp);
	qsort(f->cpu_off, (size_t)reps, sizeof(double), cmp);
	qsort(f->cpu_enf, (size_t)reps, sizeof(double), cmp);
	qsort(f->cpu_ratio, (size_t)reps, sizeof(double), cmp);
}

static void cleanup(bool by_auth, bool by_tls)
{
	if (by_tls)
		tls_cleanup();
	if (by_auth)
		harness_auth_cleanup(&auth.file);
}

int main(int argc, char **argv)
{
	double loaded;
	struct figures f;
	int m;
	struct server s_off, s_enf;
	bool by_auth, by_grants, by_tls;
	/* the two sides' names: mode off/enforce, or auth off/on */
	const char *a = "off", *b = "enforce";
	struct master_bench_opts o = {0};
	int st = bench_flags(&master_set, &o, argc, argv);

	if (st >= 0)
		return st;
	by_auth = o.compare == COMPARE_AUTH || o.compare == COMPARE_TLS;
	by_tls = o.compare == COMPARE_TLS;
	by_grants = o.grants || o.compare == COMPARE_GRANTS;
	signal(SIGPIPE, SIG_IGN);
	loaded = net_now_s();
	if (by_auth) {
		a = "auth_off";
		b = "auth_on";
		if (auth_setup()) {
			fprintf(stderr, "bench_master: no auth file\n");
			return 1;
		}
	}
	if (by_tls) { /* both authenticated, in enforce mode */
		a = "plain";
		b = "tls";
		if (tls_setup()) {
			fprintf(stderr, "bench_master: no certificates\n");
			return 1;
		}
	}
	if (by_grants) {
		a = "nochecks";
		b = "checks";
		by_auth = false;
	}
	if (server_start(&s_off, by_auth ? "enforce" : "off", by_tls, by_grants,
			 false, o.keys) ||
	    server_start(&s_enf, by_grants ? "off" : "enforce", by_auth, false,
			 by_tls, o.keys)) {
		fprintf(stderr, "bench_master: cannot start/load masters\n");
		cleanup(by_auth, by_tls);
		return 1;
	}
	printf("loaded %llu keys into two masters in %.1f s\n",
	       (unsigned long long)o.keys, net_now_s() - loaded);
	if (by_grants)
		printf("grant_tag_ns=%.1f stamp_tag_ns=%.1f\n",
		       tag_ns(one_grant_tag), tag_ns(one_stamp_tag));
	rounds(&s_off, &s_enf, o.reps, o.seconds, a, b, &f);
	server_stop(&s_off);
	server_stop(&s_enf);
	m = o.reps / 2;
	printf("master_get_kps_%s=%.0f master_get_kps_%s=%.0f ratio=%.3f "
	       "batch_kps=%.0f cpu_us_%s=%.3f cpu_us_%s=%.3f "
	       "cpu_ratio=%.3f\n",
	       a, f.off[m], b, f.enf[m], f.ratio[m], f.bat[m], a, f.cpu_off[m],
	       b, f.cpu_enf[m], f.cpu_ratio[m]);
	cleanup(by_auth, by_tls);
	return 0;
}
