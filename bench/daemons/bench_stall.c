/*
 * bench_stall (issues 13 item 9, 17): the longest time the master's loop
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
 *
 * Last line: stall_max_ms=<longest turn> stall_total_ms=<sum of turns>
 * turns=<n> segments_left=<n> keys_left=<n> replicas_lost=<n>
 * objects_lost=<n>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flags.h"
#include "store.h"

#define TIB (1ull << 40)

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_stall: %s\n", what);
	exit(1);
}

static void mount_all(struct store *s, uint64_t segments, uint64_t now)
{
	for (uint64_t i = 0; i < segments; i++) {
		char name[32], err[128];
		struct mount_args a = {
		    .client_id = 1000 + i,
		    .host = name,
		    .domain = "",
		    .name = name,
		    .endpoint = "127.0.0.1:1",
		    .capacity = TIB,
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

int main(int argc, char **argv)
{
	uint64_t objects = 1000000, segments = 200, expire = 100;
	uint32_t replicas = 1;
	struct master_opts o;
	struct store *s;
	struct store_figures f;
	uint64_t now = 1000000, last_evict, turns = 0, max_turn = 0;
	double max_ms = 0, total_ms = 0, t0;

	for (int i = 1; i + 1 < argc; i += 2) {
		uint64_t v = strtoull(argv[i + 1], NULL, 10);

		if (strcmp(argv[i], "--objects") == 0)
			objects = v;
		else if (strcmp(argv[i], "--segments") == 0)
			segments = v;
		else if (strcmp(argv[i], "--expire") == 0)
			expire = v;
		else if (strcmp(argv[i], "--replicas") == 0)
			replicas = (uint32_t)v;
		else
			die("usage: bench_stall [--objects N] [--segments S] "
			    "[--expire E] [--replicas R]");
	}
	if (expire > segments || replicas == 0)
		die("--expire must be <= --segments, --replicas >= 1");
	master_opts_defaults(&o);
	if (store_create(&o, 1, 1, &s) != 0)
		die("store_create");
	store_lock(s);
	mount_all(s, segments, now);
	t0 = mono_ms();
	put_all(s, objects, replicas, now);
	fprintf(stderr,
		"bench_stall: %llu objects on %llu segments in %.0f ms\n",
		(unsigned long long)objects, (unsigned long long)segments,
		mono_ms() - t0);
	now += o.client_ttl_ms + 1;
	last_evict = now;
	do {
		struct object *obj;
		size_t order[8], n;
		char key[32];
		bool drain = store_backlog(s);
		double t;

		beat(s, segments, expire, now);
		t = mono_ms();
		if (drain) /* a drain turn, as the master schedules them */
			store_drain(s, now);
		else
			store_tick(s, now, &last_evict);
		t = mono_ms() - t;
		if (t > max_ms) {
			max_ms = t;
			max_turn = turns;
		}
		total_ms += t;
		turns++;
		now++;
		snprintf(key, sizeof(key), "key-%llu",
			 (unsigned long long)(turns % objects));
		store_get(s, "", key, "", now, &obj, order, 8, &n);
		store_figures(s, &f);
	} while (store_backlog(s) || f.segments > segments - expire);
	fprintf(stderr, "bench_stall: the longest turn was turn %llu\n",
		(unsigned long long)max_turn);
	printf("stall_max_ms=%.2f stall_total_ms=%.1f turns=%llu "
	       "segments_left=%llu keys_left=%llu replicas_lost=%llu "
	       "objects_lost=%llu\n",
	       max_ms, total_ms, (unsigned long long)turns,
	       (unsigned long long)f.segments, (unsigned long long)f.keys,
	       (unsigned long long)f.replicas_lost,
	       (unsigned long long)f.objects_lost);
	store_unlock(s);
	store_destroy(s);
	return 0;
}
