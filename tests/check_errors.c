/* Status and reason name tables. */
#include <stdio.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

START_TEST(test_errors_names_and_texts)
{
	ck_assert_str_eq(mcrepl_strerror(MCREPL_OK), "success");
	ck_assert_str_eq(mcrepl_strerror(MCREPL_ESTALE),
			 "stale lease or version");
	ck_assert_str_eq(mcrepl_strerror((mcrepl_status)999), "unknown status");
	ck_assert_str_eq(mcrepl_status_name(MCREPL_EREJECTED), "EREJECTED");
	ck_assert_str_eq(mcrepl_status_name((mcrepl_status)-1), "UNKNOWN");
	ck_assert_str_eq(mcrepl_reason_name(MCREPL_REASON_NONE), "none");
	ck_assert_str_eq(mcrepl_reason_name(MCREPL_REASON_BELOW_THRESHOLD),
			 "below_threshold");
	ck_assert_str_eq(mcrepl_reason_name(MCREPL_REASON_NO_CAPABLE_SOURCE),
			 "no_capable_source");
	ck_assert_str_eq(mcrepl_reason_name(MCREPL_REASON_COUNT), "unknown");
}
END_TEST

/* covers: R-OBS-2 */
START_TEST(test_errors_reason_labels_unique_and_metric_safe)
{
	for (int i = 0; i < MCREPL_REASON_COUNT; i++) {
		const char *a = mcrepl_reason_name((mcrepl_reason)i);

		ck_assert_uint_eq(strspn(a, "abcdefghijklmnopqrstuvwxyz_"),
				  strlen(a));
		for (int j = i + 1; j < MCREPL_REASON_COUNT; j++)
			ck_assert_str_ne(a,
					 mcrepl_reason_name((mcrepl_reason)j));
	}
}
END_TEST

START_TEST(test_errors_version_string)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", MCREPL_VERSION_MAJOR,
		 MCREPL_VERSION_MINOR, MCREPL_VERSION_PATCH);
	ck_assert_str_eq(mcrepl_version(), want);
}
END_TEST

Suite *make_errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("errors");

	tcase_add_test(tc, test_errors_names_and_texts);
	tcase_add_test(tc, test_errors_reason_labels_unique_and_metric_safe);
	tcase_add_test(tc, test_errors_version_string);
	suite_add_tcase(s, tc);
	return s;
}
