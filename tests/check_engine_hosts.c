/*
 * What the library keeps for its hosts so that they keep no table of their
 * own (0.6.0), through the public headers: the whole segment list at once
 * and segment names (mcrepl/engine.h), replica views completed by the
 * engine, 128-bit host task ids on leases and a repeat's liveness
 * (mcrepl/lease.h), and a reason's outcome class (mcrepl/error.h).
 */
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

#define MIB (1024ULL * 1024ULL)
#define NOW 1000000ULL
#define TTL 30000ULL

static mcrepl_engine_segment named(uint64_t id, const char *name, uint64_t used)
{
	static const char *hosts[] = {"h0", "h1", "h2", "h3", "h4"};
	mcrepl_engine_segment s = {.id = {id},
				   .client = {100 + id},
				   .host = hosts[id % 5],
				   .capacity = 64 * MIB,
				   .used = used,
				   .allocatable = true,
				   .can_copy = true,
				   .name = name};
	return s;
}

/* An rfc engine (the config's threshold, placement by utilization). */
static mcrepl_engine *rfc_engine(void)
{
	mcrepl_engine *e = NULL;
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	c.policy = MCREPL_POLICY_RFC;
	c.lease_ttl_ms = TTL;
	c.max_memory_replicas = 4;
	ck_assert_int_eq(mcrepl_engine_create(&c, NULL, &e), MCREPL_OK);
	return e;
}

static uint32_t n_segments(mcrepl_engine *e)
{
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};

	mcrepl_engine_get_stats(e, &st);
	return st.segments;
}

START_TEST(test_engine_segments_sync_sets_and_removes)
{
	mcrepl_engine *e = rfc_engine();
	mcrepl_engine_segment all[3] = {
	    named(1, "seg-a", 0), named(2, "seg-b", 0), named(3, "seg-c", 0)};
	mcrepl_engine_segment two[2] = {named(1, "seg-a", 0),
					named(3, "seg-c2", 0)};
	/* neither an id nor a name (a name alone gives the id, host.h) */
	mcrepl_engine_segment bad[2] = {named(0, NULL, 0),
					named(1, "seg-a", 0)};
	size_t removed = 99;

	ck_assert_int_eq(mcrepl_engine_segments_sync(e, all, 3, &removed),
			 MCREPL_OK);
	ck_assert_uint_eq(removed, 0);
	ck_assert_uint_eq(n_segments(e), 3);
	/* again: nothing changes */
	ck_assert_int_eq(mcrepl_engine_segments_sync(e, all, 3, &removed),
			 MCREPL_OK);
	ck_assert_uint_eq(removed, 0);
	ck_assert_uint_eq(n_segments(e), 3);
	/* segment 2 left, segment 3 renamed */
	ck_assert_int_eq(mcrepl_engine_segments_sync(e, two, 2, &removed),
			 MCREPL_OK);
	ck_assert_uint_eq(removed, 1);
	ck_assert_uint_eq(n_segments(e), 2);
	ck_assert_uint_eq(
	    mcrepl_engine_segment_name(e, (mcrepl_segment_id){2}, NULL, 0), 0);
	ck_assert_uint_eq(
	    mcrepl_engine_segment_name(e, (mcrepl_segment_id){3}, NULL, 0), 6);
	/* a bad entry is skipped and reported; the rest is synced */
	ck_assert_int_eq(mcrepl_engine_segments_sync(e, bad, 2, &removed),
			 MCREPL_EINVAL);
	ck_assert_uint_eq(removed, 1);
	ck_assert_uint_eq(n_segments(e), 1);
	/* the empty list removes everything */
	ck_assert_int_eq(mcrepl_engine_segments_sync(e, NULL, 0, NULL),
			 MCREPL_OK);
	ck_assert_uint_eq(n_segments(e), 0);
	ck_assert_int_eq(mcrepl_engine_segments_sync(NULL, all, 3, &removed),
			 MCREPL_EINVAL);
	ck_assert_uint_eq(removed, 0);
	ck_assert_int_eq(mcrepl_engine_segments_sync(e, NULL, 2, NULL),
			 MCREPL_EINVAL);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_engine_segment_name)
{
	mcrepl_engine *e = rfc_engine();
	mcrepl_engine_segment a = named(1, "segment-one", 0);
	mcrepl_engine_segment b = named(2, NULL, 0);
	char buf[32];

	ck_assert_int_eq(mcrepl_engine_segment_set(e, &a), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &b), MCREPL_OK);
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, a.id, buf, sizeof(buf)),
			  11);
	ck_assert_str_eq(buf, "segment-one");
	/* cut to cap - 1 bytes, the full length returned */
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, a.id, buf, 4), 11);
	ck_assert_str_eq(buf, "seg");
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, a.id, NULL, 0), 11);
	/* no name, unknown segment, no engine: 0 and "" */
	strcpy(buf, "x");
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, b.id, buf, sizeof(buf)),
			  0);
	ck_assert_str_eq(buf, "");
	strcpy(buf, "x");
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, (mcrepl_segment_id){9},
						     buf, sizeof(buf)),
			  0);
	ck_assert_str_eq(buf, "");
	ck_assert_uint_eq(mcrepl_engine_segment_name(NULL, a.id, buf, 1), 0);
	/* set again with another name; remove forgets it */
	a.name = "segment-1";
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &a), MCREPL_OK);
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, a.id, buf, sizeof(buf)),
			  9);
	ck_assert_str_eq(buf, "segment-1");
	ck_assert_int_eq(mcrepl_engine_segment_remove(e, a.id), MCREPL_OK);
	ck_assert_uint_eq(mcrepl_engine_segment_name(e, a.id, buf, sizeof(buf)),
			  0);
	mcrepl_engine_destroy(e);
}
END_TEST

/* One object (version 7, 1 MiB) with a readable replica on segment 1 and,
 * per test, others; a proposal by id. */
static struct {
	mcrepl_object_view obj;
	mcrepl_replica_view reps[2];
	mcrepl_proposal p;
	mcrepl_propose_input in;
} X;

static void input(const char *id, uint64_t now)
{
	memset(&X, 0, sizeof(X));
	X.obj.exists = true;
	X.obj.version = 7;
	X.obj.size = MIB;
	X.obj.readable_memory_replicas = 1;
	/* what a host without a segment table knows of its replicas */
	X.reps[0].segment.v = 1;
	X.reps[0].readable = X.reps[0].memory = true;
	X.p.action = MCREPL_ACTION_ADD;
	X.p.proposal_id = id;
	X.p.tenant = "t";
	X.p.key = "k";
	X.p.observed_version = 7;
	X.p.expected_size = MIB;
	X.p.expires_at_ms = now + 600000;
	X.in.proposal = &X.p;
	X.in.object = &X.obj;
	X.in.heat_count = 100;
	X.in.replicas = X.reps;
	X.in.n_replicas = 1;
	X.in.now_ms = now;
	X.in.replicas_from_engine = true;
}

/* Segments 1 (hosts the replica), 2 (fuller) and 3 (emptiest). */
static mcrepl_engine *three_segments(void)
{
	mcrepl_engine *e = rfc_engine();
	mcrepl_engine_segment s[3] = {named(1, "s1", 8 * MIB),
				      named(2, "s2", 32 * MIB),
				      named(3, "s3", 4 * MIB)};

	ck_assert_int_eq(mcrepl_engine_segments_sync(e, s, 3, NULL), MCREPL_OK);
	return e;
}

START_TEST(test_engine_propose_replicas_from_engine)
{
	mcrepl_engine *e = three_segments();
	mcrepl_propose_result res;

	input("p-1", NOW);
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.source.v, 1);
	ck_assert_uint_eq(res.lease.source_client.v, 101); /* the engine's */
	ck_assert_uint_eq(res.lease.target.v, 3);
	ck_assert_uint_eq(res.lease.target_client.v, 103);
	ck_assert(res.live);
	ck_assert(!res.repeated);
	/* the same views without the flag: no client, cannot copy */
	input("p-2", NOW);
	X.p.key = "k2";
	X.in.replicas_from_engine = false;
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NO_CAPABLE_SOURCE);
	/* a replica on a segment the engine does not know is left out,
	 * however complete its view */
	input("p-3", NOW);
	X.p.key = "k3";
	X.reps[0] = (mcrepl_replica_view){.segment = {99},
					  .client = {199},
					  .host = "h9",
					  .readable = true,
					  .memory = true,
					  .can_copy = true};
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NO_SOURCE);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_leases_bind_task128_and_live_repeat)
{
	mcrepl_engine *e = three_segments();
	mcrepl_leases *t = mcrepl_engine_leases(e);
	mcrepl_propose_result res, again;
	mcrepl_lease l, swept[4];
	mcrepl_lease_id id;

	input("p-1", NOW);
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &res), MCREPL_OK);
	id = res.lease.id;
	ck_assert_uint_eq(res.lease.task.v, 0);
	ck_assert_uint_eq(res.lease.task_hi, 0);
	ck_assert_int_eq(mcrepl_leases_bind_task128(t, id, 0, 0),
			 MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task128(t, (mcrepl_lease_id){id.v + 1}, 1, 2),
	    MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_leases_bind_task128(NULL, id, 1, 2),
			 MCREPL_EINVAL);
	/* a low half of 0 is a bound task too */
	ck_assert_int_eq(
	    mcrepl_leases_bind_task128(t, id, 0xfeedface00000001ULL, 0),
	    MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_get(t, id, &l), MCREPL_OK);
	ck_assert_uint_eq(l.task.v, 0);
	ck_assert_uint_eq(l.task_hi, 0xfeedface00000001ULL);
	ck_assert_int_eq(mcrepl_leases_bind_task128(t, id, 0xabcULL, 0xdefULL),
			 MCREPL_OK);
	/* the repeat carries both halves while the lease lives */
	input("p-1", NOW + 1000);
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &again), MCREPL_OK);
	ck_assert(again.repeated);
	ck_assert(again.live);
	ck_assert_uint_eq(again.lease.id.v, id.v);
	ck_assert_uint_eq(again.lease.task.v, 0xdefULL);
	ck_assert_uint_eq(again.lease.task_hi, 0xabcULL);
	/* bind_task leaves the high half 0, also over a 128-bit bind */
	input("p-2", NOW);
	X.p.key = "k2";
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &res), MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_bind_task128(t, res.lease.id, 9, 9),
			 MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(t, res.lease.id, (mcrepl_task_id){5}),
	    MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_get(t, res.lease.id, &l), MCREPL_OK);
	ck_assert_uint_eq(l.task.v, 5);
	ck_assert_uint_eq(l.task_hi, 0);
	/* the sweep returns the 128-bit task of an expired lease */
	ck_assert_uint_eq(mcrepl_leases_sweep(t, NOW + TTL, swept, 4), 2);
	ck_assert_uint_eq(swept[0].id.v, id.v);
	ck_assert_uint_eq(swept[0].task.v, 0xdefULL);
	ck_assert_uint_eq(swept[0].task_hi, 0xabcULL);
	ck_assert(!swept[0].started);
	/* a repeat once the lease ended: the lease as it ended, not live */
	input("p-1", NOW + TTL + 1);
	ck_assert_int_eq(mcrepl_engine_propose(e, &X.in, &again), MCREPL_OK);
	ck_assert(again.repeated);
	ck_assert(!again.live);
	ck_assert_uint_eq(again.lease.id.v, id.v);
	ck_assert_uint_eq(again.lease.task_hi, 0xabcULL);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_reason_outcome)
{
	static const struct {
		mcrepl_reason r;
		mcrepl_outcome proposal, fence;
	} want[] = {
	    {MCREPL_REASON_NONE, MCREPL_OUTCOME_OK, MCREPL_OUTCOME_OK},
	    {MCREPL_REASON_MODE_OFF, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_MODE_OBSERVE, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_EXPIRED, MCREPL_OUTCOME_INVALID,
	     MCREPL_OUTCOME_INVALID},
	    {MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED, MCREPL_OUTCOME_INVALID,
	     MCREPL_OUTCOME_INVALID},
	    {MCREPL_REASON_BELOW_THRESHOLD, MCREPL_OUTCOME_INVALID,
	     MCREPL_OUTCOME_INVALID},
	    {MCREPL_REASON_VERSION_MISMATCH, MCREPL_OUTCOME_STALE,
	     MCREPL_OUTCOME_STALE},
	    {MCREPL_REASON_SIZE_MISMATCH, MCREPL_OUTCOME_INVALID,
	     MCREPL_OUTCOME_INVALID},
	    {MCREPL_REASON_IN_FLIGHT, MCREPL_OUTCOME_BUSY, MCREPL_OUTCOME_BUSY},
	    {MCREPL_REASON_REPLICA_LIMIT, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_ACTION_COOLDOWN, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_RECREATE_COOLDOWN, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_NO_SOURCE, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_NO_TARGET, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_NO_TARGET_IN_DOMAIN, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_TARGET_DOMAIN_HAS_REPLICA,
	     MCREPL_OUTCOME_UNAVAILABLE, MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_PROPOSAL_CONFLICT, MCREPL_OUTCOME_INVALID,
	     MCREPL_OUTCOME_INVALID},
	    {MCREPL_REASON_UNKNOWN_OBJECT, MCREPL_OUTCOME_NOT_FOUND,
	     MCREPL_OUTCOME_STALE},
	    {MCREPL_REASON_UNKNOWN_LEASE, MCREPL_OUTCOME_STALE,
	     MCREPL_OUTCOME_STALE},
	    {MCREPL_REASON_STALE_LEASE, MCREPL_OUTCOME_STALE,
	     MCREPL_OUTCOME_STALE},
	    {MCREPL_REASON_LEASE_EXPIRED, MCREPL_OUTCOME_EXPIRED,
	     MCREPL_OUTCOME_EXPIRED},
	    {MCREPL_REASON_NOT_SOURCE, MCREPL_OUTCOME_DENIED,
	     MCREPL_OUTCOME_DENIED},
	    {MCREPL_REASON_WRONG_TARGET, MCREPL_OUTCOME_BUSY,
	     MCREPL_OUTCOME_BUSY},
	    {MCREPL_REASON_QUEUE_FULL, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_INVALID_PROPOSAL, MCREPL_OUTCOME_INVALID,
	     MCREPL_OUTCOME_INVALID},
	    {MCREPL_REASON_NO_CAPABLE_SOURCE, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	    {MCREPL_REASON_BALANCED, MCREPL_OUTCOME_UNAVAILABLE,
	     MCREPL_OUTCOME_UNAVAILABLE},
	};

	/* every reason is in the table, in order */
	ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), MCREPL_REASON_COUNT);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_int_eq(want[i].r, (mcrepl_reason)i);
		ck_assert_int_eq(mcrepl_reason_outcome(want[i].r, false),
				 want[i].proposal);
		ck_assert_int_eq(mcrepl_reason_outcome(want[i].r, true),
				 want[i].fence);
	}
	ck_assert_int_eq(mcrepl_reason_outcome(MCREPL_REASON_COUNT, false),
			 MCREPL_OUTCOME_UNAVAILABLE);
}
END_TEST

Suite *make_engine_hosts_suite(void)
{
	Suite *s = suite_create("engine_hosts");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_engine_segments_sync_sets_and_removes);
	tcase_add_test(tc, test_engine_segment_name);
	tcase_add_test(tc, test_engine_propose_replicas_from_engine);
	tcase_add_test(tc, test_leases_bind_task128_and_live_repeat);
	tcase_add_test(tc, test_reason_outcome);
	suite_add_tcase(s, tc);
	return s;
}
