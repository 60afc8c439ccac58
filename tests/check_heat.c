/* Heat window: the sliding bucketed count, the trigger rule, the embeddable
 * cell and the bounded sharded table (RFC "Admission Policy", test plan). */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcrepl/config.h"
#include "mcrepl/heat.h"

#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void cfg_make(mcrepl_config *c, uint64_t window_ms, double qps,
		     uint64_t max_entries)
{
	mcrepl_config_init(c);
	c->heat_window_ms = window_ms;
	c->admission_qps_threshold = qps;
	c->heat_max_entries = max_entries;
}

/* Default window: 10 s in 8 buckets of 1250 ms, threshold 0.8 * 10 = 8. */
static void params_default(mcrepl_heat_params *p)
{
	mcrepl_config c;

	cfg_make(&c, 10000, 0.8, 1000);
	mcrepl_heat_params_init(p, &c);
}

static mcrepl_heat *table_make(uint64_t max_entries, bool domain_aware)
{
	mcrepl_config c;
	mcrepl_heat *h = NULL;

	cfg_make(&c, 10000, 0.8, max_entries);
	c.domain_aware = domain_aware;
	ck_assert_int_eq(mcrepl_heat_create(&c, &h), MCREPL_OK);
	ck_assert_ptr_nonnull(h);
	return h;
}

static uint64_t table_entries(mcrepl_heat *h)
{
	mcrepl_heat_stats st;

	mcrepl_heat_get_stats(h, &st);
	return st.entries;
}

/* ---- params: threshold and bucket arithmetic --------------------------- */

static const struct param_case {
	uint64_t window_ms;
	double qps;
	uint32_t threshold;
	uint64_t bucket_ms;
} param_cases[] = {
    {10000, 0.8, 8, 1250}, /* RFC defaults: exactly 8, not 9 */
    {10000, 1.0, 10, 1250},
    {10000, 0.85, 9, 1250}, /* 8.5 -> 9 */
    {3000, 1.1, 4, 375},    /* 3.3 -> 4 */
    {1000, 0.5, 1, 125},    /* 0.5 -> at least 1 */
    {500, 0.5, 1, 63},	    /* 0.25 -> 1; 62.5 ms rounds up */
    {100, 0.001, 1, 13},    /* 0.0001 -> 1 */
    {10000, 0.0, 1, 1250},  /* qps 0 still needs one read */
    {1, 0.8, 1, 1},	    /* 1 ms window: buckets of 1 ms */
    {7, 1000.0, 7, 1},	    /* bucket never 0 */
    {9, 1000.0, 9, 2},
    {86400000, 0.8, 69120, 10800000},
    {10000, 52428.0, MCREPL_HEAT_MAX_THRESHOLD, 1250},
};

/* covers: R-ADMIT-2 R-ADMIT-3 */
START_TEST(test_heat_params_threshold)
{
	const struct param_case *pc = &param_cases[_i];
	mcrepl_heat_params p;
	mcrepl_config c;

	cfg_make(&c, pc->window_ms, pc->qps, 1000);
	ck_assert_int_eq(mcrepl_config_validate(&c, NULL), MCREPL_OK);
	mcrepl_heat_params_init(&p, &c);
	ck_assert_uint_eq(p.threshold, pc->threshold);
	ck_assert_uint_eq(p.bucket_ms, pc->bucket_ms);
}
END_TEST

START_TEST(test_heat_cell_size)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;

	ck_assert_uint_le(sizeof(mcrepl_heat_cell), 32);
	ck_assert_uint_eq(sizeof(mcrepl_heat_cell), 24);
	ck_assert_uint_eq(c.head, 0);
	ck_assert_uint_eq(c.fired, 0);
}
END_TEST

/* ---- the cell: sliding window ------------------------------------------- */

/* 7 reads just before the former tumbling boundary at 10 s and 7 after:
 * the 8th read crosses, whatever side of the boundary it falls on. */
/* covers: R-ADMIT-1 */
START_TEST(test_heat_cell_no_tumbling_boundary)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	uint32_t n = 0;

	params_default(&p);
	for (uint32_t i = 0; i < 7; i++) {
		ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 9990 + i, &n),
				 MCREPL_HEAT_COLD);
		ck_assert_uint_eq(n, i + 1);
	}
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 10000, &n),
			 MCREPL_HEAT_CROSSED);
	ck_assert_uint_eq(n, 8);
	for (uint32_t i = 1; i < 7; i++) {
		ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 10000 + i, &n),
				 MCREPL_HEAT_HOT);
		ck_assert_uint_eq(n, 8 + i);
	}
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 10006), 14);
}
END_TEST

/* One read at `read_ms`, counted at `at_ms` (window 10 s, buckets 1250). */
static const struct age_case {
	uint64_t read_ms, at_ms;
	uint32_t want;
} age_cases[] = {
    {0, 0, 1},	       {0, 9999, 1}, /* 9999 ms old: inside the window */
    {0, 10000, 0},		     /* exactly one window old: never counted */
    {1249, 11249, 0},		     /* 10000 ms old */
    {1250, 11249, 1},		     /* 9999 ms old */
    {1250, 11250, 0},		     /* 10000 ms old */
    {1249, 10000, 0},  /* 8751 ms old: within one bucket of W, dropped */
    {1250, 10000, 1},  /* 8750 ms old */
    {0, 1000000, 0},   /* long gone */
    {5000, 100, 1},    /* asking before the read: window ends at head */
    {20000, 28749, 1}, /* 8749 ms old, bucket 16 vs 22 */
    {20000, 28750, 1}, /* bucket 23 still holds bucket 16 */
    {20000, 29999, 1}, /* 9999 ms old */
    {20000, 30000, 0}, /* bucket 24 */
};

/* covers: R-GOAL-2 R-ADMIT-1 */
START_TEST(test_heat_cell_read_age)
{
	const struct age_case *ac = &age_cases[_i];
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;

	params_default(&p);
	mcrepl_heat_cell_record(&c, &p, ac->read_ms, NULL);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, ac->at_ms), ac->want);
}
END_TEST

/* Reads spread over buckets: exact counts as buckets leave the window. */
/* covers: R-ADMIT-1 */
START_TEST(test_heat_cell_exact_counts_at_boundaries)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;

	params_default(&p);
	/* bucket k (k = 0..7) gets k + 1 reads: 36 in all */
	for (uint64_t k = 0; k < 8; k++)
		for (uint64_t r = 0; r <= k; r++)
			mcrepl_heat_cell_record(&c, &p, k * 1250 + r, NULL);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 9999), 36);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 10000), 35);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 11249), 35);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 11250), 33);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 18749), 8);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 18750), 0);
	/* count() does not modify; a record at 11250 drops buckets 0 and 1 */
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 9999), 36);
	mcrepl_heat_cell_record(&c, &p, 11250, NULL);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 11250), 34);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 0), 34);
}
END_TEST

/* ---- the cell: trigger rule --------------------------------------------- */

/* A read every `step_ms` for `run_ms` from 0: CROSSED fires exactly
 * `crossed` times, first at `first_ms`. */
static const struct hot_case {
	uint64_t step_ms, run_ms;
	uint32_t crossed;
	uint64_t first_ms;
} hot_cases[] = {
    {100, 100000, 10, 700}, /* 100 s hot at a 10 s window: 10 */
    {100, 100001, 11, 700}, /* one more read at 100 s: new window */
    {1, 100000, 10, 7},
    {1000, 100000, 10, 7000}, /* 1 QPS: the 8th read */
    {1250, 100000, 10, 8750}, /* 0.8 QPS: exactly 8 per window */
    {1500, 100000, 0, 0},     /* 0.67 QPS: at most 7 per window */
    {1100, 100000, 10, 7700}, /* just above the threshold */
};

/* covers: R-ADMIT-2 R-DEC-5 */
START_TEST(test_heat_cell_fires_once_per_window)
{
	const struct hot_case *hc = &hot_cases[_i];
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	uint64_t first = 0, last = 0;
	uint32_t crossed = 0;

	params_default(&p);
	for (uint64_t t = 0; t < hc->run_ms; t += hc->step_ms) {
		if (mcrepl_heat_cell_record(&c, &p, t, NULL) !=
		    MCREPL_HEAT_CROSSED)
			continue;
		if (crossed++ == 0)
			first = t;
		else
			ck_assert_uint_ge(t - last, 10000 - 1250);
		last = t;
	}
	ck_assert_uint_eq(crossed, hc->crossed);
	ck_assert_uint_eq(first, hc->first_ms);
}
END_TEST

/* covers: R-DEC-5 */
START_TEST(test_heat_cell_crossed_times)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	uint64_t want = 700;
	uint32_t crossed = 0, hot = 0, cold = 0;

	params_default(&p);
	for (uint64_t t = 0; t < 100000; t += 100) {
		switch (mcrepl_heat_cell_record(&c, &p, t, NULL)) {
		case MCREPL_HEAT_CROSSED:
			ck_assert_uint_eq(t, want);
			want = (t / 10000 + 1) * 10000;
			crossed++;
			break;
		case MCREPL_HEAT_HOT:
			hot++;
			break;
		default:
			cold++;
		}
	}
	ck_assert_uint_eq(crossed, 10);
	ck_assert_uint_eq(cold, 7);
	ck_assert_uint_eq(hot, 1000 - 10 - 7);
}
END_TEST

/* covers: R-ADMIT-1 */
START_TEST(test_heat_cell_cools_and_reheats)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	uint32_t n;

	params_default(&p);
	for (uint64_t t = 0; t < 7; t++)
		ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, t, NULL),
				 MCREPL_HEAT_COLD);
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 7, NULL),
			 MCREPL_HEAT_CROSSED);
	/* Still in the same window: hot, not crossed again. */
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 8749, &n),
			 MCREPL_HEAT_HOT);
	ck_assert_uint_eq(n, 9);
	/* Cooled off completely, then 8 reads again: fires again. */
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 30000), 0);
	for (uint64_t t = 30000; t < 30007; t++)
		ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, t, NULL),
				 MCREPL_HEAT_COLD);
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 30007, &n),
			 MCREPL_HEAT_CROSSED);
	ck_assert_uint_eq(n, 8);
}
END_TEST

/* Dips below the threshold after the window moves, then climbs back: that
 * is a new window, so one more CROSSED. */
/* covers: R-ADMIT-1 */
START_TEST(test_heat_cell_dip_and_recross)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	uint32_t n;

	params_default(&p);
	for (uint64_t t = 0; t < 8; t++)
		mcrepl_heat_cell_record(&c, &p, t, NULL);
	ck_assert_uint_eq(c.fired, 1);
	/* bucket 8: bucket 0 leaves the window, count falls to 1 */
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 10000, &n),
			 MCREPL_HEAT_COLD);
	ck_assert_uint_eq(n, 1);
	for (uint64_t t = 10001; t < 10007; t++)
		mcrepl_heat_cell_record(&c, &p, t, NULL);
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 10007, &n),
			 MCREPL_HEAT_CROSSED);
	ck_assert_uint_eq(n, 8);
}
END_TEST

START_TEST(test_heat_cell_time_goes_backwards)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	uint32_t n;

	params_default(&p);
	mcrepl_heat_cell_record(&c, &p, 5000, NULL); /* bucket 4 */
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, 1000, &n),
			 MCREPL_HEAT_COLD);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(c.head, 4);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 5000), 2);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 0), 2);
	/* both reads sit in bucket 4: gone at bucket 12 */
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 14999), 2);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 15000), 0);
	/* going back after crossing never fires a second time */
	for (uint64_t i = 0; i < 6; i++)
		mcrepl_heat_cell_record(&c, &p, 5000, NULL);
	ck_assert_uint_eq(c.fired, 1); /* fired in the newest bucket */
	for (uint64_t i = 1; i <= 10; i++)
		ck_assert_int_eq(
		    mcrepl_heat_cell_record(&c, &p, 5000 - 500 * i, NULL),
		    MCREPL_HEAT_HOT);
	ck_assert_uint_eq(c.head, 4);
}
END_TEST

/* A zeroed cell first read at a clock value past 2^31 buckets still moves
 * with time (the empty cell takes the reader's epoch). */
START_TEST(test_heat_cell_zero_cell_far_clock)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p = {.bucket_ms = 1, .threshold = 2};
	uint64_t t = 0x180000005ULL;

	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, t, NULL),
			 MCREPL_HEAT_COLD);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, t + 7), 1);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, t + 8), 0);
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, t + 8, NULL),
			 MCREPL_HEAT_COLD);
	ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, t + 9, NULL),
			 MCREPL_HEAT_CROSSED);
}
END_TEST

/* Per-bucket counters do not saturate: past 65,535 reads a bucket the
 * cell counts in units of 2, 4, ... reads; the largest threshold is still
 * reachable and fires once. */
START_TEST(test_heat_cell_saturation)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	mcrepl_config cfg;
	uint32_t n = 0, crossed = 0;

	cfg_make(&cfg, 10000, 52428.0, 1000);
	mcrepl_heat_params_init(&p, &cfg);
	ck_assert_uint_eq(p.threshold, MCREPL_HEAT_MAX_THRESHOLD);
	for (uint64_t b = 0; b < 8; b++)
		for (uint32_t i = 0; i < 70000; i++)
			crossed +=
			    mcrepl_heat_cell_record(&c, &p, b * 1250, &n) ==
			    MCREPL_HEAT_CROSSED;
	/* 70,000 reads = 35,000 units of 2 in every bucket: exact */
	ck_assert_uint_eq(n, 560000);
	ck_assert_uint_eq(crossed, 1);
	ck_assert_uint_eq(c.scale, 1);
	ck_assert_uint_eq(c.count[0], 35000);
	ck_assert_uint_eq(c.rest, 0);
}
END_TEST

/* The unit doubles at the 65,536th read of a bucket, reads in between are
 * kept in rest, and the count stays exact. */
START_TEST(test_heat_cell_scale_steps)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p = {.bucket_ms = 1250, .threshold = 1u << 30};
	uint32_t n = 0;

	for (uint32_t i = 0; i < 65535; i++)
		mcrepl_heat_cell_record(&c, &p, 0, &n);
	ck_assert_uint_eq(n, 65535);
	ck_assert_uint_eq(c.scale, 0);
	ck_assert_uint_eq(c.count[0], 65535);
	mcrepl_heat_cell_record(&c, &p, 0, &n);
	ck_assert_uint_eq(n, 65536);
	ck_assert_uint_eq(c.scale, 1);
	ck_assert_uint_eq(c.count[0], 32768);
	ck_assert_uint_eq(c.rest, 0);
	mcrepl_heat_cell_record(&c, &p, 0, &n);
	ck_assert_uint_eq(n, 65537);
	ck_assert_uint_eq(c.rest, 1);
	ck_assert_uint_eq(c.count[0], 32768);
	mcrepl_heat_cell_record(&c, &p, 0, &n);
	ck_assert_uint_eq(n, 65538);
	ck_assert_uint_eq(c.rest, 0);
	ck_assert_uint_eq(c.count[0], 32769);
	/* 131,072: the second doubling, units of 4 */
	for (uint32_t i = 65538; i < 131072; i++)
		mcrepl_heat_cell_record(&c, &p, 0, &n);
	ck_assert_uint_eq(n, 131072);
	ck_assert_uint_eq(c.scale, 2);
	ck_assert_uint_eq(c.count[0], 32768);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 0), 131072);
}
END_TEST

/* The last complete bucket: what the engine judges a rising key by. */
START_TEST(test_heat_cell_recent_is_the_last_complete_bucket)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p = {.bucket_ms = 1250, .threshold = 1u << 30};
	uint32_t n = 0;

	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 0), 0);
	for (uint32_t i = 0; i < 3; i++)
		mcrepl_heat_cell_record(&c, &p, 10, &n);
	/* bucket 0 still open: the one before it is empty */
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 1249), 0);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 1250), 3);
	for (uint32_t i = 0; i < 5; i++)
		mcrepl_heat_cell_record(&c, &p, 1300, &n);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 2499), 3);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 2500), 5);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 3749), 5);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 3750), 0);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 3750), 8);
	/* a clock before the newest bucket: the bucket before it */
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 1000), 3);
	/* scaled counts come back in reads */
	c = (mcrepl_heat_cell)MCREPL_HEAT_CELL_INIT;
	for (uint32_t i = 0; i < 65537; i++)
		mcrepl_heat_cell_record(&c, &p, 0, &n);
	ck_assert_uint_eq(c.scale, 1);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 1250), 65537);
	mcrepl_heat_cell_record(&c, &p, 1250, &n);
	ck_assert_uint_eq(mcrepl_heat_cell_recent(&c, &p, 1250), 65536);
}
END_TEST

/* A key read 180 k times a second (225,000 reads a 1.25 s bucket): the
 * window counts 1.8 M, as the policy's projection needs; the unit shrinks
 * back once the key cools; a window of silence resets it. */
START_TEST(test_heat_cell_hot_key_rate)
{
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p = {.bucket_ms = 1250, .threshold = 1u << 30};
	uint32_t n = 0;

	for (uint64_t b = 0; b < 16; b++)
		for (uint32_t i = 0; i < 225000; i++)
			mcrepl_heat_cell_record(&c, &p, b * 1250, &n);
	ck_assert_uint_eq(n, 1800000);
	ck_assert_uint_eq(c.scale, 2);
	ck_assert_uint_eq(c.count[15 % 8], 56250);
	ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, 16 * 1250), 1575000);
	/* the key cools to 1,000 reads a bucket */
	for (uint64_t b = 16; b < 24; b++)
		for (uint32_t i = 0; i < 1000; i++)
			mcrepl_heat_cell_record(&c, &p, b * 1250, &n);
	/* bucket 23: the window holds buckets 16..23 at 1,000 each; the
	 * unit came back to single reads once the hot buckets had left */
	ck_assert_uint_eq(n, 8000);
	ck_assert_uint_eq(c.scale, 0);
	ck_assert_uint_eq(c.count[23 % 8], 1000);
	ck_assert_uint_eq(mcrepl_heat_cell_record(&c, &p, 40 * 1250, &n),
			  MCREPL_HEAT_COLD);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(c.scale, 0);
}
END_TEST

/* ---- the table ------------------------------------------------------------ */

START_TEST(test_heat_create_invalid)
{
	mcrepl_heat *h = (mcrepl_heat *)&h;
	mcrepl_config c;

	cfg_make(&c, 10000, 0.8, 1000);
	ck_assert_int_eq(mcrepl_heat_create(NULL, &h), MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_heat_create(&c, NULL), MCREPL_EINVAL);
	c.heat_max_entries = 0;
	ck_assert_int_eq(mcrepl_heat_create(&c, &h), MCREPL_EINVAL);
	cfg_make(&c, 0, 0.8, 1000);
	ck_assert_int_eq(mcrepl_heat_create(&c, &h), MCREPL_EINVAL);
	ck_assert_ptr_eq(h, (mcrepl_heat *)&h);
	mcrepl_heat_destroy(NULL);
}
END_TEST

/* Every allocation create() makes can fail, and then nothing leaks. */
START_TEST(test_heat_create_enomem)
{
	mcrepl_heat *h = NULL;
	mcrepl_config c;
	mcrepl_status st = MCREPL_ENOMEM;
	long n;

	cfg_make(&c, 10000, 0.8, 1000);
	for (n = 0; n < 100; n++) {
		test_fail_alloc_after(n);
		st = mcrepl_heat_create(&c, &h);
		test_fail_alloc_after(-1);
		if (st == MCREPL_OK)
			break;
		ck_assert_int_eq(st, MCREPL_ENOMEM);
		ck_assert_ptr_null(h);
	}
	ck_assert_int_eq(st, MCREPL_OK);
	ck_assert_int_ge(n, 1);
	mcrepl_heat_record(h, "t", "k", NULL, 0, NULL);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t", "k", NULL, 0), 1);
	mcrepl_heat_destroy(h);
}
END_TEST

static const struct size_case {
	uint64_t max, capacity;
} size_cases[] = {
    {8, 16}, {64, 80}, {1000, 1256}, {1000000, 1250000}, {1000001, 1250008},
};

START_TEST(test_heat_table_sizes)
{
	const struct size_case *sc = &size_cases[_i];
	mcrepl_heat *h = table_make(sc->max, false);
	mcrepl_heat_stats st;

	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_eq(st.max_entries, sc->max);
	ck_assert_uint_eq(st.capacity, sc->capacity);
	ck_assert_uint_eq(st.entries, 0);
	ck_assert_uint_eq(st.replacements, 0);
	ck_assert_uint_eq(st.max_probe, 0);
	ck_assert_uint_ge(st.bytes, sc->capacity * 28);
	if (sc->max >= 1000000)
		ck_assert_uint_le(st.bytes, sc->max * 36);
	mcrepl_heat_destroy(h);
}
END_TEST

/* ---- model check: cell and table against a brute-force model ---------- */

/* The documented algorithm spelled out with a list of read epochs. */
struct model {
	uint64_t b, newest, last_cross;
	bool crossed;
	uint32_t threshold, n;
	uint64_t epochs[4096];
};

static uint32_t model_count(const struct model *m, uint64_t now)
{
	uint64_t e = now / m->b, c = 0;

	if (m->n && e < m->newest)
		e = m->newest;
	for (uint32_t i = 0; i < m->n; i++)
		c += m->epochs[i] + 8 > e && m->epochs[i] <= e;
	return (uint32_t)c;
}

static mcrepl_heat_event model_record(struct model *m, uint64_t now)
{
	uint64_t e = now / m->b;
	uint32_t c;

	if (m->n && e < m->newest)
		e = m->newest;
	m->newest = e;
	m->epochs[m->n++] = e;
	c = model_count(m, now);
	if (c < m->threshold)
		return MCREPL_HEAT_COLD;
	if (m->crossed && m->last_cross + 8 > e)
		return MCREPL_HEAT_HOT;
	m->crossed = true;
	m->last_cross = e;
	return MCREPL_HEAT_CROSSED;
}

static uint64_t test_rng(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* window_ms, qps, clock origin: small windows, uneven buckets, a Unix-ms
 * clock (epochs past 2^32 when buckets are 1 ms). */
static const struct model_case {
	uint64_t window_ms;
	double qps;
	uint64_t t0;
} model_cases[] = {
    {10000, 0.8, 0},
    {10000, 0.8, 1700000000000ULL},
    {8, 1000.0, 0},
    {8, 1000.0, 1700000000000ULL},
    {9, 500.0, 1700000000001ULL},
    {1000, 5.0, 123456789},
    {86400000, 0.001, 1700000000000ULL},
    {3001, 2.5, 999},
};

START_TEST(test_heat_cell_and_table_match_model)
{
	const struct model_case *mc = &model_cases[_i];
	static struct model m;
	mcrepl_heat_cell c = MCREPL_HEAT_CELL_INIT;
	mcrepl_heat_params p;
	mcrepl_config cfg;
	mcrepl_heat *h;
	uint64_t t = mc->t0, seed = 7 + (uint64_t)_i, span;
	uint32_t nc, nt;

	cfg_make(&cfg, mc->window_ms, mc->qps, 1000);
	mcrepl_heat_params_init(&p, &cfg);
	ck_assert_int_eq(mcrepl_heat_create(&cfg, &h), MCREPL_OK);
	m = (struct model){.b = p.bucket_ms, .threshold = p.threshold};
	span = 3 * mc->window_ms / p.threshold + 1;
	for (int i = 0; i < 4000; i++) {
		/* mostly forward, sometimes back a little, sometimes a gap */
		uint64_t r = test_rng(&seed);
		uint64_t step = r % 16 == 0 ? 3 * mc->window_ms : r % span;

		t = r % 11 == 0 && t >= mc->t0 + span ? t - r % span : t + step;
		mcrepl_heat_event want = model_record(&m, t);

		ck_assert_int_eq(mcrepl_heat_cell_record(&c, &p, t, &nc), want);
		ck_assert_int_eq(mcrepl_heat_record(h, "t", "k", NULL, t, &nt),
				 want);
		ck_assert_uint_eq(nc, model_count(&m, t));
		ck_assert_uint_eq(nt, nc);
		uint64_t ask = t + r % (2 * mc->window_ms);

		ck_assert_uint_eq(mcrepl_heat_cell_count(&c, &p, ask),
				  model_count(&m, ask));
		ck_assert_uint_eq(mcrepl_heat_count(h, "t", "k", NULL, ask),
				  model_count(&m, ask));
	}
	mcrepl_heat_destroy(h);
}
END_TEST

/* The table divides by the bucket length with a multiply; the last
 * millisecond of a bucket must still belong to it on far clocks (the
 * ranges hold clocks where a multiply-only estimate is one too large). */
static const struct boundary_case {
	uint64_t window_ms, k0;
} boundary_cases[] = {
    {86400000, 833800},		/* t ~ 9.0e12 ms */
    {10000, 16693886039500ULL}, /* t ~ 2.1e16 ms */
    {3001, 161383189334600ULL},
    {10000, 1360000000}, /* today's Unix clock in ms */
};

START_TEST(test_heat_table_bucket_boundaries_far_clock)
{
	const struct boundary_case *bc = &boundary_cases[_i];
	mcrepl_heat_params p;
	mcrepl_config cfg;
	mcrepl_heat *h;
	char key[32];

	cfg_make(&cfg, bc->window_ms, 0.8, 1000);
	mcrepl_heat_params_init(&p, &cfg);
	ck_assert_int_eq(mcrepl_heat_create(&cfg, &h), MCREPL_OK);
	for (uint64_t k = bc->k0; k < bc->k0 + 100; k++) {
		uint64_t t = k * p.bucket_ms - 1; /* last ms of bucket k-1 */

		snprintf(key, sizeof(key), "k-%llu", (unsigned long long)k);
		mcrepl_heat_record(h, NULL, key, NULL, t, NULL);
		ck_assert_uint_eq(
		    mcrepl_heat_count(h, NULL, key, NULL, t + 7 * p.bucket_ms),
		    1);
		ck_assert_uint_eq(mcrepl_heat_count(h, NULL, key, NULL,
						    t + 7 * p.bucket_ms + 1),
				  0);
		/* a second read one bucket later sees the first one */
		mcrepl_heat_record(h, NULL, key, NULL, t + 1, NULL);
		ck_assert_uint_eq(
		    mcrepl_heat_count(h, NULL, key, NULL, t + 8 * p.bucket_ms),
		    1);
	}
	mcrepl_heat_destroy(h);
}
END_TEST

/* covers: R-DEC-5 */
START_TEST(test_heat_table_long_hot_run)
{
	mcrepl_heat *h = table_make(1000, false);
	uint32_t crossed = 0;

	for (uint64_t t = 0; t < 100000; t += 100)
		crossed += mcrepl_heat_record(h, NULL, "hot", NULL, t, NULL) ==
			   MCREPL_HEAT_CROSSED;
	ck_assert_uint_eq(crossed, 10);
	mcrepl_heat_destroy(h);
}
END_TEST

/* covers: R-DEC-1 */
START_TEST(test_heat_table_tenants_are_separate)
{
	mcrepl_heat *h = table_make(1000, false);

	mcrepl_heat_record(h, "t1", "k", NULL, 0, NULL);
	mcrepl_heat_record(h, "t2", "k", NULL, 0, NULL);
	mcrepl_heat_record(h, "t2", "k", NULL, 0, NULL);
	mcrepl_heat_record(h, NULL, "k", NULL, 0, NULL);
	mcrepl_heat_record(h, "", "k", NULL, 0, NULL);
	mcrepl_heat_record(h, "t1k", "", NULL, 0, NULL);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t1", "k", NULL, 0), 1);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t2", "k", NULL, 0), 2);
	ck_assert_uint_eq(mcrepl_heat_count(h, NULL, "k", NULL, 0), 2);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t", "1k", NULL, 0), 0);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t1k", "", NULL, 0), 1);
	ck_assert_uint_eq(table_entries(h), 4);
	mcrepl_heat_destroy(h);
}
END_TEST

/* Reads of one key from domains a, a, b, NULL, "", "default": the count
 * seen from each domain, with and without domain awareness. */
static const struct domain_case {
	bool aware;
	const char *ask;
	uint32_t want;
} domain_cases[] = {
    {false, "a", 6},	  {false, "b", 6},  {false, NULL, 6}, {false, "zzz", 6},
    {true, "a", 2},	  {true, "b", 1},   {true, NULL, 3},  {true, "", 3},
    {true, "default", 3}, {true, "zzz", 0},
};

/* covers: R-ADMIT-6 R-DOM-3 */
START_TEST(test_heat_table_domain_keying)
{
	static const char *const reads[] = {"a", "a", "b", NULL, "", "default"};
	const struct domain_case *dc = &domain_cases[_i];
	mcrepl_heat *h = table_make(1000, dc->aware);

	for (size_t i = 0; i < NELEM(reads); i++)
		mcrepl_heat_record(h, "t", "obj", reads[i], 0, NULL);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t", "obj", dc->ask, 0),
			  dc->want);
	ck_assert_uint_eq(table_entries(h), dc->aware ? 3 : 1);
	mcrepl_heat_destroy(h);
}
END_TEST

/* Distinct keys "<prefix>-<n>" at now_ms until the table is at its limit. */
static void fill_to_limit(mcrepl_heat *h, const char *prefix, uint64_t now_ms)
{
	mcrepl_heat_stats st;
	char key[32];
	uint32_t n;

	mcrepl_heat_get_stats(h, &st);
	for (int i = 0; table_entries(h) < st.max_entries; i++) {
		ck_assert_int_lt(i, 100000);
		snprintf(key, sizeof(key), "%s-%d", prefix, i);
		mcrepl_heat_record(h, NULL, key, NULL, now_ms, &n);
		ck_assert_uint_eq(n, 1);
	}
}

/* Full table: a hot key still gets in (replacing the coldest entry of its
 * set) and crosses; entries never exceed the limit. */
/* covers: R-DEC-1 */
START_TEST(test_heat_table_full_hot_key_gets_in)
{
	mcrepl_heat *h = table_make(64, false);
	mcrepl_heat_stats st;
	uint64_t replaced;
	char key[32];
	uint32_t n = 0;

	fill_to_limit(h, "fill", 0);
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_eq(st.entries, 64);
	replaced = st.replacements;
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(
		    mcrepl_heat_record(h, NULL, "hot", NULL, 2000 + i, &n),
		    i < 7 ? MCREPL_HEAT_COLD : MCREPL_HEAT_CROSSED);
		ck_assert_uint_eq(n, (uint32_t)i + 1);
		snprintf(key, sizeof(key), "churn-%d", i);
		mcrepl_heat_record(h, NULL, key, NULL, 2000 + i, &n);
		ck_assert_uint_eq(n, 1);
		ck_assert_uint_eq(table_entries(h), 64);
	}
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_eq(st.entries, 64);
	ck_assert_uint_eq(st.replacements - replaced, 9);
	ck_assert_uint_eq(mcrepl_heat_count(h, NULL, "hot", NULL, 2007), 8);
	mcrepl_heat_destroy(h);
}
END_TEST

/* T-13: a full table costs a read a bounded amount of work, never a scan
 * of every key: 100x the limit in distinct keys. */
static const uint64_t bounded_max[] = {8, 64, 1000};

/* covers: T-13 R-DEC-1 */
START_TEST(test_heat_cleanup_bounded_at_entry_limit)
{
	uint64_t max = bounded_max[_i];
	mcrepl_heat *h = table_make(max, false);
	mcrepl_heat_stats st;
	char key[32];
	uint32_t n;

	for (uint64_t i = 0; i < 100 * max; i++) {
		snprintf(key, sizeof(key), "block-%llu", (unsigned long long)i);
		mcrepl_heat_record(h, "t", key, NULL, 1000, &n);
		ck_assert_uint_eq(n, 1);
		if (i % 97 == 0)
			ck_assert_uint_le(table_entries(h), max);
	}
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_le(st.max_probe, 8);
	ck_assert_uint_ge(st.max_probe, 1);
	ck_assert_uint_eq(st.entries, max);
	ck_assert_uint_eq(st.replacements, 99 * max);
	mcrepl_heat_destroy(h);
}
END_TEST

/* Entries that went cold are freed when their set is next searched: new
 * keys get in without replacing anything and the entry count drops. */
/* covers: T-13 */
START_TEST(test_heat_table_cold_entries_are_reused)
{
	mcrepl_heat *h = table_make(64, false);
	mcrepl_heat_stats st;
	uint64_t replaced;
	char key[32];
	uint32_t n;

	fill_to_limit(h, "old", 0);
	mcrepl_heat_get_stats(h, &st);
	replaced = st.replacements;
	for (int i = 0; i < 16; i++) {
		snprintf(key, sizeof(key), "new-%d", i);
		mcrepl_heat_record(h, NULL, key, NULL, 60000, &n);
		ck_assert_uint_eq(n, 1);
	}
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_eq(st.replacements, replaced);
	ck_assert_uint_lt(st.entries, 64);
	ck_assert_uint_ge(st.entries, 16);
	ck_assert_uint_eq(mcrepl_heat_count(h, NULL, "old-0", NULL, 60000), 0);
	mcrepl_heat_destroy(h);
}
END_TEST

/* Black box: do a and b share a set? (The second insert of a fresh table
 * examines one live entry exactly when they do.) */
static bool same_set(const char *a, const char *b)
{
	mcrepl_heat *h = table_make(8, false);
	mcrepl_heat_stats st;

	mcrepl_heat_record(h, NULL, a, NULL, 0, NULL);
	mcrepl_heat_record(h, NULL, b, NULL, 0, NULL);
	mcrepl_heat_get_stats(h, &st);
	mcrepl_heat_destroy(h);
	return st.max_probe == 1;
}

/* A table of 8 entries has 2 sets. Fill one set to the limit: a key of the
 * other, empty set still gets in by evicting the coldest entry of its pair:
 * all counts are 1, so the least recently read one (fill[5], bucket 0). */
START_TEST(test_heat_table_limit_with_empty_set)
{
	char fill[8][32], other[32] = "";
	mcrepl_heat_stats st;
	mcrepl_heat *h;
	int nfill = 0;

	for (int i = 0; nfill < 8 || !other[0]; i++) {
		char key[32];

		ck_assert_int_lt(i, 1000);
		snprintf(key, sizeof(key), "probe-%d", i);
		if (i == 0 || (nfill < 8 && same_set("probe-0", key)))
			memcpy(fill[nfill++], key, sizeof(key));
		else if (!other[0] && !same_set("probe-0", key))
			memcpy(other, key, sizeof(key));
	}
	h = table_make(8, false);
	for (uint64_t i = 0; i < 8; i++)
		mcrepl_heat_record(h, NULL, fill[i], NULL, (i + 3) % 8 * 1250,
				   NULL);
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_int_eq(
		    mcrepl_heat_record(h, NULL, other, NULL, 9000, NULL),
		    i < 7 ? MCREPL_HEAT_COLD : MCREPL_HEAT_CROSSED);
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_eq(st.entries, 8);
	ck_assert_uint_eq(st.replacements, 1);
	ck_assert_uint_eq(st.max_probe, 8);
	for (int i = 0; i < 8; i++)
		ck_assert_uint_eq(
		    mcrepl_heat_count(h, NULL, fill[i], NULL, 9000), i != 5);
	ck_assert_uint_eq(mcrepl_heat_count(h, NULL, other, NULL, 9000), 8);
	mcrepl_heat_destroy(h);
}
END_TEST

/* n keys "<prefix>-<i>" sharing one set with "probe-0" (itself first). */
static void keys_in_set(char (*keys)[32], int n)
{
	int got = 0;

	for (int i = 0; got < n; i++) {
		ck_assert_int_lt(i, 5000);
		snprintf(keys[got], 32, "probe-%d", i);
		if (i == 0 || same_set("probe-0", keys[got]))
			got++;
	}
}

/* Six keys of one set read at skewed rates, with gaps that cool them: the
 * keys cross the threshold at different times. Every event and count must
 * be the key's own, as the brute-force model computes it, whatever the
 * layout does with the keys inside the set. */
#define ONE_SET_KEYS 6

START_TEST(test_heat_table_one_set_matches_model)
{
	static struct model m[ONE_SET_KEYS];
	char keys[ONE_SET_KEYS][32];
	mcrepl_heat_params p;
	mcrepl_config cfg;
	mcrepl_heat *h;
	uint64_t t = 1000, seed = 99;
	uint32_t n;

	keys_in_set(keys, ONE_SET_KEYS);
	cfg_make(&cfg, 10000, 0.8, 8);
	mcrepl_heat_params_init(&p, &cfg);
	ck_assert_int_eq(mcrepl_heat_create(&cfg, &h), MCREPL_OK);
	for (int k = 0; k < ONE_SET_KEYS; k++)
		m[k] =
		    (struct model){.b = p.bucket_ms, .threshold = p.threshold};
	for (int i = 0; i < 6000; i++) {
		uint64_t r = test_rng(&seed);
		int k = 0;

		/* key k with weight 2^k; now and then a gap of a window */
		while (k < ONE_SET_KEYS - 1 && r % 2 == 0) {
			k++;
			r /= 2;
		}
		t += i % 500 == 499 ? 12000 : test_rng(&seed) % 60;
		ck_assert_int_lt(m[k].n, NELEM(m[k].epochs));
		mcrepl_heat_event want = model_record(&m[k], t);

		ck_assert_int_eq(
		    mcrepl_heat_record(h, NULL, keys[k], NULL, t, &n), want);
		ck_assert_uint_eq(n, model_count(&m[k], t));
		for (int j = 0; j < ONE_SET_KEYS; j++)
			ck_assert_uint_eq(
			    mcrepl_heat_count(h, NULL, keys[j], NULL, t),
			    m[j].n ? model_count(&m[j], t) : 0);
	}
	ck_assert_uint_eq(table_entries(h), ONE_SET_KEYS);
	mcrepl_heat_destroy(h);
}
END_TEST

/* ---- the table under two threads ------------------------------------------ */

#define SAME_N 30000 /* 2 x 30000 < 65535: one bucket holds it all */
#define DISTINCT_N 5000

struct worker {
	mcrepl_heat *h;
	const char *prefix;
	pthread_barrier_t *start;
};

static void *same_key_worker(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	for (int i = 0; i < SAME_N; i++)
		mcrepl_heat_record(w->h, "t", "shared", NULL, 500, NULL);
	return NULL;
}

static void *many_keys_worker(void *arg)
{
	struct worker *w = arg;
	char key[32];

	pthread_barrier_wait(w->start);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < DISTINCT_N; i++) {
			snprintf(key, sizeof(key), "%s-%d", w->prefix, i);
			mcrepl_heat_record(w->h, "t", key, NULL, 500, NULL);
			snprintf(key, sizeof(key), "both-%d", i);
			mcrepl_heat_record(w->h, "t", key, NULL, 500, NULL);
		}
	}
	return NULL;
}

/* Each thread churns the keys of one set of a two-set table (a pair, the
 * table at its limit of 8 entries), moving its clock past a window every
 * 8 reads: reads free cold entries, replace within a set and, when a set
 * is empty at the limit, evict from the pair under both set locks. */
#define PAIR_N 20000

static char pair_keys[2][8][32];

static void *pair_worker(void *arg)
{
	struct worker *w = arg;
	int side = w->prefix[0] == 'b';
	uint32_t n;

	pthread_barrier_wait(w->start);
	for (int i = 0; i < PAIR_N; i++) {
		/* the other side's entries look cold from here half the time */
		uint64_t t = (uint64_t)(i / 8) * 11000 + (uint64_t)side * 5000;

		mcrepl_heat_record(w->h, NULL, pair_keys[side][i % 8], NULL, t,
				   &n);
		ck_assert_uint_le(n, 8);
	}
	return NULL;
}

static void run_two(mcrepl_heat *h, void *(*fn)(void *))
{
	pthread_barrier_t start;
	pthread_t tid[2];
	struct worker w[2] = {{h, "a", &start}, {h, "b", &start}};

	ck_assert_int_eq(pthread_barrier_init(&start, NULL, 2), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&tid[i], NULL, fn, &w[i]), 0);
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_join(tid[i], NULL), 0);
	pthread_barrier_destroy(&start);
}

START_TEST(test_heat_two_threads_same_key)
{
	mcrepl_heat *h = table_make(1000, false);

	run_two(h, same_key_worker);
	ck_assert_uint_eq(mcrepl_heat_count(h, "t", "shared", NULL, 500),
			  2 * SAME_N);
	ck_assert_uint_eq(table_entries(h), 1);
	mcrepl_heat_destroy(h);
}
END_TEST

START_TEST(test_heat_two_threads_many_keys)
{
	mcrepl_heat *h = table_make(100000, false);
	mcrepl_heat_stats st;
	char key[32];

	run_two(h, many_keys_worker);
	for (int i = 0; i < DISTINCT_N; i++) {
		snprintf(key, sizeof(key), "a-%d", i);
		ck_assert_uint_eq(mcrepl_heat_count(h, "t", key, NULL, 500), 3);
		snprintf(key, sizeof(key), "b-%d", i);
		ck_assert_uint_eq(mcrepl_heat_count(h, "t", key, NULL, 500), 3);
		snprintf(key, sizeof(key), "both-%d", i);
		ck_assert_uint_eq(mcrepl_heat_count(h, "t", key, NULL, 500), 6);
	}
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_eq(st.entries, 3 * DISTINCT_N);
	ck_assert_uint_eq(st.replacements, 0);
	mcrepl_heat_destroy(h);
}
END_TEST

START_TEST(test_heat_two_threads_pair_eviction)
{
	char probe[32];
	int got[2] = {0, 0};
	mcrepl_heat *h = table_make(8, false);
	mcrepl_heat_stats st;

	for (int i = 0; got[0] < 8 || got[1] < 8; i++) {
		int side;

		ck_assert_int_lt(i, 5000);
		snprintf(probe, sizeof(probe), "probe-%d", i);
		side = i != 0 && !same_set("probe-0", probe);
		if (got[side] < 8)
			memcpy(pair_keys[side][got[side]++], probe,
			       sizeof(probe));
	}
	run_two(h, pair_worker);
	mcrepl_heat_get_stats(h, &st);
	ck_assert_uint_le(st.entries, 8);
	ck_assert_uint_ge(st.entries, 1);
	ck_assert_uint_le(st.max_probe, 8);
	mcrepl_heat_destroy(h);
}
END_TEST

Suite *make_heat_suite(void)
{
	Suite *s = suite_create("heat");
	TCase *cell = tcase_create("cell");
	TCase *table = tcase_create("table");
	TCase *threads = tcase_create("threads");

	tcase_add_loop_test(cell, test_heat_params_threshold, 0,
			    NELEM(param_cases));
	tcase_add_test(cell, test_heat_cell_size);
	tcase_add_test(cell, test_heat_cell_no_tumbling_boundary);
	tcase_add_loop_test(cell, test_heat_cell_read_age, 0, NELEM(age_cases));
	tcase_add_test(cell, test_heat_cell_exact_counts_at_boundaries);
	tcase_add_loop_test(cell, test_heat_cell_fires_once_per_window, 0,
			    NELEM(hot_cases));
	tcase_add_test(cell, test_heat_cell_crossed_times);
	tcase_add_test(cell, test_heat_cell_cools_and_reheats);
	tcase_add_test(cell, test_heat_cell_dip_and_recross);
	tcase_add_test(cell, test_heat_cell_time_goes_backwards);
	tcase_add_test(cell, test_heat_cell_zero_cell_far_clock);
	tcase_add_test(cell, test_heat_cell_saturation);
	tcase_add_test(cell, test_heat_cell_scale_steps);
	tcase_add_test(cell, test_heat_cell_recent_is_the_last_complete_bucket);
	tcase_add_test(cell, test_heat_cell_hot_key_rate);
	suite_add_tcase(s, cell);

	tcase_add_test(table, test_heat_create_invalid);
	tcase_add_test(table, test_heat_create_enomem);
	tcase_add_loop_test(table, test_heat_table_sizes, 0, NELEM(size_cases));
	tcase_add_loop_test(table, test_heat_cell_and_table_match_model, 0,
			    NELEM(model_cases));
	tcase_add_loop_test(table, test_heat_table_bucket_boundaries_far_clock,
			    0, NELEM(boundary_cases));
	tcase_add_test(table, test_heat_table_long_hot_run);
	tcase_add_test(table, test_heat_table_tenants_are_separate);
	tcase_add_loop_test(table, test_heat_table_domain_keying, 0,
			    NELEM(domain_cases));
	tcase_add_test(table, test_heat_table_full_hot_key_gets_in);
	tcase_add_loop_test(table, test_heat_cleanup_bounded_at_entry_limit, 0,
			    NELEM(bounded_max));
	tcase_add_test(table, test_heat_table_cold_entries_are_reused);
	tcase_add_test(table, test_heat_table_limit_with_empty_set);
	tcase_add_test(table, test_heat_table_one_set_matches_model);
	tcase_set_timeout(table, 60);
	suite_add_tcase(s, table);

	tcase_add_test(threads, test_heat_two_threads_same_key);
	tcase_add_test(threads, test_heat_two_threads_many_keys);
	tcase_add_test(threads, test_heat_two_threads_pair_eviction);
	tcase_set_timeout(threads, 120);
	suite_add_tcase(s, threads);
	return s;
}
