/* Test allocator: the test binary links with -Wl,--wrap=malloc etc. */
#include <stdlib.h>

#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

static long fail_after = -1;
static long count;

void test_fail_alloc_after(long n)
{
	fail_after = n;
	count = 0;
}

long test_alloc_count(void)
{
	return count;
}

static int should_fail(void)
{
	long seen = count++;

	return fail_after >= 0 && seen >= fail_after;
}

void *__wrap_malloc(size_t n)
{
	return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return should_fail() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return should_fail() ? NULL : __real_realloc(p, n);
}
