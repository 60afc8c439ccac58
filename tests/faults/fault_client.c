/*
 * fault_client: the fault suite's driver and invariant auditor.
 *
 *   fault_client list short|full
 *       the case names of a matrix, one a line
 *   fault_client case NAME
 *       runs one case on fresh daemons (master + workers on loopback, via
 *       runtime/common/harness.c): set up, run a client role to its step,
 *       apply the fault to the chosen role, let the system settle
 *       (client_ttl + sweep, plus the dynamic lease and the quarantine for
 *       dynamic copies), audit, and print one line:
 *         ROW id role step fault wrong leaked stuck tasks violations note
 *   fault_client step MASTER TENANT OP KEY PAUSE [ARGS]
 *       one client operation done step by step, for a script (or `case`)
 *       to fault it at a chosen step: at step PAUSE it prints
 *       "PAUSED <step>" and waits for a line on stdin. OPs:
 *         put  KEY PAUSE SIZE REPLICAS     steps put_start put_write
 *                                          put_written put_end
 *         get  KEY PAUSE SIZE [LOCAL_HOST] steps get_list get_read
 *         copy KEY PAUSE SRC_SEG DST_SEG   (ordinary copy) steps
 *                                          copy_start copy_written copy_end
 *       and it ends with "RESULT st=<status> wrong=<bytes>".
 *
 * Object bytes are a pattern of (tenant, key): the driver knows what every
 * key must hold without keeping the bytes. The auditor (audit()):
 *   (a) reads every key the case wrote; a read that succeeds with other
 *       bytes adds the differing bytes to wrong_bytes (an error is fine);
 *   (b) Stats (each segment's used bytes) against Stat of every known key
 *       (each readable replica: size + stamp_bytes rounded up to the 64-byte
 *       unit); the difference is leaked_bytes;
 *   (c) Remove then Put again of every key within lease TTL + sweep; a key
 *       still BUSY / ALREADY_EXISTS after that is a stuck key;
 *   (d) dynamic copy tasks: created == completed + failed + revoked +
 *       inflight in /metrics (each task ends once), inflight 0 after
 *       settling, and at least the tasks the driver caused were created.
 * docs/FAULTS.md explains the matrix and the columns.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "mcrepl.pb-c.h"
#include "netutil.h"
#include "rpc_client.h"
#include "stamp.h"
#include "store_client.h"

#define CLIENT_TTL_MS 2000
#define KV_LEASE_MS 500
#define SWEEP_MS 20
#define DYN_LEASE_MS 3000
#define SMALL (256u << 10)
#define BIG (24u << 20)
#define ALIGN 64u
#define MAX_KEYS 512
#define MAX_W 3

/* ---- object pattern --------------------------------------------------- */

static uint64_t fnv(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *a; a++)
		h = (h ^ (uint8_t)*a) * 1099511628211ULL;
	h = (h ^ '/') * 1099511628211ULL;
	for (; *b; b++)
		h = (h ^ (uint8_t)*b) * 1099511628211ULL;
	return h ? h : 1;
}

static void fill(uint8_t *buf, uint64_t len, const char *tenant,
		 const char *key)
{
	uint64_t x = fnv(tenant, key);

	for (uint64_t i = 0; i < len; i++) {
		if ((i & 7) == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		buf[i] = (uint8_t)(x >> ((i & 7) * 8));
	}
}

/* Bytes of buf[0, len) that differ from (tenant, key)'s pattern of size. */
static uint64_t diff_bytes(const uint8_t *buf, uint64_t len, uint64_t size,
			   const char *tenant, const char *key)
{
	uint8_t *want = malloc(size ? size : 1);
	uint64_t n = 0;

	if (!want)
		return len;
	fill(want, size, tenant, key);
	for (uint64_t i = 0; i < len && i < size; i++)
		n += buf[i] != want[i];
	n += len > size ? len - size : size - len;
	free(want);
	return n;
}

/* A string literal where protobuf-c wants char *. */
static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static void msleep(int ms)
{
	harness_sleep_ms(ms);
}

static uint64_t now_ms(void)
{
	return (uint64_t)net_now_ms();
}

/* ---- raw RPC helpers ---------------------------------------------------- */

static int code_of(const McreplRpc__Result *r)
{
	return r ? (int)r->code : 0;
}

/* harness_call and the Result code: <0 transport, >=0 the code. */
#define RAW(rc, name, req, resp)                                               \
	(resp = (void *)harness_call(rc, name, &(req).base, &st_),             \
	 resp ? code_of((resp)->result) : (st_ ? -abs(st_) : -EIO))

static void free_msg(void *m)
{
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
}

static rpc_client *rpc_to(const char *addr)
{
	rpc_client_config cfg;
	rpc_client *c = NULL;
	char err[256];

	rpc_client_config_init(&cfg);
	cfg.call_timeout_ms = 3000;
	cfg.connect_timeout_ms = 1000;
	if (rpc_client_open(&c, addr, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "fault_client: %s\n", err);
		return NULL;
	}
	return c;
}

/* ---- step mode: one client operation, pausing at a step ----------------- */

static const char *g_pause = "";

static void step(const char *name)
{
	char line[64];

	if (strcmp(name, g_pause) != 0)
		return;
	printf("PAUSED %s\n", name);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return;
}

static struct stamp_id stamp_of(const char *tenant, const char *key,
				uint64_t inc, uint64_t version, uint64_t size,
				uint64_t tag)
{
	return (struct stamp_id){
	    inc, version,
	    stamp_key_hash(tenant, strlen(tenant), key, strlen(key)), size,
	    tag};
}

static int step_put(rpc_client *rc, const char *tenant, const char *key,
		    uint64_t size, uint32_t replicas)
{
	McreplRpc__PutStartRequest req;
	McreplRpc__PutStartResponse *resp;
	McreplRpc__PutEndRequest ereq;
	McreplRpc__PutEndResponse *eresp;
	uint8_t *region;
	uint64_t len = size;
	uint32_t sb;
	char err[256];
	int st, st_ = 0;

	mcrepl_rpc__put_start_request__init(&req);
	req.tenant = (char *)(uintptr_t)tenant;
	req.key = (char *)(uintptr_t)key;
	req.size = size;
	req.replica_num = replicas;
	st = RAW(rc, "PutStart", req, resp);
	if (st || !resp->n_replicas) {
		free_msg(resp);
		return st ? st : -EPROTO;
	}
	step("put_start");
	sb = resp->replicas[0]->stamp_bytes;
	region = malloc(sb + size);
	if (!region) {
		free_msg(resp);
		return -ENOMEM;
	}
	fill(region + sb, size, tenant, key);
	if (sb) {
		struct stamp_id id =
		    stamp_of(tenant, key, resp->incarnation, resp->version,
			     size, resp->stamp_tag);

		stamp_write(region, &id, region + sb);
		len += sb;
	}
	for (size_t i = 0; i < resp->n_replicas; i++) {
		const McreplRpc__Replica *r = resp->replicas[i];

		struct data_grant g = store_replica_grant(r);

		st = store_data_write(r->endpoint, r->segment_id, r->offset,
				      region, len, &g, 5000, err, sizeof(err));
		if (st) {
			fprintf(stderr, "step put: write: %s\n", err);
			break;
		}
		if (i == 0)
			step("put_write");
	}
	free(region);
	step("put_written");
	mcrepl_rpc__put_end_request__init(&ereq);
	ereq.tenant = req.tenant;
	ereq.key = req.key;
	ereq.version = resp->version;
	free_msg(resp);
	if (st)
		return st;
	st = RAW(rc, "PutEnd", ereq, eresp);
	free_msg(eresp);
	step("put_end");
	return st;
}

static int step_get(const char *addr, const char *tenant, const char *key,
		    uint64_t size, const char *local, uint64_t *wrong)
{
	struct store_client_config cfg;
	McreplRpc__GetReplicaListResponse *r = NULL;
	store_client *c;
	uint8_t *buf;
	char err[256];
	int st;

	store_client_config_init(&cfg);
	cfg.local_host = local;
	cfg.rpc_timeout_ms = 3000;
	cfg.data_timeout_ms = 5000;
	if (store_client_open(&c, addr, tenant, &cfg, err, sizeof(err)))
		return -ENOTCONN;
	st = store_client_get_list(c, key, &r);
	if (!st) {
		step("get_list");
		buf = malloc(r->size + STAMP_BYTES);
		st = buf ? store_client_read_list(c, r, buf, NULL) : -ENOMEM;
		if (!st)
			*wrong = diff_bytes(buf, r->size, size, tenant, key);
		free(buf);
		step("get_read");
	}
	if (st)
		fprintf(stderr, "step get: %s\n", store_client_error(c));
	free_msg(r);
	store_client_close(c);
	return st;
}

static int step_copy(rpc_client *rc, const char *tenant, const char *key,
		     uint64_t src, uint64_t dst)
{
	McreplRpc__CopyStartRequest req;
	McreplRpc__CopyStartResponse *resp;
	McreplRpc__CopyEndRequest ereq;
	McreplRpc__CopyEndResponse *eresp;
	struct data_grant sg, tg;
	uint64_t len;
	uint8_t *buf;
	char err[256];
	int st, st_ = 0;

	mcrepl_rpc__copy_start_request__init(&req);
	req.client_id = 4242;
	req.task_id = 0;
	req.tenant = (char *)(uintptr_t)tenant;
	req.key = (char *)(uintptr_t)key;
	req.source_segment_id = src;
	req.target_segment_id = dst;
	st = RAW(rc, "CopyStart", req, resp);
	if (st || !resp->source || !resp->target) {
		free_msg(resp);
		return st ? st : -EPROTO;
	}
	step("copy_start");
	len = resp->source->size + resp->source->stamp_bytes;
	buf = malloc(len);
	sg = store_replica_grant(resp->source);
	tg = store_replica_grant(resp->target);
	st = buf ? store_data_read(resp->source->endpoint,
				   resp->source->segment_id,
				   resp->source->offset, buf, len, &sg, 5000,
				   err, sizeof(err))
		 : -ENOMEM;
	if (!st)
		st = store_data_write(resp->target->endpoint,
				      resp->target->segment_id,
				      resp->target->offset, buf, len, &tg, 5000,
				      err, sizeof(err));
	if (st)
		fprintf(stderr, "step copy: %s\n", err);
	free(buf);
	free_msg(resp);
	step("copy_written");
	mcrepl_rpc__copy_end_request__init(&ereq);
	ereq.client_id = 4242;
	ereq.tenant = req.tenant;
	ereq.key = req.key;
	st = RAW(rc, st ? "CopyRevoke" : "CopyEnd", ereq, eresp);
	free_msg(eresp);
	step("copy_end");
	return st;
}

static int cmd_step(int argc, char **argv)
{
	const char *addr, *tenant, *op, *key;
	uint64_t wrong = 0;
	rpc_client *rc;
	int st;

	if (argc < 6) {
		fprintf(stderr, "usage: fault_client step MASTER TENANT OP KEY "
				"PAUSE [ARGS]\n");
		return 2;
	}
	addr = argv[0];
	tenant = argv[1];
	op = argv[2];
	key = argv[3];
	g_pause = argv[4];
	rc = rpc_to(addr);
	if (!rc) {
		printf("RESULT st=%d wrong=0\n", -ENOTCONN);
		return 1;
	}
	if (!strcmp(op, "put") && argc >= 7)
		st = step_put(rc, tenant, key, strtoull(argv[5], NULL, 0),
			      (uint32_t)strtoul(argv[6], NULL, 0));
	else if (!strcmp(op, "get"))
		st = step_get(addr, tenant, key, strtoull(argv[5], NULL, 0),
			      argc >= 7 ? argv[6] : NULL, &wrong);
	else if (!strcmp(op, "copy") && argc >= 7)
		st = step_copy(rc, tenant, key, strtoull(argv[5], NULL, 0),
			       strtoull(argv[6], NULL, 0));
	else {
		fprintf(stderr, "fault_client step: unknown op %s\n", op);
		return 2;
	}
	rpc_client_close(rc);
	printf("RESULT st=%d wrong=%llu\n", st, (unsigned long long)wrong);
	fflush(stdout);
	return 0;
}

/* ---- the environment: daemons ------------------------------------------- */

static struct {
	struct proc master;
	struct proc w[MAX_W];
	int nw;
	uint16_t port, mport;
	char addr[64];
	const char *mflags[24];
	char portflag[2][40];
	char self[512];
} E;

static const char *const base_mflags[] = {
    "--dynamic_replication_mode=enforce",
    "--dynamic_replication_heat_window_seconds=1",
    "--dynamic_replication_admission_qps_threshold=5",
    "--dynamic_replication_lease_ttl_seconds=3",
    "--dynamic_replication_action_cooldown_seconds=1",
    "--dynamic_replication_recreate_cooldown_seconds=1", "--client_ttl=2",
    "--default_kv_lease_ttl=500", "--sweep_interval_ms=20",
    "--put_start_discard_timeout_sec=1", "--put_start_release_timeout_sec=1",
    "--copy_start_release_timeout_sec=1",
    /* The matrix drives copies with RFC-literal heat (5 reads/s); the
     * auto policy's own admission is tested in check_master. */
    "--dynamic_replication_policy=rfc", NULL};

static int start_master(const char *const *extra)
{
	size_t n = 0;

	for (size_t i = 0; base_mflags[i]; i++)
		E.mflags[n++] = base_mflags[i];
	for (size_t i = 0; extra && extra[i] && n < 20; i++)
		E.mflags[n++] = extra[i];
	E.mflags[n] = NULL;
	if (master_start(&E.master, E.mflags) != 0)
		return -1;
	E.port = (uint16_t)proc_field(&E.master, "rpc_port");
	E.mport = (uint16_t)proc_field(&E.master, "metrics_port");
	snprintf(E.addr, sizeof(E.addr), "127.0.0.1:%u", E.port);
	snprintf(E.portflag[0], sizeof(E.portflag[0]), "--rpc_port=%u", E.port);
	snprintf(E.portflag[1], sizeof(E.portflag[1]), "--metrics_port=%u",
		 E.mport);
	E.mflags[n++] = E.portflag[0];
	E.mflags[n++] = E.portflag[1];
	E.mflags[n] = NULL;
	return 0;
}

/* A new master on the same ports (the old one is gone). */
static int restart_master(void)
{
	for (int i = 0; i < 50; i++) {
		if (master_start(&E.master, E.mflags) == 0)
			return 0;
		msleep(100);
	}
	fprintf(stderr, "fault_client: master restart failed\n");
	return -1;
}

static int start_worker(int i)
{
	char bin[512], master[80], host[32];
	char *argv[] = {
	    bin,  mut("--segment_size=64M"), master,
	    host, mut("--metrics_port=0"),   mut("--poll_interval_ms=10"),
	    NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(master, sizeof(master), "--master=%s", E.addr);
	snprintf(host, sizeof(host), "--host_id=host-%c", 'a' + i);
	return proc_start(&E.w[i], argv, "mcrepl-worker ready", 20000);
}

static store_client *client(const char *tenant, const char *local)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[512];

	store_client_config_init(&cfg);
	cfg.local_host = local;
	cfg.rpc_timeout_ms = 3000;
	cfg.data_timeout_ms = 5000;
	if (store_client_open(&c, E.addr, tenant, &cfg, err, sizeof(err)))
		fprintf(stderr, "fault_client: %s\n", err);
	return c;
}

/* Segments known to the master; -1 on error. */
static int n_segments(void)
{
	store_client *c = client("t1", NULL);
	struct store_segment_info *s = NULL;
	size_t n = 0;
	int st = c ? store_client_stats(c, &s, &n, NULL) : -1;

	free(s);
	store_client_close(c);
	return st ? -1 : (int)n;
}

/* Segments the master lists for client_id. */
static int segments_of_client(uint64_t client_id)
{
	store_client *c = client("t1", NULL);
	struct store_segment_info *s = NULL;
	size_t n = 0;
	int hits = 0;

	if (c && store_client_stats(c, &s, &n, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			hits += s[i].client_id == client_id;
	free(s);
	store_client_close(c);
	return hits;
}

static void wait_segments(int want, int ms)
{
	for (int w = 0; w < ms; w += 50) {
		if (n_segments() >= want)
			return;
		msleep(50);
	}
}

static int start_env(int nw, const char *const *extra)
{
	memset(&E.w, 0, sizeof(E.w));
	for (int i = 0; i < MAX_W; i++)
		E.w[i].pid = -1;
	E.nw = nw;
	if (start_master(extra))
		return -1;
	for (int i = 0; i < nw; i++)
		if (start_worker(i))
			return -1;
	wait_segments(nw, 3000);
	return 0;
}

static void stop_env(void)
{
	for (int i = 0; i < MAX_W; i++) {
		if (E.w[i].pid > 0) {
			kill(E.w[i].pid, SIGCONT);
			proc_kill9(&E.w[i]);
		}
	}
	if (E.master.pid > 0) {
		kill(E.master.pid, SIGCONT);
		proc_kill9(&E.master);
	}
}

static char *master_metrics(void)
{
	store_client *c = client("t1", NULL);
	char *text = NULL;

	if (c && store_client_stats(c, NULL, NULL, &text) != 0)
		text = NULL;
	store_client_close(c);
	return text;
}

static long long mmetric(const char *name)
{
	char *t = master_metrics();
	long long v = t ? metric_value(t, name) : -1;

	free(t);
	return v;
}

static long long wmetric(int i, const char *name)
{
	uint16_t p = (uint16_t)proc_field(&E.w[i], "metrics_port");
	char *page = p ? http_get(p, "/metrics") : NULL;
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
}

/* ---- keys the case wrote ------------------------------------------------- */

static struct akey {
	char tenant[16], key[64];
	uint64_t size;
	int read_st; /* the audit's read: 0 or the status */
} K[MAX_KEYS];
static size_t NK;

static void note_key(const char *tenant, const char *key, uint64_t size)
{
	for (size_t i = 0; i < NK; i++)
		if (!strcmp(K[i].tenant, tenant) && !strcmp(K[i].key, key))
			return;
	if (NK == MAX_KEYS)
		return;
	snprintf(K[NK].tenant, sizeof(K[NK].tenant), "%s", tenant);
	snprintf(K[NK].key, sizeof(K[NK].key), "%s", key);
	K[NK++].size = size;
}

static int put_key(store_client *c, const char *tenant, const char *key,
		   uint64_t size)
{
	uint8_t *buf = malloc(size);
	int st;

	if (!buf)
		return -ENOMEM;
	fill(buf, size, tenant, key);
	note_key(tenant, key, size);
	st = store_client_put(c, key, buf, size);
	if (st)
		fprintf(stderr, "put %s/%s: %s\n", tenant, key,
			store_client_error(c));
	free(buf);
	return st;
}

static int put_keys(const char *tenant, const char *prefix, int n,
		    uint64_t size)
{
	store_client *c = client(tenant, NULL);
	char key[64];
	int ok = 0;

	for (int i = 0; c && i < n; i++) {
		snprintf(key, sizeof(key), "%s-%d", prefix, i);
		ok += put_key(c, tenant, key, size) == 0;
	}
	store_client_close(c);
	return ok;
}

/* ---- the auditor --------------------------------------------------------- */

struct audit {
	uint64_t wrong, leaked, stuck;
	long long created, completed, failed, revoked, inflight;
	bool tasks_ok;
	int violations;
	char note[256];
};

static void note(struct audit *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(struct audit *a, const char *fmt, ...)
{
	size_t n = strlen(a->note);
	va_list ap;

	if (n + 2 >= sizeof(a->note))
		return;
	if (n)
		a->note[n++] = ';';
	va_start(ap, fmt);
	vsnprintf(a->note + n, sizeof(a->note) - n, fmt, ap);
	va_end(ap);
}

/* (a) every key read back: wrong bytes only when a read succeeded. */
static void audit_reads(struct audit *a)
{
	for (size_t i = 0; i < NK; i++) {
		store_client *c = client(K[i].tenant, NULL);
		uint64_t len = 0, w;
		void *buf = NULL;

		if (!c)
			continue;
		K[i].read_st = store_client_get(c, K[i].key, &buf, &len, NULL);
		if (K[i].read_st == 0) {
			w = diff_bytes(buf, len, K[i].size, K[i].tenant,
				       K[i].key);
			if (w)
				fprintf(stderr, "audit: %s/%s: %llu wrong\n",
					K[i].tenant, K[i].key,
					(unsigned long long)w);
			a->wrong += w;
		}
		free(buf);
		store_client_close(c);
	}
}

/* (b) used bytes per segment against the replicas of the known keys. */
static void audit_space(struct audit *a)
{
	store_client *c = client("t1", NULL);
	rpc_client *rc = rpc_to(E.addr);
	struct store_segment_info *s = NULL;
	uint64_t want[64] = {0};
	size_t n = 0;
	int st_ = 0;

	if (!c || !rc || store_client_stats(c, &s, &n, NULL) != 0) {
		note(a, "audit(b): no Stats");
		goto out;
	}
	for (size_t i = 0; i < NK; i++) {
		McreplRpc__StatRequest req;
		McreplRpc__GetReplicaListResponse *r;

		mcrepl_rpc__stat_request__init(&req);
		req.tenant = K[i].tenant;
		req.key = K[i].key;
		if (RAW(rc, "Stat", req, r) == 0) {
			for (size_t j = 0; j < r->n_replicas; j++) {
				const McreplRpc__Replica *p = r->replicas[j];
				uint64_t b = p->size + p->stamp_bytes;

				b = (b + ALIGN - 1) / ALIGN * ALIGN;
				for (size_t k = 0; k < n && k < 64; k++)
					if (s[k].segment_id == p->segment_id)
						want[k] += b;
			}
		}
		free_msg(r);
	}
	for (size_t k = 0; k < n && k < 64; k++) {
		uint64_t d = s[k].used > want[k] ? s[k].used - want[k]
						 : want[k] - s[k].used;

		if (d)
			fprintf(stderr,
				"audit: segment %llu (%s) used %llu, replicas "
				"%llu\n",
				(unsigned long long)s[k].segment_id,
				s[k].host_id, (unsigned long long)s[k].used,
				(unsigned long long)want[k]);
		a->leaked += d;
	}
out:
	free(s);
	rpc_client_close(rc);
	store_client_close(c);
}

/* (c) Remove then Put again of every key within lease TTL + sweep. */
static void audit_stuck(struct audit *a)
{
	bool done[MAX_KEYS] = {0};
	int last[MAX_KEYS] = {0}, rm[MAX_KEYS] = {0};
	uint64_t end = now_ms() + 2 * KV_LEASE_MS + 2 * SWEEP_MS + 500;
	size_t left = NK;

	while (left) {
		for (size_t i = 0; i < NK; i++) {
			store_client *c;
			int st;

			if (done[i])
				continue;
			c = client(K[i].tenant, NULL);
			if (!c)
				break;
			st = store_client_remove(c, K[i].key);
			rm[i] = st;
			/* a put is tried even when the remove was refused */
			st = put_key(c, K[i].tenant, K[i].key, K[i].size);
			last[i] = st;
			if (st == 0) {
				done[i] = true;
				left--;
			}
			store_client_close(c);
		}
		if (!left || now_ms() > end)
			break;
		msleep(100);
	}
	for (size_t i = 0; i < NK; i++) {
		if (done[i])
			continue;
		a->stuck++;
		fprintf(stderr,
			"audit: %s/%s stuck (read %d, remove %d, put %d)\n",
			K[i].tenant, K[i].key, K[i].read_st, rm[i], last[i]);
		if (a->stuck <= 2)
			note(a, "stuck %s/%s: read=%d remove=%d put=%d",
			     K[i].tenant, K[i].key, K[i].read_st, rm[i],
			     last[i]);
	}
}

/* (d) each dynamic copy task ends once. */
static void audit_tasks(struct audit *a, long long caused)
{
	char *t = master_metrics();

	if (!t) {
		a->tasks_ok = false;
		note(a, "audit(d): no metrics");
		return;
	}
	a->created = metric_value(t, "mcrepl_dynamic_copy_tasks_created_total");
	a->completed =
	    metric_value(t, "mcrepl_dynamic_copy_tasks_completed_total");
	a->failed = metric_value(t, "mcrepl_dynamic_copy_tasks_failed_total");
	a->revoked = metric_value(t, "mcrepl_dynamic_copy_tasks_revoked_total");
	a->inflight = metric_value(t, "mcrepl_dynamic_copies_inflight");
	free(t);
	a->tasks_ok =
	    a->created == a->completed + a->failed + a->revoked + a->inflight &&
	    a->inflight == 0 && a->created >= caused;
	if (!a->tasks_ok)
		note(a,
		     "tasks created=%lld completed=%lld failed=%lld "
		     "revoked=%lld inflight=%lld",
		     a->created, a->completed, a->failed, a->revoked,
		     a->inflight);
}

/* caused: dynamic tasks the driver made the current master create (-1: the
 * master restarted, its counters are new; 0 is still checked). */
static void audit(struct audit *a, long long caused)
{
	audit_reads(a);
	audit_space(a);
	audit_tasks(a, caused < 0 ? 0 : caused);
	audit_stuck(a);
	a->violations =
	    (a->wrong > 0) + (a->leaked > 0) + (a->stuck > 0) + !a->tasks_ok;
}

/* ---- children: a client role run with `step` ---------------------------- */

struct child {
	pid_t pid;
	FILE *out;
	int in;
	int st;
	uint64_t wrong;
	bool done;
};

static int spawn(struct child *ch, const char *const *args)
{
	int in[2], out[2];
	const char *argv[16];
	size_t n = 0;

	memset(ch, 0, sizeof(*ch));
	argv[n++] = E.self;
	argv[n++] = "step";
	argv[n++] = E.addr;
	for (size_t i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (pipe(in) || pipe(out))
		return -1;
	fflush(stdout);
	ch->pid = fork();
	if (ch->pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[1]);
		close(out[0]);
		execv(argv[0], (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	ch->in = in[1];
	ch->out = fdopen(out[0], "r");
	return ch->pid > 0 ? 0 : -1;
}

/* Reads the child's lines until PAUSED (true) or its end (false). */
static bool child_wait(struct child *ch)
{
	char line[256];

	while (fgets(line, sizeof(line), ch->out)) {
		if (!strncmp(line, "PAUSED", 6))
			return true;
		if (!strncmp(line, "RESULT", 6)) {
			unsigned long long w = 0;

			sscanf(line, "RESULT st=%d wrong=%llu", &ch->st, &w);
			ch->wrong = w;
			ch->done = true;
		}
	}
	return false;
}

static void child_finish(struct child *ch)
{
	if (ch->pid <= 0)
		return;
	if (write(ch->in, "go\n", 3) < 0) {
		/* gone already */
	}
	close(ch->in);
	child_wait(ch);
	fclose(ch->out);
	kill(ch->pid, SIGCONT);
	waitpid(ch->pid, NULL, 0);
	ch->pid = -1;
}

/* ---- faults --------------------------------------------------------------- */

enum fault { F_KILL9, F_STOP, F_TERM };
static const char *const fault_names[] = {"kill9", "stop", "term"};

/* SIGSTOP past client_ttl, then SIGCONT. */
static void stop_past_ttl(pid_t pid)
{
	kill(pid, SIGSTOP);
	msleep(CLIENT_TTL_MS + 1000);
	kill(pid, SIGCONT);
}

static void fault_child(struct child *ch, enum fault f)
{
	if (f == F_STOP) {
		stop_past_ttl(ch->pid);
		return;
	}
	kill(ch->pid, f == F_KILL9 ? SIGKILL : SIGTERM);
	kill(ch->pid, SIGCONT);
	waitpid(ch->pid, NULL, 0);
	close(ch->in);
	fclose(ch->out);
	ch->pid = -1;
}

/* A daemon faulted; killed ones are started again (a worker as a new
 * process on the same host id, the master on the same ports). */
static void fault_proc(struct proc *p, enum fault f, int worker)
{
	if (f == F_STOP) {
		stop_past_ttl(p->pid);
		return;
	}
	kill(p->pid, SIGCONT);
	if (f == F_KILL9)
		proc_kill9(p);
	else
		proc_stop(p);
	if (worker < 0) {
		restart_master();
		wait_segments(E.nw, 3000);
	} else {
		start_worker(worker);
	}
}

static int worker_of_segment(uint64_t seg)
{
	store_client *c = client("t1", NULL);
	struct store_segment_info *s = NULL;
	size_t n = 0;
	int w = -1;

	if (c && store_client_stats(c, &s, &n, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			if (s[i].segment_id == seg)
				w = s[i].host_id[5] - 'a';
	free(s);
	store_client_close(c);
	return w;
}

static uint64_t segment_of_worker(int w)
{
	store_client *c = client("t1", NULL);
	struct store_segment_info *s = NULL;
	size_t n = 0;
	uint64_t id = 0;

	if (c && store_client_stats(c, &s, &n, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			if (s[i].host_id[5] - 'a' == w)
				id = s[i].segment_id;
	free(s);
	store_client_close(c);
	return id;
}

/* The first replica of tenant/key: its segment, or 0. */
static uint64_t replica_segment(const char *tenant, const char *key)
{
	store_client *c = client(tenant, NULL);
	struct store_object_info o;
	uint64_t seg = 0;

	if (c && store_client_stat(c, key, &o) == 0 && o.n_replicas)
		seg = o.replicas[0].segment_id;
	store_client_close(c);
	return seg;
}

static void settle(bool dynamic)
{
	if (dynamic) {
		for (int w = 0; w < DYN_LEASE_MS + 1000; w += 100) {
			if (mmetric("mcrepl_dynamic_copies_inflight") <= 0)
				break;
			msleep(100);
		}
		msleep(DYN_LEASE_MS + 300); /* quarantined targets come back */
	}
	msleep(CLIENT_TTL_MS + 2 * SWEEP_MS + 600);
}

/* ---- cases ----------------------------------------------------------------- */

enum kind {
	K_PUT,
	K_GET,
	K_COPY,
	K_DYN,
	K_OLDLIST,
	K_COPYEND_OTHER,
	K_DYN_OTHER_KEY,
	K_TERM_LOOP,
	K_STALL,
	K_DOMAINS,
	K_LOST
};

struct fcase {
	char id[64];
	enum kind kind;
	const char *role, *step;
	enum fault fault;
	const char *na; /* unreachable today: why */
};

static struct fcase CASES[256];
static size_t NCASES;

static void add(enum kind k, const char *role, const char *stp, enum fault f,
		const char *na)
{
	struct fcase *c = &CASES[NCASES++];

	c->kind = k;
	c->role = role;
	c->step = stp;
	c->fault = f;
	c->na = na;
	snprintf(c->id, sizeof(c->id), "%s.%s.%s", role, stp, fault_names[f]);
}

static void build_cases(void)
{
	static const char *const put_steps[] = {"put_start", "put_write",
						"put_written", "put_end"};
	static const char *const copy_steps[] = {"copy_start", "copy_written"};
	static const char *const dyn_steps[] = {"dyn_queued", "dyn_started"};

	for (int f = 0; f < 3; f++) {
		for (int s = 0; s < 4; s++)
			add(K_PUT, "writer", put_steps[s], (enum fault)f, NULL);
		for (int s = 0; s < 3; s++)
			add(K_PUT, "master", put_steps[s], (enum fault)f, NULL);
		add(K_GET, "reader", "get_list", (enum fault)f, NULL);
		add(K_GET, "src_worker", "get_list", (enum fault)f, NULL);
		add(K_GET, "master", "get_list", (enum fault)f, NULL);
		for (int s = 0; s < 2; s++) {
			add(K_COPY, "copier", copy_steps[s], (enum fault)f,
			    NULL);
			add(K_COPY, "src_worker", copy_steps[s], (enum fault)f,
			    NULL);
			add(K_COPY, "dst_worker", copy_steps[s], (enum fault)f,
			    NULL);
			add(K_COPY, "master", copy_steps[s], (enum fault)f,
			    NULL);
		}
		for (int s = 0; s < 2; s++) {
			add(K_DYN, "src_worker", dyn_steps[s], (enum fault)f,
			    NULL);
			add(K_DYN, "dst_worker", dyn_steps[s], (enum fault)f,
			    NULL);
			add(K_DYN, "master", dyn_steps[s], (enum fault)f, NULL);
		}
		add(K_DYN, "copier", "dyn_between", (enum fault)f,
		    "the real worker runs DynStart, the copy and DynEnd "
		    "as one task with no pause point; only a stall reaches "
		    "the middle (src_worker.dyn_started); an impersonated "
		    "source reaches it (other_key.dyn_end_other_key)");
		add(K_OLDLIST, "master", "restart_old_lists", (enum fault)f,
		    NULL);
	}
	add(K_COPYEND_OTHER, "other_client", "copy_end_by_other", F_KILL9,
	    NULL);
	add(K_DYN_OTHER_KEY, "other_key", "dyn_end_other_key", F_KILL9, NULL);
	add(K_TERM_LOOP, "worker", "term_under_load_x15", F_TERM, NULL);
	add(K_STALL, "master", "stall_probe", F_KILL9, NULL);
	add(K_DOMAINS, "reader", "invented_domains", F_KILL9, NULL);
	add(K_LOST, "src_worker", "lost_replica_metric", F_KILL9, NULL);
}

static const char *const short_cases[] = {
    "writer.put_start.kill9",
    "reader.get_list.kill9",
    "copier.copy_start.kill9",
    "src_worker.dyn_started.kill9",
    "master.restart_old_lists.kill9",
    "other_client.copy_end_by_other.kill9",
    NULL};

/* ---- case bodies ----------------------------------------------------------- */

static int role_worker(const char *role, int src, int dst)
{
	if (!strcmp(role, "src_worker"))
		return src;
	if (!strcmp(role, "dst_worker"))
		return dst;
	return -1;
}

/* After a master fault: another tenant writes, so regions get reused. */
static void other_tenant(void)
{
	put_keys("t2", "other", 12, SMALL);
}

static long long run_put(const struct fcase *fc, struct audit *a)
{
	const char *args[] = {"t1",	"put", "victim", fc->step,
			      "262144", "2",   NULL};
	struct child ch;

	put_keys("t1", "base", 4, SMALL);
	note_key("t1", "victim", SMALL);
	spawn(&ch, args);
	if (!child_wait(&ch)) {
		note(a, "child ended before %s", fc->step);
		child_finish(&ch);
		return 0;
	}
	if (!strcmp(fc->role, "writer")) {
		fault_child(&ch, fc->fault);
	} else {
		fault_proc(&E.master, fc->fault, -1);
		other_tenant();
	}
	child_finish(&ch);
	return !strcmp(fc->role, "master") && fc->fault != F_STOP ? -1 : 0;
}

static long long run_get(const struct fcase *fc, struct audit *a)
{
	const char *args[] = {"t1", "get", "victim", fc->step, "262144", NULL};
	struct child ch;
	int src;

	put_keys("t1", "base", 4, SMALL);
	{
		store_client *c = client("t1", NULL);

		put_key(c, "t1", "victim", SMALL);
		store_client_close(c);
	}
	src = worker_of_segment(replica_segment("t1", "victim"));
	spawn(&ch, args);
	if (!child_wait(&ch)) {
		note(a, "child ended before %s", fc->step);
		child_finish(&ch);
		return 0;
	}
	if (!strcmp(fc->role, "reader")) {
		fault_child(&ch, fc->fault);
	} else if (!strcmp(fc->role, "master")) {
		fault_proc(&E.master, fc->fault, -1);
		other_tenant();
	} else if (src >= 0) {
		fault_proc(&E.w[src], fc->fault, src);
		wait_segments(E.nw, 3000);
		other_tenant();
	}
	child_finish(&ch);
	if (ch.wrong)
		note(a, "reader read %llu wrong bytes",
		     (unsigned long long)ch.wrong);
	a->wrong += ch.wrong;
	return !strcmp(fc->role, "master") && fc->fault != F_STOP ? -1 : 0;
}

static long long run_copy(const struct fcase *fc, struct audit *a)
{
	char s1[24], s2[24];
	const char *args[] = {"t1", "copy", "victim", fc->step, s1, s2, NULL};
	struct child ch;
	uint64_t src_seg;
	int src, dst, w;
	store_client *c = client("t1", NULL);

	put_keys("t1", "base", 4, SMALL);
	put_key(c, "t1", "victim", SMALL);
	store_client_close(c);
	src_seg = replica_segment("t1", "victim");
	src = worker_of_segment(src_seg);
	dst = (src + 1) % E.nw;
	snprintf(s1, sizeof(s1), "%llu", (unsigned long long)src_seg);
	snprintf(s2, sizeof(s2), "%llu",
		 (unsigned long long)segment_of_worker(dst));
	spawn(&ch, args);
	if (!child_wait(&ch)) {
		note(a, "child ended before %s (st=%d)", fc->step, ch.st);
		child_finish(&ch);
		return 0;
	}
	w = role_worker(fc->role, src, dst);
	if (!strcmp(fc->role, "copier")) {
		fault_child(&ch, fc->fault);
	} else if (!strcmp(fc->role, "master")) {
		fault_proc(&E.master, fc->fault, -1);
		other_tenant();
	} else if (w >= 0) {
		fault_proc(&E.w[w], fc->fault, w);
		wait_segments(E.nw, 3000);
		other_tenant();
	}
	child_finish(&ch);
	return !strcmp(fc->role, "master") && fc->fault != F_STOP ? -1 : 0;
}

/* n GetReplicaList calls of key: heat at the master (no data read, so a
 * stopped source does not block them). */
static void heat(const char *tenant, const char *key, int n)
{
	rpc_client *rc = rpc_to(E.addr);
	int st_ = 0;

	for (int i = 0; rc && i < n; i++) {
		McreplRpc__GetReplicaListRequest g;
		McreplRpc__GetReplicaListResponse *gr;

		mcrepl_rpc__get_replica_list_request__init(&g);
		g.tenant = mut(tenant);
		g.key = mut(key);
		(void)RAW(rc, "GetReplicaList", g, gr);
		free_msg(gr);
	}
	rpc_client_close(rc);
}

static void heat_from(const char *tenant, const char *key, const char *dom,
		      int n)
{
	rpc_client *rc = rpc_to(E.addr);
	int st_ = 0;

	for (int i = 0; rc && i < n; i++) {
		McreplRpc__GetReplicaListRequest g;
		McreplRpc__GetReplicaListResponse *gr;

		mcrepl_rpc__get_replica_list_request__init(&g);
		g.tenant = mut(tenant);
		g.key = mut(key);
		g.requester_domain = mut(dom);
		(void)RAW(rc, "GetReplicaList", g, gr);
		free_msg(gr);
	}
	rpc_client_close(rc);
}

static bool wait_metric(long long (*get)(int, const char *), int i,
			const char *name, long long want, int ms)
{
	for (int w = 0; w < ms; w += 50) {
		if (get(i, name) >= want)
			return true;
		msleep(50);
	}
	return false;
}

static long long mmetric_i(int i, const char *name)
{
	(void)i;
	return mmetric(name);
}

/* Dynamic copy with the real workers (2): dyn_queued = the task is queued
 * and the source (stopped) has not fetched it; dyn_started = the source
 * started the copy and it stalls on a stopped target. */
static long long run_dyn(const struct fcase *fc, struct audit *a)
{
	store_client *c = client("t1", NULL);
	int src, dst, w;
	bool queued = !strcmp(fc->step, "dyn_queued");

	put_keys("t1", "base", 2, SMALL);
	put_key(c, "t1", "victim", BIG);
	store_client_close(c);
	src = worker_of_segment(replica_segment("t1", "victim"));
	if (src < 0) {
		note(a, "no source");
		return 0;
	}
	dst = 1 - src;
	kill(E.w[queued ? src : dst].pid, SIGSTOP);
	heat("t1", "victim", 8);
	if (queued) {
		if (!wait_metric(mmetric_i, 0,
				 "mcrepl_dynamic_copy_tasks_created_total", 1,
				 1500))
			note(a, "no task queued");
	} else if (!wait_metric(wmetric, src,
				"mcrepl_worker_copies_started_total", 1,
				5000)) {
		note(a, "copy did not start");
	}
	w = role_worker(fc->role, src, dst);
	if (queued) {
		/* the source is stopped: fault, then let it run */
		if (w == src) {
			if (fc->fault == F_STOP) {
				msleep(CLIENT_TTL_MS + 1000);
				kill(E.w[src].pid, SIGCONT);
			} else {
				fault_proc(&E.w[src], fc->fault, src);
			}
		} else {
			if (w == dst)
				fault_proc(&E.w[dst], fc->fault, dst);
			else
				fault_proc(&E.master, fc->fault, -1);
			kill(E.w[src].pid, SIGCONT);
		}
	} else {
		/* the target is stopped: the copy stalls */
		if (w == dst) {
			if (fc->fault == F_STOP) {
				msleep(CLIENT_TTL_MS + 1000);
				kill(E.w[dst].pid, SIGCONT);
			} else {
				fault_proc(&E.w[dst], fc->fault, dst);
			}
		} else if (w == src) {
			if (fc->fault == F_STOP) {
				kill(E.w[src].pid, SIGSTOP);
				kill(E.w[dst].pid, SIGCONT);
				msleep(CLIENT_TTL_MS + 1000);
				kill(E.w[src].pid, SIGCONT);
			} else {
				fault_proc(&E.w[src], fc->fault, src);
				kill(E.w[dst].pid, SIGCONT);
			}
		} else {
			fault_proc(&E.master, fc->fault, -1);
			kill(E.w[dst].pid, SIGCONT);
		}
	}
	if (!strcmp(fc->role, "master") && fc->fault != F_STOP)
		other_tenant();
	return !strcmp(fc->role, "master") && fc->fault != F_STOP ? -1 : 1;
}

/* Item 1: readers keep GetReplicaList responses; the master restarts, the
 * workers re-mount, another tenant writes; the old lists are read. */
static long long run_oldlist(const struct fcase *fc, struct audit *a)
{
	McreplRpc__GetReplicaListResponse *lists[16] = {0};
	store_client *c = client("t1", NULL);
	uint64_t wrong = 0;
	int errs = 0, ok = 0;
	char key[32];

	put_keys("t1", "old", 16, SMALL);
	for (int i = 0; c && i < 16; i++) {
		snprintf(key, sizeof(key), "old-%d", i);
		store_client_get_list(c, key, &lists[i]);
	}
	if (fc->fault == F_STOP) {
		stop_past_ttl(E.master.pid);
	} else {
		kill(E.master.pid, fc->fault == F_KILL9 ? SIGKILL : SIGTERM);
		waitpid(E.master.pid, NULL, 0);
		close(E.master.out_fd);
		E.master.pid = -1;
		restart_master();
	}
	/* workers re-mount: heartbeats see UNKNOWN_CLIENT */
	msleep(CLIENT_TTL_MS / 4 + 300);
	wait_segments(E.nw, 4000);
	put_keys("t2", "tenant2", 32, SMALL);
	for (int i = 0; c && i < 16; i++) {
		uint8_t *buf = malloc(SMALL + STAMP_BYTES);

		if (!lists[i] || !buf) {
			free(buf);
			continue;
		}
		snprintf(key, sizeof(key), "old-%d", i);
		if (store_client_read_list(c, lists[i], buf, NULL) == 0) {
			uint64_t w =
			    diff_bytes(buf, lists[i]->size, SMALL, "t1", key);
			wrong += w;
			ok++;
		} else {
			errs++;
		}
		free(buf);
		free_msg(lists[i]);
	}
	store_client_close(c);
	note(a, "old lists: %d read ok (%llu wrong bytes), %d errors", ok,
	     (unsigned long long)wrong, errs);
	a->wrong += wrong;
	return fc->fault == F_STOP ? 0 : -1;
}

/* Item 4: CopyEnd from a caller that never wrote marks the target COMPLETE. */
static long long run_copyend_other(const struct fcase *fc, struct audit *a)
{
	store_client *c = client("t1", NULL);
	rpc_client *rc = rpc_to(E.addr);
	McreplRpc__CopyStartRequest req;
	McreplRpc__CopyStartResponse *resp;
	McreplRpc__CopyEndRequest ereq;
	McreplRpc__CopyEndResponse *eresp;
	uint64_t src_seg, dst_seg;
	int st, st_ = 0, src;
	char host[16];

	(void)fc;
	put_keys("t1", "base", 2, SMALL);
	put_key(c, "t1", "victim", SMALL);
	store_client_close(c);
	src_seg = replica_segment("t1", "victim");
	src = worker_of_segment(src_seg);
	dst_seg = segment_of_worker((src + 1) % E.nw);
	mcrepl_rpc__copy_start_request__init(&req);
	req.client_id = 4242;
	req.tenant = mut("t1");
	req.key = mut("victim");
	req.source_segment_id = src_seg;
	req.target_segment_id = dst_seg;
	st = RAW(rc, "CopyStart", req, resp);
	free_msg(resp);
	mcrepl_rpc__copy_end_request__init(&ereq);
	ereq.client_id = 777; /* not the copier; nothing was written */
	ereq.tenant = mut("t1");
	ereq.key = mut("victim");
	{
		int e = RAW(rc, "CopyEnd", ereq, eresp);

		note(a, "CopyStart st=%d, CopyEnd by another client st=%d", st,
		     e);
	}
	free_msg(eresp);
	rpc_client_close(rc);
	/* a reader on the target's host reads the target replica */
	snprintf(host, sizeof(host), "host-%c", 'a' + (src + 1) % E.nw);
	c = client("t1", host);
	{
		uint64_t len;
		void *buf;

		if (store_client_get(c, "victim", &buf, &len, NULL) == 0) {
			uint64_t w =
			    diff_bytes(buf, len, SMALL, "t1", "victim");

			if (w)
				note(a,
				     "local read of the unwritten target: "
				     "%llu wrong bytes",
				     (unsigned long long)w);
			a->wrong += w;
			free(buf);
		}
	}
	store_client_close(c);
	return 0;
}

/* Item 5: the source's task taken with FetchTasks (the source stopped); a
 * legitimate DynamicReplicaCopyStart of key A, then DynamicReplicaCopyEnd
 * naming lease A with key B. */
static long long run_dyn_other_key(const struct fcase *fc, struct audit *a)
{
	store_client *c = client("t1", NULL);
	rpc_client *rc = rpc_to(E.addr);
	McreplRpc__FetchTasksRequest freq;
	McreplRpc__FetchTasksResponse *fresp = NULL;
	McreplRpc__Task *t = NULL;
	uint64_t cid;
	int src, st_ = 0;

	(void)fc;
	put_key(c, "t1", "keyB", SMALL);
	put_key(c, "t1", "keyA", SMALL);
	store_client_close(c);
	src = worker_of_segment(replica_segment("t1", "keyA"));
	if (src < 0 || !rc)
		return 0;
	cid = proc_field(&E.w[src], "client_id");
	kill(E.w[src].pid, SIGSTOP);
	heat("t1", "keyA", 8);
	mcrepl_rpc__fetch_tasks_request__init(&freq);
	freq.client_id = cid;
	freq.max_tasks = 4;
	for (int w = 0; w < 1500 && !t; w += 50) {
		free_msg(fresp);
		fresp = NULL;
		if (RAW(rc, "FetchTasks", freq, fresp) == 0 &&
		    fresp->n_tasks > 0)
			t = fresp->tasks[0];
		else
			msleep(50);
	}
	kill(E.w[src].pid, SIGCONT);
	if (!t) {
		note(a, "no task fetched");
		free_msg(fresp);
		rpc_client_close(rc);
		return 1;
	}
	{
		McreplRpc__DynamicReplicaCopyStartRequest s;
		McreplRpc__DynamicReplicaCopyStartResponse *sr;
		McreplRpc__DynamicReplicaCopyEndRequest e;
		McreplRpc__DynamicReplicaCopyEndResponse *er;
		int a1, a2;

		mcrepl_rpc__dynamic_replica_copy_start_request__init(&s);
		s.client_id = cid;
		s.task_id = t->task_id;
		s.lease_id = t->lease_id;
		s.version = t->version;
		s.tenant = t->tenant;
		s.key = t->key;
		s.source_segment_id = t->source_segment_id;
		s.target_segment_id = t->target_segment_id;
		a1 = RAW(rc, "DynamicReplicaCopyStart", s, sr);
		free_msg(sr);
		mcrepl_rpc__dynamic_replica_copy_end_request__init(&e);
		e.client_id = cid;
		e.task_id = t->task_id;
		e.lease_id = t->lease_id;
		e.version = t->version;
		e.tenant = mut("t1");
		e.key = mut("keyB"); /* not the lease's key */
		a2 = RAW(rc, "DynamicReplicaCopyEnd", e, er);
		free_msg(er);
		note(a,
		     "DynStart(A) st=%d, DynEnd(lease A, key B) st=%d "
		     "(want INVALID_ARGUMENT/STALE, lease A intact)",
		     a1, a2);
	}
	free_msg(fresp);
	rpc_client_close(rc);
	return 1;
}

/* Item 7: SIGTERM a worker 15 times under load; after each exit, is its
 * segment still mounted (before client_ttl)? */
static long long run_term_loop(const struct fcase *fc, struct audit *a)
{
	int mounted[2] = {0, 0}, stops[2] = {0, 0};
	uint64_t cid;

	(void)fc;
	put_keys("t1", "base", 4, SMALL);
	for (int i = 0; i < 15; i++) {
		pid_t load[3];
		int twice = i % 2;

		for (int l = 0; l < 3; l++) {
			load[l] = fork();
			if (load[l] == 0) { /* hot readers meanwhile */
				store_client *c = client("t1", NULL);
				uint64_t len;
				void *buf;
				char k[32];

				for (int j = 0; c && j < 150; j++) {
					snprintf(k, sizeof(k), "base-%d",
						 (j + l) % 4);
					if (store_client_get(c, k, &buf, &len,
							     NULL) == 0)
						free(buf);
				}
				_exit(0);
			}
		}
		msleep(20 + (i % 5) * 60);
		if (twice) { /* a stop asked for twice (supervisors do) */
			kill(E.w[2].pid, SIGTERM);
			msleep(2);
		}
		cid = proc_field(&E.w[2], "client_id");
		proc_stop(&E.w[2]);
		stops[twice]++;
		if (segments_of_client(cid) > 0)
			mounted[twice]++;
		for (int l = 0; l < 3; l++)
			waitpid(load[l], NULL, 0);
		start_worker(2);
		wait_segments(E.nw, 3000);
	}
	note(a,
	     "after exit still mounted: %d of %d single SIGTERM, %d of %d "
	     "double SIGTERM",
	     mounted[0], stops[0], mounted[1], stops[1]);
	if (mounted[0] + mounted[1])
		a->violations++;
	return 0;
}

/* Item 9: the longest Exist while a segment with many objects expires,
 * and while a Heartbeat with a huge segment list is handled. */
static int probe_max_ms(pid_t busy)
{
	store_client *c = client("t1", NULL);
	int worst = 0;
	bool ex;

	while (c && waitpid(busy, NULL, WNOHANG) == 0) {
		uint64_t t0 = now_ms();

		store_client_exist(c, "base-0", &ex);
		if ((int)(now_ms() - t0) > worst)
			worst = (int)(now_ms() - t0);
		msleep(1);
	}
	store_client_close(c);
	return worst;
}

/* n PutStart calls (64-byte objects never ended): many objects, fast. */
/* n unwritten puts on one connection, left open (the caller closes it:
 * a closed writer's unwritten puts are released at once). */
static rpc_client *many_objects(int n)
{
	rpc_client *rc = rpc_to(E.addr);
	char key[32];
	int st_ = 0;

	for (int i = 0; rc && i < n; i++) {
		McreplRpc__PutStartRequest req;
		McreplRpc__PutStartResponse *resp;

		snprintf(key, sizeof(key), "many-%d", i);
		mcrepl_rpc__put_start_request__init(&req);
		req.tenant = mut("t3");
		req.key = key;
		req.size = 64;
		req.replica_num = 1;
		(void)RAW(rc, "PutStart", req, resp);
		free_msg(resp);
	}
	return rc;
}

/* The longest Exist while a Heartbeat naming n segments is handled. */
static int heartbeat_stall(size_t n)
{
	pid_t p = fork();

	if (p == 0) {
		rpc_client *rc = rpc_to(E.addr);
		McreplRpc__HeartbeatRequest h;
		McreplRpc__HeartbeatResponse *hr;
		uint64_t *ids = calloc(n, 8), *reads = calloc(n, 8);
		int st_ = 0;

		for (size_t i = 0; ids && i < n; i++)
			ids[i] = i + 1;
		mcrepl_rpc__heartbeat_request__init(&h);
		h.client_id = proc_field(&E.w[0], "client_id");
		h.n_segment_ids = h.n_segment_reads = n;
		h.segment_ids = ids;
		h.segment_reads = reads;
		msleep(20);
		if (rc && ids && reads)
			(void)RAW(rc, "Heartbeat", h, hr);
		_exit(0);
	}
	return probe_max_ms(p);
}

/* The longest Exist while every worker's segments expire holding
 * n_objects objects in all. */
static int expiry_stall(int n_objects)
{
	rpc_client *writer = many_objects(n_objects);
	pid_t p;
	int worst;

	p = fork();
	if (p == 0) { /* outlive the expiry */
		msleep(CLIENT_TTL_MS + 1200);
		_exit(0);
	}
	for (int i = 0; i < E.nw; i++)
		kill(E.w[i].pid, SIGKILL);
	worst = probe_max_ms(p);
	rpc_client_close(writer); /* after the expiry freed its puts */
	for (int i = 0; i < E.nw; i++) {
		waitpid(E.w[i].pid, NULL, 0);
		close(E.w[i].out_fd);
		E.w[i].pid = -1;
		start_worker(i);
	}
	wait_segments(E.nw, 3000);
	return worst;
}

/* The longest Exist while the master releases the n_objects unwritten
 * puts of a writer that closed its connection. */
static int close_stall(int n_objects)
{
	rpc_client *writer = many_objects(n_objects);
	pid_t p = fork();

	if (p == 0) { /* outlive the next sweep */
		msleep(500);
		_exit(0);
	}
	msleep(20);
	rpc_client_close(writer);
	return probe_max_ms(p);
}

static long long run_stall(const struct fcase *fc, struct audit *a)
{
	int quiet, e1, e2, c2, h1, h2;
	pid_t p;

	(void)fc;
	put_keys("t1", "base", 2, SMALL);
	p = fork();
	if (p == 0) {
		msleep(500);
		_exit(0);
	}
	quiet = probe_max_ms(p);
	e1 = expiry_stall(2000);
	e2 = expiry_stall(40000);
	c2 = close_stall(40000);
	h1 = heartbeat_stall(1u << 17);
	h2 = heartbeat_stall(1u << 20);
	note(a,
	     "longest Exist (ms): idle %d; segment expiry with 2k objects "
	     "%d, 40k objects %d; a writer leaving 40k unwritten puts %d; "
	     "Heartbeat naming 128k segments %d, 1M segments %d",
	     quiet, e1, e2, c2, h1, h2);
	return 0;
}

static long master_rss_kb(void)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)E.master.pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* Item 10: reads naming invented domains (domain-aware master). */
static long long run_domains(const struct fcase *fc, struct audit *a)
{
	rpc_client *rc = rpc_to(E.addr);
	long before, after;
	char key[32], dom[32];
	int st_ = 0;

	(void)fc;
	put_keys("t1", "d", 200, 64);
	before = master_rss_kb();
	for (int i = 0; rc && i < 200; i++) {
		for (int j = 0; j < 64; j++) {
			McreplRpc__GetReplicaListRequest g;
			McreplRpc__GetReplicaListResponse *gr;

			snprintf(key, sizeof(key), "d-%d", i);
			snprintf(dom, sizeof(dom), "invented-%d-%d", i, j);
			mcrepl_rpc__get_replica_list_request__init(&g);
			g.tenant = mut("t1");
			g.key = key;
			g.requester_domain = dom;
			(void)RAW(rc, "GetReplicaList", g, gr);
			free_msg(gr);
		}
	}
	after = master_rss_kb();
	rpc_client_close(rc);
	note(a,
	     "master RSS %ld -> %ld KiB after 12800 reads naming invented "
	     "domains",
	     before, after);
	{ /* a real domain's reads of a key whose slots invented names took;
	   * real = a domain with a mounted segment: the workers' default */
		long long h0 = mmetric("mcrepl_dynamic_observed_hot_total"), h1,
			  h2;

		heat_from("t1", "d-0", "default", 20);
		h1 = mmetric("mcrepl_dynamic_observed_hot_total");
		put_keys("t1", "fresh", 1, 64);
		heat_from("t1", "fresh-0", "default", 20);
		h2 = mmetric("mcrepl_dynamic_observed_hot_total");
		note(a,
		     "20 reads from a real domain: observed_hot +%lld on a "
		     "key with 8 invented domains, +%lld on a fresh key",
		     h1 - h0, h2 - h1);
	}
	return 0;
}

/* A metric (not a comment line) whose name holds "lost". */
static bool has_lost_metric(const char *page)
{
	for (const char *l = page; l && *l;) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		const char *sp = memchr(l, ' ', n);

		if (l[0] != '#' && sp) {
			for (const char *q = l; q + 4 <= sp; q++)
				if (!strncmp(q, "lost", 4))
					return true;
		}
		l = e ? e + 1 : l + n;
	}
	return false;
}

/* Item 11: a worker holding replicas dies; which metric says so? */
static long long run_lost(const struct fcase *fc, struct audit *a)
{
	char *before, *after;
	int src;

	(void)fc;
	put_keys("t1", "lost", 8, SMALL);
	src = worker_of_segment(replica_segment("t1", "lost-0"));
	before = master_metrics();
	proc_kill9(&E.w[src]);
	msleep(CLIENT_TTL_MS + 600);
	after = master_metrics();
	note(a,
	     "after losing a worker's replicas: metric named *lost* %s, "
	     "keys %lld -> %lld",
	     has_lost_metric(after) ? "present" : "absent",
	     before ? metric_value(before, "mcrepl_master_keys") : -1,
	     after ? metric_value(after, "mcrepl_master_keys") : -1);
	free(before);
	free(after);
	start_worker(src);
	wait_segments(E.nw, 3000);
	return 0;
}

static const char *const domain_flags[] = {
    "--dynamic_replication_domain_aware=true", NULL};

/* What runs each kind of case; dynamic ones settle for a copy lease. */
static const struct {
	long long (*run)(const struct fcase *fc, struct audit *a);
	bool dynamic;
} kinds[] = {
    [K_PUT] = {run_put, false},
    [K_GET] = {run_get, false},
    [K_COPY] = {run_copy, false},
    [K_DYN] = {run_dyn, true},
    [K_OLDLIST] = {run_oldlist, false},
    [K_COPYEND_OTHER] = {run_copyend_other, false},
    [K_DYN_OTHER_KEY] = {run_dyn_other_key, true},
    [K_TERM_LOOP] = {run_term_loop, false},
    [K_STALL] = {run_stall, false},
    [K_DOMAINS] = {run_domains, false},
    [K_LOST] = {run_lost, false},
};

static int cmd_case(const char *name)
{
	struct fcase *fc = NULL;
	struct audit a;
	long long caused = 0;
	bool dynamic = false;
	int nw = 3;

	memset(&a, 0, sizeof(a));
	for (size_t i = 0; i < NCASES; i++)
		if (!strcmp(CASES[i].id, name))
			fc = &CASES[i];
	if (!fc) {
		fprintf(stderr, "fault_client: no case %s\n", name);
		return 2;
	}
	if (fc->na) {
		printf("ROW %s %s %s %s - - - - n/a %s\n", fc->id, fc->role,
		       fc->step, fault_names[fc->fault], fc->na);
		return 0;
	}
	if (kinds[fc->kind].dynamic)
		nw = 2; /* a copy source and a target */
	if (start_env(nw, fc->kind == K_DOMAINS ? domain_flags : NULL)) {
		stop_env();
		printf("ROW %s %s %s %s - - - - ERROR daemons did not start\n",
		       fc->id, fc->role, fc->step, fault_names[fc->fault]);
		return 1;
	}
	caused = kinds[fc->kind].run(fc, &a);
	dynamic = kinds[fc->kind].dynamic;
	{
		int extra = a.violations;

		settle(dynamic);
		audit(&a, caused);
		a.violations += extra;
	}
	stop_env();
	printf("ROW %s %s %s %s %llu %llu %llu %s %d %s\n", fc->id, fc->role,
	       fc->step, fault_names[fc->fault], (unsigned long long)a.wrong,
	       (unsigned long long)a.leaked, (unsigned long long)a.stuck,
	       a.tasks_ok ? "ok" : "BAD", a.violations,
	       a.note[0] ? a.note : "-");
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	build_cases();
	if (readlink("/proc/self/exe", E.self, sizeof(E.self) - 1) < 0)
		snprintf(E.self, sizeof(E.self), "%s", argv[0]);
	if (argc >= 3 && !strcmp(argv[1], "list")) {
		if (!strcmp(argv[2], "short"))
			for (size_t i = 0; short_cases[i]; i++)
				printf("%s\n", short_cases[i]);
		else
			for (size_t i = 0; i < NCASES; i++)
				printf("%s\n", CASES[i].id);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "case"))
		return cmd_case(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "step"))
		return cmd_step(argc - 2, argv + 2);
	fprintf(stderr,
		"usage: fault_client list short|full | case NAME | step MASTER "
		"TENANT OP KEY PAUSE [ARGS]\n");
	return 2;
}
