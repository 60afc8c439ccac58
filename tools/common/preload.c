/* Filling a master for the benches (see preload.h). */
#include <event2/event.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "harness.h"
#include "preload.h"
#include "rpc_client.h"

#define WINDOW 64

struct load {
	struct event_base *base;
	rpc_aclient *ac;
	int m_put_start, m_put_end;
	uint64_t next, total, done, inflight;
	bool failed;
	char keybuf[WINDOW][32];
};

static const ProtobufCMessageDescriptor *out_desc(int m)
{
	return mcrepl_rpc__master__descriptor.methods[m].output;
}

static void fail(struct load *l, const char *what, const char *why)
{
	if (!l->failed)
		fprintf(stderr, "preload: %s: %s\n", what, why);
	l->failed = true;
	event_base_loopbreak(l->base);
}

static void put_issue(struct load *l);

static void on_put_end(int st, ProtobufCMessage *resp, const char *err,
		       void *arg)
{
	struct load *l = arg;

	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (st != 0) {
		fail(l, "PutEnd", err);
		return;
	}
	l->inflight--;
	l->done++;
	put_issue(l);
}

static void on_put_start(int st, ProtobufCMessage *resp, const char *err,
			 void *arg)
{
	struct load *l = arg;
	McreplRpc__PutStartResponse *r = (McreplRpc__PutStartResponse *)resp;
	McreplRpc__PutEndRequest pe;

	if (st != 0 || r->result->code != MCREPL_RPC__CODE__OK) {
		fail(l, "PutStart", st ? err : r->result->message);
		if (resp)
			protobuf_c_message_free_unpacked(resp, NULL);
		return;
	}
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = (char *)(uintptr_t) "";
	pe.version = r->version;
	/* one client, in-order replies: version v is key v-1 (slot v) */
	pe.key = l->keybuf[r->version % WINDOW];
	rpc_aclient_call(l->ac, (uint32_t)l->m_put_end, &pe.base,
			 out_desc(l->m_put_end), on_put_end, l);
	protobuf_c_message_free_unpacked(resp, NULL);
}

static void put_issue(struct load *l)
{
	while (!l->failed && l->inflight < WINDOW && l->next < l->total) {
		McreplRpc__PutStartRequest ps;
		/* versions are assigned in order: slot by version */
		char *key = l->keybuf[(l->next + 1) % WINDOW];

		snprintf(key, 32, "key-%llu", (unsigned long long)l->next);
		mcrepl_rpc__put_start_request__init(&ps);
		ps.tenant = (char *)(uintptr_t) "";
		ps.key = key;
		ps.size = 1024;
		ps.replica_num = 1;
		rpc_aclient_call(l->ac, (uint32_t)l->m_put_start, &ps.base,
				 out_desc(l->m_put_start), on_put_start, l);
		l->next++;
		l->inflight++;
	}
	if (l->done == l->total)
		event_base_loopbreak(l->base);
}

/* The bench segment's client id: 1, in the worker principal's space when
 * the master authenticates (auth.h). */
static uint64_t bench_client_id(const struct auth_cred *worker)
{
	return worker ? auth_client_id(worker->name, 1) : 1;
}

static int mount_fake_segment(uint16_t rpc_port, const struct auth_cred *cred)
{
	McreplRpc__MountSegmentRequest m;
	rpc_client *c = harness_client_as(rpc_port, cred);
	ProtobufCMessage *r;

	if (!c)
		return -1;
	mcrepl_rpc__mount_segment_request__init(&m);
	m.client_id = bench_client_id(cred);
	m.host_id = (char *)(uintptr_t) "bench-host";
	m.name = (char *)(uintptr_t) "bench-seg";
	m.endpoint = (char *)(uintptr_t) "127.0.0.1:1";
	m.capacity = 1ULL << 40;
	r = harness_call(c, "MountSegment", &m.base, NULL);
	rpc_client_close(c);
	if (!r)
		return -1;
	protobuf_c_message_free_unpacked(r, NULL);
	return 0;
}

struct preload_keeper {
	pthread_t th;
	uint16_t port;
	const struct auth_cred *cred;
	atomic_bool stop;
};

static void *keeper_run(void *arg)
{
	struct preload_keeper *k = arg;
	rpc_client *c = NULL;

	while (!atomic_load(&k->stop)) {
		McreplRpc__HeartbeatRequest hb;
		ProtobufCMessage *r;

		if (!c)
			c = harness_client_as(k->port, k->cred);
		mcrepl_rpc__heartbeat_request__init(&hb);
		hb.client_id = bench_client_id(k->cred);
		r = c ? harness_call(c, "Heartbeat", &hb.base, NULL) : NULL;
		if (r)
			protobuf_c_message_free_unpacked(r, NULL);
		else if (c) { /* lost: a new connection next time */
			rpc_client_close(c);
			c = NULL;
		}
		for (int i = 0; i < 10 && !atomic_load(&k->stop); i++)
			usleep(100 * 1000);
	}
	if (c)
		rpc_client_close(c);
	return NULL;
}

struct preload_keeper *preload_keep(uint16_t rpc_port,
				    const struct auth_cred *worker)
{
	struct preload_keeper *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->port = rpc_port;
	k->cred = worker;
	atomic_init(&k->stop, false);
	if (pthread_create(&k->th, NULL, keeper_run, k) != 0) {
		free(k);
		return NULL;
	}
	return k;
}

void preload_release(struct preload_keeper *k)
{
	if (!k)
		return;
	atomic_store(&k->stop, true);
	pthread_join(k->th, NULL);
	free(k);
}

int preload_master(uint16_t rpc_port, uint64_t keys)
{
	return preload_master_as(rpc_port, keys, NULL, NULL);
}

int preload_master_as(uint16_t rpc_port, uint64_t keys,
		      const struct auth_cred *worker,
		      const struct auth_cred *client)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;
	struct load *l = calloc(1, sizeof(*l));
	char addr[64], err[256];
	rpc_client_config cfg;
	int rc = -1;

	rpc_client_config_init(&cfg);
	cfg.cred = client;
	cfg.tls = harness_tls();
	if (!l || mount_fake_segment(rpc_port, worker) != 0) {
		fprintf(stderr, "preload: cannot mount the bench segment\n");
		free(l);
		return -1;
	}
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", rpc_port);
	l->base = event_base_new();
	l->ac = l->base
		    ? rpc_aclient_create(l->base, addr, &cfg, err, sizeof(err))
		    : NULL;
	if (l->ac) {
		l->m_put_start = rpc_method_index(d, "PutStart");
		l->m_put_end = rpc_method_index(d, "PutEnd");
		l->total = keys;
		put_issue(l);
		event_base_dispatch(l->base);
		rc = !l->failed && l->done == keys ? 0 : -1;
		rpc_aclient_destroy(l->ac);
	}
	if (l->base)
		event_base_free(l->base);
	free(l);
	return rc;
}

double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ut, st;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* fields after the command name (which may hold spaces): state is
	 * field 3, utime 14, stime 15 */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2,
		   "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
		   &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}
