/* The policy engine (mcrepl/engine.h), through the public header: segments
 * and nodes, routed reads and their window, the tick and threshold, reader
 * order, proposals with projections, tracked replicas and retirement,
 * allocation failure and concurrent readers. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "mcrepl/engine.h"
#include "mcrepl/mcrepl.h"
#include "hotkey.h"
#include "testutil.h"

#define MIB (1024ULL * 1024ULL)
/* bucket = 10000 / 8 = 1250 ms; NOW is a window boundary (epoch 800) and
 * a reader-order period boundary (period 1000) */
#define BUCKET 1250ULL
#define NOW 1000000ULL

static mcrepl_config auto_cfg(void)
{
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	return c;
}

static mcrepl_engine *mk(const mcrepl_config *c)
{
	mcrepl_engine *e = NULL;

	ck_assert_int_eq(mcrepl_engine_create(c, NULL, &e), MCREPL_OK);
	ck_assert_ptr_nonnull(e);
	return e;
}

static mcrepl_engine_segment seg(uint64_t id, const char *host,
				 const char *domain, const char *node)
{
	mcrepl_engine_segment s = {.id = {id},
				   .client = {id},
				   .host = host,
				   .domain = domain,
				   .node = node,
				   .capacity = 64 * MIB,
				   .used = 8 * MIB,
				   .allocatable = true,
				   .can_copy = true};
	return s;
}

static void set(mcrepl_engine *e, uint64_t id, const char *host,
		const char *node)
{
	mcrepl_engine_segment s = seg(id, host, "", node);

	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
}

/* Segments 1 and 2 on hosts h1 and h2, and the first tick. */
static void two_hosts(mcrepl_engine *e)
{
	set(e, 1, "h1", NULL);
	set(e, 2, "h2", NULL);
	mcrepl_engine_tick(e, NOW, NULL);
}

static void reads(mcrepl_engine *e, uint64_t id, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){id});
}

static uint64_t load(mcrepl_engine *e, uint64_t id)
{
	return mcrepl_engine_load(e, (mcrepl_segment_id){id});
}

static mcrepl_engine_stats stats(mcrepl_engine *e)
{
	mcrepl_engine_stats s = {.struct_size = sizeof(s)};

	mcrepl_engine_get_stats(e, &s);
	return s;
}

START_TEST(test_engine_create_opts_and_stats_size)
{
	mcrepl_config c = auto_cfg(), bad = auto_cfg();
	mcrepl_engine_opts o = {.struct_size = sizeof(o)};
	mcrepl_engine_stats st;
	mcrepl_engine *e = (mcrepl_engine *)&o;

	bad.heat_window_ms = 0;
	ck_assert_int_eq(mcrepl_engine_create(&bad, NULL, &e), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_engine_create(NULL, NULL, &e), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_engine_create(&c, NULL, NULL), MCREPL_EINVAL);
	o.struct_size = sizeof(size_t) - 1;
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_EINVAL);
	o.struct_size = sizeof(o);
	o.max_segments = (1u << 24) + 1;
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_EINVAL);
	mcrepl_engine_destroy(NULL);

	/* a short struct_size: only max_segments (1) is read, the rest is 0
	 * (defaults) */
	o.max_segments = 1;
	o.max_dynamic_keys = 1;
	o.struct_size = offsetof(mcrepl_engine_opts, max_dynamic_keys);
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	ck_assert(mcrepl_engine_is_auto(e));
	ck_assert_ptr_nonnull(mcrepl_engine_leases(e));
	set(e, 1, "h1", NULL);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "a", (mcrepl_segment_id){1}),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "b", (mcrepl_segment_id){1}),
	    MCREPL_OK); /* max_dynamic_keys was not read */
	/* stats: a short struct_size fills only what fits */
	memset(&st, 0xab, sizeof(st));
	st.struct_size = offsetof(mcrepl_engine_stats, nodes);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.struct_size, offsetof(mcrepl_engine_stats, nodes));
	ck_assert_uint_eq(st.segments, 1);
	ck_assert_uint_eq(st.nodes, 0xabababab);
	st = stats(e);
	ck_assert_uint_eq(st.struct_size, sizeof(st));
	ck_assert_uint_eq(st.nodes, 1);
	ck_assert_uint_eq(st.dynamic_keys, 2);
	ck_assert_uint_eq(st.dynamic_replicas, 2);
	mcrepl_engine_destroy(e);

	c.mode = MCREPL_MODE_OFF;
	e = mk(&c);
	ck_assert(!mcrepl_engine_is_auto(e));
	mcrepl_engine_destroy(e);
	c = auto_cfg();
	c.policy = MCREPL_POLICY_RFC;
	e = mk(&c);
	ck_assert(!mcrepl_engine_is_auto(e));
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_segments_nodes_and_errors)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_opts o = {.struct_size = sizeof(o), .max_segments = 4};
	char longs[300];
	mcrepl_engine_segment s;
	mcrepl_engine *e;

	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	set(e, 1, "hA", "nic0");
	set(e, 2, "hB", "nic0"); /* same node as 1 */
	set(e, 3, "hA", NULL);	 /* node = host hA */
	set(e, 4, NULL, NULL);	 /* alone */
	ck_assert_uint_eq(stats(e).segments, 4);
	ck_assert_uint_eq(stats(e).nodes, 3);
	s = seg(5, "h5", "", NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_EFULL);
	s.id.v = 0;
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_EINVAL);
	memset(longs, 'x', 256);
	longs[256] = '\0';
	s = seg(1, longs, "", NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_EINVAL);
	s = seg(1, "hA", longs, NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_EINVAL);
	s = seg(1, "hA", "", longs);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_EINVAL);
	longs[255] = '\0'; /* 255 bytes: fine, and a new node */
	s = seg(4, NULL, "", longs);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	ck_assert_uint_eq(stats(e).nodes, 3);
	set(e, 4, NULL, NULL);

	/* reads on 1 count for 2 (same node); 3 and 4 apart */
	reads(e, 1, 5);
	reads(e, 2, 2);
	reads(e, 3, 7);
	reads(e, 99, 100); /* unknown: ignored */
	ck_assert_uint_eq(load(e, 1), 7);
	ck_assert_uint_eq(load(e, 2), 7);
	ck_assert_uint_eq(load(e, 3), 7);
	ck_assert_uint_eq(load(e, 4), 0);
	ck_assert_uint_eq(load(e, 99), 0);
	ck_assert_uint_eq(stats(e).window_reads, 14);
	reads(e, 4, 1);
	ck_assert_uint_eq(load(e, 4), 1);

	/* replace keeps a node's counts; moving 3 onto nic0 shows nic0's */
	set(e, 1, "hA", "nic0");
	ck_assert_uint_eq(load(e, 1), 7);
	set(e, 3, "hA", "nic0");
	ck_assert_uint_eq(load(e, 3), 7);
	ck_assert_uint_eq(stats(e).nodes, 2); /* hA had only 3 */

	ck_assert_int_eq(
	    mcrepl_engine_segment_used(e, (mcrepl_segment_id){9}, 1, true),
	    MCREPL_ENOENT);
	ck_assert_int_eq(
	    mcrepl_engine_segment_used(e, (mcrepl_segment_id){1}, 1, true),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){9}),
	    MCREPL_ENOENT);
	/* nic0 stays while 2 and 3 hold it */
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){1}), MCREPL_OK);
	ck_assert_uint_eq(load(e, 1), 0);
	ck_assert_uint_eq(load(e, 2), 7);
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){2}), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){3}), MCREPL_OK);
	/* nic0 is gone with its counts: a new segment on it starts at 0 */
	set(e, 1, "hA", "nic0");
	ck_assert_uint_eq(load(e, 1), 0);
	ck_assert_uint_eq(stats(e).segments, 2);
	ck_assert_uint_eq(stats(e).nodes, 2);
	ck_assert_uint_eq(stats(e).window_reads, 1);
	mcrepl_engine_destroy(e);
}
END_TEST

/* With every node slot taken, a segment moving to a new node reuses its
 * own node's slot when it was that node's only segment. */
START_TEST(test_engine_segment_moves_node_when_full)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_opts o = {.struct_size = sizeof(o), .max_segments = 2};
	mcrepl_engine *e;

	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	set(e, 1, "h1", "a");
	set(e, 2, "h2", "b");
	reads(e, 1, 3);
	reads(e, 2, 4);
	set(e, 1, "h1", "c"); /* a had only 1: a's slot becomes c */
	ck_assert_uint_eq(stats(e).nodes, 2);
	ck_assert_uint_eq(load(e, 1), 0);
	ck_assert_uint_eq(load(e, 2), 4);
	reads(e, 1, 2);
	ck_assert_uint_eq(load(e, 1), 2);
	set(e, 1, "h1", "b"); /* joins b: c goes */
	ck_assert_uint_eq(stats(e).nodes, 1);
	ck_assert_uint_eq(load(e, 1), 4);
	set(e, 2, "h2", "d"); /* b keeps 1: d takes the free slot */
	ck_assert_uint_eq(stats(e).nodes, 2);
	ck_assert_uint_eq(load(e, 1), 4);
	ck_assert_uint_eq(load(e, 2), 0);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_reads_roll_out_after_a_window)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = mk(&c);

	set(e, 1, "h1", NULL);
	mcrepl_engine_tick(e, NOW, NULL);
	reads(e, 1, 3);
	for (unsigned b = 1; b < MCREPL_HEAT_BUCKETS; b++) {
		mcrepl_engine_tick(e, NOW + b * BUCKET, NULL);
		reads(e, 1, 1);
	}
	/* 3 + 7 over the window */
	ck_assert_uint_eq(load(e, 1), 10);
	mcrepl_engine_tick(e, NOW + MCREPL_HEAT_BUCKETS * BUCKET - 1, NULL);
	ck_assert_uint_eq(load(e, 1), 10);
	mcrepl_engine_tick(e, NOW + MCREPL_HEAT_BUCKETS * BUCKET, NULL);
	ck_assert_uint_eq(load(e, 1), 7); /* the first bucket rolled out */
	/* a long gap clears the window */
	mcrepl_engine_tick(e, NOW + 100 * BUCKET, NULL);
	ck_assert_uint_eq(load(e, 1), 0);
	ck_assert_uint_eq(stats(e).window_reads, 0);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_tick_threshold_and_retire_due)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view got;
	mcrepl_engine_tick_result r;
	mcrepl_heat_params hp, want;
	mcrepl_engine *e = mk(&c);

	for (uint64_t i = 1; i <= 4; i++)
		set(e, i,
		    i == 1   ? "h1"
		    : i == 2 ? "h2"
		    : i == 3 ? "h3"
			     : "h4",
		    NULL);
	mcrepl_engine_tick(e, NOW, &r);
	ck_assert(!r.retire_due);
	reads(e, 1, 5000);
	reads(e, 2, 1000);
	reads(e, 3, 100);
	reads(e, 4, 1900);
	mcrepl_engine_tick(e, NOW + 1, &r);
	/* share 0.01 x 8000 / 4 = 20: (1 + sqrt(21))^2 = 31.2 -> 32 */
	ck_assert_uint_eq(r.threshold, 32);
	mcrepl_engine_cluster(e, &got);
	ck_assert_uint_eq(got.window_reads, 8000);
	ck_assert_uint_eq(got.nodes, 4);
	mcrepl_engine_heat_params(e, &hp);
	mcrepl_heat_params_init(&want, &c);
	ck_assert_uint_eq(hp.threshold, 32);
	ck_assert_uint_eq(hp.refire_buckets, 1);
	ck_assert_uint_eq(hp.bucket_ms, want.bucket_ms);
	ck_assert_uint_eq(stats(e).threshold, 32);

	/* retire_due needs a tracked key and a window boundary */
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "k", (mcrepl_segment_id){2}),
	    MCREPL_OK);
	for (unsigned b = 1; b < MCREPL_HEAT_BUCKETS; b++) {
		mcrepl_engine_tick(e, NOW + b * BUCKET, &r);
		ck_assert(!r.retire_due);
	}
	mcrepl_engine_tick(e, NOW + 8 * BUCKET, &r);
	ck_assert(r.retire_due);
	ck_assert_uint_eq(stats(e).retire_passes, 1);
	mcrepl_engine_tick(e, NOW + 8 * BUCKET + 10, &r);
	ck_assert(r.retire_due); /* still open, not reopened */
	ck_assert_uint_eq(stats(e).retire_passes, 1);
	mcrepl_engine_destroy(e);

	/* policy rfc: the config's threshold, no cluster view */
	c.policy = MCREPL_POLICY_RFC;
	e = mk(&c);
	set(e, 1, "h1", NULL);
	reads(e, 1, 5000);
	mcrepl_engine_tick(e, NOW, &r);
	mcrepl_heat_params_init(&want, &c);
	ck_assert_uint_eq(r.threshold, want.threshold);
	ck_assert_uint_eq(r.threshold, 8); /* 0.8/s x 10 s */
	mcrepl_engine_cluster(e, &got);
	ck_assert_uint_eq(got.nodes, 0);
	ck_assert_uint_eq(got.window_reads, 0);
	mcrepl_engine_heat_params(e, &hp);
	ck_assert_uint_eq(hp.refire_buckets, want.refire_buckets);
	ck_assert_uint_eq(hp.threshold, 8);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "k", (mcrepl_segment_id){1}),
	    MCREPL_OK);
	mcrepl_engine_tick(e, NOW + 8 * BUCKET, &r);
	ck_assert(!r.retire_due);
	mcrepl_engine_destroy(e);
}
END_TEST

static const mcrepl_replica_view two_reps[2] = {
    {{1}, {1}, "h1", "", true, true, false, true, 0},
    {{2}, {2}, "h2", "", true, true, true, true, 0},
};

/* For 16 salts, the engine's order of two_reps puts `first` first;
 * PLAIN: it is the order without loads (every node equal). */
#define PLAIN SIZE_MAX
static void assert_first(mcrepl_engine *e, size_t first)
{
	size_t ord[2], want[2];

	for (uint64_t salt = 0; salt < 16; salt++) {
		ck_assert_int_eq(
		    mcrepl_engine_order(e, "t", "k", two_reps, 2, salt, ord),
		    MCREPL_OK);
		if (first != PLAIN) {
			ck_assert_uint_eq(ord[0], first);
			continue;
		}
		mcrepl_order_replicas("t", "k", two_reps, NULL, 2, salt, want);
		ck_assert_uint_eq(ord[0], want[0]);
		ck_assert_uint_eq(ord[1], want[1]);
	}
}

/* Readers on other threads: the order sees their reads of this period as
 * of the last tick (it reads no other thread's counters), and its own at
 * once. */
struct reads_job {
	mcrepl_engine *e;
	uint64_t id;
	unsigned n;
};

static void *reads_thread(void *arg)
{
	struct reads_job *j = arg;

	reads(j->e, j->id, j->n);
	return NULL;
}

static void reads_on_thread(mcrepl_engine *e, uint64_t id, unsigned n)
{
	struct reads_job j = {e, id, n};
	pthread_t th;

	ck_assert_int_eq(pthread_create(&th, NULL, reads_thread, &j), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
}

START_TEST(test_engine_order_sees_other_threads_at_the_tick)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = mk(&c);

	two_hosts(e);
	reads_on_thread(e, 1, 300);
	reads_on_thread(e, 2, 200);
	/* counted in the window at once */
	ck_assert_uint_eq(load(e, 1), 300);
	ck_assert_uint_eq(load(e, 2), 200);
	mcrepl_engine_tick(e, NOW + 1, NULL); /* same period */
	assert_first(e, 1);		      /* 200 < 300 */
	/* this thread's own reads count at once: 200 + 150 > 300 */
	reads(e, 2, 150);
	assert_first(e, 0);
	/* a new period: nothing read in it, the plain order */
	mcrepl_engine_tick(e, NOW + 1000, NULL);
	assert_first(e, PLAIN);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_order_by_period_reads)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_opts o = {.struct_size = sizeof(o),
				.order_by_load = true};
	size_t ord[2];
	mcrepl_engine *e = mk(&c);

	two_hosts(e);
	reads(e, 1, 5);
	reads(e, 2, 1);
	assert_first(e, 1);
	/* the period rolls: under auto this period alone, all equal */
	mcrepl_engine_tick(e, NOW + 1000, NULL);
	assert_first(e, PLAIN);
	ck_assert_int_eq(mcrepl_engine_order(e, "t", "k", NULL, 2, 0, ord),
			 MCREPL_EINVAL);
	mcrepl_engine_destroy(e);

	/* rfc: no load order unless order_by_load, which sums two periods */
	c.policy = MCREPL_POLICY_RFC;
	e = mk(&c);
	two_hosts(e);
	reads(e, 1, 5);
	assert_first(e, PLAIN);
	mcrepl_engine_destroy(e);
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	two_hosts(e);
	reads(e, 1, 5);
	mcrepl_engine_tick(e, NOW + 1000, NULL);
	reads(e, 2, 4); /* 5 (previous) vs 4 (this): 2 first */
	assert_first(e, 1);
	mcrepl_engine_tick(e, NOW + 2000, NULL);
	reads(e, 1, 1); /* 0 + 1 vs 4 + 0: 1 first */
	assert_first(e, 0);
	/* a skipped period: the one before is empty, 4 reads are older */
	mcrepl_engine_tick(e, NOW + 4000, NULL);
	reads(e, 2, 1); /* 0 + 0 vs 0 + 1: 1 first */
	assert_first(e, 0);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Four segments on four hosts, the key on segment 1 (readable, static);
 * sizes as check_policy.c's propose4: 3 is fullest, 2 and 4 emptiest. */
static mcrepl_engine *four(const mcrepl_config *c, const unsigned r[4])
{
	mcrepl_engine *e = mk(c);
	static const char *hosts[4] = {"h1", "h2", "h3", "h4"};
	static const uint64_t used[4] = {8 * MIB, 8 * MIB, 40 * MIB, 16 * MIB};

	for (unsigned i = 0; i < 4; i++) {
		mcrepl_engine_segment s = seg(i + 1, hosts[i], "", NULL);

		s.used = used[i];
		ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	}
	mcrepl_engine_tick(e, NOW, NULL);
	for (unsigned i = 0; i < 4; i++)
		reads(e, i + 1, r[i]);
	mcrepl_engine_tick(e, NOW + 1, NULL);
	return e;
}

static mcrepl_status propose_recent(mcrepl_engine *e, const char *id,
				    uint32_t heat, uint32_t recent,
				    uint64_t now, mcrepl_propose_result *res)
{
	static const mcrepl_replica_view rep = {.segment = {1},
						.client = {1},
						.host = "h1",
						.domain = "",
						.readable = true,
						.memory = true,
						.can_copy = true};
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = id,
			     .tenant = "t",
			     .key = id,
			     .observed_version = 7,
			     .expected_size = MIB,
			     .expires_at_ms = now + 5000};
	mcrepl_object_view o = {.exists = true,
				.version = 7,
				.size = MIB,
				.readable_memory_replicas = 1};
	mcrepl_propose_input in = {
	    .proposal = &p,
	    .object = &o,
	    .heat_count = heat,
	    .heat_recent = recent,
	    .replicas = &rep,
	    .n_replicas = 1,
	    .now_ms = now,
	};

	return mcrepl_engine_propose(e, &in, res);
}

static mcrepl_status propose(mcrepl_engine *e, const char *id, uint32_t heat,
			     uint64_t now, mcrepl_propose_result *res)
{
	return propose_recent(e, id, heat, 0, now, res);
}

START_TEST(test_engine_propose_projects_and_fades)
{
	static const unsigned busy1[4] = {5000, 1000, 100, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_engine *e;

	ck_assert(!c.read_load_aware_placement); /* auto places by load */
	e = four(&c, busy1);
	ck_assert_int_eq(propose(e, "c", 182, NOW + 1, &res), MCREPL_OK);
	ck_assert(!res.repeated);
	ck_assert_uint_eq(res.lease.target.v, 3);
	/* level 5000 (segment 1), target 100: gap 4900, r 1: 2450 capped at
	 * the key's 182 */
	ck_assert_uint_eq(load(e, 3), 100 + 182);
	ck_assert_uint_eq(load(e, 1), 5000 - 182);
	ck_assert_uint_eq(load(e, 2), 1000);
	ck_assert_uint_eq(stats(e).projections, 1);
	/* the same proposal again: the same lease, no second projection */
	ck_assert_int_eq(propose(e, "c", 182, NOW + 1, &res), MCREPL_OK);
	ck_assert(res.repeated);
	ck_assert_uint_eq(load(e, 3), 282);
	ck_assert_uint_eq(stats(e).projections, 1);
	/* fades 182 / 8 = 22.75 a bucket while the reads stay */
	mcrepl_engine_tick(e, NOW + BUCKET, NULL);
	ck_assert_uint_eq(load(e, 3), 259);  /* 259.25 */
	ck_assert_uint_eq(load(e, 1), 4841); /* 4840.75 */
	for (unsigned b = 2; b < MCREPL_HEAT_BUCKETS; b++)
		mcrepl_engine_tick(e, NOW + b * BUCKET, NULL);
	ck_assert_uint_eq(load(e, 3), 123);  /* 122.75 */
	ck_assert_uint_eq(load(e, 1), 4977); /* 4977.25 */
	mcrepl_engine_tick(e, NOW + 8 * BUCKET, NULL);
	ck_assert_uint_eq(load(e, 3), 0);
	ck_assert_uint_eq(load(e, 1), 0);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_propose_promised_bytes)
{
	static const unsigned r[4] = {5000, 1000, 100, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_engine_segment s;
	mcrepl_engine *e = four(&c, r);

	/* 3 can take one 1 MiB copy only: 54 MiB <= 0.85 x 64 MiB < 55 */
	ck_assert_double_eq(c.target_high_watermark, 0.85);
	s = seg(3, "h3", "", NULL);
	s.used = 53 * MIB;
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	ck_assert_int_eq(propose(e, "p1", 182, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	ck_assert_int_eq(
	    mcrepl_leases_abort(mcrepl_engine_leases(e), res.lease.id),
	    MCREPL_OK);
	/* the promise still counts on 3: the next copy goes elsewhere */
	ck_assert_int_eq(propose(e, "p2", 182, NOW + 3, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2); /* next least loaded */
	/* the host's used bytes replace the promise */
	ck_assert_int_eq(mcrepl_engine_segment_used(e, (mcrepl_segment_id){3},
						    53 * MIB, true),
			 MCREPL_OK);
	ck_assert_int_eq(propose(e, "p3", 182, NOW + 3, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_propose_balance_gate)
{
	static const unsigned even[4] = {2000, 2000, 2000, 2000};
	static const unsigned busy1[4] = {5000, 1000, 100, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_engine *e = four(&c, even);

	ck_assert_int_eq(propose(e, "b", 1000, NOW + 1, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	ck_assert_uint_eq(stats(e).projections, 0);
	mcrepl_engine_destroy(e);
	e = four(&c, busy1);
	ck_assert_int_eq(propose(e, "a", 31, NOW + 1, &res), MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	ck_assert_int_eq(propose(e, "c0", 181, NOW + 1, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	ck_assert_int_eq(propose(e, "c", 182, NOW + 1, &res), MCREPL_OK);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NONE);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The cluster view is as of the proposal, not of the last tick: before the
 * engine's first tick (a master that starts, or fails over, under a hot
 * workload) the balance gate judges the reads counted so far, where it
 * used to find no view and admit every key over the config's absolute
 * threshold (167 copies in the first 60 ms at 100 k reads/s, 8 segments). */
START_TEST(test_engine_propose_judged_before_first_tick)
{
	static const char *hosts[4] = {"h1", "h2", "h3", "h4"};
	static const unsigned even[4] = {2000, 2000, 2000, 2000};
	static const unsigned busy1[4] = {5000, 1000, 100, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_cluster_view cl;

	for (int run = 0; run < 2; run++) {
		mcrepl_engine *e = mk(&c);

		for (unsigned i = 0; i < 4; i++) {
			set(e, i + 1, hosts[i], NULL);
			reads(e, i + 1, (run ? busy1 : even)[i]);
		}
		if (!run) {
			ck_assert_int_eq(propose(e, "k", 1000, NOW, &res),
					 MCREPL_EREJECTED);
			ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
		} else {
			ck_assert_int_eq(propose(e, "k", 182, NOW, &res),
					 MCREPL_OK);
			ck_assert_uint_eq(res.lease.target.v, 3);
		}
		mcrepl_engine_cluster(e, &cl);
		ck_assert_uint_eq(cl.nodes, 4);
		ck_assert_uint_eq(cl.window_reads, 8000);
		mcrepl_engine_destroy(e);
	}
}
END_TEST

/* After the first tick a proposal meets the threshold the read path was
 * given (the tick's): a key judged at the count it crossed at is not
 * refused BELOW_THRESHOLD because reads counted since the tick moved the
 * share. 400 reads on 2 nodes: share 2, threshold 8; 8 reads more: share
 * 3, threshold 9 (until the next tick). */
START_TEST(test_engine_propose_threshold_is_the_ticks)
{
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_heat_params hp;
	mcrepl_engine *e = mk(&c);

	set(e, 1, "h1", NULL);
	set(e, 2, "h2", NULL);
	reads(e, 1, 200);
	reads(e, 2, 200);
	mcrepl_engine_tick(e, NOW, NULL);
	mcrepl_engine_heat_params(e, &hp);
	ck_assert_uint_eq(hp.threshold, 8);
	reads(e, 1, 8); /* the key's, up to its crossing */
	ck_assert_int_eq(propose(e, "k", 8, NOW + 1, &res), MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED); /* 208 : 200 */
	ck_assert_int_eq(propose(e, "k2", 7, NOW + 1, &res), MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	mcrepl_engine_tick(e, NOW + 2, NULL); /* now the share is 3 */
	mcrepl_engine_heat_params(e, &hp);
	ck_assert_uint_eq(hp.threshold, 9);
	ck_assert_int_eq(propose(e, "k3", 8, NOW + 3, &res), MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The reads r[] of one window at now, then a tick that shows them. */
static void window_reads(mcrepl_engine *e, const unsigned r[4], uint64_t now)
{
	mcrepl_engine_tick(e, now, NULL);
	for (unsigned i = 0; i < 4; i++)
		reads(e, i + 1, r[i]);
	mcrepl_engine_tick(e, now + 1, NULL); /* the cluster view sees them */
}

/* A key whose window count (181) the gate refuses is admitted when its
 * last bucket shows it read at a higher rate. Right after a bucket
 * boundary the count covers 7 buckets: 39 reads scale to 273, 185 after
 * two deviations (mcr_policy_rising()); 38 reads (179) are noise and
 * change nothing. The source gives up at most the 181 reads its window
 * holds, and the target gains what the source gives up (a copy moves
 * reads, it makes none: the cluster's sum, the gate's mean, stays).
 * Nothing rises before the engine has seen a full window. */
START_TEST(test_engine_propose_rising_key_judged_by_its_rate)
{
	static const unsigned busy1[4] = {5000, 1000, 100, 1900};
	const uint64_t W = 8 * BUCKET, now = NOW + W + 1;
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_engine *e = four(&c, busy1);

	/* the first window: the count alone */
	ck_assert_int_eq(propose_recent(e, "r0", 181, 39, NOW + 1, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	window_reads(e, busy1, NOW + W);
	ck_assert_int_eq(propose_recent(e, "r1", 181, 38, now, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	ck_assert_int_eq(propose_recent(e, "r2", 181, 39, now, &res),
			 MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	ck_assert_uint_eq(load(e, 3), 100 + 181);
	ck_assert_uint_eq(load(e, 1), 5000 - 181);
	/* a key with one read in its window but 39 in its last bucket */
	ck_assert_int_eq(propose_recent(e, "r4", 1, 39, now, &res), MCREPL_OK);
	mcrepl_engine_destroy(e);
	/* policy rfc: the window count only */
	c.policy = MCREPL_POLICY_RFC;
	e = four(&c, busy1);
	window_reads(e, busy1, NOW + W);
	ck_assert_int_eq(propose_recent(e, "r3", 1, 39, now, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Four nodes with 1,750-1,800 reads in the window each: balanced. When
 * segment 1's 1,800 came in the last two buckets (a node that just turned
 * hot), its rate (7,200 a window, 6,860 after two deviations) opens the
 * gate; spread over the window the same reads are refused BALANCED. A
 * copy projected to relieve the node does not take it below that rate
 * (mcr_policy_recent_low()). */
static mcrepl_engine *rising_nodes(bool late)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = mk(&c);
	static const char *hosts[4] = {"h1", "h2", "h3", "h4"};

	for (unsigned i = 0; i < 4; i++) {
		mcrepl_engine_segment s = seg(i + 1, hosts[i], "", NULL);

		ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	}
	for (unsigned b = 0; b < MCREPL_HEAT_BUCKETS; b++) {
		mcrepl_engine_tick(e, NOW + b * BUCKET, NULL);
		for (unsigned i = 2; i <= 4; i++)
			reads(e, i, 250);
		if (late)
			reads(e, 1, b >= 6 ? 900 : 0);
		else if (b >= 1) /* bucket 0 leaves the window */
			reads(e, 1, b == 7 ? 258 : 257);
	}
	mcrepl_engine_tick(e, NOW + MCREPL_HEAT_BUCKETS * BUCKET, NULL);
	return e;
}

START_TEST(test_engine_propose_rising_node_judged_by_its_rate)
{
	uint64_t now = NOW + MCREPL_HEAT_BUCKETS * BUCKET;
	mcrepl_propose_result res;
	mcrepl_engine *e = rising_nodes(false);

	ck_assert_uint_eq(load(e, 1), 1800);
	ck_assert_uint_eq(load(e, 2), 1750);
	ck_assert_int_eq(propose(e, "n0", 1000, now, &res), MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	mcrepl_engine_destroy(e);
	e = rising_nodes(true);
	/* the rising view: 1,800 in two buckets is 6,300 over the 7 the
	 * window count covers, 6,003 after two deviations */
	ck_assert_uint_eq(load(e, 1), 6003);
	ck_assert_int_eq(propose(e, "n1", 1000, now, &res), MCREPL_OK);
	ck_assert_uint_ne(res.lease.target.v, 1);
	/* the copy moves the key's 1,000 reads: its target gains them, but
	 * segment 1 stays at the rate its last buckets show, 6,003 (not
	 * 5,003), until those buckets show the drop */
	ck_assert_uint_eq(load(e, res.lease.target.v), 1750 + 1000);
	ck_assert_uint_eq(load(e, 1), 6003);
	mcrepl_engine_destroy(e);
}
END_TEST

/* A node's load asked again (placement asks every node on every
 * proposal, and the engine remembers its estimates between asks) follows
 * the reads since, the tick's time, a roll and a node slot used again. */
START_TEST(test_engine_load_asked_again_follows_reads_and_time)
{
	uint64_t now = NOW + MCREPL_HEAT_BUCKETS * BUCKET;
	mcrepl_engine *e = rising_nodes(false), *f;

	ck_assert_uint_eq(load(e, 1), 1800);
	reads(e, 1, 100); /* the same tick */
	ck_assert_uint_eq(load(e, 1), 1900);
	mcrepl_engine_tick(e, now + BUCKET, NULL); /* bucket 1 rolls out */
	ck_assert_uint_eq(load(e, 1), 1900 - 257);
	ck_assert_uint_eq(stats(e).window_reads, 3 * (1750 - 250) + 1900 - 257);
	mcrepl_engine_destroy(e);
	/* the rising view: half a bucket later its span is longer */
	e = rising_nodes(true);
	f = rising_nodes(true); /* the same reads, never asked before */
	ck_assert_uint_eq(load(e, 1), 6003);
	mcrepl_engine_tick(e, now + BUCKET / 2, NULL);
	mcrepl_engine_tick(f, now + BUCKET / 2, NULL);
	ck_assert_uint_eq(load(e, 1), 6431);
	ck_assert_uint_eq(load(f, 1), 6431);
	/* host h1 leaves and comes back: a new node, no reads */
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){1}), MCREPL_OK);
	set(e, 1, "h1", NULL);
	ck_assert_uint_eq(load(e, 1), 0);
	mcrepl_engine_destroy(e);
	mcrepl_engine_destroy(f);
}
END_TEST

/* Placement reads the views the engine keeps between proposals: a read
 * or a projection after one proposal shows in the next one's targets. */
START_TEST(test_engine_propose_views_follow_reads_and_projections)
{
	static const unsigned busy1[4] = {9000, 1000, 100, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_engine *e = four(&c, busy1);

	ck_assert_int_eq(propose(e, "v1", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	ck_assert_uint_eq(load(e, 3), 100 + 1000);
	ck_assert_uint_eq(load(e, 1), 9000 - 1000);
	/* the projection: 3 now above 2 */
	ck_assert_int_eq(propose(e, "v2", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2);
	ck_assert_uint_eq(load(e, 2), 1000 + 1000);
	/* reads: 3 at 2,100, over 2 at 2,000 and 4 at 1,900 */
	reads(e, 3, 1000);
	ck_assert_int_eq(propose(e, "v3", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 4);
	mcrepl_engine_destroy(e);
}
END_TEST

/* A segment set, added or removed after one proposal shows in the next
 * one's targets. */
START_TEST(test_engine_propose_views_follow_segment_changes)
{
	static const unsigned busy1[4] = {9000, 1000, 100, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_propose_result res;
	mcrepl_engine *e = four(&c, busy1);
	mcrepl_engine_segment s = seg(2, "h2", "", NULL);

	ck_assert_int_eq(propose(e, "w1", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	/* 2, the least loaded, full: 60 + 1 MiB over 0.85 x 64 MiB */
	s.used = 60 * MIB;
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	ck_assert_int_eq(propose(e, "w2", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3); /* 1,100 under 4's 1,900 */
	ck_assert_uint_eq(load(e, 3), 2100);
	/* a new segment, no reads: the least loaded */
	set(e, 5, "h5", NULL);
	ck_assert_int_eq(propose(e, "w3", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 5);
	/* gone again: 4 at 1,900 under 3 at 2,100 */
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){5}), MCREPL_OK);
	ck_assert_int_eq(propose(e, "w4", 1000, NOW + 1, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 4);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Four 100 MiB segments `used` full, target watermark `wm` and fill line
 * `fill`, 64 reads on segment 1, and the first tick. */
static mcrepl_engine *full4(uint64_t used, double wm, double fill)
{
	static const char *hosts[4] = {"h1", "h2", "h3", "h4"};
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e;

	c.target_high_watermark = wm;
	c.room_fill_limit = fill;
	e = mk(&c);
	for (unsigned i = 0; i < 4; i++) {
		mcrepl_engine_segment s = seg(i + 1, hosts[i], "", NULL);

		s.capacity = 100 * MIB;
		s.used = used;
		ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	}
	reads(e, 1, 64);
	mcrepl_engine_tick(e, NOW, NULL);
	return e;
}

/* A room credit a proposal of the key wrote into its views is not in the
 * next proposal's, another key's. */
START_TEST(test_engine_propose_views_drop_a_room_credit)
{
	mcrepl_engine *e = full4(90 * MIB, 0.85, 0.90); /* no headroom */
	mcrepl_propose_result res;
	mcrepl_room room;
	struct hot h;

	hot_key(&h, "r1", "hot");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NO_TARGET);
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, MIB);
	ck_assert_int_eq(
	    mcrepl_engine_segment_used(e, room.segment, 89 * MIB, true),
	    MCREPL_OK);
	/* the key's proposal, credited, refused for its heat */
	hot_key(&h, "r2", "hot");
	h.in.heat_count = 1;
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	/* another key: no credit, no target */
	hot_key(&h, "r3", "other");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NO_TARGET);
	/* the key itself: its credit */
	hot_key(&h, "r4", "hot");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, room.segment.v);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The room a caller asks for writes its guesses (every segment with
 * room for the copy) into the views: the next proposal has none of them.
 * Full segments, the watermark at 1: nothing fits. */
START_TEST(test_engine_propose_views_drop_room_guesses)
{
	mcrepl_engine *e = full4(100 * MIB, 1.0, 1.0);
	mcrepl_propose_result res;
	mcrepl_room room;
	struct hot h;

	hot_key(&h, "g1", "hot");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NO_TARGET);
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, MIB);
	hot_key(&h, "g2", "other");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NO_TARGET);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Three nodes a full window in: h1 busy (3,000 reads a bucket, the key's
 * replica), h3 steady (880 a bucket), h2 rising (900 in each of the last
 * two buckets only). */
static mcrepl_engine *span_nodes(void)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = mk(&c);
	static const char *hosts[3] = {"h1", "h2", "h3"};

	for (unsigned i = 0; i < 3; i++) {
		mcrepl_engine_segment s = seg(i + 1, hosts[i], "", NULL);

		ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	}
	for (unsigned b = 0; b < MCREPL_HEAT_BUCKETS; b++) {
		mcrepl_engine_tick(e, NOW + b * BUCKET, NULL);
		reads(e, 1, 3000);
		reads(e, 3, 880);
		reads(e, 2, b >= 6 ? 900 : 0);
	}
	mcrepl_engine_tick(e, NOW + MCREPL_HEAT_BUCKETS * BUCKET, NULL);
	return e;
}

/* With no read and no projection, the tick alone moves the rising views
 * (their span grows): the next proposal's targets see it. */
START_TEST(test_engine_propose_views_follow_the_tick)
{
	uint64_t now = NOW + MCREPL_HEAT_BUCKETS * BUCKET;
	mcrepl_propose_result res;
	mcrepl_engine *e = span_nodes();

	/* span 7: h2 1,800 x 7 / 2 = 6,300, less two deviations 6,003; h3
	 * its count, 6,160 */
	ck_assert_uint_eq(load(e, 2), 6003);
	ck_assert_uint_eq(load(e, 3), 6160);
	ck_assert_int_eq(propose(e, "s1", 1000, now, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2);
	mcrepl_engine_destroy(e);
	/* the same, a proposal refused at span 7, then one at span 7.5: h2
	 * 6,431, h3 1,760 x 7.5 / 2 = 6,600 less two deviations 6,285 */
	e = span_nodes();
	ck_assert_int_eq(propose(e, "s0", 1, now, &res), MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	mcrepl_engine_tick(e, now + BUCKET / 2, NULL);
	ck_assert_uint_eq(load(e, 2), 6431);
	ck_assert_uint_eq(load(e, 3), 6285);
	ck_assert_int_eq(propose(e, "s1", 1000, now + BUCKET / 2, &res),
			 MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	mcrepl_engine_destroy(e);
}
END_TEST

/* ---- retirement --------------------------------------------------------- */

struct probe_ctx {
	const char *hot_key;	 /* count 100 */
	const char *busy_key;	 /* busy */
	const char *gone_key;	 /* gone */
	const char *cold_domain; /* domain-aware: the domain where it is cold */
	uint32_t readable;
	unsigned calls;
};

static void probe(void *ctx, const char *tenant, const char *key,
		  const char *domain, mcrepl_retire_probe *out)
{
	struct probe_ctx *p = ctx;

	(void)tenant;
	p->calls++;
	memset(out, 0, sizeof(*out));
	out->readable = p->readable;
	if (p->hot_key && strcmp(key, p->hot_key) == 0)
		out->count = 100;
	if (domain && p->cold_domain && strcmp(domain, p->cold_domain) != 0)
		out->count = 100;
	out->busy = p->busy_key && strcmp(key, p->busy_key) == 0;
	out->gone = p->gone_key && strcmp(key, p->gone_key) == 0;
}

static void add(mcrepl_engine *e, const char *key, uint64_t segid)
{
	ck_assert_int_eq(mcrepl_engine_replica_added(
			     e, "t", key, (mcrepl_segment_id){segid}),
			 MCREPL_OK);
}

/* Ticks one bucket at a time from NOW to the next window boundary. */
static void to_boundary(mcrepl_engine *e, uint64_t *now)
{
	mcrepl_engine_tick_result r;

	do {
		*now += BUCKET;
		mcrepl_engine_tick(e, *now, &r);
	} while ((*now / BUCKET) % MCREPL_HEAT_BUCKETS);
	ck_assert(r.retire_due);
}

START_TEST(test_engine_retire_pass)
{
	mcrepl_config c = auto_cfg();
	struct probe_ctx pc = {.hot_key = "hot",
			       .busy_key = "busy",
			       .gone_key = "gone",
			       .readable = 2};
	mcrepl_retirement out[4];
	mcrepl_key_state ks;
	uint64_t now = NOW;
	size_t n, seen = 0;
	mcrepl_engine *e = mk(&c);

	set(e, 1, "h1", NULL);
	set(e, 2, "h2", NULL);
	set(e, 3, "h3", NULL);
	mcrepl_engine_tick(e, now, NULL);
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &pc, out, 4, &n),
			  0); /* no pass open */
	add(e, "cold", 2);
	add(e, "cold", 3);
	add(e, "hot", 2);
	add(e, "busy", 2);
	add(e, "gone", 3);
	add(e, "cold", 3); /* again: no-op */
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "x", (mcrepl_segment_id){9}),
	    MCREPL_ENOENT);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "", (mcrepl_segment_id){1}),
	    MCREPL_EINVAL);
	ck_assert_uint_eq(stats(e).dynamic_keys, 4);
	ck_assert_uint_eq(stats(e).dynamic_replicas, 5);
	to_boundary(e, &now);
	/* the busiest node's replica of "cold" goes: 3 */
	reads(e, 3, 10);
	reads(e, 2, 1);
	/* cap 1: one key per call, the pass resumes */
	for (size_t v;
	     (v = mcrepl_engine_retire(e, now, probe, &pc, out, 1, &n));) {
		ck_assert_uint_eq(v, 1);
		seen += v;
		if (n) {
			ck_assert_uint_eq(n, 1);
			ck_assert_str_eq(out[0].tenant, "t");
			ck_assert_str_eq(out[0].key, "cold");
			ck_assert_uint_eq(out[0].segment.v, 3);
		}
	}
	ck_assert_uint_eq(seen, 4);
	ck_assert_uint_eq(pc.calls, 4);
	ck_assert_uint_eq(stats(e).retired_total, 1);
	ck_assert_uint_eq(stats(e).retire_visits, 4);
	/* gone: forgotten */
	ck_assert_uint_eq(stats(e).dynamic_keys, 3);
	ck_assert_uint_eq(stats(e).dynamic_replicas, 4);
	ck_assert_int_eq(mcrepl_engine_replica_dropped(
			     e, "t", "cold", (mcrepl_segment_id){3}, true, now),
			 MCREPL_OK);
	mcrepl_leases_key_state(mcrepl_engine_leases(e), "t", "cold", NULL, now,
				&ks);
	ck_assert_uint_eq(ks.recreate_after_ms, now + c.recreate_cooldown_ms);
	ck_assert_int_eq(mcrepl_engine_replica_dropped(e, "t", "cold",
						       (mcrepl_segment_id){3},
						       false, now),
			 MCREPL_ENOENT);
	ck_assert_uint_eq(stats(e).dynamic_replicas, 3);

	/* never the last readable replica */
	pc.readable = 1;
	pc.calls = 0;
	to_boundary(e, &now);
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &pc, out, 4, &n),
			  3);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &pc, out, 4, &n),
			  0);
	/* the segment leaves: its replicas go */
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){2}), MCREPL_OK);
	ck_assert_uint_eq(stats(e).dynamic_keys, 0);
	ck_assert_uint_eq(stats(e).dynamic_replicas, 0);
	ck_assert_uint_eq(stats(e).retire_passes, 2);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_retire_max_dynamic_keys)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_opts o = {.struct_size = sizeof(o),
				.max_dynamic_keys = 2};
	mcrepl_engine *e;

	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	set(e, 1, "h1", NULL);
	set(e, 2, "h2", NULL);
	add(e, "a", 1);
	add(e, "b", 1);
	add(e, "b", 2); /* a known key: fine */
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "c", (mcrepl_segment_id){1}),
	    MCREPL_EFULL);
	ck_assert_uint_eq(stats(e).untracked_total, 1);
	ck_assert_uint_eq(stats(e).dynamic_keys, 2);
	ck_assert_uint_eq(stats(e).dynamic_replicas, 3);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_retire_per_domain)
{
	mcrepl_config c = auto_cfg();
	struct probe_ctx pc = {.cold_domain = "b", .readable = 2};
	mcrepl_retirement out[4];
	mcrepl_engine_segment s;
	uint64_t now = NOW;
	size_t n;
	mcrepl_engine *e;

	c.domain_aware = true;
	e = mk(&c);
	s = seg(1, "h1", "a", NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	s = seg(2, "h2", "a", NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	s = seg(3, "h3", "b", NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	s = seg(4, "h4", "b", NULL);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	mcrepl_engine_tick(e, now, NULL);
	add(e, "k", 2);
	add(e, "k", 3);
	to_boundary(e, &now);
	/* hot in a, cold in b: b's copy goes */
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &pc, out, 4, &n),
			  1);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(out[0].segment.v, 3);
	/* cold in a instead */
	pc.cold_domain = "a";
	to_boundary(e, &now);
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &pc, out, 4, &n),
			  1);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(out[0].segment.v, 2);
	mcrepl_engine_destroy(e);
}
END_TEST

/* ---- allocation failure ------------------------------------------------- */

/* The counters the engine keeps (mcrepl_engine_opts.stats): a lease counts
 * as accepted, created and in flight once a task is bound, then revoked or
 * failed when it ends so; a completed copy is the host's replica_added (a
 * replica recovered at a failover is tracked, not counted). */
static void fence_of(const mcrepl_propose_result *res, mcrepl_fence *f)
{
	*f = (mcrepl_fence){.lease = res->lease.id,
			    .version = 7,
			    .caller = res->lease.source_client,
			    .object_version = 7};
}

START_TEST(test_engine_counts_lease_lifecycle)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_opts o = {.struct_size = sizeof(o)};
	mcrepl_propose_result res;
	mcrepl_stats *st = NULL;
	mcrepl_engine *e = NULL;
	mcrepl_leases *lt;
	mcrepl_lease out;
	mcrepl_fence f;
	static const mcrepl_stat watched[] = {
	    MCREPL_STAT_ACCEPTED,      MCREPL_STAT_TASKS_CREATED,
	    MCREPL_STAT_INFLIGHT,      MCREPL_STAT_TASKS_COMPLETED,
	    MCREPL_STAT_TASKS_REVOKED, MCREPL_STAT_TASKS_FAILED};
#define COUNTS(a, b, i, d, r_, x)                                              \
	do {                                                                   \
		const int64_t want[] = {a, b, i, d, r_, x};                    \
		for (size_t w = 0; w < 6; w++)                                 \
			ck_assert_int_eq(mcrepl_stats_get(st, watched[w]),     \
					 want[w]);                             \
	} while (0)

	c.policy = MCREPL_POLICY_RFC;
	ck_assert_int_eq(mcrepl_stats_create(&st), MCREPL_OK);
	o.stats = st;
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	for (unsigned i = 0; i < 4; i++) {
		mcrepl_engine_segment s = seg(i + 1, i ? "h2" : "h1", "", NULL);

		ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	}
	lt = mcrepl_engine_leases(e);

	/* granted, then rolled back before a task: nothing counted */
	ck_assert_int_eq(propose(e, "a", 100, NOW, &res), MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_abort(lt, res.lease.id), MCREPL_OK);
	COUNTS(0, 0, 0, 0, 0, 0);

	/* bound (twice: counted once), started, ended, readable */
	ck_assert_int_eq(propose(e, "b", 100, NOW, &res), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(lt, res.lease.id, (mcrepl_task_id){11}),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(lt, res.lease.id, (mcrepl_task_id){12}),
	    MCREPL_OK);
	COUNTS(1, 1, 1, 0, 0, 0);
	fence_of(&res, &f);
	ck_assert_int_eq(mcrepl_leases_copy_start(lt, &f, NOW + 1, &out, NULL),
			 MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_copy_end(lt, &f, NOW + 2, &out, NULL),
			 MCREPL_OK);
	COUNTS(1, 1, 0, 0, 0, 0); /* done, not yet readable */
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "b", res.lease.target),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "", res.lease.target),
	    MCREPL_EINVAL);
	COUNTS(1, 1, 0, 1, 0, 0);
	/* one a new master learnt of at a failover: tracked, not counted */
	{
		mcrepl_engine_stats es = {.struct_size = sizeof(es)};

		ck_assert_int_eq(mcrepl_engine_replica_recovered(
				     e, "t", "r", (mcrepl_segment_id){3}),
				 MCREPL_OK);
		ck_assert_int_eq(mcrepl_engine_replica_recovered(
				     e, "t", "r", (mcrepl_segment_id){99}),
				 MCREPL_ENOENT);
		ck_assert_int_eq(mcrepl_engine_replica_recovered(
				     e, "t", "", (mcrepl_segment_id){3}),
				 MCREPL_EINVAL);
		mcrepl_engine_get_stats(e, &es);
		ck_assert_uint_eq(es.dynamic_keys, 2);
		ck_assert_uint_eq(es.dynamic_replicas, 2);
		COUNTS(1, 1, 0, 1, 0, 0);
	}

	/* revoked by its source */
	ck_assert_int_eq(propose(e, "c", 100, NOW, &res), MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_bind_task128(lt, res.lease.id, 5, 0),
			 MCREPL_OK);
	fence_of(&res, &f);
	ck_assert_int_eq(mcrepl_leases_copy_start(lt, &f, NOW + 1, &out, NULL),
			 MCREPL_OK);
	COUNTS(2, 2, 1, 1, 0, 0);
	ck_assert_int_eq(mcrepl_leases_copy_revoke(lt, &f, NOW + 2, &out, NULL),
			 MCREPL_OK);
	COUNTS(2, 2, 0, 1, 1, 0);

	/* expired (the sweep), and cleared by the object's removal */
	ck_assert_int_eq(propose(e, "d", 100, NOW, &res), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(lt, res.lease.id, (mcrepl_task_id){13}),
	    MCREPL_OK);
	ck_assert_int_eq(propose(e, "e", 100, NOW, &res), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(lt, res.lease.id, (mcrepl_task_id){14}),
	    MCREPL_OK);
	COUNTS(4, 4, 2, 1, 1, 0);
	ck_assert_int_eq(
	    mcrepl_leases_object_removed(lt, "t", "e", NULL, 0, NULL),
	    MCREPL_OK);
	COUNTS(4, 4, 1, 1, 1, 1);
	ck_assert_uint_eq(mcrepl_leases_sweep(lt, NOW + 5000, &out, 1), 1);
	COUNTS(4, 4, 0, 1, 1, 2);
#undef COUNTS
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(st);
}
END_TEST

START_TEST(test_engine_alloc_failure)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_segment s = seg(1, "h1", "dom", "nic");
	mcrepl_engine *e = NULL;
	mcrepl_status st;
	long i;

	for (i = 0;; i++) {
		test_fail_alloc_after(i);
		st = mcrepl_engine_create(&c, NULL, &e);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_ptr_null(e);
	}
	ck_assert_int_gt(i, 0);
	for (i = 0;; i++) {
		test_fail_alloc_after(i);
		st = mcrepl_engine_segment_set(e, &s);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_uint_eq(stats(e).segments, 0);
		ck_assert_uint_eq(stats(e).nodes, 0);
	}
	ck_assert_int_gt(i, 0);
	ck_assert_uint_eq(stats(e).nodes, 1);
	for (i = 0;; i++) {
		test_fail_alloc_after(i);
		st = mcrepl_engine_replica_added(e, "t", "k",
						 (mcrepl_segment_id){1});
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_uint_eq(stats(e).dynamic_keys, 0);
		ck_assert_uint_eq(stats(e).dynamic_replicas, 0);
	}
	ck_assert_int_gt(i, 0);
	ck_assert_uint_eq(stats(e).dynamic_replicas, 1);
	reads(e, 1, 3);
	ck_assert_uint_eq(load(e, 1), 3);
	mcrepl_engine_destroy(e);
}
END_TEST

/* ---- concurrency -------------------------------------------------------- */

#define CONC_READS 20000

static void *reader(void *arg)
{
	mcrepl_engine *e = arg;
	mcrepl_replica_view v[3] = {
	    {{1}, {1}, "h1", "", true, true, false, true, 0},
	    {{2}, {2}, "h2", "", true, true, true, true, 0},
	    {{3}, {3}, "h3", "", true, true, true, true, 0},
	};
	size_t ord[3];

	for (unsigned i = 0; i < CONC_READS; i++) {
		mcrepl_engine_read(e, (mcrepl_segment_id){1});
		mcrepl_engine_read(e, (mcrepl_segment_id){2 + i % 2});
		mcrepl_engine_order(e, "t", "k", v, 3, i, ord);
	}
	return NULL;
}

START_TEST(test_engine_concurrent_reads)
{
	mcrepl_config c = auto_cfg();
	pthread_t th[4];
	mcrepl_engine *e = mk(&c);

	set(e, 1, "h1", NULL);
	mcrepl_engine_tick(e, NOW, NULL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, reader, e), 0);
	for (unsigned i = 0; i < 2000; i++) {
		set(e, 2 + i % 2, i % 3 ? "h2" : "h3", NULL);
		if (i % 5 == 0)
			mcrepl_engine_segment_remove(
			    e, (mcrepl_segment_id){2 + (i / 5) % 2});
		/* within one bucket and one order period: nothing rolls */
		mcrepl_engine_tick(e, NOW + i % 1000, NULL);
	}
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	ck_assert_uint_eq(load(e, 1), 4 * CONC_READS);
	mcrepl_engine_destroy(e);
}
END_TEST

Suite *make_engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_engine_create_opts_and_stats_size);
	tcase_add_test(tc, test_engine_segments_nodes_and_errors);
	tcase_add_test(tc, test_engine_segment_moves_node_when_full);
	tcase_add_test(tc, test_engine_reads_roll_out_after_a_window);
	tcase_add_test(tc, test_engine_tick_threshold_and_retire_due);
	tcase_add_test(tc, test_engine_order_by_period_reads);
	tcase_add_test(tc, test_engine_order_sees_other_threads_at_the_tick);
	tcase_add_test(tc, test_engine_propose_projects_and_fades);
	tcase_add_test(tc, test_engine_propose_promised_bytes);
	tcase_add_test(tc, test_engine_propose_balance_gate);
	tcase_add_test(tc, test_engine_propose_judged_before_first_tick);
	tcase_add_test(tc, test_engine_propose_threshold_is_the_ticks);
	tcase_add_test(tc, test_engine_propose_rising_key_judged_by_its_rate);
	tcase_add_test(tc, test_engine_propose_rising_node_judged_by_its_rate);
	tcase_add_test(tc, test_engine_retire_pass);
	tcase_add_test(tc, test_engine_retire_max_dynamic_keys);
	tcase_add_test(tc, test_engine_retire_per_domain);
	tcase_add_test(tc, test_engine_counts_lease_lifecycle);
	tcase_add_test(tc, test_engine_alloc_failure);
	tcase_add_test(tc, test_engine_concurrent_reads);
	tcase_add_test(tc, test_engine_load_asked_again_follows_reads_and_time);
	tcase_add_test(tc,
		       test_engine_propose_views_follow_reads_and_projections);
	tcase_add_test(tc, test_engine_propose_views_follow_the_tick);
	tcase_add_test(tc, test_engine_propose_views_follow_segment_changes);
	tcase_add_test(tc, test_engine_propose_views_drop_a_room_credit);
	tcase_add_test(tc, test_engine_propose_views_drop_room_guesses);
	suite_add_tcase(s, tc);
	return s;
}
