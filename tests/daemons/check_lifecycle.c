/*
 * The reservation lifecycle on the master's store itself, with
 * the clock in the test's hands: every reservation has an owner and a
 * deadline and is given back when either goes; per-object metadata stays
 * bounded whatever clients send; worker loss is counted.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "flags.h"
#include "store.h"

Suite *make_lifecycle_suite(void);

#define MIB (1024 * 1024)
#define CA 0xa1
#define CB 0xb2
#define CW 0x77 /* a writer / copier, no segment */

struct fx {
	struct store *s;
	uint64_t seg_a, seg_b;
	uint64_t now;
};

static uint64_t mount_seg(struct fx *x, uint64_t client, const char *name,
			  const char *domain)
{
	struct mount_args a = {
	    .client_id = client,
	    .host = name,
	    .domain = domain,
	    .name = name,
	    .endpoint = "127.0.0.1:1",
	    .capacity = 64 * MIB,
	    .dynamic_copy = true,
	};
	char err[128];
	uint64_t id = 0;

	ck_assert_int_eq(store_mount(x->s, &a, x->now, &id, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	return id;
}

static void fx_start_opts(struct fx *x, const struct master_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->now = 1000000;
	static const uint8_t secret[GRANT_SECRET_BYTES] = "lifecycle-key!!";

	ck_assert_int_eq(store_create(o, secret, 7, &x->s), 0);
	store_lock(x->s);
	x->seg_a = mount_seg(x, CA, "seg-a", "");
	x->seg_b = mount_seg(x, CB, "seg-b", "");
}

static void fx_start(struct fx *x)
{
	struct master_opts o;

	master_opts_defaults(&o);
	fx_start_opts(x, &o);
}

static void fx_stop(struct fx *x)
{
	store_unlock(x->s);
	store_destroy(x->s);
}

static uint64_t used(struct fx *x)
{
	struct store_figures f;

	store_figures(x->s, &f);
	return f.used;
}

static struct store_figures figures(struct fx *x)
{
	struct store_figures f;

	store_figures(x->s, &f);
	return f;
}

/* Both mounted clients heartbeat at x->now. */
static void beat(struct fx *x, uint64_t client)
{
	ck_assert_int_eq(store_heartbeat(x->s, client, NULL, NULL, 0, x->now),
			 MCREPL_RPC__CODE__OK);
}

static void tick(struct fx *x)
{
	uint64_t last_evict = x->now;

	store_tick(x->s, x->now, &last_evict);
}

static struct object *put_start(struct fx *x, const char *key, uint64_t owner)
{
	struct object *o = NULL;
	char err[128];

	ck_assert_int_eq(store_put_start(x->s, "t", key, 4096, 1, x->now, &o,
					 err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	store_put_owner(x->s, o, owner);
	return o;
}

static void put_done(struct fx *x, const char *key)
{
	struct object *o = put_start(x, key, 0);

	ck_assert_int_eq(store_put_end(x->s, "t", key, o->version),
			 MCREPL_RPC__CODE__OK);
}

/* ---- item 3: puts --------------------------------------------------------- */

START_TEST(test_lifecycle3_abandoned_put_is_reclaimed)
{
	const struct master_opts *o;
	struct fx x;

	fx_start(&x);
	o = store_opts(x.s);
	ck_assert_uint_eq(o->put_release_ms, 600000); /* the flag table's */
	ck_assert_uint_eq(o->put_discard_ms, 30000);
	put_start(&x, "k", 0);
	ck_assert_uint_eq(used(&x), store_region_bytes(4096));
	x.now += o->put_release_ms - 1;
	beat(&x, CA);
	beat(&x, CB);
	tick(&x);
	ck_assert_ptr_nonnull(store_find(x.s, "t", "k"));
	x.now += 1;
	tick(&x);
	ck_assert_ptr_null(store_find(x.s, "t", "k"));
	ck_assert_uint_eq(used(&x), 0);
	ck_assert_uint_eq(figures(&x).reclaimed.put_deadline, 1);
	/* an ended put is never reclaimed */
	put_done(&x, "k");
	x.now += 2 * o->put_release_ms;
	beat(&x, CA);
	beat(&x, CB);
	tick(&x);
	ck_assert(store_exists(x.s, "t", "k"));
	ck_assert_uint_eq(figures(&x).reclaimed.put_deadline, 1);
	fx_stop(&x);
}
END_TEST

START_TEST(test_lifecycle3_put_of_an_expired_writer_is_reclaimed)
{
	struct fx x;
	uint64_t seg_w;

	fx_start(&x);
	seg_w = mount_seg(&x, CW, "seg-w", ""); /* the writer is a client */
	(void)seg_w;
	put_start(&x, "k", CW);
	put_start(&x, "other", CA); /* a live writer's put stays */
	x.now += store_opts(x.s)->client_ttl_ms + 1;
	beat(&x, CA);
	beat(&x, CB);
	tick(&x);
	ck_assert_ptr_null(store_find(x.s, "t", "k"));
	ck_assert_ptr_nonnull(store_find(x.s, "t", "other"));
	ck_assert_uint_eq(figures(&x).reclaimed.put_owner, 1);
	/* the writer may only be stopped and still holds its WRITE grant:
	 * its region stays allocated until the grant expires
	 * (put_discard_ms after PutStart), never handed to another object
	 * that the late writer could overwrite */
	ck_assert_uint_eq(figures(&x).quarantined, 1);
	ck_assert_uint_eq(used(&x), 2 * store_region_bytes(4096));
	x.now += store_opts(x.s)->put_discard_ms;
	beat(&x, CA);
	beat(&x, CB);
	tick(&x);
	ck_assert_uint_eq(used(&x), store_region_bytes(4096));
	fx_stop(&x);
}
END_TEST

/* ---- item 4: ordinary copies ---------------------------------------------- */

static McreplRpc__Code copy_start(struct fx *x, uint64_t caller,
				  const char *key)
{
	struct replica src, dst;
	char err[128];

	return store_copy_start(x->s, caller, "t", key, x->seg_a, x->seg_b,
				x->now, &src, &dst, err, sizeof(err));
}

/* k complete with its replica on seg_a */
static void put_on_a(struct fx *x, const char *key)
{
	struct object *o;

	put_done(x, key);
	o = store_find(x->s, "t", key);
	ck_assert_uint_eq(o->replicas[0].segment_id, x->seg_a);
}

START_TEST(test_lifecycle4_copy_end_by_another_client_is_denied)
{
	struct fx x;
	struct object *o;

	fx_start(&x);
	put_on_a(&x, "k");
	ck_assert_int_eq(copy_start(&x, CW, "k"), MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(store_copy_finish(x.s, CW + 1, "t", "k", true, x.now),
			 MCREPL_RPC__CODE__PERMISSION_DENIED);
	ck_assert_int_eq(store_copy_finish(x.s, CW + 1, "t", "k", false, x.now),
			 MCREPL_RPC__CODE__PERMISSION_DENIED);
	o = store_find(x.s, "t", "k");
	ck_assert_uint_eq(o->n_replicas, 2);
	ck_assert_int_eq(o->replicas[1].status, REPLICA_PROCESSING);
	ck_assert_uint_eq(o->copies, 1);
	ck_assert_int_eq(store_copy_finish(x.s, CW, "t", "k", true, x.now),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(o->replicas[1].status, REPLICA_COMPLETE);
	ck_assert_uint_eq(o->copies, 0);
	fx_stop(&x);
}
END_TEST

START_TEST(test_lifecycle4_abandoned_copy_is_reclaimed)
{
	struct fx x;
	struct object *o;
	char err[128];

	fx_start(&x);
	ck_assert_uint_eq(store_opts(x.s)->copy_release_ms, 60000);
	put_on_a(&x, "k");
	ck_assert_int_eq(copy_start(&x, CW, "k"), MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(used(&x), 2 * store_region_bytes(4096));
	x.now += store_opts(x.s)->copy_release_ms;
	beat(&x, CA);
	beat(&x, CB);
	tick(&x);
	o = store_find(x.s, "t", "k");
	ck_assert_uint_eq(o->n_replicas, 1);
	ck_assert_uint_eq(o->copies, 0);
	ck_assert_uint_eq(used(&x), store_region_bytes(4096));
	ck_assert_uint_eq(figures(&x).reclaimed.copy_deadline, 1);
	/* unpinned: a late CopyEnd finds nothing, Remove works */
	ck_assert_int_eq(store_copy_finish(x.s, CW, "t", "k", true, x.now),
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert_int_eq(store_remove(x.s, "t", "k", x.now, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(used(&x), 0);
	fx_stop(&x);
}
END_TEST

START_TEST(test_lifecycle4_copy_of_an_expired_owner_is_reclaimed)
{
	struct fx x;
	struct object *o;

	fx_start(&x);
	mount_seg(&x, CW, "seg-w", "");
	put_on_a(&x, "k");
	ck_assert_int_eq(copy_start(&x, CW, "k"), MCREPL_RPC__CODE__OK);
	x.now += store_opts(x.s)->client_ttl_ms + 1;
	beat(&x, CA);
	beat(&x, CB);
	tick(&x);
	o = store_find(x.s, "t", "k");
	ck_assert_uint_eq(o->n_replicas, 1);
	ck_assert_uint_eq(o->copies, 0);
	ck_assert_uint_eq(o->copy_target, 0);
	ck_assert_uint_eq(figures(&x).reclaimed.copy_owner, 1);
	ck_assert_int_eq(copy_start(&x, CA, "k"), MCREPL_RPC__CODE__OK);
	fx_stop(&x);
}
END_TEST

/* The copy's source is lost before the deadline: the reclaim leaves no
 * empty object behind. */
START_TEST(test_lifecycle4_reclaimed_copy_of_a_lost_source_leaves_no_object)
{
	struct fx x;
	struct object *o;

	fx_start(&x);
	put_on_a(&x, "k");
	ck_assert_int_eq(copy_start(&x, CW, "k"), MCREPL_RPC__CODE__OK);
	x.now += store_opts(x.s)->client_ttl_ms + 1;
	beat(&x, CB); /* A, the source, goes */
	tick(&x);
	o = store_find(x.s, "t", "k");
	ck_assert_ptr_nonnull(o); /* pinned by the copy */
	ck_assert_uint_eq(o->n_replicas, 1);
	x.now += store_opts(x.s)->copy_release_ms;
	beat(&x, CB);
	tick(&x);
	ck_assert_ptr_null(store_find(x.s, "t", "k"));
	ck_assert_uint_eq(used(&x), 0);
	fx_stop(&x);
}
END_TEST

/* ---- item 9: heartbeats ----------------------------------------------------- */

START_TEST(test_lifecycle9_oversized_heartbeat_is_refused)
{
	static uint64_t ids[5000], reads[5000];
	struct fx x;

	fx_start(&x);
	ck_assert_int_eq(store_heartbeat(x.s, CA, ids, reads, 5000, x.now),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	ck_assert_uint_eq(figures(&x).heartbeats_refused, 1);
	/* ids beyond the client's mounted segments are ignored */
	for (size_t i = 0; i < 4096; i++)
		ids[i] = x.seg_a;
	ck_assert_int_eq(store_heartbeat(x.s, CA, ids, reads, 4096, x.now),
			 MCREPL_RPC__CODE__OK);
	fx_stop(&x);
}
END_TEST

/* ---- item 11: lost replicas ------------------------------------------------- */

START_TEST(test_lifecycle11_worker_loss_counts_lost_replicas)
{
	struct fx x;
	struct object *o;

	fx_start(&x);
	put_on_a(&x, "one"); /* its only replica is on seg_a */
	o = NULL;
	{
		char err[128];

		ck_assert_int_eq(store_put_start(x.s, "t", "two", 4096, 2,
						 x.now, &o, err, sizeof(err)),
				 MCREPL_RPC__CODE__OK);
		ck_assert_int_eq(store_put_end(x.s, "t", "two", o->version),
				 MCREPL_RPC__CODE__OK);
	}
	x.now += store_opts(x.s)->client_ttl_ms + 1;
	beat(&x, CB); /* A goes */
	tick(&x);
	ck_assert_uint_eq(figures(&x).replicas_lost, 2);
	ck_assert_uint_eq(figures(&x).objects_lost, 1);
	ck_assert(!store_exists(x.s, "t", "one"));
	ck_assert(store_exists(x.s, "t", "two"));
	fx_stop(&x);
}
END_TEST

/* A drained worker's segment leaves with its replicas served elsewhere:
 * those are not lost (a clean drain counted every one as lost and warned
 * "segments gone: N replicas lost"); an object the drain could not move
 * before the unmount still is. */
START_TEST(test_lifecycle11_drained_worker_loses_only_what_stayed)
{
	struct store_drain_figures f;
	struct object *o = NULL;
	struct fx x;
	char err[128];

	fx_start(&x);
	put_on_a(&x, "only-a");
	ck_assert_int_eq(store_put_start(x.s, "t", "both", 4096, 2, x.now, &o,
					 err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(store_put_end(x.s, "t", "both", o->version),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(store_drain_worker(x.s, CA, NULL, x.now, &f),
			 MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(f.objects_left, 1); /* only-a: queued, never run */
	ck_assert_int_eq(store_unmount(x.s, CA, x.seg_a, x.now),
			 MCREPL_RPC__CODE__OK);
	while (store_drain(x.s, x.now))
		;
	ck_assert_uint_eq(figures(&x).replicas_lost, 1);
	ck_assert_uint_eq(figures(&x).objects_lost, 1);
	ck_assert(!store_exists(x.s, "t", "only-a"));
	ck_assert(store_exists(x.s, "t", "both"));
	fx_stop(&x);
}
END_TEST

/* ---- item 10: per-object metadata is bounded ------------------------------ */

static void read_from(struct fx *x, const char *key, const char *domain)
{
	struct object *o;
	size_t order[8], n;

	ck_assert_int_eq(
	    store_get(x->s, "t", key, domain, x->now, &o, order, 8, &n),
	    MCREPL_RPC__CODE__OK);
}

START_TEST(test_lifecycle10_invented_domains_get_no_heat_slots)
{
	struct master_opts o;
	struct fx x;
	struct object *obj;
	char name[32];

	master_opts_defaults(&o);
	o.cfg.mode = MCREPL_MODE_ENFORCE;
	o.cfg.domain_aware = true;
	fx_start_opts(&x, &o);
	put_on_a(&x, "k");
	obj = store_find(x.s, "t", "k");
	for (int i = 0; i < 8; i++) { /* 8 real domains, one gone later */
		snprintf(name, sizeof(name), "d%d", i);
		mount_seg(&x, 0x100 + (uint64_t)i, name, name);
	}
	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "invented-%d", i);
		read_from(&x, "k", name);
	}
	ck_assert_uint_eq(obj->n_dheat, 0);
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		read_from(&x, "k", name);
	}
	ck_assert_uint_eq(obj->n_dheat, 8);
	/* full; a new real domain takes the slot of one no longer mounted */
	mount_seg(&x, 0x200, "d8", "d8");
	read_from(&x, "k", "d8");
	ck_assert_uint_eq(obj->n_dheat, 8);
	ck_assert_int_eq(
	    store_unmount(x.s, 0x100, store_segment_at(x.s, 2)->id, x.now),
	    MCREPL_RPC__CODE__OK);
	read_from(&x, "k", "d8");
	ck_assert_uint_eq(obj->n_dheat, 8);
	{
		bool found = false;

		for (int i = 0; i < obj->n_dheat; i++)
			found |= strcmp(obj->dheat[i].domain, "d8") == 0;
		ck_assert(found);
	}
	fx_stop(&x);
}
END_TEST

Suite *make_lifecycle_suite(void)
{
	Suite *s = suite_create("lifecycle");
	TCase *tc = tcase_create("lifecycle");

	tcase_add_test(tc, test_lifecycle3_abandoned_put_is_reclaimed);
	tcase_add_test(tc,
		       test_lifecycle3_put_of_an_expired_writer_is_reclaimed);
	tcase_add_test(tc,
		       test_lifecycle4_copy_end_by_another_client_is_denied);
	tcase_add_test(tc, test_lifecycle4_abandoned_copy_is_reclaimed);
	tcase_add_test(tc,
		       test_lifecycle4_copy_of_an_expired_owner_is_reclaimed);
	tcase_add_test(
	    tc,
	    test_lifecycle4_reclaimed_copy_of_a_lost_source_leaves_no_object);
	tcase_add_test(tc, test_lifecycle9_oversized_heartbeat_is_refused);
	tcase_add_test(tc, test_lifecycle10_invented_domains_get_no_heat_slots);
	tcase_add_test(tc, test_lifecycle11_worker_loss_counts_lost_replicas);
	tcase_add_test(tc,
		       test_lifecycle11_drained_worker_loses_only_what_stayed);
	suite_add_tcase(s, tc);
	return s;
}
