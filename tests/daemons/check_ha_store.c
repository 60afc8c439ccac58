/*
 * The store's side of master HA (store_ha.c, alloc.c's alloc_at), with the
 * clock in the test's hands: exact-range allocation, the term in versions
 * and old-term puts refused, the journal fed to a worker and forgotten
 * once acknowledged, re-registration (objects recreated with their own
 * incarnation, overlaps and other versions refused, dynamic copies kept
 * as such), segment holds.
 */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "alloc.h"
#include "flags.h"
#include "stamp.h"
#include "store.h"

static const uint8_t test_secret[GRANT_SECRET_BYTES] = "not-a-real-key!";

Suite *make_ha_store_suite(void);

#define MIB (1024 * 1024)
#define CA 0xa1
#define CB 0xb2
#define TERM 7
#define OLD_INC 0x1234000000000005ULL
#define OLD_TAG 0x7a97a97a97a97a9ULL /* the old master's stamp tag */

START_TEST(test_alloc_at_exact_ranges)
{
	struct seg_alloc *a;
	uint64_t off;

	ck_assert_int_eq(seg_alloc_create(1 << 20, 64, &a), 0);
	ck_assert_int_eq(seg_alloc_alloc_at(a, 4096, 100), 0);
	ck_assert_uint_eq(seg_alloc_used(a), 128);
	/* overlapping, unaligned, beyond the end: refused, nothing changed */
	ck_assert_int_eq(seg_alloc_alloc_at(a, 4096 + 64, 64), -ENOSPC);
	ck_assert_int_eq(seg_alloc_alloc_at(a, 4096 - 64, 128), -ENOSPC);
	ck_assert_int_eq(seg_alloc_alloc_at(a, 4100, 64), -EINVAL);
	ck_assert_int_eq(seg_alloc_alloc_at(a, (1 << 20) - 64, 128), -ENOSPC);
	ck_assert_int_eq(seg_alloc_alloc_at(a, 0, 0), -EINVAL);
	ck_assert_uint_eq(seg_alloc_used(a), 128);
	/* ascending offsets, touching; then the whole rest */
	ck_assert_int_eq(seg_alloc_alloc_at(a, 0, 4096), 0);
	ck_assert_int_eq(seg_alloc_alloc_at(a, 4096 + 128, 64), 0);
	ck_assert(seg_alloc_is_consistent(a));
	ck_assert_uint_eq(seg_alloc_live(a), 3);
	/* a normal allocation goes where nothing is */
	ck_assert_int_eq(seg_alloc_alloc(a, 64, &off), 0);
	ck_assert_uint_ge(off, 4096 + 192);
	/* freeing coalesces as for any allocation */
	ck_assert_int_eq(seg_alloc_free(a, 4096), 0);
	ck_assert_int_eq(seg_alloc_alloc_at(a, 4096, 128), 0);
	ck_assert(seg_alloc_is_consistent(a));
	ck_assert_int_eq(seg_alloc_free(a, 0), 0);
	ck_assert_int_eq(seg_alloc_free(a, 4096), 0);
	ck_assert_int_eq(seg_alloc_free(a, 4096 + 128), 0);
	ck_assert_int_eq(seg_alloc_free(a, off), 0);
	ck_assert_uint_eq(seg_alloc_used(a), 0);
	ck_assert_uint_eq(seg_alloc_free_ranges(a), 1);
	ck_assert(seg_alloc_is_consistent(a));
	seg_alloc_destroy(a);
}
END_TEST

struct fx {
	struct store *s;
	uint64_t seg_a, seg_b, now;
};

static uint64_t mount_seg(struct fx *x, uint64_t client, const char *name)
{
	struct mount_args a = {
	    .client_id = client,
	    .host = name,
	    .domain = "",
	    .name = name,
	    .endpoint = "127.0.0.1:1",
	    .capacity = 64 * MIB,
	};
	char err[128];
	uint64_t id = 0;

	ck_assert_int_eq(store_mount(x->s, &a, x->now, &id, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	return id;
}

static void fx_start(struct fx *x, uint64_t term)
{
	struct master_opts o;

	master_opts_defaults(&o);
	memset(x, 0, sizeof(*x));
	x->now = 1000000;
	ck_assert_int_eq(store_create(&o, test_secret, 0x99, &x->s), 0);
	store_set_term(x->s, term);
	store_lock(x->s);
	x->seg_a = mount_seg(x, CA, "seg-a");
	x->seg_b = mount_seg(x, CB, "seg-b");
}

static void fx_stop(struct fx *x)
{
	store_unlock(x->s);
	store_destroy(x->s);
}

static struct object *put(struct fx *x, const char *key)
{
	struct object *o = NULL;
	char err[128];

	ck_assert_int_eq(store_put_start(x->s, "t", key, 4096, 1, x->now, &o,
					 err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(store_put_end(x->s, "t", key, o->version),
			 MCREPL_RPC__CODE__OK);
	return o;
}

static McreplRpc__IndexEntry record(const char *key, uint64_t offset,
				    uint64_t version)
{
	McreplRpc__IndexEntry e;

	mcrepl_rpc__index_entry__init(&e);
	e.tenant = (char *)(uintptr_t) "t";
	e.key = (char *)(uintptr_t)key;
	e.offset = offset;
	e.size = 4096;
	e.version = version;
	e.incarnation = OLD_INC;
	e.stamp_tag = OLD_TAG;
	return e;
}

/* A record in a batch of its own (the last) from a segment re-mounted
 * (held) after the leader change. */
static McreplRpc__Code recover(struct fx *x, uint64_t client, uint64_t seg,
			       const McreplRpc__IndexEntry *e)
{
	char err[128];
	McreplRpc__Code code;

	store_hold_segment(x->s, client, seg, x->now + 10000);
	code = store_recover(x->s, client, seg, e, x->now, err, sizeof(err));
	store_hold_segment(x->s, client, seg, 0);
	return code;
}

/* Recovery restores, never creates: a record is taken only from a segment
 * re-mounted (held) within 10 s of the term's first tick, until its last
 * batch, and only when written in an earlier term; every other is
 * refused with its reason, and counted. */
START_TEST(test_recover_only_after_leader_change)
{
	struct fx x;
	struct store_figures sf;
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 3, last = 0;
	McreplRpc__IndexEntry e = record("inj", 8192, v);
	char err[128];

	fx_start(&x, TERM);
	/* steady state: never held, nothing taken */
	store_tick(x.s, x.now, &last);
	x.now += 10000;
	store_tick(x.s, x.now, &last);
	ck_assert_int_eq(
	    store_recover(x.s, CA, x.seg_a, &e, x.now, err, sizeof(err)),
	    MCREPL_RPC__CODE__PERMISSION_DENIED);
	ck_assert_str_eq(err, "the segment is not re-registering after a "
			      "leader change");
	store_hold_segment(x.s, CA, x.seg_a, x.now + 10000);
	ck_assert(!store_segments_held(x.s));
	ck_assert_int_eq(
	    store_recover(x.s, CA, x.seg_a, &e, x.now, err, sizeof(err)),
	    MCREPL_RPC__CODE__PERMISSION_DENIED);
	ck_assert_ptr_null(store_find(x.s, "t", "inj"));
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.recover_unheld, 2);
	ck_assert_uint_eq(sf.keys, 0);
	fx_stop(&x);

	/* a re-mount after the change: this term's writes are not restored */
	fx_start(&x, TERM);
	store_hold_segment(x.s, CA, x.seg_a, x.now + 10000);
	e.incarnation = 0x1234000000000000ULL | TERM;
	ck_assert_int_eq(
	    store_recover(x.s, CA, x.seg_a, &e, x.now, err, sizeof(err)),
	    MCREPL_RPC__CODE__STALE);
	ck_assert_str_eq(err, "not written in an earlier term");
	e.incarnation = OLD_INC;
	e.version = ((uint64_t)TERM << 32) | 3;
	ck_assert_int_eq(
	    store_recover(x.s, CA, x.seg_a, &e, x.now, err, sizeof(err)),
	    MCREPL_RPC__CODE__STALE);
	e.version = v;
	ck_assert_int_eq(
	    store_recover(x.s, CA, x.seg_a, &e, x.now, err, sizeof(err)),
	    MCREPL_RPC__CODE__OK);
	/* the last batch ends it */
	store_hold_segment(x.s, CA, x.seg_a, 0);
	e = record("inj2", 65536, v);
	ck_assert_int_eq(
	    store_recover(x.s, CA, x.seg_a, &e, x.now, err, sizeof(err)),
	    MCREPL_RPC__CODE__PERMISSION_DENIED);
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.recover_term, 2);
	ck_assert_uint_eq(sf.recover_unheld, 1);
	ck_assert_uint_eq(sf.keys, 1);
	ck_assert_ptr_null(store_find(x.s, "t", "inj2"));
	fx_stop(&x);
}
END_TEST

START_TEST(test_term_in_versions_old_term_stale)
{
	struct fx x;
	struct object *o;
	uint64_t old = ((uint64_t)(TERM - 1) << 32) | 5;

	fx_start(&x, TERM);
	o = put(&x, "k");
	ck_assert_uint_eq(o->version >> 32, TERM);
	ck_assert_uint_eq(store_term(x.s), TERM);
	/* a put of an older term the store does not hold: STALE */
	ck_assert_int_eq(store_put_end(x.s, "t", "gone", old),
			 MCREPL_RPC__CODE__STALE);
	ck_assert_int_eq(store_put_revoke(x.s, "t", "gone", old),
			 MCREPL_RPC__CODE__STALE);
	/* this term's unknown put is plainly not found */
	ck_assert_int_eq(
	    store_put_end(x.s, "t", "gone", ((uint64_t)TERM << 32) | 99),
	    MCREPL_RPC__CODE__NOT_FOUND);
	fx_stop(&x);
}
END_TEST

START_TEST(test_journal_fed_and_acknowledged)
{
	struct fx x;
	McreplRpc__IndexEntry e[8];
	struct object *o;
	char err[128];
	size_t n;

	fx_start(&x, TERM);
	o = put(&x, "k1");
	n = store_journal_fill(
	    x.s, o->replicas[0].segment_id == x.seg_a ? CA : CB, 0, e, 8);
	ck_assert_uint_eq(n, 1);
	ck_assert(!e[0].drop);
	ck_assert_str_eq(e[0].key, "k1");
	ck_assert_str_eq(e[0].tenant, "t");
	ck_assert_uint_eq(e[0].version, o->version);
	ck_assert_uint_eq(e[0].incarnation, 0x99);
	ck_assert_uint_eq(e[0].offset, o->replicas[0].offset);
	ck_assert_uint_eq(e[0].size, 4096);
	ck_assert_uint_eq(e[0].seq, 1);
	{
		uint64_t client =
		    o->replicas[0].segment_id == x.seg_a ? CA : CB;
		uint64_t off = o->replicas[0].offset, v = o->version;

		/* remove: a drop follows; acknowledging 1 forgets the put */
		ck_assert_int_eq(
		    store_remove(x.s, "t", "k1", x.now, err, sizeof(err)),
		    MCREPL_RPC__CODE__OK);
		n = store_journal_fill(x.s, client, 1, e, 8);
		ck_assert_uint_eq(n, 1);
		ck_assert(e[0].drop);
		ck_assert_uint_eq(e[0].seq, 2);
		ck_assert_uint_eq(e[0].offset, off);
		ck_assert_uint_eq(e[0].version, v);
		ck_assert_uint_eq(store_journal_fill(x.s, client, 2, e, 8), 0);
	}
	/* no term (a single master): no journal at all */
	fx_stop(&x);
	fx_start(&x, 0);
	put(&x, "k2");
	ck_assert_uint_eq(store_journal_fill(x.s, CA, 0, e, 8) +
			      store_journal_fill(x.s, CB, 0, e, 8),
			  0);
	fx_stop(&x);
}
END_TEST

START_TEST(test_recover_objects)
{
	struct fx x;
	struct object *o;
	struct store_ha_figures f;
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 3;
	McreplRpc__IndexEntry e = record("r1", 8192, v), e2;

	fx_start(&x, TERM);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	o = store_find(x.s, "t", "r1");
	ck_assert_ptr_nonnull(o);
	ck_assert(o->complete);
	ck_assert_uint_eq(o->version, v);
	ck_assert_uint_eq(store_object_incarnation(x.s, o), OLD_INC);
	ck_assert_uint_eq(o->n_replicas, 1);
	ck_assert_uint_eq(o->replicas[0].offset, 8192);
	ck_assert_int_eq(o->replicas[0].status, REPLICA_COMPLETE);
	/* the same object from the other worker: a second replica */
	e2 = record("r1", 0, v);
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e2), MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(store_find(x.s, "t", "r1")->n_replicas, 2);
	/* again on the same segment, elsewhere: refused */
	e2 = record("r1", 65536, v);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e2),
			 MCREPL_RPC__CODE__ALREADY_EXISTS);
	/* an older version of the key: refused */
	e2 = record("r1", 65536, v - 1);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e2),
			 MCREPL_RPC__CODE__ALREADY_EXISTS);
	/* overlapping a recovered region */
	e2 = record("r2", 8192 + 64, v);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e2),
			 MCREPL_RPC__CODE__NO_SPACE);
	/* another client's segment, a bad record */
	e2 = record("r3", 131072, v);
	ck_assert_int_eq(recover(&x, CB, x.seg_a, &e2),
			 MCREPL_RPC__CODE__PERMISSION_DENIED);
	e2.version = 0;
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e2),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	e2 = record("r3", 64 * MIB, v);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e2),
			 MCREPL_RPC__CODE__NO_SPACE);
	store_ha_figures(x.s, &f);
	ck_assert_uint_eq(f.objects_recovered, 1);
	ck_assert_uint_eq(f.replicas_recovered, 2);
	ck_assert_uint_eq(f.recover_refused, 6);
	/* readable, and the regions are the store's: removing frees them */
	{
		char err[128];
		struct store_figures sf;

		ck_assert_int_eq(
		    store_remove(x.s, "t", "r1", x.now, err, sizeof(err)),
		    MCREPL_RPC__CODE__OK);
		store_figures(x.s, &sf);
		ck_assert_uint_eq(sf.used, 0);
		ck_assert_uint_eq(sf.keys, 0);
	}
	fx_stop(&x);
}
END_TEST

/* An older version came back first (evicted as the old leader died, the
 * key put again): the newer record replaces it, never the reverse. */
START_TEST(test_recover_newer_version_supersedes)
{
	struct fx x;
	struct object *o;
	struct store_ha_figures f;
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 3;
	McreplRpc__IndexEntry e = record("k", 8192, v);

	fx_start(&x, TERM);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	e = record("k", 0, v + 5);
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e), MCREPL_RPC__CODE__OK);
	o = store_find(x.s, "t", "k");
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->version, v + 5);
	ck_assert_uint_eq(o->n_replicas, 1);
	ck_assert_uint_eq(o->replicas[0].segment_id, x.seg_b);
	/* the old version's region is free again; it is never taken back */
	e = record("k", 8192, v);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e),
			 MCREPL_RPC__CODE__ALREADY_EXISTS);
	ck_assert_uint_eq(store_find(x.s, "t", "k")->version, v + 5);
	store_ha_figures(x.s, &f);
	ck_assert_uint_eq(f.superseded, 1);
	fx_stop(&x);
}
END_TEST

/* A key re-registered from one worker's index and, from another, as an
 * orphan (the journal had reached only the first): the lookup finds the
 * object and adopts nothing; a remove of the key frees the orphan too. */
START_TEST(test_remove_covers_unadopted_orphans)
{
	struct fx x;
	struct store_figures sf;
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 9;
	McreplRpc__IndexEntry e = record("k", 4096, v);
	char err[128];

	fx_start(&x, TERM);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	e = record("", 0, v);
	e.key_hash = stamp_key_hash("t", 1, "k", 1);
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e), MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(store_find(x.s, "t", "k")->n_replicas, 1);
	ck_assert_int_eq(store_remove(x.s, "t", "k", x.now, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.used, 0);
	ck_assert_ptr_null(store_find(x.s, "t", "k"));
	fx_stop(&x);
}
END_TEST

struct rm_seen {
	int calls;
	McreplRpc__Code code;
	const char *reason;
};

static void rm_done(void *arg, McreplRpc__Code code, const char *reason)
{
	struct rm_seen *r = arg;

	r->calls++;
	r->code = code;
	r->reason = reason;
}

/* PutStart of key with 2 replicas: its version. */
static uint64_t put_start2(struct fx *x, const char *key)
{
	struct object *o = NULL;
	char err[128];

	ck_assert_int_eq(store_put_start(x->s, "t", key, 4096, 2, x->now, &o,
					 err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	return o->version;
}

/* key put whole (PutStart, PutEnd), 2 replicas. */
static void put2(struct fx *x, const char *key)
{
	uint64_t v = put_start2(x, key);

	ck_assert_int_eq(store_put_end(x->s, "t", key, v),
			 MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(store_find(x->s, "t", key)->n_replicas, 2);
}

/* A Remove is answered once every worker that held a replica
 * acknowledged its drop; a worker that does not is expired at the
 * client TTL, the caller told "recovering" after 2 s meanwhile (asked
 * again, it waits with the first). */
START_TEST(test_remove_answered_once_workers_acknowledge)
{
	struct fx x;
	struct rm_seen r = {0}, r2 = {0};
	struct store_figures sf;
	McreplRpc__IndexEntry e[8];
	uint64_t last = 0, t0, ttl, ids[4];
	bool later = false;
	char err[128];

	fx_start(&x, TERM);
	ttl = store_opts(x.s)->client_ttl_ms;
	put2(&x, "k");
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k", 0, x.now, rm_done,
					    &r, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert(later);
	ck_assert_ptr_null(store_find(x.s, "t", "k"));
	ck_assert_uint_eq(store_removes_waiting(x.s), 1);
	/* no answer shows the remove before it is confirmed */
	ck_assert(store_key_settling(x.s, "t", "k"));
	ck_assert(!store_key_settling(x.s, "t", "k-other"));
	ck_assert(!store_key_settling(x.s, "u", "k"));
	/* another client's remove of it, meanwhile: ask again, never
	 * NOT_FOUND */
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k", 7, x.now, rm_done,
					    &r2, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert(!later);
	ck_assert_str_eq(err, STORE_SETTLING_MSG);
	/* A is fed the drop and acknowledges it: B still holds it */
	ck_assert_uint_eq(store_journal_fill(x.s, CA, 1, e, 8), 1);
	ck_assert(e[0].drop);
	ck_assert_uint_eq(e[0].seq, 2);
	store_journal_fill(x.s, CA, 2, e, 8);
	ck_assert_int_eq(r.calls, 0);
	store_journal_fill(x.s, CB, 2, e, 8);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.code, MCREPL_RPC__CODE__OK);
	ck_assert_ptr_null(r.reason);
	ck_assert_uint_eq(store_removes_waiting(x.s), 0);
	ck_assert(!store_key_settling(x.s, "t", "k"));

	/* B heartbeats and never acknowledges */
	put2(&x, "k2");
	memset(&r, 0, sizeof(r));
	t0 = x.now;
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k2", 0, x.now, rm_done,
					    &r, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert(later);
	store_journal_fill(x.s, CA, 4, e, 8);
	x.now += 2000;
	store_heartbeat(x.s, CB, NULL, NULL, 0, x.now);
	store_heartbeat(x.s, CA, NULL, NULL, 0, x.now);
	store_tick(x.s, x.now, &last);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(r.reason, "recovering");
	/* asked again: it waits with the first */
	x.now = t0 + ttl - 1000;
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k2", 0, x.now, rm_done,
					    &r2, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert(later);
	x.now = t0 + ttl;
	store_heartbeat(x.s, CB, NULL, NULL, 0, x.now - 1);
	store_heartbeat(x.s, CA, NULL, NULL, 0, x.now - 1);
	store_tick(x.s, x.now - 1, &last);
	ck_assert_int_eq(r2.calls, 0);
	store_tick(x.s, x.now, &last); /* B expired */
	ck_assert(!store_client_known(x.s, CB));
	/* answered only once B's mount is fenced in etcd: then no later
	 * leader takes back what B holds */
	ck_assert_int_eq(r2.calls, 0);
	ck_assert_uint_eq(store_fences_to_write(x.s, ids, 4), 1);
	ck_assert_uint_eq(ids[0], x.seg_b);
	ck_assert_uint_eq(store_fences_to_write(x.s, ids, 4), 0); /* sent */
	store_fence_done(x.s, x.seg_b, false); /* etcd did not confirm */
	ck_assert_int_eq(r2.calls, 0);
	ck_assert(store_key_settling(x.s, "t", "k2"));
	ck_assert_uint_eq(store_fences_to_write(x.s, ids, 4), 1);
	store_fence_done(x.s, x.seg_b, true);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.code, MCREPL_RPC__CODE__OK);
	ck_assert(!store_key_settling(x.s, "t", "k2"));
	ck_assert_int_eq(r.calls, 1);
	ck_assert(store_client_known(x.s, CA));
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.removes_waited, 2);
	ck_assert_uint_eq(sf.removes_expired_workers, 1);
	ck_assert_uint_eq(sf.fences_written, 1);
	ck_assert_uint_eq(sf.fences_failed, 1);
	ck_assert_uint_eq(store_removes_waiting(x.s), 0);
	fx_stop(&x);
}
END_TEST

/* Every journal entry of client c acknowledged. */
static void ack_all(struct fx *x, uint64_t c)
{
	McreplRpc__IndexEntry e[8];
	size_t n = store_journal_fill(x->s, c, 0, e, 8);

	ck_assert_uint_ge(n, 1);
	store_journal_fill(x->s, c, e[n - 1].seq, e, 8);
}

/* A put in flight (started, not ended) reads as absent, and is
 * ALREADY_EXISTS to another putter; ended, it is not shown until its
 * workers acknowledged the commit, then it reads. */
START_TEST(test_put_in_flight_reads_absent_exists_to_putters)
{
	struct fx x;
	struct rm_seen r = {0};
	struct object *o = NULL;
	size_t order[4], n = 0;
	uint64_t v;
	bool later = false;
	char err[128];

	fx_start(&x, TERM);
	v = put_start2(&x, "f");
	ck_assert_int_eq(store_get(x.s, "t", "f", "", x.now, &o, order, 4, &n),
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert_int_eq(store_put_start(x.s, "t", "f", 4096, 2, x.now, &o, err,
					 sizeof(err)),
			 MCREPL_RPC__CODE__ALREADY_EXISTS);
	ck_assert_int_eq(
	    store_put_end_acked(x.s, "t", "f", v, x.now, rm_done, &r, &later),
	    MCREPL_RPC__CODE__OK);
	ck_assert(later);
	ck_assert(store_key_settling(x.s, "t", "f"));
	ack_all(&x, CA);
	ack_all(&x, CB);
	ck_assert_int_eq(r.calls, 1);
	ck_assert(!store_key_settling(x.s, "t", "f"));
	ck_assert_int_eq(store_get(x.s, "t", "f", "", x.now, &o, order, 4, &n),
			 MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(o->version, v);
	ck_assert_uint_eq(n, 2);
	fx_stop(&x);
}
END_TEST

/* A PutEnd on an HA leader is answered once both workers acknowledged
 * the commits (their indexes name the key); after 2 s without, OK anyway
 * (counted); a leader stepping down answers "unconfirmed". */
START_TEST(test_put_end_answered_once_workers_acknowledge)
{
	struct fx x;
	struct rm_seen r = {0}, r2 = {0}, r3 = {0};
	struct store_figures sf;
	uint64_t last = 0, v;
	bool later = false;

	fx_start(&x, TERM);
	v = put_start2(&x, "p");
	ck_assert_int_eq(
	    store_put_end_acked(x.s, "t", "p", v, x.now, rm_done, &r, &later),
	    MCREPL_RPC__CODE__OK);
	ck_assert(later);
	ck_assert(store_exists(x.s, "t", "p")); /* committed here at once */
	ck_assert(store_key_settling(x.s, "t", "p")); /* but not shown */
	ack_all(&x, CA);
	ck_assert_int_eq(r.calls, 0);
	ack_all(&x, CB);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.code, MCREPL_RPC__CODE__OK);
	ck_assert(!store_key_settling(x.s, "t", "p"));
	/* a worker that never acknowledges holds it 2 s */
	v = put_start2(&x, "q");
	ck_assert_int_eq(
	    store_put_end_acked(x.s, "t", "q", v, x.now, rm_done, &r2, &later),
	    MCREPL_RPC__CODE__OK);
	ck_assert(later);
	ack_all(&x, CA);
	x.now += 1999;
	store_heartbeat(x.s, CA, NULL, NULL, 0, x.now);
	store_heartbeat(x.s, CB, NULL, NULL, 0, x.now);
	store_tick(x.s, x.now, &last);
	ck_assert_int_eq(r2.calls, 0);
	x.now += 1;
	store_tick(x.s, x.now, &last);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.code, MCREPL_RPC__CODE__OK);
	/* the leader steps down while one waits */
	v = put_start2(&x, "z");
	ck_assert_int_eq(
	    store_put_end_acked(x.s, "t", "z", v, x.now, rm_done, &r3, &later),
	    MCREPL_RPC__CODE__OK);
	ck_assert(later);
	store_abort_removes(x.s);
	ck_assert_int_eq(r3.calls, 1);
	ck_assert_int_eq(r3.code, MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert_str_eq(r3.reason, "unconfirmed");
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.puts_waited, 1);
	ck_assert_uint_eq(sf.puts_unacked, 1);
	ck_assert_uint_eq(store_removes_waiting(x.s), 0);
	fx_stop(&x);
}
END_TEST

/* A try of a remove told "recovering" comes again with its request id:
 * it joins the first, and is answered OK after it settled, even when a
 * put of the key came since (that object stays); another remove of the
 * key while the first waits is asked again (NOT_FOUND would show the
 * first before it is confirmed). */
START_TEST(test_remove_retry_named_never_removes_twice)
{
	struct fx x;
	struct rm_seen r = {0}, r2 = {0}, r3 = {0};
	McreplRpc__IndexEntry e[8];
	uint64_t last = 0, a;
	bool later = false;
	char err[128];

	fx_start(&x, TERM);
	put2(&x, "k");
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k", 77, x.now, rm_done,
					    &r, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert(later);
	x.now += 2000; /* no acknowledgement yet: ask again */
	store_heartbeat(x.s, CA, NULL, NULL, 0, x.now);
	store_heartbeat(x.s, CB, NULL, NULL, 0, x.now);
	store_tick(x.s, x.now, &last);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_str_eq(r.reason, "recovering");
	/* another remove meanwhile: ask again */
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k", 78, x.now, rm_done,
					    &r3, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__UNAVAILABLE);
	ck_assert(!later);
	ck_assert_str_eq(err, STORE_SETTLING_MSG);
	/* the workers acknowledge the first remove's drops, with nobody
	 * waiting for it; then a put of the key */
	a = store_journal_fill(x.s, CA, 0, e, 8);
	ck_assert_uint_ge(a, 1);
	store_journal_fill(x.s, CA, e[a - 1].seq, e, 8);
	a = store_journal_fill(x.s, CB, 0, e, 8);
	ck_assert_uint_ge(a, 1);
	store_journal_fill(x.s, CB, e[a - 1].seq, e, 8);
	ck_assert(!store_key_settling(x.s, "t", "k"));
	put2(&x, "k");
	/* its next tries are answered OK, and the put since stays */
	for (int i = 0; i < 2; i++) {
		memset(&r2, 0, sizeof(r2));
		ck_assert_int_eq(store_remove_acked(x.s, "t", "k", 77, x.now,
						    rm_done, &r2, &later, err,
						    sizeof(err)),
				 MCREPL_RPC__CODE__OK);
		ck_assert(!later);
		ck_assert_int_eq(r2.calls, 0);
		ck_assert_ptr_nonnull(store_find(x.s, "t", "k"));
	}
	/* a remove naming another id removes it */
	ck_assert_int_eq(store_remove_acked(x.s, "t", "k", 79, x.now, rm_done,
					    &r3, &later, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert(later);
	ck_assert_ptr_null(store_find(x.s, "t", "k"));
	fx_stop(&x);
}
END_TEST

/* A keyless record (a put the journal did not reach) waits for the first
 * lookup of its key, by stamp key hash; unclaimed, it is freed. */
START_TEST(test_orphans_adopted_or_expired)
{
	struct fx x;
	struct object *o;
	struct store_ha_figures f;
	struct store_figures sf;
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 9, last = 0;
	McreplRpc__IndexEntry e = record("", 4096, v);

	fx_start(&x, TERM);
	e.tenant = (char *)(uintptr_t) "";
	e.key_hash = stamp_key_hash("t", 1, "lost", 4);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	/* its region is reserved: nothing else goes there */
	e = record("x", 4096, v);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e),
			 MCREPL_RPC__CODE__NO_SPACE);
	/* the same orphan on the other worker */
	e = record("", 0, v);
	e.key_hash = stamp_key_hash("t", 1, "lost", 4);
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e), MCREPL_RPC__CODE__OK);
	/* another key's lookup adopts nothing */
	ck_assert_ptr_null(store_find(x.s, "t", "other"));
	o = store_find(x.s, "t", "lost");
	ck_assert_ptr_nonnull(o);
	ck_assert(o->complete);
	ck_assert_uint_eq(o->version, v);
	ck_assert_uint_eq(store_object_incarnation(x.s, o), OLD_INC);
	ck_assert_uint_eq(o->n_replicas, 2);
	/* one never claimed: freed after a minute */
	e = record("", 65536, v + 1);
	e.key_hash = stamp_key_hash("t", 1, "never", 5);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.used, 3 * 4160);
	x.now += 60000;
	store_heartbeat(x.s, CA, NULL, NULL, 0, x.now); /* not expired */
	store_heartbeat(x.s, CB, NULL, NULL, 0, x.now);
	store_tick(x.s, x.now, &last);
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.used, 2 * 4160);
	ck_assert_ptr_null(store_find(x.s, "t", "never"));
	store_ha_figures(x.s, &f);
	ck_assert_uint_eq(f.orphans, 3);
	ck_assert_uint_eq(f.orphans_adopted, 1);
	ck_assert_uint_eq(f.orphans_expired, 1);
	ck_assert_uint_eq(f.objects_recovered, 1);
	fx_stop(&x);
}
END_TEST

/* A new master cannot recompute the stamp tags of an old one (its key is
 * gone): a recovered object keeps and serves the tag its worker reported,
 * and journals it for the next failover; a record without a tag, or a
 * second replica carrying another tag, is refused. This store's own
 * objects get their tag computed, the same every time. */
START_TEST(test_recovered_objects_keep_their_stamp_tag)
{
	struct fx x;
	struct object *o, *mine;
	McreplRpc__IndexEntry e = record("r1", 8192, 0), j[8];
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 3, tag;
	size_t n;

	fx_start(&x, TERM);
	e.version = v;
	e.stamp_tag = 0;
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e),
			 MCREPL_RPC__CODE__INVALID_ARGUMENT);
	e.stamp_tag = OLD_TAG;
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	o = store_find(x.s, "t", "r1");
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(store_object_stamp_tag(x.s, o), OLD_TAG);
	n = store_journal_fill(x.s, CA, 0, j, 8);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(j[0].stamp_tag, OLD_TAG);
	ck_assert_uint_eq(j[0].incarnation, OLD_INC);
	/* the same object on the other worker under another tag */
	e = record("r1", 0, v);
	e.stamp_tag = OLD_TAG ^ 1;
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e),
			 MCREPL_RPC__CODE__ALREADY_EXISTS);
	ck_assert_uint_eq(o->n_replicas, 1);
	/* two orphans of one key: the one under another tag stays apart */
	e = record("", 65536, v + 1);
	e.key_hash = stamp_key_hash("t", 1, "lost", 4);
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e), MCREPL_RPC__CODE__OK);
	e = record("", 65536, v + 1);
	e.key_hash = stamp_key_hash("t", 1, "lost", 4);
	e.stamp_tag = OLD_TAG ^ 2;
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e), MCREPL_RPC__CODE__OK);
	o = store_find(x.s, "t", "lost");
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->n_replicas, 1);
	/* the last registered is looked at first; the other expires */
	ck_assert_uint_eq(o->replicas[0].segment_id, x.seg_b);
	ck_assert_uint_eq(store_object_stamp_tag(x.s, o), OLD_TAG ^ 2);
	/* this store's own objects: computed, the same every time */
	mine = put(&x, "k");
	tag = store_object_stamp_tag(x.s, mine);
	ck_assert_uint_ne(tag, 0);
	ck_assert_uint_eq(store_object_stamp_tag(x.s, mine), tag);
	n = store_journal_fill(
	    x.s, mine->replicas[0].segment_id == x.seg_b ? CB : CA, 0, j, 8);
	ck_assert_uint_ge(n, 1);
	ck_assert_str_eq(j[n - 1].key, "k");
	ck_assert_uint_eq(j[n - 1].stamp_tag, tag);
	fx_stop(&x);
}
END_TEST

/* A record of a dynamic copy comes back as one: the replica keeps the
 * flag (retirable, never the object's primary), the store counts its
 * bytes, the journal feeds it on as dynamic; dropped, it is uncounted. */
START_TEST(test_recovered_dynamic_copy_stays_dynamic)
{
	struct fx x;
	struct object *o;
	struct store_figures sf;
	McreplRpc__IndexEntry e[4];
	uint64_t v = ((uint64_t)(TERM - 1) << 32) | 3;
	char err[128];

	fx_start(&x, TERM);
	e[0] = record("d", 8192, v);
	e[1] = record("d", 0, v);
	e[1].dynamic = true;
	ck_assert_int_eq(recover(&x, CA, x.seg_a, &e[0]), MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(recover(&x, CB, x.seg_b, &e[1]), MCREPL_RPC__CODE__OK);
	o = store_find(x.s, "t", "d");
	ck_assert_uint_eq(o->n_replicas, 2);
	ck_assert(!o->replicas[0].dynamic);
	ck_assert(o->replicas[1].dynamic);
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.dyn_replica_bytes, 4096);
	/* fed on to each worker with the flag it came with */
	ck_assert_uint_eq(store_journal_fill(x.s, CA, 0, e, 4), 1);
	ck_assert(!e[0].dynamic);
	ck_assert_uint_eq(store_journal_fill(x.s, CB, 0, e, 4), 1);
	ck_assert(e[0].dynamic);
	ck_assert_uint_eq(e[0].segment_id, x.seg_b);
	ck_assert_int_eq(store_remove(x.s, "t", "d", x.now, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	store_figures(x.s, &sf);
	ck_assert_uint_eq(sf.dyn_replica_bytes, 0);
	fx_stop(&x);
}
END_TEST

START_TEST(test_held_segment_gets_no_placement)
{
	struct fx x;
	struct object *o = NULL;
	char err[128];
	uint64_t last = 0;

	fx_start(&x, TERM);
	store_hold_segment(x.s, CA, x.seg_a, x.now + 1000);
	store_hold_segment(x.s, CA, x.seg_b, x.now + 1000); /* not CA's */
	ck_assert(store_segments_held(x.s));
	for (int i = 0; i < 8; i++) {
		char key[8];

		snprintf(key, sizeof(key), "p%d", i);
		o = put(&x, key);
		ck_assert_uint_eq(o->replicas[0].segment_id, x.seg_b);
	}
	/* both held: no room anywhere */
	store_hold_segment(x.s, CB, x.seg_b, x.now + 1000);
	ck_assert_int_eq(store_put_start(x.s, "t", "none", 4096, 1, x.now, &o,
					 err, sizeof(err)),
			 MCREPL_RPC__CODE__NO_SPACE);
	/* released explicitly, or by the tick past the deadline */
	store_hold_segment(x.s, CB, x.seg_b, 0);
	x.now += 1000;
	store_tick(x.s, x.now, &last);
	ck_assert(!store_segments_held(x.s));
	fx_stop(&x);
	/* a single master (no term) holds nothing */
	fx_start(&x, 0);
	store_hold_segment(x.s, CA, x.seg_a, x.now + 1000);
	ck_assert(!store_segments_held(x.s));
	fx_stop(&x);
}
END_TEST

/* Every journal entry of client c acknowledged, however many. */
static void ack_every(struct fx *x, uint64_t c)
{
	McreplRpc__IndexEntry e[8];
	uint64_t ack = 0;
	size_t n;

	while ((n = store_journal_fill(x->s, c, ack, e, 8)) > 0)
		ack = e[n - 1].seq;
}

/* Heartbeats of both workers and a tick, at x->now. */
static void beat_tick(struct fx *x, uint64_t *last)
{
	store_heartbeat(x->s, CA, NULL, NULL, 0, x->now);
	store_heartbeat(x->s, CB, NULL, NULL, 0, x->now);
	store_tick(x->s, x->now, last);
}

static McreplRpc__Code remove_named(struct fx *x, const char *key, uint64_t id,
				    struct rm_seen *r, bool *later)
{
	char err[128];

	return store_remove_acked(x->s, "t", key, id, x->now, rm_done, r, later,
				  err, sizeof(err));
}

/* Puts and removes of several keys wait at once: each of those keys is
 * settling, no other; each wait ends with its own acknowledgements; a
 * remove settled with nobody waiting answers its named tries until it is
 * forgotten, then no more (a try then is a remove of its own). */
START_TEST(test_settling_many_keys_at_once)
{
	static const char *const rm_keys[] = {"r0", "r1", "r2"};
	static const char *const put_keys[] = {"p0", "p1"};
	struct fx x;
	struct rm_seen rr[3] = {{0}}, rj[3] = {{0}}, rp[2] = {{0}};
	struct rm_seen again = {0};
	uint64_t last = 0, v;
	bool later = false;

	fx_start(&x, TERM);
	for (size_t i = 0; i < 3; i++)
		put2(&x, rm_keys[i]);
	put2(&x, "kept");
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(
		    remove_named(&x, rm_keys[i], 10 + i, &rr[i], &later),
		    MCREPL_RPC__CODE__OK);
		ck_assert(later);
	}
	/* their callers are told to ask again; r0's and r2's do */
	x.now += 2000;
	beat_tick(&x, &last);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_int_eq(rr[i].calls, 1);
		ck_assert_str_eq(rr[i].reason, "recovering");
		if (i == 1)
			continue;
		ck_assert_int_eq(
		    remove_named(&x, rm_keys[i], 10 + i, &rj[i], &later),
		    MCREPL_RPC__CODE__OK);
		ck_assert(later);
	}
	for (size_t i = 0; i < 2; i++) {
		v = put_start2(&x, put_keys[i]);
		ck_assert_int_eq(store_put_end_acked(x.s, "t", put_keys[i], v,
						     x.now, rm_done, &rp[i],
						     &later),
				 MCREPL_RPC__CODE__OK);
		ck_assert(later);
	}
	ck_assert_uint_eq(store_removes_waiting(x.s), 5);
	for (size_t i = 0; i < 3; i++)
		ck_assert(store_key_settling(x.s, "t", rm_keys[i]));
	for (size_t i = 0; i < 2; i++)
		ck_assert(store_key_settling(x.s, "t", put_keys[i]));
	ck_assert(!store_key_settling(x.s, "t", "kept"));
	ck_assert(!store_key_settling(x.s, "u", "r0"));
	ck_assert(!store_key_settling(x.s, "t", "r3"));
	/* A acknowledges: all still wait for B */
	ack_every(&x, CA);
	ck_assert_uint_eq(store_removes_waiting(x.s), 5);
	ck_assert(store_key_settling(x.s, "t", "r2"));
	ck_assert(store_key_settling(x.s, "t", "p1"));
	ck_assert_int_eq(rj[0].calls + rj[2].calls + rp[0].calls + rp[1].calls,
			 0);
	/* B too: every wait ends; r1's, with nobody waiting, is kept */
	ack_every(&x, CB);
	for (size_t i = 0; i < 3; i++) {
		ck_assert(!store_key_settling(x.s, "t", rm_keys[i]));
		ck_assert_int_eq(rr[i].calls, 1);
		ck_assert_int_eq(rj[i].calls, i == 1 ? 0 : 1);
		ck_assert_int_eq(rj[i].code, MCREPL_RPC__CODE__OK);
	}
	for (size_t i = 0; i < 2; i++) {
		ck_assert(!store_key_settling(x.s, "t", put_keys[i]));
		ck_assert_int_eq(rp[i].calls, 1);
		ck_assert_int_eq(rp[i].code, MCREPL_RPC__CODE__OK);
	}
	ck_assert_uint_eq(store_removes_waiting(x.s), 1);
	/* r1's try is answered OK now; r0's (ended) is a remove of its own */
	ck_assert_int_eq(remove_named(&x, "r1", 11, &again, &later),
			 MCREPL_RPC__CODE__OK);
	ck_assert(!later);
	ck_assert_int_eq(remove_named(&x, "r0", 10, &again, &later),
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert(!later);
	ck_assert_int_eq(again.calls, 0);
	ck_assert_uint_eq(store_removes_waiting(x.s), 1);
	/* forgotten after 20 s: its try is a remove of its own too */
	for (int i = 0; i < 10; i++) {
		x.now += 2000;
		beat_tick(&x, &last);
	}
	ck_assert_uint_eq(store_removes_waiting(x.s), 0);
	ck_assert_int_eq(remove_named(&x, "r1", 11, &again, &later),
			 MCREPL_RPC__CODE__NOT_FOUND);
	ck_assert(!later);
	/* a key put and removed again waits anew */
	put2(&x, "r1");
	ck_assert_int_eq(remove_named(&x, "r1", 0, &again, &later),
			 MCREPL_RPC__CODE__OK);
	ck_assert(later);
	ck_assert(store_key_settling(x.s, "t", "r1"));
	ck_assert(!store_key_settling(x.s, "t", "r0"));
	ck_assert_uint_eq(store_removes_waiting(x.s), 1);
	fx_stop(&x);
}
END_TEST

Suite *make_ha_store_suite(void)
{
	Suite *s = suite_create("ha_store");
	TCase *tc = tcase_create("store");

	tcase_add_test(tc, test_alloc_at_exact_ranges);
	tcase_add_test(tc, test_term_in_versions_old_term_stale);
	tcase_add_test(tc, test_journal_fed_and_acknowledged);
	tcase_add_test(tc, test_recover_objects);
	tcase_add_test(tc, test_recover_only_after_leader_change);
	tcase_add_test(tc, test_recover_newer_version_supersedes);
	tcase_add_test(tc, test_remove_answered_once_workers_acknowledge);
	tcase_add_test(tc, test_remove_retry_named_never_removes_twice);
	tcase_add_test(tc, test_settling_many_keys_at_once);
	tcase_add_test(tc, test_put_end_answered_once_workers_acknowledge);
	tcase_add_test(tc, test_put_in_flight_reads_absent_exists_to_putters);
	tcase_add_test(tc, test_remove_covers_unadopted_orphans);
	tcase_add_test(tc, test_orphans_adopted_or_expired);
	tcase_add_test(tc, test_recovered_objects_keep_their_stamp_tag);
	tcase_add_test(tc, test_held_segment_gets_no_placement);
	tcase_add_test(tc, test_recovered_dynamic_copy_stays_dynamic);
	suite_add_tcase(s, tc);
	return s;
}
