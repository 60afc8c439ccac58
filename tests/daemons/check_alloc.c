/* Segment offset allocator: exact-value tests plus a differential test
 * against a sorted-interval reference model. Self-contained. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "util/hash.h"

Suite *make_alloc_suite(void);

/* Check records the location of every ck_assert (a write per call), which
 * dominates loops of millions of checks: hot paths test first and only
 * call into Check on failure. */
#define expect(c)                                                              \
	do {                                                                   \
		if (!(c))                                                      \
			ck_abort_msg("expected: %s", #c);                      \
	} while (0)

#define KIB UINT64_C(1024)
#define MIB (KIB * KIB)

/* ---- deterministic RNG (splitmix64) -------------------------------------- */

static uint64_t rng_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + mcu_splitmix64(s) % (hi - lo + 1u);
}

/* ---- reference model: live intervals sorted by offset -------------------- */

struct ival {
	uint64_t off;
	uint64_t len;
};

struct model {
	uint64_t capacity;
	uint64_t align;
	struct ival *v;
	size_t n;
	size_t cap;
	uint64_t used;
};

static void model_init(struct model *m, uint64_t capacity, uint64_t align)
{
	memset(m, 0, sizeof(*m));
	m->capacity = capacity;
	m->align = align;
}

static void model_fini(struct model *m)
{
	free(m->v);
	m->v = NULL;
}

static uint64_t model_round(const struct model *m, uint64_t size)
{
	return (size + m->align - 1u) & ~(m->align - 1u);
}

/* Index of the first interval whose offset is >= off. */
static size_t model_lower(const struct model *m, uint64_t off)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint64_t gap_before(const struct model *m, size_t i)
{
	uint64_t start = i ? m->v[i - 1].off + m->v[i - 1].len : 0;
	uint64_t end = i < m->n ? m->v[i].off : m->capacity;

	return end - start;
}

static uint64_t model_largest_free(const struct model *m)
{
	uint64_t best = 0;
	size_t i;

	for (i = 0; i <= m->n; i++)
		if (gap_before(m, i) > best)
			best = gap_before(m, i);
	return best;
}

static size_t model_free_ranges(const struct model *m)
{
	size_t i, count = 0;

	for (i = 0; i <= m->n; i++)
		count += gap_before(m, i) != 0;
	return count;
}

/* Record an allocation; it must lie in free space and be aligned. */
static void model_insert(struct model *m, uint64_t off, uint64_t len)
{
	size_t i = model_lower(m, off);

	expect(off % m->align == 0);
	expect(len <= m->capacity && off <= m->capacity - len);
	expect(i == 0 || m->v[i - 1].off + m->v[i - 1].len <= off);
	expect(i == m->n || off + len <= m->v[i].off);
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = realloc(m->v, m->cap * sizeof(*m->v));
		expect(m->v != NULL);
	}
	memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(*m->v));
	m->v[i] = (struct ival){.off = off, .len = len};
	m->n++;
	m->used += len;
}

/* Drop the allocation starting at off; false if there is none. */
static bool model_remove(struct model *m, uint64_t off)
{
	size_t i = model_lower(m, off);

	if (i == m->n || m->v[i].off != off)
		return false;
	m->used -= m->v[i].len;
	memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
	m->n--;
	return true;
}

static void assert_matches(const struct seg_alloc *a, const struct model *m)
{
	uint64_t used = seg_alloc_used(a), largest = seg_alloc_largest_free(a);
	size_t live = seg_alloc_live(a), ranges = seg_alloc_free_ranges(a);

	if (used == m->used && live == m->n &&
	    largest == model_largest_free(m) && ranges == model_free_ranges(m))
		return;
	ck_abort_msg("used %ju/%ju live %zu/%zu largest %ju/%ju ranges %zu/%zu "
		     "(allocator/model)",
		     (uintmax_t)used, (uintmax_t)m->used, live, m->n,
		     (uintmax_t)largest, (uintmax_t)model_largest_free(m),
		     ranges, model_free_ranges(m));
}

/* Allocate on both; the allocator must fail only when the model cannot fit
 * the request. Returns the allocator's status. */
static int both_alloc(struct seg_alloc *a, struct model *m, uint64_t size)
{
	uint64_t off = UINT64_MAX;
	int rc = seg_alloc_alloc(a, size, &off);

	if (rc == 0)
		model_insert(m, off, model_round(m, size));
	else if (rc == -ENOSPC)
		expect(model_largest_free(m) < model_round(m, size));
	return rc;
}

/* ---- snapshots ----------------------------------------------------------- */

struct snap {
	uint64_t used;
	uint64_t largest;
	size_t live;
	size_t ranges;
};

static struct snap take_snap(const struct seg_alloc *a)
{
	return (struct snap){
	    .used = seg_alloc_used(a),
	    .largest = seg_alloc_largest_free(a),
	    .live = seg_alloc_live(a),
	    .ranges = seg_alloc_free_ranges(a),
	};
}

static void assert_unchanged(const struct seg_alloc *a, const struct snap *s)
{
	ck_assert_uint_eq(seg_alloc_used(a), s->used);
	ck_assert_uint_eq(seg_alloc_largest_free(a), s->largest);
	ck_assert_uint_eq(seg_alloc_live(a), s->live);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), s->ranges);
	ck_assert(seg_alloc_is_consistent(a));
}

static struct seg_alloc *new_alloc(uint64_t capacity, uint64_t align)
{
	struct seg_alloc *a = NULL;

	ck_assert_int_eq(seg_alloc_create(capacity, align, &a), 0);
	ck_assert_ptr_nonnull(a);
	return a;
}

static uint64_t must_alloc(struct seg_alloc *a, uint64_t size)
{
	uint64_t off = UINT64_MAX;

	expect(seg_alloc_alloc(a, size, &off) == 0);
	return off;
}

/* ---- failing metadata allocator ---------------------------------------- */

/* Metadata hooks: allocation number fail_at fails, and with sticky every
 * later one too. Counts blocks so leaks show without valgrind. */
struct failing_mem {
	long count;
	long fail_at;
	bool sticky;
	long failed;
	long blocks;
};

static void *failing_alloc(void *ctx, size_t size)
{
	struct failing_mem *fm = ctx;
	long seen = fm->count++;
	void *p;

	if (fm->fail_at >= 0 &&
	    (seen == fm->fail_at || (fm->sticky && seen > fm->fail_at))) {
		fm->failed++;
		return NULL;
	}
	p = malloc(size);
	fm->blocks += p != NULL;
	return p;
}

static void failing_free(void *ctx, void *ptr)
{
	struct failing_mem *fm = ctx;

	fm->blocks -= ptr != NULL;
	free(ptr);
}

/* ---- create arguments ---------------------------------------------------- */

static const struct {
	uint64_t capacity, align;
	int rc;
	uint64_t effective; /* capacity after rounding */
} create_cases[] = {
    {4096, 64, 0, 4096},
    {1000, 0, 0, 960}, /* default 64, rounded down */
    {1000, 1, 0, 1000},
    {UINT64_C(1) << 40, 4096, 0, UINT64_C(1) << 40},
    {UINT64_MAX, 64, 0, UINT64_MAX & ~UINT64_C(63)},
    {63, 64, -EINVAL, 0},
    {0, 64, -EINVAL, 0},
    {4096, 3, -EINVAL, 0},
    {4096, 96, -EINVAL, 0},
};

START_TEST(test_create_args)
{
	struct seg_alloc *a = NULL;
	int rc = seg_alloc_create(create_cases[_i].capacity,
				  create_cases[_i].align, &a);

	ck_assert_int_eq(rc, create_cases[_i].rc);
	if (rc) {
		ck_assert_ptr_null(a);
		return;
	}
	ck_assert_uint_eq(seg_alloc_capacity(a), create_cases[_i].effective);
	ck_assert_uint_eq(seg_alloc_largest_free(a),
			  create_cases[_i].effective);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	ck_assert_uint_eq(seg_alloc_used(a), 0);
	ck_assert_uint_eq(seg_alloc_live(a), 0);
	ck_assert(seg_alloc_is_consistent(a));
	seg_alloc_destroy(a);
}
END_TEST

START_TEST(test_create_null_out_destroy_null)
{
	struct seg_alloc_mem no_free = {.alloc = failing_alloc};
	struct seg_alloc *a = NULL;

	ck_assert_int_eq(seg_alloc_create(4096, 64, NULL), -EINVAL);
	ck_assert_int_eq(seg_alloc_create_with(4096, 64, &no_free, &a),
			 -EINVAL);
	ck_assert_ptr_null(a);
	seg_alloc_destroy(NULL);
}
END_TEST

/* ---- alignment rounding -------------------------------------------------- */

static const struct {
	uint64_t align, size, used, second_off;
} round_cases[] = {
    {64, 1, 64, 64},	   {64, 63, 64, 64},
    {64, 64, 64, 64},	   {64, 65, 128, 128},
    {1, 1, 1, 1},	   {1, 7, 7, 7},
    {4096, 1, 4096, 4096}, {4096, 4097, 8192, 8192},
    {8, 9, 16, 16},
};

START_TEST(test_align_rounding)
{
	struct seg_alloc *a = new_alloc(MIB, round_cases[_i].align);
	uint64_t first = must_alloc(a, round_cases[_i].size);
	uint64_t second = must_alloc(a, round_cases[_i].size);

	ck_assert_uint_eq(first, 0);
	ck_assert_uint_eq(second, round_cases[_i].second_off);
	ck_assert_uint_eq(seg_alloc_used(a), 2 * round_cases[_i].used);
	ck_assert_uint_eq(seg_alloc_largest_free(a),
			  MIB - 2 * round_cases[_i].used);
	ck_assert_int_eq(seg_alloc_free(a, second), 0);
	ck_assert_uint_eq(seg_alloc_used(a), round_cases[_i].used);
	seg_alloc_destroy(a);
}
END_TEST

/* ---- fill to capacity ---------------------------------------------------- */

START_TEST(test_fill_exact)
{
	struct seg_alloc *a = new_alloc(100 * 64, 64);
	uint64_t off;
	int i;

	for (i = 0; i < 100; i++)
		ck_assert_uint_eq(must_alloc(a, 64), (uint64_t)i * 64);
	ck_assert_uint_eq(seg_alloc_used(a), 6400);
	ck_assert_uint_eq(seg_alloc_largest_free(a), 0);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 0);
	ck_assert_uint_eq(seg_alloc_live(a), 100);
	ck_assert_int_eq(seg_alloc_alloc(a, 1, &off), -ENOSPC);
	ck_assert(seg_alloc_is_consistent(a));
	seg_alloc_destroy(a);
}
END_TEST

/* A whole segment of 1000 granules is not the low bound of its TLSF size
 * class: plain TLSF would refuse it. Mixed sizes then fill it exactly. */
START_TEST(test_fill_whole_and_mixed)
{
	struct seg_alloc *a = new_alloc(1000 * 64, 64);
	uint64_t off;

	ck_assert_uint_eq(must_alloc(a, 1000 * 64), 0);
	ck_assert_int_eq(seg_alloc_alloc(a, 64, &off), -ENOSPC);
	ck_assert_int_eq(seg_alloc_free(a, 0), 0);
	ck_assert_int_eq(seg_alloc_alloc(a, 1000 * 64 + 1, &off), -ENOSPC);
	ck_assert_uint_eq(must_alloc(a, 700 * 64), 0);
	ck_assert_uint_eq(must_alloc(a, 299 * 64 - 5), 700 * 64);
	ck_assert_uint_eq(seg_alloc_largest_free(a), 64);
	ck_assert_uint_eq(must_alloc(a, 1), 999 * 64);
	ck_assert_uint_eq(seg_alloc_used(a), 1000 * 64);
	ck_assert_int_eq(seg_alloc_alloc(a, 1, &off), -ENOSPC);
	ck_assert(seg_alloc_is_consistent(a));
	seg_alloc_destroy(a);
}
END_TEST

/* ---- placement ----------------------------------------------------------- */

/* Layout: blocks allocated back to back, then some freed (in that order);
 * the request must land in the smallest size class that fits, and within
 * the request's own class skip a range too small for it. */
static const struct {
	uint64_t capacity;
	uint64_t blocks[4];
	int freed[2]; /* -1 = none */
	uint64_t request, off;
} fit_cases[] = {
    /* exact-size hole preferred over the tail */
    {MIB, {64, 64, 64, 0}, {1, -1}, 64, 64},
    /* a hole one level up preferred over the large tail */
    {MIB, {2048, 64, 0, 0}, {0, -1}, 64, 0},
    /* of two holes that fit, the smaller class */
    {MIB, {4096, 64, 128, 64}, {0, 2}, 100, 4160},
    /* no tail: 66 and 67 granules share a class; 66 is scanned past */
    {135 * 64, {66 * 64, 64, 67 * 64, 64}, {2, 0}, 67 * 64, 67 * 64},
};

START_TEST(test_good_fit)
{
	struct seg_alloc *a = new_alloc(fit_cases[_i].capacity, 64);
	uint64_t off[4] = {0};
	int k;

	for (k = 0; k < 4 && fit_cases[_i].blocks[k]; k++)
		off[k] = must_alloc(a, fit_cases[_i].blocks[k]);
	for (k = 0; k < 2 && fit_cases[_i].freed[k] >= 0; k++)
		ck_assert_int_eq(seg_alloc_free(a, off[fit_cases[_i].freed[k]]),
				 0);
	ck_assert_uint_eq(must_alloc(a, fit_cases[_i].request),
			  fit_cases[_i].off);
	ck_assert(seg_alloc_is_consistent(a));
	seg_alloc_destroy(a);
}
END_TEST

/* ---- coalescing ---------------------------------------------------------- */

/* Blocks A=64 @0, B=128 @64, C=256 @192 fill a 448-byte segment. After each
 * free: expected number of free ranges and largest free range. */
static const struct {
	const char *order;
	size_t ranges[3];
	uint64_t largest[3];
} coalesce_cases[] = {
    {"ABC", {1, 1, 1}, {64, 192, 448}},	 {"CBA", {1, 1, 1}, {256, 384, 448}},
    {"BAC", {1, 1, 1}, {128, 192, 448}}, {"ACB", {1, 2, 1}, {64, 256, 448}},
    {"CAB", {1, 2, 1}, {256, 256, 448}}, {"BCA", {1, 1, 1}, {128, 384, 448}},
};

START_TEST(test_coalesce)
{
	static const uint64_t size[3] = {64, 128, 256}, at[3] = {0, 64, 192};
	struct seg_alloc *a = new_alloc(448, 64);
	uint64_t off;
	int k, b;

	for (k = 0; k < 3; k++)
		ck_assert_uint_eq(must_alloc(a, size[k]), at[k]);
	ck_assert_int_eq(seg_alloc_alloc(a, 1, &off), -ENOSPC);
	for (k = 0; k < 3; k++) {
		b = coalesce_cases[_i].order[k] - 'A';
		ck_assert_int_eq(seg_alloc_free(a, at[b]), 0);
		ck_assert_uint_eq(seg_alloc_free_ranges(a),
				  coalesce_cases[_i].ranges[k]);
		ck_assert_uint_eq(seg_alloc_largest_free(a),
				  coalesce_cases[_i].largest[k]);
		ck_assert(seg_alloc_is_consistent(a));
	}
	ck_assert_uint_eq(seg_alloc_largest_free(a), seg_alloc_capacity(a));
	ck_assert_uint_eq(seg_alloc_used(a), 0);
	ck_assert_uint_eq(must_alloc(a, 448), 0);
	seg_alloc_destroy(a);
}
END_TEST

/* ---- fragmentation ------------------------------------------------------- */

#define FRAG_N 1000

START_TEST(test_fragmentation)
{
	struct seg_alloc *a = new_alloc(16 * MIB, 64);
	static uint64_t off[FRAG_N];
	uint64_t seed = 42, next_off = 0, size;
	struct model m;
	int i;

	model_init(&m, 16 * MIB, 64);
	for (i = 0; i < FRAG_N; i++) {
		size = rng_range(&seed, 1, 8192);
		off[i] = must_alloc(a, size);
		/* One free range, carved from its low end. */
		ck_assert_uint_eq(off[i], next_off);
		model_insert(&m, off[i], model_round(&m, size));
		next_off += model_round(&m, size);
	}
	assert_matches(a, &m);
	for (i = 0; i < FRAG_N; i += 2) {
		ck_assert_int_eq(seg_alloc_free(a, off[i]), 0);
		ck_assert(model_remove(&m, off[i]));
	}
	ck_assert_uint_eq(model_free_ranges(&m), FRAG_N / 2 + 1);
	assert_matches(a, &m);
	ck_assert(seg_alloc_is_consistent(a));
	for (i = 1; i < FRAG_N; i += 2)
		ck_assert_int_eq(seg_alloc_free(a, off[i]), 0);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	ck_assert_uint_eq(seg_alloc_largest_free(a), 16 * MIB);
	model_fini(&m);
	seg_alloc_destroy(a);
}
END_TEST

/* ---- randomized differential test ---------------------------------------- */

static uint64_t random_size(uint64_t *seed)
{
	uint64_t p = mcu_splitmix64(seed) % 100;

	if (p < 70)
		return rng_range(seed, 1, 4 * KIB);
	if (p < 95)
		return rng_range(seed, 4 * KIB, 64 * KIB);
	return rng_range(seed, 64 * KIB, 512 * KIB);
}

/* An offset that may or may not start a live allocation. */
static uint64_t random_offset(uint64_t *seed, const struct model *m)
{
	uint64_t p = mcu_splitmix64(seed) % 4;

	if (p == 0 && m->n)
		return m->v[mcu_splitmix64(seed) % m->n].off + m->align;
	if (p == 1)
		return rng_range(seed, 0, m->capacity / m->align) * m->align;
	if (p == 2)
		return mcu_splitmix64(seed);
	return rng_range(seed, 0, m->capacity);
}

/* One random operation on both the allocator and the model. */
static int random_step(struct seg_alloc *a, struct model *m, uint64_t *seed,
		       unsigned int alloc_pct)
{
	uint64_t p = mcu_splitmix64(seed) % 100, off;
	bool live;

	if (m->n == 0 || p < alloc_pct)
		return both_alloc(a, m, random_size(seed));
	if (p < 95) {
		off = m->v[mcu_splitmix64(seed) % m->n].off;
		expect(model_remove(m, off));
		expect(seg_alloc_free(a, off) == 0);
		return 0;
	}
	off = random_offset(seed, m);
	live = model_remove(m, off);
	expect(seg_alloc_free(a, off) == (live ? 0 : -ENOENT));
	return 0;
}

START_TEST(test_differential)
{
	struct seg_alloc *a = new_alloc(4 * MIB, 64);
	uint64_t seed = 0x5eed;
	struct model m;
	long step, nospc = 0;
	int rc;

	model_init(&m, 4 * MIB, 64);
	for (step = 0; step < 100000; step++) {
		rc = random_step(a, &m, &seed, 55);
		expect(rc == 0 || rc == -ENOSPC);
		nospc += rc == -ENOSPC;
		assert_matches(a, &m);
		if (step % 256 == 0)
			expect(seg_alloc_is_consistent(a));
	}
	ck_assert(nospc > 100); /* the segment was really under pressure */
	ck_assert(seg_alloc_is_consistent(a));
	model_fini(&m);
	seg_alloc_destroy(a);
}
END_TEST

/* ---- bad frees ----------------------------------------------------------- */

START_TEST(test_double_and_wild_free)
{
	struct seg_alloc *a = new_alloc(MIB, 64);
	uint64_t x = must_alloc(a, 100), y = must_alloc(a, 200);
	uint64_t bad[] = {x,   x + 64,	 y + 1,	     y + 256, 512 * KIB,
			  MIB, MIB + 64, UINT64_MAX, 1};
	struct snap s;
	size_t i;

	ck_assert_int_eq(seg_alloc_free(a, x), 0);
	s = take_snap(a);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(seg_alloc_free(a, bad[i]), -ENOENT);
		assert_unchanged(a, &s);
	}
	ck_assert_int_eq(seg_alloc_free(NULL, y), -EINVAL);
	ck_assert_int_eq(seg_alloc_free(a, y), 0);
	ck_assert_int_eq(seg_alloc_free(a, y), -ENOENT);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	ck_assert_uint_eq(seg_alloc_largest_free(a), MIB);
	seg_alloc_destroy(a);
}
END_TEST

/* ---- invalid sizes ------------------------------------------------------- */

static const struct {
	uint64_t align, size;
	int rc;
} size_cases[] = {
    {64, 0, -EINVAL},
    {64, UINT64_MAX, -EINVAL},
    {64, UINT64_MAX - 62, -EINVAL}, /* rounding would wrap */
    {64, UINT64_MAX - 63, -ENOSPC}, /* rounds to itself */
    {1, UINT64_MAX, -ENOSPC},
    {1, 0, -EINVAL},
    {64, MIB + 1, -ENOSPC},
};

START_TEST(test_invalid_sizes)
{
	struct seg_alloc *a = new_alloc(MIB, size_cases[_i].align);
	uint64_t off = 7;
	struct snap s = take_snap(a);

	ck_assert_int_eq(seg_alloc_alloc(a, size_cases[_i].size, &off),
			 size_cases[_i].rc);
	ck_assert_uint_eq(off, 7);
	assert_unchanged(a, &s);
	ck_assert_int_eq(seg_alloc_alloc(NULL, 64, &off), -EINVAL);
	ck_assert_int_eq(seg_alloc_alloc(a, 64, NULL), -EINVAL);
	seg_alloc_destroy(a);
}
END_TEST

/* ---- huge capacities ----------------------------------------------------- */

START_TEST(test_capacity_2_40)
{
	const uint64_t cap = UINT64_C(1) << 40;
	struct seg_alloc *a = new_alloc(cap, 64);
	uint64_t off;

	ck_assert_uint_eq(must_alloc(a, cap / 2), 0);
	ck_assert_uint_eq(must_alloc(a, cap / 4), cap / 2);
	ck_assert_uint_eq(must_alloc(a, cap / 4 - 64), cap / 4 * 3);
	ck_assert_uint_eq(must_alloc(a, 1), cap - 64);
	ck_assert_uint_eq(seg_alloc_used(a), cap);
	ck_assert_int_eq(seg_alloc_alloc(a, 1, &off), -ENOSPC);
	ck_assert_int_eq(seg_alloc_free(a, cap / 2), 0);
	ck_assert_uint_eq(seg_alloc_largest_free(a), cap / 4);
	ck_assert_int_eq(seg_alloc_free(a, 0), 0);
	ck_assert_uint_eq(seg_alloc_largest_free(a), cap / 4 * 3);
	ck_assert_int_eq(seg_alloc_free(a, cap - 64), 0);
	ck_assert_int_eq(seg_alloc_free(a, cap / 4 * 3), 0);
	ck_assert_uint_eq(seg_alloc_largest_free(a), cap);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	seg_alloc_destroy(a);
}
END_TEST

START_TEST(test_capacity_max)
{
	const uint64_t cap = UINT64_MAX & ~UINT64_C(63);
	struct seg_alloc *a = new_alloc(UINT64_MAX, 64);
	uint64_t off;

	ck_assert_uint_eq(must_alloc(a, UINT64_C(1) << 63), 0);
	ck_assert_uint_eq(must_alloc(a, cap - (UINT64_C(1) << 63)), UINT64_C(1)
									<< 63);
	ck_assert_int_eq(seg_alloc_alloc(a, 1, &off), -ENOSPC);
	ck_assert_int_eq(seg_alloc_free(a, 0), 0);
	ck_assert_int_eq(seg_alloc_free(a, UINT64_C(1) << 63), 0);
	ck_assert_uint_eq(must_alloc(a, cap), 0);
	ck_assert_uint_eq(seg_alloc_used(a), cap);
	seg_alloc_destroy(a);
}
END_TEST

/* Enough live allocations to grow the hash map many times. */
START_TEST(test_many_live)
{
	enum { N = 100000 };
	static uint64_t off[N];
	struct seg_alloc *a = new_alloc((uint64_t)N * 64, 64);
	uint64_t seed = 7, t;
	size_t i, j;

	for (i = 0; i < N; i++)
		off[i] = must_alloc(a, 64);
	ck_assert_uint_eq(seg_alloc_live(a), N);
	ck_assert(seg_alloc_is_consistent(a));
	for (i = N - 1; i > 0; i--) {
		j = mcu_splitmix64(&seed) % (i + 1);
		t = off[i];
		off[i] = off[j];
		off[j] = t;
	}
	for (i = 0; i < N; i++)
		expect(seg_alloc_free(a, off[i]) == 0);
	ck_assert_uint_eq(seg_alloc_live(a), 0);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	ck_assert(seg_alloc_is_consistent(a));
	seg_alloc_destroy(a);
}
END_TEST

/* ---- metadata allocation failures ---------------------------------------- */

/* Run a fixed workload; every -ENOMEM must leave the state unchanged. */
static void oom_workload(struct seg_alloc *a, struct model *m)
{
	uint64_t seed = 99;
	struct snap s;
	int step, rc;

	for (step = 0; step < 400; step++) {
		s = take_snap(a);
		rc = random_step(a, m, &seed, 75);
		if (rc == -ENOMEM)
			assert_unchanged(a, &s);
		else
			expect(rc == 0 || rc == -ENOSPC);
		assert_matches(a, m);
	}
}

static void drain(struct seg_alloc *a, struct model *m)
{
	while (m->n) {
		expect(seg_alloc_free(a, m->v[0].off) == 0);
		expect(model_remove(m, m->v[0].off));
	}
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	ck_assert_uint_eq(seg_alloc_largest_free(a), seg_alloc_capacity(a));
	ck_assert(seg_alloc_is_consistent(a));
}

/* Returns false once the workload ran without hitting the failure. */
static bool oom_round(long fail_at, bool sticky)
{
	struct failing_mem fm = {.fail_at = fail_at, .sticky = sticky};
	struct seg_alloc_mem mem = {failing_alloc, failing_free, &fm};
	struct seg_alloc *a = NULL;
	struct model m;
	int rc = seg_alloc_create_with(4 * MIB, 64, &mem, &a);

	if (rc) {
		ck_assert_int_eq(rc, -ENOMEM);
		ck_assert_ptr_null(a);
		ck_assert_int_eq(fm.blocks, 0);
		return true;
	}
	model_init(&m, 4 * MIB, 64);
	oom_workload(a, &m);
	fm.fail_at = -1;
	drain(a, &m);
	model_fini(&m);
	seg_alloc_destroy(a);
	ck_assert_int_eq(fm.blocks, 0);
	return fm.failed > 0;
}

START_TEST(test_oom)
{
	long n = 0;

	while (oom_round(n, _i == 1))
		n++;
	ck_assert_int_gt(n, 100); /* the workload allocates that much */
}
END_TEST

/* ---- suite --------------------------------------------------------------- */

#define NCASES(t) ((int)(sizeof(t) / sizeof((t)[0])))

static TCase *api_tcase(void)
{
	TCase *tc = tcase_create("api");

	tcase_add_loop_test(tc, test_create_args, 0, NCASES(create_cases));
	tcase_add_test(tc, test_create_null_out_destroy_null);
	tcase_add_loop_test(tc, test_align_rounding, 0, NCASES(round_cases));
	tcase_add_test(tc, test_fill_exact);
	tcase_add_test(tc, test_fill_whole_and_mixed);
	tcase_add_loop_test(tc, test_good_fit, 0, NCASES(fit_cases));
	tcase_add_loop_test(tc, test_coalesce, 0, NCASES(coalesce_cases));
	tcase_add_test(tc, test_double_and_wild_free);
	tcase_add_loop_test(tc, test_invalid_sizes, 0, NCASES(size_cases));
	tcase_add_test(tc, test_capacity_2_40);
	tcase_add_test(tc, test_capacity_max);
	return tc;
}

static TCase *model_tcase(void)
{
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_fragmentation);
	tcase_add_test(tc, test_differential);
	tcase_add_test(tc, test_many_live);
	tcase_add_loop_test(tc, test_oom, 0, 2); /* 0: one failure, 1: sticky */
	return tc;
}

Suite *make_alloc_suite(void)
{
	Suite *s = suite_create("alloc");

	suite_add_tcase(s, api_tcase());
	suite_add_tcase(s, model_tcase());
	return s;
}
