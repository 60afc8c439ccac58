/* The data-plane connection pool (data_client.h) against scripted fake
 * data servers on loopback threads: reuse, LRU eviction, the one retry
 * after a connection the server dropped, and no retry where it would not
 * help; READs raced (data_race_*: hedged reads) past one never answered. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "data_client.h"
#include "data_proto.h"

Suite *make_data_client_suite(void);

#define LEN 4096u

/* Serves READs: each connection answers `answers` requests (-1 = all),
 * then closes on the next request header without a reply; MUTE: takes
 * every request and answers none (a stopped worker's kernel does as
 * much), until the client closes. */
#define MUTE (-2)
struct fake {
	int lfd;
	uint16_t port;
	int answers;
	atomic_int accepted;
	pthread_t th;
	char ep[32];
};

static int read_full(int fd, uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = read(fd, p, len);

		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void answer(int fd, const struct data_req *r)
{
	uint8_t hdr[DATA_RESP_BYTES], body[LEN];
	struct data_resp resp = {DATA_OK, r->length};

	for (size_t i = 0; i < r->length && i < LEN; i++)
		body[i] = (uint8_t)(r->offset + i);
	data_resp_encode(&resp, hdr);
	ck_assert_int_eq(send(fd, hdr, sizeof(hdr), MSG_NOSIGNAL),
			 (ssize_t)sizeof(hdr));
	ck_assert_int_eq(send(fd, body, (size_t)r->length, MSG_NOSIGNAL),
			 (ssize_t)r->length);
}

static void serve(struct fake *f, int fd)
{
	uint8_t hdr[DATA_REQ_BYTES];
	struct data_req r;

	for (int k = 0; read_full(fd, hdr, sizeof(hdr)) == 0; k++) {
		if (f->answers == MUTE)
			continue;
		if (f->answers >= 0 && k >= f->answers)
			break;
		if (data_req_decode(hdr, &r) != DATA_DECODE_OK ||
		    r.length > LEN)
			break;
		answer(fd, &r);
	}
	close(fd);
}

static void *fake_run(void *arg)
{
	struct fake *f = arg;
	int fd;

	while ((fd = accept(f->lfd, NULL, NULL)) >= 0) {
		int one = 1;

		/* as the data server: an answer's two sends do not wait for the
		 * reader's delayed ACK (40 ms a read without it) */
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one,
				 sizeof(one));
		atomic_fetch_add(&f->accepted, 1);
		serve(f, fd);
	}
	return NULL;
}

static void fake_start(struct fake *f, int answers)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);

	memset(f, 0, sizeof(*f));
	f->answers = answers;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	f->lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(f->lfd, 0);
	ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(f->lfd, 16), 0);
	ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&sa, &sl), 0);
	f->port = ntohs(sa.sin_port);
	snprintf(f->ep, sizeof(f->ep), "127.0.0.1:%u", f->port);
	ck_assert_int_eq(pthread_create(&f->th, NULL, fake_run, f), 0);
}

/* Call after the pool is gone (its connections closed). */
static void fake_stop(struct fake *f)
{
	shutdown(f->lfd, SHUT_RDWR);
	pthread_join(f->th, NULL);
	close(f->lfd);
}

static int read_ok(struct data_pool *p, const struct fake *f, uint64_t off)
{
	uint8_t buf[LEN];
	char err[256];
	int st = data_read(p, f->ep, 1, off, buf, sizeof(buf), NULL, 2000, err,
			   sizeof(err));

	if (st)
		return st;
	for (size_t i = 0; i < sizeof(buf); i++)
		ck_assert_uint_eq(buf[i], (uint8_t)(off + i));
	return 0;
}

static void assert_stats(struct data_pool *p, uint64_t connects,
			 uint64_t reuses, uint64_t retries, uint64_t evicted,
			 size_t open)
{
	struct data_pool_stats st;

	data_pool_get_stats(p, &st);
	ck_assert_uint_eq(st.connects, connects);
	ck_assert_uint_eq(st.reuses, reuses);
	ck_assert_uint_eq(st.retries, retries);
	ck_assert_uint_eq(st.evicted, evicted);
	ck_assert_uint_eq(st.open, open);
}

START_TEST(test_consecutive_reads_reuse_one_connection)
{
	struct data_pool *p = data_pool_create(0);
	struct fake f;

	fake_start(&f, -1);
	for (uint64_t i = 0; i < 50; i++)
		ck_assert_int_eq(read_ok(p, &f, i), 0);
	assert_stats(p, 1, 49, 0, 0, 1);
	data_pool_destroy(p);
	fake_stop(&f);
	ck_assert_int_eq(atomic_load(&f.accepted), 1);
}
END_TEST

/* The server drops the connection after one answer, while the client
 * thinks it idle and alive: the next read is retried once, and works. */
START_TEST(test_dropped_connection_is_retried_once)
{
	struct data_pool *p = data_pool_create(0);
	struct fake f;

	fake_start(&f, 1);
	ck_assert_int_eq(read_ok(p, &f, 0), 0);
	ck_assert_int_eq(read_ok(p, &f, 7), 0);
	assert_stats(p, 2, 1, 1, 0, 1);
	data_pool_destroy(p);
	fake_stop(&f);
	ck_assert_int_eq(atomic_load(&f.accepted), 2);
}
END_TEST

/* A failure on a connection just made is not retried (a new one would
 * fare no better), and the failed connection is not kept. */
START_TEST(test_failure_on_new_connection_is_not_retried)
{
	struct data_pool *p = data_pool_create(0);
	struct fake f;

	fake_start(&f, 0);
	ck_assert_int_eq(read_ok(p, &f, 0), -ECONNRESET);
	assert_stats(p, 1, 0, 0, 0, 0);
	data_pool_destroy(p);
	fake_stop(&f);
	ck_assert_int_eq(atomic_load(&f.accepted), 1);
}
END_TEST

START_TEST(test_least_recently_used_connection_is_closed)
{
	struct data_pool *p = data_pool_create(2);
	struct fake f[3];

	for (int i = 0; i < 3; i++)
		fake_start(&f[i], -1);
	ck_assert_int_eq(read_ok(p, &f[0], 0), 0);
	ck_assert_int_eq(read_ok(p, &f[1], 0), 0);
	ck_assert_int_eq(read_ok(p, &f[0], 1), 0); /* f[1] is now the LRU */
	ck_assert_int_eq(read_ok(p, &f[2], 0), 0); /* closes f[1]'s */
	ck_assert_int_eq(read_ok(p, &f[0], 2), 0);
	assert_stats(p, 3, 2, 0, 1, 2);
	ck_assert_int_eq(read_ok(p, &f[1], 1), 0); /* reconnects, closes f[2] */
	assert_stats(p, 4, 2, 0, 2, 2);
	data_pool_destroy(p);
	for (int i = 0; i < 3; i++)
		fake_stop(&f[i]);
	ck_assert_int_eq(atomic_load(&f[0].accepted), 1);
	ck_assert_int_eq(atomic_load(&f[1].accepted), 2);
	ck_assert_int_eq(atomic_load(&f[2].accepted), 1);
}
END_TEST

START_TEST(test_one_shot_reads_never_keep_a_connection)
{
	struct fake f;

	fake_start(&f, -1);
	ck_assert_int_eq(read_ok(NULL, &f, 0), 0);
	ck_assert_int_eq(read_ok(NULL, &f, 1), 0);
	fake_stop(&f);
	ck_assert_int_eq(atomic_load(&f.accepted), 2);
}
END_TEST

START_TEST(test_bad_endpoint_is_refused)
{
	struct data_pool *p = data_pool_create(0);
	uint8_t buf[8];
	char err[256];

	ck_assert_int_eq(
	    data_read(p, "no-port", 1, 0, buf, 8, NULL, 100, err, sizeof(err)),
	    -EINVAL);
	ck_assert_str_eq(err, "bad data endpoint 'no-port'");
	assert_stats(p, 0, 0, 0, 0, 0);
	data_pool_destroy(p);
}
END_TEST

/* A READ of LEN bytes at off (the fakes' bytes are off + i). */
static struct data_read_req race_req(const struct fake *f, uint64_t off,
				     uint8_t *buf)
{
	return (struct data_read_req){.ep = f->ep,
				      .segment_id = 1,
				      .offset = off,
				      .buf = buf,
				      .len = LEN};
}

static void assert_bytes(const uint8_t *buf, uint64_t off)
{
	for (size_t i = 0; i < LEN; i++)
		ck_assert_uint_eq(buf[i], (uint8_t)(off + i));
}

/* A READ nobody answers does not hold back the one raced against it: the
 * other answers, its connection goes back to the pool, the stalled one is
 * closed when cancelled. */
START_TEST(test_race_answer_overtakes_a_stalled_read)
{
	struct data_pool *p = data_pool_create(0);
	struct data_race r;
	struct data_read_req q[2];
	static uint8_t buf[2][LEN];
	struct fake mute, f;
	char err[256];
	int st = 1;

	fake_start(&mute, MUTE);
	fake_start(&f, -1);
	q[0] = race_req(&mute, 3, buf[0]);
	q[1] = race_req(&f, 5, buf[1]);
	data_race_init(&r, p, 5000);
	ck_assert_int_eq(data_race_start(&r, 0, &q[0], err, sizeof(err)), 0);
	ck_assert_int_eq(
	    data_race_wait(&r, net_now_ms() + 30, &st, err, sizeof(err)), -1);
	ck_assert(data_race_busy(&r, 0));
	ck_assert_int_eq(data_race_start(&r, 1, &q[1], err, sizeof(err)), 0);
	ck_assert_int_eq(data_race_wait(&r, -1, &st, err, sizeof(err)), 1);
	ck_assert_int_eq(st, 0);
	assert_bytes(buf[1], 5);
	ck_assert(data_race_busy(&r, 0));
	ck_assert(!data_race_busy(&r, 1));
	data_race_cancel(&r, 0);
	ck_assert_int_eq(data_race_wait(&r, -1, &st, err, sizeof(err)), -2);
	assert_stats(p, 2, 0, 0, 0, 1); /* the answered one is kept */
	ck_assert_int_eq(read_ok(p, &f, 9), 0);
	assert_stats(p, 2, 1, 0, 0, 1);
	data_pool_destroy(p);
	fake_stop(&mute);
	fake_stop(&f);
	ck_assert_int_eq(atomic_load(&mute.accepted), 1);
	ck_assert_int_eq(atomic_load(&f.accepted), 1);
}
END_TEST

/* A raced READ's own deadline ends it: -ETIMEDOUT, its connection closed. */
START_TEST(test_race_read_times_out)
{
	struct data_pool *p = data_pool_create(0);
	struct data_race r;
	struct data_read_req q;
	static uint8_t buf[LEN];
	struct fake mute;
	char err[256];
	int st = 0;

	fake_start(&mute, MUTE);
	q = race_req(&mute, 0, buf);
	data_race_init(&r, p, 50);
	ck_assert_int_eq(data_race_start(&r, 0, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(data_race_wait(&r, -1, &st, err, sizeof(err)), 0);
	ck_assert_int_eq(st, -ETIMEDOUT);
	ck_assert(!data_race_busy(&r, 0));
	assert_stats(p, 1, 0, 0, 0, 0);
	data_pool_destroy(p);
	fake_stop(&mute);
}
END_TEST

/* A pooled connection the server dropped: the raced READ is sent once
 * more on a new one, as data_read does. */
START_TEST(test_race_retries_a_dropped_connection)
{
	struct data_pool *p = data_pool_create(0);
	struct data_race r;
	struct data_read_req q;
	static uint8_t buf[LEN];
	struct fake f;
	char err[256];
	int st = 1;

	fake_start(&f, 1);
	ck_assert_int_eq(read_ok(p, &f, 0), 0);
	q = race_req(&f, 7, buf);
	data_race_init(&r, p, 2000);
	ck_assert_int_eq(data_race_start(&r, 0, &q, err, sizeof(err)), 0);
	ck_assert_int_eq(data_race_wait(&r, -1, &st, err, sizeof(err)), 0);
	ck_assert_msg(st == 0, "%s", err);
	assert_bytes(buf, 7);
	assert_stats(p, 2, 1, 1, 0, 1);
	data_pool_destroy(p);
	fake_stop(&f);
	ck_assert_int_eq(atomic_load(&f.accepted), 2);
}
END_TEST

Suite *make_data_client_suite(void)
{
	Suite *s = suite_create("data_client");
	TCase *tc = tcase_create("pool");

	tcase_add_test(tc, test_consecutive_reads_reuse_one_connection);
	tcase_add_test(tc, test_dropped_connection_is_retried_once);
	tcase_add_test(tc, test_failure_on_new_connection_is_not_retried);
	tcase_add_test(tc, test_least_recently_used_connection_is_closed);
	tcase_add_test(tc, test_one_shot_reads_never_keep_a_connection);
	tcase_add_test(tc, test_bad_endpoint_is_refused);
	tcase_add_test(tc, test_race_answer_overtakes_a_stalled_read);
	tcase_add_test(tc, test_race_read_times_out);
	tcase_add_test(tc, test_race_retries_a_dropped_connection);
	suite_add_tcase(s, tc);
	return s;
}
