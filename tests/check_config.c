/* Config: defaults, parsing, validation, threshold arithmetic. */
#include <math.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

/* covers: R-ADMIT-5 R-GOAL-7 R-ROLL-1 */
START_TEST(test_config_defaults_match_rfc)
{
	mcrepl_config c;

	mcrepl_config_init(&c);
	ck_assert_int_eq(c.struct_size, sizeof(c));
	ck_assert_int_eq(c.mode, MCREPL_MODE_OFF);
	ck_assert_uint_eq(c.heat_window_ms, 10000);
	ck_assert_double_eq(c.admission_qps_threshold, 0.8);
	ck_assert_uint_eq(c.max_memory_replicas, 2);
	ck_assert_uint_eq(c.action_cooldown_ms, 30000);
	ck_assert_uint_eq(c.lease_ttl_ms, 30000);
	ck_assert_uint_eq(c.recreate_cooldown_ms, 60000);
	ck_assert_uint_eq(c.heat_max_entries, 1000000);
	ck_assert_uint_eq(c.admission_queue_limit, 10000);
	ck_assert_double_eq(c.target_high_watermark, 0.85);
	ck_assert(!c.domain_aware);
	ck_assert(!c.scale_threshold_by_replicas);
	ck_assert(!c.read_load_aware_placement);
	ck_assert_double_eq(c.cross_domain_qps_threshold, 0);
	ck_assert_int_eq(mcrepl_config_validate(&c, NULL), MCREPL_OK);
	ck_assert_uint_eq(mcrepl_config_threshold(&c), 8);
}
END_TEST

static const struct set_case {
	const char *name, *value;
	mcrepl_status want;
	const char *readback; /* NULL: unchanged */
} set_cases[] = {
    {"dynamic_replication_mode", "enforce", MCREPL_OK, "enforce"},
    {"mode", "OBSERVE", MCREPL_OK, "observe"},
    {"mode", "sometimes", MCREPL_EPARSE, NULL},
    {"heat_window_seconds", "0.25", MCREPL_OK, "0.25"},
    {"heat_window_seconds", "0", MCREPL_ERANGE, NULL},
    {"heat_window_seconds", "-1", MCREPL_ERANGE, NULL},
    {"heat_window_seconds", "0.0001", MCREPL_ERANGE, NULL},
    {"heat_window_seconds", "nan", MCREPL_EPARSE, NULL},
    {"heat_window_seconds", "10s", MCREPL_EPARSE, NULL},
    {"admission_qps_threshold", "2.5", MCREPL_OK, "2.5"},
    {"admission_qps_threshold", "nan", MCREPL_EPARSE, NULL},
    {"admission_qps_threshold", "inf", MCREPL_EPARSE, NULL},
    {"admission_qps_threshold", "-0.1", MCREPL_ERANGE, NULL},
    {"max_memory_replicas", "16", MCREPL_OK, "16"},
    {"max_memory_replicas", "0", MCREPL_ERANGE, NULL},
    {"max_memory_replicas", "-3", MCREPL_EPARSE, NULL},
    {"max_memory_replicas", "99999999999", MCREPL_ERANGE, NULL},
    {"target_high_watermark", "1", MCREPL_OK, "1"},
    {"target_high_watermark", "0", MCREPL_ERANGE, NULL},
    {"target_high_watermark", "1.01", MCREPL_ERANGE, NULL},
    {"domain_aware", "yes", MCREPL_OK, "true"},
    {"domain_aware", "maybe", MCREPL_EPARSE, NULL},
    {"lease_ttl_seconds", "0", MCREPL_ERANGE, NULL},
    {"recreate_cooldown_seconds", "0", MCREPL_OK, "0"},
    {"heat_max_entries", "7", MCREPL_ERANGE, NULL},
    {"cross_domain_qps_threshold", "0.25", MCREPL_OK, "0.25"},
    {"cross_domain_qps_threshold", "-1", MCREPL_ERANGE, NULL},
    {"cross_domain_qps_threshold", "1e10", MCREPL_ERANGE, NULL},
    {"no_such_knob", "1", MCREPL_ENOENT, NULL},
};

/* covers: R-CONF-1 R-CONF-2 R-CONF-3 R-CONF-4 */
START_TEST(test_config_set_table)
{
	const struct set_case *tc = &set_cases[_i];
	mcrepl_config c, before;
	char buf[64];

	mcrepl_config_init(&c);
	before = c;
	ck_assert_int_eq(mcrepl_config_set(&c, tc->name, tc->value), tc->want);
	if (tc->readback) {
		ck_assert_int_eq(
		    mcrepl_config_get(&c, tc->name, buf, sizeof(buf)),
		    MCREPL_OK);
		ck_assert_str_eq(buf, tc->readback);
	} else {
		ck_assert_mem_eq(&c, &before, sizeof(c));
	}
	ck_assert_int_eq(mcrepl_config_validate(&c, NULL), MCREPL_OK);
}
END_TEST

/* covers: R-CONF-1 R-CONF-2 */
START_TEST(test_config_parse_key_value)
{
	mcrepl_config c;

	mcrepl_config_init(&c);
	ck_assert_int_eq(mcrepl_config_parse(&c, "  mode = enforce "),
			 MCREPL_OK);
	ck_assert_int_eq(c.mode, MCREPL_MODE_ENFORCE);
	ck_assert_int_eq(mcrepl_config_parse(&c,
					     "dynamic_replication_heat_window_"
					     "seconds=2"),
			 MCREPL_OK);
	ck_assert_uint_eq(c.heat_window_ms, 2000);
	ck_assert_int_eq(mcrepl_config_parse(&c, "mode"), MCREPL_EPARSE);
	ck_assert_int_eq(mcrepl_config_parse(&c, "=1"), MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_config_parse(NULL, "mode=off"), MCREPL_EINVAL);
}
END_TEST

/* covers: R-CONF-2 R-CONF-3 */
START_TEST(test_config_validate_names_field)
{
	mcrepl_config c;
	const char *field = NULL;

	mcrepl_config_init(&c);
	c.admission_qps_threshold = NAN;
	ck_assert_int_eq(mcrepl_config_validate(&c, &field), MCREPL_ERANGE);
	ck_assert_str_eq(field, "dynamic_replication_admission_qps_threshold");
	mcrepl_config_init(&c);
	c.heat_window_ms = 0;
	ck_assert_int_eq(mcrepl_config_validate(&c, &field), MCREPL_ERANGE);
	ck_assert_str_eq(field, "dynamic_replication_heat_window_seconds");
	mcrepl_config_init(&c);
	c.target_high_watermark = 0.0;
	ck_assert_int_eq(mcrepl_config_validate(&c, &field), MCREPL_ERANGE);
	ck_assert_str_eq(field, "dynamic_replication_target_high_watermark");
	mcrepl_config_init(&c);
	c.admission_qps_threshold = 1e6; /* 1e7 hits in 10 s: too many */
	ck_assert_int_eq(mcrepl_config_validate(&c, &field), MCREPL_ERANGE);
	ck_assert_int_eq(mcrepl_config_validate(NULL, &field), MCREPL_EINVAL);
}
END_TEST

static const struct thr_case {
	double qps;
	uint64_t window_ms;
	uint32_t want;
} thr_cases[] = {
    {0.8, 10000, 8}, {0.7, 10000, 7},	 {0.1, 30000, 3},  {0.3, 10000, 3},
    {0.8, 1000, 1},  {0.8, 100, 1},	 {0.0, 10000, 1},  {0.01, 1, 1},
    {1.5, 1000, 2},  {100, 10000, 1000}, {0.81, 10000, 9},
};

/* covers: R-ADMIT-2 R-ADMIT-3 */
START_TEST(test_config_threshold_arithmetic)
{
	const struct thr_case *tc = &thr_cases[_i];
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.admission_qps_threshold = tc->qps;
	c.heat_window_ms = tc->window_ms;
	ck_assert_uint_eq(mcrepl_config_threshold(&c), tc->want);
}
END_TEST

/* The first replica into a domain can have its own, lower threshold. */
START_TEST(test_config_cross_domain_threshold)
{
	mcrepl_config c;
	mcrepl_heat_params hp;
	const char *field = NULL;

	mcrepl_config_init(&c);
	c.cross_domain_qps_threshold = 0.3; /* 3 hits in 10 s */
	ck_assert_uint_eq(mcrepl_config_cross_domain_threshold(&c), 8);
	mcrepl_heat_params_init(&hp, &c);
	ck_assert_uint_eq(hp.threshold, 8); /* stage 1 ignores the knob */
	c.domain_aware = true;
	ck_assert_uint_eq(mcrepl_config_cross_domain_threshold(&c), 3);
	mcrepl_heat_params_init(&hp, &c);
	ck_assert_uint_eq(hp.threshold, 3); /* fires at the lower count */
	c.cross_domain_qps_threshold = 2;
	ck_assert_uint_eq(mcrepl_config_cross_domain_threshold(&c), 20);
	mcrepl_heat_params_init(&hp, &c);
	ck_assert_uint_eq(hp.threshold, 8);
	c.cross_domain_qps_threshold = 0;
	ck_assert_uint_eq(mcrepl_config_cross_domain_threshold(&c), 8);
	c.cross_domain_qps_threshold = 60000; /* 600,000 hits: too many */
	ck_assert_int_eq(mcrepl_config_validate(&c, &field), MCREPL_ERANGE);
	ck_assert_str_eq(field,
			 "dynamic_replication_cross_domain_qps_threshold");
}
END_TEST

START_TEST(test_config_knob_table_covers_every_knob)
{
	size_t n = 0;
	const mcrepl_config_knob *k = mcrepl_config_knobs(&n);
	mcrepl_config c;
	char buf[64];

	mcrepl_config_init(&c);
	ck_assert_uint_eq(n, 21);
	for (size_t i = 0; i < n; i++) {
		ck_assert_ptr_nonnull(k[i].help);
		ck_assert_int_eq(
		    mcrepl_config_get(&c, k[i].name, buf, sizeof(buf)),
		    MCREPL_OK);
		ck_assert_str_eq(buf, k[i].default_text);
	}
	ck_assert_int_eq(mcrepl_config_get(&c, "mode", buf, 3), MCREPL_ENOSPC);
	ck_assert_str_eq(mcrepl_mode_name((mcrepl_mode)9), "unknown");
}
END_TEST

Suite *make_config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, test_config_defaults_match_rfc);
	tcase_add_loop_test(tc, test_config_set_table, 0,
			    sizeof(set_cases) / sizeof(set_cases[0]));
	tcase_add_test(tc, test_config_parse_key_value);
	tcase_add_test(tc, test_config_validate_names_field);
	tcase_add_loop_test(tc, test_config_threshold_arithmetic, 0,
			    sizeof(thr_cases) / sizeof(thr_cases[0]));
	tcase_add_test(tc, test_config_cross_domain_threshold);
	tcase_add_test(tc, test_config_knob_table_covers_every_knob);
	suite_add_tcase(s, tc);
	return s;
}
