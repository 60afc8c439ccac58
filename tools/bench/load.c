/* Reader threads: Zipf mix and trace replay (see load.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load.h"
#include "mcrepl.pb-c.h"

#define MCREPL_NOT_FOUND MCREPL_RPC__CODE__NOT_FOUND
#define MCREPL_EXISTS MCREPL_RPC__CODE__ALREADY_EXISTS
#define REPLICATED 255
#define LATE_NS 100000000LL /* a trace request 100 ms late is late */
#define MAX_SHOWN 5	    /* errors printed in full per run */

struct lat_sample {
	uint32_t t_ms; /* when the read ended, ms since the reads began */
	uint32_t us;
};

struct load_thread {
	pthread_t tid;
	bool joinable;
	struct load *l;
	uint32_t idx;
	uint32_t domain; /* index into l->cl->domain[] */
	store_client *sc;
	uint64_t rng;
	/* zipf, shifting, flash, rehot: this reader's copy of the
	 * popularity generator, seeded alike in every reader, so all draw
	 * the same rankings without sharing a table */
	struct popgen pop;
	uint64_t flash_seen; /* flash: this reader's reads in its window */
	uint8_t *buf;	     /* object bytes for puts */
	struct lat_sample *lat;
	size_t n_lat, cap_lat;
};

int64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000LL),
			      (long)(ns % 1000000000LL)};

	if (ns > 0)
		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
}

static bool stopped(const struct load *l)
{
	return atomic_load(&l->stop) || (l->cancel && *l->cancel);
}

/* Sleep until the monotonic time `due` (ns) or stop; false on stop. */
static bool wait_until(struct load *l, int64_t due)
{
	for (;;) {
		int64_t left = due - bench_now_ns();

		if (stopped(l))
			return false;
		if (left <= 0)
			return true;
		sleep_ns(left < 50000000LL ? left : 50000000LL);
	}
}

static void show_error(struct load *l, const char *what, const char *key,
		       const char *why)
{
	uint32_t n = atomic_fetch_add(&l->errors_shown, 1);

	if (n < MAX_SHOWN)
		fprintf(stderr, "mcrepl-bench: %s %s: %s\n", what, key, why);
	else if (n == MAX_SHOWN)
		fprintf(stderr, "mcrepl-bench: more errors; counted, not "
				"shown\n");
}

/* Object bytes: the key id first (so a wrong object is caught), then a
 * pattern. */
static void fill(uint8_t *buf, uint64_t len, uint64_t id)
{
	for (uint64_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(id * 31 + i * 7);
	memcpy(buf, &id, len < 8 ? len : 8);
}

static bool bytes_ok(const uint8_t *buf, uint64_t len, uint64_t want_len,
		     uint64_t id)
{
	uint64_t got = 0;

	if (len != want_len)
		return false;
	memcpy(&got, buf, len < 8 ? len : 8);
	return (len < 8 || got == id) &&
	       buf[len - 1] == (uint8_t)(id * 31 + (len - 1) * 7);
}

void load_key_name(const struct load *l, uint32_t key, char *out, size_t cap)
{
	if (l->tr)
		snprintf(out, cap, "block-%llu",
			 (unsigned long long)l->tr->ids[key]);
	else
		snprintf(out, cap, "zipf-%u", key);
}

static uint64_t key_id(const struct load *l, uint32_t key)
{
	return l->tr ? l->tr->ids[key] : key;
}

static void add_latency(struct load_thread *t, int64_t ns, int64_t end_ns)
{
	uint32_t us =
	    ns / 1000 > UINT32_MAX ? UINT32_MAX : (uint32_t)(ns / 1000);
	int64_t ms = (end_ns - t->l->t0_ns) / 1000000;

	if (t->n_lat == t->cap_lat) {
		size_t nc = t->cap_lat ? 2 * t->cap_lat : 65536;
		struct lat_sample *p = realloc(t->lat, nc * sizeof(*p));

		if (!p)
			return; /* the sample is lost, the run goes on */
		t->lat = p;
		t->cap_lat = nc;
	}
	t->lat[t->n_lat].t_ms = ms < 0 ? 0 : (uint32_t)ms;
	t->lat[t->n_lat++].us = us;
}

/* A key is replicated once it is read from a dynamic replica or from a
 * second worker. */
static void note_key(struct load *l, uint32_t key, int worker, bool dynamic)
{
	_Atomic unsigned char *st = &l->key_state[key];
	unsigned char cur = atomic_load_explicit(st, memory_order_relaxed);
	unsigned char me = (unsigned char)(worker + 1);

	while (cur != REPLICATED) {
		unsigned char want = cur;

		if (dynamic || (cur != 0 && cur != me))
			want = REPLICATED;
		else if (cur == 0)
			want = me;
		if (want == cur)
			return;
		if (atomic_compare_exchange_weak(st, &cur, want)) {
			if (want == REPLICATED)
				atomic_fetch_add(&l->replicated_keys, 1);
			return;
		}
	}
}

static void on_read(struct load_thread *t, uint32_t key, uint64_t len,
		    const struct store_read_info *info, int64_t end_ns)
{
	struct load *l = t->l;
	int w = cluster_worker_of(l->cl, info->segment_id);

	atomic_fetch_add(&l->reads, 1);
	atomic_fetch_add(&l->read_bytes, len);
	if (w >= 0)
		atomic_fetch_add(&l->worker_reads[w], 1);
	if (w >= 0 && l->cl->worker_domain[w] != t->domain)
		atomic_fetch_add(&l->cross_bytes, len);
	if (info->dynamic) {
		int64_t none = -1;

		atomic_fetch_add(&l->dyn_reads, 1);
		atomic_compare_exchange_strong(&l->first_dyn_ns, &none,
					       end_ns - l->t0_ns);
	}
	if (w >= 0 && w < 254)
		note_key(l, key, w, info->dynamic);
}

static int put_key(struct load_thread *t, uint32_t key);

/* One get of key; 0, a positive master code, or a negative failure. */
static int get_key(struct load_thread *t, uint32_t key)
{
	struct load *l = t->l;
	struct store_read_info info;
	void *buf = NULL;
	uint64_t len = 0;
	char name[48];
	int64_t start = bench_now_ns(), end;
	int st;

	load_key_name(l, key, name, sizeof(name));
	st = store_client_get(t->sc, name, &buf, &len, &info);
	end = bench_now_ns();
	if (st == 0 && !bytes_ok(buf, len, l->object_bytes, key_id(l, key))) {
		atomic_fetch_add(&l->corrupt, 1);
		atomic_fetch_add(&l->errors, 1);
		show_error(l, "get", name,
			   "wrong bytes (not this key's object)");
	} else if (st == 0) {
		add_latency(t, end - start, end);
		on_read(t, key, len, &info, end);
	} else if (!l->tr && st == MCREPL_NOT_FOUND) {
		/* evicted (room for a hot copy): a miss, written back as a
		 * cache refills */
		atomic_fetch_add(&l->evicted_reads, 1);
		put_key(t, key);
	} else if (!(l->tr && st == MCREPL_NOT_FOUND)) {
		atomic_fetch_add(&l->errors, 1);
		show_error(l, "get", name, store_client_error(t->sc));
	}
	free(buf);
	return st;
}

/* Put key's object: 0, MCREPL_EXISTS (stored before: fine), or a failure
 * (counted and shown). */
static int put_key(struct load_thread *t, uint32_t key)
{
	struct load *l = t->l;
	char name[48];
	int st;

	load_key_name(l, key, name, sizeof(name));
	fill(t->buf, l->object_bytes, key_id(l, key));
	st = store_client_put(t->sc, name, t->buf, l->object_bytes);
	if (st && st != MCREPL_EXISTS) {
		atomic_fetch_add(&l->errors, 1);
		show_error(l, "put", name, store_client_error(t->sc));
	}
	return st;
}

/* ---- zipf ------------------------------------------------------------- */

/* The key of the next read: the flash key's turn, or a Zipf draw through
 * the reader's ranking of now. */
static uint32_t next_key(struct load_thread *t)
{
	struct load *l = t->l;
	double ms = (double)(bench_now_ns() - l->t0_ns) / 1e6;

	popgen_advance(&t->pop, ms);
	if (popgen_flash(&t->pop.o, ms, &t->flash_seen)) {
		atomic_fetch_add(&l->flash_reads, 1);
		return zipf_keys_of(l->z, popgen_flash_object(&t->pop.o));
	}
	return zipf_keys_next_pop(l->z, &t->pop, &t->rng);
}

static void *zipf_reader(void *arg)
{
	struct load_thread *t = arg;
	struct load *l = t->l;
	double rate = l->o->rate / l->n_th;
	int64_t step = rate > 0 ? (int64_t)(1e9 / rate) : 0;
	int64_t next = bench_now_ns();

	while (!stopped(l)) {
		uint32_t key;

		if (step) {
			int64_t now = bench_now_ns();

			if (next < now - 1000000000LL) /* drop a backlog */
				next = now;
			if (!wait_until(l, next))
				break;
			next += step;
		}
		key = next_key(t);
		if (get_key(t, key) < 0)
			sleep_ns(10000000); /* a dead cluster: do not spin */
	}
	atomic_fetch_sub(&l->running, 1);
	return NULL;
}

/* Every key in id order through one client, so the master places them
 * the same way in every run with the same seed and worker count. */
static int put_all(struct load_thread *t)
{
	struct load *l = t->l;

	for (uint64_t k = 0; k < l->n_keys && !stopped(l); k++) {
		int st = put_key(t, (uint32_t)k);

		if (st != 0 && st != MCREPL_EXISTS)
			return -1;
	}
	return 0;
}

/* ---- trace ------------------------------------------------------------ */

/* Wait while another thread writes block b; its state afterwards. */
static unsigned char wait_written(struct load *l, uint32_t b)
{
	unsigned char st;

	while ((st = atomic_load(&l->stored[b])) == 1 && !stopped(l))
		sleep_ns(200000);
	return st;
}

/* Make sure block b is stored: the first thread to see it absent writes
 * it (a miss). False when it could not be stored. */
static bool ensure_stored(struct load_thread *t, uint32_t b)
{
	struct load *l = t->l;

	for (int tries = 0; tries < 3; tries++) {
		unsigned char absent = 0;

		if (atomic_compare_exchange_strong(&l->stored[b], &absent, 1)) {
			int st = put_key(t, b);
			bool ok = st == 0 || st == MCREPL_EXISTS;

			if (st == 0)
				atomic_fetch_add(&l->misses, 1);
			atomic_store(&l->stored[b], ok ? 2 : 0);
			return ok;
		}
		if (wait_written(l, b) == 2)
			return true;
	}
	return false;
}

static void read_block(struct load_thread *t, uint32_t b)
{
	struct load *l = t->l;
	unsigned char two = 2;

	if (!ensure_stored(t, b))
		return;
	if (get_key(t, b) != MCREPL_NOT_FOUND)
		return;
	/* Evicted since: write it again (another miss) and read. */
	if (atomic_compare_exchange_strong(&l->stored[b], &two, 0) &&
	    ensure_stored(t, b))
		get_key(t, b);
	else if (wait_written(l, b) == 2)
		get_key(t, b);
}

static void *trace_reader(void *arg)
{
	struct load_thread *t = arg;
	struct load *l = t->l;
	const struct trace *tr = l->tr;
	size_t i;

	while ((i = atomic_fetch_add(&l->next_req, 1)) < tr->n_req) {
		int64_t due =
		    l->t0_ns + (int64_t)(tr->ts_ms[i] * 1e6 / l->o->speedup);

		if (!wait_until(l, due))
			break;
		if (bench_now_ns() - due >= LATE_NS)
			atomic_fetch_add(&l->late, 1);
		for (size_t k = tr->first[i];
		     k < tr->first[i + 1] && !stopped(l); k++)
			read_block(t, tr->blocks[k]);
		atomic_fetch_add(&l->done_reqs, 1);
	}
	atomic_fetch_sub(&l->running, 1);
	return NULL;
}

/* ---- lifecycle -------------------------------------------------------- */

static enum popgen_kind bench_pop_kind(enum bench_workload w)
{
	return w == BENCH_SHIFTING ? POPGEN_SHIFTING
	       : w == BENCH_REHOT  ? POPGEN_REHOT
	       : w == BENCH_FLASH  ? POPGEN_FLASH
				   : POPGEN_STILL;
}

int load_init(struct load *l, const struct bench_opts *o,
	      const struct cluster *cl, uint64_t n_keys, uint64_t object_bytes)
{
	memset(l, 0, sizeof(*l));
	l->o = o;
	l->cl = cl;
	l->n_keys = n_keys;
	l->object_bytes = object_bytes;
	l->n_th = o->clients;
	atomic_store(&l->first_dyn_ns, -1);
	l->key_state = calloc(n_keys + 1, sizeof(*l->key_state));
	l->stored = calloc(n_keys + 1, sizeof(*l->stored));
	l->th = calloc(l->n_th, sizeof(*l->th));
	if (!l->key_state || !l->stored || !l->th)
		return -1;
	for (uint32_t i = 0; i < l->n_th; i++) {
		struct load_thread *t = &l->th[i];

		t->l = l;
		t->idx = i;
		t->rng = o->seed * 0x9e3779b97f4a7c15ULL + i + 1;
		t->buf = malloc(object_bytes);
		if (!t->buf)
			return -1;
		if (o->workload != BENCH_TRACE &&
		    popgen_init(&t->pop,
				&(struct popgen_opts){
				    .kind = bench_pop_kind(o->workload),
				    .n = n_keys,
				    .period_ms = o->shift_period * 1e3,
				    .fraction = o->shift_fraction,
				    .flash_at_ms = o->flash_at * 1e3,
				    .flash_ms = o->flash_seconds * 1e3,
				    .flash_share = o->flash_share,
				    .seed = o->seed}))
			return -1;
	}
	return 0;
}

/* Reader i reads (and sends its reads) from its domain. */
static int open_clients(struct load *l, char *err, size_t errlen)
{
	struct store_client_config cfg;

	store_client_config_init(&cfg);
	cfg.cred = l->cl->cred;
	cfg.tls = l->cl->tls;
	for (uint32_t i = 0; i < l->n_th; i++) {
		struct load_thread *t = &l->th[i];

		t->domain = cluster_reader_domain(l->cl, i);
		cfg.domain = l->cl->n_domains ? l->cl->domain[t->domain] : NULL;
		if (!t->sc && store_client_open(&t->sc, l->cl->addr, NULL, &cfg,
						err, errlen) != 0)
			return -1;
	}
	return 0;
}

static int spawn(struct load *l, void *(*fn)(void *), char *err, size_t errlen)
{
	atomic_store(&l->running, l->n_th);
	for (uint32_t i = 0; i < l->n_th; i++) {
		int rc = pthread_create(&l->th[i].tid, NULL, fn, &l->th[i]);

		if (rc) {
			snprintf(err, errlen, "pthread_create: %s",
				 strerror(rc));
			atomic_store(&l->stop, 1);
			atomic_fetch_sub(&l->running, l->n_th - i);
			return -1;
		}
		l->th[i].joinable = true;
	}
	return 0;
}

static void join_all(struct load *l)
{
	for (uint32_t i = 0; i < l->n_th; i++) {
		if (l->th[i].joinable)
			pthread_join(l->th[i].tid, NULL);
		l->th[i].joinable = false;
	}
}

int load_put_all(struct load *l, double *seconds, char *err, size_t errlen)
{
	int64_t t0 = bench_now_ns();
	int rc;

	if (open_clients(l, err, errlen) != 0)
		return -1;
	rc = put_all(&l->th[0]);
	*seconds = (double)(bench_now_ns() - t0) / 1e9;
	if (rc != 0)
		snprintf(err, errlen,
			 "putting the %llu keys failed (see above)",
			 (unsigned long long)l->n_keys);
	atomic_store(&l->errors, 0);
	atomic_store(&l->errors_shown, 0);
	return rc;
}

int load_start(struct load *l, char *err, size_t errlen)
{
	if (open_clients(l, err, errlen) != 0)
		return -1;
	l->t0_ns = bench_now_ns();
	return spawn(l, l->tr ? trace_reader : zipf_reader, err, errlen);
}

bool load_finished(struct load *l)
{
	return atomic_load(&l->running) == 0;
}

void load_stop(struct load *l)
{
	atomic_store(&l->stop, 1);
	join_all(l);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int load_latency_us(const struct load *l, double from_s, const double *q,
		    double *out, size_t n)
{
	uint32_t from_ms = from_s > 0 ? (uint32_t)(from_s * 1000) : 0;
	size_t total = 0, k = 0;
	uint32_t *v;

	for (size_t j = 0; j < n; j++)
		out[j] = 0;
	for (uint32_t i = 0; i < l->n_th; i++)
		total += l->th[i].n_lat;
	v = malloc((total + 1) * sizeof(*v));
	if (!v)
		return -1;
	for (uint32_t i = 0; i < l->n_th; i++)
		for (size_t j = 0; j < l->th[i].n_lat; j++)
			if (l->th[i].lat[j].t_ms >= from_ms)
				v[k++] = l->th[i].lat[j].us;
	qsort(v, k, sizeof(*v), cmp_u32);
	for (size_t j = 0; j < n && k > 0; j++) {
		size_t i = (size_t)(q[j] * (double)(k - 1) + 0.5);

		out[j] = v[i < k ? i : k - 1];
	}
	free(v);
	return 0;
}

void load_free(struct load *l)
{
	for (uint32_t i = 0; l->th && i < l->n_th; i++) {
		store_client_close(l->th[i].sc);
		free(l->th[i].buf);
		free(l->th[i].lat);
		popgen_free(&l->th[i].pop);
	}
	free(l->th);
	free(l->key_state);
	free(l->stored);
	memset(l, 0, sizeof(*l));
}

uint32_t load_hot_key(const struct load *l, uint64_t rank)
{
	if (!l->n_th)
		return zipf_keys_of(l->z, rank);
	return zipf_keys_of(l->z, popgen_object(&l->th[0].pop, rank));
}

uint64_t load_ranking_digest(const struct load *l, uint64_t top)
{
	struct popgen g;
	uint64_t h;

	/* a fresh copy: a reader may have read past the end, into the next
	 * phase */
	if (l->tr || !l->n_th || popgen_init(&g, &l->th[0].pop.o))
		return 0;
	popgen_advance(&g, l->o->duration * 1e3 - 1);
	h = popgen_digest(&g, l->z->perm, top);
	popgen_free(&g);
	return h;
}
