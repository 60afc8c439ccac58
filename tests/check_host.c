/*
 * The host calls (mcrepl/host.h, 0.6.5): ids by name and wire id, the read
 * path over a host's object state, proposals and copy fences by names with
 * outcome classes, the sweep's callback, and the counters the engine keeps.
 */
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

#define MIB (1024ULL * 1024ULL)
#define NOW 1000000ULL
#define TTL 30000ULL
#define INCARNATION 0x1c0ffeeULL

static const mcrepl_wire_id CLIENT_A = {0xa1, 0xa2};
static const mcrepl_wire_id CLIENT_B = {0xb1, 0xb2};

static mcrepl_engine_segment by_name(const char *name, const char *host,
				     mcrepl_wire_id client)
{
	mcrepl_engine_segment s = {.client = mcrepl_client_of_wire(client),
				   .host = host,
				   .capacity = 64 * MIB,
				   .allocatable = true,
				   .can_copy = true,
				   .name = name};
	return s;
}

/* An engine of `mode` under the rfc policy: threshold 2 (0.2 reads/s over
 * 10 s), two segments by name on two hosts. */
static mcrepl_engine *engine(mcrepl_mode mode, mcrepl_stats *stats,
			     uint32_t trigger_limit)
{
	mcrepl_engine_opts o = {.struct_size = sizeof(o),
				.stats = stats,
				.incarnation = INCARNATION,
				.trigger_limit = trigger_limit};
	mcrepl_engine_segment segs[2] = {by_name("seg-a", "h0", CLIENT_A),
					 by_name("seg-b", "h1", CLIENT_B)};
	mcrepl_engine *e = NULL;
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = mode;
	c.policy = MCREPL_POLICY_RFC;
	c.heat_window_ms = 10000;
	c.admission_qps_threshold = 0.2;
	c.lease_ttl_ms = TTL;
	c.max_memory_replicas = 2;
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_segments_sync(e, segs, 2, NULL),
			 MCREPL_OK);
	return e;
}

START_TEST(test_host_segment_ids_by_name)
{
	mcrepl_stats *stats = NULL;
	mcrepl_engine *e;
	mcrepl_segment_id a = mcrepl_segment_id_of("seg-a");
	mcrepl_engine_segment clash = by_name("seg-x", "h9", CLIENT_A);
	char buf[32];

	ck_assert_uint_eq(mcrepl_segment_id_of(NULL).v, 0);
	ck_assert_uint_eq(mcrepl_segment_id_of("").v, 0);
	ck_assert_uint_ne(a.v, 0);
	ck_assert_uint_eq(a.v, mcrepl_segment_id_of("seg-a").v);
	ck_assert_uint_ne(a.v, mcrepl_segment_id_of("seg-b").v);
	/* the same id in every process and release (XXH3_64bits_withSeed,
	 * checked against Debian's libxxhash.so) */
	ck_assert_uint_eq(mcrepl_segment_id_of("segment_0").v,
			  0x3dd25d61f682ebc7ULL);
	ck_assert_int_eq(mcrepl_stats_create(&stats), MCREPL_OK);
	e = engine(MCREPL_MODE_ENFORCE, stats, 0);
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, a, buf, sizeof(buf)),
			  5);
	ck_assert_str_eq(buf, "seg-a");
	/* a segment set by id under another name, then one by name whose
	 * id it holds: refused, never merged */
	clash.id = mcrepl_segment_id_of("seg-y");
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &clash), MCREPL_OK);
	clash.id.v = 0;
	clash.name = "seg-y";
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &clash),
			 MCREPL_ECONFLICT);
	ck_assert_uint_eq(
	    mcrepl_engine_segment_name(e, mcrepl_segment_id_of("seg-y"), buf,
				       sizeof(buf)),
	    5);
	ck_assert_str_eq(buf, "seg-x");
	/* no id and no name */
	clash.name = NULL;
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &clash), MCREPL_EINVAL);
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(stats);
}
END_TEST

START_TEST(test_host_wire_ids_and_incarnation)
{
	mcrepl_engine *e = engine(MCREPL_MODE_ENFORCE, NULL, 0);
	mcrepl_wire_id w = mcrepl_engine_lease_wire(e, (mcrepl_lease_id){42});
	mcrepl_wire_id other = {INCARNATION + 1, 42};

	ck_assert_uint_eq(w.hi, INCARNATION);
	ck_assert_uint_eq(w.lo, 42);
	ck_assert_uint_eq(mcrepl_engine_lease_of_wire(e, w).v, 42);
	ck_assert_uint_eq(mcrepl_engine_lease_of_wire(e, other).v, 0);
	ck_assert_uint_eq(mcrepl_client_of_wire((mcrepl_wire_id){0, 0}).v, 0);
	ck_assert_uint_ne(mcrepl_client_of_wire((mcrepl_wire_id){0, 1}).v, 0);
	ck_assert_uint_ne(mcrepl_client_of_wire(CLIENT_A).v,
			  mcrepl_client_of_wire(CLIENT_B).v);
	ck_assert_uint_ne(mcrepl_client_of_wire((mcrepl_wire_id){1, 2}).v,
			  mcrepl_client_of_wire((mcrepl_wire_id){2, 1}).v);
	/* a lease of another incarnation is unknown to every call */
	ck_assert_int_eq(
	    mcrepl_engine_bind_task(e, other, (mcrepl_wire_id){1, 1}),
	    MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_engine_abort(e, other), MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_engine_copy_failed(e, other, NOW),
			 MCREPL_ENOENT);
	mcrepl_engine_destroy(e);
}
END_TEST

static mcrepl_read_replica RA = {.id = 7, .segment = "seg-a"};

START_TEST(test_host_on_read_crosses_and_queues)
{
	mcrepl_stats *stats = NULL;
	mcrepl_engine *e;
	mcrepl_object_state st;
	mcrepl_read_result r;
	mcrepl_trigger t[4];

	memset(&st, 0, sizeof(st));
	ck_assert_int_eq(mcrepl_stats_create(&stats), MCREPL_OK);
	e = engine(MCREPL_MODE_ENFORCE, stats, 0);
	ck_assert_int_eq(
	    mcrepl_engine_on_read(e, &st, "t", "k", &RA, 1, 0, NOW, &r),
	    MCREPL_OK);
	ck_assert(!r.crossed && !r.queued);
	ck_assert_uint_eq(r.count, 1);
	ck_assert_uint_eq(r.first, 0);
	/* the routed replica's segment is cached by replica id */
	ck_assert_uint_eq(st.routed_replica, 7);
	ck_assert_uint_eq(st.routed_segment.v, mcrepl_segment_id_of("seg-a").v);
	ck_assert_int_eq(
	    mcrepl_engine_on_read(e, &st, "t", "k", &RA, 1, 1, NOW + 1, &r),
	    MCREPL_OK);
	ck_assert(r.crossed && r.queued);
	ck_assert_uint_eq(r.count, 2);
	ck_assert_uint_eq(mcrepl_engine_object_heat(e, &st, NOW + 2, NULL), 2);
	ck_assert_uint_eq(mcrepl_engine_triggers_pop(e, t, 4), 1);
	ck_assert_str_eq(t[0].tenant, "t");
	ck_assert_str_eq(t[0].key, "k");
	ck_assert_uint_eq(t[0].queued_at_ms, NOW + 1);
	mcrepl_trigger_release(&t[0]);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_OBSERVED_HOT), 1);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TRIGGERS_QUEUED),
			 1);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_WOULD_PROPOSE), 0);
	/* bad input */
	ck_assert_int_eq(
	    mcrepl_engine_on_read(e, &st, "t", NULL, &RA, 1, 0, NOW, &r),
	    MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_engine_on_read(e, &st, "t", "k", NULL, 1, 0, NOW, &r),
	    MCREPL_EINVAL);
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(stats);
}
END_TEST

START_TEST(test_host_on_read_observe_off_and_full_queue)
{
	mcrepl_stats *stats = NULL;
	mcrepl_engine *e;
	mcrepl_object_state a, b;
	mcrepl_read_result r;

	ck_assert_int_eq(mcrepl_stats_create(&stats), MCREPL_OK);
	/* observe: a crossing is a would-propose, nothing queued */
	memset(&a, 0, sizeof(a));
	e = engine(MCREPL_MODE_OBSERVE, stats, 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(
		    mcrepl_engine_on_read(e, &a, "t", "k", &RA, 1, 0, NOW, &r),
		    MCREPL_OK);
	ck_assert(r.crossed && !r.queued);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_WOULD_PROPOSE), 1);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TRIGGERS_QUEUED),
			 0);
	mcrepl_engine_destroy(e);
	/* off: nothing recorded */
	memset(&a, 0, sizeof(a));
	e = engine(MCREPL_MODE_OFF, stats, 0);
	ck_assert_int_eq(
	    mcrepl_engine_on_read(e, &a, "t", "k", &RA, 1, 0, NOW, &r),
	    MCREPL_OK);
	ck_assert_uint_eq(r.count, 0);
	ck_assert_uint_eq(a.heat.head, 0);
	mcrepl_engine_destroy(e);
	/* a queue of one: the second key's trigger is dropped, counted */
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	e = engine(MCREPL_MODE_ENFORCE, stats, 1);
	for (int i = 0; i < 2; i++) {
		(void)mcrepl_engine_on_read(e, &a, "t", "k1", &RA, 1, 0, NOW,
					    &r);
		(void)mcrepl_engine_on_read(e, &b, "t", "k2", &RA, 1, 0, NOW,
					    &r);
	}
	ck_assert(r.crossed && !r.queued);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TRIGGERS_QUEUED),
			 1);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TRIGGERS_DROPPED),
			 1);
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(stats);
}
END_TEST

/* A proposal for "k" (version 5, 1 MiB, on seg-a) with heat 2. */
static mcrepl_named_proposal proposal(mcrepl_wire_id id,
				      const mcrepl_named_replica *replicas)
{
	mcrepl_named_proposal p = {.id = id,
				   .tenant = "t",
				   .key = "k",
				   .object = {.exists = true,
					      .version = 5,
					      .size = MIB,
					      .readable_memory_replicas = 1},
				   .heat_count = 2,
				   .replicas = replicas,
				   .n_replicas = 1,
				   .now_ms = NOW};
	return p;
}

static const mcrepl_named_replica ON_A = {
    .segment = "seg-a", .readable = true, .memory = true};

static mcrepl_named_fence fence(const mcrepl_copy_task *t,
				mcrepl_wire_id caller, const char **target)
{
	mcrepl_named_fence f = {.tenant = "t",
				.key = "k",
				.lease = t->lease,
				.caller = caller,
				.version = t->version,
				.source = t->source,
				.targets = target,
				.n_targets = 1,
				.object_version = 5};
	return f;
}

START_TEST(test_host_propose_copy_lifecycle_by_names)
{
	mcrepl_stats *stats = NULL;
	mcrepl_engine *e;
	mcrepl_named_proposal p;
	mcrepl_host_result r, s;
	mcrepl_named_fence f;
	mcrepl_engine_stats es = {.struct_size = sizeof(es)};
	const char *target = "seg-b";
	const mcrepl_wire_id task = {0x77, 0x78};

	ck_assert_int_eq(mcrepl_stats_create(&stats), MCREPL_OK);
	e = engine(MCREPL_MODE_ENFORCE, stats, 0);
	p = proposal((mcrepl_wire_id){1, 2}, &ON_A);
	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &r), MCREPL_OK);
	ck_assert_int_eq(r.outcome, MCREPL_OUTCOME_OK);
	ck_assert_int_eq(r.reason, MCREPL_REASON_NONE);
	ck_assert(!r.repeated);
	ck_assert_str_eq(r.task.source, "seg-a");
	ck_assert_str_eq(r.task.target, "seg-b");
	ck_assert_uint_eq(r.task.lease.hi, INCARNATION);
	ck_assert_uint_ne(r.task.lease.lo, 0);
	ck_assert_uint_eq(r.task.version, 5);
	ck_assert_uint_eq(r.task.size, MIB);
	ck_assert_uint_eq(r.task.expires_at_ms, NOW + TTL);
	ck_assert_uint_eq(r.task.task.hi | r.task.task.lo, 0);
	/* the same proposal before its task is made: ask again */
	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &s), MCREPL_EBUSY);
	ck_assert(s.repeated);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_UNAVAILABLE);
	ck_assert_int_eq(mcrepl_engine_bind_task(e, r.task.lease, task),
			 MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &s), MCREPL_OK);
	ck_assert(s.repeated);
	ck_assert_uint_eq(s.task.lease.lo, r.task.lease.lo);
	ck_assert_uint_eq(s.task.task.hi, 0x77);
	ck_assert_uint_eq(s.task.task.lo, 0x78);
	ck_assert(mcrepl_engine_key_pending(e, "t", "k", NOW));
	/* another proposal for the key while one is in flight */
	p.id.lo = 3;
	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.reason, MCREPL_REASON_IN_FLIGHT);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_BUSY);
	ck_assert_uint_eq(mcrepl_stats_rejected(stats, MCREPL_REASON_IN_FLIGHT),
			  1);
	/* the target's client may not start it */
	f = fence(&r.task, CLIENT_B, &target);
	ck_assert_int_eq(mcrepl_engine_copy_start(e, &f, NOW + 1, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.reason, MCREPL_REASON_NOT_SOURCE);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_DENIED);
	/* two targets: the lease has one */
	f = fence(&r.task, CLIENT_A, &target);
	f.n_targets = 2;
	ck_assert_int_eq(mcrepl_engine_copy_start(e, &f, NOW + 1, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.reason, MCREPL_REASON_WRONG_TARGET);
	f.n_targets = 1;
	ck_assert_int_eq(mcrepl_engine_copy_start(e, &f, NOW + 1, &s),
			 MCREPL_OK);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_OK);
	ck_assert(s.task.started);
	/* a started copy keeps its object */
	ck_assert_int_eq(mcrepl_engine_object_removed(e, "t", "k"),
			 MCREPL_EBUSY);
	ck_assert_int_eq(mcrepl_engine_copy_end(e, &f, NOW + 2, &s), MCREPL_OK);
	ck_assert_str_eq(s.task.target, "seg-b");
	ck_assert_int_eq(
	    mcrepl_engine_copy_committed(e, &s.task, "t", "k", true),
	    MCREPL_OK);
	mcrepl_engine_get_stats(e, &es);
	ck_assert_uint_eq(es.dynamic_replicas, 1);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TASKS_COMPLETED),
			 1);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TASKS_CREATED), 1);
	/* the copy ended: a second end is stale */
	ck_assert_int_eq(mcrepl_engine_copy_end(e, &f, NOW + 3, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_STALE);
	ck_assert_int_eq(mcrepl_engine_replica_dropped_named(
			     e, "t", "k", "seg-b", true, NOW + 4),
			 MCREPL_OK);
	mcrepl_engine_get_stats(e, &es);
	ck_assert_uint_eq(es.dynamic_replicas, 0);
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(stats);
}
END_TEST

START_TEST(test_host_fence_outcomes_for_gone_leases)
{
	mcrepl_stats *stats = NULL;
	mcrepl_engine *e;
	mcrepl_named_proposal p;
	mcrepl_host_result r, s;
	mcrepl_named_fence f;
	mcrepl_copy_task ghost;
	const char *target = "seg-b";

	ck_assert_int_eq(mcrepl_stats_create(&stats), MCREPL_OK);
	e = engine(MCREPL_MODE_ENFORCE, stats, 0);
	/* a task whose lease this engine never made, no lease pending:
	 * start is "gone" (unavailable), revoke succeeds (free the targets) */
	memset(&ghost, 0, sizeof(ghost));
	ghost.lease = (mcrepl_wire_id){INCARNATION, 999};
	ghost.version = 5;
	f = fence(&ghost, CLIENT_A, &target);
	ck_assert_int_eq(mcrepl_engine_copy_start(e, &f, NOW, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.reason, MCREPL_REASON_UNKNOWN_LEASE);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_UNAVAILABLE);
	ck_assert_int_eq(mcrepl_engine_copy_revoke(e, &f, NOW, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.reason, MCREPL_REASON_UNKNOWN_LEASE);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_OK);
	/* while the key has a live lease, the stale task is stale */
	p = proposal((mcrepl_wire_id){5, 6}, &ON_A);
	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &r), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_copy_start(e, &f, NOW, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_STALE);
	/* the object moved on: the lease dies at its start */
	f = fence(&r.task, CLIENT_A, &target);
	f.object_version = 6;
	ck_assert_int_eq(mcrepl_engine_copy_start(e, &f, NOW, &s),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(s.reason, MCREPL_REASON_VERSION_MISMATCH);
	ck_assert_int_eq(s.outcome, MCREPL_OUTCOME_STALE);
	ck_assert(!mcrepl_engine_key_pending(e, "t", "k", NOW));
	/* a copy that committed nothing counts failed (the lease above had
	 * no task: the table counted nothing for it) */
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TASKS_FAILED), 0);
	ck_assert_int_eq(
	    mcrepl_engine_copy_committed(e, &r.task, "t", "k", false),
	    MCREPL_OK);
	ck_assert_int_eq(mcrepl_stats_get(stats, MCREPL_STAT_TASKS_FAILED), 1);
	mcrepl_engine_destroy(e);
	mcrepl_stats_destroy(stats);
}
END_TEST

struct swept {
	int n;
	mcrepl_copy_task last;
};

static void on_expired(void *ctx, const mcrepl_copy_task *t)
{
	struct swept *s = ctx;

	s->n++;
	s->last = *t;
}

START_TEST(test_host_sweep_calls_back_per_expired_lease)
{
	mcrepl_engine *e = engine(MCREPL_MODE_ENFORCE, NULL, 0);
	mcrepl_named_proposal p = proposal((mcrepl_wire_id){8, 9}, &ON_A);
	mcrepl_host_result r;
	struct swept sw = {0};

	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &r), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_engine_bind_task(e, r.task.lease, (mcrepl_wire_id){3, 4}),
	    MCREPL_OK);
	ck_assert_uint_eq(
	    mcrepl_engine_sweep(e, NOW + TTL - 1, on_expired, &sw), 0);
	ck_assert_int_eq(sw.n, 0);
	ck_assert_uint_eq(mcrepl_engine_sweep(e, NOW + TTL, on_expired, &sw),
			  1);
	ck_assert_int_eq(sw.n, 1);
	ck_assert(!sw.last.started);
	ck_assert_uint_eq(sw.last.task.hi, 3);
	ck_assert_uint_eq(sw.last.task.lo, 4);
	ck_assert_uint_eq(sw.last.lease.lo, r.task.lease.lo);
	ck_assert_str_eq(sw.last.source, "seg-a");
	ck_assert(!mcrepl_engine_key_pending(e, "t", "k", NOW + TTL));
	/* an unstarted lease goes with its object */
	p.id.lo = 10;
	p.now_ms = NOW + 10 * TTL; /* past the recreate cooldown */
	ck_assert_int_eq(mcrepl_engine_propose_named(e, &p, &r), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_object_removed(e, "t", "k"), MCREPL_OK);
	ck_assert(!mcrepl_engine_key_pending(e, "t", "k", NOW + 10 * TTL));
	mcrepl_engine_destroy(e);
}
END_TEST

Suite *make_host_suite(void)
{
	Suite *s = suite_create("host");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_host_segment_ids_by_name);
	tcase_add_test(tc, test_host_wire_ids_and_incarnation);
	tcase_add_test(tc, test_host_on_read_crosses_and_queues);
	tcase_add_test(tc, test_host_on_read_observe_off_and_full_queue);
	tcase_add_test(tc, test_host_propose_copy_lifecycle_by_names);
	tcase_add_test(tc, test_host_fence_outcomes_for_gone_leases);
	tcase_add_test(tc, test_host_sweep_calls_back_per_expired_lease);
	suite_add_tcase(s, tc);
	return s;
}
