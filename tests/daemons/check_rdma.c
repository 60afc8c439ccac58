/* The RDMA copy engine against a fake device (rdma_verbs_ops test double,
 * tests/daemons/rdma_fake.c): device choice, registration, splitting, the
 * WR window, signalling, completions, async events, teardown and
 * reconnects; then engines on a fake fabric that moves bytes between them
 * (case "fabric"); plus the real verbs on this host. Each test here
 * failed before the fix it covers. Without libibverbs at build
 * time (MCREPL_HAVE_RDMA unset) only the "not built" answer of the stub is
 * checked. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "copy_engine.h"

Suite *make_rdma_suite(void);

#ifndef MCREPL_HAVE_RDMA

START_TEST(test_not_built)
{
	struct copy_engine_config cfg;
	char err[256] = "";

	memset(&cfg, 0, sizeof(cfg));
	ck_assert_ptr_null(
	    copy_engine_rdma_create(NULL, &cfg, err, sizeof(err)));
	ck_assert_str_eq(
	    err,
	    "rdma: engine not built (libibverbs/librdmacm missing at build time)");
}
END_TEST

Suite *make_rdma_suite(void)
{
	Suite *s = suite_create("rdma");
	TCase *tc = tcase_create("stub");

	tcase_add_test(tc, test_not_built);
	suite_add_tcase(s, tc);
	return s;
}

#else /* MCREPL_HAVE_RDMA */

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>

#include "rdma_fake.h"

/* ---- the fixture: a fake device, and the engine a test makes on it ----- */

static struct fake *f;
static struct copy_engine *e;

static void setup(void)
{
	f = fake_new();
	e = NULL;
}

/* Destroys the engine, if the test has not. */
static void engine_destroy(void)
{
	copy_engine_destroy(e);
	e = NULL;
}

static void teardown(void)
{
	engine_destroy();
	fake_free(f);
	f = NULL;
}

/* ---- test helpers ------------------------------------------------------- */

struct done_rec {
	int calls;
	int status;
	char error[RDMA_ERRLEN];
};

static void on_done(int status, const char *error, void *arg)
{
	struct done_rec *r = arg;

	r->calls++;
	r->status = status;
	snprintf(r->error, sizeof(r->error), "%s", error ? error : "(null)");
}

/* The rdma_cm endpoint the master would hand out beside a data endpoint:
 * the target's host at port 20886; a malformed endpoint stays malformed. */
static const char *rdma_endpoint_of(const char *endpoint)
{
	static const char *const map[][2] = {
	    {"10.0.0.2:7000", "10.0.0.2:20886"},
	    {"10.0.0.2:7001", "10.0.0.2:20886"},
	    {"10.0.0.3:7000", "10.0.0.3:20886"},
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(endpoint, map[i][0]))
			return map[i][1];
	return endpoint;
}

static struct copy_target target(const char *endpoint, uint64_t addr)
{
	struct copy_target t;

	memset(&t, 0, sizeof(t));
	t.endpoint = endpoint;
	t.rdma_endpoint = rdma_endpoint_of(endpoint);
	t.length = 64 * MiB; /* the granted region */
	t.remote_addr = addr;
	t.rkey = 0xbeef;
	return t;
}

#define REMOTE 0x7f0000000000ull

/* A registered buffer of len bytes (never touched: the fake moves no
 * bytes). */
static char *reg_buf(struct copy_engine *ce, size_t len, uint32_t *rkey)
{
	char *buf = malloc(len);
	uint64_t addr = 0;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(ce->ops->register_memory(ce, buf, len, &addr, rkey),
			 0);
	ck_assert_uint_eq(addr, (uintptr_t)buf);
	return buf;
}

/* ---- endpoints ---------------------------------------------------------- */

static const struct {
	const char *endpoint;
	uint16_t default_port;
	int rc;
	const char *host;
	uint16_t port;
} endpoints[] = {
    {"10.0.0.2:7000", 20886, 0, "10.0.0.2", 20886},
    {"10.0.0.2:7000/20001", 20886, 0, "10.0.0.2", 20001},
    {"[fe80::1]:7000", 9, 0, "fe80::1", 9},
    {"[::1]:7000/5", 0, 0, "::1", 5},
    {"host-a:1", 2, 0, "host-a", 2},
    {"10.0.0.2:7000", 0, -1, "", 0},
    {"10.0.0.2", 20886, -1, "", 0},
    {":7000", 20886, -1, "", 0},
    {"10.0.0.2:7000/", 20886, -1, "", 0},
    {"10.0.0.2:7000/0", 20886, -1, "", 0},
    {"10.0.0.2:7000/65536", 20886, -1, "", 0},
    {"10.0.0.2:7000/12x", 20886, -1, "", 0},
    {"a:b:7000", 20886, -1, "", 0},
};
#define N_ENDPOINTS (int)(sizeof(endpoints) / sizeof(endpoints[0]))

START_TEST(test_parse_endpoint)
{
	char host[RDMA_HOSTLEN] = "";
	uint16_t port = 0;
	int rc;

	rc = rdma_parse_endpoint(endpoints[_i].endpoint,
				 endpoints[_i].default_port, host, sizeof(host),
				 &port);
	ck_assert_int_eq(rc, endpoints[_i].rc);
	if (rc == 0) {
		ck_assert_str_eq(host, endpoints[_i].host);
		ck_assert_uint_eq(port, endpoints[_i].port);
	}
}
END_TEST

/* ---- device choice ------------------------------------------------------ */

enum { DOWN = IBV_PORT_DOWN, UP = IBV_PORT_ACTIVE };

static const struct {
	int ndev; /* devices "mlx0", "mlx1" */
	int ports[2][2];
	bool no_cm;
	const char *want;
	const char *result; /* log line prefix on success, else err */
	int pd_dev;
} pick_cases[] = {
    {2,
     {{DOWN, 0}, {UP, 0}},
     false,
     NULL,
     "rdma: device mlx1 port 1: max_mr_size 18446744073709551615, max message "
     "1048576, 128 WRs per QP, rdma_cm port 20886",
     1},
    {2, {{UP, 0}, {UP, 0}}, false, NULL, "rdma: device mlx0 port 1:", 0},
    {2, {{DOWN, UP}, {UP, 0}}, false, "mlx0", "rdma: device mlx0 port 2:", 0},
    {2, {{UP, 0}, {UP, 0}}, false, "mlx1", "rdma: device mlx1 port 1:", 1},
    {2,
     {{UP, 0}, {UP, 0}},
     false,
     "nope",
     "rdma: device 'nope' not found (devices: mlx0, mlx1); use "
     "--rdma_device=NAME or --transport=tcp",
     -1},
    {2,
     {{DOWN, 0}, {DOWN, DOWN}},
     false,
     NULL,
     "rdma: no RDMA device has an ACTIVE port (2 checked); use --transport=tcp",
     -1},
    {2,
     {{DOWN, 0}, {UP, 0}},
     false,
     "mlx0",
     "rdma: device 'mlx0' has no ACTIVE port; use --transport=tcp",
     -1},
    {0,
     {{0, 0}, {0, 0}},
     false,
     NULL,
     "rdma: no RDMA device found (ibv_get_device_list returned none); use "
     "--transport=tcp",
     -1},
    {2,
     {{UP, 0}, {UP, 0}},
     true,
     NULL,
     "rdma: 2 RDMA device(s) but rdma_cm opened none (No such device; is "
     "rdma_ucm loaded?); use --transport=tcp",
     -1},
};
#define N_PICK (int)(sizeof(pick_cases) / sizeof(pick_cases[0]))

START_TEST(test_device_select)
{
	struct copy_engine_config cfg;
	char err[256] = "";
	int d;

	f->ndev = 0;
	for (d = 0; d < pick_cases[_i].ndev; d++) {
		char name[16];

		snprintf(name, sizeof(name), "mlx%d", d);
		fake_add_dev(f, name, pick_cases[_i].ports[d][0],
			     pick_cases[_i].ports[d][1]);
	}
	f->no_cm = pick_cases[_i].no_cm;
	fake_cfg_init(&cfg);
	cfg.rdma_device = pick_cases[_i].want;
	e = copy_engine_rdma_create_with(f->base, &cfg, &fake_ops, f, err,
					 sizeof(err));
	if (pick_cases[_i].pd_dev < 0) {
		ck_assert_ptr_null(e);
		ck_assert_str_eq(err, pick_cases[_i].result);
		ck_assert_int_eq(f->n_log, 0);
	} else {
		ck_assert_ptr_nonnull(e);
		ck_assert_int_eq(f->n_log, 1);
		ck_assert_msg(!strncmp(f->log[0], pick_cases[_i].result,
				       strlen(pick_cases[_i].result)),
			      "log: %s", f->log[0]);
		ck_assert_ptr_eq(f->pd_ctx,
				 &f->devs[pick_cases[_i].pd_dev].ctx);
		ck_assert_str_eq(e->ops->name, "rdma");
		engine_destroy();
	}
}
END_TEST

/* With the real libibverbs: on a host without RDMA hardware (CI, this
 * machine) the engine refuses with the one-line reason. */
START_TEST(test_real_no_device)
{
	struct event_base *base = event_base_new();
	struct copy_engine_config cfg;
	struct ibv_device **list;
	char err[256] = "";
	int n = 0;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	fake_cfg_init(&cfg);
	cfg.rdma_port = 0;
	e = copy_engine_rdma_create(base, &cfg, err, sizeof(err));
	if (n == 0) {
		ck_assert_ptr_null(e);
		ck_assert_str_eq(
		    err, "rdma: no RDMA device found (ibv_get_device_list "
			 "returned none); use --transport=tcp");
	} else {
		ck_assert_msg(e || err[0], "NULL without a reason");
		engine_destroy();
	}
	event_base_free(base);
}
END_TEST

/* Each setup step failing: NULL, the reason, nothing left behind. */
static const struct {
	enum fake_op op;
	const char *err;
} create_fails[] = {
    {OP_ALLOC_PD, "rdma: ibv_alloc_pd on fake0: Cannot allocate memory"},
    {OP_COMP_CH, "rdma: ibv_create_comp_channel on fake0: Too many open files"},
    {OP_CM_CH, "rdma: rdma_create_event_channel: No such device"},
    {OP_CREATE_ID, "rdma: rdma_create_id: Cannot allocate memory"},
    {OP_BIND,
     "rdma: cannot listen on rdma_cm port 20886: Address already in use"},
    {OP_LISTEN,
     "rdma: cannot listen on rdma_cm port 20886: Address already in use"},
};
#define N_CREATE_FAILS (int)(sizeof(create_fails) / sizeof(create_fails[0]))

START_TEST(test_create_fails)
{
	struct copy_engine_config cfg;
	char err[256] = "";

	fake_cfg_init(&cfg);
	f->fail_nth[create_fails[_i].op] = 1;
	ck_assert_ptr_null(copy_engine_rdma_create_with(
	    f->base, &cfg, &fake_ops, f, err, sizeof(err)));
	ck_assert_str_eq(err, create_fails[_i].err);
}
END_TEST

START_TEST(test_listener)
{
	struct copy_engine_config cfg;

	fake_cfg_init(&cfg);
	cfg.rdma_port = 7001;
	e = fake_engine_new(f, &cfg);
	ck_assert_ptr_nonnull(f->listen_id);
	ck_assert_uint_eq(f->bound_port, 7001);
	ck_assert_int_eq(f->alive_id, 1);
	engine_destroy();
	fake_free(f);

	/* rdma_port 0: the cluster-wide default. */
	f = fake_new();
	cfg.rdma_port = 0;
	e = fake_engine_new(f, &cfg);
	ck_assert_uint_eq(f->bound_port, RDMA_DEFAULT_PORT);
	ck_assert_int_eq(f->alive_id, 1);
	engine_destroy();
}
END_TEST

/* ---- registration ------------------------------------------------------- */

START_TEST(test_register_once)
{
	e = fake_engine_default(f);
	uint64_t addr = 0;
	uint32_t rkey = 0, rkey2 = 0;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	ck_assert_int_eq(f->n_mr, 1);
	ck_assert_uint_eq(f->mr_len[0], 4 * MiB);
	ck_assert_uint_eq(rkey, 0x2000);
	/* The same range, or a part of it: nothing new is registered. */
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf, 4 * MiB, &addr, &rkey2), 0);
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf + MiB, MiB, &addr, &rkey2), 0);
	ck_assert_uint_eq(addr, (uintptr_t)(buf + MiB));
	ck_assert_uint_eq(rkey2, rkey);
	ck_assert_int_eq(e->ops->register_memory(e, buf, MiB, NULL, NULL), 0);
	ck_assert_int_eq(f->n_mr, 1);
	ck_assert_int_eq(e->ops->register_memory(e, NULL, 1, &addr, &rkey2),
			 -EINVAL);
	ck_assert_int_eq(e->ops->register_memory(e, buf, 0, &addr, &rkey2),
			 -EINVAL);
	engine_destroy();
	free(buf);
}
END_TEST

/* Only WRITEs travel, so the MR grants no REMOTE_READ
 * (nor atomics, nor memory windows): the rkey discloses nothing. */
START_TEST(test_register_grants_no_remote_read)
{
	e = fake_engine_default(f);
	uint32_t rkey = 0;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	ck_assert_ptr_nonnull(f->mrs);
	ck_assert_int_eq(f->mrs->access,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	engine_destroy();
	free(buf);
}
END_TEST

START_TEST(test_register_split)
{
	uint32_t rkey = 0;
	char *buf;

	f->devs[0].attr.max_mr_size = 4 * MiB;
	e = fake_engine_default(f);
	buf = reg_buf(e, 10 * MiB, &rkey);
	ck_assert_int_eq(f->n_mr, 3);
	ck_assert_ptr_eq(f->mr_addr[0], buf);
	ck_assert_ptr_eq(f->mr_addr[1], buf + 4 * MiB);
	ck_assert_ptr_eq(f->mr_addr[2], buf + 8 * MiB);
	ck_assert_uint_eq(f->mr_len[0], 4 * MiB);
	ck_assert_uint_eq(f->mr_len[1], 4 * MiB);
	ck_assert_uint_eq(f->mr_len[2], 2 * MiB);
	ck_assert_uint_eq(rkey, 0x2000); /* the first MR's */
	ck_assert(
	    fake_logged(f, "registered as 3 MRs (max_mr_size 4194304); remote "
			   "writes reach only the first 4194304 bytes"));
	engine_destroy();
	free(buf);
}
END_TEST

/* A range that overlaps a registration without lying
 * inside it gets an MR (and rkey) of its own covering all of it. */
START_TEST(test_register_overlap)
{
	uint64_t addr = 0;
	uint32_t rkey1 = 0, rkey2 = 0;
	char *buf = malloc(6 * MiB);

	e = fake_engine_default(f);
	ck_assert_int_eq(e->ops->register_memory(e, buf, 4 * MiB, NULL, &rkey1),
			 0);
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf + 2 * MiB, 4 * MiB, &addr, &rkey2),
	    0);
	ck_assert_uint_eq(addr, (uintptr_t)(buf + 2 * MiB));
	ck_assert_int_eq(f->n_mr, 2);
	ck_assert_ptr_eq(f->mr_addr[1], buf + 2 * MiB);
	ck_assert_uint_eq(f->mr_len[1], 4 * MiB);
	ck_assert_uint_eq(rkey1, 0x2000);
	ck_assert_uint_eq(rkey2, 0x2001);
	engine_destroy();
	free(buf);
}
END_TEST

/* Unregister undoes register, per call; a range mapped
 * again after its MR went gets a new MR, never the stale one; memory a
 * copy still reads stays. */
START_TEST(test_unregister)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	uint32_t rkey1 = 0, rkey2 = 0;
	char *buf;

	e = fake_engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey1);
	ck_assert_int_eq(e->ops->register_memory(e, buf, 4 * MiB, NULL, NULL),
			 0);
	ck_assert_int_eq(f->alive_mr, 1);
	ck_assert_int_eq(e->ops->unregister_memory(e, buf, 4 * MiB), 0);
	ck_assert_int_eq(f->alive_mr, 1);
	ck_assert_int_eq(e->ops->unregister_memory(e, buf, 4 * MiB), 0);
	ck_assert_int_eq(f->alive_mr, 0);
	ck_assert_int_eq(e->ops->unregister_memory(e, buf, 4 * MiB), -ENOENT);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r),
			 -EINVAL);
	/* Mapped again at the same address: a new MR, a new rkey. */
	ck_assert_int_eq(e->ops->register_memory(e, buf, 4 * MiB, NULL, &rkey2),
			 0);
	ck_assert_uint_ne(rkey2, rkey1);
	ck_assert_int_eq(f->alive_mr, 1);
	/* A copy reads it: not now. */
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	fake_run(f);
	ck_assert_int_eq(e->ops->unregister_memory(e, buf, 4 * MiB), -EBUSY);
	fake_complete(f, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(e->ops->unregister_memory(e, buf, 4 * MiB), 0);
	ck_assert_int_eq(f->alive_mr, 0);
	engine_destroy();
	free(buf);
}
END_TEST

/* Registration refused for locked memory says what to
 * raise. */
START_TEST(test_register_memlock)
{
	uint64_t addr;
	uint32_t rkey;
	char *buf = malloc(MiB);
	struct rlimit rl;

	e = fake_engine_default(f);
	f->fail_nth[OP_REG_MR] = 1;
	ck_assert_int_eq(e->ops->register_memory(e, buf, MiB, &addr, &rkey),
			 -ENOMEM);
	ck_assert(fake_logged(
	    f,
	    "rdma: ibv_reg_mr(1048576 bytes) on fake0: Cannot allocate memory"));
	ck_assert_int_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (rl.rlim_cur != RLIM_INFINITY)
		ck_assert(fake_logged(f, "raise it (ulimit -l unlimited"));
	engine_destroy();
	free(buf);
}
END_TEST

/* The second chunk fails: the first is deregistered, nothing is kept. */
START_TEST(test_register_split_fails)
{
	uint64_t addr = 0;
	uint32_t rkey = 0;
	char *buf = malloc(10 * MiB);

	f->devs[0].attr.max_mr_size = 4 * MiB;
	f->fail_nth[OP_REG_MR] = 2;
	e = fake_engine_default(f);
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf, 10 * MiB, &addr, &rkey), -ENOMEM);
	ck_assert_int_eq(f->alive_mr, 0);
	/* Now it works, from scratch. */
	ck_assert_int_eq(
	    e->ops->register_memory(e, buf, 10 * MiB, &addr, &rkey), 0);
	ck_assert_int_eq(f->alive_mr, 3);
	engine_destroy();
	free(buf);
}
END_TEST

/* ---- splitting and signalling ------------------------------------------- */

static const struct {
	uint64_t len;
	uint32_t max_msg;
	int max_qp_wr; /* WR window = min(max_qp_wr, 128) */
	int n_wr;
	uint32_t last_len;
	const char *signalled; /* per WR, in post order */
} split_cases[] = {
    {10 * MiB, MiB, 16384, 10, MiB, "0000000001"},
    {10 * MiB + 123, MiB, 16384, 11, 123, "00000000001"},
    {10 * MiB - 1, MiB, 16384, 10, MiB - 1, "0000000001"},
    {MiB, MiB, 16384, 1, MiB, "1"},
    {1, MiB, 16384, 1, 1, "1"},
    {10 * MiB, 3 * MiB, 16384, 4, MiB, "0001"},
    /* window 4: every 2nd WR signalled, so the queue keeps draining */
    {10 * MiB, MiB, 4, 10, MiB, "0101010101"},
    {5 * MiB, MiB, 4, 5, MiB, "01011"},
    /* window 1: every WR signalled */
    {3 * MiB, MiB, 1, 3, MiB, "111"},
    /* window 128: signal_every 64 */
    {130 * 4096, 4096, 16384, 130, 4096, NULL},
};
#define N_SPLIT (int)(sizeof(split_cases) / sizeof(split_cases[0]))

START_TEST(test_split)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	uint64_t off = 0;
	uint32_t rkey;
	char *buf;
	int i, rounds = 0;

	f->devs[0].max_msg = split_cases[_i].max_msg;
	f->devs[0].attr.max_qp_wr = split_cases[_i].max_qp_wr;
	e = fake_engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(
	    e->ops->post_write(e, buf, split_cases[_i].len, &t, on_done, &r),
	    0);
	fake_run(f);
	/* Complete until everything is posted and done. */
	while (r.calls == 0 && rounds++ < 200)
		fake_complete(f, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_str_eq(r.error, "(null)");
	ck_assert_int_eq(f->n_wr, split_cases[_i].n_wr);
	for (i = 0; i < f->n_wr; i++) {
		uint32_t want = i + 1 == f->n_wr ? split_cases[_i].last_len
						 : split_cases[_i].max_msg;

		ck_assert_uint_eq(f->wr[i].addr, (uintptr_t)(buf + off));
		ck_assert_uint_eq(f->wr[i].raddr, REMOTE + off);
		ck_assert_uint_eq(f->wr[i].len, want);
		ck_assert_uint_eq(f->wr[i].rkey, 0xbeef);
		ck_assert_uint_eq(f->wr[i].lkey, 0x1000);
		ck_assert_uint_eq(f->wr[i].wr_id, f->wr[0].wr_id);
		if (split_cases[_i].signalled)
			ck_assert_int_eq(f->wr[i].sig,
					 split_cases[_i].signalled[i] == '1');
		off += want;
	}
	ck_assert_uint_eq(off, split_cases[_i].len);
	if (!split_cases[_i].signalled) {
		ck_assert_int_eq(fake_n_signalled(f), 3); /* 63, 127, 129 */
		ck_assert(f->wr[63].sig && f->wr[127].sig && f->wr[129].sig);
	}
	fake_run(f);
	ck_assert_int_eq(r.calls, 1);
	engine_destroy();
	ck_assert_int_eq(r.calls, 1);
	free(buf);
}
END_TEST

/* WRs never cross a local MR: 3 MiB messages over 4 MiB MRs. */
START_TEST(test_split_at_mr_boundary)
{
	static const uint32_t lens[] = {3, 1, 3, 1, 2};
	static const uint32_t lkeys[] = {0x1000, 0x1000, 0x1001, 0x1001,
					 0x1002};
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	uint64_t off = 0;
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_mr_size = 4 * MiB;
	f->devs[0].max_msg = 3 * MiB;
	e = fake_engine_default(f);
	buf = reg_buf(e, 10 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 10 * MiB, &t, on_done, &r),
			 0);
	fake_run(f);
	ck_assert_int_eq(f->n_wr, 5);
	for (i = 0; i < 5; i++) {
		ck_assert_uint_eq(f->wr[i].len, lens[i] * MiB);
		ck_assert_uint_eq(f->wr[i].lkey, lkeys[i]);
		ck_assert_uint_eq(f->wr[i].addr, (uintptr_t)(buf + off));
		ck_assert_uint_eq(f->wr[i].raddr, REMOTE + off);
		off += lens[i] * MiB;
	}
	fake_complete(f, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	engine_destroy();
	free(buf);
}
END_TEST

/* Window of 4: 4 WRs out, the rest posted as completions free room. */
START_TEST(test_wr_window)
{
	static const int posted_after[] = {4, 6, 8, 10, 10};
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_qp_wr = 4;
	e = fake_engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 10 * MiB, &t, on_done, &r),
			 0);
	fake_run(f);
	for (i = 0; i < 5; i++) {
		ck_assert_int_eq(f->n_wr, posted_after[i]);
		ck_assert_int_eq(r.calls, 0);
		fake_complete(f, 1);
	}
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	engine_destroy();
	free(buf);
}
END_TEST

/* Copies share one QP and its window, FIFO; callbacks in order. */
static int order[4], n_order;

static void on_done_order(int status, const char *error, void *arg)
{
	(void)error;
	ck_assert_int_eq(status, 0);
	order[n_order++] = (int)(intptr_t)arg;
}

START_TEST(test_copies_share_connection)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target t2 = target("10.0.0.2:7001", REMOTE + 64 * MiB);
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_qp_wr = 4;
	e = fake_engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	n_order = 0;
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(e->ops->post_write(e, buf + i * 3 * MiB,
						    3 * MiB, i == 1 ? &t2 : &t,
						    on_done_order,
						    (void *)(intptr_t)i),
				 0);
	fake_run(f);
	/* One connection (same host, same rdma port): 1 id + listener. */
	ck_assert_int_eq(f->calls[OP_CREATE_ID], 2);
	ck_assert_int_eq(f->n_wr, 4);
	ck_assert_uint_eq(f->wr[3].raddr, REMOTE + 64 * MiB);
	for (i = 0; i < 10 && n_order < 3; i++)
		fake_complete(f, 1);
	ck_assert_int_eq(n_order, 3);
	ck_assert_int_eq(order[0], 0);
	ck_assert_int_eq(order[1], 1);
	ck_assert_int_eq(order[2], 2);
	ck_assert_int_eq(f->n_wr, 9);
	engine_destroy();
	free(buf);
}
END_TEST

/* ---- completions and failures ------------------------------------------- */

/* The callback never runs inside post_write, even when it fails at once. */
START_TEST(test_callback_deferred)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0}, r2 = {0};
	e = fake_engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	fake_run(f);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	fake_run(f); /* connected; the WR is out */
	f->fail_nth[OP_POST_SEND] = f->calls[OP_POST_SEND] + 1;
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(r2.calls, 0);
	fake_run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(
	    r2.error,
	    "rdma: ibv_post_send to 10.0.0.2:20886: Cannot allocate memory");
	ck_assert_int_eq(f->alive_qp, 0);
	engine_destroy();
	free(buf);
}
END_TEST

START_TEST(test_post_invalid)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target bad = target("10.0.0.2", REMOTE);
	struct copy_target small = target("10.0.0.2:7000", REMOTE);
	e = fake_engine_default(f);
	struct done_rec r = {0};
	uint32_t rkey;
	char *buf, other[16];

	buf = reg_buf(e, 4 * MiB, &rkey);
	small.length = MiB;
	ck_assert_int_eq(e->ops->post_write(e, buf, 0, &t, on_done, &r),
			 -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, NULL, 1, &t, on_done, &r),
			 -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, NULL, on_done, &r),
			 -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, &t, NULL, &r), -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, &bad, on_done, &r),
			 -EINVAL);
	/* beyond the registered range, or unregistered */
	ck_assert_int_eq(
	    e->ops->post_write(e, buf + 1, 4 * MiB, &t, on_done, &r), -EINVAL);
	ck_assert_int_eq(e->ops->post_write(e, other, 1, &t, on_done, &r),
			 -EINVAL);
	/* longer than the granted region */
	ck_assert_int_eq(
	    e->ops->post_write(e, buf, MiB + 1, &small, on_done, &r), -EINVAL);
	/* resolve_addr refuses: the error comes back, no callback */
	f->fail_nth[OP_RESOLVE_ADDR] = 1;
	ck_assert_int_eq(e->ops->post_write(e, buf, 1, &t, on_done, &r),
			 -EHOSTUNREACH);
	fake_run(f);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(f->n_wr, 0);
	ck_assert_int_eq(f->alive_id, 1); /* the listener */
	engine_destroy();
	ck_assert_int_eq(r.calls, 0);
	free(buf);
}
END_TEST

/* A target region must be granted with a length, and
 * must not wrap around the address space; hosts are numeric (the engine
 * never resolves names on its loop). */
START_TEST(test_post_bounds)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	uint32_t rkey;
	char *buf;

	e = fake_engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	t.length = 0;
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r),
			 -EINVAL);
	t.length = MiB;
	t.remote_addr = UINT64_MAX - 4095;
	ck_assert_int_eq(e->ops->post_write(e, buf, 8192, &t, on_done, &r),
			 -EINVAL);
	t.remote_addr = REMOTE;
	t.rdma_endpoint = "host-a:20886";
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r),
			 -EINVAL);
	ck_assert(fake_logged(f, "rdma: peer host-a is not a numeric address"));
	fake_run(f);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(f->calls[OP_RESOLVE_ADDR], 0);
	engine_destroy();
	free(buf);
}
END_TEST

/* An error completion: -EIO for every copy on the connection, once; the
 * flushed WRs that follow are neither logged nor reported again. */
START_TEST(test_error_completion)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0};
	uint32_t rkey;
	char *buf;
	int logs;

	f->devs[0].attr.max_qp_wr = 4;
	e = fake_engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 3 * MiB, &t, on_done, &r1),
			 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, 3 * MiB, &t, on_done, &r2),
			 0);
	fake_run(f);
	ck_assert_int_eq(f->n_wr, 4);
	logs = f->n_log;
	fake_fail_next(f, IBV_WC_REM_ACCESS_ERR);
	fake_run(f);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r1.status, -EIO);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(r1.error,
			 "rdma: write to 10.0.0.2:20886 failed: remote "
			 "access error (wc status 10, vendor error 0x0)");
	ck_assert_str_eq(r2.error, r1.error);
	ck_assert_int_eq(f->n_log, logs + 1);
	ck_assert_str_eq(f->log[logs], r1.error);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	ck_assert_int_eq(f->alive_id, 1); /* the listener */
	fake_run(f);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	engine_destroy();
	ck_assert_int_eq(r1.calls, 1);
	free(buf);
}
END_TEST

/* Peer disconnects (flushes land in the CQ too): -EIO once; the next copy
 * to that peer makes a new connection. */
START_TEST(test_disconnect_reconnect)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0};
	e = fake_engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 16 * MiB, &rkey);

	ck_assert_int_eq(e->ops->post_write(e, buf, 3 * MiB, &t, on_done, &r1),
			 0);
	fake_run(f);
	ck_assert_int_eq(f->n_wr, 3);
	fake_cm_event(f, fake_last_live_id(f), RDMA_CM_EVENT_DISCONNECTED, 0);
	fake_run(f);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, -EIO);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	/* Exactly one line for the loss, whichever event came first. */
	ck_assert(fake_logged(f, "rdma: connection to 10.0.0.2:20886"));
	ck_assert_int_eq(f->n_log, 2);

	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	fake_run(f);
	ck_assert_int_eq(f->calls[OP_CREATE_ID], 3);
	ck_assert_int_eq(f->calls[OP_CREATE_QP], 2);
	ck_assert_int_eq(f->n_wr, 4);
	fake_complete(f, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, 0);
	ck_assert_int_eq(r1.calls, 1);
	engine_destroy();
	free(buf);
}
END_TEST

/* Completions that made it before the disconnect still count. */
START_TEST(test_disconnect_keeps_successes)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0};
	e = fake_engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 16 * MiB, &rkey);
	int i;

	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r1), 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	fake_run(f);
	/* r1's completion is in the CQ, but the CM event is handled first. */
	f->wr[0].done = true;
	fake_cq_push(f, f->wr[0].qp->cq, f->wr[0].wr_id, IBV_WC_SUCCESS);
	f->comp->n_pending = 0;
	fake_cm_event(f, fake_last_live_id(f), RDMA_CM_EVENT_DISCONNECTED, 0);
	for (i = 0; i < 8; i++)
		event_base_loop(f->base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, 0);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(r2.error, "rdma: connection to 10.0.0.2:20886: "
				   "RDMA_CM_EVENT_DISCONNECTED (status 0)");
	engine_destroy();
	free(buf);
}
END_TEST

static const struct {
	enum rdma_cm_event_type at; /* fails instead of this step */
	enum rdma_cm_event_type ev;
	int status;
	const char *error;
} connect_fails[] = {
    {RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ADDR_ERROR, -110,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_ADDR_ERROR (status "
     "-110)"},
    {RDMA_CM_EVENT_ROUTE_RESOLVED, RDMA_CM_EVENT_ROUTE_ERROR, -110,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_ROUTE_ERROR (status "
     "-110)"},
    {RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_REJECTED, 28,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_REJECTED (status 28)"},
    {RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_UNREACHABLE, -110,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_UNREACHABLE (status "
     "-110)"},
    {RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_CONNECT_ERROR, -5,
     "rdma: connection to 10.0.0.2:20886: RDMA_CM_EVENT_CONNECT_ERROR (status "
     "-5)"},
};
#define N_CONNECT_FAILS (int)(sizeof(connect_fails) / sizeof(connect_fails[0]))

/* Connection setup driven by hand, failing at one step. */
START_TEST(test_connect_fails)
{
	static const enum rdma_cm_event_type steps[] = {
	    RDMA_CM_EVENT_ADDR_RESOLVED, RDMA_CM_EVENT_ROUTE_RESOLVED,
	    RDMA_CM_EVENT_ESTABLISHED};
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	struct rdma_cm_id *id;
	uint32_t rkey;
	char *buf;
	int s;

	f->auto_cm = false;
	e = fake_engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	id = fake_last_live_id(f);
	for (s = 0; steps[s] != connect_fails[_i].at; s++) {
		fake_cm_event(f, id, steps[s], 0);
		fake_run(f);
	}
	fake_cm_event(f, id, connect_fails[_i].ev, connect_fails[_i].status);
	fake_run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, connect_fails[_i].error);
	ck_assert_int_eq(f->n_wr, 0);
	ck_assert_int_eq(f->alive_id, 1);
	ck_assert_int_eq(f->calls[OP_DISCONNECT], 0);
	engine_destroy();
	free(buf);
}
END_TEST

/* Setup calls failing: the copy fails with the reason, nothing leaks. */
static const struct {
	enum fake_op op;
	const char *error;
} setup_fails[] = {
    {OP_RESOLVE_ROUTE,
     "rdma: resolve route to 10.0.0.2:20886: Network is unreachable"},
    {OP_CREATE_CQ,
     "rdma: queue pair for 10.0.0.2:20886: Cannot allocate memory"},
    {OP_REQ_NOTIFY, "rdma: queue pair for 10.0.0.2:20886: Input/output error"},
    {OP_CREATE_QP,
     "rdma: queue pair for 10.0.0.2:20886: Cannot allocate memory"},
    {OP_CONNECT, "rdma: rdma_connect to 10.0.0.2:20886: Connection refused"},
};
#define N_SETUP_FAILS (int)(sizeof(setup_fails) / sizeof(setup_fails[0]))

START_TEST(test_setup_fails)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	e = fake_engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 4 * MiB, &rkey);

	f->fail_nth[setup_fails[_i].op] = 1;
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	fake_run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, setup_fails[_i].error);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_cq, 0);
	ck_assert_int_eq(f->alive_id, 1);
	engine_destroy();
	free(buf);
}
END_TEST

/* The route goes out through another device than the engine's PD. */
START_TEST(test_route_other_device)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	uint32_t rkey;
	char *buf;

	fake_add_dev(f, "fake1", IBV_PORT_ACTIVE, 0);
	f->route_dev = &f->devs[1].ctx;
	e = fake_engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	fake_run(f);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(
	    r.error,
	    "rdma: route to 10.0.0.2:20886 goes through device fake1, not fake0");
	engine_destroy();
	free(buf);
}
END_TEST

/* Many completion events: acked in batches, all acked before the CQ goes
 * (the fake flags destroy_cq with unacked events). */
START_TEST(test_cq_event_acks)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0};
	e = fake_engine_default(f);
	uint32_t rkey;
	char *buf = reg_buf(e, 4 * MiB, &rkey);
	int i;

	for (i = 0; i < 40; i++) {
		ck_assert_int_eq(
		    e->ops->post_write(e, buf, 4096, &t, on_done, &r), 0);
		fake_run(f);
		fake_complete(f, 1);
		ck_assert_int_eq(r.calls, i + 1);
		ck_assert_int_eq(r.status, 0);
	}
	ck_assert_int_eq(f->calls[OP_ACK_CQ], 40 / RDMA_CQ_ACK_BATCH);
	engine_destroy();
	ck_assert_int_eq(f->calls[OP_ACK_CQ], 40 / RDMA_CQ_ACK_BATCH + 1);
	free(buf);
}
END_TEST

/* ---- async events -------------------------------------- */

/* A QP error event fails the copies on it at once, not at the timeout;
 * the next copy reconnects. */
START_TEST(test_async_qp_fatal)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct done_rec r = {0}, r2 = {0};
	struct rdma_cm_id *id;
	uint32_t rkey;
	char *buf;

	e = fake_engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	fake_run(f);
	id = fake_last_live_id(f);
	fake_async_event(f, 0, IBV_EVENT_QP_FATAL, id->qp, 0);
	fake_run(f);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, "rdma: connection to 10.0.0.2:20886: local "
				  "work queue catastrophic error");
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	fake_run(f);
	fake_complete(f, 1);
	ck_assert_int_eq(r2.status, 0);
	engine_destroy();
	free(buf);
}
END_TEST

/* Port down fails every connection; a fatal device error and rdma_cm's
 * device removal also refuse new copies. */
static const struct {
	int how; /* 0 PORT_ERR, 1 DEVICE_FATAL, 2 CM DEVICE_REMOVAL */
	int post_after;
	const char *log;
} dead_cases[] = {
    {0, 0, "rdma: port 1 of fake0 went down: port error"},
    {1, -ENODEV,
     "rdma: device fake0: local catastrophic error; copies fail until the "
     "worker restarts (or runs with --transport=tcp)"},
    {2, -ENODEV,
     "rdma: device fake0: removed (RDMA_CM_EVENT_DEVICE_REMOVAL); copies "
     "fail until the worker restarts (or runs with --transport=tcp)"},
};
#define N_DEAD (int)(sizeof(dead_cases) / sizeof(dead_cases[0]))

START_TEST(test_async_device_down)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target t2 = target("10.0.0.3:7000", REMOTE);
	struct done_rec r1 = {0}, r2 = {0}, r3 = {0};
	uint32_t rkey;
	char *buf;

	e = fake_engine_default(f);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r1), 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t2, on_done, &r2), 0);
	fake_run(f);
	if (dead_cases[_i].how == 0)
		fake_async_event(f, 0, IBV_EVENT_PORT_ERR, NULL, 1);
	else if (dead_cases[_i].how == 1)
		fake_async_event(f, 0, IBV_EVENT_DEVICE_FATAL, NULL, 0);
	else
		fake_cm_push(f, f->listen_id, NULL,
			     RDMA_CM_EVENT_DEVICE_REMOVAL, 0);
	fake_run(f);
	ck_assert_int_eq(r1.status, -EIO);
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(r1.error, dead_cases[_i].log);
	ck_assert(fake_logged(f, dead_cases[_i].log));
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r3),
			 dead_cases[_i].post_after);
	engine_destroy();
	free(buf);
}
END_TEST

/* ---- timeouts ----------------------------------------------------------- */

static void run_until(const int *calls, int want)
{
	int i;

	for (i = 0; i < 400; i++) {
		struct timeval tv = {0, 5000};

		event_base_loopexit(f->base, &tv);
		event_base_dispatch(f->base);
		if (*calls >= want)
			break;
	}
}

/* Never connected: the copy times out alone; the connection stays. */
START_TEST(test_timeout_queued)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_engine_config cfg;
	struct done_rec r = {0};
	uint32_t rkey;
	char *buf;

	f->auto_cm = false;
	fake_cfg_init(&cfg);
	cfg.timeout_ms = 20;
	e = fake_engine_new(f, &cfg);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r), 0);
	run_until(&r.calls, 1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_str_eq(
	    r.error,
	    "rdma: copy of 1048576 bytes to 10.0.0.2:20886 timed out after 20 ms");
	ck_assert_int_eq(f->alive_id, 2);
	engine_destroy();
	ck_assert_int_eq(r.calls, 1);
	free(buf);
}
END_TEST

/* In flight: its WRs cannot be withdrawn, so the connection goes. */
START_TEST(test_timeout_inflight)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_engine_config cfg;
	struct done_rec r1 = {0}, r2 = {0};
	uint32_t rkey;
	char *buf;

	fake_cfg_init(&cfg);
	cfg.timeout_ms = 20;
	e = fake_engine_new(f, &cfg);
	buf = reg_buf(e, 4 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r1), 0);
	fake_run(f); /* connected, r1 in flight (no sleep: its timer runs) */
	ck_assert_int_eq(r1.calls, 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t, on_done, &r2), 0);
	run_until(&r2.calls, 1);
	ck_assert_int_eq(r1.status, -ETIMEDOUT);
	ck_assert_str_eq(
	    r1.error,
	    "rdma: copy of 1048576 bytes to 10.0.0.2:20886 timed out after 20 ms");
	ck_assert_int_eq(r2.status, -EIO);
	ck_assert_str_eq(
	    r2.error,
	    "rdma: connection to 10.0.0.2:20886 reset: a copy timed out after 20 ms");
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->calls[OP_DISCONNECT], 1);
	engine_destroy();
	free(buf);
}
END_TEST

/* ---- destroy ------------------------------------------------------------ */

START_TEST(test_destroy_cancels)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	struct copy_target t2 = target("10.0.0.3:7000", REMOTE + 64 * MiB);
	struct done_rec r1 = {0}, r2 = {0}, r3 = {0};
	struct fake_wr *w;
	uint32_t rkey;
	char *buf;
	int i;

	f->devs[0].attr.max_qp_wr = 2;
	e = fake_engine_default(f);
	buf = reg_buf(e, 16 * MiB, &rkey);
	ck_assert_int_eq(e->ops->post_write(e, buf, 4 * MiB, &t, on_done, &r1),
			 0);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t2, on_done, &r2), 0);
	fake_run(f);
	ck_assert_int_eq(e->ops->post_write(e, buf, MiB, &t2, on_done, &r3), 0);
	fake_run(f);
	ck_assert_int_eq(f->n_wr, 4);
	/* r2 (the first WR to 10.0.0.3) completed, its callback not run */
	for (i = 0; f->wr[i].raddr != REMOTE + 64 * MiB; i++)
		;
	w = &f->wr[i];
	w->done = true;
	fake_cq_push(f, w->qp->cq, w->wr_id, IBV_WC_SUCCESS);
	f->comp->n_pending = 0;
	engine_destroy();
	ck_assert_int_eq(r1.calls, 1);
	ck_assert_int_eq(r1.status, -ECANCELED);
	ck_assert_str_eq(r1.error, "rdma: copy engine destroyed");
	ck_assert_int_eq(r2.calls, 1);
	ck_assert_int_eq(r2.status, 0);
	ck_assert_int_eq(r3.calls, 1);
	ck_assert_int_eq(r3.status, -ECANCELED);
	ck_assert_int_eq(f->calls[OP_DISCONNECT], 2);
	ck_assert_int_eq(f->n_log, 1); /* only the device line */
	free(buf);
}
END_TEST

static struct copy_engine *destroy_me;
static int destroy_calls;

static void on_done_destroy(int status, const char *error, void *arg)
{
	(void)error;
	(void)arg;
	destroy_calls++;
	if (destroy_calls == 1) {
		ck_assert_int_eq(status, 0);
		copy_engine_destroy(destroy_me);
	} else {
		ck_assert_int_eq(status, -ECANCELED);
	}
}

/* Destroying the engine from a callback: the rest still get theirs. */
START_TEST(test_destroy_in_callback)
{
	struct copy_target t = target("10.0.0.2:7000", REMOTE);
	uint32_t rkey;
	char *buf;
	int i;

	destroy_me = fake_engine_default(f);
	destroy_calls = 0;
	buf = reg_buf(destroy_me, 4 * MiB, &rkey);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(
		    destroy_me->ops->post_write(destroy_me, buf, MiB, &t,
						on_done_destroy, NULL),
		    0);
	fake_run(f);
	fake_complete(f, 1);
	ck_assert_int_eq(destroy_calls, 3);
	free(buf);
}
END_TEST

/* ---- inbound ------------------------------------------------------------ */

static struct rdma_cm_id *connect_request(struct ibv_context *dev)
{
	struct rdma_cm_id *id = fake_id_new(f, &f->cm->ch, NULL);
	struct sockaddr_in *sin = AS(sockaddr_in, &id->route.addr.dst_addr);

	id->verbs = dev;
	sin->sin_family = AF_INET;
	sin->sin_port = htons(40000);
	sin->sin_addr.s_addr = htonl(0x0a000009);
	fake_cm_push(f, id, f->listen_id, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	return id;
}

START_TEST(test_inbound)
{
	struct rdma_cm_id *id;

	fake_add_dev(f, "fake1", IBV_PORT_ACTIVE, 0);
	e = fake_engine_default(f);
	id = connect_request(&f->devs[0].ctx);
	fake_run(f);
	ck_assert_ptr_nonnull(id->qp);
	ck_assert_ptr_eq(id->qp->pd->context, &f->devs[0].ctx);
	ck_assert_int_eq(f->calls[OP_REJECT], 0);
	ck_assert_int_eq(f->alive_qp, 1);
	/* The peer goes away: a normal event, torn down quietly. */
	fake_cm_event(f, id, RDMA_CM_EVENT_DISCONNECTED, 0);
	fake_run(f);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_id, 1);
	ck_assert_int_eq(f->n_log, 1);

	/* Through another device: refused. */
	connect_request(&f->devs[1].ctx);
	fake_run(f);
	ck_assert_int_eq(f->calls[OP_REJECT], 1);
	ck_assert_int_eq(f->alive_id, 1);
	ck_assert(fake_logged(
	    f,
	    "rdma: refused 10.0.0.9:40000: it came through device fake1, not fake0"));

	/* Accept fails: rejected, nothing left. */
	f->fail_nth[OP_ACCEPT] = f->calls[OP_ACCEPT] + 1;
	connect_request(&f->devs[0].ctx);
	fake_run(f);
	ck_assert_int_eq(f->calls[OP_REJECT], 2);
	ck_assert_int_eq(f->alive_qp, 0);
	ck_assert_int_eq(f->alive_id, 1);

	/* One still connected at destroy. */
	connect_request(&f->devs[0].ctx);
	fake_run(f);
	ck_assert_int_eq(f->alive_qp, 1);
	engine_destroy();
}
END_TEST

/* ---- the fabric: engines that move bytes between them ------------------ */

#define N_NODES 3

static struct fake_fabric *fab;
static struct fake *node[N_NODES];
static struct copy_engine *eng[N_NODES];

/* Nodes 10.0.0.1, 10.0.0.2 and a second worker on 10.0.0.2. */
static void fabric_setup(void)
{
	fab = fabric_new();
	node[0] = fabric_add_node(fab, "10.0.0.1");
	node[1] = fabric_add_node(fab, "10.0.0.2");
	node[2] = fabric_add_node(fab, "10.0.0.2");
	memset(eng, 0, sizeof(eng));
}

static void engine_destroy_all(void)
{
	int i;

	for (i = 0; i < N_NODES; i++) {
		copy_engine_destroy(eng[i]);
		eng[i] = NULL;
	}
}

static void fabric_teardown(void)
{
	engine_destroy_all();
	fabric_run(fab, 4);
	fabric_free(fab);
	fab = NULL;
}

static struct copy_engine *fabric_engine(int i, uint16_t port)
{
	struct copy_engine_config cfg;

	fake_cfg_init(&cfg);
	cfg.rdma_port = port;
	eng[i] = fake_engine_new(node[i], &cfg);
	return eng[i];
}

/* A registered buffer on engine i, filled from seed (0: zeros). */
static char *fabric_buf(int i, size_t len, unsigned seed, uint64_t *addr,
			uint32_t *rkey)
{
	char *buf = malloc(len);
	size_t k;

	ck_assert_ptr_nonnull(buf);
	for (k = 0; k < len; k++)
		buf[k] = seed ? (char)(k * 31 + seed + k / 4096) : 0;
	ck_assert_int_eq(
	    eng[i]->ops->register_memory(eng[i], buf, len, addr, rkey), 0);
	return buf;
}

/* Runs the fabric until r has its callback. */
static void fabric_wait(struct done_rec *r, int calls)
{
	int i;

	for (i = 0; i < 200 && r->calls < calls; i++)
		fabric_run(fab, 1);
	ck_assert_int_eq(r->calls, calls);
}

/* Copies larger than max_msg_sz land byte for byte; the link goes down
 * and the next copy reconnects; the target restarts and is reached
 * again. */
START_TEST(test_fabric_copy_reconnect)
{
	const size_t len = 5 * MiB + 123;
	struct done_rec r = {0};
	struct copy_target t;
	uint64_t addr;
	uint32_t rkey;
	char *src, *dst;

	fabric_engine(0, 20886);
	fabric_engine(1, 20886);
	src = fabric_buf(0, 8 * MiB, 7, NULL, NULL);
	dst = fabric_buf(1, 8 * MiB, 0, &addr, &rkey);
	t = target("10.0.0.2:7000", addr + 4096);
	t.rkey = rkey;
	t.length = len;
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, len, &t, on_done, &r), 0);
	fabric_wait(&r, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(memcmp(dst + 4096, src, len), 0);
	ck_assert_int_eq(dst[4095], 0);
	ck_assert_int_eq(dst[4096 + len], 0);
	ck_assert_uint_eq(fab->bytes_written, len);
	ck_assert_uint_eq(fab->writes, 6); /* 1 MiB messages */

	/* The link goes down; the next copy makes a new connection. */
	fabric_cut(node[0]);
	fabric_run(fab, 4);
	ck_assert_int_eq(node[0]->alive_qp, 0);
	ck_assert_int_eq(node[1]->alive_qp, 0);
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src + MiB, len, &t, on_done, &r),
	    0);
	fabric_wait(&r, 2);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(memcmp(dst + 4096, src + MiB, len), 0);

	/* The target restarts: new engine, new registration, new rkey. */
	copy_engine_destroy(eng[1]);
	eng[1] = NULL;
	fabric_run(fab, 4);
	fabric_engine(1, 20886);
	ck_assert_int_eq(
	    eng[1]->ops->register_memory(eng[1], dst, 8 * MiB, &addr, &rkey),
	    0);
	memset(dst, 0, 8 * MiB);
	t.rkey = rkey;
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, len, &t, on_done, &r), 0);
	fabric_wait(&r, 3);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(memcmp(dst + 4096, src, len), 0);
	engine_destroy_all();
	free(src);
	free(dst);
}
END_TEST

/* Two workers on one host (rdma_cm ports 20886 and
 * 20887, as tests/rdma/hardware-test.sh starts them). The copy must reach
 * the port the target advertised, not the source's own listener (where
 * the target's rkey is unknown: a remote access error). */
START_TEST(test_fabric_copy_reaches_target_port)
{
	struct done_rec r = {0};
	struct copy_target t;
	uint64_t addr;
	uint32_t rkey;
	char *src, *dst, *own;

	fabric_engine(1, 20886);
	fabric_engine(2, 20887);
	src = fabric_buf(1, 4 * MiB, 5, NULL, NULL);
	own = fabric_buf(1, 4 * MiB, 0, NULL, NULL);
	dst = fabric_buf(2, 4 * MiB, 0, &addr, &rkey);
	ck_assert_uint_eq(eng[2]->listen_port, 20887);
	t = target("10.0.0.2:7001", addr);
	t.rdma_endpoint = "10.0.0.2:20887";
	t.rkey = rkey;
	t.length = 3 * MiB;
	ck_assert_int_eq(
	    eng[1]->ops->post_write(eng[1], src, 3 * MiB, &t, on_done, &r), 0);
	fabric_wait(&r, 1);
	ck_assert_str_eq(r.error, "(null)");
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(memcmp(dst, src, 3 * MiB), 0);
	ck_assert_uint_eq(fab->access_errors, 0);
	ck_assert_int_eq(node[2]->alive_qp, 1); /* the inbound QP */
	engine_destroy_all();
	free(src);
	free(own);
	free(dst);
}
END_TEST

/* The peer disconnects after the bytes landed but before
 * the completion is polled (hardware delivers it a moment later): the
 * copy still succeeds. */
START_TEST(test_fabric_completion_after_disconnect)
{
	struct done_rec r = {0};
	struct copy_target t;
	uint64_t addr;
	uint32_t rkey;
	char *src, *dst;

	fabric_engine(0, 20886);
	fabric_engine(1, 20886);
	src = fabric_buf(0, 4 * MiB, 9, NULL, NULL);
	dst = fabric_buf(1, 4 * MiB, 0, &addr, &rkey);
	t = target("10.0.0.2:7000", addr);
	t.rkey = rkey;
	t.length = 3 * MiB;
	fab->hold_completions = true;
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, 3 * MiB, &t, on_done, &r), 0);
	fabric_run(fab, 8);
	ck_assert_uint_eq(fab->bytes_written, 3 * MiB);
	ck_assert_int_eq(r.calls, 0);
	fabric_cut(node[1]);
	fabric_run(fab, 8);
	fabric_release(fab);
	fab->hold_completions = false;
	fabric_wait(&r, 1);
	ck_assert_str_eq(r.error, "(null)");
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(memcmp(dst, src, 3 * MiB), 0);
	fabric_run(fab, 8);
	ck_assert_int_eq(node[0]->alive_qp, 0);
	engine_destroy_all();
	free(src);
	free(dst);
}
END_TEST

/* A source crashes (its target hears nothing) and comes
 * back: its new connection replaces the stale inbound one. */
START_TEST(test_fabric_crashed_source)
{
	struct done_rec r = {0};
	struct copy_target t;
	uint64_t addr;
	uint32_t rkey;
	char *src, *dst;

	fabric_engine(0, 20886);
	fabric_engine(1, 20886);
	src = fabric_buf(0, MiB, 4, NULL, NULL);
	dst = fabric_buf(1, MiB, 0, &addr, &rkey);
	t = target("10.0.0.2:7000", addr);
	t.rkey = rkey;
	t.length = MiB;
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, MiB, &t, on_done, &r), 0);
	fabric_wait(&r, 1);
	ck_assert_int_eq(node[1]->alive_qp, 1);
	fab->silent = true;
	copy_engine_destroy(eng[0]);
	eng[0] = NULL;
	fab->silent = false;
	free(src);
	fabric_run(fab, 4);
	ck_assert_int_eq(node[1]->alive_qp, 1); /* nobody told it */

	fabric_engine(0, 20886);
	src = fabric_buf(0, MiB, 6, NULL, NULL);
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, MiB, &t, on_done, &r), 0);
	fabric_wait(&r, 2);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(memcmp(dst, src, MiB), 0);
	fabric_run(fab, 4);
	ck_assert_int_eq(node[1]->alive_qp, 1);
	ck_assert(fake_logged(node[1], "rdma: inbound connection from "
				       "10.0.0.1:40000 replaced by "
				       "10.0.0.1:40001"));
	engine_destroy_all();
	free(src);
	free(dst);
}
END_TEST

/* The completions of a torn-down connection never come: after
 * RDMA_DRAIN_MS the copy fails and the QP goes anyway. */
START_TEST(test_fabric_drain_timeout)
{
	struct done_rec r = {0};
	struct copy_target t;
	uint64_t addr;
	uint32_t rkey;
	char *src, *dst;
	int i;

	fabric_engine(0, 20886);
	fabric_engine(1, 20886);
	src = fabric_buf(0, MiB, 9, NULL, NULL);
	dst = fabric_buf(1, MiB, 0, &addr, &rkey);
	t = target("10.0.0.2:7000", addr);
	t.rkey = rkey;
	t.length = MiB;
	fab->hold_completions = true;
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, MiB, &t, on_done, &r), 0);
	fabric_run(fab, 8);
	fabric_cut(node[1]);
	fabric_run(fab, 8);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(node[0]->alive_qp, 1); /* waiting */
	for (i = 0; i < 300 && !r.calls; i++) {
		struct timeval tv = {0, 10000};

		event_base_loopexit(fab->base, &tv);
		event_base_dispatch(fab->base);
	}
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, "rdma: connection to 10.0.0.2:20886: "
				  "RDMA_CM_EVENT_DISCONNECTED (status 0)");
	ck_assert_int_eq(node[0]->alive_qp, 0);
	fab->hold_completions = false;
	engine_destroy_all();
	free(src);
	free(dst);
}
END_TEST

/* Three engines (two sharing 10.0.0.2 on ports 20886 and 20887) copy to
 * each other at once, through small send queues (so WRs wait for room),
 * objects from 1 byte to above max_msg_sz; a link is cut half way and
 * the copies it failed are posted again, as the worker retries them.
 * Every byte ends where it should. */
#define MANY_OBJ 7
#define MANY_COPIES (N_NODES * (N_NODES - 1) * MANY_OBJ)

static const uint32_t many_size[MANY_OBJ] = {
    1, 4096, MiB - 1, MiB + 1, 2 * MiB + 12345, 77, 3 * MiB / 2};

struct many_copy {
	int s, d, k;
	uint64_t src_off, off; /* in the source, in the target (its half) */
	struct done_rec r;
};

static void many_post(struct many_copy *c, char **src, const uint64_t *addr,
		      const uint32_t *rkey)
{
	static const char *const ep[N_NODES][2] = {
	    {"10.0.0.1:7000", "10.0.0.1:20886"},
	    {"10.0.0.2:7000", "10.0.0.2:20886"},
	    {"10.0.0.2:7001", "10.0.0.2:20887"}};
	struct copy_target t = target(ep[c->d][0], addr[c->d] + c->off);

	t.rdma_endpoint = ep[c->d][1];
	t.rkey = rkey[c->d];
	t.length = many_size[c->k];
	memset(&c->r, 0, sizeof(c->r));
	ck_assert_int_eq(
	    eng[c->s]->ops->post_write(eng[c->s], src[c->s] + c->src_off,
				       many_size[c->k], &t, on_done, &c->r),
	    0);
}

START_TEST(test_fabric_many_copies_and_a_cut)
{
	static struct many_copy cp[MANY_COPIES];
	char *src[N_NODES], *dst[N_NODES];
	uint64_t addr[N_NODES];
	uint32_t rkey[N_NODES];
	int i, n = 0, round, pending, retried = 0;

	fab->tick_budget = 4;
	for (i = 0; i < N_NODES; i++) {
		node[i]->devs[0].attr.max_qp_wr = 8;
		fabric_engine(i, i == 2 ? 20887 : 20886);
		src[i] = fabric_buf(i, 8 * MiB, (unsigned)i + 1, NULL, NULL);
		dst[i] = fabric_buf(i, 16 * MiB, 0, &addr[i], &rkey[i]);
	}
	for (int s = 0; s < N_NODES; s++)
		for (int d = 0; d < N_NODES; d++) {
			uint64_t off = 0,
				 half = (uint64_t)(s < d ? s : s - 1) * 8 * MiB;

			for (int k = 0; s != d && k < MANY_OBJ; k++) {
				cp[n] = (struct many_copy){
				    s, d, k, off, half + off, {0}};
				off += many_size[k];
				many_post(&cp[n++], src, addr, rkey);
			}
		}
	ck_assert_int_eq(n, MANY_COPIES);
	/* Cut node 2's links once some copies are done, others not. */
	for (round = 0, pending = n; round < 100 && pending > n - 8; round++) {
		fabric_run(fab, 1);
		for (i = 0, pending = n; i < n; i++)
			pending -= cp[i].r.calls;
	}
	ck_assert_int_lt(pending, n);
	fabric_cut(node[2]);
	for (round = 0; round < 50; round++) {
		fabric_run(fab, 8);
		pending = 0;
		for (i = 0; i < n; i++) {
			if (cp[i].r.calls && cp[i].r.status) {
				ck_assert_int_eq(cp[i].r.status, -EIO);
				many_post(&cp[i], src, addr, rkey);
				retried++;
			}
			pending += !cp[i].r.calls;
		}
		if (!pending)
			break;
	}
	ck_assert_int_eq(pending, 0);
	ck_assert_int_gt(retried, 0);	   /* the cut failed some */
	ck_assert_int_lt(retried, n);	   /* and not all */
	ck_assert_uint_gt(fab->writes, n); /* larger ones were split */
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(cp[i].r.status, 0);
		ck_assert_msg(!memcmp(dst[cp[i].d] + cp[i].off,
				      src[cp[i].s] + cp[i].src_off,
				      many_size[cp[i].k]),
			      "copy %d -> %d object %d differs", cp[i].s,
			      cp[i].d, cp[i].k);
	}
	engine_destroy_all();
	for (i = 0; i < N_NODES; i++) {
		free(src[i]);
		free(dst[i]);
	}
}
END_TEST

/* The fabric enforces keys: a wrong rkey is a remote access error, no
 * byte moves. */
START_TEST(test_fabric_bad_rkey)
{
	struct done_rec r = {0};
	struct copy_target t;
	uint64_t addr;
	uint32_t rkey;
	char *src, *dst;

	fabric_engine(0, 20886);
	fabric_engine(1, 20886);
	src = fabric_buf(0, MiB, 3, NULL, NULL);
	dst = fabric_buf(1, MiB, 0, &addr, &rkey);
	t = target("10.0.0.2:7000", addr);
	t.rkey = rkey + 1;
	t.length = MiB;
	ck_assert_int_eq(
	    eng[0]->ops->post_write(eng[0], src, MiB, &t, on_done, &r), 0);
	fabric_wait(&r, 1);
	ck_assert_int_eq(r.status, -EIO);
	ck_assert_str_eq(r.error, "rdma: write to 10.0.0.2:20886 failed: "
				  "remote access error (wc status 10, vendor "
				  "error 0x0)");
	ck_assert_uint_eq(fab->access_errors, 1);
	ck_assert_uint_eq(fab->bytes_written, 0);
	engine_destroy_all();
	free(src);
	free(dst);
}
END_TEST

Suite *make_rdma_suite(void)
{
	Suite *s = suite_create("rdma");
	TCase *fabric = tcase_create("fabric");
	TCase *dev = tcase_create("device");
	TCase *reg = tcase_create("register");
	TCase *wr = tcase_create("writes");
	TCase *fail = tcase_create("failures");
	TCase *life = tcase_create("lifecycle");

	tcase_add_checked_fixture(dev, setup, teardown);
	tcase_add_checked_fixture(reg, setup, teardown);
	tcase_add_checked_fixture(wr, setup, teardown);
	tcase_add_checked_fixture(fail, setup, teardown);
	tcase_add_checked_fixture(life, setup, teardown);
	tcase_add_loop_test(dev, test_parse_endpoint, 0, N_ENDPOINTS);
	tcase_add_loop_test(dev, test_device_select, 0, N_PICK);
	tcase_add_test(dev, test_real_no_device);
	tcase_add_loop_test(dev, test_create_fails, 0, N_CREATE_FAILS);
	tcase_add_test(dev, test_listener);
	tcase_add_test(reg, test_register_once);
	tcase_add_test(reg, test_register_grants_no_remote_read);
	tcase_add_test(reg, test_register_split);
	tcase_add_test(reg, test_register_split_fails);
	tcase_add_test(reg, test_register_overlap);
	tcase_add_test(reg, test_unregister);
	tcase_add_test(reg, test_register_memlock);
	tcase_add_loop_test(wr, test_split, 0, N_SPLIT);
	tcase_add_test(wr, test_split_at_mr_boundary);
	tcase_add_test(wr, test_wr_window);
	tcase_add_test(wr, test_copies_share_connection);
	tcase_add_test(wr, test_cq_event_acks);
	tcase_add_test(fail, test_callback_deferred);
	tcase_add_test(fail, test_post_invalid);
	tcase_add_test(fail, test_post_bounds);
	tcase_add_test(fail, test_async_qp_fatal);
	tcase_add_loop_test(fail, test_async_device_down, 0, N_DEAD);
	tcase_add_test(fail, test_error_completion);
	tcase_add_test(fail, test_disconnect_reconnect);
	tcase_add_test(fail, test_disconnect_keeps_successes);
	tcase_add_loop_test(fail, test_connect_fails, 0, N_CONNECT_FAILS);
	tcase_add_loop_test(fail, test_setup_fails, 0, N_SETUP_FAILS);
	tcase_add_test(fail, test_route_other_device);
	tcase_add_test(fail, test_timeout_queued);
	tcase_add_test(fail, test_timeout_inflight);
	tcase_add_test(life, test_destroy_cancels);
	tcase_add_test(life, test_destroy_in_callback);
	tcase_add_test(life, test_inbound);
	suite_add_tcase(s, dev);
	suite_add_tcase(s, reg);
	suite_add_tcase(s, wr);
	suite_add_tcase(s, fail);
	tcase_add_checked_fixture(fabric, fabric_setup, fabric_teardown);
	tcase_add_test(fabric, test_fabric_copy_reconnect);
	tcase_add_test(fabric, test_fabric_bad_rkey);
	tcase_add_test(fabric, test_fabric_copy_reaches_target_port);
	tcase_add_test(fabric, test_fabric_completion_after_disconnect);
	tcase_add_test(fabric, test_fabric_crashed_source);
	tcase_add_test(fabric, test_fabric_drain_timeout);
	tcase_add_test(fabric, test_fabric_many_copies_and_a_cut);
	suite_add_tcase(s, life);
	suite_add_tcase(s, fabric);
	return s;
}

#endif /* MCREPL_HAVE_RDMA */
