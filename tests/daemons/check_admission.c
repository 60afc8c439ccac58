/*
 * Fair admission on a master with --auth_file: connections that have not
 * authenticated have their own share of the connection limit and are the
 * first closed when it is full, so anonymous peers holding connections
 * never get an authenticated principal refused, and a flood from the
 * workers' own address does not keep a worker from mounting. And
 * malformed principal names (a NUL byte, empty, too long, outside the
 * name alphabet) in a handshake or in the auth file.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth.h"
#include "frame.h"
#include "harness.h"
#include "rawframe.h"
#include "rawsock.h"
#include "rpc_auth.h"
#include "wait.h"

Suite *make_admission_suite(void);

enum { W1, ADMIN, NP };

static const char *const principals[] = {
    "worker w1 hosts=host-a domains=* max_capacity=1G",
    "client admin tenants=* rights=read,write,remove,admin",
    NULL,
};

#define FLOOD_MAX 256

static struct {
	struct proc master;
	struct harness_auth auth;
	uint16_t port, http;
	struct auth_cred cred[NP];
	int flood[FLOOD_MAX];
	size_t n_flood;
} fx;

static long long metric(const char *name)
{
	char *page = http_get(fx.http, "/metrics");
	long long v;

	ck_assert_ptr_nonnull(page);
	v = metric_value(page, name);
	free(page);
	return v;
}

static long long closed(const char *reason)
{
	char name[128];

	snprintf(
	    name, sizeof(name),
	    "mcrepl_master_rpc_unauthenticated_closed_total{reason=\"%s\"}",
	    reason);
	return metric(name);
}

/* A master with the auth file and extra flags; the handshake deadline is
 * long, so the flood's connections stay until closed for room. */
static void start(const char *extra)
{
	char flag[400], path[400], err[256];
	const char *flags[] = {flag, "--auth_timeout_ms=20000",
			       "--rpc_max_connections=64", extra, NULL};

	memset(&fx, 0, sizeof(fx));
	fx.master.pid = -1;
	ck_assert_int_eq(harness_auth_setup(&fx.auth, principals), 0);
	snprintf(flag, sizeof(flag), "--auth_file=%s", fx.auth.file);
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	fx.port = (uint16_t)proc_field(&fx.master, "rpc_port");
	fx.http = (uint16_t)proc_field(&fx.master, "metrics_port");
	for (int i = 0; i < NP; i++)
		ck_assert_int_eq(auth_cred_load(fx.auth.names[i],
						harness_auth_secret_file(
						    &fx.auth, fx.auth.names[i],
						    path, sizeof(path)),
						&fx.cred[i], err, sizeof(err)),
				 0);
}

static void setup(void)
{
	start(NULL);
}

static void setup_peer_cap(void)
{
	start("--rpc_max_connections_per_peer=8");
}

static void teardown(void)
{
	for (size_t i = 0; i < fx.n_flood; i++)
		close(fx.flood[i]);
	ck_assert_int_eq(proc_stop(&fx.master), 0);
	harness_auth_cleanup(&fx.auth);
}

/* n anonymous connections from src that send nothing and stay open. */
static void flood(const char *src, size_t n)
{
	for (size_t i = 0; i < n && fx.n_flood < FLOOD_MAX; i++)
		fx.flood[fx.n_flood++] = connect_from(src, fx.port);
}

/* One connection as admin and one call on it: served. */
static void served_as_admin(void)
{
	rpc_client *c = harness_client_as(fx.port, &fx.cred[ADMIN]);
	McreplRpc__ExistRequest req;
	McreplRpc__ExistResponse *r;
	int st = -100;

	ck_assert_ptr_nonnull(c);
	mcrepl_rpc__exist_request__init(&req);
	req.tenant = (char *)(uintptr_t) "default";
	req.key = (char *)(uintptr_t) "k";
	r = (McreplRpc__ExistResponse *)harness_call(c, "Exist", &req.base,
						     &st);
	ck_assert_msg(r != NULL, "Exist: status %d", st);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	rpc_client_close(c);
}

START_TEST(test_attack_anonymous_flood_authenticated_client_served)
{
	/* 100 idle anonymous connections from another address, more than
	 * the whole limit (64); then 10 more before each of 10 tries */
	flood("127.0.0.2", 100);
	for (int i = 0; i < 10; i++) {
		flood("127.0.0.2", 10);
		served_as_admin();
	}
	/* the share is 16 (0.25 of 64): each arrival over it closed the
	 * oldest; the admin's connections left the share as they
	 * authenticated */
	ck_assert_int_eq(closed("share"), 185);
	ck_assert_int_eq(closed("peer"), 0);
	ck_assert_int_eq(
	    metric("mcrepl_master_rpc_refused_total{reason=\"cap\"}"), 0);
	ck_assert_int_eq(metric("mcrepl_master_auth_handshakes_total"), 10);
}
END_TEST

START_TEST(test_attack_flood_from_worker_address_worker_still_mounts)
{
	char bin[512], master[80];
	const char *argv[] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
			      master,
			      "--data_address=127.0.0.1",
			      "--host_id=host-a",
			      "--segment_size=4M",
			      fx.auth.principal_flag[W1],
			      fx.auth.secret_flag[W1],
			      NULL};
	struct proc w;

	/* the workers' address holds its cap (8) of anonymous connections,
	 * and more keep coming */
	flood("127.0.0.1", 20);
	snprintf(master, sizeof(master), "--master=127.0.0.1:%u", fx.port);
	ck_assert_int_eq(proc_start(&w, (char *const *)(uintptr_t)argv,
				    "mcrepl-worker ready", test_hang_ms()),
			 0);
	ck_assert_uint_eq(proc_field(&w, "client_id") >> AUTH_ID_TAG_SHIFT,
			  auth_id_tag("w1"));
	ck_assert_int_eq(proc_stop(&w), 0);
	/* 12 over the address's 8, and one for the worker's connection */
	ck_assert_int_eq(closed("peer"), 13);
	ck_assert_int_eq(
	    metric("mcrepl_master_rpc_refused_total{reason=\"peer\"}"), 0);
}
END_TEST

/* Where needle (n bytes) starts in hay (len bytes), or NULL. */
static uint8_t *find(uint8_t *hay, size_t len, const char *needle, size_t n)
{
	for (size_t i = 0; i + n <= len; i++)
		if (memcmp(hay + i, needle, n) == 0)
			return hay + i;
	return NULL;
}

/* An AuthHello naming principal (len bytes, NULs included). */
static void send_hello(int fd, const char *principal, size_t len)
{
	McreplRpc__AuthHello h;
	rpc_frame_head head = {1, RPC_AUTH_HELLO, MCREPL_RPC__CODE__OK, NULL};
	uint8_t nonce[AUTH_NONCE_BYTES] = {1}, *frame, *at;
	char *name = calloc(1, len + 1);
	size_t flen;

	ck_assert_ptr_nonnull(name);
	memset(name, 'Z', len);
	mcrepl_rpc__auth_hello__init(&h);
	h.version = RPC_AUTH_VERSION;
	h.principal = name;
	h.client_nonce.data = nonce;
	h.client_nonce.len = sizeof(nonce);
	ck_assert_int_eq(rpc_frame_encode_msg(&head, &h.base, &frame, &flen),
			 RPC_FRAME_OK);
	/* the placeholder bytes become principal's, NULs included */
	at = find(frame, flen, name, len);
	ck_assert(len == 0 || at != NULL);
	if (len)
		memcpy(at, principal, len);
	raw_send(fd, frame, flen);
	free(frame);
	free(name);
}

START_TEST(test_auth_principal_with_nul_is_malformed)
{
	static const struct {
		const char *name;
		size_t len;
		const char *error;
	} bad[] = {
	    {"w1\0x", 4, "malformed AuthHello: the principal holds a NUL byte"},
	    {"", 0, "malformed AuthHello: the principal is empty"},
	    {"w 1", 3,
	     "malformed AuthHello: the principal has a character outside "
	     "A-Z a-z 0-9 . _ -"},
	    {"wwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwwww",
	     65, "malformed AuthHello: the principal is longer than 64 bytes"},
	};
	static const char line[] =
	    "client a\0b secret=0123456789abcdef tenants=* rights=read\n";
	char path[512], err[600], want[600];
	struct auth_table *t;
	FILE *f;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = raw_connect(fx.port);
		McreplRpc__Envelope *env;

		send_hello(fd, bad[i].name, bad[i].len);
		env = raw_read_frame(fd);
		ck_assert_ptr_nonnull(env);
		ck_assert_int_eq(env->status,
				 MCREPL_RPC__CODE__UNAUTHENTICATED);
		ck_assert_str_eq(env->error, bad[i].error);
		mcrepl_rpc__envelope__free_unpacked(env, NULL);
		ck_assert(closed_soon(fd));
		close(fd);
	}
	ck_assert_int_eq(
	    metric("mcrepl_master_auth_failures_total{reason=\"malformed\"}"),
	    4);
	/* the auth file: a NUL byte in a name stops the load, naming the
	 * line */
	snprintf(path, sizeof(path), "%s/nul.auth", fx.auth.dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("# ok\n", f);
	fwrite(line, 1, sizeof(line) - 1, f);
	fclose(f);
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(auth_table_load(path, &t, err, sizeof(err)), -1);
	ck_assert_ptr_null(t);
	snprintf(want, sizeof(want),
		 "auth file %s line 2: a NUL byte (names and settings are "
		 "text)",
		 path);
	ck_assert_str_eq(err, want);
	unlink(path);
}
END_TEST

Suite *make_admission_suite(void)
{
	Suite *s = suite_create("admission");
	TCase *tc = tcase_create("admission");
	TCase *peer = tcase_create("admission_peer");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc,
		       test_attack_anonymous_flood_authenticated_client_served);
	tcase_add_test(tc, test_auth_principal_with_nul_is_malformed);
	suite_add_tcase(s, tc);
	tcase_set_timeout(peer, 30);
	tcase_add_checked_fixture(peer, setup_peer_cap, teardown);
	tcase_add_test(
	    peer, test_attack_flood_from_worker_address_worker_still_mounts);
	suite_add_tcase(s, peer);
	return s;
}
