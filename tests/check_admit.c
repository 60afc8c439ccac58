/* Admission: every rule, in order, with its exact reason. */
#include "mcrepl/mcrepl.h"
#include "testutil.h"

#define NOW 1000000

struct admit_case {
	const char *name;
	mcrepl_mode mode;
	const char *req_domain, *tgt_domain;
	uint64_t expires_at, version, size;
	bool exists, busy, pending;
	uint32_t replicas, heat;
	uint64_t action_until, recreate_after;
	bool scale;
	mcrepl_reason want;
};

/* Base: enforce, fresh proposal, object v7 size 4096, 1 replica, heat 8. */
#define BASE MCREPL_MODE_ENFORCE, NULL, NULL, NOW + 5000, 7, 4096, true, false
static const struct admit_case cases[] = {
    {"admitted", BASE, false, 1, 8, 0, 0, false, MCREPL_REASON_NONE},
    {"mode off", MCREPL_MODE_OFF, NULL, NULL, NOW + 5000, 7, 4096, true, false,
     false, 1, 8, 0, 0, false, MCREPL_REASON_MODE_OFF},
    {"observe would propose", MCREPL_MODE_OBSERVE, NULL, NULL, NOW + 5000, 7,
     4096, true, false, false, 1, 8, 0, 0, false, MCREPL_REASON_MODE_OBSERVE},
    {"observe still rejects below threshold", MCREPL_MODE_OBSERVE, NULL, NULL,
     NOW + 5000, 7, 4096, true, false, false, 1, 7, 0, 0, false,
     MCREPL_REASON_BELOW_THRESHOLD},
    {"expired at now", MCREPL_MODE_ENFORCE, NULL, NULL, NOW, 7, 4096, true,
     false, false, 1, 8, 0, 0, false, MCREPL_REASON_EXPIRED},
    {"requester hint", MCREPL_MODE_ENFORCE, "domain-a", NULL, NOW + 5000, 7,
     4096, true, false, false, 1, 8, 0, 0, false,
     MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED},
    {"target hint", MCREPL_MODE_ENFORCE, "", "domain-b", NOW + 5000, 7, 4096,
     true, false, false, 1, 8, 0, 0, false,
     MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED},
    {"unknown object", MCREPL_MODE_ENFORCE, NULL, NULL, NOW + 5000, 7, 4096,
     false, false, false, 1, 8, 0, 0, false, MCREPL_REASON_UNKNOWN_OBJECT},
    {"version", MCREPL_MODE_ENFORCE, NULL, NULL, NOW + 5000, 6, 4096, true,
     false, false, 1, 8, 0, 0, false, MCREPL_REASON_VERSION_MISMATCH},
    {"size", MCREPL_MODE_ENFORCE, NULL, NULL, NOW + 5000, 7, 4095, true, false,
     false, 1, 8, 0, 0, false, MCREPL_REASON_SIZE_MISMATCH},
    {"below threshold", BASE, false, 1, 7, 0, 0, false,
     MCREPL_REASON_BELOW_THRESHOLD},
    {"pending", BASE, true, 1, 8, 0, 0, false, MCREPL_REASON_IN_FLIGHT},
    {"busy", MCREPL_MODE_ENFORCE, NULL, NULL, NOW + 5000, 7, 4096, true, true,
     false, 1, 8, 0, 0, false, MCREPL_REASON_IN_FLIGHT},
    {"replica limit", BASE, false, 2, 8, 0, 0, false,
     MCREPL_REASON_REPLICA_LIMIT},
    {"action cooldown", BASE, false, 1, 8, NOW + 1, 0, false,
     MCREPL_REASON_ACTION_COOLDOWN},
    {"action cooldown over", BASE, false, 1, 8, NOW, 0, false,
     MCREPL_REASON_NONE},
    {"recreate cooldown", BASE, false, 1, 8, 0, NOW + 1, false,
     MCREPL_REASON_RECREATE_COOLDOWN},
    {"recreate cooldown over", BASE, false, 1, 8, 0, NOW, false,
     MCREPL_REASON_NONE},
    {"scaled threshold, one replica", BASE, false, 1, 8, 0, 0, true,
     MCREPL_REASON_NONE},
};

static void run_case(const struct admit_case *tc, mcrepl_config *cfg)
{
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = "p-1",
			     .tenant = "t",
			     .key = "k",
			     .requester_domain = tc->req_domain,
			     .target_domain = tc->tgt_domain,
			     .observed_version = tc->version,
			     .expected_size = tc->size,
			     .expires_at_ms = tc->expires_at};
	mcrepl_object_view o = {.exists = tc->exists,
				.version = 7,
				.size = 4096,
				.readable_memory_replicas = tc->replicas,
				.busy = tc->busy};
	mcrepl_admit_input in = {
	    .cfg = cfg,
	    .proposal = &p,
	    .object = &o,
	    .heat_count = tc->heat,
	    .key_state = {.pending = tc->pending,
			  .action_cooldown_until_ms = tc->action_until,
			  .recreate_after_ms = tc->recreate_after},
	    .now_ms = NOW};

	ck_assert_msg(mcrepl_admit(&in) == tc->want, "%s: got %s want %s",
		      tc->name, mcrepl_reason_name(mcrepl_admit(&in)),
		      mcrepl_reason_name(tc->want));
}

/* covers: R-DEC-6 R-PROP-5 R-PROP-6 R-PROP-7 R-PROP-8 R-PROP-9 R-PROP-10 */
/* covers: R-PROP-11 R-ADMIT-4 R-CONF-1 */
START_TEST(test_admit_rules_in_order)
{
	const struct admit_case *tc = &cases[_i];
	mcrepl_config cfg;

	mcrepl_config_init(&cfg);
	cfg.mode = tc->mode;
	cfg.scale_threshold_by_replicas = tc->scale;
	run_case(tc, &cfg);
}
END_TEST

/* The admission most tests below start from: an ADD of t/k (version and
 * size 1, one readable replica) by an enforcing config, 8 reads in the
 * window; a test changes the field it is about. */
struct admit_fx {
	mcrepl_config cfg;
	mcrepl_proposal p;
	mcrepl_object_view o;
	mcrepl_admit_input in;
};

static void admit_fx_init(struct admit_fx *x)
{
	mcrepl_config_init(&x->cfg);
	x->cfg.mode = MCREPL_MODE_ENFORCE;
	x->p = (mcrepl_proposal){.action = MCREPL_ACTION_ADD,
				 .proposal_id = "p",
				 .tenant = "t",
				 .key = "k",
				 .observed_version = 1,
				 .expected_size = 1,
				 .expires_at_ms = NOW + 1};
	x->o = (mcrepl_object_view){.exists = true,
				    .version = 1,
				    .size = 1,
				    .readable_memory_replicas = 1};
	x->in = (mcrepl_admit_input){.cfg = &x->cfg,
				     .proposal = &x->p,
				     .object = &x->o,
				     .heat_count = 8,
				     .now_ms = NOW};
}

/* RFC test plan: below-threshold admission is rejected. */
/* covers: T-6 R-ADMIT-2 R-PROP-7 */
START_TEST(test_below_threshold_admission_is_rejected)
{
	struct admit_fx x;
	mcrepl_admit_input *in = &x.in;

	admit_fx_init(&x);
	for (uint32_t h = 0; h < 8; h++) {
		in->heat_count = h;
		ck_assert_int_eq(mcrepl_admit(in),
				 MCREPL_REASON_BELOW_THRESHOLD);
	}
	in->heat_count = 8;
	ck_assert_int_eq(mcrepl_admit(in), MCREPL_REASON_NONE);
}
END_TEST

/* T-9: domain hints are refused while the config is not domain-aware and
 * taken once it is. */
/* covers: T-9 R-GOAL-8 R-PROP-2 R-PROP-3 R-PROP-6 */
START_TEST(test_nonempty_domain_hints_rejected_in_first_stage)
{
	struct admit_fx x;

	admit_fx_init(&x);
	x.p.requester_domain = "a";
	x.p.target_domain = "b";
	ck_assert_int_eq(mcrepl_admit(&x.in),
			 MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED);
	x.cfg.domain_aware = true;
	ck_assert_int_eq(mcrepl_admit(&x.in), MCREPL_REASON_NONE);
}
END_TEST

/* covers: R-PROP-1 */
START_TEST(test_admit_invalid_proposals)
{
	struct admit_fx x;

	admit_fx_init(&x);
	x.p.proposal_id = "";
	ck_assert_int_eq(mcrepl_admit(&x.in), MCREPL_REASON_INVALID_PROPOSAL);
	x.p.proposal_id = "p";
	x.p.key = NULL;
	ck_assert_int_eq(mcrepl_admit(&x.in), MCREPL_REASON_INVALID_PROPOSAL);
	x.p.key = "k";
	x.p.action = (mcrepl_action)7;
	ck_assert_int_eq(mcrepl_admit(&x.in), MCREPL_REASON_INVALID_PROPOSAL);
	x.in.proposal = NULL;
	ck_assert_int_eq(mcrepl_admit(&x.in), MCREPL_REASON_INVALID_PROPOSAL);
	ck_assert_int_eq(mcrepl_admit(NULL), MCREPL_REASON_INVALID_PROPOSAL);
}
END_TEST

/* covers: R-ADMIT-2 */
START_TEST(test_admit_scaled_threshold)
{
	mcrepl_config cfg;

	mcrepl_config_init(&cfg);
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 3), 8);
	cfg.scale_threshold_by_replicas = true;
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 0), 8);
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 1), 8);
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 3), 24);
}
END_TEST

/* Domain-aware: a domain holding no replica admits its first one at
 * cross_domain_qps_threshold; fanout inside it keeps the base threshold. */
START_TEST(test_admit_cross_domain_threshold)
{
	mcrepl_config cfg;
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = "p",
			     .tenant = "t",
			     .key = "k",
			     .requester_domain = "b",
			     .target_domain = "b",
			     .observed_version = 7,
			     .expected_size = 4096,
			     .expires_at_ms = NOW + 5000};
	mcrepl_object_view o = {.exists = true, .version = 7, .size = 4096};
	mcrepl_admit_input in = {.cfg = &cfg,
				 .proposal = &p,
				 .object = &o,
				 .heat_count = 2,
				 .now_ms = NOW};

	mcrepl_config_init(&cfg);
	cfg.mode = MCREPL_MODE_ENFORCE;
	cfg.domain_aware = true;
	cfg.scale_threshold_by_replicas = true;
	cfg.cross_domain_qps_threshold = 0.2; /* 2 hits in 10 s */
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 0), 2);
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 1), 8);
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 2), 16);
	ck_assert_int_eq(mcrepl_admit(&in), MCREPL_REASON_NONE);
	in.heat_count = 1;
	ck_assert_int_eq(mcrepl_admit(&in), MCREPL_REASON_BELOW_THRESHOLD);
	o.readable_memory_replicas = 1; /* the domain reads locally now */
	in.heat_count = 7;
	ck_assert_int_eq(mcrepl_admit(&in), MCREPL_REASON_BELOW_THRESHOLD);
	in.heat_count = 8;
	ck_assert_int_eq(mcrepl_admit(&in), MCREPL_REASON_NONE);
	cfg.cross_domain_qps_threshold = 0; /* 0: the base threshold */
	ck_assert_uint_eq(mcrepl_admit_threshold(&cfg, 0), 8);
}
END_TEST

Suite *make_admit_suite(void)
{
	Suite *s = suite_create("admit");
	TCase *tc = tcase_create("admit");

	tcase_add_loop_test(tc, test_admit_rules_in_order, 0,
			    sizeof(cases) / sizeof(cases[0]));
	tcase_add_test(tc, test_below_threshold_admission_is_rejected);
	tcase_add_test(tc, test_nonempty_domain_hints_rejected_in_first_stage);
	tcase_add_test(tc, test_admit_invalid_proposals);
	tcase_add_test(tc, test_admit_scaled_threshold);
	tcase_add_test(tc, test_admit_cross_domain_threshold);
	suite_add_tcase(s, tc);
	return s;
}
