/* Waiting in the daemon tests: on the state itself, never on time alone.
 * A test that expects something to happen polls for it with
 * WAIT_UNTIL(condition) and then asserts the condition with its exact
 * values; the deadline only bounds a real hang, so a loaded machine (a
 * shared CI runner, make check-stress) makes a test slower, never red.
 * A fixed sleep stays only where time is the point: a minimum to let
 * pass (a lease or a cooldown that must be over: sleeping longer is
 * fine), or a span in which something must not happen. */
#ifndef MCREPL_TEST_WAIT_H
#define MCREPL_TEST_WAIT_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>

/* The bound of one wait, in ms, before the scale. */
#define TEST_HANG_MS 20000

/* $MCREPL_TEST_TIMEOUT_SCALE (a whole number >= 1; 1 when unset or
 * invalid): multiplies every wait's bound. The runner also multiplies
 * Check's per-test timeouts by it (CK_TIMEOUT_MULTIPLIER). */
int test_timeout_scale(void);

/* The bound of a wait in ms (TEST_HANG_MS times the scale): for a
 * daemon's ready line (proc_start()) and helpers that take a bound. */
int test_hang_ms(void);

struct test_wait {
	int64_t deadline_ms; /* monotonic */
	int sleep_ms;
};

/* A wait bounded by TEST_HANG_MS (times the scale) from now. */
struct test_wait test_wait_start(void);
/* The bound of a wait, in s (for messages). */
int test_wait_bound_s(void);
/* Sleeps before the next poll (5 ms, growing to 100 ms); false, without
 * sleeping, once the deadline has passed. */
bool test_wait_more(struct test_wait *w);

/* Polls cond until it holds; fails the test, naming cond, when the bound
 * passes first. Assert the exact values afterwards as usual. */
#define WAIT_UNTIL(cond)                                                       \
	do {                                                                   \
		struct test_wait wait_ = test_wait_start();                    \
		bool held_;                                                    \
		while (!(held_ = (cond)) && test_wait_more(&wait_))            \
			;                                                      \
		ck_assert_msg(held_, "waited %d s in vain for: %s",            \
			      test_wait_bound_s(), #cond);                     \
	} while (0)

#endif
