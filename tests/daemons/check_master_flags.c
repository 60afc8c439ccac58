/* mcrepl-master's flags table (daemons/master/flags.c): knobs without
 * their prefix, the command line over --config, warnings for risky
 * values, in process. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"
#include "flags.h"

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

Suite *make_master_flags_suite(void)
{
	Suite *s = suite_create("master_flags");
	TCase *tc = tcase_create("flags");

	tcase_add_test(tc, test_short_knob_names);
	tcase_add_test(tc, test_risky_values_warned);
	suite_add_tcase(s, tc);
	return s;
}
