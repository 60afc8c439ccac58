/*
 * bench_stall: the longest time the master's loop
 * is held while segments leave. The master's own store code, in process,
 * with the clock in the bench's hands: --segments segments of 1 TiB (one
 * client and host each) hold --objects objects of 1 KiB (--replicas
 * each, placed by PutStart as the master places them), then the clients of
 * --expire of them fall silent past client_ttl while the others keep
 * heartbeating. Every loop turn the master would run (store_tick, then the
 * drain turns it schedules while store_backlog() says work is left) is
 * timed under the store lock, one simulated millisecond apart, until the
 * leaving segments are gone; a read of a surviving key runs between turns.
 *
 *   bench_stall [--objects N] [--segments S] [--expire E] [--replicas R]
 *               [--evict 1]
 *
 * --evict 1: instead, segments sized so the objects fill 95 % of them (over
 * the 90 % eviction watermark), every object read once (under read lease,
 * so nothing can be evicted), then 2 s of 50 ms ticks while the leases
 * hold and 2 s more once they are over: the longest tick is the stall
 * eviction causes (--expire is ignored).
 *
 * Turns are timed on the wall clock and on the thread's CPU clock (the
 * loop's own work; on a shared machine wall time also holds preemption).
 * Last line: stall_max_ms=<longest turn> stall_max_cpu_ms=<its CPU>
 * stall_total_ms=<sum of turns> turns=<n> segments_left=<n> keys_left=<n>
 * replicas_lost=<n> objects_lost=<n>; with --evict:
 * evict_leased_max_ms, evict_leased_max_cpu_ms, evict_free_max_ms,
 * evict_free_max_cpu_ms, evicted_objects, eviction_runs.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_flags.h"
#include "flags.h"
#include "store.h"

static const uint8_t test_secret[GRANT_SECRET_BYTES] = "not-a-real-key!";

#define TIB (1ull << 40)

static double clock_ms(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double mono_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* Loop turns timed on the wall clock and on the thread's CPU clock (the
 * work itself: on a shared machine the wall time also holds preemption). */
struct turns {
	double wall0, cpu0;
	double max_wall, max_cpu, total_wall;
	uint64_t n;
};

static void turn_begin(struct turns *t)
{
	t->wall0 = mono_ms();
	t->cpu0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);
}

static void turn_end(struct turns *t)
{
	double cpu = clock_ms(CLOCK_THREAD_CPUTIME_ID) - t->cpu0;
	double wall = mono_ms() - t->wall0;

	t->max_wall = wall > t->max_wall ? wall : t->max_wall;
	t->max_cpu = cpu > t->max_cpu ? cpu : t->max_cpu;
	t->total_wall += wall;
	t->n++;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_stall: %s\n", what);
	exit(1);
}

static void mount_all(struct store *s, uint64_t segments, uint64_t capacity,
		      uint64_t now)
{
	for (uint64_t i = 0; i < segments; i++) {
		char name[32], err[128];
		struct mount_args a = {
		    .client_id = 1000 + i,
		    .host = name,
		    .domain = "",
		    .name = name,
		    .endpoint = "127.0.0.1:1",
		    .capacity = capacity,
		};
		uint64_t id;

		snprintf(name, sizeof(name), "seg-%llu", (unsigned long long)i);
		if (store_mount(s, &a, now, &id, err, sizeof(err)) !=
		    MCREPL_RPC__CODE__OK)
			die(err);
	}
}

static void put_all(struct store *s, uint64_t objects, uint32_t replicas,
		    uint64_t now)
{
	for (uint64_t i = 0; i < objects; i++) {
		char key[32], err[128];
		struct object *o;

		snprintf(key, sizeof(key), "key-%llu", (unsigned long long)i);
		if (store_put_start(s, "", key, 1024, replicas, now, &o, err,
				    sizeof(err)) != MCREPL_RPC__CODE__OK ||
		    store_put_end(s, "", key, o->version) !=
			MCREPL_RPC__CODE__OK)
			die(err);
	}
}

/* The clients that stay heartbeat at now. */
static void beat(struct store *s, uint64_t segments, uint64_t expire,
		 uint64_t now)
{
	for (uint64_t i = expire; i < segments; i++)
		store_heartbeat(s, 1000 + i, NULL, NULL, 0, now);
}

/* 50 ms ticks for ms, every client heartbeating. */
static void ticks(struct store *s, uint64_t segments, uint64_t *now,
		  uint64_t ms, uint64_t *last_evict, struct turns *tt)
{
	for (uint64_t t = 0; t < ms; t += 50) {
		*now += 50;
		beat(s, segments, 0, *now);
		turn_begin(tt);
		store_tick(s, *now, last_evict);
		turn_end(tt);
	}
}

static int evict_run(struct store *s, uint64_t objects, uint64_t segments,
		     uint64_t now, uint64_t lease_ms)
{
	uint64_t last_evict = now;
	struct store_figures f;
	struct turns leased = {0}, freeing = {0};

	for (uint64_t i = 0; i < objects; i++) {
		struct object *obj;
		size_t order[8], n;
		char key[32];

		snprintf(key, sizeof(key), "key-%llu", (unsigned long long)i);
		store_get(s, "", key, "", now, &obj, order, 8, &n);
	}
	ticks(s, segments, &now, 2000, &last_evict, &leased);
	store_figures(s, &f);
	fprintf(stderr,
		"bench_stall: leased: %llu objects evicted, %llu entries "
		"looked at\n",
		(unsigned long long)f.evicted_objects,
		(unsigned long long)f.evict_visits);
	now += lease_ms;
	ticks(s, segments, &now, 2000, &last_evict, &freeing);
	store_figures(s, &f);
	printf("evict_leased_max_ms=%.2f evict_leased_max_cpu_ms=%.2f "
	       "evict_free_max_ms=%.2f evict_free_max_cpu_ms=%.2f "
	       "evicted_objects=%llu eviction_runs=%llu\n",
	       leased.max_wall, leased.max_cpu, freeing.max_wall,
	       freeing.max_cpu, (unsigned long long)f.evicted_objects,
	       (unsigned long long)f.eviction_runs);
	return 0;
}

struct stall_opts {
	uint64_t objects, segments, expire;
	uint32_t replicas;
	bool evict;
};

#define O(f) FLAG_AT(struct stall_opts, f)
static const struct flag stall_flags[] = {
    {.name = "objects",
     .type = FLAG_U64,
     .off = O(objects),
     .def = "1000000",
     .help = "objects of 1 KiB",
     .min = 1,
     .max = 100000000},
    {.name = "segments",
     .type = FLAG_U64,
     .off = O(segments),
     .def = "200",
     .help = "segments holding them, a client and host each",
     .min = 1,
     .max = 100000},
    {.name = "expire",
     .type = FLAG_U64,
     .off = O(expire),
     .def = "100",
     .help = "segments whose clients stop beating, at most --segments "
	     "(0 = none)"},
    {.name = "replicas",
     .type = FLAG_U32,
     .off = O(replicas),
     .def = "1",
     .help = "replicas per object",
     .min = 1,
     .max = 64},
    {.name = "evict",
     .type = FLAG_BOOL,
     .off = O(evict),
     .def = "false",
     .help = "measure eviction of leased, then freed objects instead"},
};
#undef O

static const struct flag_set stall_set = {
    .prog = "bench_stall",
    .intro = "the longest master loop turn while segments leave",
    .title = "bench_stall flags",
    .width = 8,
    .flags = stall_flags,
    .n = sizeof(stall_flags) / sizeof(stall_flags[0]),
};

/* Turns of the master's loop, from the expiry of --expire clients until
 * their segments are gone and nothing is left to drain; one line. */
static void expire_run(struct store *s, const struct stall_opts *so,
		       const struct master_opts *o, uint64_t now)
{
	struct store_figures f;
	struct turns tt = {0};
	uint64_t last_evict;

	now += o->client_ttl_ms + 1;
	last_evict = now;
	do {
		struct object *obj;
		size_t order[8], n;
		char key[32];
		bool drain = store_backlog(s);

		beat(s, so->segments, so->expire, now);
		turn_begin(&tt);
		if (drain) /* a drain turn, as the master schedules them */
			store_drain(s, now);
		else
			store_tick(s, now, &last_evict);
		turn_end(&tt);
		now++;
		snprintf(key, sizeof(key), "key-%llu",
			 (unsigned long long)(tt.n % so->objects));
		store_get(s, "", key, "", now, &obj, order, 8, &n);
		store_figures(s, &f);
	} while (store_backlog(s) || f.segments > so->segments - so->expire);
	printf("stall_max_ms=%.2f stall_max_cpu_ms=%.2f stall_total_ms=%.1f "
	       "turns=%llu segments_left=%llu keys_left=%llu "
	       "replicas_lost=%llu objects_lost=%llu\n",
	       tt.max_wall, tt.max_cpu, tt.total_wall, (unsigned long long)tt.n,
	       (unsigned long long)f.segments, (unsigned long long)f.keys,
	       (unsigned long long)f.replicas_lost,
	       (unsigned long long)f.objects_lost);
}

int main(int argc, char **argv)
{
	struct stall_opts so = {0};
	struct master_opts o;
	struct store *s;
	uint64_t now = 1000000;
	double t0;
	int st = bench_flags(&stall_set, &so, argc, argv);

	if (st >= 0)
		return st;
	if (so.expire > so.segments) {
		fprintf(stderr,
			"bench_stall: --expire %llu is more than "
			"--segments %llu\n",
			(unsigned long long)so.expire,
			(unsigned long long)so.segments);
		return 2;
	}
	master_opts_defaults(&o);
	if (store_create(&o, test_secret, 1, &s) != 0)
		die("store_create");
	store_lock(s);
	/* --evict: 95 % full with 1088-byte regions (1 KiB + stamp) */
	mount_all(s, so.segments,
		  so.evict
		      ? so.objects * so.replicas * 1088 / so.segments * 100 / 95
		      : TIB,
		  now);
	t0 = mono_ms();
	put_all(s, so.objects, so.replicas, now);
	fprintf(stderr,
		"bench_stall: %llu objects on %llu segments in %.0f ms\n",
		(unsigned long long)so.objects, (unsigned long long)so.segments,
		mono_ms() - t0);
	if (so.evict)
		evict_run(s, so.objects, so.segments, now, o.kv_lease_ttl_ms);
	else
		expire_run(s, &so, &o, now);
	store_unlock(s);
	store_destroy(s);
	return 0;
}
