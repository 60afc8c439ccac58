/* Stats counters and Prometheus rendering. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

static char *render(mcrepl_stats *s)
{
	size_t len = 0;
	char *buf;

	ck_assert_int_eq(mcrepl_stats_render(s, NULL, 0, &len), MCREPL_ENOSPC);
	buf = malloc(len + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(mcrepl_stats_render(s, buf, len + 1, NULL), MCREPL_OK);
	ck_assert_uint_eq(strlen(buf), len);
	return buf;
}

/* covers: R-OBS-1 R-OBS-2 R-OBS-4 R-OBS-5 */
START_TEST(test_stats_counters_and_rejections)
{
	mcrepl_stats *s = NULL;

	ck_assert_int_eq(mcrepl_stats_create(&s), MCREPL_OK);
	mcrepl_stats_add(s, MCREPL_STAT_ACCEPTED, 3);
	mcrepl_stats_add(s, MCREPL_STAT_REPLICAS, 2);
	mcrepl_stats_add(s, MCREPL_STAT_REPLICAS, -1);
	mcrepl_stats_reject(s, MCREPL_REASON_BELOW_THRESHOLD);
	mcrepl_stats_reject(s, MCREPL_REASON_BELOW_THRESHOLD);
	mcrepl_stats_reject(s, MCREPL_REASON_RECREATE_COOLDOWN);
	mcrepl_stats_reject(s, MCREPL_REASON_MODE_OBSERVE);
	mcrepl_stats_reject(s, MCREPL_REASON_NONE);
	ck_assert_int_eq(mcrepl_stats_get(s, MCREPL_STAT_ACCEPTED), 3);
	ck_assert_int_eq(mcrepl_stats_get(s, MCREPL_STAT_REPLICAS), 1);
	ck_assert_uint_eq(
	    mcrepl_stats_rejected(s, MCREPL_REASON_BELOW_THRESHOLD), 2);
	ck_assert_int_eq(
	    mcrepl_stats_get(s, MCREPL_STAT_RECREATE_COOLDOWN_HITS), 1);
	ck_assert_int_eq(mcrepl_stats_get(s, MCREPL_STAT_WOULD_PROPOSE), 1);
	ck_assert_uint_eq(mcrepl_stats_rejected(s, MCREPL_REASON_MODE_OBSERVE),
			  0);
	mcrepl_stats_set(s, MCREPL_STAT_INFLIGHT, 5);
	ck_assert_int_eq(mcrepl_stats_get(s, MCREPL_STAT_INFLIGHT), 5);
	mcrepl_stats_destroy(s);
	mcrepl_stats_destroy(NULL);
}
END_TEST

/* A copy renders as its source did when copied, replaces what the copy
 * held (domain pairs included, past the 64 kept), and does not move with
 * the source afterwards. */
START_TEST(test_stats_copy_is_a_snapshot)
{
	mcrepl_stats *src = NULL, *dst = NULL;
	char *want, *got, dom[16];

	ck_assert_int_eq(mcrepl_stats_create(&src), MCREPL_OK);
	ck_assert_int_eq(mcrepl_stats_create(&dst), MCREPL_OK);
	mcrepl_stats_add(dst, MCREPL_STAT_ACCEPTED, 99);
	mcrepl_stats_domain_proposal(dst, "old", "old");
	mcrepl_stats_add(src, MCREPL_STAT_TASKS_CREATED, 4);
	mcrepl_stats_add(src, MCREPL_STAT_REPLICAS, -2);
	mcrepl_stats_reject(src, MCREPL_REASON_REPLICA_LIMIT);
	for (int i = 0; i < 70; i++) {
		snprintf(dom, sizeof(dom), "d%d", i);
		mcrepl_stats_domain_proposal(src, dom, "t");
	}
	ck_assert_int_eq(mcrepl_stats_copy(dst, src), MCREPL_OK);
	want = render(src);
	got = render(dst);
	ck_assert_str_eq(got, want);
	ck_assert_int_eq(mcrepl_stats_get(dst, MCREPL_STAT_ACCEPTED), 0);
	ck_assert_int_eq(mcrepl_stats_get(dst, MCREPL_STAT_REPLICAS), -2);
	ck_assert_ptr_null(strstr(got, "\"old\""));
	ck_assert_ptr_nonnull(strstr(got, "{requester_domain=\"other\","
					  "target_domain=\"other\"} 6\n"));
	mcrepl_stats_add(src, MCREPL_STAT_TASKS_CREATED, 1);
	mcrepl_stats_reject(src, MCREPL_REASON_REPLICA_LIMIT);
	ck_assert_int_eq(mcrepl_stats_get(dst, MCREPL_STAT_TASKS_CREATED), 4);
	ck_assert_uint_eq(
	    mcrepl_stats_rejected(dst, MCREPL_REASON_REPLICA_LIMIT), 1);
	ck_assert_int_eq(mcrepl_stats_copy(NULL, src), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_stats_copy(dst, NULL), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_stats_copy(dst, dst), MCREPL_EINVAL);
	free(want);
	free(got);
	mcrepl_stats_destroy(src);
	mcrepl_stats_destroy(dst);
}
END_TEST

/* covers: R-OBS-2 R-OBS-3 R-OBS-4 R-OBS-6 */
START_TEST(test_stats_render_prometheus_text)
{
	mcrepl_stats *s = NULL;
	char *text;

	ck_assert_int_eq(mcrepl_stats_create(&s), MCREPL_OK);
	mcrepl_stats_add(s, MCREPL_STAT_TASKS_CREATED, 4);
	mcrepl_stats_reject(s, MCREPL_REASON_REPLICA_LIMIT);
	mcrepl_stats_domain_proposal(s, "", "domain-b");
	mcrepl_stats_domain_proposal(s, NULL, "domain-b");
	text = render(s);
	ck_assert_ptr_nonnull(strstr(
	    text, "# TYPE mcrepl_dynamic_copy_tasks_created_total counter\n"
		  "mcrepl_dynamic_copy_tasks_created_total 4\n"));
	ck_assert_ptr_nonnull(
	    strstr(text, "# TYPE mcrepl_dynamic_replicas gauge\n"));
	ck_assert_ptr_nonnull(strstr(text, "mcrepl_dynamic_admission_rejected_"
					   "total{reason=\"replica_limit\"} "
					   "1\n"));
	ck_assert_ptr_nonnull(strstr(text, "mcrepl_dynamic_admission_rejected_"
					   "total{reason=\"below_threshold\"} "
					   "0\n"));
	ck_assert_ptr_null(strstr(text, "reason=\"mode_observe\""));
	ck_assert_ptr_null(strstr(text, "reason=\"none\""));
	ck_assert_ptr_nonnull(
	    strstr(text, "mcrepl_dynamic_proposals_total{requester_domain="
			 "\"default\",target_domain=\"domain-b\"} 2\n"));
	free(text);
	mcrepl_stats_destroy(s);
}
END_TEST

START_TEST(test_stats_render_truncates_cleanly)
{
	mcrepl_stats *s = NULL;
	char buf[16];
	size_t len = 0;

	ck_assert_int_eq(mcrepl_stats_create(&s), MCREPL_OK);
	ck_assert_int_eq(mcrepl_stats_render(s, buf, sizeof(buf), &len),
			 MCREPL_ENOSPC);
	ck_assert_uint_eq(strlen(buf), sizeof(buf) - 1);
	ck_assert_uint_gt(len, sizeof(buf));
	mcrepl_stats_destroy(s);
}
END_TEST

/* covers: R-OBS-6 R-OBS-10 */
START_TEST(test_stats_domain_pairs_bounded)
{
	mcrepl_stats *s = NULL;
	char d[16];
	char *text;

	ck_assert_int_eq(mcrepl_stats_create(&s), MCREPL_OK);
	for (int i = 0; i < 70; i++) {
		snprintf(d, sizeof(d), "d%d", i);
		mcrepl_stats_domain_proposal(s, "a", d);
	}
	text = render(s);
	ck_assert_ptr_nonnull(strstr(text, "target_domain=\"d63\"} 1\n"));
	ck_assert_ptr_null(strstr(text, "target_domain=\"d64\""));
	ck_assert_ptr_nonnull(strstr(
	    text, "{requester_domain=\"other\",target_domain=\"other\"} 6\n"));
	free(text);
	mcrepl_stats_destroy(s);
}
END_TEST

START_TEST(test_stats_create_out_of_memory)
{
	mcrepl_stats *s = NULL;
	mcrepl_status st;

	test_fail_alloc_after(0);
	st = mcrepl_stats_create(&s);
	test_fail_alloc_after(-1);
	ck_assert_int_eq(st, MCREPL_ENOMEM);
	ck_assert_ptr_null(s);
}
END_TEST

Suite *make_stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("stats");

	tcase_add_test(tc, test_stats_counters_and_rejections);
	tcase_add_test(tc, test_stats_render_prometheus_text);
	tcase_add_test(tc, test_stats_copy_is_a_snapshot);
	tcase_add_test(tc, test_stats_render_truncates_cleanly);
	tcase_add_test(tc, test_stats_domain_pairs_bounded);
	tcase_add_test(tc, test_stats_create_out_of_memory);
	suite_add_tcase(s, tc);
	return s;
}
