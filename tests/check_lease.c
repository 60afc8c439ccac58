/* Lease table: proposals, idempotency, fences, expiry and cooldowns.
 * One test per RFC "Test Plan" item that is a lease/admission behaviour,
 * named after the item. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "mcrepl/lease.h"
#include "testutil.h"

#define T0 1000000ULL	/* the tests' "now" at the start */
#define TTL 30000ULL	/* lease_ttl_ms */
#define ACD 20000ULL	/* action_cooldown_ms */
#define RCD 60000ULL	/* recreate_cooldown_ms */
#define DEADLINE 600000 /* proposal deadline, after T0 */
#define MIB (1024ULL * 1024ULL)
#define VERSION 7
#define SIZE MIB

/* A master's view of one object: two readable replicas on hosts h1/h2 in
 * domain-a, two more candidate segments (domain-b emptier than domain-c).
 * Targets 1 and 2 hold replicas, so the table must pick segment 3. */
static struct fixture {
	mcrepl_config cfg;
	mcrepl_object_view obj;
	mcrepl_replica_view reps[2];
	mcrepl_segment_view segs[4];
	mcrepl_proposal prop;
	mcrepl_propose_input in;
	mcrepl_leases *t;
} F;

static void fx_init_cfg(mcrepl_mode mode, bool domain_aware,
			uint64_t recreate_cooldown)
{
	static const mcrepl_replica_view reps[2] = {
	    {{1}, {101}, "h1", "domain-a", true, true, false, true, 0},
	    {{2}, {102}, "h2", "domain-a", true, true, false, true, 2},
	};
	static const mcrepl_segment_view segs[4] = {
	    {{1}, {101}, "h1", "domain-a", 64 * MIB, 8 * MIB, true, 0},
	    {{2}, {102}, "h2", "domain-a", 64 * MIB, 8 * MIB, true, 0},
	    {{3}, {103}, "h3", "domain-b", 64 * MIB, 16 * MIB, true, 0},
	    {{4}, {104}, "h4", "domain-c", 64 * MIB, 32 * MIB, true, 0},
	};

	memset(&F, 0, sizeof(F));
	mcrepl_config_init(&F.cfg);
	F.cfg.mode = mode;
	F.cfg.max_memory_replicas = 4;
	F.cfg.lease_ttl_ms = TTL;
	F.cfg.action_cooldown_ms = ACD;
	F.cfg.recreate_cooldown_ms = recreate_cooldown;
	F.cfg.domain_aware = domain_aware;
	F.obj.exists = true;
	F.obj.version = VERSION;
	F.obj.size = SIZE;
	F.obj.readable_memory_replicas = 2;
	memcpy(F.reps, reps, sizeof(reps));
	memcpy(F.segs, segs, sizeof(segs));
	F.prop.action = MCREPL_ACTION_ADD;
	F.prop.proposal_id = "p-1";
	F.prop.tenant = "tenant-1";
	F.prop.key = "kv/prefix/0001";
	F.prop.observed_version = VERSION;
	F.prop.expected_size = SIZE;
	F.prop.expires_at_ms = T0 + DEADLINE;
	F.in.proposal = &F.prop;
	F.in.object = &F.obj;
	F.in.heat_count = 8; /* 0.8 QPS x 10 s */
	F.in.replicas = F.reps;
	F.in.n_replicas = 2;
	F.in.segments = F.segs;
	F.in.n_segments = 4;
	F.in.now_ms = T0;
}

static void fx_init(mcrepl_mode mode, bool domain_aware)
{
	fx_init_cfg(mode, domain_aware, RCD);
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, &F.t), MCREPL_OK);
}

static void fx_fini(void)
{
	mcrepl_leases_destroy(F.t);
	F.t = NULL;
}

static mcrepl_status propose(const char *id, uint64_t now,
			     mcrepl_propose_result *res)
{
	F.prop.proposal_id = id;
	F.in.now_ms = now;
	return mcrepl_leases_propose(F.t, &F.in, res);
}

static void expect_rejected(const char *id, uint64_t now, mcrepl_reason why)
{
	mcrepl_propose_result res;

	ck_assert_int_eq(propose(id, now, &res), MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason),
			 mcrepl_reason_name(why));
	ck_assert(!res.repeated);
}

static mcrepl_lease propose_ok(const char *id, uint64_t now)
{
	mcrepl_propose_result res;

	ck_assert_int_eq(propose(id, now, &res), MCREPL_OK);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NONE);
	ck_assert(!res.repeated);
	return res.lease;
}

/* The fence the selected source presents for lease l. */
static mcrepl_fence fence_of(const mcrepl_lease *l)
{
	mcrepl_fence f = {.lease = l->id,
			  .version = l->version,
			  .caller = l->source_client,
			  .source = l->source,
			  .target = l->target,
			  .object_version = l->version};

	return f;
}

static mcrepl_status start(const mcrepl_lease *l, uint64_t now,
			   mcrepl_reason *why)
{
	mcrepl_fence f = fence_of(l);

	return mcrepl_leases_copy_start(F.t, &f, now, NULL, why);
}

static void start_ok(const mcrepl_lease *l, uint64_t now)
{
	mcrepl_reason why = MCREPL_REASON_COUNT;

	ck_assert_int_eq(start(l, now, &why), MCREPL_OK);
	ck_assert_int_eq(why, MCREPL_REASON_NONE);
}

static mcrepl_leases_stats stats(void)
{
	mcrepl_leases_stats s;

	mcrepl_leases_get_stats(F.t, &s);
	return s;
}

static mcrepl_key_state key_state(const char *domain, uint64_t now)
{
	mcrepl_key_state ks;

	mcrepl_leases_key_state(F.t, F.prop.tenant, F.prop.key, domain, now,
				&ks);
	return ks;
}

static bool key_pending(uint64_t now)
{
	return mcrepl_leases_key_is_pending(F.t, F.prop.tenant, F.prop.key,
					    now);
}

static void expect_stats(uint64_t leases, uint64_t started, uint64_t proposals,
			 uint64_t keys)
{
	mcrepl_leases_stats s = stats();

	ck_assert_uint_eq(s.leases, leases);
	ck_assert_uint_eq(s.started, started);
	ck_assert_uint_eq(s.proposals, proposals);
	ck_assert_uint_eq(s.key_records, keys);
}

static void expect_same_lease(const mcrepl_lease *a, const mcrepl_lease *b)
{
	ck_assert_uint_eq(a->id.v, b->id.v);
	ck_assert_uint_eq(a->source.v, b->source.v);
	ck_assert_uint_eq(a->target.v, b->target.v);
	ck_assert_uint_eq(a->source_client.v, b->source_client.v);
	ck_assert_uint_eq(a->target_client.v, b->target_client.v);
	ck_assert_uint_eq(a->task.v, b->task.v);
	ck_assert_uint_eq(a->version, b->version);
	ck_assert_uint_eq(a->size, b->size);
	ck_assert_uint_eq(a->granted_at_ms, b->granted_at_ms);
	ck_assert_uint_eq(a->expires_at_ms, b->expires_at_ms);
	ck_assert_int_eq(a->started, b->started);
	ck_assert_str_eq(a->target_domain, b->target_domain);
}

static void expect_gone(mcrepl_lease_id id)
{
	mcrepl_lease l;

	ck_assert_int_eq(mcrepl_leases_get(F.t, id, &l), MCREPL_ENOENT);
}

/* ---- admission ---------------------------------------------------------- */

/* covers: T-1 R-DEC-7 R-DEC-8 R-EXEC-3 R-LEASE-1 R-PROP-9 R-SRC-3 R-DST-5 */
START_TEST(test_master_side_hot_admission_queues_a_copy)
{
	mcrepl_lease l, got;
	mcrepl_key_state ks;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_uint_eq(l.id.v, 1);
	ck_assert_uint_eq(l.source.v, 1); /* equal cost: lower inflight */
	ck_assert_uint_eq(l.source_client.v, 101);
	ck_assert_uint_eq(l.target.v, 3); /* no replica, lowest use */
	ck_assert_uint_eq(l.target_client.v, 103);
	ck_assert_uint_eq(l.task.v, 0);
	ck_assert_uint_eq(l.version, VERSION);
	ck_assert_uint_eq(l.size, SIZE);
	ck_assert_uint_eq(l.granted_at_ms, T0);
	ck_assert_uint_eq(l.expires_at_ms, T0 + TTL);
	ck_assert(!l.started);
	ck_assert_str_eq(l.target_domain, "domain-b");
	expect_stats(1, 0, 1, 1);
	ks = key_state(NULL, T0);
	ck_assert(ks.pending);
	ck_assert_uint_eq(ks.action_cooldown_until_ms, 0);
	ck_assert_uint_eq(ks.recreate_after_ms, 0);
	ck_assert(key_pending(T0));

	/* The host queues the REPLICA_COPY task and binds it. */
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(F.t, l.id, (mcrepl_task_id){55}),
	    MCREPL_OK);
	ck_assert_int_eq(mcrepl_leases_get(F.t, l.id, &got), MCREPL_OK);
	ck_assert_uint_eq(got.task.v, 55);
	ck_assert_uint_eq(got.target.v, 3);
	/* Single flight: a second proposal for the key is in flight. */
	expect_rejected("p-2", T0 + 1, MCREPL_REASON_IN_FLIGHT);
	expect_stats(1, 0, 1, 1);
	fx_fini();
}
END_TEST

/* covers: T-4 R-CONF-1 R-PROP-12 */
START_TEST(test_observe_mode_does_not_queue_a_copy)
{
	mcrepl_key_state ks;

	fx_init(MCREPL_MODE_OBSERVE, false);
	expect_rejected("p-1", T0, MCREPL_REASON_MODE_OBSERVE);
	ks = key_state(NULL, T0);
	ck_assert(!ks.pending);
	ck_assert(!key_pending(T0));
	expect_stats(0, 0, 0, 0);
	/* Nothing was recorded: the same id is judged afresh. */
	expect_rejected("p-1", T0, MCREPL_REASON_MODE_OBSERVE);
	/* An unplaceable proposal is not a would-propose. */
	F.in.n_segments = 2;
	expect_rejected("p-2", T0, MCREPL_REASON_NO_TARGET);
	fx_fini();
}
END_TEST

/* covers: R-CONF-1 */
START_TEST(test_mode_off_rejects_every_proposal)
{
	fx_init(MCREPL_MODE_OFF, false);
	expect_rejected("p-1", T0, MCREPL_REASON_MODE_OFF);
	expect_stats(0, 0, 0, 0);
	fx_fini();
}
END_TEST

/* covers: T-5 R-ADMIT-4 R-PROP-10 */
START_TEST(test_max_replica_limit_suppresses_fanout)
{
	fx_init_cfg(MCREPL_MODE_ENFORCE, false, RCD);
	F.cfg.max_memory_replicas = 2; /* the default */
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, &F.t), MCREPL_OK);
	expect_rejected("p-1", T0, MCREPL_REASON_REPLICA_LIMIT);
	expect_stats(0, 0, 0, 0);
	F.obj.readable_memory_replicas = 1;
	F.in.n_replicas = 1;
	/* Segment 2 holds no replica now and is the least used. */
	ck_assert_uint_eq(propose_ok("p-2", T0).target.v, 2);
	fx_fini();
}
END_TEST

/* covers: T-6 R-ADMIT-2 R-PROP-7 */
START_TEST(test_below_threshold_admission_is_rejected)
{
	fx_init(MCREPL_MODE_ENFORCE, false);
	F.in.heat_count = 7;
	expect_rejected("p-1", T0, MCREPL_REASON_BELOW_THRESHOLD);
	F.in.heat_count = 0;
	expect_rejected("p-2", T0, MCREPL_REASON_BELOW_THRESHOLD);
	expect_stats(0, 0, 0, 0);
	F.in.heat_count = 8;
	propose_ok("p-3", T0);
	fx_fini();
}
END_TEST

/* covers: R-PROP-5 R-PROP-8 R-PROP-9 */
START_TEST(test_stale_or_missing_object_is_rejected)
{
	fx_init(MCREPL_MODE_ENFORCE, false);
	F.prop.observed_version = VERSION - 1;
	expect_rejected("p-1", T0, MCREPL_REASON_VERSION_MISMATCH);
	F.prop.observed_version = VERSION;
	F.prop.expected_size = SIZE + 1;
	expect_rejected("p-2", T0, MCREPL_REASON_SIZE_MISMATCH);
	F.prop.expected_size = SIZE;
	F.obj.exists = false;
	expect_rejected("p-3", T0, MCREPL_REASON_UNKNOWN_OBJECT);
	F.obj.exists = true;
	F.obj.busy = true;
	expect_rejected("p-4", T0, MCREPL_REASON_IN_FLIGHT);
	F.obj.busy = false;
	F.prop.expires_at_ms = T0;
	expect_rejected("p-5", T0, MCREPL_REASON_EXPIRED);
	expect_stats(0, 0, 0, 0);
	fx_fini();
}
END_TEST

/* covers: R-PROP-1 */
START_TEST(test_malformed_proposal_is_invalid)
{
	char long_id[MCREPL_PROPOSAL_ID_MAX + 2];
	mcrepl_propose_result res;

	fx_init(MCREPL_MODE_ENFORCE, false);
	memset(long_id, 'x', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	ck_assert_int_eq(propose("", T0, &res), MCREPL_EINVAL);
	ck_assert_int_eq(res.reason, MCREPL_REASON_INVALID_PROPOSAL);
	ck_assert_int_eq(propose(NULL, T0, &res), MCREPL_EINVAL);
	ck_assert_int_eq(propose(long_id, T0, &res), MCREPL_EINVAL);
	long_id[MCREPL_PROPOSAL_ID_MAX] = '\0'; /* exactly the limit */
	ck_assert_int_eq(propose(long_id, T0, &res), MCREPL_OK);
	F.prop.key = "";
	ck_assert_int_eq(propose("p-2", T0, &res), MCREPL_EINVAL);
	F.prop.key = "k2";
	F.prop.action = (mcrepl_action)2;
	ck_assert_int_eq(propose("p-3", T0, &res), MCREPL_EINVAL);
	ck_assert_int_eq(res.reason, MCREPL_REASON_INVALID_PROPOSAL);
	F.prop.action = MCREPL_ACTION_ADD;
	F.in.replicas = NULL;
	ck_assert_int_eq(propose("p-4", T0, &res), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_leases_propose(F.t, NULL, &res), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_leases_propose(NULL, &F.in, &res),
			 MCREPL_EINVAL);
	expect_stats(1, 0, 1, 1);
	fx_fini();
}
END_TEST

/* ---- idempotency -------------------------------------------------------- */

/* covers: T-7 R-PROP-13 */
START_TEST(test_proposal_idempotency_returns_same_lease)
{
	mcrepl_propose_result res;
	mcrepl_lease l, ended;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_int_eq(propose("p-1", T0 + 5, &res), MCREPL_OK);
	ck_assert(res.repeated);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NONE);
	expect_same_lease(&res.lease, &l);
	expect_stats(1, 0, 1, 1);

	/* The repeat sees the live lease: its task and start. */
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(F.t, l.id, (mcrepl_task_id){9}), MCREPL_OK);
	start_ok(&l, T0 + 10);
	ck_assert_int_eq(propose("p-1", T0 + 11, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.id.v, l.id.v);
	ck_assert_uint_eq(res.lease.task.v, 9);
	ck_assert(res.lease.started);

	/* After the lease ends the record still answers, for lease_ttl. */
	f = fence_of(&l);
	ck_assert_int_eq(
	    mcrepl_leases_copy_end(F.t, &f, T0 + 100, &ended, NULL), MCREPL_OK);
	ck_assert_int_eq(propose("p-1", T0 + 100 + TTL - 1, &res), MCREPL_OK);
	ck_assert(res.repeated);
	expect_same_lease(&res.lease, &ended);
	ck_assert(ended.started);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + 100 + TTL - 1, NULL, 0),
			  0);
	ck_assert_uint_eq(stats().proposals, 1);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + 100 + TTL, NULL, 0), 0);
	ck_assert_uint_eq(stats().proposals, 0);
	/* Forgotten: the same id is now judged as a new proposal. */
	ck_assert_int_eq(propose("p-1", T0 + 100 + TTL, &res), MCREPL_OK);
	ck_assert(!res.repeated);
	ck_assert_uint_eq(res.lease.id.v, 2);
	fx_fini();
}
END_TEST

/* Each row changes one content field of a known proposal id. */
static void mutate(int field)
{
	static const char *const names[] = {
	    "other-key",
	    "tenant-2",
	    "domain-x",
	    "domain-y",
	};

	switch (field) {
	case 0:
		F.prop.key = names[0];
		break;
	case 1:
		F.prop.tenant = names[1];
		break;
	case 2:
		F.prop.requester_domain = names[2];
		break;
	case 3:
		F.prop.target_domain = names[3];
		break;
	case 4:
		F.prop.observed_version = VERSION + 1;
		break;
	case 5:
		F.prop.expected_size = SIZE * 2;
		break;
	case 6:
		F.prop.preferred_target.v = 4;
		break;
	default:
		F.prop.action = (mcrepl_action)2;
		break;
	}
}

#define N_CONTENT_FIELDS 8

/* covers: T-8 R-PROP-14 */
START_TEST(test_conflicting_idempotency_requests_are_rejected)
{
	mcrepl_propose_result res;
	mcrepl_lease l;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	mutate(_i);
	ck_assert_int_eq(propose("p-1", T0 + 1, &res), MCREPL_ECONFLICT);
	ck_assert_int_eq(res.reason, MCREPL_REASON_PROPOSAL_CONFLICT);
	ck_assert(!res.repeated);
	expect_stats(1, 0, 1, 1);
	ck_assert(mcrepl_leases_key_is_pending(F.t, "tenant-1",
					       "kv/prefix/0001", T0 + 1));

	/* Still a conflict after the lease ended, while the record lives. */
	ck_assert_int_eq(mcrepl_leases_copy_start_failed(F.t, l.id, T0 + 2),
			 MCREPL_OK);
	ck_assert_int_eq(propose("p-1", T0 + 3, &res), MCREPL_ECONFLICT);
	ck_assert_int_eq(res.reason, MCREPL_REASON_PROPOSAL_CONFLICT);
	fx_fini();
}
END_TEST

/* Lifecycle item 6: a retry of the same proposal a few ms later carries a
 * deadline recomputed from its relative one; it is the same proposal. */
/* covers: R-PROP-14 */
START_TEST(test_lifecycle6_retry_with_moved_deadline_returns_same_lease)
{
	mcrepl_propose_result res;
	mcrepl_lease l;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	F.prop.expires_at_ms = T0 + 3 + DEADLINE;
	ck_assert_int_eq(propose("p-1", T0 + 3, &res), MCREPL_OK);
	ck_assert(res.repeated);
	ck_assert_int_eq(res.reason, MCREPL_REASON_NONE);
	expect_same_lease(&res.lease, &l);
	ck_assert_uint_eq(res.lease.expires_at_ms, l.expires_at_ms);
	F.prop.expires_at_ms = T0 + DEADLINE - 1;
	ck_assert_int_eq(propose("p-1", T0 + 4, &res), MCREPL_OK);
	ck_assert(res.repeated);
	expect_same_lease(&res.lease, &l);
	expect_stats(1, 0, 1, 1);
	fx_fini();
}
END_TEST

/* covers: R-PROP-13 */
START_TEST(test_proposal_retention_limit_forgets_oldest)
{
	static const char *const keys[] = {"k0", "k1", "k2", "k3"};
	static const char *const ids[] = {"p-0", "p-1", "p-2", "p-3"};
	mcrepl_propose_result res;

	fx_init_cfg(MCREPL_MODE_ENFORCE, false, RCD);
	F.cfg.proposal_retention_limit = 3;
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, &F.t), MCREPL_OK);
	for (int i = 0; i < 4; i++) {
		F.prop.key = keys[i];
		propose_ok(ids[i], T0);
	}
	expect_stats(4, 0, 3, 4);
	/* p-0 was forgotten: it is judged afresh (its lease is pending). */
	F.prop.key = keys[0];
	expect_rejected("p-0", T0, MCREPL_REASON_IN_FLIGHT);
	F.prop.key = keys[1];
	ck_assert_int_eq(propose("p-1", T0, &res), MCREPL_OK);
	ck_assert(res.repeated);
	ck_assert_uint_eq(res.lease.id.v, 2);
	fx_fini();
}
END_TEST

/* ---- domain hints and deadlines ----------------------------------------- */

/* covers: T-9 R-PROP-2 R-PROP-3 R-PROP-6 */
START_TEST(test_nonempty_domain_hints_rejected_before_domain_aware)
{
	fx_init(MCREPL_MODE_ENFORCE, false);
	F.prop.requester_domain = "domain-b";
	expect_rejected("p-1", T0, MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED);
	F.prop.requester_domain = NULL;
	F.prop.target_domain = "domain-b";
	expect_rejected("p-2", T0, MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED);
	F.prop.requester_domain = "domain-a";
	expect_rejected("p-3", T0, MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED);
	expect_stats(0, 0, 0, 0);
	F.prop.requester_domain = "";
	F.prop.target_domain = "";
	propose_ok("p-4", T0);
	fx_fini();
}
END_TEST

/* covers: T-10 R-DEC-8 */
START_TEST(test_short_proposal_deadline_clamps_lease_deadline)
{
	mcrepl_lease l, out[2];

	fx_init(MCREPL_MODE_ENFORCE, false);
	F.prop.expires_at_ms = T0 + 5000;
	l = propose_ok("p-1", T0);
	ck_assert_uint_eq(l.expires_at_ms, T0 + 5000);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + 4999, out, 2), 0);
	ck_assert(key_pending(T0 + 4999));
	ck_assert(!key_pending(T0 + 5000));
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + 5000, out, 2), 1);
	ck_assert_uint_eq(out[0].id.v, l.id.v);
	/* A deadline past the TTL does not extend the lease. */
	F.prop.key = "other";
	F.prop.expires_at_ms = T0 + TTL + 1;
	ck_assert_uint_eq(propose_ok("p-2", T0).expires_at_ms, T0 + TTL);
	fx_fini();
}
END_TEST

/* ---- copy lifecycle ----------------------------------------------------- */

/* covers: T-11 R-EXEC-7 */
START_TEST(test_copy_lifecycle_marks_dynamic_replica_completion)
{
	mcrepl_lease l, out;
	mcrepl_reason why;
	mcrepl_key_state ks;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(F.t, l.id, (mcrepl_task_id){7}), MCREPL_OK);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 10, &out, &why),
			 MCREPL_OK);
	ck_assert_int_eq(why, MCREPL_REASON_NONE);
	ck_assert(out.started);
	ck_assert_uint_eq(out.task.v, 7);
	expect_stats(1, 1, 1, 1);
	ck_assert(key_pending(T0 + 10));

	memset(&out, 0, sizeof(out));
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 20, &out, &why),
			 MCREPL_OK);
	ck_assert_int_eq(why, MCREPL_REASON_NONE);
	ck_assert_uint_eq(out.id.v, l.id.v);
	ck_assert_uint_eq(out.target.v, 3);
	ck_assert(out.started);
	expect_stats(0, 0, 1, 1);
	expect_gone(l.id);
	ks = key_state(NULL, T0 + 20);
	ck_assert(!ks.pending);
	ck_assert_uint_eq(ks.action_cooldown_until_ms, T0 + 20 + ACD);
	ck_assert_uint_eq(ks.recreate_after_ms, 0);
	ck_assert(!key_pending(T0 + 20));

	/* The host marked the replica readable: 3 of at most 4. */
	F.obj.readable_memory_replicas = 3;
	expect_rejected("p-2", T0 + 20 + ACD - 1,
			MCREPL_REASON_ACTION_COOLDOWN);
	/* A second end of the same lease is a stale task. */
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 21, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	F.segs[2].used = 17 * MIB; /* the host's view after the copy */
	ck_assert_uint_eq(propose_ok("p-3", T0 + 20 + ACD).id.v, 2);
	fx_fini();
}
END_TEST

START_TEST(test_copy_revoke_clears_pending_and_enters_action_cooldown)
{
	mcrepl_lease l, out;
	mcrepl_reason why;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_revoke(F.t, &f, T0 + 2, &out, &why),
			 MCREPL_OK);
	ck_assert_int_eq(why, MCREPL_REASON_NONE);
	ck_assert_uint_eq(out.target.v, 3);
	expect_stats(0, 0, 1, 1);
	ck_assert_uint_eq(key_state(NULL, T0 + 2).action_cooldown_until_ms,
			  T0 + 2 + ACD);
	expect_rejected("p-2", T0 + 3, MCREPL_REASON_ACTION_COOLDOWN);
	fx_fini();
}
END_TEST

/* Under auto the balance gate stands in for the action cooldown: after a
 * copy ends, an overloaded key is admitted again at once. After a copy
 * its worker revoked (failed) the key waits one heat window, so a target
 * that fails every copy is not tried again at the rate reads trigger. */
static void auto_overloaded(mcrepl_cluster_view *cl)
{
	fx_init_cfg(MCREPL_MODE_ENFORCE, false, RCD);
	F.cfg.policy = MCREPL_POLICY_AUTO;
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, &F.t), MCREPL_OK);
	/* 4 nodes, mean 10,000 reads a window; the key's two holders
	 * serve 19,000 each, the others 1,000 */
	*cl = (mcrepl_cluster_view){.window_reads = 40000, .nodes = 4};
	F.in.cluster = cl;
	F.in.heat_count = 20000;
	F.segs[0].read_load = F.segs[1].read_load = 19000;
	F.segs[2].read_load = F.segs[3].read_load = 1000;
}

START_TEST(test_auto_revoked_copy_holds_the_key_one_heat_window)
{
	mcrepl_cluster_view cl;
	mcrepl_lease l, out;
	mcrepl_reason why;
	mcrepl_fence f;
	uint64_t win;

	auto_overloaded(&cl);
	win = F.cfg.heat_window_ms;
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_revoke(F.t, &f, T0 + 2, &out, &why),
			 MCREPL_OK);
	expect_rejected("p-2", T0 + 3, MCREPL_REASON_ACTION_COOLDOWN);
	expect_rejected("p-3", T0 + 2 + win - 1, MCREPL_REASON_ACTION_COOLDOWN);
	l = propose_ok("p-4", T0 + 2 + win);
	ck_assert_uint_eq(l.target.v, 3);
	fx_fini();

	/* the same key after a copy that ended: admitted at once */
	auto_overloaded(&cl);
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 2, &out, &why),
			 MCREPL_OK);
	l = propose_ok("p-2", T0 + 3);
	ck_assert_uint_eq(l.target.v, 3);
	fx_fini();
}
END_TEST

/* covers: T-12 R-LEASE-5 R-LEASE-6 */
START_TEST(test_invalid_target_cleanup_removes_incomplete_dynamic_state)
{
	mcrepl_lease l;
	mcrepl_reason why;
	mcrepl_key_state ks;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	/* A task naming another target or source is refused, nothing lost. */
	f = fence_of(&l);
	f.target.v = 4;
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 1, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_WRONG_TARGET);
	f = fence_of(&l);
	f.source.v = 2;
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 1, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_WRONG_TARGET);
	expect_stats(1, 0, 1, 1);
	/* 0 = unchecked. */
	f = fence_of(&l);
	f.source.v = 0;
	f.target.v = 0;
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 2, NULL, &why),
			 MCREPL_OK);

	/* The host cannot reserve the target: the incomplete state goes. */
	ck_assert_int_eq(mcrepl_leases_copy_start_failed(F.t, l.id, T0 + 3),
			 MCREPL_OK);
	expect_gone(l.id);
	expect_stats(0, 0, 1, 0);
	ks = key_state(NULL, T0 + 3);
	ck_assert(!ks.pending);
	ck_assert_uint_eq(ks.action_cooldown_until_ms, 0);
	ck_assert_uint_eq(ks.recreate_after_ms, 0);
	ck_assert_int_eq(mcrepl_leases_copy_start_failed(F.t, l.id, T0 + 4),
			 MCREPL_ENOENT);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 4, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	propose_ok("p-2", T0 + 4);
	fx_fini();
}
END_TEST

/* covers: T-14 R-LEASE-7 R-EXEC-4 */
START_TEST(test_stale_dynamic_task_without_pending_state_is_rejected)
{
	mcrepl_fence f = {.lease = {99},
			  .version = VERSION,
			  .caller = {101},
			  .source = {1},
			  .target = {3},
			  .object_version = VERSION};
	mcrepl_reason why;
	mcrepl_lease l;

	fx_init(MCREPL_MODE_ENFORCE, false);
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	ck_assert_int_eq(mcrepl_leases_copy_revoke(F.t, &f, T0, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	/* A task whose lease was rolled back is as stale. */
	l = propose_ok("p-1", T0);
	ck_assert_int_eq(mcrepl_leases_abort(F.t, l.id), MCREPL_OK);
	ck_assert_int_eq(start(&l, T0 + 1, &why), MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	expect_stats(0, 0, 0, 0);
	fx_fini();
}
END_TEST

/* covers: T-15 R-EXEC-5 */
START_TEST(test_non_source_clients_cannot_copy_start)
{
	static const uint64_t callers[] = {102, 103, 0};
	mcrepl_reason why;
	mcrepl_lease l, got;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	for (size_t i = 0; i < 3; i++) {
		f = fence_of(&l);
		f.caller.v = callers[i];
		ck_assert_int_eq(
		    mcrepl_leases_copy_start(F.t, &f, T0 + 1, NULL, &why),
		    MCREPL_EREJECTED);
		ck_assert_int_eq(why, MCREPL_REASON_NOT_SOURCE);
	}
	ck_assert_int_eq(mcrepl_leases_get(F.t, l.id, &got), MCREPL_OK);
	ck_assert(!got.started);
	ck_assert(key_pending(T0 + 1));
	expect_stats(1, 0, 1, 1);
	start_ok(&l, T0 + 2);
	fx_fini();
}
END_TEST

/* Only the selected source may end or revoke its copy, too. */
START_TEST(test_non_source_clients_cannot_end_or_revoke)
{
	mcrepl_reason why;
	mcrepl_lease l;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	f = fence_of(&l);
	f.caller.v = 103;
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 2, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_NOT_SOURCE);
	ck_assert_int_eq(mcrepl_leases_copy_revoke(F.t, &f, T0 + 2, NULL, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_NOT_SOURCE);
	ck_assert(key_pending(T0 + 2));
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 3, NULL, &why),
			 MCREPL_OK);
	fx_fini();
}
END_TEST

/* covers: T-16 R-EXEC-6 R-LEASE-6 */
START_TEST(test_copy_start_failure_clears_pending_before_ordinary_copy_retry)
{
	mcrepl_lease l, out;
	mcrepl_reason why;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	ck_assert(key_pending(T0 + 1));
	ck_assert_int_eq(mcrepl_leases_copy_start_failed(F.t, l.id, T0 + 2),
			 MCREPL_OK);
	ck_assert(!key_pending(T0 + 2));
	expect_stats(0, 0, 1, 0);

	/* A start refused on the object's version also frees the key. */
	l = propose_ok("p-2", T0 + 3);
	f = fence_of(&l);
	f.object_version = 0; /* removed meanwhile */
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 4, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_OBJECT);
	ck_assert_uint_eq(out.id.v, l.id.v);
	ck_assert(!key_pending(T0 + 4));
	expect_gone(l.id);
	fx_fini();
}
END_TEST

/* covers: T-17 R-LEASE-5 */
START_TEST(test_stale_copy_start_does_not_clear_newer_pending)
{
	mcrepl_lease old, newer, got;
	mcrepl_reason why;

	fx_init(MCREPL_MODE_ENFORCE, false);
	old = propose_ok("p-1", T0);
	ck_assert_int_eq(mcrepl_leases_abort(F.t, old.id), MCREPL_OK);
	newer = propose_ok("p-2", T0 + 1);
	ck_assert_uint_ne(newer.id.v, old.id.v);
	ck_assert_int_eq(start(&old, T0 + 2, &why), MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	ck_assert_int_eq(mcrepl_leases_copy_start_failed(F.t, old.id, T0 + 2),
			 MCREPL_ENOENT);
	ck_assert(key_pending(T0 + 2));
	ck_assert_int_eq(mcrepl_leases_get(F.t, newer.id, &got), MCREPL_OK);
	ck_assert(!got.started);
	start_ok(&newer, T0 + 3);
	fx_fini();
}
END_TEST

/* With no recreate cooldown an expired, unswept lease and a newer pending
 * one coexist: the old task's start retires only the old lease. */
/* covers: T-17 R-LEASE-5 */
START_TEST(test_stale_expired_copy_start_does_not_clear_newer_pending)
{
	mcrepl_lease old, newer, out;
	mcrepl_reason why;

	fx_init_cfg(MCREPL_MODE_ENFORCE, false, 0);
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, &F.t), MCREPL_OK);
	old = propose_ok("p-1", T0);
	newer = propose_ok("p-2", T0 + TTL);
	expect_stats(2, 0, 2, 1);
	ck_assert_int_eq(start(&old, T0 + TTL + 1, &why), MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_LEASE_EXPIRED);
	ck_assert_uint_eq(stats().expired_total, 1);
	ck_assert(key_pending(T0 + TTL + 1));
	ck_assert(key_state(NULL, T0 + TTL + 1).pending);
	expect_stats(1, 0, 2, 1);
	start_ok(&newer, T0 + TTL + 2);
	/* The sweep finds only the newer lease, at its own expiry. */
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + 2 * TTL - 1, &out, 1),
			  0);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + 2 * TTL, &out, 1), 1);
	ck_assert_uint_eq(out.id.v, newer.id.v);
	fx_fini();
}
END_TEST

/* ---- expiry ------------------------------------------------------------- */

/* covers: T-18 */
START_TEST(test_expired_pending_state_does_not_block_ordinary_copy)
{
	mcrepl_key_state ks;

	fx_init(MCREPL_MODE_ENFORCE, false);
	propose_ok("p-1", T0);
	ck_assert(key_pending(T0 + TTL - 1));
	ck_assert(!key_pending(T0 + TTL));
	ks = key_state(NULL, T0 + TTL);
	ck_assert(!ks.pending);
	/* Not swept yet, but judged as if it were. */
	ck_assert_uint_eq(ks.recreate_after_ms, T0 + TTL + RCD);
	expect_stats(1, 0, 1, 1);
	expect_rejected("p-2", T0 + TTL, MCREPL_REASON_RECREATE_COOLDOWN);
	fx_fini();
}
END_TEST

/* covers: T-19 */
START_TEST(test_expired_pending_leases_retire_unconsumed_tasks)
{
	mcrepl_lease l, out[4];
	mcrepl_leases_stats s;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(F.t, l.id, (mcrepl_task_id){77}),
	    MCREPL_OK);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL - 1, out, 4), 0);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL, out, 4), 1);
	ck_assert_uint_eq(out[0].id.v, l.id.v);
	ck_assert_uint_eq(out[0].task.v, 77);
	ck_assert(!out[0].started);
	ck_assert_uint_eq(out[0].target.v, 3);
	s = stats();
	ck_assert_uint_eq(s.leases, 0);
	ck_assert_uint_eq(s.expired_total, 1);
	expect_gone(l.id);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL, out, 4), 0);
	fx_fini();
}
END_TEST

/* covers: R-LEASE-3 */
START_TEST(test_bind_task_after_expiry_is_refused)
{
	mcrepl_lease l;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL, &l, 1), 1);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(F.t, l.id, (mcrepl_task_id){5}),
	    MCREPL_ENOENT);
	ck_assert_int_eq(
	    mcrepl_leases_bind_task(F.t, l.id, (mcrepl_task_id){0}),
	    MCREPL_EINVAL);
	fx_fini();
}
END_TEST

/* covers: T-20 R-PROP-11 */
START_TEST(test_expired_copy_task_cleanup_enters_recreate_cooldown)
{
	const uint64_t e = T0 + TTL;
	mcrepl_lease l, out;
	mcrepl_key_state ks;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, e, &out, 1), 1);
	ck_assert_uint_eq(out.id.v, l.id.v);
	ck_assert(out.started); /* the host frees the PROCESSING target */
	expect_stats(0, 0, 1, 1);
	ks = key_state(NULL, e);
	ck_assert(!ks.pending);
	ck_assert_uint_eq(ks.recreate_after_ms, e + RCD);
	ck_assert_uint_eq(ks.action_cooldown_until_ms, 0);
	expect_rejected("p-2", e + 1, MCREPL_REASON_RECREATE_COOLDOWN);
	expect_rejected("p-3", e + RCD - 1, MCREPL_REASON_RECREATE_COOLDOWN);
	ck_assert_uint_eq(propose_ok("p-4", e + RCD).id.v, 2);
	fx_fini();
}
END_TEST

/* covers: T-21 R-LEASE-5 */
START_TEST(test_version_mismatch_rejects_copy_start)
{
	mcrepl_lease l, out;
	mcrepl_reason why;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	/* A task carrying another version: stale, nothing cleared. */
	f = fence_of(&l);
	f.version = VERSION - 1;
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 1, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_STALE_LEASE);
	ck_assert(key_pending(T0 + 1));
	/* The object was re-Put: the lease is dead, the key free. */
	f = fence_of(&l);
	f.object_version = VERSION + 1;
	ck_assert_int_eq(mcrepl_leases_copy_start(F.t, &f, T0 + 2, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_VERSION_MISMATCH);
	ck_assert_uint_eq(out.id.v, l.id.v);
	ck_assert(!out.started);
	ck_assert(!key_pending(T0 + 2));
	expect_gone(l.id);
	expect_stats(0, 0, 1, 0);
	ck_assert_uint_eq(stats().expired_total, 0);
	fx_fini();
}
END_TEST

/* covers: T-22 R-LEASE-5 */
START_TEST(test_expired_lease_rejects_copy_start)
{
	mcrepl_lease l, out;
	mcrepl_reason why;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_int_eq(start(&l, T0 + TTL, &why), MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_LEASE_EXPIRED);
	expect_gone(l.id);
	ck_assert_uint_eq(stats().expired_total, 1);
	ck_assert_uint_eq(key_state(NULL, T0 + TTL).recreate_after_ms,
			  T0 + TTL + RCD);
	/* Retired already: the sweep has nothing to report. */
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL, &out, 1), 0);
	fx_fini();
}
END_TEST

/* covers: T-23 R-LEASE-7 */
START_TEST(test_mismatched_lease_version_rejects_copy_end_and_revoke)
{
	mcrepl_lease l, out, got;
	mcrepl_reason why;
	mcrepl_fence f, bad;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	f = fence_of(&l);
	/* Not started yet: refused. */
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 1, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_STALE_LEASE);
	start_ok(&l, T0 + 2);
	bad = f;
	bad.version = VERSION - 1;
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &bad, T0 + 3, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_STALE_LEASE);
	bad.version = VERSION + 1;
	ck_assert_int_eq(
	    mcrepl_leases_copy_revoke(F.t, &bad, T0 + 3, &out, &why),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_STALE_LEASE);
	bad = f;
	bad.lease.v = l.id.v + 1;
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &bad, T0 + 3, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	ck_assert_int_eq(
	    mcrepl_leases_copy_revoke(F.t, &bad, T0 + 3, &out, &why),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	/* Nothing changed. */
	expect_stats(1, 1, 1, 1);
	ck_assert_int_eq(mcrepl_leases_get(F.t, l.id, &got), MCREPL_OK);
	ck_assert(got.started);
	ck_assert(key_pending(T0 + 3));
	ck_assert_uint_eq(key_state(NULL, T0 + 3).action_cooldown_until_ms, 0);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 4, &out, &why),
			 MCREPL_OK);
	ck_assert_uint_eq(out.id.v, l.id.v);
	fx_fini();
}
END_TEST

START_TEST(test_expired_lease_rejects_copy_end)
{
	mcrepl_lease l, out;
	mcrepl_reason why;
	mcrepl_fence f;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	start_ok(&l, T0 + 1);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + TTL, &out, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_LEASE_EXPIRED);
	ck_assert_uint_eq(out.id.v, l.id.v);
	ck_assert(out.started);
	expect_gone(l.id);
	ck_assert_uint_eq(key_state(NULL, T0 + TTL).recreate_after_ms,
			  T0 + TTL + RCD);
	ck_assert_uint_eq(key_state(NULL, T0 + TTL).action_cooldown_until_ms,
			  0);
	fx_fini();
}
END_TEST

/* ---- eviction and removal ----------------------------------------------- */

/* covers: T-24 R-EVICT-2 R-EVICT-3 R-PROP-11 */
START_TEST(test_evicted_dynamic_replica_blocks_immediate_recreate)
{
	fx_init(MCREPL_MODE_ENFORCE, false);
	ck_assert_int_eq(mcrepl_leases_replica_removed(
			     F.t, F.prop.tenant, F.prop.key, "domain-b", T0),
			 MCREPL_OK);
	ck_assert_uint_eq(key_state(NULL, T0).recreate_after_ms, T0 + RCD);
	expect_stats(0, 0, 0, 1);
	expect_rejected("p-1", T0, MCREPL_REASON_RECREATE_COOLDOWN);
	expect_rejected("p-2", T0 + RCD - 1, MCREPL_REASON_RECREATE_COOLDOWN);
	propose_ok("p-3", T0 + RCD);
	/* Another object is not affected. */
	F.prop.key = "kv/prefix/0002";
	propose_ok("p-4", T0);
	fx_fini();
}
END_TEST

START_TEST(test_object_removed_refuses_started_copy_and_clears_pending)
{
	mcrepl_lease a, b, cleared[2];
	mcrepl_reason why;
	size_t n = 99;

	fx_init(MCREPL_MODE_ENFORCE, false);
	a = propose_ok("p-1", T0);
	start_ok(&a, T0 + 1);
	ck_assert_int_eq(mcrepl_leases_object_removed(
			     F.t, F.prop.tenant, F.prop.key, cleared, 2, &n),
			 MCREPL_EBUSY);
	ck_assert_uint_eq(n, 0);
	expect_stats(1, 1, 1, 1);

	F.prop.key = "kv/prefix/0002";
	b = propose_ok("p-2", T0 + 2);
	ck_assert_int_eq(mcrepl_leases_object_removed(
			     F.t, F.prop.tenant, F.prop.key, cleared, 2, &n),
			 MCREPL_OK);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(cleared[0].id.v, b.id.v);
	ck_assert(!key_pending(T0 + 3));
	expect_gone(b.id);
	ck_assert_int_eq(start(&b, T0 + 3, &why), MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_UNKNOWN_LEASE);
	expect_stats(1, 1, 2, 1);
	/* Unknown object: nothing to do. */
	ck_assert_int_eq(mcrepl_leases_object_removed(F.t, F.prop.tenant,
						      "nope", NULL, 0, &n),
			 MCREPL_OK);
	ck_assert_uint_eq(n, 0);
	fx_fini();
}
END_TEST

/* covers: R-EXEC-4 */
START_TEST(test_abort_rolls_back_without_cooldown)
{
	mcrepl_lease l, again;
	mcrepl_key_state ks;

	fx_init(MCREPL_MODE_ENFORCE, false);
	l = propose_ok("p-1", T0);
	ck_assert_int_eq(mcrepl_leases_abort(F.t, l.id), MCREPL_OK);
	expect_stats(0, 0, 0, 0);
	ks = key_state(NULL, T0);
	ck_assert(!ks.pending);
	ck_assert_uint_eq(ks.action_cooldown_until_ms, 0);
	ck_assert_uint_eq(ks.recreate_after_ms, 0);
	ck_assert_int_eq(mcrepl_leases_abort(F.t, l.id), MCREPL_ENOENT);
	/* The proposal id was forgotten: it may be used again. */
	again = propose_ok("p-1", T0 + 1);
	ck_assert_uint_eq(again.id.v, 2);
	start_ok(&again, T0 + 2);
	ck_assert_int_eq(mcrepl_leases_abort(F.t, again.id), MCREPL_EBUSY);
	expect_stats(1, 1, 1, 1);
	fx_fini();
}
END_TEST

/* ---- bounded sweep ------------------------------------------------------ */

START_TEST(test_sweep_expires_at_most_cap_leases)
{
	char key[32], id[32];
	mcrepl_lease out[4];
	uint64_t last = 0;
	size_t total = 0, n;

	fx_init(MCREPL_MODE_ENFORCE, false);
	for (int i = 0; i < 10; i++) {
		snprintf(key, sizeof(key), "key-%d", i);
		snprintf(id, sizeof(id), "p-%d", i);
		F.prop.key = key;
		propose_ok(id, T0 + (uint64_t)(9 - i)); /* later ids first */
	}
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL + 9, out, 0), 0);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + TTL + 9, NULL, 3), 0);
	ck_assert_uint_eq(stats().leases, 10);
	while ((n = mcrepl_leases_sweep(F.t, T0 + TTL + 9, out, 3)) > 0) {
		ck_assert_uint_le(n, 3);
		for (size_t i = 0; i < n; i++) {
			/* earliest expiry first */
			ck_assert_uint_ge(out[i].expires_at_ms, last);
			last = out[i].expires_at_ms;
		}
		total += n;
		ck_assert_uint_eq(stats().leases, 10 - total);
	}
	ck_assert_uint_eq(total, 10);
	ck_assert_uint_eq(stats().expired_total, 10);
	fx_fini();
}
END_TEST

START_TEST(test_sweep_forgets_at_most_64_records_per_call)
{
	char key[32], id[32];
	mcrepl_leases_stats s;
	uint64_t records = 200;

	fx_init(MCREPL_MODE_ENFORCE, false);
	for (int i = 0; i < 100; i++) {
		mcrepl_lease l;
		mcrepl_fence f;

		snprintf(key, sizeof(key), "key-%d", i);
		snprintf(id, sizeof(id), "p-%d", i);
		F.prop.key = key;
		l = propose_ok(id, T0);
		start_ok(&l, T0);
		f = fence_of(&l);
		ck_assert_int_eq(
		    mcrepl_leases_copy_end(F.t, &f, T0, NULL, NULL), MCREPL_OK);
	}
	/* 100 proposal records (until T0 + TTL), 100 keys (until T0 + ACD). */
	expect_stats(0, 0, 100, 100);
	ck_assert_uint_eq(mcrepl_leases_sweep(F.t, T0 + ACD - 1, NULL, 0), 0);
	expect_stats(0, 0, 100, 100);
	while (records > 0) {
		mcrepl_leases_sweep(F.t, T0 + TTL, NULL, 0);
		s = stats();
		records -= records < 64 ? records : 64;
		ck_assert_uint_eq(s.proposals + s.key_records, records);
	}
	fx_fini();
}
END_TEST

/* ---- domain-aware stage ------------------------------------------------- */

/* covers: T-34 R-PROP-9 */
START_TEST(test_concurrent_proposals_same_key_domain_single_flight)
{
	mcrepl_lease b, c;

	fx_init(MCREPL_MODE_ENFORCE, true);
	F.prop.requester_domain = "domain-b";
	F.prop.target_domain = "domain-b";
	b = propose_ok("p-1", T0);
	ck_assert_uint_eq(b.target.v, 3);
	ck_assert_str_eq(b.target_domain, "domain-b");
	expect_rejected("p-2", T0, MCREPL_REASON_IN_FLIGHT);
	F.prop.requester_domain = "domain-c";
	F.prop.target_domain = "domain-c";
	c = propose_ok("p-3", T0);
	ck_assert_uint_eq(c.target.v, 4);
	ck_assert_str_eq(c.target_domain, "domain-c");
	expect_rejected("p-4", T0, MCREPL_REASON_IN_FLIGHT);
	expect_stats(2, 0, 2, 2);
	fx_fini();
}
END_TEST

/* covers: T-27 T-30 R-ADMIT-6 R-DST-2 R-PROP-12 */
START_TEST(test_requester_domain_admission_independent_across_domains)
{
	mcrepl_key_state ks;
	mcrepl_fence f;
	mcrepl_lease b;

	fx_init(MCREPL_MODE_ENFORCE, true);
	F.prop.requester_domain = "domain-b";
	F.prop.target_domain = "domain-b";
	b = propose_ok("p-1", T0);
	ck_assert(key_state("domain-b", T0).pending);
	ks = key_state("domain-c", T0);
	ck_assert(!ks.pending);
	ck_assert(!key_state(NULL, T0).pending); /* the default domain */
	ck_assert(key_pending(T0));		 /* any domain */
	/* Ending domain-b's copy cools domain-b only. */
	start_ok(&b, T0 + 1);
	f = fence_of(&b);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 2, NULL, NULL),
			 MCREPL_OK);
	ck_assert_uint_eq(
	    key_state("domain-b", T0 + 2).action_cooldown_until_ms,
	    T0 + 2 + ACD);
	ck_assert_uint_eq(
	    key_state("domain-c", T0 + 2).action_cooldown_until_ms, 0);
	expect_rejected("p-2", T0 + 3, MCREPL_REASON_ACTION_COOLDOWN);
	F.prop.requester_domain = "domain-c";
	F.prop.target_domain = "domain-c";
	ck_assert_uint_eq(propose_ok("p-3", T0 + 3).target.v, 4);
	/* No valid segment in the domain: rejected, not placed elsewhere. */
	F.prop.target_domain = "domain-z";
	expect_rejected("p-4", T0 + 3, MCREPL_REASON_NO_TARGET_IN_DOMAIN);
	fx_fini();
}
END_TEST

/* covers: T-33 R-EVICT-4 */
START_TEST(test_eviction_cooldown_scoped_to_domain)
{
	fx_init(MCREPL_MODE_ENFORCE, true);
	ck_assert_int_eq(mcrepl_leases_replica_removed(
			     F.t, F.prop.tenant, F.prop.key, "domain-b", T0),
			 MCREPL_OK);
	ck_assert_uint_eq(key_state("domain-b", T0).recreate_after_ms,
			  T0 + RCD);
	ck_assert_uint_eq(key_state("domain-c", T0).recreate_after_ms, 0);
	F.prop.requester_domain = "domain-b";
	F.prop.target_domain = "domain-b";
	expect_rejected("p-1", T0 + RCD - 1, MCREPL_REASON_RECREATE_COOLDOWN);
	F.prop.requester_domain = "domain-c";
	F.prop.target_domain = "domain-c";
	propose_ok("p-2", T0 + 1);
	F.prop.requester_domain = "domain-b";
	F.prop.target_domain = "domain-b";
	propose_ok("p-3", T0 + RCD);
	ck_assert_int_eq(mcrepl_leases_replica_removed(
			     F.t, F.prop.tenant, F.prop.key, "bad domain", T0),
			 MCREPL_EINVAL);
	fx_fini();
}
END_TEST

START_TEST(test_object_removed_clears_pending_in_every_domain)
{
	mcrepl_lease cleared[1];
	size_t n = 0;

	fx_init(MCREPL_MODE_ENFORCE, true);
	F.prop.target_domain = "domain-b";
	propose_ok("p-1", T0);
	F.prop.target_domain = "domain-c";
	propose_ok("p-2", T0);
	ck_assert_int_eq(mcrepl_leases_object_removed(
			     F.t, F.prop.tenant, F.prop.key, cleared, 1, &n),
			 MCREPL_OK);
	ck_assert_uint_eq(n, 1); /* cap 1: both cleared, one copied */
	ck_assert(!key_pending(T0));
	expect_stats(0, 0, 2, 0);
	fx_fini();
}
END_TEST

struct racer {
	mcrepl_propose_input in;
	mcrepl_proposal prop;
	char id[16];
	mcrepl_status st;
	mcrepl_reason reason;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	mcrepl_propose_result res;

	r->st = mcrepl_leases_propose(F.t, &r->in, &res);
	r->reason = res.reason;
	return NULL;
}

/* covers: T-34 R-PROP-9 */
START_TEST(test_concurrent_threads_proposals_are_single_flight)
{
	struct racer r[8];
	pthread_t th[8];
	int ok = 0, in_flight = 0, created = 0;

	fx_init(MCREPL_MODE_ENFORCE, true);
	F.prop.target_domain = "domain-b";
	for (int i = 0; i < 8; i++) {
		r[i].prop = F.prop;
		snprintf(r[i].id, sizeof(r[i].id), "p-%d", i);
		r[i].prop.proposal_id = r[i].id;
		r[i].in = F.in;
		r[i].in.proposal = &r[i].prop;
	}
	/* No ck_assert while the threads run: Check allocates in it, and the
	 * test allocator's counter is not atomic. */
	for (int i = 0; i < 8; i++)
		created += pthread_create(&th[i], NULL, race, &r[i]) == 0;
	for (int i = 0; i < created; i++) {
		pthread_join(th[i], NULL);
		ok += r[i].st == MCREPL_OK;
		in_flight += r[i].st == MCREPL_EREJECTED &&
			     r[i].reason == MCREPL_REASON_IN_FLIGHT;
	}
	ck_assert_int_eq(created, 8);
	ck_assert_int_eq(ok, 1);
	ck_assert_int_eq(in_flight, 7);
	expect_stats(1, 0, 1, 1);
	fx_fini();
}
END_TEST

/* ---- allocation failure ------------------------------------------------- */

START_TEST(test_create_survives_allocation_failure)
{
	mcrepl_leases *t = NULL;
	mcrepl_status st = MCREPL_ENOMEM;
	long n;

	fx_init_cfg(MCREPL_MODE_ENFORCE, false, RCD);
	for (n = 0; n < 100; n++) {
		test_fail_alloc_after(n);
		st = mcrepl_leases_create(&F.cfg, &t);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_ptr_null(t);
	}
	ck_assert_int_eq(st, MCREPL_OK);
	ck_assert_int_gt(n, 0);
	F.t = t;
	propose_ok("p-1", T0);
	fx_fini();
}
END_TEST

START_TEST(test_propose_survives_allocation_failure)
{
	mcrepl_leases_stats before, after;
	mcrepl_propose_result res;
	mcrepl_status st = MCREPL_ENOMEM;
	mcrepl_fence f;
	mcrepl_lease l;
	long n;

	fx_init(MCREPL_MODE_ENFORCE, _i == 1);
	F.prop.target_domain = _i == 1 ? "domain-b" : NULL;
	/* Some state already there: another object with a lease. */
	F.prop.key = "other";
	propose_ok("p-0", T0);
	F.prop.key = "kv/prefix/0001";
	before = stats();
	for (n = 0; n < 100; n++) {
		test_fail_alloc_after(n);
		st = propose("p-1", T0, &res);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		after = stats();
		ck_assert_mem_eq(&after, &before, sizeof(after));
		ck_assert(!key_pending(T0));
	}
	ck_assert_int_eq(st, MCREPL_OK);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(res.lease.id.v, 2);
	l = res.lease;
	start_ok(&l, T0 + 1);
	f = fence_of(&l);
	ck_assert_int_eq(mcrepl_leases_copy_end(F.t, &f, T0 + 2, NULL, NULL),
			 MCREPL_OK);
	expect_stats(1, 0, 2, 2);

	/* replica_removed allocates a key record: same guarantee. */
	F.prop.key = "evicted";
	for (n = 0; n < 100; n++) {
		test_fail_alloc_after(n);
		st = mcrepl_leases_replica_removed(F.t, F.prop.tenant,
						   F.prop.key, "domain-b", T0);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		expect_stats(1, 0, 2, 2);
	}
	ck_assert_int_eq(st, MCREPL_OK);
	expect_stats(1, 0, 2, 3);
	fx_fini();
}
END_TEST

/* Thousands of keys (map growth, heap growth) with allocations failing at
 * scattered points: every failure leaves the table consistent. */
START_TEST(test_many_keys_under_allocation_failure)
{
	char key[32], id[32];
	mcrepl_propose_result res;
	mcrepl_lease out[64];
	uint64_t ok = 0, swept = 0;
	size_t n;

	fx_init(MCREPL_MODE_ENFORCE, false);
	for (int i = 0; i < 3000; i++) {
		mcrepl_status st;

		snprintf(key, sizeof(key), "key-%d", i);
		snprintf(id, sizeof(id), "p-%d", i);
		F.prop.key = key;
		test_fail_alloc_after(i % 7 == 3 ? i % 4 : -1);
		st = propose(id, T0 + (uint64_t)i, &res);
		test_fail_alloc_after(-1);
		ck_assert(st == MCREPL_OK || st == MCREPL_ENOMEM);
		ok += st == MCREPL_OK;
		ck_assert_uint_eq(stats().leases, ok);
	}
	ck_assert_uint_gt(ok, 2000);
	ck_assert_uint_lt(ok, 3000);
	while ((n = mcrepl_leases_sweep(F.t, T0 + TTL + 3000, out, 64)) > 0)
		swept += n;
	ck_assert_uint_eq(swept, ok);
	expect_stats(0, 0, ok, ok);
	fx_fini();
}
END_TEST

START_TEST(test_null_arguments_are_refused)
{
	mcrepl_leases *t = (mcrepl_leases *)&F;
	mcrepl_leases_stats s;
	mcrepl_key_state ks;

	fx_init_cfg(MCREPL_MODE_ENFORCE, false, RCD);
	ck_assert_int_eq(mcrepl_leases_create(NULL, &t), MCREPL_EINVAL);
	ck_assert_ptr_null(t);
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, NULL), MCREPL_EINVAL);
	F.cfg.lease_ttl_ms = 0;
	ck_assert_int_eq(mcrepl_leases_create(&F.cfg, &t), MCREPL_ERANGE);
	mcrepl_leases_destroy(NULL);
	ck_assert_uint_eq(mcrepl_leases_sweep(NULL, T0, NULL, 0), 0);
	ck_assert(!mcrepl_leases_key_is_pending(NULL, "t", "k", T0));
	mcrepl_leases_get_stats(NULL, &s);
	ck_assert_uint_eq(s.leases, 0);
	mcrepl_leases_key_state(NULL, "t", "k", NULL, T0, &ks);
	ck_assert(!ks.pending);
	ck_assert_int_eq(mcrepl_leases_copy_start(NULL, NULL, T0, NULL, NULL),
			 MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_leases_abort(NULL, (mcrepl_lease_id){1}),
			 MCREPL_EINVAL);
}
END_TEST

Suite *make_lease_suite(void)
{
	Suite *s = suite_create("lease");
	TCase *adm = tcase_create("admission");
	TCase *idem = tcase_create("idempotency");
	TCase *life = tcase_create("lifecycle");
	TCase *exp = tcase_create("expiry");
	TCase *rem = tcase_create("removal");
	TCase *dom = tcase_create("domain_aware");
	TCase *mem = tcase_create("allocation");

	tcase_add_test(adm, test_master_side_hot_admission_queues_a_copy);
	tcase_add_test(adm, test_observe_mode_does_not_queue_a_copy);
	tcase_add_test(adm, test_mode_off_rejects_every_proposal);
	tcase_add_test(adm, test_max_replica_limit_suppresses_fanout);
	tcase_add_test(adm, test_below_threshold_admission_is_rejected);
	tcase_add_test(adm, test_stale_or_missing_object_is_rejected);
	tcase_add_test(adm, test_malformed_proposal_is_invalid);
	tcase_add_test(adm,
		       test_nonempty_domain_hints_rejected_before_domain_aware);
	tcase_add_test(adm, test_short_proposal_deadline_clamps_lease_deadline);
	tcase_add_test(idem, test_proposal_idempotency_returns_same_lease);
	tcase_add_loop_test(idem,
			    test_conflicting_idempotency_requests_are_rejected,
			    0, N_CONTENT_FIELDS);
	tcase_add_test(idem, test_proposal_retention_limit_forgets_oldest);
	tcase_add_test(
	    idem, test_lifecycle6_retry_with_moved_deadline_returns_same_lease);
	tcase_add_test(life,
		       test_copy_lifecycle_marks_dynamic_replica_completion);
	tcase_add_test(
	    life, test_copy_revoke_clears_pending_and_enters_action_cooldown);
	tcase_add_test(life,
		       test_auto_revoked_copy_holds_the_key_one_heat_window);
	tcase_add_test(
	    life, test_invalid_target_cleanup_removes_incomplete_dynamic_state);
	tcase_add_test(
	    life, test_stale_dynamic_task_without_pending_state_is_rejected);
	tcase_add_test(life, test_non_source_clients_cannot_copy_start);
	tcase_add_test(life, test_non_source_clients_cannot_end_or_revoke);
	tcase_add_test(
	    life,
	    test_copy_start_failure_clears_pending_before_ordinary_copy_retry);
	tcase_add_test(life,
		       test_stale_copy_start_does_not_clear_newer_pending);
	tcase_add_test(
	    life, test_stale_expired_copy_start_does_not_clear_newer_pending);
	tcase_add_test(life, test_version_mismatch_rejects_copy_start);
	tcase_add_test(
	    life, test_mismatched_lease_version_rejects_copy_end_and_revoke);
	tcase_add_test(life, test_abort_rolls_back_without_cooldown);
	tcase_add_test(exp,
		       test_expired_pending_state_does_not_block_ordinary_copy);
	tcase_add_test(exp,
		       test_expired_pending_leases_retire_unconsumed_tasks);
	tcase_add_test(exp, test_bind_task_after_expiry_is_refused);
	tcase_add_test(exp,
		       test_expired_copy_task_cleanup_enters_recreate_cooldown);
	tcase_add_test(exp, test_expired_lease_rejects_copy_start);
	tcase_add_test(exp, test_expired_lease_rejects_copy_end);
	tcase_add_test(exp, test_sweep_expires_at_most_cap_leases);
	tcase_add_test(exp, test_sweep_forgets_at_most_64_records_per_call);
	tcase_add_test(rem,
		       test_evicted_dynamic_replica_blocks_immediate_recreate);
	tcase_add_test(
	    rem, test_object_removed_refuses_started_copy_and_clears_pending);
	tcase_add_test(dom,
		       test_concurrent_proposals_same_key_domain_single_flight);
	tcase_add_test(
	    dom, test_requester_domain_admission_independent_across_domains);
	tcase_add_test(dom, test_eviction_cooldown_scoped_to_domain);
	tcase_add_test(dom, test_object_removed_clears_pending_in_every_domain);
	tcase_add_test(dom,
		       test_concurrent_threads_proposals_are_single_flight);
	tcase_add_test(mem, test_create_survives_allocation_failure);
	tcase_add_loop_test(mem, test_propose_survives_allocation_failure, 0,
			    2);
	tcase_add_test(mem, test_many_keys_under_allocation_failure);
	tcase_add_test(mem, test_null_arguments_are_refused);
	suite_add_tcase(s, adm);
	suite_add_tcase(s, idem);
	suite_add_tcase(s, life);
	suite_add_tcase(s, exp);
	suite_add_tcase(s, rem);
	suite_add_tcase(s, dom);
	suite_add_tcase(s, mem);
	return s;
}
