/* Shared test helpers: a malloc that can be told to fail. */
#ifndef MCREPL_TESTUTIL_H
#define MCREPL_TESTUTIL_H

#include <check.h>
#include <stddef.h>

/* NOTE: Check itself allocates through the wrapped malloc: set failure
 * right before the call under test and turn it off (-1) right after,
 * before any ck_assert.
 * Make the n-th allocation from now (0 = the next one) and every later one
 * fail, for calloc/malloc/realloc done by libmcrepl and test code; -1 turns
 * failure off. test_alloc_count() counts allocations since the last call. */
void test_fail_alloc_after(long n);
long test_alloc_count(void);

/* Every suite is declared here; the runner is generated from the files. */
#define MCREPL_SUITE(name) Suite *make_##name##_suite(void);
#include "suites.h"
#undef MCREPL_SUITE

#endif
