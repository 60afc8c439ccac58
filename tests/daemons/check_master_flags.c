/* mcrepl-master's flags table (daemons/master/flags.c): knobs without
 * their prefix, the command line over --config, warnings for risky
 * values, in process. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "flagcheck.h"
#include "flagparse.h"
#include "flags.h"
#include "log.h"

Suite *make_master_flags_suite(void);

static int mparse(struct master_flags *f, const char *a, const char *b)
{
	char *argv[] = {(char *)(uintptr_t) "mcrepl-master",
			(char *)(uintptr_t)a, (char *)(uintptr_t)b, NULL};

	return master_flags_parse(f, b ? 3 : a ? 2 : 1, argv);
}

/* Knobs by their short names beside the master's own flags (none of
 * which is a knob's short name). */
START_TEST(test_short_knob_names)
{
	struct master_flags f;

	ck_assert_int_eq(mparse(&f, "--mode=enforce", "--lease_ttl_seconds=4"),
			 0);
	ck_assert_int_eq(f.opts.cfg.mode, MCREPL_MODE_ENFORCE);
	ck_assert_uint_eq(f.opts.cfg.lease_ttl_ms, 4000);
	ck_assert_int_eq(mparse(&f, "--rpc_port=7", "--max_memory_replicas=3"),
			 0);
	ck_assert_uint_eq(f.rpc_port, 7);
	ck_assert_uint_eq(f.opts.cfg.max_memory_replicas, 3);
}
END_TEST

static int warnings(const char *a, const char *b, char *out, size_t cap)
{
	struct master_flags f;
	int n;

	ck_assert_int_eq(mparse(&f, a, b), 0);
	capture_begin(STDERR_FILENO);
	n = master_flags_warn(&f, stderr);
	capture_end(out, cap);
	return n;
}

START_TEST(test_risky_values_warned)
{
	char out[1024];

	ck_assert_int_eq(warnings(NULL, NULL, out, sizeof(out)), 0);
	ck_assert_int_eq(warnings("--mode=enforce", NULL, out, sizeof(out)), 0);
	ck_assert_int_eq(warnings("--eviction_high_watermark_ratio=0.8", NULL,
				  out, sizeof(out)),
			 1);
	ck_assert_str_eq(
	    out, "mcrepl-master: warning: --eviction_high_watermark_ratio 0.80 "
		 "is not above --dynamic_replication_target_high_watermark "
		 "0.85: dynamic copies can fill a segment to the point where "
		 "eviction starts; keep eviction's watermark the higher");
	ck_assert_int_eq(warnings("--eviction_high_watermark_ratio=0.88", NULL,
				  out, sizeof(out)),
			 1);
	ck_assert_str_eq(
	    out, "mcrepl-master: warning: --eviction_high_watermark_ratio 0.88 "
		 "is below --dynamic_replication_room_fill_limit 0.90: a hot "
		 "copy placed in headroom on a full cluster starts eviction "
		 "at once; keep the fill limit at or below eviction's "
		 "watermark");
	ck_assert_int_eq(warnings("--eviction_high_watermark_ratio=0.88",
				  "--room_fill_limit=0.85", out, sizeof(out)),
			 0);
	ck_assert_int_eq(warnings("--mode=enforce", "--lease_ttl_seconds=1.5",
				  out, sizeof(out)),
			 1);
	ck_assert_str_eq(
	    out,
	    "mcrepl-master: warning: --dynamic_replication_lease_ttl_"
	    "seconds 1.5 is shorter than the workers' default "
	    "--copy_timeout_ms (20000 ms): a slow copy is revoked before it "
	    "times out; lower the workers' --copy_timeout_ms to match");
}
END_TEST

/* --log_level takes the four levels and names them when refused. */
START_TEST(test_log_level_flag)
{
	struct master_flags f;
	char out[1024];

	ck_assert_int_eq(mparse(&f, NULL, NULL), 0);
	ck_assert_str_eq(f.log_level, "info");
	ck_assert_int_eq(mparse(&f, "--log_level=debug", NULL), 0);
	ck_assert_str_eq(f.log_level, "debug");
	capture_begin(STDERR_FILENO);
	ck_assert_int_ne(mparse(&f, "--log_level=loud", NULL), 0);
	capture_end(out, sizeof(out));
	ck_assert_ptr_nonnull(strstr(out, "--log_level"));
	ck_assert_ptr_nonnull(strstr(out, "'loud'"));
	ck_assert_ptr_nonnull(strstr(out, "error|warn|info|debug"));
}
END_TEST

/* Lines below the level are dropped; the rest carry program and level. */
START_TEST(test_log_lines_filtered_by_level)
{
	char out[1024];

	log_init("mcrepl-test", "warn");
	ck_assert(!log_on(LOG_INFO));
	ck_assert(log_on(LOG_ERROR));
	capture_begin(STDERR_FILENO);
	log_line(LOG_INFO, "segment %d mounted", 1);
	log_line(LOG_WARN, "%d client(s) expired", 2);
	capture_end(out, sizeof(out));
	ck_assert_str_eq(out, "mcrepl-test: warn: 2 client(s) expired");
	log_init("mcrepl-test", "nonsense"); /* keeps warn */
	ck_assert(!log_on(LOG_INFO));
	log_init("mcrepl-master", "info");
	ck_assert(log_on(LOG_INFO) && !log_on(LOG_DEBUG));
}
END_TEST

/* Values that cannot work are refused, naming the flag's range; both
 * spellings (--flag value, --flag=value) read the same. */
START_TEST(test_zero_ttls_and_timeouts_refused)
{
	static const struct {
		const char *a, *b, *range;
	} cases[] = {
	    {"--client_ttl", "0", "allowed: seconds >= 0.1"},
	    {"--client_ttl=0", NULL, "allowed: seconds >= 0.1"},
	    {"--client_ttl", "-1", "allowed: seconds >= 0.1"},
	    {"--default_kv_lease_ttl", "0", "allowed: an integer >= 1"},
	    {"--default_kv_lease_ttl=-5", NULL, "allowed: an integer >= 1"},
	    {"--copy_start_release_timeout_sec", "0",
	     "allowed: seconds >= 0.1"},
	    {"--put_start_release_timeout_sec=0", NULL,
	     "allowed: seconds >= 0.1"},
	};
	struct master_flags f;
	char out[1024];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		capture_begin(STDERR_FILENO);
		ck_assert_int_eq(mparse(&f, cases[i].a, cases[i].b), -1);
		capture_end(out, sizeof(out));
		ck_assert_msg(strstr(out, cases[i].range) != NULL, "%s: %s",
			      cases[i].a, out);
		ck_assert_msg(strstr(out, "invalid value") != NULL, "%s", out);
	}
	ck_assert_int_eq(mparse(&f, "--client_ttl", "0.3"), 0);
	ck_assert_uint_eq(f.opts.client_ttl_ms, 300);
	ck_assert_int_eq(mparse(&f, "--default_kv_lease_ttl=50", NULL), 0);
	ck_assert_uint_eq(f.opts.kv_lease_ttl_ms, 50);
}
END_TEST

/* Every flag whose range allows 0 says in --help what 0 means
 * (--put_start_discard_timeout_sec and --warmup_max_copies took 0 with no
 * word on it). The rule runs over the table, the shared RPC and HTTP
 * tables chained to it included. */
START_TEST(test_zero_values_say_what_they_mean)
{
	assert_zero_values_said(master_flag_set());
}
END_TEST

Suite *make_master_flags_suite(void)
{
	Suite *s = suite_create("master_flags");
	TCase *tc = tcase_create("flags");

	tcase_add_test(tc, test_short_knob_names);
	tcase_add_test(tc, test_risky_values_warned);
	tcase_add_test(tc, test_log_level_flag);
	tcase_add_test(tc, test_log_lines_filtered_by_level);
	tcase_add_test(tc, test_zero_ttls_and_timeouts_refused);
	tcase_add_test(tc, test_zero_values_say_what_they_mean);
	suite_add_tcase(s, tc);
	return s;
}
