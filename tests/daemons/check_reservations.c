/*
 * Tenant isolation on real daemons over loopback:
 *  - a writer that reserves most of a worker's segment with PutStarts it
 *    never writes, then disconnects, does not hold the space until the
 *    put release timeout (600 s): the master gives every unwritten
 *    reservation of that connection back within a few seconds, and the
 *    next tenant's put succeeds and reads back its exact bytes;
 *  - a put whose writer names a live client id (a session that may
 *    reconnect) outlives its connection: that writer ends it from another
 *    connection;
 *  - data-plane grants are turned off only by the daemons' flag
 *    --insecure_no_grants_for_benchmarks, never by the environment
 *    (MCREPL_BENCH_NO_GRANTS has no effect), and the flag is refused
 *    (exit 78) unless every listening address is loopback.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "grant.h"
#include "harness.h"
#include "mwfix.h"
#include "rpcresult.h"
#include "stamp.h"
#include "store_client.h"
#include "wait.h"

Suite *make_reservations_suite(void);

#define OBJ (64u << 10)	     /* one reservation's payload */
#define SEG_BYTES (1u << 20) /* the worker's one segment */
#define MAX_PUTS 64
/* a writer id no client holds: naming it keeps nothing alive */
#define UNKNOWN_WRITER 0x5eed0001ull

#define RELEASED                                                               \
	"mcrepl_master_reservations_reclaimed_total{kind=\"put\",reason="      \
	"\"client_gone\"}"
#define DEADLINE                                                               \
	"mcrepl_master_reservations_reclaimed_total{kind=\"put\",reason="      \
	"\"deadline\"}"

static struct {
	struct mwfix m;
	uint8_t obj[OBJ];
} fx;

/* A master (dynamic replication off, the default put timeouts: 600 s)
 * with extra master flags mflag (NULL: none) and one worker of one 1 MiB
 * segment with extra flag wflag (NULL: none). */
static void cluster_up(const char *mflag, const char *wflag)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    NULL};
	const struct mwfix_opts o = {
	    .master_flags = flags,
	    .master_flag = mflag,
	    .segment_size = "1M",
	    .worker_flag = wflag,
	};

	memset(&fx, 0, sizeof(fx));
	for (size_t i = 0; i < OBJ; i++)
		fx.obj[i] = (uint8_t)(i * 131 + 7);
	mwfix_start(&fx.m, &o);
}

static void cluster_down(void)
{
	mwfix_stop(&fx.m);
}

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static long long metric(const char *name)
{
	return mwfix_metric(&fx.m, name);
}

/* PutStart of tenant/key (OBJ bytes, one replica) by writer (0: none);
 * *code its result. The reply is the caller's to free. */
static McreplRpc__PutStartResponse *put_start(rpc_client *rc,
					      const char *tenant,
					      const char *key, uint64_t writer,
					      McreplRpc__Code *code)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut(tenant);
	ps.key = mut(key);
	ps.size = OBJ;
	ps.replica_num = 1;
	ps.client_id = writer;
	r = (McreplRpc__PutStartResponse *)harness_call(rc, "PutStart",
							&ps.base, NULL);
	*code = rpc_result_code(&r->base);
	return r;
}

static McreplRpc__Code put_end(rpc_client *rc, const char *tenant,
			       const char *key, uint64_t version)
{
	McreplRpc__PutEndRequest pe;
	ProtobufCMessage *r;
	McreplRpc__Code code;

	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = mut(tenant);
	pe.key = mut(key);
	pe.version = version;
	r = harness_call(rc, "PutEnd", &pe.base, NULL);
	code = rpc_result_code(r);
	protobuf_c_message_free_unpacked(r, NULL);
	return code;
}

static store_client *client(const char *tenant)
{
	return mwfix_client(&fx.m, tenant, NULL);
}

/* key of c reads back exactly as fx.obj. */
static void assert_reads_back(store_client *c, const char *key)
{
	mwfix_assert_reads(c, key, fx.obj, OBJ);
}

/* The attack: tenant evil reserves the whole segment with PutStarts it
 * never writes (every other one naming a writer id no client holds) and
 * disconnects. While it is connected the victim's put finds no space;
 * once it is gone the master releases every one of its reservations
 * (their regions' WRITE grants revoked on the worker, the space back)
 * within a bounded wait, far before the 600 s put release timeout, and
 * the victim's put succeeds and reads back its exact bytes. */
START_TEST(test_abandoned_puts_released_when_writer_disconnects)
{
	rpc_client *evil, *again;
	store_client *victim;
	McreplRpc__PutStartResponse *r;
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;
	uint64_t first_version = 0;
	long long region = 0;
	unsigned n = 0;
	char key[32];

	cluster_up(NULL, NULL);
	evil = harness_client(fx.m.port);
	ck_assert_ptr_nonnull(evil);
	ck_assert_int_eq(metric("mcrepl_master_used_bytes"), 0);
	while (n < MAX_PUTS) {
		snprintf(key, sizeof(key), "k%u", n);
		r = put_start(evil, "evil", key, n % 2 ? UNKNOWN_WRITER : 0,
			      &code);
		if (code != MCREPL_RPC__CODE__OK) {
			protobuf_c_message_free_unpacked(&r->base, NULL);
			break;
		}
		ck_assert_uint_eq(r->n_replicas, 1);
		if (n == 0) {
			first_version = r->version;
			region = metric("mcrepl_master_used_bytes");
		}
		protobuf_c_message_free_unpacked(&r->base, NULL);
		n++;
	}
	ck_assert_int_eq(code, MCREPL_RPC__CODE__NO_SPACE);
	/* one region is the payload, its stamp, the allocator's alignment */
	ck_assert_int_ge(region, OBJ + STAMP_BYTES);
	ck_assert_uint_eq(n, SEG_BYTES / (uint64_t)region);
	ck_assert_int_eq(metric("mcrepl_master_used_bytes"), n * region);
	victim = client("victim");
	ck_assert_int_eq(store_client_put(victim, "v", fx.obj, OBJ),
			 MCREPL_RPC__CODE__NO_SPACE);
	ck_assert_int_eq(metric(RELEASED), 0);

	rpc_client_close(evil);
	WAIT_UNTIL(metric(RELEASED) == n &&
		   metric("mcrepl_master_used_bytes") == 0);
	ck_assert_int_eq(metric(RELEASED), n);
	ck_assert_int_eq(metric(DEADLINE), 0);
	ck_assert_int_eq(metric("mcrepl_master_keys"), 0);
	ck_assert_int_eq(metric("mcrepl_master_used_bytes"), 0);
	/* the released put is gone: ending it later finds nothing */
	again = harness_client(fx.m.port);
	ck_assert_int_eq(put_end(again, "evil", "k0", first_version),
			 MCREPL_RPC__CODE__NOT_FOUND);
	rpc_client_close(again);

	ck_assert_msg(store_client_put(victim, "v", fx.obj, OBJ) == 0,
		      "put: %s", store_client_error(victim));
	assert_reads_back(victim, "v");
	ck_assert_int_eq(metric("mcrepl_master_used_bytes"), region);
	store_client_close(victim);
	cluster_down();
}
END_TEST

/* A put whose writer names a live client id (here the worker's own,
 * which heartbeats: a session that may come back on another connection)
 * is not released when the connection that started it closes: the writer
 * writes and ends it from a new connection, and the object reads back.
 * (It is released when that client id expires: owner_expired.) */
START_TEST(test_put_of_a_live_session_outlives_its_connection)
{
	uint64_t writer;
	rpc_client *first, *second;
	McreplRpc__PutStartResponse *r;
	McreplRpc__Code code;
	struct data_grant g;
	uint8_t *region = malloc(STAMP_BYTES + OBJ);
	store_client *reader;
	char err[256];

	cluster_up(NULL, NULL);
	writer = proc_field(&fx.m.worker, "client_id");
	ck_assert_uint_ne(writer, 0);
	first = harness_client(fx.m.port);
	r = put_start(first, "t", "s", writer, &code);
	ck_assert_int_eq(code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 1);
	rpc_client_close(first);
	/* a span in which the release must not happen: many sweeps (50 ms) */
	harness_sleep_ms(1000);
	ck_assert_int_eq(metric(RELEASED), 0);
	ck_assert_int_ne(metric("mcrepl_master_used_bytes"), 0);

	/* the region: the object's stamp (untagged would not pass: tagged
	 * with the master's tag from the reply), then the payload */
	stamp_write(
	    region,
	    &(struct stamp_id){.incarnation = r->incarnation,
			       .object_id = r->version,
			       .key_hash = stamp_key_hash("t", 1, "s", 1),
			       .length = OBJ,
			       .tag = r->stamp_tag},
	    fx.obj);
	memcpy(region + STAMP_BYTES, fx.obj, OBJ);
	g = store_replica_grant(r->replicas[0]);
	ck_assert_msg(store_data_write(
			  r->replicas[0]->endpoint, r->replicas[0]->segment_id,
			  r->replicas[0]->offset, region, STAMP_BYTES + OBJ, &g,
			  2000, err, sizeof(err)) == 0,
		      "write: %s", err);
	second = harness_client(fx.m.port);
	ck_assert_int_eq(put_end(second, "t", "s", r->version),
			 MCREPL_RPC__CODE__OK);
	rpc_client_close(second);
	reader = client("t");
	assert_reads_back(reader, "s");
	ck_assert_int_eq(metric(RELEASED), 0);
	store_client_close(reader);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	free(region);
	cluster_down();
}
END_TEST

/* ---- grants off: the flag only, on loopback only ---------------------- */

/* prog started with args exits want_rc, its last stderr line want. */
static void start_fails(const char *prog, const char *args, int want_rc,
			const char *want)
{
	char bin[512], dir[256], out[320], cmd[2048];
	char line[512] = "", next[512];
	FILE *f;
	int rc;

	ck_assert_int_eq(harness_mkdtemp(dir, sizeof(dir), "resv"), 0);
	snprintf(out, sizeof(out), "%s/stderr.txt", dir);
	snprintf(cmd, sizeof(cmd), "%s %s >/dev/null 2>%s",
		 harness_bin(prog, bin, sizeof(bin)), args, out);
	rc = system(cmd);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(next, sizeof(next), f)) /* the last line: the error */
		memcpy(line, next, sizeof(line));
	fclose(f);
	unlink(out);
	harness_rmdtemp(dir, "resv");
	ck_assert_int_eq(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, want_rc);
	ck_assert_str_eq(line, want);
}

/* Off loopback the flag stops either daemon at start with one line and
 * EX_CONFIG (78), whatever else allows that address (--insecure, an auth
 * file): anyone reaching a port without grants reads and writes. */
START_TEST(test_no_grants_flag_refused_off_loopback)
{
	start_fails(
	    "mcrepl-master",
	    "--rpc_port=0 --metrics_port=0 --rpc_address=0.0.0.0 --insecure "
	    "--insecure_no_grants_for_benchmarks",
	    78,
	    "mcrepl-master: error: --insecure_no_grants_for_benchmarks: "
	    "--rpc_address 0.0.0.0 (the RPC and HTTP ports) is not a loopback "
	    "address; without grants anyone who reaches the workers' data "
	    "ports reads and writes every object, so this benchmark switch "
	    "serves loopback only\n");
	start_fails(
	    "mcrepl-worker",
	    "--master=127.0.0.1:1 --segment_size=1M --transport=tcp "
	    "--data_address=0.0.0.0 --insecure "
	    "--insecure_no_grants_for_benchmarks",
	    78,
	    "mcrepl-worker: error: --insecure_no_grants_for_benchmarks: "
	    "--data_address 0.0.0.0 (the data and metrics ports) is not a "
	    "loopback address; without grants anyone who reaches it reads and "
	    "writes every object, so this benchmark switch serves loopback "
	    "only\n");
}
END_TEST

/* The put's grant, and a WRITE without one, as the cluster answers them:
 * grants on (want_on) or off. */
static void assert_grants(bool want_on)
{
	rpc_client *rc = harness_client(fx.m.port);
	McreplRpc__PutStartResponse *r;
	McreplRpc__Code code;
	const struct data_grant none = {0};
	uint8_t *junk = calloc(1, STAMP_BYTES + OBJ);
	char err[256] = "";
	int st;

	r = put_start(rc, "t", "g", 0, &code);
	ck_assert_int_eq(code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 1);
	st = store_data_write(r->replicas[0]->endpoint,
			      r->replicas[0]->segment_id,
			      r->replicas[0]->offset, junk, STAMP_BYTES + OBJ,
			      &none, 2000, err, sizeof(err));
	if (want_on) {
		ck_assert_uint_ne(r->replicas[0]->grant_tag, 0);
		ck_assert_uint_ne(r->stamp_tag, 0);
		ck_assert_int_eq(st, -EACCES);
		ck_assert_msg(strstr(err, "write grant refused"), "%s", err);
	} else {
		ck_assert_uint_eq(r->replicas[0]->grant_tag, 0);
		ck_assert_uint_eq(r->stamp_tag, 0);
		ck_assert_msg(st == 0, "write: %s", err);
	}
	protobuf_c_message_free_unpacked(&r->base, NULL);
	free(junk);
	rpc_client_close(rc);
}

/* MCREPL_BENCH_NO_GRANTS=1 in both daemons' environment used to turn the
 * grants off: it is ignored now, the master signs and the worker checks. */
START_TEST(test_no_grants_env_var_has_no_effect)
{
	setenv("MCREPL_BENCH_NO_GRANTS", "1", 1);
	cluster_up(NULL, NULL);
	unsetenv("MCREPL_BENCH_NO_GRANTS");
	assert_grants(true);
	cluster_down();
}
END_TEST

/* On loopback the flag does turn them off (the benchmark baseline). */
START_TEST(test_no_grants_flag_on_loopback)
{
	cluster_up("--insecure_no_grants_for_benchmarks",
		   "--insecure_no_grants_for_benchmarks");
	assert_grants(false);
	cluster_down();
}
END_TEST

Suite *make_reservations_suite(void)
{
	Suite *s = suite_create("reservations");
	TCase *tc = tcase_create("reservations");

	tcase_add_test(tc,
		       test_abandoned_puts_released_when_writer_disconnects);
	tcase_add_test(tc, test_put_of_a_live_session_outlives_its_connection);
	tcase_add_test(tc, test_no_grants_flag_refused_off_loopback);
	tcase_add_test(tc, test_no_grants_env_var_has_no_effect);
	tcase_add_test(tc, test_no_grants_flag_on_loopback);
	suite_add_tcase(s, tc);
	return s;
}
