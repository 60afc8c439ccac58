/* Per-test logs of the daemon tests. With $MCREPL_TEST_LOG_DIR set (make
 * check-daemons sets it to build/test-logs), each test's daemons write
 * their stderr to their own files, named after the test:
 *
 *   $MCREPL_TEST_LOG_DIR/daemons/<suite>/<test>/mcrepl-master.log
 *                                               mcrepl-worker.log ...
 *                                               test.log (the test's own)
 *
 * where <suite> is the file's name without "check_" (check_worker.c:
 * worker) and <test> the name given to START_TEST, ".<i>" added for the
 * iterations i > 0 of a loop test. When a test fails, the runner prints
 * that directory and the last lines of each log in it.
 *
 * How: the runner (main.c) calls testlog_init(); every test process Check
 * forks starts logging into a directory of its own (its fixture's daemons
 * too), which the test body renames after the test when it begins: this
 * header redefines START_TEST so that the body first calls
 * testlog_begin(). mk/tests.mk includes it into every tests/daemons/
 * source (-include), so a test file needs nothing. Without
 * $MCREPL_TEST_LOG_DIR nothing changes: the daemons inherit stderr. With
 * CK_FORK=no (valgrind) the daemons a fixture starts log to the top
 * directory, those a body starts to the test's. */
#ifndef MCREPL_TESTLOG_H
#define MCREPL_TESTLOG_H

#include <check.h>

/* In the runner, before any suite runs. */
void testlog_init(SRunner *sr);
/* In the runner after srunner_run_all(): for each test that did not pass,
 * "<test> failed: logs in DIR" and the last lines of each file of DIR, on
 * stdout; then drops the bookkeeping. The number of failed tests. */
int testlog_report(SRunner *sr);
/* At the start of each test body (START_TEST): names its log directory
 * and points $MCREPL_TEST_LOG_DIR there (unless the fixture set it to
 * another directory). file is __FILE__. */
void testlog_begin(const char *file, const char *test, int iter);

/* In a test process: its log directory (a path that stays valid when the
 * body renames it), for a fixture that sends logs there itself; NULL
 * without per-test logs (no $MCREPL_TEST_LOG_DIR, CK_FORK=no). */
const char *testlog_dir(void);

/* Check's START_TEST (check.h, 0.13 and later) with testlog_begin() first
 * in the body. */
#undef START_TEST
#define START_TEST(test)                                                       \
	static void test##_body(int _i);                                       \
	static void test##_fn(int _i)                                          \
	{                                                                      \
		testlog_begin(__FILE__, #test, _i);                            \
		test##_body(_i);                                               \
	}                                                                      \
	static const TTest test##_ttest = {.name = #test,                      \
					   .fn = test##_fn,                    \
					   .file = __FILE__,                   \
					   .line = __LINE__};                  \
	static const TTest *test = &test##_ttest;                              \
	static void test##_body(int _i CK_ATTRIBUTE_UNUSED)

#endif
