/*
 * The policy engine's hard cases, through mcrepl/engine.h:
 * room for a hot copy on a full cluster (a swap, its credit, its budget)
 * and retirement that sheds every copy the rule retires in one pass.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mcrepl/mcrepl.h"
#include "hotkey.h"
#include "testutil.h"

#define MIB (1024 * 1024ULL)
#define NOW 1000000ULL

/* Four 100 MiB segments, each holding `used` bytes, fill line `fill`. */
static mcrepl_engine *cluster_at(uint32_t room_permille, uint64_t used,
				 double fill)
{
	mcrepl_engine_opts eo = {.struct_size = sizeof(eo),
				 .room_permille = room_permille};
	mcrepl_engine *e = NULL;
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	c.room_fill_limit = fill;
	ck_assert_int_eq(mcrepl_engine_create(&c, &eo, &e), MCREPL_OK);
	for (uint64_t i = 1; i <= 4; i++) {
		char host[8];
		mcrepl_engine_segment s = {
		    .id = {i},
		    .client = {i},
		    .host = host,
		    .capacity = 100 * MIB,
		    .used = used,
		    .allocatable = true,
		    .can_copy = true,
		};

		snprintf(host, sizeof(host), "h%llu", (unsigned long long)i);
		ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	}
	return e;
}

/* 90 %: over the 0.85 watermark, at the 0.90 fill line (no headroom). */
static mcrepl_engine *full_cluster(uint32_t room_permille)
{
	return cluster_at(room_permille, 90 * MIB, 0.90);
}

/* Full clusters. */
START_TEST(test_engine_room_swaps_a_cold_object_for_a_hot_copy)
{
	mcrepl_engine *e = full_cluster(0);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_propose_result res;
	mcrepl_room room;
	struct hot h;

	for (int i = 0; i < 64; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){1});
	mcrepl_engine_tick(e, NOW, NULL);
	hot_key(&h, "p1", "hot");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason), "no_target");
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_ne(room.segment.v, 1); /* not the key's own host */
	ck_assert_uint_eq(room.bytes, MIB);   /* a swap: the copy's size */
	/* the host evicted the bytes: the segment is credited for this key
	 * though it stays over the watermark */
	ck_assert_int_eq(
	    mcrepl_engine_segment_used(e, room.segment, 89 * MIB, true),
	    MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, room.segment.v);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.room_total, 1);
	ck_assert_uint_eq(st.room_bytes_total, MIB);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The credit is the key's: another key's proposal still finds no target. */
START_TEST(test_engine_room_credit_is_the_keys_own)
{
	mcrepl_engine *e = full_cluster(0);
	mcrepl_propose_result res;
	mcrepl_room room;
	struct hot h, other;

	hot_key(&h, "p1", "hot");
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	hot_key(&other, "p2", "hot");
	other.p.key = "other";
	ck_assert_int_eq(mcrepl_engine_propose(e, &other.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason), "no_target");
	mcrepl_engine_destroy(e);
}
END_TEST

/* Budget: 1 permille of 400 MiB = 419,430 bytes a window; the window's
 * first swap (1 MiB) passes, the next key's is refused until the window
 * turns; the same key asked again is not charged. */
START_TEST(test_engine_room_budget_per_window)
{
	mcrepl_engine *e = full_cluster(1);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_room room;
	struct hot a, b;
	uint64_t w = 10000; /* the default heat window */

	mcrepl_engine_tick(e, NOW, NULL);
	hot_key(&a, "p1", "hot");
	hot_key(&b, "p2", "hot");
	b.p.key = "b";
	ck_assert_int_eq(mcrepl_engine_room(e, &a.in, &room), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_room(e, &a.in, &room), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_room(e, &b.in, &room), MCREPL_EFULL);
	mcrepl_engine_tick(e, (NOW / w + 1) * w, NULL);
	ck_assert_int_eq(mcrepl_engine_room(e, &b.in, &room), MCREPL_OK);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.room_total, 3);
	ck_assert_uint_eq(st.room_bytes_total, 2 * MIB);
	ck_assert_uint_eq(st.room_budget_total, 1);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Room the host could not make (too little to evict under the room rule)
 * is reported back: its bytes return to the window's budget, so the next
 * key gets room, and the segment is no longer credited for the key. */
START_TEST(test_engine_room_refused_gives_the_budget_back)
{
	mcrepl_engine *e = full_cluster(1);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_propose_result res;
	mcrepl_room room, again;
	struct hot a, b;

	mcrepl_engine_tick(e, NOW, NULL);
	hot_key(&a, "p1", "hot");
	hot_key(&b, "p2", "hot");
	b.p.key = "b";
	ck_assert_int_eq(mcrepl_engine_room(e, &a.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, MIB);
	ck_assert_int_eq(mcrepl_engine_room_refused(e, &a.in, &room),
			 MCREPL_OK);
	/* the segment is not credited: a's proposal finds no target */
	ck_assert_int_eq(mcrepl_engine_propose(e, &a.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason), "no_target");
	/* the budget is whole again: b's swap is the window's first */
	ck_assert_int_eq(mcrepl_engine_room(e, &b.in, &again), MCREPL_OK);
	ck_assert_uint_eq(again.bytes, MIB);
	/* nothing more to give back for a, nor for b twice */
	ck_assert_int_eq(mcrepl_engine_room_refused(e, &a.in, &room),
			 MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_engine_room_refused(e, &b.in, &again),
			 MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_room_refused(e, &b.in, &again),
			 MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_engine_room_refused(e, NULL, &again),
			 MCREPL_EINVAL);
	ck_assert_int_eq(mcrepl_engine_room_refused(e, &b.in, NULL),
			 MCREPL_EINVAL);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.room_total, 2);
	ck_assert_uint_eq(st.room_budget_total, 0);
	mcrepl_engine_destroy(e);
}
END_TEST

/* No room asked where there is room, nor under policy rfc, nor with room
 * turned off. */
START_TEST(test_engine_room_refusals)
{
	mcrepl_engine_opts eo = {.struct_size = sizeof(eo),
				 .room_permille = MCREPL_ENGINE_NO_ROOM};
	mcrepl_engine *e = full_cluster(0), *off = NULL;
	mcrepl_config c;
	mcrepl_room room;
	struct hot h;

	hot_key(&h, "p1", "hot");
	ck_assert_int_eq(mcrepl_engine_segment_used(e, (mcrepl_segment_id){3},
						    10 * MIB, true),
			 MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_ENOENT);
	ck_assert_int_eq(mcrepl_engine_room(e, NULL, &room), MCREPL_EINVAL);
	mcrepl_engine_destroy(e);
	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	c.policy = MCREPL_POLICY_RFC;
	ck_assert_int_eq(mcrepl_engine_create(&c, NULL, &off), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_room(off, &h.in, &room), MCREPL_ENOENT);
	mcrepl_engine_destroy(off);
	c.policy = MCREPL_POLICY_AUTO;
	ck_assert_int_eq(mcrepl_engine_create(&c, &eo, &off), MCREPL_OK);
	ck_assert_int_eq(mcrepl_engine_room(off, &h.in, &room), MCREPL_ENOENT);
	mcrepl_engine_destroy(off);
}
END_TEST

static void cold_probe(void *ctx, const char *tenant, const char *key,
		       const char *domain, mcrepl_retire_probe *out)
{
	(void)tenant;
	(void)key;
	(void)domain;
	out->count = 0;
	out->readable = *(const uint32_t *)ctx;
}

/* Retirement that keeps up with a shifting hot set. */
START_TEST(test_engine_retire_sheds_every_cold_copy_in_one_pass)
{
	mcrepl_engine *e = full_cluster(0);
	mcrepl_retirement out[8];
	uint32_t readable = 4; /* the primary and 3 dynamic copies */
	uint64_t w = 80000;    /* a window boundary (8 buckets of 1250 ms) */
	size_t n = 0;
	bool seen[5] = {false};

	for (uint64_t s = 2; s <= 4; s++)
		ck_assert_int_eq(mcrepl_engine_replica_added(
				     e, "t", "k", (mcrepl_segment_id){s}),
				 MCREPL_OK);
	mcrepl_engine_tick(e, w - 1250, NULL);
	mcrepl_engine_tick(e, w, NULL);
	ck_assert_uint_eq(
	    mcrepl_engine_retire(e, w, cold_probe, &readable, out, 8, &n), 1);
	ck_assert_uint_eq(n, 3); /* all three, not one a window */
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_ge(out[i].segment.v, 2);
		ck_assert_uint_le(out[i].segment.v, 4);
		ck_assert(!seen[out[i].segment.v]);
		seen[out[i].segment.v] = true;
		ck_assert_str_eq(out[i].key, "k");
	}
	/* at most cap: a cap of 2 hands out two */
	mcrepl_engine_destroy(e);
	e = full_cluster(0);
	for (uint64_t s = 2; s <= 4; s++)
		mcrepl_engine_replica_added(e, "t", "k",
					    (mcrepl_segment_id){s});
	mcrepl_engine_tick(e, w - 1250, NULL);
	mcrepl_engine_tick(e, w, NULL);
	mcrepl_engine_retire(e, w, cold_probe, &readable, out, 2, &n);
	ck_assert_uint_eq(n, 2);
	mcrepl_engine_destroy(e);
}
END_TEST

/* The room rule: copies whose object stays readable go first (a dynamic
 * replica before a duplicate), whatever their reads; with the default
 * knob (0) an only copy is never evicted for room. */
/* Headroom: at 87 % (over the 0.85 watermark) a 1 MiB copy still fits
 * under the 0.90 fill line: room is granted with nothing to evict and
 * the copy goes there, by projected load (not the key's own host). */
START_TEST(test_engine_room_headroom_under_the_fill_line)
{
	mcrepl_engine *e = cluster_at(0, 87 * MIB, 0.90);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_propose_result res;
	mcrepl_room room;
	struct hot h;

	for (int i = 0; i < 64; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){1});
	mcrepl_engine_read(e, (mcrepl_segment_id){2});
	mcrepl_engine_tick(e, NOW, NULL);
	hot_key(&h, "p1", "hot");
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res),
			 MCREPL_EREJECTED);
	ck_assert_str_eq(mcrepl_reason_name(res.reason), "no_target");
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.segment.v, 3); /* least loaded, lowest id */
	ck_assert_uint_eq(room.bytes, 0);     /* nothing to evict */
	ck_assert_int_eq(mcrepl_engine_propose(e, &h.in, &res), MCREPL_OK);
	ck_assert_uint_eq(res.lease.target.v, 3);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.room_total, 1);
	ck_assert_uint_eq(st.room_bytes_total, 0);
	ck_assert_uint_eq(st.room_headroom_total, 1);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Above the fill line (89.5 % + 1 % > 90 %), or with the line at the
 * watermark (headroom off), room is a swap of the copy's size. */
START_TEST(test_engine_room_no_headroom_above_the_fill_line)
{
	mcrepl_engine *e = cluster_at(0, 89 * MIB + MIB / 2, 0.90);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_room room;
	struct hot h;

	hot_key(&h, "p1", "hot");
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, MIB);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.room_headroom_total, 0);
	mcrepl_engine_destroy(e);
	e = cluster_at(0, 87 * MIB, 0.85);
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, MIB);
	mcrepl_engine_destroy(e);
	/* exactly at the line: 89 + 1 = 90 MiB fits, 90 % of 100 MiB */
	e = cluster_at(0, 89 * MIB, 0.90);
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, 0);
	mcrepl_engine_destroy(e);
}
END_TEST

START_TEST(test_room_rule_default_keeps_only_copies)
{
	mcrepl_config c;
	mcrepl_room_victim dyn = {
	    .dynamic = true, .other_readable = 1, .reads = 1000};
	mcrepl_room_victim dup = {.other_readable = 2, .reads = 1000};
	mcrepl_room_victim only = {.reads = 0};
	mcrepl_room_victim lost_primary = {.dynamic = true};

	mcrepl_config_init(&c);
	ck_assert_uint_eq(c.room_miss_cost, 0);
	ck_assert_int_eq(mcrepl_room_classify(&c, &dyn, 0),
			 MCREPL_ROOM_DYNAMIC);
	ck_assert_int_eq(mcrepl_room_classify(&c, &dup, 0),
			 MCREPL_ROOM_DUPLICATE);
	ck_assert_int_eq(mcrepl_room_classify(&c, &only, UINT64_MAX),
			 MCREPL_ROOM_KEEP);
	/* a dynamic replica that is its object's only copy is one */
	ck_assert_int_eq(mcrepl_room_classify(&c, &lost_primary, UINT64_MAX),
			 MCREPL_ROOM_KEEP);
	ck_assert_int_eq(mcrepl_room_classify(NULL, &dyn, 0), MCREPL_ROOM_KEEP);
	ck_assert_int_eq(mcrepl_room_classify(&c, NULL, 0), MCREPL_ROOM_KEEP);
}
END_TEST

/* Headroom is scarce (a copy or so a node at the fill line): it goes to
 * copies that lower the busiest node. A key whose replicas are all more
 * than balance_tolerance (5 %) under the busiest node gets none; one
 * within it does, when its copy would take at least that 5 % off. */
START_TEST(test_engine_room_headroom_goes_to_the_peak)
{
	mcrepl_engine *e = cluster_at(0, 87 * MIB, 0.90);
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_room room;
	struct hot cool, near, top;

	for (int i = 0; i < 64; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){1});
	for (int i = 0; i < 60; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){2});
	for (int i = 0; i < 61; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){3});
	mcrepl_engine_tick(e, NOW, NULL);
	hot_key(&cool, "p1", "hot");
	cool.p.key = "cool";
	cool.r.segment.v = cool.r.client.v = 2;
	cool.r.host = "h2";
	ck_assert_int_eq(mcrepl_engine_room(e, &cool.in, &room),
			 MCREPL_ENOENT); /* 60 < 0.95 x 64 */
	hot_key(&near, "p2", "hot");
	near.p.key = "near";
	near.r.segment.v = near.r.client.v = 3;
	near.r.host = "h3";
	ck_assert_int_eq(mcrepl_engine_room(e, &near.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.segment.v, 4);
	ck_assert_uint_eq(room.bytes, 0);
	/* on the busiest node but too cold to lower it by the tolerance:
	 * relief 6 / (1 + 1) = 3 reads < 0.05 x 64 */
	hot_key(&top, "p3", "hot");
	top.in.heat_count = 6;
	ck_assert_int_eq(mcrepl_engine_room(e, &top.in, &room), MCREPL_ENOENT);
	top.in.heat_count = 7; /* 3 reads still: 7 / 2 rounds down */
	ck_assert_int_eq(mcrepl_engine_room(e, &top.in, &room), MCREPL_ENOENT);
	top.in.heat_count = 8; /* 4 reads >= 3.2 */
	ck_assert_int_eq(mcrepl_engine_room(e, &top.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.bytes, 0);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.room_total, 2);
	ck_assert_uint_eq(st.room_headroom_total, 2);
	ck_assert_uint_eq(st.room_none_total, 3);
	mcrepl_engine_destroy(e);
}
END_TEST

/* Four segments at 87 %, read 64 / `two` / `two` + 1 / 0 times, the
 * idle one (4) at the fill line: headroom only on 2 and 3. */
static mcrepl_engine *busy_headroom(int two)
{
	mcrepl_engine *e = cluster_at(0, 87 * MIB, 0.90);

	for (int i = 0; i < 64; i++)
		mcrepl_engine_read(e, (mcrepl_segment_id){1});
	for (int i = 0; i < two; i++) {
		mcrepl_engine_read(e, (mcrepl_segment_id){2});
		mcrepl_engine_read(e, (mcrepl_segment_id){3});
	}
	mcrepl_engine_read(e, (mcrepl_segment_id){3});
	ck_assert_int_eq(mcrepl_engine_segment_used(e, (mcrepl_segment_id){4},
						    90 * MIB, true),
			 MCREPL_OK);
	mcrepl_engine_tick(e, NOW, NULL);
	return e;
}

/* Nor does headroom go onto a node the copy could not take the tolerance
 * (5 % of the busiest, 3.2 reads) off before it is as busy as the key's
 * busiest replica: 61 + 3.2 > 64, 60 + 3.2 <= 64. */
START_TEST(test_engine_room_headroom_not_onto_a_busy_node)
{
	mcrepl_engine *e = busy_headroom(61);
	mcrepl_room room;
	struct hot h;

	hot_key(&h, "p1", "hot");
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_ENOENT);
	mcrepl_engine_destroy(e);
	e = busy_headroom(60);
	ck_assert_int_eq(mcrepl_engine_room(e, &h.in, &room), MCREPL_OK);
	ck_assert_uint_eq(room.segment.v, 2);
	ck_assert_uint_eq(room.bytes, 0);
	mcrepl_engine_destroy(e);
}
END_TEST

/* With a cost: an only copy goes when cost * max(1, reads) < relief,
 * relief = the hot key's reads / (its readable copies + 1). */
START_TEST(test_room_rule_only_copy_when_cheaper_than_relief)
{
	mcrepl_config c;
	mcrepl_room_victim unread = {.reads = 0}, read3 = {.reads = 3};
	mcrepl_room_victim huge = {.reads = UINT64_MAX / 2};

	mcrepl_config_init(&c);
	ck_assert_int_eq(mcrepl_config_set(&c, "room_miss_cost", "10"),
			 MCREPL_OK);
	ck_assert_uint_eq(c.room_miss_cost, 10);
	ck_assert_uint_eq(mcrepl_room_relief(64, 1), 32);
	ck_assert_uint_eq(mcrepl_room_relief(64, 0), 64);
	ck_assert_uint_eq(mcrepl_room_relief(UINT64_MAX, UINT32_MAX),
			  UINT64_MAX / ((uint64_t)UINT32_MAX + 1));
	/* never read: taken as one miss, 10 reads' worth */
	ck_assert_int_eq(mcrepl_room_classify(&c, &unread, 10),
			 MCREPL_ROOM_KEEP);
	ck_assert_int_eq(mcrepl_room_classify(&c, &unread, 11),
			 MCREPL_ROOM_ONLY_COPY);
	ck_assert_int_eq(mcrepl_room_classify(&c, &read3, 30),
			 MCREPL_ROOM_KEEP);
	ck_assert_int_eq(mcrepl_room_classify(&c, &read3, 31),
			 MCREPL_ROOM_ONLY_COPY);
	/* cost * reads past 64 bits: kept, never wrapped */
	ck_assert_int_eq(mcrepl_room_classify(&c, &huge, UINT64_MAX),
			 MCREPL_ROOM_KEEP);
	/* a caller whose config predates the knob: the default */
	c.struct_size = (uint32_t)offsetof(mcrepl_config, room_miss_cost);
	ck_assert_int_eq(mcrepl_room_classify(&c, &unread, UINT64_MAX),
			 MCREPL_ROOM_KEEP);
	/* the knob's range */
	mcrepl_config_init(&c);
	ck_assert_int_eq(mcrepl_config_set(&c, "room_miss_cost", "-1"),
			 MCREPL_EPARSE);
	ck_assert_int_eq(mcrepl_config_set(&c, "room_miss_cost", "1000000001"),
			 MCREPL_ERANGE);
}
END_TEST

Suite *make_engine_room_suite(void)
{
	Suite *s = suite_create("engine_room");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_engine_room_swaps_a_cold_object_for_a_hot_copy);
	tcase_add_test(tc, test_engine_room_credit_is_the_keys_own);
	tcase_add_test(tc, test_engine_room_budget_per_window);
	tcase_add_test(tc, test_engine_room_refusals);
	tcase_add_test(tc, test_engine_room_refused_gives_the_budget_back);
	tcase_add_test(tc,
		       test_engine_retire_sheds_every_cold_copy_in_one_pass);
	tcase_add_test(tc, test_engine_room_headroom_under_the_fill_line);
	tcase_add_test(tc, test_engine_room_no_headroom_above_the_fill_line);
	tcase_add_test(tc, test_engine_room_headroom_goes_to_the_peak);
	tcase_add_test(tc, test_engine_room_headroom_not_onto_a_busy_node);
	tcase_add_test(tc, test_room_rule_default_keeps_only_copies);
	tcase_add_test(tc, test_room_rule_only_copy_when_cheaper_than_relief);
	suite_add_tcase(s, tc);
	return s;
}
