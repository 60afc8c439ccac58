/* Placement: source choice, target choice, reader order (RFC "Source
 * Selection", "Destination Selection", test plan). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcrepl/config.h"
#include "mcrepl/error.h"
#include "mcrepl/place.h"

#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define NO_PICK ((size_t)999)

#define MAX_SEG 6
#define MAX_REP 4

/* A valid, allocatable segment. */
#define SEG(i, h, d, cap, u)                                                   \
	{                                                                      \
		.id = {i}, .host = h, .domain = d, .capacity = cap, .used = u, \
		.allocatable = true                                            \
	}
/* A segment with a read load (read-load-aware placement). */
#define SEGL(i, h, cap, u, load)                                               \
	{                                                                      \
		.id = {i}, .host = h, .capacity = cap, .used = u,              \
		.allocatable = true, .read_load = load                         \
	}
/* A readable MEMORY replica whose client can copy. */
#define REP(s, h, d, infl)                                                     \
	{                                                                      \
		.segment = {s}, .host = h, .domain = d, .readable = true,      \
		.memory = true, .can_copy = true, .inflight = infl             \
	}
/* A PROCESSING (unreadable) MEMORY replica. */
#define REP_PROC(s, h)                                                         \
	{                                                                      \
		.segment = {s}, .host = h, .memory = true, .can_copy = true    \
	}
/* A readable MEMORY replica whose client cannot copy. */
#define REP_NOCOPY(s, d)                                                       \
	{                                                                      \
		.segment = {s}, .domain = d, .readable = true, .memory = true  \
	}

#define SEGS(...)                                                              \
	.seg = {__VA_ARGS__},                                                  \
	.n_seg = NELEM(((const mcrepl_segment_view[]){__VA_ARGS__}))
#define REPS(...)                                                              \
	.rep = {__VA_ARGS__},                                                  \
	.n_rep = NELEM(((const mcrepl_replica_view[]){__VA_ARGS__}))

/* Request for tenant "t", key "k", 10 bytes. */
#define REQ(dom, pref)                                                         \
	.req = {                                                               \
	    .tenant = "t",                                                     \
	    .key = "k",                                                        \
	    .size = 10,                                                        \
	    .target_domain = dom,                                              \
	    .preferred_target = {pref},                                        \
	}
#define REQ_SIZE(sz) .req = {.tenant = "t", .key = "k", .size = sz}

#define OK_PICK(p) .st = MCREPL_OK, .pick = p, .why = MCREPL_REASON_NONE
#define REJECT(r) .st = MCREPL_EREJECTED, .pick = NO_PICK, .why = r

typedef struct place_case {
	const char *name;
	bool domain_aware, load_aware;
	double watermark; /* 0 = keep the default (0.85) */
	mcrepl_place_request req;
	mcrepl_segment_view seg[MAX_SEG];
	size_t n_seg;
	mcrepl_replica_view rep[MAX_REP];
	size_t n_rep;
	mcrepl_status st;
	size_t pick;
	mcrepl_reason why;
} place_case;

static mcrepl_config make_cfg(const place_case *c)
{
	mcrepl_config cfg;

	mcrepl_config_init(&cfg);
	cfg.domain_aware = c->domain_aware;
	cfg.read_load_aware_placement = c->load_aware;
	if (c->watermark > 0)
		cfg.target_high_watermark = c->watermark;
	return cfg;
}

static void check_result(const place_case *c, mcrepl_status st, size_t pick,
			 mcrepl_reason why)
{
	ck_assert_msg(st == c->st, "%s: status %s, want %s", c->name,
		      mcrepl_status_name(st), mcrepl_status_name(c->st));
	ck_assert_msg(why == c->why, "%s: reason %s, want %s", c->name,
		      mcrepl_reason_name(why), mcrepl_reason_name(c->why));
	ck_assert_msg(pick == c->pick, "%s: pick %zu, want %zu", c->name, pick,
		      c->pick);
}

static void run_target(const place_case *c)
{
	mcrepl_config cfg = make_cfg(c);
	size_t pick = NO_PICK;
	mcrepl_reason why = MCREPL_REASON_COUNT;
	mcrepl_status st;

	st = mcrepl_place_target(&cfg, &c->req, c->seg, c->n_seg, c->rep,
				 c->n_rep, &pick, &why);
	check_result(c, st, pick, why);
}

static void run_source(const place_case *c)
{
	mcrepl_config cfg = make_cfg(c);
	size_t pick = NO_PICK;
	mcrepl_reason why = MCREPL_REASON_COUNT;
	mcrepl_status st;

	st = mcrepl_place_source(&cfg, &c->req, c->rep, c->n_rep, &pick, &why);
	check_result(c, st, pick, why);
}

/* Three hosts; utilization after a 10-byte copy: .51, .11, .355. */
#define S1 SEG(1, "h1", NULL, 1000, 500)
#define S2 SEG(2, "h2", NULL, 1000, 100)
#define S3 SEG(3, "h3", NULL, 2000, 700)

#define TWO_POW_59 (UINT64_C(1) << 59)
#define TWO_POW_60 (UINT64_C(1) << 60)
#define HUGE_CAP UINT64_C(0xF000000000000000)
#define HUGE_85 UINT64_C(0xCC00000000000000) /* exactly 0.85 * HUGE_CAP */

/* ---- target: general rules ----------------------------------------------- */

static const place_case target_cases[] = {
    {"lower utilization after the copy wins", REQ(NULL, 0), SEGS(S1, S2, S3),
     OK_PICK(1)},
    {"utilization is measured after the copy", .watermark = 1.0, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 100), SEG(2, "h2", NULL, 100, 5)),
     OK_PICK(0)},
    {"preferred target honoured when valid", REQ(NULL, 1), SEGS(S1, S2, S3),
     OK_PICK(0)},
    {"preferred target honoured at any index", REQ(NULL, 3), SEGS(S1, S2, S3),
     OK_PICK(2)},
    {"preferred target ignored when full", .watermark = 1.0, REQ(NULL, 1),
     SEGS(SEG(1, "h1", NULL, 1000, 995), S2, S3), OK_PICK(1)},
    {"preferred target ignored above the watermark", REQ(NULL, 1),
     SEGS(SEG(1, "h1", NULL, 1000, 841), S3, S2), OK_PICK(2)},
    {"preferred target ignored when not allocatable", REQ(NULL, 1),
     SEGS({.id = {1}, .host = "h1", .capacity = 1000, .used = 0}, S2, S3),
     OK_PICK(1)},
    {"preferred target ignored when it holds the key", REQ(NULL, 1),
     SEGS(SEG(1, "h1", NULL, 1000, 0), S2, S3), REPS(REP_PROC(1, "h1")),
     OK_PICK(1)},
    {"preferred target unknown id ignored", REQ(NULL, 9), SEGS(S1, S2, S3),
     OK_PICK(1)},
    {"segment holding the key is skipped (readable)", REQ(NULL, 0),
     SEGS(S1, S2, S3), REPS(REP(2, "h2", NULL, 0)), OK_PICK(2)},
    {"segment holding the key is skipped (processing)", REQ(NULL, 0),
     SEGS(S1, S2, S3), REPS(REP_PROC(2, "h9")), OK_PICK(2)},
    {"watermark: exactly 0.85 allowed", .watermark = 0.85, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 840)), OK_PICK(0)},
    {"watermark: one byte over 0.85 refused", .watermark = 0.85, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 841)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"watermark: default is 0.85", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 100, 75)), OK_PICK(0)},
    {"watermark: default one byte over refused", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 100, 76)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"watermark: fractional limit rounds down (ok)", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000001, 849990)), OK_PICK(0)},
    {"watermark: fractional limit rounds down (over)", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000001, 849991)),
     REJECT(MCREPL_REASON_NO_TARGET)},
    {"watermark: 64-bit capacity exactly at 0.85", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, HUGE_CAP, HUGE_85 - 10)), OK_PICK(0)},
    {"watermark: 64-bit capacity one byte over", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, HUGE_CAP, HUGE_85 - 9)),
     REJECT(MCREPL_REASON_NO_TARGET)},
    {"room: exactly full allowed at watermark 1", .watermark = 1.0,
     REQ(NULL, 0), SEGS(SEG(1, "h1", NULL, 1000, 990)), OK_PICK(0)},
    {"room: one byte short refused", .watermark = 1.0, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 991)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"room: used above capacity refused", .watermark = 1.0, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 1001)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"room: size near UINT64_MAX refused", REQ_SIZE(UINT64_MAX - 5),
     SEGS(SEG(1, "h1", NULL, 1000, 10)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"segment id 0 is never a target", REQ(NULL, 0),
     SEGS(SEG(0, "h1", NULL, 1000, 0)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"zero capacity is never a target", REQ_SIZE(0),
     SEGS(SEG(1, "h1", NULL, 0, 0)), REJECT(MCREPL_REASON_NO_TARGET)},
    {"no segments: NO_TARGET", REQ(NULL, 0), REJECT(MCREPL_REASON_NO_TARGET)},
    {"no valid segment: NO_TARGET", REQ(NULL, 1),
     SEGS({.id = {1}, .host = "h1", .capacity = 1000},
	  SEG(2, "h2", NULL, 1000, 995), SEG(3, "h3", NULL, 1000, 0)),
     REPS(REP_PROC(3, "h3")), REJECT(MCREPL_REASON_NO_TARGET)},
    {"exact utilization compare (id 2 lower)", .watermark = 1.0, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, TWO_POW_60, TWO_POW_59 + 1 - 10),
	  SEG(2, "h2", NULL, TWO_POW_60, TWO_POW_59 - 10)),
     OK_PICK(1)},
    {"exact utilization compare (id 1 lower)", .watermark = 1.0, REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, TWO_POW_60, TWO_POW_59 - 10),
	  SEG(2, "h2", NULL, TWO_POW_60, TWO_POW_59 + 1 - 10)),
     OK_PICK(0)},
    {"exact utilization compare across capacities", .watermark = 1.0,
     REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, UINT64_C(3000000000000000001),
	      UINT64_C(1000000000000000000) - 10),
	  SEG(2, "h2", NULL, UINT64_C(3000000000000000000),
	      UINT64_C(1000000000000000000) - 10)),
     OK_PICK(0)},
    {"domain ignored when not domain-aware", REQ("dom-b", 0),
     SEGS(SEG(1, "h1", "dom-b", 1000, 500), SEG(2, "h2", "dom-a", 1000, 100)),
     OK_PICK(1)},
    {"domain-aware: only segments in the target domain", .domain_aware = true,
     REQ("dom-b", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 100), SEG(2, "h2", "dom-b", 1000, 500),
	  SEG(3, "h3", "dom-a", 1000, 0)),
     OK_PICK(1)},
    {"domain-aware: no target domain means any domain", .domain_aware = true,
     REQ(NULL, 0),
     SEGS(SEG(1, "h1", "dom-b", 1000, 500), SEG(2, "h2", "dom-a", 1000, 100)),
     OK_PICK(1)},
    {"domain-aware: empty target domain means any domain", .domain_aware = true,
     REQ("", 0),
     SEGS(SEG(1, "h1", "dom-b", 1000, 500), SEG(2, "h2", "dom-a", 1000, 100)),
     OK_PICK(1)},
    {"domain-aware: unset segment domain is default", .domain_aware = true,
     REQ("default", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", NULL, 1000, 500),
	  SEG(3, "h3", "", 1000, 400)),
     OK_PICK(2)},
    {"domain-aware: preferred target in domain honoured", .domain_aware = true,
     REQ("dom-a", 3),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", "dom-b", 1000, 0),
	  SEG(3, "h3", "dom-a", 1000, 500)),
     OK_PICK(2)},
    {"read-load-aware off: RFC order", REQ(NULL, 0),
     SEGS(SEGL(1, "h1", 1000, 100, 100), SEGL(2, "h2", 1000, 500, 10)),
     OK_PICK(0)},
    {"read-load-aware on: lower read load first", .load_aware = true,
     REQ(NULL, 0),
     SEGS(SEGL(1, "h1", 1000, 100, 100), SEGL(2, "h2", 1000, 500, 10)),
     OK_PICK(1)},
    {"read-load-aware on: equal load falls to utilization", .load_aware = true,
     REQ(NULL, 0),
     SEGS(SEGL(1, "h1", 1000, 500, 10), SEGL(2, "h2", 1000, 100, 10),
	  SEGL(3, "h3", 1000, 0, 11)),
     OK_PICK(1)},
    {"read-load-aware on: anti-affinity still first", .load_aware = true,
     REQ(NULL, 0),
     SEGS(SEGL(1, "h1", 1000, 0, 0), SEGL(2, "h2", 1000, 500, 50),
	  SEGL(3, "h3", 1000, 100, 60)),
     REPS(REP(9, "h1", NULL, 0)), OK_PICK(1)},
    {"read-load-aware on: preferred still wins", .load_aware = true,
     REQ(NULL, 2),
     SEGS(SEGL(1, "h1", 1000, 100, 0), SEGL(2, "h2", 1000, 500, 90)),
     OK_PICK(1)},
};

/* covers: R-DST-2 R-DST-3 R-DST-5 R-DOM-3 */
START_TEST(test_target_table)
{
	run_target(&target_cases[_i]);
}
END_TEST

/* ---- target: RFC test-plan items ----------------------------------------- */

static const place_case affinity_cases[] = {
    {"another valid host exists: chosen over the replica host", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 0), SEG(2, "h2", NULL, 1000, 600),
	  SEG(3, "h1", NULL, 1000, 100)),
     REPS(REP(9, "h1", NULL, 0)), OK_PICK(1)},
    {"every replica host is avoided", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 0), SEG(2, "h2", NULL, 1000, 100),
	  SEG(3, "h3", NULL, 1000, 700)),
     REPS(REP(8, "h1", NULL, 0), REP(9, "h2", NULL, 0)), OK_PICK(2)},
    {"only same-host targets valid: one of them is chosen", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 300), SEG(2, "h2", NULL, 1000, 995),
	  SEG(3, "h1", NULL, 1000, 100)),
     REPS(REP(9, "h1", NULL, 0)), OK_PICK(2)},
    {"other host invalid (holds the key): same host chosen", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 300), SEG(2, "h2", NULL, 1000, 0)),
     REPS(REP(9, "h1", NULL, 0), REP_PROC(2, "h2")), OK_PICK(0)},
    {"an unreadable replica's host is not avoided", REQ(NULL, 0),
     SEGS(SEG(1, "h1", NULL, 1000, 0), SEG(2, "h2", NULL, 1000, 600)),
     REPS(REP_PROC(9, "h1")), OK_PICK(0)},
    {"unknown hosts never match (NULL)", REQ(NULL, 0),
     SEGS(SEG(1, NULL, NULL, 1000, 0), SEG(2, "h2", NULL, 1000, 600)),
     REPS(REP(9, NULL, NULL, 0)), OK_PICK(0)},
    {"unknown hosts never match (empty)", REQ(NULL, 0),
     SEGS(SEG(1, "", NULL, 1000, 0), SEG(2, "h2", NULL, 1000, 600)),
     REPS(REP(9, "", NULL, 0)), OK_PICK(0)},
    {"preferred target on the replica host still wins", REQ(NULL, 1),
     SEGS(SEG(1, "h1", NULL, 1000, 0), SEG(2, "h2", NULL, 1000, 600)),
     REPS(REP(9, "h1", NULL, 0)), OK_PICK(0)},
    {"domain-aware: anti-affinity inside the target domain",
     .domain_aware = true, REQ("dom-a", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", "dom-b", 1000, 0),
	  SEG(3, "h3", "dom-a", 1000, 700)),
     REPS(REP(9, "h1", "dom-a", 0)), OK_PICK(2)},
};

/* covers: T-26 R-DST-4 R-DOM-2 */
START_TEST(test_target_avoids_existing_replica_host)
{
	run_target(&affinity_cases[_i]);
}
END_TEST

static const place_case fallback_cases[] = {
    {"preferred outside the target domain falls back in-domain",
     .domain_aware = true, REQ("dom-b", 1),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", "dom-b", 1000, 500),
	  SEG(3, "h3", "dom-b", 1000, 300)),
     OK_PICK(2)},
    {"preferred with unset domain outside the target domain",
     .domain_aware = true, REQ("dom-b", 1),
     SEGS(SEG(1, "h1", NULL, 1000, 0), SEG(2, "h2", "dom-b", 1000, 500)),
     OK_PICK(1)},
    {"preferred outside the domain and no valid in-domain target",
     .domain_aware = true, REQ("dom-b", 1),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", "dom-b", 1000, 999)),
     REJECT(MCREPL_REASON_NO_TARGET_IN_DOMAIN)},
};

/* covers: T-29 R-DST-2 R-DST-3 */
START_TEST(test_invalid_preferred_target_outside_domain_falls_back)
{
	run_target(&fallback_cases[_i]);
}
END_TEST

static const place_case no_domain_target_cases[] = {
    {"target domain has no segment at all", .domain_aware = true,
     REQ("dom-c", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", "dom-b", 1000, 0)),
     REJECT(MCREPL_REASON_NO_TARGET_IN_DOMAIN)},
    {"target domain segments all invalid", .domain_aware = true,
     REQ("dom-b", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0), SEG(2, "h2", "dom-b", 1000, 900),
	  {.id = {3}, .host = "h3", .domain = "dom-b", .capacity = 1000},
	  SEG(4, "h4", "dom-b", 1000, 0)),
     REPS(REP(4, "h4", "dom-b", 0)), REJECT(MCREPL_REASON_NO_TARGET_IN_DOMAIN)},
    {"nothing valid anywhere is NO_TARGET", .domain_aware = true,
     REQ("dom-b", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 900), SEG(2, "h2", "dom-b", 1000, 900)),
     REJECT(MCREPL_REASON_NO_TARGET)},
    {"no segments at all is NO_TARGET", .domain_aware = true, REQ("dom-b", 0),
     REJECT(MCREPL_REASON_NO_TARGET)},
    {"not domain-aware: the domain does not reject", REQ("dom-c", 0),
     SEGS(SEG(1, "h1", "dom-a", 1000, 0)), OK_PICK(0)},
};

/* covers: T-30 R-DST-2 */
START_TEST(test_rejected_when_target_domain_has_no_valid_segment)
{
	run_target(&no_domain_target_cases[_i]);
}
END_TEST

/* The host passes the requester's domain (or the proposal's target domain)
 * as target_domain; the same segments serve every domain. */
/* covers: T-28 R-DST-2 R-DOM-3 */
START_TEST(test_target_in_requester_or_target_domain)
{
	static const mcrepl_segment_view segs[] = {
	    SEG(1, "h1", "dom-a", 1000, 600), SEG(2, "h2", "dom-b", 1000, 300),
	    SEG(3, "h3", "dom-a", 1000, 400), SEG(4, "h4", NULL, 1000, 100),
	    SEG(5, "h5", "dom-b", 1000, 0)};
	static const struct {
		const char *domain;
		size_t pick;
	} want[] = {
	    {"dom-a", 2}, {"dom-b", 4}, {"default", 3}, {NULL, 4}, {"", 4}};
	mcrepl_config cfg;
	mcrepl_place_request req = {.tenant = "t", .key = "k", .size = 10};
	size_t i, pick;
	mcrepl_reason why;

	mcrepl_config_init(&cfg);
	cfg.domain_aware = true;
	for (i = 0; i < NELEM(want); i++) {
		req.target_domain = want[i].domain;
		pick = NO_PICK;
		ck_assert_int_eq(mcrepl_place_target(&cfg, &req, segs,
						     NELEM(segs), NULL, 0,
						     &pick, &why),
				 MCREPL_OK);
		ck_assert_int_eq(why, MCREPL_REASON_NONE);
		ck_assert_uint_eq(pick, want[i].pick);
	}
	req.target_domain = "dom-c";
	ck_assert_int_eq(mcrepl_place_target(&cfg, &req, segs, NELEM(segs),
					     NULL, 0, &pick, &why),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_NO_TARGET_IN_DOMAIN);
}
END_TEST

/* ---- source -------------------------------------------------------------- */

static const place_case source_cases[] = {
    {"single readable MEMORY replica", REQ(NULL, 0),
     REPS(REP(1, "h1", NULL, 0)), OK_PICK(0)},
    {"unreadable and non-MEMORY replicas are skipped", REQ(NULL, 0),
     REPS(REP_PROC(1, "h1"),
	  {.segment = {2}, .readable = true, .can_copy = true},
	  REP(3, "h3", NULL, 7)),
     OK_PICK(2)},
    {"no replicas: NO_SOURCE", REQ(NULL, 0), REJECT(MCREPL_REASON_NO_SOURCE)},
    {"only unreadable replicas: NO_SOURCE", REQ(NULL, 0),
     REPS(REP_PROC(1, "h1"), REP_PROC(2, "h2")),
     REJECT(MCREPL_REASON_NO_SOURCE)},
    {"only non-MEMORY replicas: NO_SOURCE", REQ(NULL, 0),
     REPS({.segment = {1}, .readable = true, .can_copy = true}),
     REJECT(MCREPL_REASON_NO_SOURCE)},
    {"no client can copy: NO_CAPABLE_SOURCE", REQ(NULL, 0),
     REPS(REP_NOCOPY(1, NULL), REP_NOCOPY(2, NULL)),
     REJECT(MCREPL_REASON_NO_CAPABLE_SOURCE)},
    {"unreadable capable replica does not count", REQ(NULL, 0),
     REPS(REP_PROC(1, "h1"), REP_NOCOPY(2, NULL)),
     REJECT(MCREPL_REASON_NO_CAPABLE_SOURCE)},
    {"capable replica beats an idle incapable one", REQ(NULL, 0),
     REPS(REP_NOCOPY(1, NULL), REP(2, "h2", NULL, 9)), OK_PICK(1)},
    {"lower inflight wins", REQ(NULL, 0),
     REPS(REP(1, "h1", NULL, 3), REP(2, "h2", NULL, 1), REP(3, "h3", NULL, 2)),
     OK_PICK(1)},
    {"domain-aware: replica in the target domain first", .domain_aware = true,
     REQ("dom-b", 0),
     REPS(REP(1, "h1", "dom-a", 0), REP(2, "h2", "dom-b", 5),
	  REP(3, "h3", "dom-c", 0)),
     OK_PICK(1)},
    {"domain-aware: lower inflight inside the target domain",
     .domain_aware = true, REQ("dom-b", 0),
     REPS(REP(1, "h1", "dom-b", 5), REP(2, "h2", "dom-a", 0),
	  REP(3, "h3", "dom-b", 2)),
     OK_PICK(2)},
    {"domain-aware: incapable in-domain replica skipped", .domain_aware = true,
     REQ("dom-b", 0), REPS(REP_NOCOPY(1, "dom-b"), REP(2, "h2", "dom-a", 3)),
     OK_PICK(1)},
    {"domain-aware: default target matches an unset domain",
     .domain_aware = true, REQ("default", 0),
     REPS(REP(1, "h1", "dom-a", 0), REP(2, "h2", NULL, 4)), OK_PICK(1)},
    {"domain-aware: no target domain, inflight decides", .domain_aware = true,
     REQ(NULL, 0),
     REPS(REP(1, "h1", "dom-a", 1), REP(2, "h2", "dom-b", 5),
	  REP(3, "h3", "dom-c", 2)),
     OK_PICK(0)},
    {"domain-aware: empty target domain, inflight decides",
     .domain_aware = true, REQ("", 0),
     REPS(REP(1, "h1", "dom-a", 4), REP(2, "h2", "dom-b", 1)), OK_PICK(1)},
    {"not domain-aware: domain ignored", REQ("dom-b", 0),
     REPS(REP(1, "h1", "dom-a", 1), REP(2, "h2", "dom-b", 5),
	  REP(3, "h3", "dom-c", 2)),
     OK_PICK(0)},
};

/* covers: R-SRC-1 R-SRC-3 */
START_TEST(test_source_table)
{
	run_source(&source_cases[_i]);
}
END_TEST

/* Index of the replica with the highest rendezvous score (salt 0). */
static size_t best_by_rendezvous(const char *tenant, const char *key,
				 const mcrepl_replica_view *r, size_t n)
{
	size_t i, best = 0;

	for (i = 1; i < n; i++)
		if (mcrepl_rendezvous(tenant, key, r[i].segment.v, 0) >
		    mcrepl_rendezvous(tenant, key, r[best].segment.v, 0))
			best = i;
	return best;
}

static const size_t perms3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
				    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

/* covers: T-25 R-SRC-4 */
START_TEST(test_source_uses_stable_tie_break)
{
	static const mcrepl_replica_view base[3] = {REP(11, "h1", NULL, 2),
						    REP(22, "h2", NULL, 2),
						    REP(33, "h3", NULL, 2)};
	mcrepl_config cfg;
	mcrepl_place_request req = {.tenant = "tenant-a", .size = 10};
	unsigned chosen[3] = {0, 0, 0};
	char key[32];
	size_t k, p, i, pick, first;
	mcrepl_reason why;

	mcrepl_config_init(&cfg);
	for (k = 0; k < 300; k++) {
		snprintf(key, sizeof(key), "key-%zu", k);
		req.key = key;
		ck_assert_int_eq(
		    mcrepl_place_source(&cfg, &req, base, 3, &pick, &why),
		    MCREPL_OK);
		ck_assert_uint_eq(pick,
				  best_by_rendezvous(req.tenant, key, base, 3));
		chosen[pick]++;
		first = pick;
		/* The same replica wins whatever the input order. */
		for (p = 1; p < 6; p++) {
			mcrepl_replica_view perm[3];

			for (i = 0; i < 3; i++)
				perm[i] = base[perms3[p][i]];
			ck_assert_int_eq(mcrepl_place_source(&cfg, &req, perm,
							     3, &pick, &why),
					 MCREPL_OK);
			ck_assert_uint_eq(perm[pick].segment.v,
					  base[first].segment.v);
		}
	}
	/* Not "always the first": each equal source serves its share. */
	for (i = 0; i < 3; i++)
		ck_assert_msg(chosen[i] >= 60 && chosen[i] <= 140,
			      "source %zu chosen %u times of 300", i,
			      chosen[i]);
}
END_TEST

/* covers: R-DST-6 */
START_TEST(test_target_uses_stable_tie_break)
{
	static const mcrepl_segment_view base[3] = {
	    SEG(11, "h1", NULL, 1000, 100), SEG(22, "h2", NULL, 1000, 100),
	    SEG(33, "h3", NULL, 1000, 100)};
	mcrepl_config cfg;
	mcrepl_place_request req = {.tenant = "tenant-a", .size = 10};
	unsigned chosen[3] = {0, 0, 0};
	char key[32];
	size_t k, p, i, pick, first;
	mcrepl_reason why;

	mcrepl_config_init(&cfg);
	for (k = 0; k < 300; k++) {
		snprintf(key, sizeof(key), "key-%zu", k);
		req.key = key;
		ck_assert_int_eq(mcrepl_place_target(&cfg, &req, base, 3, NULL,
						     0, &pick, &why),
				 MCREPL_OK);
		chosen[pick]++;
		first = pick;
		for (p = 1; p < 6; p++) {
			mcrepl_segment_view perm[3];

			for (i = 0; i < 3; i++)
				perm[i] = base[perms3[p][i]];
			ck_assert_int_eq(mcrepl_place_target(&cfg, &req, perm,
							     3, NULL, 0, &pick,
							     &why),
					 MCREPL_OK);
			ck_assert_uint_eq(perm[pick].id.v, base[first].id.v);
		}
	}
	for (i = 0; i < 3; i++)
		ck_assert_msg(chosen[i] >= 60 && chosen[i] <= 140,
			      "target %zu chosen %u times of 300", i,
			      chosen[i]);
}
END_TEST

/* ---- argument checks, purity --------------------------------------------- */

START_TEST(test_place_einval)
{
	static const mcrepl_replica_view rep[1] = {REP(1, "h1", NULL, 0)};
	static const mcrepl_segment_view seg[1] = {SEG(2, "h2", NULL, 1000, 0)};
	mcrepl_config cfg;
	mcrepl_place_request req = {.tenant = "t", .key = "k", .size = 1};
	size_t pick = NO_PICK;
	mcrepl_reason why = MCREPL_REASON_COUNT;

	mcrepl_config_init(&cfg);
	ck_assert_int_eq(mcrepl_place_source(NULL, &req, rep, 1, &pick, &why),
			 MCREPL_EINVAL);
	ck_assert_int_eq(why, MCREPL_REASON_NONE);
	ck_assert_int_eq(mcrepl_place_source(&cfg, NULL, rep, 1, &pick, &why),
			 MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_place_source(&cfg, &req, rep, 1, NULL, &why),
			 MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_place_source(&cfg, &req, NULL, 1, &pick, &why),
			 MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_place_target(NULL, &req, seg, 1, rep, 1, &pick, &why),
	    MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_place_target(&cfg, NULL, seg, 1, rep, 1, &pick, &why),
	    MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_place_target(&cfg, &req, seg, 1, rep, 1, NULL, &why),
	    MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_place_target(&cfg, &req, NULL, 1, rep, 1, &pick, &why),
	    MCREPL_EINVAL);
	ck_assert_int_eq(
	    mcrepl_place_target(&cfg, &req, seg, 1, NULL, 1, &pick, &why),
	    MCREPL_EINVAL);
	ck_assert_uint_eq(pick, NO_PICK);
	/* Empty arrays may be NULL; why may be NULL. */
	ck_assert_int_eq(mcrepl_place_source(&cfg, &req, NULL, 0, &pick, NULL),
			 MCREPL_EREJECTED);
	ck_assert_int_eq(
	    mcrepl_place_target(&cfg, &req, seg, 1, NULL, 0, &pick, NULL),
	    MCREPL_OK);
	ck_assert_uint_eq(pick, 0);
	ck_assert_int_eq(
	    mcrepl_place_target(&cfg, &req, NULL, 0, NULL, 0, &pick, &why),
	    MCREPL_EREJECTED);
	ck_assert_int_eq(why, MCREPL_REASON_NO_TARGET);
	/* NULL tenant and key read as "". */
	req.tenant = NULL;
	req.key = NULL;
	ck_assert_int_eq(mcrepl_place_source(&cfg, &req, rep, 1, &pick, &why),
			 MCREPL_OK);
	ck_assert_uint_eq(pick, 0);
	ck_assert_uint_eq(mcrepl_rendezvous(NULL, NULL, 7, 3),
			  mcrepl_rendezvous("", "", 7, 3));
}
END_TEST

START_TEST(test_place_allocates_nothing)
{
	static const mcrepl_replica_view rep[2] = {REP(1, "h1", NULL, 0),
						   REP(2, "h2", NULL, 0)};
	static const mcrepl_segment_view seg[2] = {SEG(3, "h3", NULL, 1000, 0),
						   SEG(4, "h4", NULL, 1000, 0)};
	mcrepl_config cfg;
	mcrepl_place_request req = {.tenant = "t", .key = "k", .size = 1};
	size_t pick1 = NO_PICK, pick2 = NO_PICK, order[2];
	mcrepl_status st1, st2, st3;
	long allocs;

	mcrepl_config_init(&cfg);
	test_fail_alloc_after(0);
	st1 = mcrepl_place_source(&cfg, &req, rep, 2, &pick1, NULL);
	st2 = mcrepl_place_target(&cfg, &req, seg, 2, rep, 2, &pick2, NULL);
	st3 = mcrepl_order_replicas("t", "k", rep, NULL, 2, 5, order);
	allocs = test_alloc_count();
	test_fail_alloc_after(-1);
	ck_assert_int_eq(allocs, 0);
	ck_assert_int_eq(st1, MCREPL_OK);
	ck_assert_int_eq(st2, MCREPL_OK);
	ck_assert_int_eq(st3, MCREPL_OK);
}
END_TEST

/* ---- rendezvous ---------------------------------------------------------- */

/* covers: R-SRC-4 R-DST-6 */
START_TEST(test_rendezvous_golden)
{
	/* Pinned values (checked against an independent reference written
	 * from the algorithm in place.c): the score must not change across
	 * platforms or releases, or placements of existing keys would move. */
	ck_assert_uint_eq(mcrepl_rendezvous("t", "k", 1, 0),
			  UINT64_C(0x2f3448118f3a12f4));
	ck_assert_uint_eq(
	    mcrepl_rendezvous("tenant-a", "a-longer-key/0001", 42, 7),
	    UINT64_C(0x987db52a3edb2688));
	ck_assert_uint_eq(mcrepl_rendezvous("", "", 0, 0),
			  UINT64_C(0x12f8e90af1ff0028));
}
END_TEST

START_TEST(test_rendezvous_inputs_all_count)
{
	uint64_t base = mcrepl_rendezvous("t", "key", 1, 0);

	ck_assert_uint_eq(base, mcrepl_rendezvous("t", "key", 1, 0));
	ck_assert_uint_ne(base, mcrepl_rendezvous("u", "key", 1, 0));
	ck_assert_uint_ne(base, mcrepl_rendezvous("t", "kez", 1, 0));
	ck_assert_uint_ne(base, mcrepl_rendezvous("t", "key", 2, 0));
	ck_assert_uint_ne(base, mcrepl_rendezvous("t", "key", 1, 1));
	/* Tenant and key are framed: moving a byte across changes it. */
	ck_assert_uint_ne(mcrepl_rendezvous("ab", "c", 1, 0),
			  mcrepl_rendezvous("a", "bc", 1, 0));
	ck_assert_uint_ne(mcrepl_rendezvous("", "tkey", 1, 0),
			  mcrepl_rendezvous("tkey", "", 1, 0));
}
END_TEST

/* ---- reader order -------------------------------------------------------- */

typedef struct order_case {
	const char *name;
	mcrepl_replica_view rep[MAX_REP];
	size_t n;
	uint64_t load[MAX_REP];
	bool use_load;
	size_t want[MAX_REP];
} order_case;

static const order_case order_cases[] = {
    {"lower load first",
     {REP(1, "h1", NULL, 0), REP(2, "h2", NULL, 0), REP(3, "h3", NULL, 0)},
     3,
     {30, 10, 20},
     true,
     {1, 2, 0}},
    {"lower load first (other order)",
     {REP(1, "h1", NULL, 0), REP(2, "h2", NULL, 0), REP(3, "h3", NULL, 0)},
     3,
     {10, 30, 20},
     true,
     {0, 2, 1}},
    {"load ties broken by rendezvous, not input order",
     {REP(1, "h1", NULL, 0), REP(2, "h2", NULL, 0), REP(3, "h3", NULL, 0)},
     3,
     {5, 9, 5},
     true,
     {2, 0, 1}},
    {"unreadable last in input order, even with low load",
     {REP_PROC(1, "h1"), REP(2, "h2", NULL, 0), REP_PROC(3, "h3"),
      REP(4, "h4", NULL, 0)},
     4,
     {0, 50, 0, 40},
     true,
     {3, 1, 0, 2}},
    {"all unreadable keep input order",
     {REP_PROC(4, "h1"), REP_PROC(3, "h2"), REP_PROC(2, "h3"),
      REP_PROC(1, "h4")},
     4,
     {0, 0, 0, 0},
     false,
     {0, 1, 2, 3}},
    {"single replica", {REP(1, "h1", NULL, 0)}, 1, {5}, true, {0}},
};

START_TEST(test_order_table)
{
	const order_case *c = &order_cases[_i];
	size_t out[MAX_REP], i;

	memset(out, 0xff, sizeof(out));
	ck_assert_int_eq(mcrepl_order_replicas("t", "k", c->rep,
					       c->use_load ? c->load : NULL,
					       c->n, 0, out),
			 MCREPL_OK);
	for (i = 0; i < c->n; i++)
		ck_assert_msg(out[i] == c->want[i],
			      "%s: out[%zu] = %zu, want %zu", c->name, i,
			      out[i], c->want[i]);
}
END_TEST

START_TEST(test_order_unreadable_last_without_load)
{
	static const mcrepl_replica_view rep[4] = {
	    REP_PROC(1, "h1"), REP(2, "h2", NULL, 0), REP_PROC(3, "h3"),
	    REP(4, "h4", NULL, 0)};
	size_t out[4];
	uint64_t salt;

	for (salt = 0; salt < 50; salt++) {
		ck_assert_int_eq(
		    mcrepl_order_replicas("t", "k", rep, NULL, 4, salt, out),
		    MCREPL_OK);
		ck_assert((out[0] == 1 && out[1] == 3) ||
			  (out[0] == 3 && out[1] == 1));
		ck_assert_uint_eq(out[2], 0);
		ck_assert_uint_eq(out[3], 2);
	}
}
END_TEST

START_TEST(test_order_equal_loads_spread_across_salts)
{
	static const mcrepl_replica_view rep[3] = {REP(11, "h1", NULL, 0),
						   REP(22, "h2", NULL, 0),
						   REP(33, "h3", NULL, 0)};
	static const uint64_t load[3] = {7, 7, 7};
	unsigned first[3] = {0, 0, 0};
	size_t out[3], again[3], i;
	uint64_t salt;

	for (salt = 0; salt < 1000; salt++) {
		ck_assert_int_eq(mcrepl_order_replicas("tenant", "hot-key", rep,
						       load, 3, salt, out),
				 MCREPL_OK);
		/* Equal loads behave like no load at all. */
		ck_assert_int_eq(mcrepl_order_replicas("tenant", "hot-key", rep,
						       NULL, 3, salt, again),
				 MCREPL_OK);
		ck_assert_mem_eq(out, again, sizeof(out));
		ck_assert_uint_eq(out[0] + out[1] + out[2], 3);
		first[out[0]]++;
	}
	for (i = 0; i < 3; i++)
		ck_assert_msg(first[i] >= 250 && first[i] <= 420,
			      "replica %zu first %u times of 1000", i,
			      first[i]);
}
END_TEST

START_TEST(test_order_stable_for_fixed_salt)
{
	static const mcrepl_replica_view base[3] = {REP(11, "h1", NULL, 0),
						    REP(22, "h2", NULL, 0),
						    REP(33, "h3", NULL, 0)};
	size_t out[3], again[3], i, p;
	uint64_t want[3];

	ck_assert_int_eq(
	    mcrepl_order_replicas("t", "k", base, NULL, 3, 42, out), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_order_replicas("t", "k", base, NULL, 3, 42, again),
	    MCREPL_OK);
	ck_assert_mem_eq(out, again, sizeof(out));
	for (i = 0; i < 3; i++)
		want[i] = base[out[i]].segment.v;
	/* Highest rendezvous score first. */
	ck_assert_uint_gt(mcrepl_rendezvous("t", "k", want[0], 42),
			  mcrepl_rendezvous("t", "k", want[1], 42));
	ck_assert_uint_gt(mcrepl_rendezvous("t", "k", want[1], 42),
			  mcrepl_rendezvous("t", "k", want[2], 42));
	/* The order of segments does not depend on the input order. */
	for (p = 1; p < 6; p++) {
		mcrepl_replica_view perm[3];

		for (i = 0; i < 3; i++)
			perm[i] = base[perms3[p][i]];
		ck_assert_int_eq(
		    mcrepl_order_replicas("t", "k", perm, NULL, 3, 42, out),
		    MCREPL_OK);
		for (i = 0; i < 3; i++)
			ck_assert_uint_eq(perm[out[i]].segment.v, want[i]);
	}
}
END_TEST

START_TEST(test_order_einval)
{
	static const mcrepl_replica_view rep[1] = {REP(1, "h1", NULL, 0)};
	size_t out[1] = {NO_PICK};

	ck_assert_int_eq(mcrepl_order_replicas("t", "k", NULL, NULL, 1, 0, out),
			 MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_order_replicas("t", "k", rep, NULL, 1, 0, NULL),
			 MCREPL_EINVAL);
	ck_assert_uint_eq(out[0], NO_PICK);
	ck_assert_int_eq(
	    mcrepl_order_replicas("t", "k", NULL, NULL, 0, 0, NULL), MCREPL_OK);
	ck_assert_int_eq(
	    mcrepl_order_replicas(NULL, NULL, rep, NULL, 1, 0, out), MCREPL_OK);
	ck_assert_uint_eq(out[0], 0);
}
END_TEST

Suite *make_place_suite(void)
{
	Suite *s = suite_create("place");
	TCase *tc_target = tcase_create("target");
	TCase *tc_source = tcase_create("source");
	TCase *tc_order = tcase_create("order");

	tcase_add_loop_test(tc_target, test_target_table, 0,
			    NELEM(target_cases));
	tcase_add_loop_test(tc_target, test_target_avoids_existing_replica_host,
			    0, NELEM(affinity_cases));
	tcase_add_loop_test(
	    tc_target, test_invalid_preferred_target_outside_domain_falls_back,
	    0, NELEM(fallback_cases));
	tcase_add_loop_test(
	    tc_target, test_rejected_when_target_domain_has_no_valid_segment, 0,
	    NELEM(no_domain_target_cases));
	tcase_add_test(tc_target, test_target_in_requester_or_target_domain);
	tcase_add_test(tc_target, test_target_uses_stable_tie_break);
	suite_add_tcase(s, tc_target);

	tcase_add_loop_test(tc_source, test_source_table, 0,
			    NELEM(source_cases));
	tcase_add_test(tc_source, test_source_uses_stable_tie_break);
	tcase_add_test(tc_source, test_place_einval);
	tcase_add_test(tc_source, test_place_allocates_nothing);
	tcase_add_test(tc_source, test_rendezvous_golden);
	tcase_add_test(tc_source, test_rendezvous_inputs_all_count);
	suite_add_tcase(s, tc_source);

	tcase_add_loop_test(tc_order, test_order_table, 0, NELEM(order_cases));
	tcase_add_test(tc_order, test_order_unreadable_last_without_load);
	tcase_add_test(tc_order, test_order_equal_loads_spread_across_salts);
	tcase_add_test(tc_order, test_order_stable_for_fixed_salt);
	tcase_add_test(tc_order, test_order_einval);
	suite_add_tcase(s, tc_order);
	return s;
}
