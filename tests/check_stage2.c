/*
 * The RFC's second-stage (domain-aware) test plan at library level. Items
 * already covered elsewhere: target in the requester/target domain and the
 * preferred-target fallback (check_place.c), no valid segment in the domain
 * (check_place.c, check_lease.c), eviction cooldown scoped to the domain and
 * single-flight proposals per key/domain (check_lease.c).
 */
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

#define NOW 5000000ULL
#define MIB (1024ULL * 1024ULL)

/* Object "k" (v3, 1 MiB) read from domain b; replicas in a (and b when
 * with_b); target segments in a and b. */
static struct stage2 {
	mcrepl_config cfg;
	mcrepl_leases *t;
	mcrepl_object_view obj;
	mcrepl_replica_view reps[3];
	mcrepl_segment_view segs[4];
	mcrepl_proposal p;
	mcrepl_propose_input in;
} S;

static void setup(bool with_b)
{
	static const mcrepl_replica_view reps[3] = {
	    {{1}, {11}, "ha1", "a", true, true, false, true, 0},
	    {{3}, {13}, "hb1", "b", true, true, true, true, 0},
	    {{2}, {12}, "ha2", "a", true, true, false, true, 0},
	};
	static const mcrepl_segment_view segs[4] = {
	    {{1}, {11}, "ha1", "a", 64 * MIB, 0, true, 0},
	    {{2}, {12}, "ha2", "a", 64 * MIB, 0, true, 0},
	    {{3}, {13}, "hb1", "b", 64 * MIB, 0, true, 0},
	    {{4}, {14}, "hb2", "b", 64 * MIB, 0, true, 0},
	};

	memset(&S, 0, sizeof(S));
	mcrepl_config_init(&S.cfg);
	S.cfg.mode = MCREPL_MODE_ENFORCE;
	S.cfg.domain_aware = true;
	S.cfg.max_memory_replicas = 2;
	ck_assert_int_eq(mcrepl_leases_create(&S.cfg, &S.t), MCREPL_OK);
	memcpy(S.reps, reps, sizeof(reps));
	memcpy(S.segs, segs, sizeof(segs));
	S.obj =
	    (mcrepl_object_view){.exists = true,
				 .version = 3,
				 .size = MIB,
				 .readable_memory_replicas = with_b ? 2 : 1};
	S.p = (mcrepl_proposal){.action = MCREPL_ACTION_ADD,
				.proposal_id = "p",
				.tenant = "t",
				.key = "k",
				.requester_domain = "b",
				.target_domain = "b",
				.observed_version = 3,
				.expected_size = MIB,
				.expires_at_ms = NOW + 1000,
				.kind = MCREPL_PROPOSAL_HOT};
	S.in = (mcrepl_propose_input){.proposal = &S.p,
				      .object = &S.obj,
				      .heat_count = 8,
				      .replicas = S.reps,
				      .n_replicas = with_b ? 2 : 1,
				      .segments = S.segs,
				      .n_segments = 4,
				      .now_ms = NOW};
}

static void teardown(void)
{
	mcrepl_leases_destroy(S.t);
}

/* covers: T-31 */
START_TEST(test_existing_replica_in_target_domain_suppresses_cross_domain_copy)
{
	mcrepl_propose_result res;

	setup(true);
	/* b's replica cannot be a source (an old worker): the only source is
	 * in a, and b already reads locally: no cross-domain copy. */
	S.reps[1].can_copy = false;
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason),
			 "target_domain_has_replica");
	teardown();
}
END_TEST

/* covers: T-32 R-SRC-1 */
START_TEST(test_same_domain_fanout_still_works_after_target_domain_replica)
{
	mcrepl_propose_result res;

	setup(true);
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res), MCREPL_OK);
	/* source: b's own replica; target: the other b segment */
	ck_assert_uint_eq(res.lease.source.v, 3);
	ck_assert_uint_eq(res.lease.target.v, 4);
	ck_assert_str_eq(res.lease.target_domain, "b");
	teardown();
}
END_TEST

/* covers: T-28 R-SCEN-1 R-DST-2 */
START_TEST(test_cross_domain_copy_lands_in_requester_domain)
{
	mcrepl_propose_result res;

	setup(false);
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.source.v, 1);
	ck_assert(res.lease.target.v == 3 || res.lease.target.v == 4);
	teardown();
}
END_TEST

/* covers: R-ADMIT-4 */
START_TEST(test_replica_limit_counts_the_target_domain_only)
{
	mcrepl_propose_result res;

	setup(false);
	/* a already holds max (2) replicas; b holds none: b may get one */
	S.in.n_replicas = 3;
	S.reps[1] = S.reps[2];
	S.obj.readable_memory_replicas = 2;
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res), MCREPL_OK);
	teardown();
	/* first stage: the same object is at the limit */
	setup(false);
	S.cfg.domain_aware = false;
	mcrepl_leases_destroy(S.t);
	ck_assert_int_eq(mcrepl_leases_create(&S.cfg, &S.t), MCREPL_OK);
	S.p.requester_domain = S.p.target_domain = NULL;
	S.obj.readable_memory_replicas = 2;
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_REPLICA_LIMIT);
	teardown();
}
END_TEST

/* covers: T-27 R-ADMIT-6 R-ADMIT-7 */
START_TEST(test_requester_domain_heat_is_independent_across_domains)
{
	mcrepl_config cfg;
	mcrepl_heat *h = NULL;
	uint32_t n = 0;

	mcrepl_config_init(&cfg);
	cfg.domain_aware = true;
	cfg.heat_max_entries = 64;
	ck_assert_int_eq(mcrepl_heat_create(&cfg, &h), MCREPL_OK);
	for (int i = 0; i < 7; i++)
		mcrepl_heat_record(h, "t", "k", "a", NOW + (uint64_t)i, NULL);
	ck_assert_int_eq(mcrepl_heat_record(h, "t", "k", "b", NOW + 10, &n),
			 MCREPL_HEAT_COLD);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(mcrepl_heat_record(h, "t", "k", "a", NOW + 11, &n),
			 MCREPL_HEAT_CROSSED);
	ck_assert_uint_eq(n, 8);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t", "k", "b", NOW + 12), 1);
	mcrepl_heat_destroy(h);
}
END_TEST

/* Warmup: hottest first, skip what the domain holds, respect limits. */
/* covers: T-35 R-SCEN-2 */
START_TEST(test_warmup_skips_objects_already_in_domain_and_respects_copy_limits)
{
	static const mcrepl_warmup_candidate c[] = {
	    {50, 10, false}, /* 0 */
	    {90, 10, true},  /* 1: already in the domain */
	    {70, 30, false}, /* 2 */
	    {0, 10, false},  /* 3: never read */
	    {70, 10, false}, /* 4: ties with 2, later index */
	    {10, 10, false}, /* 5 */
	    {60, 10, false}, /* 6 */
	};
	size_t out[8];

	ck_assert_uint_eq(mcrepl_warmup_select(c, 7, 3, 1000, out), 3);
	ck_assert_uint_eq(out[0], 2);
	ck_assert_uint_eq(out[1], 4);
	ck_assert_uint_eq(out[2], 6);
	/* byte budget 25: 2 (30 bytes) does not fit, 4 and 6 do */
	ck_assert_uint_eq(mcrepl_warmup_select(c, 7, 3, 25, out), 2);
	ck_assert_uint_eq(out[0], 4);
	ck_assert_uint_eq(out[1], 6);
	ck_assert_uint_eq(mcrepl_warmup_select(c, 7, 8, 1000, out), 5);
	ck_assert_uint_eq(out[4], 5);
	ck_assert_uint_eq(mcrepl_warmup_select(c, 7, 0, 1000, out), 0);
	ck_assert_uint_eq(mcrepl_warmup_select(NULL, 7, 3, 1000, out), 0);
}
END_TEST

/* covers: T-35 R-SCEN-2 */
START_TEST(test_warmup_proposal_skips_threshold_but_not_domain_holdings)
{
	mcrepl_propose_result res;

	setup(false);
	S.p.kind = MCREPL_PROPOSAL_WARMUP;
	S.in.heat_count = 0;
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res), MCREPL_OK);
	teardown();
	setup(true);
	S.p.kind = MCREPL_PROPOSAL_WARMUP;
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_TARGET_DOMAIN_HAS_REPLICA);
	teardown();
	/* warmup is a second-stage proposal */
	setup(false);
	S.cfg.domain_aware = false;
	mcrepl_leases_destroy(S.t);
	ck_assert_int_eq(mcrepl_leases_create(&S.cfg, &S.t), MCREPL_OK);
	S.p.kind = MCREPL_PROPOSAL_WARMUP;
	S.p.requester_domain = S.p.target_domain = NULL;
	ck_assert_int_eq(mcrepl_leases_propose(S.t, &S.in, &res),
			 MCREPL_EINVAL);
	ck_assert_int_eq(res.reason, MCREPL_REASON_INVALID_PROPOSAL);
	teardown();
}
END_TEST

Suite *make_stage2_suite(void)
{
	Suite *s = suite_create("stage2");
	TCase *tc = tcase_create("stage2");

	tcase_add_test(
	    tc,
	    test_existing_replica_in_target_domain_suppresses_cross_domain_copy);
	tcase_add_test(
	    tc,
	    test_same_domain_fanout_still_works_after_target_domain_replica);
	tcase_add_test(tc, test_cross_domain_copy_lands_in_requester_domain);
	tcase_add_test(tc, test_replica_limit_counts_the_target_domain_only);
	tcase_add_test(
	    tc, test_requester_domain_heat_is_independent_across_domains);
	tcase_add_test(
	    tc,
	    test_warmup_skips_objects_already_in_domain_and_respects_copy_limits);
	tcase_add_test(
	    tc, test_warmup_proposal_skips_threshold_but_not_domain_holdings);
	suite_add_tcase(s, tc);
	return s;
}
