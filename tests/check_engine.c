/*
 * The policy engine (mcrepl/engine.h), through its public header only:
 * segments and nodes, routed reads and their window, the tick and the
 * threshold, reader order, proposals with projected loads and the balance
 * gate, tracked dynamic replicas and the retirement pass, bounds,
 * allocation failure and concurrent readers. The hard cases (room on a
 * full cluster, retirement in one pass) are in check_engine_room.c.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

#define MIB (1024 * 1024ULL)
#define W 10000ULL /* the default heat window, ms */
#define BK 1250ULL /* its bucket */

static mcrepl_config auto_cfg(void)
{
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	return c;
}

static mcrepl_engine *engine_with(const mcrepl_config *c,
				  const mcrepl_engine_opts *o)
{
	mcrepl_engine *e = NULL;

	ck_assert_int_eq(mcrepl_engine_create(c, o, &e), MCREPL_OK);
	return e;
}

static mcrepl_engine *engine(void)
{
	mcrepl_config c = auto_cfg();

	return engine_with(&c, NULL);
}

static void seg(mcrepl_engine *e, uint64_t id, const char *host,
		const char *node, uint64_t used)
{
	mcrepl_engine_segment s = {
	    .id = {id},
	    .client = {id},
	    .host = host,
	    .node = node,
	    .capacity = 100 * MIB,
	    .used = used,
	    .allocatable = true,
	    .can_copy = true,
	};

	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
}

static void reads(mcrepl_engine *e, uint64_t id, int n)
{
	for (int i = 0; i < n; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){id});
}

static uint64_t load(mcrepl_engine *e, uint64_t id)
{
	return mcrepl_engine_load(e, (mcrepl_segment_id){id});
}

START_TEST(test_engine_create_rejects_bad_input)
{
	mcrepl_engine_opts small = {.struct_size = 1};
	mcrepl_engine_opts huge = {.struct_size = sizeof(huge),
				   .max_segments = (1u << 24) + 1};
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = NULL;

	ck_assert_int_eq(mcrepl_engine_create(NULL, NULL, &e), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_engine_create(&c, NULL, NULL), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_engine_create(&c, &small, &e), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_engine_create(&c, &huge, &e), MCREPL_EINVAL);
	c.heat_window_ms = 0; /* a config that does not validate */
	ck_assert_int_eq(mcrepl_engine_create(&c, NULL, &e), MCREPL_EINVAL);
	ck_assert_ptr_null(e);
	mcrepl_engine_destroy(NULL);
}
END_TEST

/* Segments join, change and leave; a node's segments share its load; a
 * segment with no node takes its host, with neither its own. */
START_TEST(test_engine_segments_and_nodes)
{
	mcrepl_engine *e = engine();
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_engine_segment bad = {.id = {0}};
	char longname[300];

	seg(e, 1, "h1", NULL, 0);
	seg(e, 2, "h1", NULL, 0); /* same host: one node */
	seg(e, 3, "h2", "nic-x", 0);
	seg(e, 4, NULL, NULL, 0); /* no host: its own node */
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.segments, 4);
	ck_assert_uint_eq(st.nodes, 3);
	reads(e, 1, 5);
	reads(e, 2, 3);
	ck_assert_uint_eq(load(e, 1), 8);
	ck_assert_uint_eq(load(e, 2), 8);
	ck_assert_uint_eq(load(e, 3), 0);
	reads(e, 99, 7); /* unknown: ignored */
	ck_assert_uint_eq(load(e, 99), 0);
	/* segment 2 moves to another host: it leaves node h1's load */
	seg(e, 2, "h9", NULL, 0);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.nodes, 4);
	ck_assert_uint_eq(load(e, 2), 0);
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){1}), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){1}),
	    MCREPL_ENOENT);
	ck_assert_int_eq(
	    mcrepl_engine_segment_used(e, (mcrepl_segment_id){1}, 0, true),
	    MCREPL_ENOENT);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.segments, 3);
	ck_assert_uint_eq(st.nodes, 3); /* h1 went with its last segment */
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &bad), MCREPL_EINVAL);
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	bad = (mcrepl_engine_segment){.id = {5}, .host = longname};
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &bad), MCREPL_EINVAL);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_max_segments)
{
	mcrepl_engine_opts o = {.struct_size = sizeof(o), .max_segments = 2};
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = engine_with(&c, &o);
	mcrepl_engine_segment s = {.id = {3}, .host = "h3"};

	seg(e, 1, "h1", NULL, 0);
	seg(e, 2, "h2", NULL, 0);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_EFULL);
	mcrepl_engine_segment_remove(e, (mcrepl_segment_id){1});
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Reads count in the current bucket and leave the window B buckets later;
 * the tick's threshold follows the cluster view under auto. */
START_TEST(test_engine_window_and_threshold)
{
	mcrepl_engine *e = engine();
	mcrepl_engine_tick_result t;
	mcrepl_cluster_view cv;
	uint64_t now = 100 * W;

	seg(e, 1, "h1", NULL, 0);
	seg(e, 2, "h2", NULL, 0);
	mcrepl_engine_tick(e, now, &t);
	ck_assert_uint_eq(t.threshold, 8); /* the RFC floor: 0.8 x 10 s */
	reads(e, 1, 40000);
	reads(e, 2, 10000);
	mcrepl_engine_tick(e, now + BK, &t);
	mcrepl_engine_cluster(e, &cv);
	ck_assert_uint_eq(cv.nodes, 2);
	ck_assert_uint_eq(cv.window_reads, 50000);
	/* S = ceil(0.01 x 50000 / 2) = 250: ceil((1 + sqrt(251))^2) = 284 */
	ck_assert_uint_eq(t.threshold, 284);
	ck_assert_uint_eq(load(e, 1), 40000);
	/* seven more buckets: still in the window; the eighth: gone */
	mcrepl_engine_tick(e, now + 7 * BK, &t);
	ck_assert_uint_eq(load(e, 1), 40000);
	mcrepl_engine_tick(e, now + 8 * BK, &t);
	ck_assert_uint_eq(load(e, 1), 0);
	ck_assert_uint_eq(t.threshold, 8);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_rfc_keeps_config_threshold_and_host_load)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e;
	mcrepl_engine_tick_result t;
	mcrepl_heat_params hp;
	mcrepl_cluster_view cv;
	mcrepl_engine_segment s = {
	    .id = {1}, .host = "h1", .capacity = MIB, .read_load = 77};

	c.policy = MCREPL_POLICY_RFC;
	e = engine_with(&c, NULL);
	ck_assert(!mcrepl_engine_is_auto(e));
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	reads(e, 1, 50000);
	mcrepl_engine_tick(e, W, &t);
	mcrepl_engine_tick(e, W + BK, &t);
	ck_assert_uint_eq(t.threshold, 8);
	ck_assert(!t.retire_due);
	ck_assert_uint_eq(load(e, 1), 77); /* the host's own measure */
	mcrepl_engine_cluster(e, &cv);
	ck_assert_uint_eq(cv.nodes, 0);
	mcrepl_engine_heat_params(e, &hp);
	ck_assert_uint_eq(hp.threshold, 8);
	ck_assert_uint_eq(hp.refire_buckets, MCREPL_HEAT_BUCKETS);
	mcrepl_engine_destroy(e);
	c.policy = MCREPL_POLICY_AUTO;
	e = engine_with(&c, NULL);
	mcrepl_engine_heat_params(e, &hp);
	ck_assert_uint_eq(hp.refire_buckets, 1);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Under auto the replica on the node given fewer reads this period goes
 * first; the period rolls after 1 s. */
START_TEST(test_engine_reader_order_by_period)
{
	mcrepl_engine *e = engine();
	mcrepl_replica_view r[2] = {
	    {.segment = {1}, .readable = true, .memory = true},
	    {.segment = {2}, .readable = true, .memory = true},
	};
	size_t order[2], pick;

	seg(e, 1, "h1", NULL, 0);
	seg(e, 2, "h2", NULL, 0);
	mcrepl_engine_tick(e, 5000, NULL);
	reads(e, 1, 3);
	for (uint64_t salt = 0; salt < 8; salt++) {
		ck_assert_int_eq(
		    mcrepl_engine_order(e, "t", "k", r, 2, salt, order),
		    MCREPL_OK);
		ck_assert_uint_eq(order[0], 1);
		ck_assert_int_eq(
		    mcrepl_engine_pick(e, "t", "k", r, 2, salt, &pick),
		    MCREPL_OK);
		ck_assert_uint_eq(pick, 1);
	}
	reads(e, 2, 5);
	mcrepl_engine_pick(e, "t", "k", r, 2, 0, &pick);
	ck_assert_uint_eq(pick, 0);
	/* a new period: both at 0, the salt decides, and both get picked */
	mcrepl_engine_tick(e, 6000, NULL);
	{
		bool seen[2] = {false, false};

		for (uint64_t salt = 0; salt < 64; salt++) {
			mcrepl_engine_pick(e, "t", "k", r, 2, salt, &pick);
			seen[pick] = true;
		}
		ck_assert(seen[0] && seen[1]);
	}
	ck_assert_int_eq(mcrepl_engine_pick(e, "t", "k", r, 0, 0, &pick),
			 MCREPL_ENOENT);
	mcrepl_engine_destroy(e);
}
END_TEST

struct prop {
	mcrepl_proposal p;
	mcrepl_object_view o;
	mcrepl_replica_view r;
	mcrepl_propose_input in;
};

static void prop_init(struct prop *x, const char *id, uint32_t heat,
		      uint64_t now)
{
	memset(x, 0, sizeof(*x));
	x->p = (mcrepl_proposal){.action = MCREPL_ACTION_ADD,
				 .proposal_id = id,
				 .tenant = "t",
				 .key = "k",
				 .observed_version = 1,
				 .expected_size = MIB,
				 .expires_at_ms = now + 5000};
	x->o = (mcrepl_object_view){.exists = true,
				    .version = 1,
				    .size = MIB,
				    .readable_memory_replicas = 1};
	x->r = (mcrepl_replica_view){.segment = {1},
				     .client = {1},
				     .host = "h1",
				     .readable = true,
				     .memory = true,
				     .can_copy = true};
	x->in = (mcrepl_propose_input){.proposal = &x->p,
				       .object = &x->o,
				       .heat_count = heat,
				       .replicas = &x->r,
				       .n_replicas = 1,
				       .now_ms = now};
}

/* 4 nodes; the key's node carries 4,000 of 7,000 reads. The copy goes to
 * the least-loaded node; its projected load moves there at once (readers
 * by load fill it to the level of the key's replica) and fades out over
 * one window; its bytes count on the target until the next
 * segment_used(); a repeated proposal projects nothing more. */
START_TEST(test_engine_propose_projects_and_fades)
{
	mcrepl_engine *e = engine();
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_propose_result res;
	uint64_t now = 100 * W;
	struct prop x;

	seg(e, 1, "h1", NULL, 10 * MIB);
	seg(e, 2, "h2", NULL, 10 * MIB);
	seg(e, 3, "h3", NULL, 10 * MIB);
	seg(e, 4, "h4", NULL, 10 * MIB);
	mcrepl_engine_tick(e, now, NULL);
	reads(e, 1, 4000);
	reads(e, 2, 1000);
	reads(e, 3, 1500);
	reads(e, 4, 500);
	mcrepl_engine_tick(e, now + BK, NULL);
	prop_init(&x, "p1", 3000, now + BK);
	ck_assert_int_eq(mcrepl_engine_propose(e, &x.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 4);
	/* r = 1, level 4000, target 500: to_target = min(3000, 3500 / 2) */
	ck_assert_uint_eq(load(e, 4), 500 + 1750);
	ck_assert_uint_eq(load(e, 1), 4000 - 1750);
	ck_assert_int_eq(mcrepl_engine_propose(e, &x.in, &res), MCREPL_OK);
	ck_assert(res.repeated);
	ck_assert_uint_eq(load(e, 4), 2250);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.projections, 1);
	/* half a window later, half the projection is gone (and the reads
	 * of the first bucket are still in) */
	mcrepl_engine_tick(e, now + 5 * BK, NULL);
	ck_assert_uint_eq(load(e, 4), 500 + 1750 / 2);
	mcrepl_engine_tick(e, now + 9 * BK, NULL);
	ck_assert_uint_eq(load(e, 4), 0);
	ck_assert_uint_eq(load(e, 1), 0);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The promised bytes of a granted copy keep the next proposal of another
 * key off a target it would overfill, until the host reports the use. */
START_TEST(test_engine_propose_counts_promised_bytes)
{
	mcrepl_engine *e = engine();
	mcrepl_propose_result res;
	struct prop a, b;

	/* segment 2 has room for one more MiB under 0.85, segment 3 none */
	seg(e, 1, "h1", NULL, 10 * MIB);
	seg(e, 2, "h2", NULL, 84 * MIB);
	seg(e, 3, "h3", NULL, 90 * MIB);
	prop_init(&a, "p1", 64, 0);
	ck_assert_int_eq(mcrepl_engine_propose(e, &a.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2);
	prop_init(&b, "p2", 64, 0);
	b.p.key = "k2";
	ck_assert_int_eq(mcrepl_engine_propose(e, &b.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason), "no_target");
	/* the host: the copy finished elsewhere after all; 84 MiB again */
	mcrepl_engine_segment_used(e, (mcrepl_segment_id){2}, 84 * MIB, true);
	ck_assert_int_eq(mcrepl_engine_propose(e, &b.in, &res), MCREPL_OK);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The balance gate through the engine's loads: a key whose node carries
 * its fair share is refused BALANCED; one far over the mean is copied. */
START_TEST(test_engine_balance_gate)
{
	mcrepl_engine *e = engine();
	mcrepl_propose_result res;
	uint64_t now = 100 * W;
	struct prop x;

	for (uint64_t i = 1; i <= 8; i++) {
		char h[8];

		snprintf(h, sizeof(h), "h%llu", (unsigned long long)i);
		seg(e, i, h, NULL, 10 * MIB);
		reads(e, i, 10000);
	}
	mcrepl_engine_tick(e, now, NULL);
	mcrepl_engine_tick(e, now + BK, NULL);
	/* a key at 2 x its share (S = 125: needs 150 hits for a copy), with
	 * a second replica: its best node is not overloaded */
	prop_init(&x, "p1", 2000, now + BK);
	x.o.readable_memory_replicas = 2;
	{
		mcrepl_replica_view r2[2] = {x.r, x.r};

		r2[1].segment.v = 2;
		r2[1].host = "h2";
		x.in.replicas = r2;
		x.in.n_replicas = 2;
		ck_assert_int_eq(mcrepl_engine_propose(e, &x.in, &res),
				 MCREPL_EREJECTED);
		ck_assert_str_eq(mcrepl_reason_name(res.reason), "balanced");
	}
	/* node 1 far over the mean: a copy of the key helps */
	reads(e, 1, 20000);
	prop_init(&x, "p2", 20000, now + BK);
	ck_assert_int_eq(mcrepl_engine_propose(e, &x.in, &res), MCREPL_OK);
	mcrepl_engine_destroy(e);
}
END_TEST

struct probe_ans {
	bool gone, busy;
	uint32_t count, readable;
	int calls;
};

static void probe(void *ctx, const char *tenant, const char *key,
		  const char *domain, mcrepl_retire_probe *out)
{
	struct probe_ans *a = ctx;

	(void)tenant;
	(void)key;
	(void)domain;
	a->calls++;
	out->gone = a->gone;
	out->busy = a->busy;
	out->count = a->count;
	out->readable = a->readable;
}

/* Open the pass at the next window boundary after `now`. */
static uint64_t open_pass(mcrepl_engine *e, uint64_t now)
{
	mcrepl_engine_tick_result t;
	uint64_t at = (now / (8 * BK) + 1) * 8 * BK;

	mcrepl_engine_tick(e, now, NULL);
	mcrepl_engine_tick(e, at, &t);
	ck_assert(t.retire_due);
	return at;
}

/* The pass visits each tracked key once, at most cap per call, resuming;
 * a cold key's dynamic replica is handed out, a hot one's is not; busy
 * and gone keys; never the last readable replica. */
START_TEST(test_engine_retirement_pass)
{
	mcrepl_engine *e = engine();
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	struct probe_ans a = {.count = 0, .readable = 2};
	mcrepl_retirement out[4];
	mcrepl_key_state ks;
	uint64_t now;
	size_t n;

	seg(e, 1, "h1", NULL, 0);
	seg(e, 2, "h2", NULL, 0);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "a", (mcrepl_segment_id){2}),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "b", (mcrepl_segment_id){2}),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "c", (mcrepl_segment_id){9}),
	    MCREPL_ENOENT);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "", (mcrepl_segment_id){2}),
	    MCREPL_EINVAL);
	ck_assert_uint_eq(mcrepl_engine_retire(e, 0, probe, &a, out, 4, &n),
			  0); /* no pass open */
	now = open_pass(e, 0);
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &a, out, 1, &n),
			  1);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(out[0].key, "a");
	ck_assert_uint_eq(out[0].segment.v, 2);
	ck_assert_int_eq(mcrepl_engine_replica_dropped(
			     e, "t", "a", out[0].segment, true, now),
			 MCREPL_OK);
	mcrepl_leases_key_state(mcrepl_engine_leases(e), "t", "a", NULL, now,
				&ks);
	ck_assert_uint_eq(ks.recreate_after_ms, now + 60000);
	a.readable = 1; /* b: its last readable replica */
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &a, out, 4, &n),
			  1);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(mcrepl_engine_retire(e, now, probe, &a, out, 4, &n),
			  0); /* the pass is over */
	/* next window: b hot (no), then busy (no), then gone (forgotten) */
	a.readable = 2;
	a.count = 1000000;
	now = open_pass(e, now);
	mcrepl_engine_retire(e, now, probe, &a, out, 4, &n);
	ck_assert_uint_eq(n, 0);
	a.count = 0;
	a.busy = true;
	now = open_pass(e, now);
	mcrepl_engine_retire(e, now, probe, &a, out, 4, &n);
	ck_assert_uint_eq(n, 0);
	a.busy = false;
	a.gone = true;
	now = open_pass(e, now);
	mcrepl_engine_retire(e, now, probe, &a, out, 4, &n);
	ck_assert_uint_eq(n, 0);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.dynamic_keys, 0);
	ck_assert_uint_eq(st.dynamic_replicas, 0);
	ck_assert_uint_eq(st.retired_total, 1);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The pick: the replica on the busiest node; a segment that leaves takes
 * its tracked replicas with it. */
START_TEST(test_engine_retire_picks_busiest_and_forgets_segments)
{
	mcrepl_engine *e = engine();
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	struct probe_ans a = {.count = 0, .readable = 3};
	mcrepl_retirement out[1];
	uint64_t now;
	size_t n;

	seg(e, 1, "h1", NULL, 0);
	seg(e, 2, "h2", NULL, 0);
	seg(e, 3, "h3", NULL, 0);
	mcrepl_engine_replica_added(e, "t", "k", (mcrepl_segment_id){2});
	mcrepl_engine_replica_added(e, "t", "k", (mcrepl_segment_id){3});
	now = open_pass(e, 0);
	reads(e, 3, 50);
	reads(e, 2, 10);
	mcrepl_engine_retire(e, now, probe, &a, out, 1, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(out[0].segment.v, 3);
	ck_assert_int_eq(
	    mcrepl_engine_segment_remove(e, (mcrepl_segment_id){2}), MCREPL_OK);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.dynamic_replicas, 1); /* 3's, not yet dropped */
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_max_dynamic_keys)
{
	mcrepl_engine_opts o = {.struct_size = sizeof(o),
				.max_dynamic_keys = 1};
	mcrepl_config c = auto_cfg();
	mcrepl_engine *e = engine_with(&c, &o);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};

	seg(e, 1, "h1", NULL, 0);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "a", (mcrepl_segment_id){1}),
	    MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_replica_added(e, "t", "b", (mcrepl_segment_id){1}),
	    MCREPL_EFULL);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.untracked_total, 1);
	ck_assert_uint_eq(st.dynamic_keys, 1);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Every allocation of create and of the calls that allocate may fail: the
 * call reports it and leaks nothing (valgrind and LeakSanitizer check). */
START_TEST(test_engine_allocation_failure)
{
	mcrepl_config c = auto_cfg();
	mcrepl_engine_segment s = {.id = {1}, .host = "h1", .capacity = MIB};
	mcrepl_engine *e = NULL;
	mcrepl_status st;
	long k;

	for (k = 0; k < 64; k++) {
		test_fail_alloc_after(k);
		st = mcrepl_engine_create(&c, NULL, &e);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_ptr_null(e);
	}
	ck_assert_int_eq(st, MCREPL_OK);
	for (k = 0; k < 8; k++) {
		test_fail_alloc_after(k);
		st = mcrepl_engine_segment_set(e, &s);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
	}
	ck_assert_int_eq(st, MCREPL_OK);
	for (k = 0; k < 8; k++) {
		test_fail_alloc_after(k);
		st = mcrepl_engine_replica_added(e, "t", "k",
						 (mcrepl_segment_id){1});
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
	}
	ck_assert_int_eq(st, MCREPL_OK);
	mcrepl_engine_destroy(e);
}
END_TEST

struct reader {
	mcrepl_engine *e;
	int n;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	mcrepl_replica_view v[2] = {
	    {.segment = {1}, .readable = true, .memory = true},
	    {.segment = {7}, .readable = true, .memory = true},
	};
	size_t order[2];

	for (int i = 0; i < r->n; i++) {
		mcrepl_engine_read(r->e, (mcrepl_segment_id){1});
		mcrepl_engine_read(r->e, (mcrepl_segment_id){7});
		mcrepl_engine_order(r->e, "t", "k", v, 2, (uint64_t)i, order);
	}
	return NULL;
}

/* Readers are lock-free and run beside segment churn and ticks: nothing
 * breaks, and a stable segment's count is exact. */
START_TEST(test_engine_concurrent_readers)
{
	mcrepl_engine *e = engine();
	struct reader r = {.e = e, .n = 20000};
	pthread_t t[4];

	seg(e, 1, "h1", NULL, 0);
	mcrepl_engine_tick(e, 0, NULL);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, reader_main, &r),
				 0);
	for (int i = 0; i < 200; i++) {
		seg(e, 7, i % 2 ? "h7" : "h8", NULL, 0);
		mcrepl_engine_segment_remove(e, (mcrepl_segment_id){7});
		mcrepl_engine_tick(e, 0, NULL); /* the same bucket */
	}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	ck_assert_uint_eq(load(e, 1), 4 * 20000);
	mcrepl_engine_destroy(e);
}
END_TEST

Suite *make_engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_engine_create_rejects_bad_input);
	tcase_add_test(tc, test_engine_segments_and_nodes);
	tcase_add_test(tc, test_engine_max_segments);
	tcase_add_test(tc, test_engine_window_and_threshold);
	tcase_add_test(tc,
		       test_engine_rfc_keeps_config_threshold_and_host_load);
	tcase_add_test(tc, test_engine_reader_order_by_period);
	tcase_add_test(tc, test_engine_propose_projects_and_fades);
	tcase_add_test(tc, test_engine_propose_counts_promised_bytes);
	tcase_add_test(tc, test_engine_balance_gate);
	tcase_add_test(tc, test_engine_retirement_pass);
	tcase_add_test(tc,
		       test_engine_retire_picks_busiest_and_forgets_segments);
	tcase_add_test(tc, test_engine_max_dynamic_keys);
	tcase_add_test(tc, test_engine_allocation_failure);
	tcase_add_test(tc, test_engine_concurrent_readers);
	suite_add_tcase(s, tc);
	return s;
}
