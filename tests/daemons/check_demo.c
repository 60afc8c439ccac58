/* mcrepl-demo (make demo) reads as true to a newcomer: it ends
 * "demo: OK" with no warning from its own teardown (its objects removed
 * before the workers unmount, so nothing is lost), no RDMA probe lines,
 * the hot key's share per replica stated, and the admission counters
 * explained with the page's own numbers; its own lines in order with the
 * daemons' when both go to one pipe or file (block-buffered, its report
 * came after every daemon line). */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

Suite *make_demo_suite(void);

/* first and then both occur in text, first before then. */
static bool before(const char *text, const char *first, const char *then)
{
	const char *a = strstr(text, first), *b = strstr(text, then);

	return a && b && a < b;
}

START_TEST(test_demo_output_reads_as_true)
{
	char bin[512], cmd[1200], out[64 * 1024];
	size_t n;
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "MCREPL_TEST_LOG_DIR= %s --seconds 1 2>&1",
		 harness_bin("mcrepl-demo", bin, sizeof(bin)));
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	rc = pclose(p);
	ck_assert_msg(rc == 0 && strstr(out, "\ndemo: OK\n"), "%s", out);
	ck_assert_msg(!strstr(out, "warn:") && !strstr(out, "lost") &&
			  !strstr(out, "RDMA"),
		      "%s", out);
	ck_assert_msg(strstr(out, "the hot key's first replica (host-") &&
			  strstr(out, "How they add up:"),
		      "%s", out);
	/* the master's line before the first worker's; the report before
	 * the workers stop */
	ck_assert_msg(
	    before(out, "master   rpc 127.0.0.1:", "mcrepl-worker: info: ") &&
		before(out, "RFC counters (non-zero) from /metrics:",
		       "mcrepl-worker: info: signal 15"),
	    "the demo's lines out of order with the daemons'; it "
	    "begins:\n%.1500s",
	    out);
}
END_TEST

Suite *make_demo_suite(void)
{
	Suite *s = suite_create("demo");
	TCase *tc = tcase_create("demo");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_demo_output_reads_as_true);
	suite_add_tcase(s, tc);
	return s;
}
