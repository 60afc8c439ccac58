/*
 * The worker's data port under a broken or hostile peer: the
 * header timeout and the connection cap; a WRITE payload (granted or
 * discarded) slower than data_min_body_rate is closed while a steady one
 * is not; a peer that pipelines requests and never reads the replies is
 * paused holding at most data_conn_input request bytes, loses no request,
 * and is closed when the paused connections' bytes pass data_input_budget.
 * An in-process data_server on its own loop thread; real sockets on
 * loopback. Counters are read with the loop stopped.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "data_proto.h"
#include "data_server.h"
#include "grant.h"
#include "grantfix.h"
#include "harness.h"
#include "netutil.h"
#include "rawsock.h"
#include "wait.h"

Suite *make_overload_data_suite(void);

#define SEG_ID 7
#define SEG_BYTES (1u << 20)

struct dloop {
	struct event_base *base;
	struct data_server *ds;
	struct event *stop_ev; /* loopbreak from the test thread */
	int stop_fds[2];
	pthread_t thread;
	uint8_t *seg;
};

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	char b;

	(void)what;
	(void)!read(fd, &b, 1);
	event_base_loopbreak(arg);
}

static void *dloop_main(void *arg)
{
	struct dloop *d = arg;

	event_base_loop(d->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

static void dloop_run(struct dloop *d)
{
	event_add(d->stop_ev, NULL);
	ck_assert_int_eq(pthread_create(&d->thread, NULL, dloop_main, d), 0);
}

/* A server with cfg, a 1 MiB segment bound as SEG_ID, its loop running. */
static void dloop_start(struct dloop *d, const struct data_server_config *dc)
{
	char err[160];
	int slot;

	d->base = event_base_new();
	d->ds = data_server_create(d->base, dc, err, sizeof(err));
	ck_assert_msg(d->ds != NULL, "%s", err);
	d->seg = calloc(1, SEG_BYTES);
	slot = data_server_add_segment(d->ds, d->seg, SEG_BYTES);
	ck_assert_int_ge(slot, 0);
	data_server_bind(d->ds, slot, SEG_ID);
	gf_arm(d->ds, slot);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, d->stop_fds), 0);
	d->stop_ev =
	    event_new(d->base, d->stop_fds[0], EV_READ, stop_cb, d->base);
	dloop_run(d);
}

/* Stops the loop (it may be run again) and reads the counters. */
static void dloop_pause(struct dloop *d, struct data_server_counters *cn)
{
	ck_assert_int_eq(write(d->stop_fds[1], "x", 1), 1);
	pthread_join(d->thread, NULL);
	data_server_counters(d->ds, cn);
}

static void dloop_free(struct dloop *d)
{
	event_free(d->stop_ev);
	close(d->stop_fds[0]);
	close(d->stop_fds[1]);
	data_server_destroy(d->ds);
	event_base_free(d->base);
	free(d->seg);
}

static void send_req(int fd, uint8_t op, uint64_t seg, uint64_t len,
		     struct data_grant grant)
{
	struct data_req r = {
	    .op = op, .segment_id = seg, .length = len, .grant = grant};
	uint8_t hdr[DATA_REQ_BYTES];

	data_req_encode(&r, hdr);
	raw_send(fd, hdr, sizeof(hdr));
}

/* Reads one reply; its status (its payload dropped). */
static int read_reply(int fd)
{
	uint8_t hdr[DATA_RESP_BYTES], junk[256];
	struct data_resp r;

	ck_assert_int_eq(recv(fd, hdr, sizeof(hdr), MSG_WAITALL),
			 (ssize_t)sizeof(hdr));
	ck_assert_int_eq(data_resp_decode(hdr, &r), 0);
	ck_assert_uint_le(r.length, sizeof(junk));
	if (r.length)
		ck_assert_int_eq(recv(fd, junk, (size_t)r.length, MSG_WAITALL),
				 (ssize_t)r.length);
	return r.status;
}

static struct data_grant token(uint64_t len)
{
	return gf_grant(DATA_OP_WRITE, SEG_ID, 0, len, GF_OBJECT);
}

/* Connections the running server has accepted. */
static uint64_t accepted(const struct dloop *d)
{
	struct data_server_counters cn;

	data_server_counters(d->ds, &cn);
	return cn.accepted;
}

START_TEST(test_data_port_header_timeout_and_cap)
{
	struct data_server_config dc;
	struct data_server_counters cn;
	struct dloop d;
	int part, other, over;

	data_server_config_init(&dc);
	dc.header_timeout_ms = 300;
	dc.idle_timeout_ms = 0;
	dc.max_connections = 2;
	dloop_start(&d, &dc);
	part = raw_connect(data_server_port(d.ds));
	raw_send(part, "MCRD", 4); /* a header never finished */
	other = raw_connect(data_server_port(d.ds));
	WAIT_UNTIL(accepted(&d) == 2); /* both, before a third comes */
	over = raw_connect(data_server_port(d.ds));
	ck_assert(closed_soon(over)); /* over the cap of 2 */
	ck_assert(closed_soon(part));
	ck_assert(!closed_within(other, 100)); /* idle, no partial header */
	close(part);
	close(other);
	close(over);
	dloop_pause(&d, &cn);
	ck_assert_uint_eq(cn.header_timeouts, 1);
	ck_assert_uint_eq(cn.refused, 1);
	dloop_free(&d);
}
END_TEST

START_TEST(test_data_slow_write_payload_is_closed)
{
	static uint8_t chunk[64 << 10];
	struct data_server_config dc;
	struct data_server_counters cn;
	struct dloop d;
	uint16_t port;
	int slow, discard, steady;

	data_server_config_init(&dc);
	dc.idle_timeout_ms = 0;
	dc.body_timeout_ms = 300;
	dc.min_body_rate = 64 << 10; /* 19,660 bytes per window */
	dloop_start(&d, &dc);
	port = data_server_port(d.ds);
	/* granted, then 1,000 bytes of its 1 MiB */
	slow = raw_connect(port);
	send_req(slow, DATA_OP_WRITE, SEG_ID, SEG_BYTES, token(SEG_BYTES));
	raw_send(slow, chunk, 1000);
	/* refused (bad token): its payload is read to be dropped, slowly */
	discard = raw_connect(port);
	send_req(discard, DATA_OP_WRITE, SEG_ID, SEG_BYTES,
		 (struct data_grant){.expires_ms = 1, .tag = 1});
	ck_assert_int_eq(read_reply(discard), DATA_E_DENIED);
	raw_send(discard, chunk, 1000);
	/* 64 KiB every 100 ms: ten times the rate, three windows long */
	steady = raw_connect(port);
	send_req(steady, DATA_OP_WRITE, SEG_ID, SEG_BYTES, token(SEG_BYTES));
	for (int i = 0; i < 16; i++) {
		raw_send(steady, chunk, sizeof(chunk));
		harness_sleep_ms(100);
	}
	ck_assert_int_eq(read_reply(steady), DATA_OK);
	ck_assert(closed_soon(slow));
	ck_assert(closed_soon(discard));
	ck_assert(!closed_within(steady, 700)); /* done: no window left */
	close(slow);
	close(discard);
	close(steady);
	dloop_pause(&d, &cn);
	ck_assert_uint_eq(cn.body_timeouts, 2);
	dloop_free(&d);
}
END_TEST

/* A connection whose receive buffer is small, so that unread replies
 * fill the socket buffers after a few thousand (also under valgrind). */
static int small_rcvbuf_connect(uint16_t port)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0), sz = 4096;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)),
			 0);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Pipelines READs of an unknown segment (small error replies) without
 * reading any, until the server has stopped taking them for 500 ms (it
 * paused the connection: the socket buffers are full) or 20 s passed (a
 * slow server, under valgrind on a loaded machine, takes longer to get
 * there). Returns the requests sent whole. */
static uint64_t flood_reads(int fd)
{
	enum { N = 1024 };
	static uint8_t buf[N * DATA_REQ_BYTES];
	struct data_req r = {
	    .op = DATA_OP_READ, .segment_id = 12345, .length = 1};
	int64_t end = net_now_ms() + 20000, last = net_now_ms();
	uint64_t sent = 0;

	for (int i = 0; i < N; i++)
		data_req_encode(&r, buf + (size_t)i * DATA_REQ_BYTES);
	while (net_now_ms() < end && net_now_ms() - last < 500) {
		size_t off = (size_t)(sent % sizeof(buf));
		size_t n = send_some(fd, buf + off, sizeof(buf) - off);

		sent += n;
		if (n)
			last = net_now_ms();
		else
			harness_sleep_ms(20);
	}
	return sent / DATA_REQ_BYTES;
}

START_TEST(test_data_unread_replies_are_bounded)
{
	struct data_server_config dc;
	struct data_server_counters cn;
	struct dloop d;
	uint64_t n;
	int fd;

	data_server_config_init(&dc);
	dc.idle_timeout_ms = 0;
	/* the flood may stop inside a request: its header is never whole,
	 * and under valgrind answering the rest can outlast the timeout */
	dc.header_timeout_ms = 0;
	dc.conn_input = 4096;
	dloop_start(&d, &dc);
	fd = small_rcvbuf_connect(data_server_port(d.ds));
	n = flood_reads(fd);
	dloop_pause(&d, &cn);
	/* stuck: the socket buffers are full, reading paused */
	ck_assert_uint_ge(cn.paused, 1);
	ck_assert_uint_le(cn.input_held, 4096);
	ck_assert_uint_eq(cn.budget_closed, 0);
	dloop_run(&d);
	for (uint64_t i = 0; i < n; i++) /* every request answered */
		ck_assert_int_eq(read_reply(fd), DATA_E_NO_SEGMENT);
	ck_assert(!closed_within(fd, 100));
	close(fd);
	dloop_pause(&d, &cn);
	ck_assert_uint_eq(cn.input_held, 0);
	dloop_free(&d);

	/* a budget of 0: the first pause holding bytes closes */
	dc.input_budget = 0;
	dc.out_high_water = 1; /* pause at every reply not yet flushed */
	dloop_start(&d, &dc);
	fd = raw_connect(data_server_port(d.ds));
	(void)flood_reads(fd);
	ck_assert(closed_soon(fd));
	close(fd);
	dloop_pause(&d, &cn);
	ck_assert_uint_eq(cn.budget_closed, 1);
	ck_assert_uint_eq(cn.input_held, 0);
	dloop_free(&d);
}
END_TEST

Suite *make_overload_data_suite(void)
{
	Suite *s = suite_create("overload_data");
	TCase *tc = tcase_create("data");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_data_port_header_timeout_and_cap);
	tcase_add_test(tc, test_data_slow_write_payload_is_closed);
	tcase_add_test(tc, test_data_unread_replies_are_bounded);
	suite_add_tcase(s, tc);
	return s;
}
