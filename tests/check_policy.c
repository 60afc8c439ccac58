/* The self-tuning policy: exact thresholds, caps, the balance gate,
 * retirement, projection, and auto admission through the lease table. */
#include <stdio.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "policy.h"
#include "testutil.h"

#define NOW 1000000ULL
#define MIB (1024ULL * 1024ULL)

static mcrepl_config auto_cfg(void)
{
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	return c;
}

START_TEST(test_policy_defaults_and_knobs)
{
	mcrepl_config c;
	char buf[32];

	mcrepl_config_init(&c);
	ck_assert_int_eq(c.policy, MCREPL_POLICY_AUTO);
	ck_assert_double_eq(c.hot_share, 0.01);
	ck_assert_double_eq(c.balance_tolerance, 0.05);
	ck_assert_uint_eq(c.auto_max_replicas, 0);
	ck_assert_int_eq(mcrepl_config_set(&c, "policy", "rfc"), MCREPL_OK);
	ck_assert_int_eq(c.policy, MCREPL_POLICY_RFC);
	ck_assert_int_eq(mcrepl_config_get(&c, "dynamic_replication_policy",
					   buf, sizeof(buf)),
			 MCREPL_OK);
	ck_assert_str_eq(buf, "rfc");
	ck_assert_int_eq(mcrepl_config_set(&c, "policy", "smart"),
			 MCREPL_EPARSE);
	ck_assert_int_eq(mcrepl_config_set(&c, "hot_share", "0"),
			 MCREPL_ERANGE);
	ck_assert_int_eq(mcrepl_config_set(&c, "balance_tolerance", "-1"),
			 MCREPL_ERANGE);
	ck_assert_int_eq(mcrepl_config_set(&c, "auto_max_replicas", "64"),
			 MCREPL_OK);
	ck_assert_uint_eq(c.auto_max_replicas, 64);
	ck_assert_str_eq(mcrepl_policy_name((mcrepl_policy)7), "unknown");
	ck_assert_str_eq(mcrepl_policy_name(MCREPL_POLICY_AUTO), "auto");
	ck_assert_str_eq(mcrepl_reason_name(MCREPL_REASON_BALANCED),
			 "balanced");
}
END_TEST

/* Thresholds: hot_share 0.01, RFC floor 8 hits (0.8/s x 10 s). */
static const struct thr_case {
	const char *name;
	mcrepl_policy policy;
	uint64_t window_reads;
	uint32_t nodes, readable;
	uint32_t share, admit, trigger, cap, want_at_count, want;
} thr_cases[] = {
    /* a single key read 8 times on a 2-node cluster: the RFC's count */
    {"small cluster, RFC floor", MCREPL_POLICY_AUTO, 8, 2, 1, 1, 8, 8, 2, 8, 2},
    {"small cluster, 7 hits", MCREPL_POLICY_AUTO, 7, 2, 1, 1, 8, 8, 2, 7, 1},
    /* 64 nodes, 1 M reads/s over 10 s: share = 0.01 x 10 M / 64 */
    /* (1 + sqrt(1 + 1563))^2 = 1644.1 */
    {"64 nodes, 1 M/s, 1 replica", MCREPL_POLICY_AUTO, 10000000, 64, 1, 1563,
     1645, 1645, 64, 1645, 2},
    {"64 nodes, 1 M/s, one hit short", MCREPL_POLICY_AUTO, 10000000, 64, 1,
     1563, 1645, 1645, 64, 1644, 1},
    {"64 nodes, 1 M/s, 3 replicas", MCREPL_POLICY_AUTO, 10000000, 64, 3, 1563,
     4828, 1645, 64, 4828, 4},
    {"64 nodes, the hottest key capped", MCREPL_POLICY_AUTO, 10000000, 64, 1,
     1563, 1645, 1645, 64, 780000, 64},
    /* 8 nodes, 5 k/s: share 62.5 -> 63; (1 + sqrt(127))^2 = 150.5 */
    {"8 nodes, 5 k/s", MCREPL_POLICY_AUTO, 50000, 8, 2, 63, 151, 81, 8, 150, 2},
    /* rfc: the absolute threshold and the fixed cap whatever the load */
    {"rfc ignores the cluster", MCREPL_POLICY_RFC, 10000000, 64, 1, 0, 8, 8, 2,
     8, 2},
    {"rfc below its threshold", MCREPL_POLICY_RFC, 10000000, 64, 1, 0, 8, 8, 2,
     7, 1},
    /* nodes 0: not auto, the RFC's rules */
    {"auto without a cluster view", MCREPL_POLICY_AUTO, 10000000, 0, 1, 0, 8, 8,
     2, 100, 2},
};

START_TEST(test_policy_thresholds)
{
	const struct thr_case *tc = &thr_cases[_i];
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = tc->window_reads,
				  .nodes = tc->nodes};

	c.policy = tc->policy;
	ck_assert_msg(mcr_policy_share_count(&c, &cl) == tc->share,
		      "%s: share %u", tc->name,
		      mcr_policy_share_count(&c, &cl));
	ck_assert_msg(mcr_threshold(&c, &cl, tc->readable) == tc->admit,
		      "%s: admit %u", tc->name,
		      mcr_threshold(&c, &cl, tc->readable));
	ck_assert_uint_eq(mcr_threshold_trigger(&c, &cl), tc->trigger);
	ck_assert_uint_eq(mcr_policy_replica_cap(&c, &cl), tc->cap);
	ck_assert_msg(mcr_policy_want_replicas(&c, &cl, tc->want_at_count) ==
			  tc->want,
		      "%s: want %u", tc->name,
		      mcr_policy_want_replicas(&c, &cl, tc->want_at_count));
}
END_TEST

START_TEST(test_policy_cap_knob_and_null_view)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 1000000, .nodes = 1024};

	ck_assert(!mcr_policy_is_auto(&c, NULL));
	ck_assert(mcr_policy_is_auto(&c, &cl));
	ck_assert_uint_eq(mcr_policy_replica_cap(&c, NULL), 2);
	ck_assert_uint_eq(mcr_policy_replica_cap(&c, &cl), 1024);
	c.auto_max_replicas = 16;
	ck_assert_uint_eq(mcr_policy_replica_cap(&c, &cl), 16);
	ck_assert_uint_eq(mcr_threshold(&c, NULL, 1), 8);
	/* domain-aware: the first copy into a domain keeps its own count */
	c.domain_aware = true;
	c.cross_domain_qps_threshold = 0.3;
	ck_assert_uint_eq(mcr_threshold(&c, &cl, 0), 3);
	ck_assert_uint_eq(mcr_threshold_trigger(&c, &cl), 3);
	ck_assert_uint_eq(mcr_threshold_trigger(&c, NULL), 3);
	/* huge counts saturate at what the heat window can represent */
	cl.window_reads = UINT64_MAX / 2;
	cl.nodes = 1;
	ck_assert_uint_eq(mcr_policy_share_count(&c, &cl),
			  MCREPL_HEAT_MAX_THRESHOLD);
	ck_assert_uint_eq(mcr_threshold(&c, &cl, 5), MCREPL_HEAT_MAX_THRESHOLD);
	/* 1,024 nodes, 1 M/s: share 98, (1 + sqrt(99))^2 = 119.9 */
	cl.window_reads = 10000000;
	cl.nodes = 1024;
	ck_assert_uint_eq(mcr_threshold_trigger(&c, &cl), 3);
	c.domain_aware = false;
	ck_assert_uint_eq(mcr_threshold_trigger(&c, &cl), 120);
	ck_assert_uint_eq(mcr_policy_want_replicas(&c, &cl, 119), 1);
	ck_assert_uint_eq(mcr_policy_want_replicas(&c, &cl, 120), 2);
	ck_assert_uint_eq(mcr_policy_want_replicas(&c, &cl, 600000), 16);
	/* few reads: the RFC count floors what retires, 2 (1 + 2) < 8 */
	cl.window_reads = 50000;
	cl.nodes = 128;
	ck_assert(mcr_policy_should_retire(&c, &cl, 1, 2));
	ck_assert(!mcr_policy_should_retire(&c, &cl, 2, 2));
}
END_TEST

/* Balance gate, tolerance 0.05: overloaded when the excess is above
 * band = max(5 % of the mean, z sqrt(mean)), z = sqrt(2 ln(100 n)) (3.4616
 * at 4 segments, 4.8035 at 1,024); a copy is worth it when it takes over
 * half the band, 2 (count - 2 sqrt(count)) >= (r + 1) band; otherwise a
 * key must fill a node's fair share per replica with two deviations to
 * spare: window 8000 reads, 4 nodes, d = c - (r / 4) 8000, d^2 >= 4 (c (1 -
 * r/4)^2 + (8000 - c) (r/4)^2): c >= 2079 for one replica, 4090 for two. */
static const struct bal_case {
	const char *name;
	uint64_t key_load, load_sum;
	uint32_t segments;
	double tol;
	uint32_t count, readable;
	bool overloaded, helps;
} bal_cases[] = {
    {"nothing known, a small key", 0, 0, 0, 0.05, 1999, 1, false, false},
    {"nothing known, a key filling a node within the noise", 0, 0, 0, 0.05,
     2078, 1, false, false},
    {"nothing known, a key filling a node", 0, 0, 0, 0.05, 2079, 1, false,
     true},
    {"no reads yet", 0, 0, 8, 0.05, 2079, 1, false, true},
    /* mean 4: band 3.4616 sqrt(4) = 6.92 */
    {"within the noise", 10, 16, 4, 0.05, 3999, 2, false, false},
    {"within the noise, two shares for two replicas, within their noise", 10,
     16, 4, 0.05, 4089, 2, false, false},
    {"within the noise, two shares for two replicas", 10, 16, 4, 0.05, 4090, 2,
     false, true},
    {"beyond the noise, a copy moving under half the band", 11, 16, 4, 0.05, 14,
     1, true, false},
    {"beyond the noise, a copy moving half the band", 11, 16, 4, 0.05, 15, 1,
     true, true},
    /* mean 1600: 5 % = 80, 3.4616 sqrt = 138.47 */
    {"mean 1600: within the noise", 1738, 6400, 4, 0.05, 165, 1, false, false},
    {"mean 1600: one read beyond", 1739, 6400, 4, 0.05, 165, 1, true, true},
    {"mean 1600: not worth a copy", 1739, 6400, 4, 0.05, 164, 1, true, false},
    {"mean 1600: two replicas, a third needs 1.5 bands", 1739, 6400, 4, 0.05,
     238, 2, true, false},
    {"mean 1600: two replicas, 1.5 bands", 1739, 6400, 4, 0.05, 239, 2, true,
     true},
    /* mean 10000: 5 % = 500, 3.4616 sqrt = 346.2 */
    {"mean 10000: at the tolerance", 10500, 40000, 4, 0.05, 547, 1, false,
     false},
    {"mean 10000: one read above", 10501, 40000, 4, 0.05, 547, 1, true, true},
    {"mean 10000: under half the band", 10501, 40000, 4, 0.05, 546, 1, true,
     false},
    /* 1,024 segments, mean 1600: 4.8035 sqrt(1600) = 192.1 */
    {"1,024 segments: within the largest count's noise", 1792, 1638400, 1024,
     0.05, 222, 1, false, false},
    {"1,024 segments: beyond it", 1793, 1638400, 1024, 0.05, 222, 1, true,
     true},
    {"1,024 segments: beyond it, not worth a copy", 1793, 1638400, 1024, 0.05,
     221, 1, true, false},
    {"below the mean", 1000, 8000, 4, 0.05, 1999, 1, false, false},
    {"tolerance 0 turns the gate off", 1000, 8000, 4, 0.0, 1, 1, false, true},
};

START_TEST(test_policy_balance_gate)
{
	const struct bal_case *tc = &bal_cases[_i];
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 8000, .nodes = 4};
	mcrepl_balance b = {.key_load = tc->key_load,
			    .load_sum = tc->load_sum,
			    .segments = tc->segments};

	c.balance_tolerance = tc->tol;
	ck_assert_msg(mcr_policy_overloaded(&c, &b) == tc->overloaded, "%s",
		      tc->name);
	ck_assert_msg(mcr_policy_helps(&c, &cl, &b, tc->count, tc->readable) ==
			  tc->helps,
		      "%s", tc->name);
	ck_assert(mcr_policy_helps(&c, NULL, &b, 0, 1));
}
END_TEST

/* Steady-state copies. Hysteresis: a key refused as
 * balanced within the window (held) needs z more deviations of the band:
 * mean 10000 on 4 segments, band 500, held 500 + 3.4616 x 100 = 846.16;
 * the fair-share rule is the same held or not (c >= 2079 for one replica
 * of 8000 reads on 4 nodes). */
START_TEST(test_policy_gate_hysteresis)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 8000, .nodes = 4};
	mcrepl_balance b = {
	    .key_load = 10846, .load_sum = 40000, .segments = 4, .held = true};
	mcrepl_balance none = {.held = true};

	ck_assert(!mcr_policy_overloaded(&c, &b));
	b.key_load = 10847;
	ck_assert(mcr_policy_overloaded(&c, &b));
	b.key_load = 10501;
	ck_assert(!mcr_policy_overloaded(&c, &b));
	b.held = false;
	ck_assert(mcr_policy_overloaded(&c, &b));
	ck_assert(!mcr_policy_helps(&c, &cl, &none, 2078, 1));
	ck_assert(mcr_policy_helps(&c, &cl, &none, 2079, 1));
	none.held = false;
	ck_assert(!mcr_policy_helps(&c, &cl, &none, 2078, 1));
	ck_assert(mcr_policy_helps(&c, &cl, &none, 2079, 1));
	/* mcr_policy_balance() starts with no memory */
	mcr_policy_balance(NULL, 0, NULL, 0, &b);
	ck_assert(!b.held);
}
END_TEST

/* The gate's mean is at most the reads served per node, for a key that
 * carries half a fair share per replica: 4,000 reads on 4 nodes, mean
 * 1,000, band max(50, 3.4616 sqrt(1000)) = 109.47. Loads
 * summing to 4,800 (holders of a key that just rose, judged by their
 * recent rate) put the mean at 1,200 (band 119.9) and a key 1,300 on its
 * least loaded replica under it. */
START_TEST(test_policy_gate_mean_capped_by_reads_served)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 4000, .nodes = 4};
	mcrepl_balance b = {.key_load = 1300, .load_sum = 4800, .segments = 4};
	mcrepl_balance g;

	ck_assert(!mcr_policy_overloaded(&c, &b));
	/* not by the fair-share rule: d = 1000 - 4000 / 4 = 0 */
	ck_assert(mcr_policy_share_excess(&cl, 1000, 1) == 0.0);
	ck_assert(mcr_policy_helps(&c, &cl, &b, 1000, 1));
	/* only for a key carrying half a fair share (500) on each replica:
	 * 2 (500 - 2 sqrt(500)) = 910.6 >= 2 x 109.47; at 499 the lifted
	 * mean stands */
	ck_assert(mcr_policy_helps(&c, &cl, &b, 500, 1));
	ck_assert(!mcr_policy_helps(&c, &cl, &b, 499, 1));
	ck_assert(!mcr_policy_helps(&c, &cl, &b, 1999, 4));
	ck_assert(mcr_policy_helps(&c, &cl, &b, 2000, 4));
	g = mcr_policy_capped_mean(&cl, &b);
	ck_assert_uint_eq(g.load_sum, 4000);
	ck_assert_uint_eq(g.key_load, 1300);
	ck_assert_uint_eq(g.segments, 4);
	/* up to 1.25 x the reads served, capped; beyond, another unit */
	b.load_sum = 5000;
	ck_assert_uint_eq(mcr_policy_capped_mean(&cl, &b).load_sum, 4000);
	b.load_sum = 5001;
	ck_assert_uint_eq(mcr_policy_capped_mean(&cl, &b).load_sum, 5001);
	ck_assert(!mcr_policy_helps(&c, &cl, &b, 1000, 1));
	/* a mean under the reads served stands (800: band 97.9, 950 over) */
	b.load_sum = 3200;
	b.key_load = 950;
	ck_assert_uint_eq(mcr_policy_capped_mean(&cl, &b).load_sum, 3200);
	ck_assert(mcr_policy_helps(&c, &cl, &b, 1000, 1));
	/* no view, no nodes: as given */
	b.load_sum = 4800;
	ck_assert_uint_eq(mcr_policy_capped_mean(NULL, &b).load_sum, 4800);
	cl.nodes = 0;
	ck_assert_uint_eq(mcr_policy_capped_mean(&cl, &b).load_sum, 4800);
	ck_assert_uint_eq(mcr_policy_capped_mean(&cl, NULL).segments, 0);
}
END_TEST

/* Readers spread by load: a copy fills its target up to the level of the
 * key's replicas, at most the key's reads. */
START_TEST(test_policy_project_level)
{
	static const struct {
		uint64_t key, level, target, to, each;
		uint32_t r;
	} cases[] = {
	    /* gap 3000 over r = 2: the target rises by 2 x 3000 / 3 */
	    {5000, 9000, 6000, 2000, 1000, 2},
	    /* ... but never by more than the key's own reads */
	    {1200, 9000, 6000, 1200, 600, 2},
	    /* 254 replicas (a flash crowd's key): each gives up what the
	     * target gains rounded up, 12, not 11 (r x 11 = 2794 lost 194
	     * reads of the target's projection) */
	    {5000, 9000, 6000, 2988, 12, 254},
	    /* r 0 reads as 1: half the gap */
	    {5000, 9000, 6000, 1500, 1500, 0},
	    /* a target at or above the level gains nothing */
	    {5000, 9000, 9000, 0, 0, 3},
	};
	mcrepl_projection pr;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mcr_policy_project_level(cases[i].key, cases[i].r,
					 cases[i].level, cases[i].target, &pr);
		ck_assert_uint_eq(pr.to_target, cases[i].to);
		ck_assert_uint_eq(pr.from_each, cases[i].each);
	}
	/* no overflow at the extremes */
	mcr_policy_project_level(UINT64_MAX, UINT32_MAX, UINT64_MAX, 0, &pr);
	ck_assert_uint_eq(pr.to_target,
			  UINT64_MAX / ((uint64_t)UINT32_MAX + 1) * UINT32_MAX +
			      UINT64_MAX % ((uint64_t)UINT32_MAX + 1) *
				  UINT32_MAX / ((uint64_t)UINT32_MAX + 1));
	mcr_policy_project_level(1, 1, 2, 1, NULL); /* no crash */
}
END_TEST

/* Counts that just rose: the recent rate's lower bound where it clearly
 * passes the window count, the count otherwise. */
static const struct rising_case {
	uint32_t count, recent, rb;
	double span, z;
	uint32_t want;
} rising_cases[] = {
    {100, 0, 1, 8, 1.0, 100},	   /* no recent reads */
    {800, 100, 1, 8, 1.0, 800},	   /* steady: est 800, low 720 */
    {800, 110, 1, 8, 1.0, 800},	   /* noise: est 880, low 796.1 */
    {100, 100, 1, 8, 1.0, 720},	   /* risen: est 800 - sqrt(6400) */
    {100, 100, 1, 8, 0.0, 800},	   /* z 0: the estimate itself */
    {1750, 1800, 2, 8, 2.0, 6860}, /* node: 7200 - 2 sqrt(28800) */
    {1750, 1800, 0, 8, 2.0, 1750}, /* no recent buckets */
    {1750, 1800, 9, 8, 2.0, 1750}, /* more recent buckets than the window */
    {0, UINT32_MAX, 1, 8, 0.0, UINT32_MAX}, /* clamped */
    /* at a bucket boundary the count covers 7 buckets: a steady 100 a
     * bucket is 700 and stays so; scaled to 8 it would have passed */
    {700, 100, 1, 7.0, 1.0, 700},
    {700, 100, 1, 8.0, 1.0, 720}, /* est 800 - sqrt(6400) > 700 */
};

START_TEST(test_policy_rising)
{
	const struct rising_case *c = &rising_cases[_i];

	ck_assert_uint_eq(
	    mcr_policy_rising(c->count, c->recent, c->rb, c->span, c->z),
	    c->want);
}
END_TEST

/* The rising bound alone: what a node projected to lose reads keeps. */
START_TEST(test_policy_recent_low)
{
	/* 1,800 in 2 of 8 buckets: 7,200 - 2 sqrt(28,800) */
	ck_assert_double_eq_tol(mcr_policy_recent_low(1800, 2, 8, 2.0),
				7200 - 2 * sqrt(28800.0), 1e-9);
	ck_assert_double_eq(mcr_policy_recent_low(0, 2, 8, 2.0), 0);
	ck_assert_double_eq(mcr_policy_recent_low(1, 1, 8, 3.0), 0);
	ck_assert_double_eq(mcr_policy_recent_low(1800, 0, 8, 2.0), 0);
	ck_assert_double_eq(mcr_policy_recent_low(1800, 9, 8, 2.0), 0);
}
END_TEST

START_TEST(test_policy_noise_z)
{
	ck_assert_double_eq_tol(mcr_policy_noise_z(0), 3.0349, 1e-4);
	ck_assert_double_eq_tol(mcr_policy_noise_z(1), 3.0349, 1e-4);
	ck_assert_double_eq_tol(mcr_policy_noise_z(4), 3.4616, 1e-4);
	ck_assert_double_eq_tol(mcr_policy_noise_z(8), 3.6564, 1e-4);
	ck_assert_double_eq_tol(mcr_policy_noise_z(64), 4.1867, 1e-4);
	ck_assert_double_eq_tol(mcr_policy_noise_z(1024), 4.8035, 1e-4);
	/* worth knows nothing without loads */
	ck_assert(!mcr_policy_worth(NULL, NULL, 1000, 1));
}
END_TEST

START_TEST(test_policy_balance_from_views)
{
	static const mcrepl_segment_view segs[4] = {
	    {{1}, {1}, "h1", "", 64 * MIB, 0, true, 900},
	    {{2}, {2}, "h2", "", 64 * MIB, 0, true, 3000},
	    {{3}, {3}, "h3", "", 64 * MIB, 0, false, 100},
	    {{0}, {4}, "h4", "", 64 * MIB, 0, true, 5000}, /* no id: skipped */
	};
	static const mcrepl_replica_view reps[3] = {
	    {{1}, {1}, "h1", "", true, true, false, true, 0},
	    {{2}, {2}, "h2", "", false, true, true, true, 0}, /* copying */
	    {{9}, {9}, "h9", "", true, true, true, true, 0},  /* unknown */
	};
	mcrepl_balance b;

	mcr_policy_balance(segs, 4, reps, 3, &b);
	ck_assert_uint_eq(b.key_load, 900);
	ck_assert_uint_eq(b.load_sum, 4000);
	ck_assert_uint_eq(b.segments, 3);
	mcr_policy_balance(NULL, 0, reps, 3, &b);
	ck_assert_uint_eq(b.key_load, 0);
	ck_assert_uint_eq(b.segments, 0);
}
END_TEST

/* Retirement: 64 nodes, 1 M/s (share 1563): a key with r replicas keeps
 * them while 2 (count + 2 sqrt(count)) >= max(8, 1563 (r - 1)). */
static const struct ret_case {
	const char *name;
	mcrepl_policy policy;
	uint32_t count, readable;
	bool want;
} ret_cases[] = {
    {"only the primary", MCREPL_POLICY_AUTO, 0, 1, false},
    {"two replicas, count 0", MCREPL_POLICY_AUTO, 0, 2, true},
    /* 2 (727 + 2 sqrt 727) = 1561.9 < 1563; 728: 1563.9 */
    {"two replicas, 727 hits", MCREPL_POLICY_AUTO, 727, 2, true},
    {"two replicas, 728 hits", MCREPL_POLICY_AUTO, 728, 2, false},
    /* 4689: 2250 -> 4689.7 */
    {"four replicas, 2249 hits", MCREPL_POLICY_AUTO, 2249, 4, true},
    {"four replicas, 2250 hits", MCREPL_POLICY_AUTO, 2250, 4, false},
    {"rfc never retires", MCREPL_POLICY_RFC, 0, 2, false},
};

START_TEST(test_policy_retire)
{
	const struct ret_case *tc = &ret_cases[_i];
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 10000000, .nodes = 64};

	c.policy = tc->policy;
	ck_assert_msg(mcr_policy_should_retire(&c, &cl, tc->count,
					       tc->readable) == tc->want,
		      "%s", tc->name);
}
END_TEST

/* Domain-aware: a domain's only copy is judged by the domain's count
 * against the cross-domain count that admitted it (3 at 0.3/s over 10 s:
 * 2 (c + 2 sqrt(c)) < 3 only for c = 0); two or more in the domain by the
 * cluster rule; never outside auto + domain-aware, nor with none. */
START_TEST(test_policy_retire_in_domain)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 50000, .nodes = 128};

	ck_assert(!mcr_policy_should_retire_in_domain(&c, &cl, 0, 1));
	c.domain_aware = true;
	c.cross_domain_qps_threshold = 0.3;
	ck_assert(mcr_policy_should_retire_in_domain(&c, &cl, 0, 1));
	ck_assert(!mcr_policy_should_retire_in_domain(&c, &cl, 1, 1));
	ck_assert(!mcr_policy_should_retire_in_domain(&c, &cl, 0, 0));
	ck_assert(!mcr_policy_should_retire_in_domain(&c, NULL, 0, 1));
	ck_assert(mcr_policy_should_retire_in_domain(&c, &cl, 1, 2) ==
		  mcr_policy_should_retire(&c, &cl, 1, 2));
	ck_assert(!mcr_policy_should_retire_in_domain(&c, &cl, 2, 2));
	c.cross_domain_qps_threshold = 0; /* the RFC count, 8: c = 1 goes */
	ck_assert(mcr_policy_should_retire_in_domain(&c, &cl, 1, 1));
	ck_assert(!mcr_policy_should_retire_in_domain(&c, &cl, 2, 1));
}
END_TEST

START_TEST(test_policy_retire_pick_and_project)
{
	static const mcrepl_replica_view reps[4] = {
	    {{1}, {1}, "h1", "", true, true, false, true, 0}, /* primary */
	    {{2}, {2}, "h2", "", true, true, true, true, 0},
	    {{3}, {3}, "h3", "", true, true, true, true, 0},
	    {{4}, {4}, "h4", "", false, true, true, true, 0}, /* copying */
	};
	uint64_t load[4] = {9000, 500, 700, 9999};
	uint64_t s2 = mcrepl_rendezvous("t", "k", 2, 0);
	uint64_t s3 = mcrepl_rendezvous("t", "k", 3, 0);
	mcrepl_projection pr;
	size_t pick = 99;

	ck_assert_int_eq(mcr_policy_retire_pick("t", "k", reps, load, 4, &pick),
			 MCREPL_OK);
	ck_assert_uint_eq(pick, 2); /* the busiest dynamic, readable one */
	ck_assert_int_eq(mcr_policy_retire_pick("t", "k", reps, NULL, 4, &pick),
			 MCREPL_OK);
	ck_assert_uint_eq(pick, s2 < s3 ? 1 : 2); /* lowest score */
	ck_assert_int_eq(mcr_policy_retire_pick("t", "k", reps, load, 1, &pick),
			 MCREPL_ENOENT);
	ck_assert_int_eq(mcr_policy_retire_pick("t", "k", NULL, load, 1, &pick),
			 MCREPL_EINVAL);
	mcr_policy_project(1200, 2, &pr);
	ck_assert_uint_eq(pr.to_target, 400);
	ck_assert_uint_eq(pr.from_each, 200);
	mcr_policy_project(1000, 0, &pr);
	ck_assert_uint_eq(pr.to_target, 500);
	ck_assert_uint_eq(pr.from_each, 500);
}
END_TEST

/* Admission under auto, through mcrepl_admit(): the rules auto replaces. */
static const struct adm_case {
	const char *name;
	mcrepl_policy policy;
	uint32_t readable, heat;
	uint64_t key_load, action_until;
	mcrepl_reason want;
	uint64_t recreate_until;
} adm_cases[] = {
    {"hot and overloaded", MCREPL_POLICY_AUTO, 1, 1645, 2400, 0,
     MCREPL_REASON_NONE, 0},
    {"below one share", MCREPL_POLICY_AUTO, 1, 1644, 2400, 0,
     MCREPL_REASON_BELOW_THRESHOLD, 0},
    {"three replicas need three shares", MCREPL_POLICY_AUTO, 3, 4827, 2400, 0,
     MCREPL_REASON_BELOW_THRESHOLD, 0},
    {"balanced", MCREPL_POLICY_AUTO, 1, 1645, 2100, 0, MCREPL_REASON_BALANCED,
     0},
    {"the RFC cap of 2 does not apply", MCREPL_POLICY_AUTO, 2, 3240, 2400, 0,
     MCREPL_REASON_NONE, 0},
    {"one per node at most", MCREPL_POLICY_AUTO, 64, 500000, 2400, 0,
     MCREPL_REASON_REPLICA_LIMIT, 0},
    {"no action cooldown under auto", MCREPL_POLICY_AUTO, 1, 1645, 2400,
     NOW + 1, MCREPL_REASON_NONE, 0},
    {"rfc: the absolute threshold", MCREPL_POLICY_RFC, 1, 8, 2100, 0,
     MCREPL_REASON_NONE, 0},
    {"rfc: the fixed cap", MCREPL_POLICY_RFC, 2, 3126, 2400, 0,
     MCREPL_REASON_REPLICA_LIMIT, 0},
    {"rfc: the action cooldown", MCREPL_POLICY_RFC, 1, 1563, 2400, NOW + 1,
     MCREPL_REASON_ACTION_COOLDOWN, 0},
    /* keys hot again: a key whose replica was retired or
     * evicted and whose readers overload it again is judged by its load */
    {"hot again: overloaded, the recreate cooldown waived", MCREPL_POLICY_AUTO,
     1, 1645, 2400, 0, MCREPL_REASON_NONE, NOW + 1},
    {"hot again: not overloaded, refused balanced", MCREPL_POLICY_AUTO, 1, 1645,
     2100, 0, MCREPL_REASON_BALANCED, NOW + 1},
    {"hot again: rfc keeps the recreate cooldown", MCREPL_POLICY_RFC, 1, 1563,
     2400, 0, MCREPL_REASON_RECREATE_COOLDOWN, NOW + 1},
};

START_TEST(test_policy_admit)
{
	const struct adm_case *tc = &adm_cases[_i];
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 10000000, .nodes = 64};
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = "p-1",
			     .tenant = "t",
			     .key = "k",
			     .observed_version = 7,
			     .expected_size = 4096,
			     .expires_at_ms = NOW + 5000};
	mcrepl_object_view o = {.exists = true,
				.version = 7,
				.size = 4096,
				.readable_memory_replicas = tc->readable};
	mcrepl_admit_input in = {
	    .cfg = &c,
	    .proposal = &p,
	    .object = &o,
	    .heat_count = tc->heat,
	    .key_state = {.action_cooldown_until_ms = tc->action_until,
			  .recreate_after_ms = tc->recreate_until},
	    .now_ms = NOW,
	    .cluster = &cl,
	    /* 64 segments, mean 2000 reads: overloaded above 2000 +
	     * 4.1867 sqrt(2000) = 2187.2 */
	    .balance = {.key_load = tc->key_load,
			.load_sum = 128000,
			.segments = 64},
	};

	c.policy = tc->policy;
	ck_assert_msg(mcrepl_admit(&in) == tc->want, "%s: got %s want %s",
		      tc->name, mcrepl_reason_name(mcrepl_admit(&in)),
		      mcrepl_reason_name(tc->want));
}
END_TEST

/* Keys hot again with the balance gate off (balance_tolerance 0): nothing
 * judges the key's load, so the recreate cooldown still holds it. */
START_TEST(test_policy_hot_again_gate_off_keeps_cooldown)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 10000000, .nodes = 64};
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = "p-1",
			     .tenant = "t",
			     .key = "k",
			     .observed_version = 7,
			     .expected_size = 4096,
			     .expires_at_ms = NOW + 5000};
	mcrepl_object_view o = {.exists = true,
				.version = 7,
				.size = 4096,
				.readable_memory_replicas = 1};
	mcrepl_admit_input in = {
	    .cfg = &c,
	    .proposal = &p,
	    .object = &o,
	    .heat_count = 1645,
	    .key_state = {.recreate_after_ms = NOW + 1},
	    .now_ms = NOW,
	    .cluster = &cl,
	    .balance = {.key_load = 2400, .load_sum = 128000, .segments = 64},
	};

	c.balance_tolerance = 0;
	ck_assert_str_eq(mcrepl_reason_name(mcrepl_admit(&in)),
			 "recreate_cooldown");
	in.key_state.recreate_after_ms = NOW;
	ck_assert_str_eq(mcrepl_reason_name(mcrepl_admit(&in)), "none");
}
END_TEST

/* The lease table under auto: 4 segments; the key lives on segment 1. */
static mcrepl_status propose4_at(mcrepl_leases *t, const char *id,
				 uint32_t heat, const uint64_t loads[4],
				 const mcrepl_cluster_view *cl, uint64_t now,
				 mcrepl_propose_result *res)
{
	mcrepl_segment_view segs[4] = {
	    {{1}, {1}, "h1", "", 64 * MIB, 8 * MIB, true, loads[0]},
	    {{2}, {2}, "h2", "", 64 * MIB, 8 * MIB, true, loads[1]},
	    {{3}, {3}, "h3", "", 64 * MIB, 40 * MIB, true, loads[2]},
	    {{4}, {4}, "h4", "", 64 * MIB, 16 * MIB, true, loads[3]},
	};
	mcrepl_replica_view rep = {.segment = {1},
				   .client = {1},
				   .host = "h1",
				   .domain = "",
				   .readable = true,
				   .memory = true,
				   .can_copy = true};
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = id,
			     .tenant = "t",
			     .key = "k",
			     .observed_version = 7,
			     .expected_size = MIB,
			     .expires_at_ms = now + 5000};
	mcrepl_object_view o = {.exists = true,
				.version = 7,
				.size = MIB,
				.readable_memory_replicas = 1};
	mcrepl_propose_input in = {
	    .proposal = &p,
	    .object = &o,
	    .heat_count = heat,
	    .replicas = &rep,
	    .n_replicas = 1,
	    .segments = segs,
	    .n_segments = 4,
	    .now_ms = now,
	    .cluster = cl,
	};

	return mcrepl_leases_propose(t, &in, res);
}

static mcrepl_status propose4(mcrepl_leases *t, const char *id, uint32_t heat,
			      const uint64_t loads[4],
			      const mcrepl_cluster_view *cl,
			      mcrepl_propose_result *res)
{
	return propose4_at(t, id, heat, loads, cl, NOW, res);
}

START_TEST(test_policy_leases_auto_and_rfc)
{
	static const uint64_t busy1[4] = {5000, 1000, 100, 1900};
	static const uint64_t even[4] = {2000, 2000, 2000, 2000};
	static const uint64_t none[4] = {0, 0, 0, 0};
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 8000, .nodes = 4},
			    tiny = {8, 2};
	mcrepl_propose_result res;
	mcrepl_leases *t;

	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	/* share = 0.01 x 8000 / 4 = 20 hits: (1 + sqrt(21))^2 = 31.2 */
	ck_assert_int_eq(propose4(t, "a", 31, busy1, &cl, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	ck_assert_int_eq(propose4(t, "b", 32, even, &cl, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	/* overloaded (mean 2000, band 3.4616 sqrt(2000) = 154.8), but 181
	 * hits less two deviations (154.1) take over 77.1 reads, under half
	 * the band: not worth a copy */
	ck_assert_int_eq(propose4(t, "c0", 181, busy1, &cl, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	/* 182 hits: the least read-loaded target (3), not the emptiest (2) */
	ck_assert_int_eq(propose4(t, "c", 182, busy1, &cl, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	mcrepl_leases_destroy(t);

	/* a single key read 8 times on a small cluster gets its copy: it
	 * fills a node's fair share, d = 8 - 4 = 4, with two deviations to
	 * spare, 4 Var d = 4 x 8 x (1/2)^2 = 8 <= 16 */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "d", 7, none, &tiny, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BELOW_THRESHOLD);
	ck_assert_int_eq(propose4(t, "e", 8, none, &tiny, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2); /* lowest utilization */
	mcrepl_leases_destroy(t);

	/* no cluster view, or policy rfc: utilization first, as the RFC */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "f", 8, busy1, NULL, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2);
	mcrepl_leases_destroy(t);
	c.policy = MCREPL_POLICY_RFC;
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "g", 8, even, &cl, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 2);
	mcrepl_leases_destroy(t);
}
END_TEST

/* Steady-state copies. The lease table remembers a
 * BALANCED refusal for one heat window: a key whose segment is 250 reads
 * above a mean of 2000 (band 154.8, held 309.6) is admitted when judged
 * afresh or while its run of refusals is under two windows old (the
 * key's load just moved), refused while held; the memory ends with the window,
 * with an admission, and the record is swept. */
START_TEST(test_policy_leases_remember_balanced)
{
	static const uint64_t even[4] = {2000, 2000, 2000, 2000};
	static const uint64_t over[4] = {2250, 1950, 1900, 1900};
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 8000, .nodes = 4};
	mcrepl_propose_result res;
	mcrepl_leases_stats st;
	mcrepl_key_state ks;
	mcrepl_leases *t;

	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "a", 1000, even, &cl, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, NOW);
	ck_assert(!ks.pending);
	mcrepl_leases_get_stats(t, &st);
	ck_assert_uint_eq(st.key_records, 1);
	/* a run two windows old (NOW, NOW + 9 s, NOW + 18 s, then NOW +
	 * 20 s) holds: 250 is within band + z sqrt(mean); a younger one
	 * does not (below) */
	ck_assert_int_eq(
	    propose4_at(t, "a2", 1000, even, &cl, NOW + 9000, &res),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(
	    propose4_at(t, "a3", 1000, even, &cl, NOW + 18000, &res),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(
	    propose4_at(t, "b", 1000, over, &cl, NOW + 20000, &res),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW + 20000, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, NOW + 20000);
	ck_assert_uint_eq(ks.balanced_since_ms, NOW);
	/* the record lives one window, then the sweep forgets it */
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW + 29999, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, NOW + 20000);
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW + 30000, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, 0);
	ck_assert_uint_eq(mcrepl_leases_sweep(t, NOW + 30000, NULL, 0), 0);
	mcrepl_leases_get_stats(t, &st);
	ck_assert_uint_eq(st.key_records, 0);
	mcrepl_leases_destroy(t);

	/* judged afresh the same loads admit the copy, which ends the
	 * memory of an earlier refusal */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "c", 1000, over, &cl, &res), MCREPL_OK);
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, 0);
	ck_assert(ks.pending);
	mcrepl_leases_destroy(t);

	/* refused at NOW, NOW + 9 s and NOW + 18 s, judged at NOW +
	 * 19.999 s: the run is under two windows old, the band alone
	 * judges, the copy is admitted */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "e", 1000, even, &cl, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(propose4_at(t, "f", 1000, even, &cl, NOW + 9000, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(
	    propose4_at(t, "f2", 1000, even, &cl, NOW + 18000, &res),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(
	    propose4_at(t, "g", 1000, over, &cl, NOW + 19999, &res), MCREPL_OK);
	mcrepl_leases_destroy(t);

	/* policy rfc never refuses BALANCED and keeps no such record */
	c.policy = MCREPL_POLICY_RFC;
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4(t, "d", 1000, even, &cl, &res), MCREPL_OK);
	mcrepl_leases_destroy(t);
}
END_TEST

/* Few reads per node: the evidence of a run of BALANCED
 * refusals is one sample a heat window, fades past
 * MCREPL_POLICY_EVIDENCE_WINDOWS samples, starts afresh after a window with
 * no refusal, and a grant lowers it by what the copy takes. */
START_TEST(test_policy_evidence_sums)
{
	const mcrepl_balance b = {
	    .key_load = 80, .load_sum = 200, .segments = 4};
	const mcrepl_balance none = {.key_load = 80};
	mcrepl_evidence ev;

	memset(&ev, 0, sizeof(ev));
	mcr_policy_evidence_add(&ev, &b, 30, NOW, 10000);
	ck_assert_double_eq(ev.low, 30.0);
	ck_assert_double_eq(ev.mean, 50.0);
	ck_assert_double_eq(ev.count, 30.0);
	ck_assert_double_eq(ev.n, 1.0);
	ck_assert_uint_eq(ev.at_ms, NOW);
	/* the same window adds nothing; no segments add nothing */
	mcr_policy_evidence_add(&ev, &b, 99, NOW + 9999, 10000);
	mcr_policy_evidence_add(&ev, &none, 99, NOW + 10000, 10000);
	ck_assert_double_eq(ev.n, 1.0);
	ck_assert_double_eq(ev.count, 30.0);
	mcr_policy_evidence_add(&ev, &b, 40, NOW + 10000, 10000);
	ck_assert_double_eq(ev.low, 60.0);
	ck_assert_double_eq(ev.mean, 100.0);
	ck_assert_double_eq(ev.count, 70.0);
	ck_assert_double_eq(ev.n, 2.0);
	/* a copy granted at one readable replica takes count / 2 */
	mcr_policy_evidence_granted(&ev, 1);
	ck_assert_double_eq(ev.low, 25.0);
	ck_assert_double_eq(ev.n, 2.0);
	/* two windows with no refusal: afresh */
	mcr_policy_evidence_add(&ev, &b, 30, NOW + 30000, 10000);
	ck_assert_double_eq(ev.n, 1.0);
	ck_assert_double_eq(ev.low, 30.0);
	ck_assert_uint_eq(ev.at_ms, NOW + 30000);
	/* 16 samples, then each older one keeps 15/16 */
	for (int i = 1; i <= MCREPL_POLICY_EVIDENCE_WINDOWS; i++)
		mcr_policy_evidence_add(
		    &ev, &b, 30, NOW + 30000 + 10000ULL * (unsigned)i, 10000);
	ck_assert_int_eq(MCREPL_POLICY_EVIDENCE_WINDOWS, 16);
	ck_assert_double_eq_tol(ev.n, 16.0, 1e-9);
	ck_assert_double_eq_tol(ev.low, 480.0, 1e-9);
	ck_assert_double_eq_tol(ev.mean, 800.0, 1e-9);
	mcr_policy_evidence_add(NULL, &b, 30, NOW, 10000);
	mcr_policy_evidence_granted(NULL, 1);
}
END_TEST

/* Few reads per node: the sums judged by the gate's rules with z
 * for segments x windows looks, only where one window's band is noise, and
 * asking half as much again once a full horizon of refusals has passed. */
START_TEST(test_policy_evidence_judges_few_reads)
{
	mcrepl_config c = auto_cfg();
	/* 4 segments, ~50 reads each a window: z(64 looks) = 4.187, the band
	 * of 800 summed reads max(40, 4.187 sqrt(800)) = 118.4 */
	mcrepl_evidence ev = {.low = 150, .mean = 800, .count = 480, .n = 15};
	mcrepl_evidence calm = {.low = 0, .mean = 800, .count = 480, .n = 15};
	mcrepl_evidence busy = {
	    .low = 15000, .mean = 150000, .count = 60000, .n = 15};

	ck_assert(mcr_policy_evidence_helps(&c, &ev, 4, 1));
	/* a full horizon: 150 < 1.5 x 118.4 */
	ev.n = 16;
	ck_assert(!mcr_policy_evidence_helps(&c, &ev, 4, 1));
	ev.low = 178;
	ck_assert(mcr_policy_evidence_helps(&c, &ev, 4, 1));
	/* under 10 % of the mean (x 1.5): 119 < 120 */
	ev.low = 119;
	ev.mean = 800;
	ck_assert(!mcr_policy_evidence_helps(&c, &ev, 4, 1));
	/* pooled over 3 replicas: 3 x 121 > 1.5 max(120, 4.187 sqrt(2400)) */
	ev.low = 121;
	ck_assert(mcr_policy_evidence_helps(&c, &ev, 4, 3));
	/* ...but a copy must be worth it: 2 (480 - 2 sqrt(480)) = 872 <
	 * (r + 1) 1.5 x 118.4 at r = 4 */
	ck_assert(!mcr_policy_evidence_helps(&c, &ev, 4, 4));
	/* no excess; one sample; 10,000 reads a window (the band is the
	 * tolerance there, one window's gate is enough) */
	ck_assert(!mcr_policy_evidence_helps(&c, &calm, 4, 1));
	ev.n = 1;
	ck_assert(!mcr_policy_evidence_helps(&c, &ev, 4, 1));
	ck_assert(!mcr_policy_evidence_helps(&c, &busy, 4, 1));
	ck_assert(!mcr_policy_evidence_helps(NULL, &ev, 4, 1));
	ck_assert(!mcr_policy_evidence_helps(&c, NULL, 4, 1));
	ck_assert(!mcr_policy_evidence_helps(&c, &ev, 0, 1));
}
END_TEST

/* Refusals each bucket (1.25 s) of a key that one window's gate lets
 * pass as noise: when its evidence first admits a copy, or 0. */
static uint64_t evidence_first_pass(const mcrepl_balance *b, uint32_t count,
				    int buckets)
{
	mcrepl_config c = auto_cfg();
	mcrepl_evidence ev;

	memset(&ev, 0, sizeof(ev));
	for (int i = 0; i < buckets; i++) {
		uint64_t now = NOW + 1250ULL * (unsigned)i;

		mcr_policy_evidence_add(&ev, b, count, now, 10000);
		if (mcr_policy_evidence_helps(&c, &ev, b->segments, 1))
			return now - NOW;
	}
	return 0;
}

/* Few reads, slow fan-out: the pace the evidence sets, pinned (a rule
 * that moves it must say so here and in POLICY.md, section 2, "Few reads,
 * slow fan-out"). 8 segments of 115 reads a window (one window's band
 * 3.6564 sqrt(115) = 39.2, a third of the mean), a node 35 over the mean:
 * its excess is clear at the second sample (70 > 4.3491 sqrt(230) =
 * 66.0), and a key of 30 reads a window there is worth a copy by the
 * looks' z (4.3491) at the fourth sample, 30 s (2 (120 - 2 sqrt(120)) =
 * 196.2 >= 2 x 4.3491 sqrt(460) = 186.6); one window's z (3.6564) would
 * pass it at the third, 20 s (in parentheses below, what that z gives).
 * A key of 15 reads: 130 s (90 s); one of 8,
 * never. A node 20 over: a key of 20 at 70 s (50 s); 64 segments of 100
 * reads, a node 25 over: a key of 20 at 80 s (60 s); 64 segments of 780
 * reads (the band 3.1 x the tolerance), a node 20 % over: a key of 60 at
 * 60 s (40 s). A node 7 % over is never copied from (the 10 % floor). */
START_TEST(test_policy_evidence_fan_out_pace)
{
	const mcrepl_balance over = {
	    .key_load = 150, .load_sum = 920, .segments = 8};
	const mcrepl_balance near = {
	    .key_load = 135, .load_sum = 920, .segments = 8};
	const mcrepl_balance wide = {
	    .key_load = 125, .load_sum = 6400, .segments = 64};
	const mcrepl_balance low = {
	    .key_load = 123, .load_sum = 920, .segments = 8};
	const mcrepl_balance busy = {
	    .key_load = 936, .load_sum = 49920, .segments = 64};

	ck_assert_uint_eq(evidence_first_pass(&over, 30, 64), 30000);
	ck_assert_uint_eq(evidence_first_pass(&over, 15, 320), 130000);
	ck_assert_uint_eq(evidence_first_pass(&over, 8, 320), 0);
	ck_assert_uint_eq(evidence_first_pass(&near, 20, 320), 70000);
	ck_assert_uint_eq(evidence_first_pass(&wide, 20, 320), 80000);
	ck_assert_uint_eq(evidence_first_pass(&low, 30, 320), 0);
	ck_assert_uint_eq(evidence_first_pass(&busy, 60, 320), 60000);
}
END_TEST

/* The band's dead zone: 16 segments, ~1,000 reads each a window, one
 * window's band 3.8413 sqrt(1000) = 121.5 (12.1 %): over the tolerance (50)
 * but under 3 x it, where neither the one-window gate (a key 12 % over)
 * nor, before, the evidence judged. Four windows of a key on 3 replicas
 * 12 % over the mean: z(256 looks) = 4.5056, 3 x 480 > max(600, 4.5056
 * sqrt(12000)) = 600, 2 (12000 - 2 sqrt(12000)) >= 4 max(200, 284.97). */
START_TEST(test_policy_evidence_judges_the_band_dead_zone)
{
	mcrepl_config c = auto_cfg();
	mcrepl_evidence ev = {.low = 480, .mean = 4000, .count = 12000, .n = 4};
	/* 10,000 reads a window: band max(500, 384.1) is the tolerance */
	mcrepl_evidence busy = {
	    .low = 4800, .mean = 40000, .count = 120000, .n = 4};

	ck_assert(mcr_policy_evidence_helps(&c, &ev, 16, 3));
	/* the 10 % floor: 399 < 400 */
	ev.low = 399;
	ck_assert(!mcr_policy_evidence_helps(&c, &ev, 16, 3));
	ck_assert(!mcr_policy_evidence_helps(&c, &busy, 16, 3));
}
END_TEST

/* Low read rates, through the lease table: a node 60 % over the
 * mean at 50 reads a window is within one window's noise allowance for a
 * key of 30 reads (the copy is not worth half the band), so the gate
 * refuses it; the second window's refusal brings the evidence to two
 * windows and the copy is admitted. Even loads never are. */
START_TEST(test_policy_leases_evidence_few_reads)
{
	static const uint64_t over[4] = {80, 40, 40, 40};
	static const uint64_t even[4] = {50, 50, 50, 50};
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view cl = {.window_reads = 200, .nodes = 4};
	mcrepl_propose_result res;
	mcrepl_leases *t;
	char id[16];

	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	ck_assert_int_eq(propose4_at(t, "a", 30, over, &cl, NOW, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	ck_assert_int_eq(propose4_at(t, "b", 30, over, &cl, NOW + 9999, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	ck_assert_int_eq(propose4_at(t, "c", 30, over, &cl, NOW + 10000, &res),
			 MCREPL_OK);
	ck_assert(res.live);
	ck_assert_uint_eq(res.lease.target.v, 2);
	mcrepl_leases_destroy(t);

	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	for (unsigned i = 0; i < 40; i++) {
		snprintf(id, sizeof(id), "e%u", i);
		ck_assert_int_eq(
		    propose4_at(t, id, 30, even, &cl, NOW + 5000ULL * i, &res),
		    MCREPL_EREJECTED);
		ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	}
	mcrepl_leases_destroy(t);
}
END_TEST

/* Steady-state copies: the fair-share rule's deviations
 * (mcr_policy_share_excess) and the deviations one look needs
 * (mcr_policy_share_z). */
START_TEST(test_policy_share_excess_and_z)
{
	mcrepl_cluster_view tiny = {.window_reads = 8, .nodes = 2},
			    four = {8000, 4};
	mcrepl_cluster_view big = {.window_reads = 44000, .nodes = 1024};

	/* all 8 reads of 2 nodes: d = 4, Var d = 8 / 4 */
	ck_assert_double_eq_tol(mcr_policy_share_excess(&tiny, 8, 1),
				4.0 / sqrt(2.0), 1e-12);
	/* 2079 of 8000 on 4 nodes: d = 79, Var d = 2079 (3/4)^2 + 5921/16 */
	ck_assert_double_eq_tol(mcr_policy_share_excess(&four, 2079, 1),
				79.0 / sqrt(2079.0 * 9 / 16 + 5921.0 / 16),
				1e-12);
	ck_assert_double_eq(mcr_policy_share_excess(&four, 2000, 1), 0.0);
	ck_assert_double_eq(mcr_policy_share_excess(&four, 4000, 2), 0.0);
	ck_assert_double_eq(mcr_policy_share_excess(NULL, 8, 1), 0.0);
	/* 60 of 44,000 reads on 1,024 nodes: 2.2 deviations */
	ck_assert_double_eq_tol(mcr_policy_share_excess(&big, 60, 1), 2.2002,
				1e-4);
	ck_assert_double_eq(mcr_policy_share_z(0), 2.0);
	ck_assert_double_eq(mcr_policy_share_z(7), 2.0);
	ck_assert_double_eq_tol(mcr_policy_share_z(8), sqrt(2 * log(8.0)),
				1e-12);
	ck_assert_double_eq_tol(mcr_policy_share_z(1024), 3.7233, 1e-4);
}
END_TEST

/* Steady-state copies: a key refused BALANCED for three heat
 * windows running is settled. The share rule then asks for
 * mcr_policy_share_z(nodes) deviations (3.72 at 1,024 nodes) instead of
 * two, and the gate's held margin doubles: mean 10000 on 4 segments, band
 * 500, held 500 + 346.16, settled 500 + 692.32. */
START_TEST(test_policy_settled_refusals)
{
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view big = {.window_reads = 44000, .nodes = 1024};
	mcrepl_balance b = {0};
	mcrepl_balance g = {
	    .key_load = 10847, .load_sum = 40000, .segments = 4, .held = true};

	ck_assert(mcr_policy_helps(&c, &big, &b, 60, 1));  /* 2.20 */
	ck_assert(!mcr_policy_helps(&c, &big, &b, 58, 1)); /* 1.97 */
	b.settled = true;
	ck_assert(!mcr_policy_helps(&c, &big, &b, 60, 1));
	ck_assert(!mcr_policy_helps(&c, &big, &b, 75, 1)); /* 3.70 */
	ck_assert(mcr_policy_helps(&c, &big, &b, 76, 1));  /* 3.79 */
	ck_assert(mcr_policy_overloaded(&c, &g));
	g.settled = true;
	ck_assert(!mcr_policy_overloaded(&c, &g));
	g.key_load = 11192;
	ck_assert(!mcr_policy_overloaded(&c, &g));
	g.key_load = 11193;
	ck_assert(mcr_policy_overloaded(&c, &g));
	/* settled without held (no memory of a refusal) changes nothing */
	g.held = false;
	g.key_load = 10501;
	ck_assert(mcr_policy_overloaded(&c, &g));
}
END_TEST

/* Refusals under a window apart make one run; three windows of it settle
 * the key (mcrepl_key_state.balanced_since_ms). Loads even: only the
 * share rule decides. 1,024 nodes, window 10 s. */
static void refuse_run(mcrepl_leases *t, uint64_t from, uint64_t to)
{
	static const uint64_t even[4] = {2000, 2000, 2000, 2000};
	mcrepl_cluster_view big = {.window_reads = 44000, .nodes = 1024};
	mcrepl_propose_result res;
	char id[32];

	for (uint64_t at = from; at <= to; at += 9000) {
		snprintf(id, sizeof(id), "r%llu", (unsigned long long)at);
		ck_assert_int_eq(propose4_at(t, id, 58, even, &big, at, &res),
				 MCREPL_EREJECTED);
		ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	}
}

START_TEST(test_policy_leases_settle_after_three_windows)
{
	static const uint64_t even[4] = {2000, 2000, 2000, 2000};
	mcrepl_config c = auto_cfg();
	mcrepl_cluster_view big = {.window_reads = 44000, .nodes = 1024};
	mcrepl_propose_result res;
	mcrepl_key_state ks;
	mcrepl_leases *t;

	/* refused from NOW to NOW + 27 s: settled at NOW + 30 s */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	refuse_run(t, NOW, NOW + 27000);
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW + 30000, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, NOW + 27000);
	ck_assert_uint_eq(ks.balanced_since_ms, NOW);
	ck_assert_int_eq(propose4_at(t, "a", 60, even, &big, NOW + 30000, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(res.reason, MCREPL_REASON_BALANCED);
	ck_assert_int_eq(propose4_at(t, "b", 75, even, &big, NOW + 30000, &res),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(propose4_at(t, "c", 76, even, &big, NOW + 30000, &res),
			 MCREPL_OK);
	/* admitted: the run ends */
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW + 30000, &ks);
	ck_assert_uint_eq(ks.balanced_at_ms, 0);
	ck_assert_uint_eq(ks.balanced_since_ms, 0);
	mcrepl_leases_destroy(t);

	/* a millisecond short of three windows: two deviations still do */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	refuse_run(t, NOW, NOW + 27000);
	ck_assert_int_eq(propose4_at(t, "d", 60, even, &big, NOW + 29999, &res),
			 MCREPL_OK);
	mcrepl_leases_destroy(t);

	/* a window without a refusal ends the run; the next begins anew */
	ck_assert_int_eq(mcrepl_leases_create(&c, &t), MCREPL_OK);
	refuse_run(t, NOW, NOW + 18000);
	refuse_run(t, NOW + 28000, NOW + 28000);
	mcrepl_leases_key_state(t, "t", "k", NULL, NOW + 28000, &ks);
	ck_assert_uint_eq(ks.balanced_since_ms, NOW + 28000);
	ck_assert_int_eq(propose4_at(t, "e", 60, even, &big, NOW + 30000, &res),
			 MCREPL_OK);
	mcrepl_leases_destroy(t);
}
END_TEST

/* The O(n) reader pick is the first entry of the full order. */
START_TEST(test_pick_replica_is_order_first)
{
	mcrepl_replica_view rep[5];
	uint64_t load[5] = {30, 10, 10, 5, 40};
	size_t order[5], pick = 99;

	memset(rep, 0, sizeof(rep));
	for (size_t i = 0; i < 5; i++) {
		rep[i].segment.v = i + 1;
		rep[i].readable = i != 3; /* the least loaded cannot be read */
	}
	for (uint64_t salt = 0; salt < 64; salt++) {
		ck_assert_int_eq(
		    mcrepl_order_replicas("t", "k", rep, load, 5, salt, order),
		    MCREPL_OK);
		ck_assert_int_eq(
		    mcrepl_pick_replica("t", "k", rep, load, 5, salt, &pick),
		    MCREPL_OK);
		ck_assert_uint_eq(pick, order[0]);
		ck_assert(pick == 1 || pick == 2);
		ck_assert_int_eq(
		    mcrepl_order_replicas("t", "k", rep, NULL, 5, salt, order),
		    MCREPL_OK);
		ck_assert_int_eq(
		    mcrepl_pick_replica("t", "k", rep, NULL, 5, salt, &pick),
		    MCREPL_OK);
		ck_assert_uint_eq(pick, order[0]);
	}
	ck_assert_int_eq(mcrepl_pick_replica("t", "k", rep, load, 0, 0, &pick),
			 MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_pick_replica("t", "k", NULL, load, 2, 0, &pick),
			 MCREPL_EINVAL);
}
END_TEST

Suite *make_policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, test_policy_defaults_and_knobs);
	tcase_add_loop_test(tc, test_policy_thresholds, 0,
			    sizeof(thr_cases) / sizeof(thr_cases[0]));
	tcase_add_test(tc, test_policy_cap_knob_and_null_view);
	tcase_add_loop_test(tc, test_policy_balance_gate, 0,
			    sizeof(bal_cases) / sizeof(bal_cases[0]));
	tcase_add_test(tc, test_policy_gate_hysteresis);
	tcase_add_test(tc, test_policy_gate_mean_capped_by_reads_served);
	tcase_add_test(tc, test_policy_recent_low);
	tcase_add_loop_test(tc, test_policy_rising, 0,
			    sizeof(rising_cases) / sizeof(rising_cases[0]));
	tcase_add_test(tc, test_policy_project_level);
	tcase_add_test(tc, test_policy_noise_z);
	tcase_add_test(tc, test_policy_balance_from_views);
	tcase_add_loop_test(tc, test_policy_retire, 0,
			    sizeof(ret_cases) / sizeof(ret_cases[0]));
	tcase_add_test(tc, test_policy_retire_in_domain);
	tcase_add_test(tc, test_policy_retire_pick_and_project);
	tcase_add_loop_test(tc, test_policy_admit, 0,
			    sizeof(adm_cases) / sizeof(adm_cases[0]));
	tcase_add_test(tc, test_policy_hot_again_gate_off_keeps_cooldown);
	tcase_add_test(tc, test_policy_leases_auto_and_rfc);
	tcase_add_test(tc, test_policy_leases_remember_balanced);
	tcase_add_test(tc, test_policy_evidence_sums);
	tcase_add_test(tc, test_policy_evidence_judges_few_reads);
	tcase_add_test(tc, test_policy_evidence_judges_the_band_dead_zone);
	tcase_add_test(tc, test_policy_evidence_fan_out_pace);
	tcase_add_test(tc, test_policy_leases_evidence_few_reads);
	tcase_add_test(tc, test_policy_share_excess_and_z);
	tcase_add_test(tc, test_policy_settled_refusals);
	tcase_add_test(tc, test_policy_leases_settle_after_three_windows);
	tcase_add_test(tc, test_pick_replica_is_order_first);
	suite_add_tcase(s, tc);
	return s;
}
