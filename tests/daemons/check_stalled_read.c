/* A reader that stalls its READ reply, on real daemons over loopback:
 *  - it never receives bytes of a region given away after its READ was
 *    admitted: the reader (tenant evil) reads its own object through a
 *    4 KiB receive buffer and stops reading, removes the object once its
 *    read lease ends, waits for tenant alice's object to be put in the same
 *    region, then drains; the worker cut its reply when alice's WRITE was
 *    admitted there, so every byte evil got is its own, and alice's object
 *    reads back whole;
 *  - the other order: a READ of a region a WRITE is landing in (the
 *    region given away, its stamp not yet overwritten) is refused DENIED,
 *    as a region holding another object is;
 *  - read holds (hold.h): exactly the overlapping ranges of the same slot
 *    are found, a connection's holds leave with it, released holds are
 *    reused up to their bound; a data server destroyed while a reply
 *    holds a range frees every hold (the ASan build's leak check);
 *  - a reply that does not drain at the data port's minimum rate over a
 *    window (--data_body_timeout_ms, --data_min_body_rate) is closed and
 *    counted, and the object still reads back.
 */
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "data_proto.h"
#include "data_server.h"
#include "grantfix.h"
#include "harness.h"
#include "hold.h"
#include "stamp.h"
#include "store_client.h"
#include "wait.h"

Suite *make_stalled_read_suite(void);

#define OBJ (16u << 20) /* far more than the loopback socket buffers */
#define WHOLE (STAMP_BYTES + OBJ)
#define CUT "mcrepl_worker_data_replies_cut_total"
#define REVOKED "mcrepl_master_write_grants_revoked_total"
#define STREAMING "mcrepl_worker_data_writes_streaming"
#define STALE "mcrepl_worker_grant_refusals_total{reason=\"stale_region\"}"
#define TIMEOUTS "mcrepl_worker_data_reply_timeouts_total"

static struct {
	struct proc master, worker;
	uint16_t port, mhttp, whttp;
	char addr[64];
	uint8_t *mine, *theirs; /* evil's object, alice's */
} fx;

/* A master with 50 ms read leases and one worker of one 24 MiB segment
 * (one object fits: the next goes where the last was), with extra worker
 * flag wflag (NULL: none). */
static void cluster_up(const char *wflag)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    "--default_kv_lease_ttl=50", NULL};
	char bin[512], master[80];
	char *argv[] = {bin,
			master,
			(char *)(uintptr_t) "--host_id=host-a",
			(char *)(uintptr_t) "--segment_size=24M",
			(char *)(uintptr_t) "--transport=tcp",
			(char *)(uintptr_t) "--metrics_port=0",
			(char *)(uintptr_t)wflag,
			NULL};

	memset(&fx, 0, sizeof(fx));
	fx.master.pid = fx.worker.pid = -1;
	fx.mine = malloc(OBJ);
	fx.theirs = malloc(OBJ);
	ck_assert(fx.mine && fx.theirs);
	for (size_t i = 0; i < OBJ; i++) {
		fx.mine[i] = (uint8_t)(i * 131 + 7);
		fx.theirs[i] = (uint8_t)(i * 17 + 200);
	}
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	fx.port = (uint16_t)proc_field(&fx.master, "rpc_port");
	fx.mhttp = (uint16_t)proc_field(&fx.master, "metrics_port");
	snprintf(fx.addr, sizeof(fx.addr), "127.0.0.1:%u", fx.port);
	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(master, sizeof(master), "--master=%s", fx.addr);
	ck_assert_int_eq(
	    proc_start(&fx.worker, argv, "mcrepl-worker ready", test_hang_ms()),
	    0);
	fx.whttp = (uint16_t)proc_field(&fx.worker, "metrics_port");
}

static void cluster_down(void)
{
	proc_stop(&fx.worker);
	proc_stop(&fx.master);
	free(fx.mine);
	free(fx.theirs);
}

static long long metric(uint16_t http, const char *name)
{
	char *page = http_get(http, "/metrics");
	long long v;

	ck_assert_ptr_nonnull(page);
	v = metric_value(page, name);
	free(page);
	return v;
}

static long long wmetric(const char *name)
{
	return metric(fx.whttp, name);
}

static store_client *client(const char *tenant)
{
	store_client *c = NULL;
	char err[512];

	ck_assert_msg(
	    store_client_open(&c, fx.addr, tenant, NULL, err, sizeof(err)) == 0,
	    "%s", err);
	return c;
}

static McreplRpc__GetReplicaListResponse *list(store_client *c, const char *key)
{
	McreplRpc__GetReplicaListResponse *r = NULL;

	ck_assert_msg(store_client_get_list(c, key, &r) == 0, "%s",
		      store_client_error(c));
	ck_assert_uint_eq(r->n_replicas, 1);
	return r;
}

/* A connection to the replica's data port whose 4 KiB receive buffer
 * (and 5 s receive timeout) the reader never empties on its own. */
static int stall_connect_port(uint16_t port)
{
	struct sockaddr_in sa = {0};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_INET, SOCK_STREAM, 0), sz = 4096;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)),
			 0);
	ck_assert_int_eq(
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* The same to the replica's data port. */
static int stall_connect(const McreplRpc__Replica *r)
{
	const char *colon = strrchr(r->endpoint, ':');

	ck_assert_ptr_nonnull(colon);
	return stall_connect_port((uint16_t)atoi(colon + 1));
}

/* Up to len bytes into buf, until the peer closes (or 5 s pass). */
static size_t recv_upto(int fd, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = recv(fd, buf + got, len - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* A READ of the replica's whole region under its grant; its reply header
 * (status 0, the whole length) read, nothing more. */
static int stalled_read(const McreplRpc__Replica *r)
{
	struct data_req q = {.op = DATA_OP_READ,
			     .segment_id = r->segment_id,
			     .offset = r->offset,
			     .length = WHOLE,
			     .grant = store_replica_grant(r)};
	uint8_t hdr[DATA_REQ_BYTES], rh[DATA_RESP_BYTES];
	struct data_resp resp;
	int fd = stall_connect(r);

	data_req_encode(&q, hdr);
	ck_assert_int_eq(send(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	ck_assert_uint_eq(recv_upto(fd, rh, sizeof(rh)), sizeof(rh));
	ck_assert_int_eq(data_resp_decode(rh, &resp), 0);
	ck_assert_uint_eq(resp.status, DATA_OK);
	ck_assert_uint_eq(resp.length, WHOLE);
	return fd;
}

/* The rest of the reply: fewer bytes than the whole region (the worker
 * closed it), each payload byte evil's own. */
static void assert_cut_and_own(int fd)
{
	uint8_t *got = malloc(WHOLE);
	size_t n;

	ck_assert_ptr_nonnull(got);
	n = recv_upto(fd, got, WHOLE);
	if (n > STAMP_BYTES)
		ck_assert_mem_eq(got + STAMP_BYTES, fx.mine, n - STAMP_BYTES);
	ck_assert_uint_lt(n, WHOLE);
	free(got);
	close(fd);
}

static void assert_reads_back(store_client *c, const char *key,
			      const uint8_t *want)
{
	uint64_t len = 0;
	void *buf = NULL;

	ck_assert_msg(store_client_get(c, key, &buf, &len, NULL) == 0,
		      "get: %s", store_client_error(c));
	ck_assert_uint_eq(len, OBJ);
	ck_assert_mem_eq(buf, want, OBJ);
	free(buf);
}

START_TEST(test_attack_stalled_reader_never_gets_next_object)
{
	store_client *evil, *alice;
	McreplRpc__GetReplicaListResponse *el, *al;
	int fd;

	/* no reply timeout here: only alice's WRITE may cut the reply */
	cluster_up("--data_body_timeout_ms=0");
	evil = client("evil");
	alice = client("alice");
	ck_assert_msg(store_client_put(evil, "a", fx.mine, OBJ) == 0, "%s",
		      store_client_error(evil));
	el = list(evil, "a");
	fd = stalled_read(el->replicas[0]);
	WAIT_UNTIL(store_client_remove(evil, "a") == 0);
	/* the region is free once the worker has acknowledged the
	 * revocation of a's WRITE grant (check_grant_attack) */
	WAIT_UNTIL(metric(fx.mhttp, REVOKED) == 1);
	ck_assert_msg(store_client_put(alice, "x", fx.theirs, OBJ) == 0, "%s",
		      store_client_error(alice));
	al = list(alice, "x");
	/* x took a's region */
	ck_assert_uint_eq(al->replicas[0]->segment_id,
			  el->replicas[0]->segment_id);
	ck_assert_uint_eq(al->replicas[0]->offset, el->replicas[0]->offset);
	assert_cut_and_own(fd);
	assert_reads_back(alice, "x", fx.theirs);
	ck_assert_int_eq(wmetric(CUT), 1);
	ck_assert_int_eq(wmetric(TIMEOUTS), 0);
	protobuf_c_message_free_unpacked(&el->base, NULL);
	protobuf_c_message_free_unpacked(&al->base, NULL);
	store_client_close(evil);
	store_client_close(alice);
	cluster_down();
}
END_TEST

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

/* alice's PutStart of x (one replica; the reply the caller's to free). */
static McreplRpc__PutStartResponse *put_start(rpc_client *rc)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("alice");
	ps.key = mut("x");
	ps.size = OBJ;
	ps.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(rc, "PutStart",
							&ps.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->n_replicas, 1);
	return r;
}

/* A request for op on replica r's whole region under grant g, on fd. */
static void send_req(int fd, uint8_t op, const McreplRpc__Replica *r,
		     struct data_grant g)
{
	struct data_req q = {.op = op,
			     .segment_id = r->segment_id,
			     .offset = r->offset,
			     .length = WHOLE,
			     .grant = g};
	uint8_t hdr[DATA_REQ_BYTES];

	data_req_encode(&q, hdr);
	ck_assert_int_eq(send(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
}

/* A whole reply with a short payload: its status, its text in why. */
static int short_reply(int fd, char *why, size_t cap)
{
	uint8_t rh[DATA_RESP_BYTES];
	struct data_resp resp;

	ck_assert_uint_eq(recv_upto(fd, rh, sizeof(rh)), sizeof(rh));
	ck_assert_int_eq(data_resp_decode(rh, &resp), 0);
	ck_assert_uint_lt(resp.length, cap);
	ck_assert_uint_eq(recv_upto(fd, (uint8_t *)why, resp.length),
			  resp.length);
	why[resp.length] = '\0';
	return resp.status;
}

START_TEST(test_attack_read_while_region_written_refused)
{
	store_client *evil;
	McreplRpc__GetReplicaListResponse *el;
	McreplRpc__PutStartResponse *xs;
	rpc_client *rc;
	char why[256], want[160];
	int wfd, rfd;

	cluster_up(NULL);
	evil = client("evil");
	rc = harness_client(fx.port);
	ck_assert_ptr_nonnull(rc);
	ck_assert_msg(store_client_put(evil, "a", fx.mine, OBJ) == 0, "%s",
		      store_client_error(evil));
	el = list(evil, "a");
	WAIT_UNTIL(store_client_remove(evil, "a") == 0);
	WAIT_UNTIL(metric(fx.mhttp, REVOKED) == 1);
	xs = put_start(rc);
	ck_assert_uint_eq(xs->replicas[0]->offset, el->replicas[0]->offset);
	/* alice's WRITE is admitted; none of its payload has come */
	wfd = stall_connect(xs->replicas[0]);
	send_req(wfd, DATA_OP_WRITE, xs->replicas[0],
		 store_replica_grant(xs->replicas[0]));
	WAIT_UNTIL(wmetric(STREAMING) == 1);
	/* a's stamp is still there: only the WRITE in flight refuses this */
	rfd = stall_connect(el->replicas[0]);
	send_req(rfd, DATA_OP_READ, el->replicas[0],
		 store_replica_grant(el->replicas[0]));
	ck_assert_int_eq(short_reply(rfd, why, sizeof(why)), DATA_E_DENIED);
	snprintf(want, sizeof(want),
		 "read grant refused for segment %llu [%llu, +%u)",
		 (unsigned long long)el->replicas[0]->segment_id,
		 (unsigned long long)el->replicas[0]->offset, WHOLE);
	ck_assert_str_eq(why, want);
	ck_assert_int_eq(wmetric(STALE), 1);
	/* alice's payload lands whole */
	ck_assert_int_eq(send(wfd, fx.theirs, STAMP_BYTES, 0), STAMP_BYTES);
	ck_assert_int_eq(send(wfd, fx.theirs, OBJ, 0), (ssize_t)OBJ);
	ck_assert_int_eq(short_reply(wfd, why, sizeof(why)), DATA_OK);
	ck_assert_int_eq(wmetric(STREAMING), 0);
	close(wfd);
	close(rfd);
	protobuf_c_message_free_unpacked(&xs->base, NULL);
	protobuf_c_message_free_unpacked(&el->base, NULL);
	rpc_client_close(rc);
	store_client_close(evil);
	cluster_down();
}
END_TEST

START_TEST(test_stalled_reply_closed_after_window)
{
	store_client *evil;
	McreplRpc__GetReplicaListResponse *el;
	long long conns;
	int fd;

	cluster_up("--data_body_timeout_ms=300");
	evil = client("evil");
	ck_assert_msg(store_client_put(evil, "a", fx.mine, OBJ) == 0, "%s",
		      store_client_error(evil));
	el = list(evil, "a");
	conns = wmetric("mcrepl_worker_data_connections");
	fd = stalled_read(el->replicas[0]);
	WAIT_UNTIL(wmetric(TIMEOUTS) == 1);
	ck_assert_int_eq(wmetric(TIMEOUTS), 1);
	ck_assert_int_eq(wmetric(CUT), 0);
	ck_assert_int_eq(wmetric("mcrepl_worker_data_connections"), conns);
	assert_cut_and_own(fd);
	assert_reads_back(evil, "a", fx.mine); /* a reader that reads */
	protobuf_c_message_free_unpacked(&el->base, NULL);
	store_client_close(evil);
	cluster_down();
}
END_TEST

START_TEST(test_hold_overlap_and_owner)
{
	struct hold_set set = {0};
	struct hold_owner a = {0}, b = {0};
	struct hold *ha = hold_add(&set, &a, 0, 100, 50); /* [100, 150) */
	struct hold *hb = hold_add(&set, &b, 1, 100, 50);

	ck_assert(ha && hb);
	ck_assert_uint_eq(set.n, 2);
	/* the ends are open: touching ranges do not overlap */
	ck_assert_ptr_null(hold_find(&set, 0, 0, 100));
	ck_assert_ptr_null(hold_find(&set, 0, 150, 10));
	ck_assert_ptr_eq(hold_find(&set, 0, 149, 1), &a);
	ck_assert_ptr_eq(hold_find(&set, 0, 0, 101), &a);
	ck_assert_ptr_eq(hold_find(&set, 1, 120, 1), &b);
	ck_assert_ptr_null(hold_find(&set, 2, 0, 1000));
	ck_assert(hold_owner_overlaps(&a, 0, 90, 20));
	ck_assert(!hold_owner_overlaps(&a, 1, 90, 20));
	/* a's connection goes: its hold is found no more, and freed when its
	 * reference is dropped */
	hold_detach_all(&a);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_ptr_null(hold_find(&set, 0, 0, 1000));
	hold_release(ha);
	/* b's reply is sent: its hold is kept for the next reply */
	hold_release(hb);
	ck_assert_uint_eq(set.n, 0);
	ck_assert_uint_eq(set.n_spare, 1);
	ck_assert_ptr_eq(hold_add(&set, &a, 0, 0, 1), hb);
	ck_assert_uint_eq(set.n_spare, 0);
	hold_set_fini(&set); /* detaches hb: freed at its release */
	ck_assert_uint_eq(set.n, 0);
	hold_release(hb);
}
END_TEST

START_TEST(test_hold_spares_bounded)
{
	enum { N = HOLD_SPARE_MAX + 10 };
	static struct hold *h[N];
	struct hold_set set = {0};
	struct hold_owner o = {0};

	for (int i = 0; i < N; i++) {
		h[i] = hold_add(&set, &o, 0, (uint64_t)i, 1);
		ck_assert_ptr_nonnull(h[i]);
	}
	for (int i = 0; i < N; i++)
		hold_release(h[i]);
	ck_assert_uint_eq(set.n, 0);
	ck_assert_uint_eq(set.n_spare, HOLD_SPARE_MAX);
	hold_set_fini(&set);
	ck_assert_uint_eq(set.n_spare, 0);
}
END_TEST

/* One turn of base's loop; true once ds holds n READ replies. */
static bool holds_now(struct event_base *base, struct data_server *ds,
		      uint64_t n)
{
	struct data_server_counters cn;

	event_base_loop(base, EVLOOP_NONBLOCK);
	data_server_counters(ds, &cn);
	return cn.held_replies == n;
}

START_TEST(test_destroy_with_reply_held)
{
	enum { SEG = 7, LEN = 4u << 20 };
	struct event_base *base = event_base_new();
	struct data_server_config dc;
	struct data_server *ds;
	uint8_t *mem = calloc(1, STAMP_BYTES + LEN);
	char err[256];
	struct data_req q;
	uint8_t hdr[DATA_REQ_BYTES];
	int fd;

	ck_assert(base && mem);
	data_server_config_init(&dc);
	ds = data_server_create(base, &dc, err, sizeof(err));
	ck_assert_msg(ds != NULL, "%s", err);
	data_server_bind(
	    ds, data_server_add_segment(ds, mem, STAMP_BYTES + LEN), SEG);
	gf_arm(ds, 0);
	gf_stamp(mem, GF_OBJECT, LEN);
	fd = stall_connect_port(data_server_port(ds));
	q = (struct data_req){.op = DATA_OP_READ,
			      .segment_id = SEG,
			      .length = STAMP_BYTES + LEN,
			      .grant = gf_grant(DATA_OP_READ, SEG, 0,
						STAMP_BYTES + LEN, GF_OBJECT)};
	data_req_encode(&q, hdr);
	ck_assert_int_eq(send(fd, hdr, sizeof(hdr), 0), (ssize_t)sizeof(hdr));
	WAIT_UNTIL(holds_now(base, ds, 1));
	data_server_destroy(ds);
	event_base_free(base);
	close(fd);
	free(mem);
}
END_TEST

Suite *make_stalled_read_suite(void)
{
	Suite *s = suite_create("stalled_read");
	TCase *tc = tcase_create("stalled_read");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hold_overlap_and_owner);
	tcase_add_test(tc, test_hold_spares_bounded);
	tcase_add_test(tc, test_destroy_with_reply_held);
	tcase_add_test(tc, test_attack_stalled_reader_never_gets_next_object);
	tcase_add_test(tc, test_attack_read_while_region_written_refused);
	tcase_add_test(tc, test_stalled_reply_closed_after_window);
	suite_add_tcase(s, tc);
	return s;
}
