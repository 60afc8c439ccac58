/* Waiting on conditions (see wait.h). */
#include <time.h>

#include "harness.h"
#include "wait.h"

int test_timeout_scale(void)
{
	return harness_timeout_scale();
}

int test_hang_ms(void)
{
	return TEST_HANG_MS * test_timeout_scale();
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct test_wait test_wait_start(void)
{
	return (struct test_wait){.deadline_ms =
				      now_ms() + (int64_t)TEST_HANG_MS *
						     test_timeout_scale(),
				  .sleep_ms = 5};
}

int test_wait_bound_s(void)
{
	return TEST_HANG_MS / 1000 * test_timeout_scale();
}

bool test_wait_more(struct test_wait *w)
{
	if (now_ms() >= w->deadline_ms)
		return false;
	harness_sleep_ms(w->sleep_ms);
	if (w->sleep_ms < 100)
		w->sleep_ms *= 2;
	return true;
}
