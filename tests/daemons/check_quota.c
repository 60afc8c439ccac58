/*
 * Bounds on puts, on a real mcrepl-master with --auth_file and one real
 * worker (w1, one 4 MiB segment): clients victim (t-victim), evil
 * (t-evil, the default reserve of 25%), capped (t-capped, a tenant line
 * with quota=320K) and hog (t-hog, reserve=100%).
 *  - a storm of PutStarts evil never writes is refused QUOTA at its
 *    reserve bound, with the exact reason and message, and the victim's
 *    20 completed objects all read back their bytes; its next put works;
 *  - hog (reserve=100%) filling the store with unwritten puts is refused
 *    NO_SPACE fair_share rather than evicting the victim's objects;
 *  - evil writing its puts, far past the capacity, evicts its own objects
 *    and never the victim's, which is within its fair share (the high
 *    watermark's eviction off: it is not bound to fair share);
 *  - the tenant's quota holds exactly at the boundary: a put that fits is
 *    taken, one byte more is refused QUOTA;
 *  - an auth file with a malformed bound is refused, naming the line.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "harness.h"
#include "mwfix.h"
#include "store_client.h"
#include "wait.h"

Suite *make_quota_suite(void);

enum { W1, VICTIM, EVIL, CAPPED, HOG, NP };

static const char *const principals[] = {
    "worker w1 hosts=host-a domains=* max_capacity=1G",
    "client victim tenants=t-victim rights=read,write,remove",
    "client evil tenants=t-evil rights=read,write,remove",
    "client capped tenants=t-capped rights=read,write",
    "client hog tenants=t-hog rights=read,write reserve=100%",
    NULL,
};

#define OBJ (64u << 10)
#define SEG_BYTES (4u << 20)
#define VICTIM_OBJS 20
#define TENANT_QUOTA (5u * OBJ)

static struct {
	struct mwfix m;
	uint8_t obj[OBJ];
} fx;

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static long long metric(const char *name)
{
	return mwfix_metric(&fx.m, name);
}

static long long refusals(const char *reason)
{
	char name[128];

	snprintf(name, sizeof(name),
		 "mcrepl_master_put_refusals_total{reason=\"%s\"}", reason);
	return metric(name);
}

/* an extra master flag of the test case (NULL: none) */
static const char *case_flag;

static void setup(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    NULL};
	/* the auth file gets the tenant line the harness cannot write */
	static char tenant_line[64];
	const struct mwfix_opts o = {
	    .principals = principals,
	    .auth_text = tenant_line,
	    .master_flags = flags,
	    .master_flag = case_flag,
	    .segment_size = "4M",
	    .worker_principal = "w1",
	    .wait_capacity = SEG_BYTES,
	};

	snprintf(tenant_line, sizeof(tenant_line), "tenant t-capped quota=%u\n",
		 TENANT_QUOTA);
	memset(&fx, 0, sizeof(fx));
	for (size_t i = 0; i < OBJ; i++)
		fx.obj[i] = (uint8_t)(i * 151 + 3);
	mwfix_start(&fx.m, &o);
}

/* Only puts evict: the high watermark's eviction, which falls back to
 * the least recently read when no tenant is above its share, stays off. */
static void setup_puts_evict(void)
{
	case_flag = "--eviction_high_watermark_ratio=1.0";
	setup();
	case_flag = NULL;
}

static void teardown(void)
{
	ck_assert_int_eq(mwfix_stop(&fx.m), 0);
}

static store_client *client(int who, const char *tenant)
{
	return mwfix_client_as(&fx.m, tenant, &fx.m.cred[who]);
}

static void put(store_client *c, const char *key, uint64_t len)
{
	ck_assert_msg(store_client_put(c, key, fx.obj, len) == 0, "put %s: %s",
		      key, store_client_error(c));
}

static void assert_reads_back(store_client *c, const char *key)
{
	mwfix_assert_reads(c, key, fx.obj, OBJ);
}

static void victim_puts(store_client *v)
{
	char key[32];

	for (int i = 0; i < VICTIM_OBJS; i++) {
		snprintf(key, sizeof(key), "v%d", i);
		put(v, key, OBJ);
	}
}

static void assert_victim_intact(store_client *v)
{
	char key[32];

	for (int i = 0; i < VICTIM_OBJS; i++) {
		snprintf(key, sizeof(key), "v%d", i);
		assert_reads_back(v, key);
	}
}

/* PutStart of tenant/key, OBJ bytes, never written; the reply's Result
 * into code, reason, message (reason and message copied). */
static McreplRpc__Code start_unwritten(rpc_client *rc, const char *tenant,
				       const char *key, char *reason,
				       char *message)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;
	McreplRpc__Code code;
	int st = -100;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut(tenant);
	ps.key = mut(key);
	ps.size = OBJ;
	ps.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(rc, "PutStart",
							&ps.base, &st);
	ck_assert_msg(r != NULL, "PutStart: status %d", st);
	ck_assert_ptr_nonnull(r->result);
	code = r->result->code;
	snprintf(reason, 64, "%s", r->result->reason);
	snprintf(message, 256, "%s", r->result->message);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	return code;
}

/* The finding: one principal's unwritten reservations took the whole
 * store, evicting every other tenant's objects. Now it is refused QUOTA
 * once its unwritten bytes would pass 25% of the 4 MiB mounted. */
START_TEST(test_quota_reservation_storm_spares_other_tenant)
{
	store_client *v = client(VICTIM, "t-victim");
	rpc_client *evil = harness_client_as(fx.m.port, &fx.m.cred[EVIL]);
	char key[32], reason[64], message[256], want[256];
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;
	unsigned n = 0;

	ck_assert_ptr_nonnull(evil);
	victim_puts(v);
	while (n < 2 * SEG_BYTES / OBJ) {
		snprintf(key, sizeof(key), "e%u", n);
		code = start_unwritten(evil, "t-evil", key, reason, message);
		if (code != MCREPL_RPC__CODE__OK)
			break;
		n++;
	}
	ck_assert_int_eq(code, MCREPL_RPC__CODE__QUOTA);
	ck_assert_str_eq(reason, "quota_reserve");
	snprintf(want, sizeof(want),
		 "principal 'evil' holds %u bytes unwritten: %u more would "
		 "pass its reserve bound of %u bytes",
		 SEG_BYTES / 4, OBJ, SEG_BYTES / 4);
	ck_assert_str_eq(message, want);
	ck_assert_uint_eq(n, SEG_BYTES / 4 / OBJ);
	ck_assert_int_eq(refusals("quota_reserve"), 1);
	ck_assert_int_eq(metric("mcrepl_master_evicted_objects_total"), 0);
	assert_victim_intact(v);
	put(v, "after", OBJ);
	assert_reads_back(v, "after");
	rpc_client_close(evil);
	store_client_close(v);
}
END_TEST

/* hog may reserve the whole store (reserve=100%): its unwritten puts
 * take the free space, and then room could only come from the victim's
 * objects, within their share (4 MiB / 2 tenants): NO_SPACE fair_share. */
START_TEST(test_quota_fair_share_refuses_eviction_of_victim)
{
	store_client *v = client(VICTIM, "t-victim");
	rpc_client *hog = harness_client_as(fx.m.port, &fx.m.cred[HOG]);
	char key[32], reason[64], message[256], want[256];
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	ck_assert_ptr_nonnull(hog);
	victim_puts(v);
	for (unsigned n = 0; n < SEG_BYTES / OBJ; n++) {
		snprintf(key, sizeof(key), "h%u", n);
		code = start_unwritten(hog, "t-hog", key, reason, message);
		if (code != MCREPL_RPC__CODE__OK)
			break;
	}
	ck_assert_int_eq(code, MCREPL_RPC__CODE__NO_SPACE);
	ck_assert_str_eq(reason, "fair_share");
	snprintf(want, sizeof(want),
		 "no segment has %u free bytes (the rest is other tenants' "
		 "within their fair share of %u bytes)",
		 OBJ, SEG_BYTES / 2);
	ck_assert_str_eq(message, want);
	ck_assert_int_eq(refusals("fair_share"), 1);
	ck_assert_int_eq(metric("mcrepl_master_evicted_objects_total"), 0);
	assert_victim_intact(v);
	rpc_client_close(hog);
	store_client_close(v);
}
END_TEST

/* evil writes what it puts, six times the capacity: the room its puts
 * evict for comes from its own objects, never from the victim's (within
 * its fair share, 2 MiB). */
START_TEST(test_quota_written_flood_keeps_fair_share)
{
	store_client *v = client(VICTIM, "t-victim");
	store_client *e = client(EVIL, "t-evil");
	char key[32];

	victim_puts(v);
	for (unsigned i = 0; i < 6 * SEG_BYTES / OBJ; i++) {
		snprintf(key, sizeof(key), "e%u", i);
		/* an evicted region comes back once the worker acknowledges
		 * the revocation of its WRITE grant: NO_SPACE until then */
		WAIT_UNTIL(store_client_put(e, key, fx.obj, OBJ) == 0);
	}
	ck_assert_int_gt(metric("mcrepl_master_evicted_objects_total"), 0);
	assert_victim_intact(v);
	put(v, "after", OBJ);
	assert_reads_back(v, "after");
	assert_reads_back(e, key); /* its latest */
	store_client_close(e);
	store_client_close(v);
}
END_TEST

/* tenant t-capped quota=320K: 4 objects and one more of 64 KiB fit
 * exactly; one byte more does not. */
START_TEST(test_quota_tenant_bound_exact)
{
	store_client *c = client(CAPPED, "t-capped");
	char key[32], want[256];

	for (int i = 0; i < 5; i++) {
		snprintf(key, sizeof(key), "c%d", i);
		put(c, key, OBJ);
	}
	ck_assert_int_eq(store_client_put(c, "over", fx.obj, 1),
			 MCREPL_RPC__CODE__QUOTA);
	snprintf(want, sizeof(want),
		 "tenant 't-capped' holds %u bytes of puts: 1 more would pass "
		 "its quota of %u bytes",
		 TENANT_QUOTA, TENANT_QUOTA);
	ck_assert_ptr_nonnull(strstr(store_client_error(c), want));
	ck_assert_int_eq(refusals("quota_tenant"), 1);
	ck_assert_int_eq(refusals("quota_reserve"), 0);
	assert_reads_back(c, "c4");
	store_client_close(c);
}
END_TEST

static void assert_bad(const char *text, const char *want)
{
	struct auth_table *t = NULL;
	char err[256];

	ck_assert_int_eq(auth_table_parse(text, "q.conf", &t, err, sizeof(err)),
			 -1);
	ck_assert_ptr_null(t);
	ck_assert_str_eq(err, want);
}

#define CLIENT "client a secret=0123456789abcdef tenants=* rights=write "

START_TEST(test_quota_auth_file_errors)
{
	struct auth_table *t = NULL;
	char err[256];
	FILE *f;

	assert_bad(CLIENT "quota=lots\n",
		   "auth file q.conf line 1: quota 'lots' is not a size > 0 "
		   "(K, M, G, T suffixes)");
	assert_bad(CLIENT "quota=0\n",
		   "auth file q.conf line 1: quota '0' is not a size > 0 "
		   "(K, M, G, T suffixes)");
	assert_bad(CLIENT "quota=1G quota=2G\n",
		   "auth file q.conf line 1: quota given twice");
	assert_bad(CLIENT "reserve=101%\n",
		   "auth file q.conf line 1: reserve '101%' is not a "
		   "percentage of 1..100% (or a size)");
	assert_bad(CLIENT "\ntenant t1\n",
		   "auth file q.conf line 2: tenant 't1' needs quota= or "
		   "integrity=");
	assert_bad(CLIENT "\ntenant t1 quota=1G\ntenant t1 quota=2G\n",
		   "auth file q.conf line 3: tenant 't1' given twice");
	assert_bad(CLIENT "\ntenant t1 quota=-1\n",
		   "auth file q.conf line 2: quota '-1' is not a size > 0 "
		   "(K, M, G, T suffixes)");
	assert_bad(CLIENT "\ntenant t1 limit=1G\n",
		   "auth file q.conf line 2: unknown key 'limit=1G' for a "
		   "tenant (quota, integrity)");
	ck_assert_int_eq(auth_table_parse(CLIENT "quota=1G reserve=10%\n"
						 "tenant * quota=2G\n"
						 "tenant t1 quota=1K\n",
					  "q.conf", &t, err, sizeof(err)),
			 0);
	ck_assert_uint_eq(t->p[0].quota, 1ull << 30);
	ck_assert_uint_eq(auth_reserve_bound(&t->p[0], 1000), 100);
	ck_assert_uint_eq(auth_tenant_quota(t, "t1"), 1024);
	ck_assert_uint_eq(auth_tenant_quota(t, "t2"), 2ull << 30);
	auth_table_free(t);
	/* the master's own file: refused the same way */
	f = fopen(fx.m.auth.file, "a");
	ck_assert_ptr_nonnull(f);
	fputs("tenant t-evil quota=12Q\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(auth_table_load(fx.m.auth.file, &t, err, sizeof(err)),
			 -1);
	ck_assert_ptr_nonnull(strstr(err, "line 8: quota '12Q' is not a size"));
}
END_TEST

Suite *make_quota_suite(void)
{
	Suite *s = suite_create("quota");
	TCase *tc = tcase_create("quota");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_quota_reservation_storm_spares_other_tenant);
	tcase_add_test(tc, test_quota_fair_share_refuses_eviction_of_victim);
	tcase_add_test(tc, test_quota_tenant_bound_exact);
	tcase_add_test(tc, test_quota_auth_file_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("flood");
	tcase_add_checked_fixture(tc, setup_puts_evict, teardown);
	tcase_add_test(tc, test_quota_written_flood_keeps_fair_share);
	suite_add_tcase(s, tc);
	return s;
}
