/* Test allocator: the test binary links with -Wl,--wrap=malloc etc. */
#include <stdatomic.h>
#include <stdlib.h>

#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);

/* Atomics: threaded tests allocate from several threads at once. */
static _Atomic long fail_after = -1;
static _Atomic long count;

void test_fail_alloc_after(long n)
{
	atomic_store(&count, 0);
	atomic_store(&fail_after, n);
}

long test_alloc_count(void)
{
	return atomic_load(&count);
}

static int should_fail(void)
{
	long limit = atomic_load(&fail_after);

	if (limit < 0)
		return 0;
	return atomic_fetch_add(&count, 1) >= limit;
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
