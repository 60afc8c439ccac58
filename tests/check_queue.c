/* Trigger queue: dedup, bound, FIFO order, allocation failure. */
#include <stdio.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "testutil.h"

/* covers: R-DEC-5 */
START_TEST(test_queue_dedups_and_bounds)
{
	mcrepl_triggers *q = NULL;
	mcrepl_trigger out[8];

	ck_assert_int_eq(mcrepl_triggers_create(3, &q), MCREPL_OK);
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "a", "", 1), MCREPL_OK);
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "a", NULL, 2),
			 MCREPL_EEXIST);
	ck_assert_int_eq(mcrepl_triggers_push(q, "u", "a", "", 3), MCREPL_OK);
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "a", "d2", 4), MCREPL_OK);
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "b", "", 5),
			 MCREPL_EFULL);
	ck_assert_uint_eq(mcrepl_triggers_len(q), 3);
	ck_assert_uint_eq(mcrepl_triggers_pop(q, out, 2), 2);
	ck_assert_str_eq(out[0].tenant, "t");
	ck_assert_str_eq(out[0].key, "a");
	ck_assert_str_eq(out[0].domain, "");
	ck_assert_uint_eq(out[0].queued_at_ms, 1);
	ck_assert_str_eq(out[1].tenant, "u");
	/* popped keys may be queued again */
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "a", "", 6), MCREPL_OK);
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "a", "d2", 7),
			 MCREPL_EEXIST);
	for (int i = 0; i < 2; i++)
		mcrepl_trigger_release(&out[i]);
	ck_assert_uint_eq(mcrepl_triggers_pop(q, out, 8), 2);
	ck_assert_str_eq(out[0].domain, "d2");
	ck_assert_uint_eq(out[1].queued_at_ms, 6);
	for (int i = 0; i < 2; i++)
		mcrepl_trigger_release(&out[i]);
	ck_assert_uint_eq(mcrepl_triggers_pop(q, out, 8), 0);
	mcrepl_triggers_destroy(q);
}
END_TEST

/* Heavy churn through the index (backward-shift deletion) keeps dedup
 * exact. */
/* covers: R-DEC-5 */
START_TEST(test_queue_churn_keeps_index_exact)
{
	mcrepl_triggers *q = NULL;
	mcrepl_trigger out[16];
	char key[32];
	unsigned popped = 0;

	ck_assert_int_eq(mcrepl_triggers_create(16, &q), MCREPL_OK);
	for (unsigned i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "k%u", i % 40);
		mcrepl_status st = mcrepl_triggers_push(q, "", key, "", i);

		ck_assert(st == MCREPL_OK || st == MCREPL_EEXIST ||
			  st == MCREPL_EFULL);
		if (i % 3 == 0) {
			size_t n = mcrepl_triggers_pop(q, out, 5);

			for (size_t j = 0; j < n; j++) {
				/* a popped key is not queued any more */
				size_t len = mcrepl_triggers_len(q);

				ck_assert_int_eq(
				    mcrepl_triggers_push(q, "", out[j].key,
							 out[j].domain, i),
				    len < 16 ? MCREPL_OK : MCREPL_EFULL);
				mcrepl_trigger_release(&out[j]);
			}
			popped += (unsigned)n;
		}
	}
	ck_assert_uint_gt(popped, 1000);
	mcrepl_triggers_destroy(q);
}
END_TEST

START_TEST(test_queue_allocation_failure)
{
	mcrepl_triggers *q = NULL;
	long n;
	mcrepl_status st;

	for (n = 0;; n++) {
		test_fail_alloc_after(n);
		st = mcrepl_triggers_create(4, &q);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_ptr_null(q);
	}
	ck_assert_int_eq(n, 4);
	for (n = 0; n < 3; n++) {
		test_fail_alloc_after(n);
		st = mcrepl_triggers_push(q, "t", "k", "", 1);
		test_fail_alloc_after(-1);
		ck_assert_int_eq(st, MCREPL_ENOMEM);
	}
	ck_assert_uint_eq(mcrepl_triggers_len(q), 0);
	ck_assert_int_eq(mcrepl_triggers_push(q, "t", "k", "", 1), MCREPL_OK);
	mcrepl_triggers_destroy(q);
	ck_assert_int_eq(mcrepl_triggers_create(0, &q), MCREPL_EINVAL);
}
END_TEST

Suite *make_queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("queue");

	tcase_add_test(tc, test_queue_dedups_and_bounds);
	tcase_add_test(tc, test_queue_churn_keeps_index_exact);
	tcase_add_test(tc, test_queue_allocation_failure);
	suite_add_tcase(s, tc);
	return s;
}
