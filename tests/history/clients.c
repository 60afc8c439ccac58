/* The history test's clients (clients.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clients.h"
#include "payload.h"

#define RPC_TIMEOUT_MS 3000

int64_t hclient_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t next_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

int hclient_open(struct hclient *h, uint32_t id, uint32_t keys,
		 const char *addr, const struct auth_cred *cred, size_t cap,
		 FILE *log)
{
	struct store_client_config cfg;
	char err[256];

	memset(h, 0, sizeof(*h));
	h->id = id;
	h->keys = keys;
	h->cap = cap;
	h->log = log;
	h->rng = 0x9e3779b97f4a7c15ULL * (id + 1);
	h->ops = calloc(cap, sizeof(*h->ops));
	h->buf = malloc(PAYLOAD_MAX);
	store_client_config_init(&cfg);
	cfg.cred = cred;
	cfg.replicas = 2;
	cfg.rpc_timeout_ms = RPC_TIMEOUT_MS;
	cfg.data_timeout_ms = 10000;
	if (!h->ops || !h->buf) {
		fprintf(stderr, "history: client %u: out of memory\n", id);
		hclient_close(h);
		return -1;
	}
	if (store_client_open(&h->sc, addr, NULL, &cfg, err, sizeof(err))) {
		fprintf(stderr, "history: client %u: %s\n", id, err);
		hclient_close(h);
		return -1;
	}
	return 0;
}

/* The outcome of status st. May or may not have taken effect: a
 * transport failure (negative), and a failed put or remove that the
 * client may have sent twice: to a new leader (moved), or to the same
 * one after a call timed out (it then waits for a new term and, none
 * coming, sends again: the op took longer than the RPC timeout). */
static enum hop_out outcome(enum hop_kind k, int st, bool moved,
			    int64_t took_ns)
{
	if (st == 0)
		return HOUT_OK;
	if (st < 0 ||
	    (k != HOP_GET && (moved || took_ns >= RPC_TIMEOUT_MS * 1000000LL)))
		return HOUT_UNKNOWN;
	return HOUT_FAIL;
}

static void key_name(uint32_t key, char *out, size_t cap)
{
	snprintf(out, cap, "hist-k%02u", key);
}

/* Runs o (its kind, key and for a put its value set), sets status. */
static int execute(struct hclient *h, struct hop *o)
{
	char key[32];
	void *buf = NULL;
	uint64_t len = 0;
	int st;

	key_name(o->key, key, sizeof(key));
	switch (o->kind) {
	case HOP_PUT:
		payload_fill(h->buf, o->key, o->value);
		return store_client_put(h->sc, key, h->buf,
					payload_len(o->value));
	case HOP_REMOVE:
		return store_client_remove(h->sc, key);
	case HOP_GET:
		break;
	}
	st = store_client_get(h->sc, key, &buf, &len, NULL);
	if (st == 0)
		o->read = payload_judge(buf, (size_t)len, o->key, &o->value);
	free(buf);
	return st;
}

static void log_op(struct hclient *h, const struct hop *o)
{
	static const char *const kinds[] = {"put", "get", "remove"};
	static const char *const outs[] = {"ok", "fail", "unknown"};
	char v[32] = "-";

	if (!h->log)
		return;
	if (o->value)
		snprintf(v, sizeof(v), "c%u:%u", (unsigned)(o->value >> 32) - 1,
			 (unsigned)(o->value & 0xffffffffu));
	fprintf(h->log,
		"%lld %lld c%u k%02u %s v=%s %s code=%d read=%d "
		"moves=%llu %s\n",
		(long long)o->t_inv, (long long)o->t_ret, h->id, o->key,
		kinds[o->kind], v, outs[o->out], o->code, (int)o->read,
		(unsigned long long)store_client_leader_changes(h->sc),
		o->out == HOUT_OK ? "" : store_client_error(h->sc));
}

void hclient_op(struct hclient *h, enum hop_kind k, uint32_t key)
{
	struct hop *o;
	uint64_t moves;
	int st;

	if (h->n >= h->cap)
		return;
	o = &h->ops[h->n++];
	*o = (struct hop){.key = key, .client = h->id, .kind = k};
	if (k == HOP_PUT)
		o->value = hist_value_id(h->id, ++h->seq);
	moves = store_client_leader_changes(h->sc);
	o->t_inv = hclient_now_ns();
	st = execute(h, o);
	o->t_ret = hclient_now_ns();
	o->code = st;
	o->out = outcome(k, st, store_client_leader_changes(h->sc) != moves,
			 o->t_ret - o->t_inv);
	log_op(h, o);
}

static void *client_main(void *arg)
{
	struct hclient *h = arg;

	while (!atomic_load(h->stop) && h->n < h->cap) {
		uint64_t r = next_rand(&h->rng);
		uint32_t key = (uint32_t)(r % h->keys), dice = (r >> 32) % 100;

		hclient_op(h,
			   dice < 40   ? HOP_GET
			   : dice < 75 ? HOP_PUT
				       : HOP_REMOVE,
			   key);
	}
	return NULL;
}

int hclient_start(struct hclient *h, const atomic_bool *stop)
{
	h->stop = stop;
	return pthread_create(&h->th, NULL, client_main, h) ? -1 : 0;
}

void hclient_join(struct hclient *h)
{
	pthread_join(h->th, NULL);
}

void hclient_close(struct hclient *h)
{
	store_client_close(h->sc);
	free(h->ops);
	free(h->buf);
	memset(h, 0, sizeof(*h));
}
