/* The TCP copy engine against a real data server on loopback, both on one
 * event loop in this process: byte-exact copies, refused writes (token,
 * range), a peer that dies mid-copy, a silent peer (timeout), the in-flight
 * bounds, and raw bad input to the data server. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "data_server.h"
#include "copy_engine_tcp.h"
#include "data_proto.h"
#include "grant.h"
#include "grantfix.h"
#include "stamp.h"

Suite *make_copy_tcp_suite(void);

#define SEG_ID 7
#define SEG_BYTES (17u << 20)

struct fixture {
	struct event_base *base;
	struct data_server *ds;
	struct copy_engine *eng;
	struct copy_engine_config cfg;
	uint8_t *seg, *src;
	char endpoint[64];
	int done, failed;
	int statuses[64];
	char errors[64][256];
	uint32_t worst_inflight;
};

static struct fixture fx;

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static void setup_engine(uint32_t max_inflight, uint64_t max_bytes,
			 uint32_t timeout_ms)
{
	char err[256] = "";

	memset(&fx.cfg, 0, sizeof(fx.cfg));
	fx.cfg.max_inflight = max_inflight;
	fx.cfg.max_inflight_bytes = max_bytes;
	fx.cfg.timeout_ms = timeout_ms;
	fx.eng = copy_engine_tcp_create(fx.base, &fx.cfg, err, sizeof(err));
	ck_assert_msg(fx.eng != NULL, "%s", err);
	ck_assert_str_eq(fx.eng->ops->name, "tcp");
}

static void setup(void)
{
	struct data_server_config dc;
	char err[256] = "";
	int slot;

	memset(&fx, 0, sizeof(fx));
	fx.base = event_base_new();
	ck_assert_ptr_nonnull(fx.base);
	data_server_config_init(&dc);
	dc.port = 0;
	fx.ds = data_server_create(fx.base, &dc, err, sizeof(err));
	ck_assert_msg(fx.ds != NULL, "%s", err);
	fx.seg = calloc(1, SEG_BYTES);
	fx.src = malloc(SEG_BYTES);
	ck_assert(fx.seg && fx.src);
	fill(fx.src, SEG_BYTES, 42);
	slot = data_server_add_segment(fx.ds, fx.seg, SEG_BYTES);
	ck_assert_int_eq(slot, 0);
	data_server_bind(fx.ds, slot, SEG_ID);
	gf_arm(fx.ds, slot);
	snprintf(fx.endpoint, sizeof(fx.endpoint), "127.0.0.1:%u",
		 data_server_port(fx.ds));
	setup_engine(8, 256u << 20, 10000);
}

static void teardown(void)
{
	copy_engine_destroy(fx.eng);
	data_server_destroy(fx.ds);
	event_base_free(fx.base);
	free(fx.seg);
	free(fx.src);
}

static void on_done(int status, const char *error, void *arg)
{
	int i = (int)(intptr_t)arg;
	struct copy_engine_tcp_stats st;

	copy_engine_tcp_stats(fx.eng, &st);
	if (st.inflight + 1 > fx.worst_inflight)
		fx.worst_inflight = st.inflight + 1;
	fx.statuses[i] = status;
	snprintf(fx.errors[i], sizeof(fx.errors[i]), "%s", error ? error : "");
	fx.done++;
	fx.failed += status != 0;
}

static struct copy_target target(const char *ep, uint64_t off, uint64_t len)
{
	struct copy_target t = {
	    ep, SEG_ID, off, len, gf_grant(DATA_OP_WRITE, SEG_ID, off, len, 1),
	    0,	0,	NULL};

	return t;
}

static void post(int i, const void *src, uint64_t len,
		 const struct copy_target *t)
{
	ck_assert_int_eq(fx.eng->ops->post_write(fx.eng, src, len, t, on_done,
						 (void *)(intptr_t)i),
			 0);
}

/* Runs the loop until `want` copies completed (or 20 s passed). */
static void run_until(int want)
{
	struct timeval tick = {0, 10000};

	for (int i = 0; i < 2000 && fx.done < want; i++) {
		event_base_loopexit(fx.base, &tick);
		event_base_dispatch(fx.base);
	}
	ck_assert_int_eq(fx.done, want);
}

static const uint64_t sizes[] = {64u << 10, 1u << 20, 16u << 20};

START_TEST(test_copy_exact)
{
	uint64_t len = sizes[_i], off = 4096 + 3;
	struct copy_target t = target(fx.endpoint, off, len);
	struct copy_engine_tcp_stats st;
	struct data_stats ds;

	post(0, fx.src, len, &t);
	ck_assert_int_eq(fx.done, 0); /* never called back inside post */
	run_until(1);
	ck_assert_msg(fx.statuses[0] == 0, "%s", fx.errors[0]);
	ck_assert_mem_eq(fx.seg + off, fx.src, len);
	ck_assert_uint_eq(fx.seg[off - 1], 0);
	ck_assert_uint_eq(fx.seg[off + len], 0);
	copy_engine_tcp_stats(fx.eng, &st);
	ck_assert_uint_eq(st.completed, 1);
	ck_assert_uint_eq(st.bytes_copied, len);
	ck_assert_uint_eq(st.inflight, 0);
	data_server_slot_stats(fx.ds, 0, &ds);
	ck_assert_uint_eq(ds.writes, 1);
	ck_assert_uint_eq(ds.write_bytes, len);
}
END_TEST

/* A refused write fails alone: the copy behind it on the same connection
 * still lands, and the refused range stays untouched. */
START_TEST(test_wrong_token_refused)
{
	struct copy_target bad = target(fx.endpoint, 0, 1u << 20);
	struct copy_target good = target(fx.endpoint, 2u << 20, 1u << 20);
	struct data_server_counters c;

	bad.grant.tag ^= 1;
	post(0, fx.src, 1u << 20, &bad);
	post(1, fx.src, 1u << 20, &good);
	run_until(2);
	ck_assert_int_eq(fx.statuses[0], -EACCES);
	ck_assert_msg(strstr(fx.errors[0], "write grant refused") != NULL, "%s",
		      fx.errors[0]);
	ck_assert_int_eq(fx.statuses[1], 0);
	for (size_t i = 0; i < (1u << 20); i++)
		ck_assert_uint_eq(fx.seg[i], 0);
	ck_assert_mem_eq(fx.seg + (2u << 20), fx.src, 1u << 20);
	data_server_counters(fx.ds, &c);
	ck_assert_uint_eq(c.refused_writes, 1);
}
END_TEST

/* A write refused while chunks of its source are still queued on the
 * connection completes only once they are gone: the callback unmaps the
 * source, and the copy behind it on the connection must still land (a
 * read of the unmapped source would fail the connection). */
static uint8_t *unmap_src;
static size_t unmap_len;

static void on_done_unmap(int status, const char *error, void *arg)
{
	on_done(status, error, arg);
	ck_assert_int_eq(munmap(unmap_src, unmap_len), 0);
	unmap_src = NULL;
}

START_TEST(test_refused_mid_payload_releases_source_first)
{
	struct copy_target bad = target(fx.endpoint, 0, 16u << 20);
	struct copy_target good = target(fx.endpoint, 16u << 20, 64u << 10);
	struct copy_engine_tcp_stats st;

	unmap_len = 16u << 20;
	unmap_src = mmap(NULL, unmap_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(unmap_src != MAP_FAILED);
	memcpy(unmap_src, fx.src, unmap_len);
	bad.grant.tag ^= 1;
	ck_assert_int_eq(fx.eng->ops->post_write(fx.eng, unmap_src, unmap_len,
						 &bad, on_done_unmap,
						 (void *)(intptr_t)0),
			 0);
	post(1, fx.src, 64u << 10, &good);
	run_until(2);
	ck_assert_ptr_null(unmap_src);
	ck_assert_int_eq(fx.statuses[0], -EACCES);
	ck_assert_msg(fx.statuses[1] == 0, "%s", fx.errors[1]);
	ck_assert_mem_eq(fx.seg + (16u << 20), fx.src, 64u << 10);
	copy_engine_tcp_stats(fx.eng, &st);
	ck_assert_uint_eq(st.held, 1); /* the refusal came mid-payload */
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_uint_eq(st.failed, 1);
	ck_assert_uint_eq(st.peers, 1);
}
END_TEST

START_TEST(test_past_segment_end_refused)
{
	uint64_t off = SEG_BYTES - 1000;
	struct copy_target t = target(fx.endpoint, off, 4096);
	struct copy_target huge = target(fx.endpoint, 4096, UINT64_MAX - 100);

	post(0, fx.src, 4096, &t);
	run_until(1);
	ck_assert_int_eq(fx.statuses[0], -ERANGE);
	ck_assert_msg(strstr(fx.errors[0], "outside segment 7") != NULL, "%s",
		      fx.errors[0]);
	for (uint64_t i = off; i < SEG_BYTES; i++)
		ck_assert_uint_eq(fx.seg[i], 0);
	/* len must match the target's length: refused before any I/O */
	ck_assert_int_eq(
	    fx.eng->ops->post_write(fx.eng, fx.src, 4096, &huge, on_done, NULL),
	    -EINVAL);
}
END_TEST

/* ---- misbehaving peers ---------------------------------------------------- */

struct fake_peer {
	struct evconnlistener *l;
	struct bufferevent *bev;
	size_t close_after; /* 0 = never read, never answer */
};

static void fake_read(struct bufferevent *bev, void *arg)
{
	struct fake_peer *fp = arg;
	struct evbuffer *in = bufferevent_get_input(bev);

	if (fp->close_after && evbuffer_get_length(in) >= fp->close_after) {
		bufferevent_free(bev);
		fp->bev = NULL;
	}
}

static void fake_accept(struct evconnlistener *l, evutil_socket_t fd,
			struct sockaddr *sa, int salen, void *arg)
{
	struct fake_peer *fp = arg;

	(void)l;
	(void)sa;
	(void)salen;
	fp->bev = bufferevent_socket_new(fx.base, fd, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(fp->bev, fake_read, NULL, NULL, fp);
	if (fp->close_after)
		bufferevent_enable(fp->bev, EV_READ);
}

static void fake_start(struct fake_peer *fp, size_t close_after, char *ep,
		       size_t eplen)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fp->close_after = close_after;
	fp->l = evconnlistener_new_bind(fx.base, fake_accept, fp,
					LEV_OPT_CLOSE_ON_FREE, 8,
					(struct sockaddr *)&sin, sizeof(sin));
	ck_assert_ptr_nonnull(fp->l);
	getsockname(evconnlistener_get_fd(fp->l), (struct sockaddr *)&sin, &sl);
	snprintf(ep, eplen, "127.0.0.1:%u", ntohs(sin.sin_port));
}

static void fake_stop(struct fake_peer *fp)
{
	if (fp->bev)
		bufferevent_free(fp->bev);
	evconnlistener_free(fp->l);
}

START_TEST(test_peer_closed_mid_copy)
{
	struct fake_peer fp = {0};
	char ep[64];
	struct copy_target t;

	fake_start(&fp, 64 << 10, ep, sizeof(ep));
	t = target(ep, 0, 8u << 20);
	post(0, fx.src, 8u << 20, &t);
	run_until(1);
	ck_assert_int_lt(fx.statuses[0], 0);
	ck_assert_msg(strstr(fx.errors[0], ep) != NULL, "%s", fx.errors[0]);
	fake_stop(&fp);
}
END_TEST

/* A data server that answers every WRITE with OK, except that its first
 * connection is closed when the second request's header arrives: the
 * target closing an idle connection just as a copy is sent on it. */
struct flaky_peer {
	struct evconnlistener *l;
	struct bufferevent *bev[4];
	int conns, served;
	uint64_t skip; /* payload bytes of the request being read */
};

static void flaky_read(struct bufferevent *bev, void *arg)
{
	struct flaky_peer *fp = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	uint8_t hdr[DATA_REQ_BYTES], out[DATA_RESP_BYTES];
	struct data_resp ok = {DATA_OK, 0};
	struct data_req r;

	for (;;) {
		if (fp->skip) {
			size_t n = evbuffer_get_length(in);

			n = n < fp->skip ? n : (size_t)fp->skip;
			evbuffer_drain(in, n);
			fp->skip -= n;
			if (fp->skip)
				return;
			data_resp_encode(&ok, out);
			bufferevent_write(bev, out, sizeof(out));
			fp->served++;
		}
		if (evbuffer_get_length(in) < DATA_REQ_BYTES)
			return;
		if (bev == fp->bev[0] && fp->served == 1) {
			bufferevent_free(bev); /* closed under the copy */
			fp->bev[0] = NULL;
			return;
		}
		evbuffer_remove(in, hdr, sizeof(hdr));
		ck_assert_int_eq(data_req_decode(hdr, &r), DATA_DECODE_OK);
		fp->skip = r.length;
		if (!fp->skip) {
			data_resp_encode(&ok, out);
			bufferevent_write(bev, out, sizeof(out));
			fp->served++;
		}
	}
}

static void flaky_accept(struct evconnlistener *l, evutil_socket_t fd,
			 struct sockaddr *sa, int salen, void *arg)
{
	struct flaky_peer *fp = arg;
	struct bufferevent *bev;

	(void)l;
	(void)sa;
	(void)salen;
	bev = bufferevent_socket_new(fx.base, fd, BEV_OPT_CLOSE_ON_FREE);
	ck_assert_int_lt(fp->conns, 4);
	fp->bev[fp->conns++] = bev;
	bufferevent_setcb(bev, flaky_read, NULL, NULL, fp);
	bufferevent_enable(bev, EV_READ);
}

START_TEST(test_copy_on_reused_connection_lost_is_retried_once)
{
	struct flaky_peer fp = {0};
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	struct copy_engine_tcp_stats st;
	char ep[64];
	struct copy_target t;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fp.l = evconnlistener_new_bind(fx.base, flaky_accept, &fp,
				       LEV_OPT_CLOSE_ON_FREE, 8,
				       (struct sockaddr *)&sin, sizeof(sin));
	ck_assert_ptr_nonnull(fp.l);
	getsockname(evconnlistener_get_fd(fp.l), (struct sockaddr *)&sin, &sl);
	snprintf(ep, sizeof(ep), "127.0.0.1:%u", ntohs(sin.sin_port));
	t = target(ep, 0, 4096);
	post(0, fx.src, 4096, &t); /* opens the connection */
	run_until(1);
	ck_assert_int_eq(fx.statuses[0], 0);
	post(1, fx.src, 4096, &t); /* reuses it; the peer closes it */
	run_until(2);
	ck_assert_msg(fx.statuses[1] == 0, "%s", fx.errors[1]);
	copy_engine_tcp_stats(fx.eng, &st);
	ck_assert_uint_eq(st.retried, 1);
	ck_assert_uint_eq(st.completed, 2);
	ck_assert_uint_eq(st.failed, 0);
	ck_assert_int_eq(fp.conns, 2);
	ck_assert_int_eq(fp.served, 2);
	for (int i = 0; i < fp.conns; i++)
		if (fp.bev[i])
			bufferevent_free(fp.bev[i]);
	evconnlistener_free(fp.l);
}
END_TEST

START_TEST(test_silent_peer_times_out)
{
	struct fake_peer fp = {0};
	char ep[64];
	struct copy_target t;

	copy_engine_destroy(fx.eng);
	setup_engine(8, 256u << 20, 200);
	fake_start(&fp, 0, ep, sizeof(ep));
	t = target(ep, 0, 4096);
	post(0, fx.src, 4096, &t);
	run_until(1);
	ck_assert_int_eq(fx.statuses[0], -ETIMEDOUT);
	ck_assert_msg(strstr(fx.errors[0], "timed out after 200 ms") != NULL,
		      "%s", fx.errors[0]);
	fake_stop(&fp);
}
END_TEST

START_TEST(test_connect_refused)
{
	struct fake_peer fp = {0};
	char ep[64];
	struct copy_target t;

	fake_start(&fp, 0, ep, sizeof(ep));
	fake_stop(&fp); /* the port is closed now */
	t = target(ep, 0, 4096);
	post(0, fx.src, 4096, &t);
	run_until(1);
	ck_assert_int_eq(fx.statuses[0], -ECONNREFUSED);
	ck_assert_msg(strstr(fx.errors[0], "cannot connect") != NULL, "%s",
		      fx.errors[0]);
}
END_TEST

/* ---- bounds ---------------------------------------------------------------- */

/* max copies, max bytes, expected high-water mark of copies in flight */
static const struct {
	uint32_t max_n;
	uint64_t max_bytes;
	uint32_t want;
} bounds[] = {
    {2, 256u << 20, 2},
    {8, 600u << 10, 2},
    {1, 0, 1},
    {8, 100, 1}, /* each copy alone above the byte bound: one at a time */
};

START_TEST(test_inflight_bound)
{
	struct copy_engine_tcp_stats st;
	const uint64_t len = 256u << 10;

	copy_engine_destroy(fx.eng);
	setup_engine(bounds[_i].max_n, bounds[_i].max_bytes, 10000);
	for (int i = 0; i < 12; i++) {
		struct copy_target t =
		    target(fx.endpoint, (uint64_t)i * len, len);

		post(i, fx.src + (size_t)i * len, len, &t);
	}
	copy_engine_tcp_stats(fx.eng, &st);
	ck_assert_uint_eq(st.queued, 12);
	run_until(12);
	ck_assert_int_eq(fx.failed, 0);
	copy_engine_tcp_stats(fx.eng, &st);
	ck_assert_uint_eq(st.max_inflight_seen, bounds[_i].want);
	ck_assert_uint_le(fx.worst_inflight, bounds[_i].want);
	if (bounds[_i].max_bytes >= len)
		ck_assert_uint_le(st.max_inflight_bytes_seen,
				  bounds[_i].max_bytes);
	ck_assert_uint_eq(st.peers, 1); /* one reused connection */
	ck_assert_mem_eq(fx.seg, fx.src, 12 * len);
}
END_TEST

START_TEST(test_destroy_cancels)
{
	struct copy_target t = target(fx.endpoint, 0, 16u << 20);

	post(0, fx.src, 16u << 20, &t);
	post(1, fx.src, 16u << 20, &t);
	copy_engine_destroy(fx.eng);
	fx.eng = NULL;
	ck_assert_int_eq(fx.done, 2);
	ck_assert_int_eq(fx.statuses[0], -ECANCELED);
	ck_assert_int_eq(fx.statuses[1], -ECANCELED);
}
END_TEST

/* ---- raw input to the data server ---------------------------------------- */

static int raw_connect(void)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(data_server_port(fx.ds));
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void spin(int ms)
{
	struct timeval tv = {0, ms * 1000};

	event_base_loopexit(fx.base, &tv);
	event_base_dispatch(fx.base);
}

/* Reads what the server sent; 1 if it then closed, 0 if still open. */
static int raw_drain(int fd, uint8_t *buf, size_t cap, size_t *got)
{
	ssize_t n;

	*got = 0;
	while ((n = recv(fd, buf + *got, cap - *got, MSG_DONTWAIT)) > 0)
		*got += (size_t)n;
	return n == 0;
}

START_TEST(test_raw_garbage_closes)
{
	uint8_t junk[DATA_REQ_BYTES], buf[512];
	struct data_resp r;
	size_t got;
	int fd = raw_connect();

	memset(junk, 'G', sizeof(junk));
	ck_assert_int_eq(send(fd, junk, sizeof(junk), 0), sizeof(junk));
	spin(50);
	ck_assert_int_eq(raw_drain(fd, buf, sizeof(buf), &got), 1);
	ck_assert_uint_ge(got, DATA_RESP_BYTES);
	ck_assert_int_eq(data_resp_decode(buf, &r), 0);
	ck_assert_uint_eq(r.status, DATA_E_BAD_REQUEST);
	ck_assert_uint_eq(got, DATA_RESP_BYTES + r.length);
	close(fd);
}
END_TEST

/* READ, STATS, unknown segment and too-long READ, pipelined on one
 * connection that stays open. */
START_TEST(test_raw_read_and_stats)
{
	const uint64_t n = STAMP_BYTES + 5;
	struct data_req reqs[] = {
	    {DATA_OP_READ, SEG_ID, 10, n,
	     gf_grant(DATA_OP_READ, SEG_ID, 10, n, GF_OBJECT)},
	    {DATA_OP_READ, 99, 0, 1, {0, 0, 0}},
	    {DATA_OP_READ, SEG_ID, 0, SEG_BYTES + 1, {0, 0, 0}},
	    {DATA_OP_STATS, SEG_ID, 0, 0, {0, 0, 0}},
	};
	uint8_t out[sizeof(reqs) / sizeof(reqs[0])][DATA_REQ_BYTES], buf[2048];
	uint8_t *p = buf;
	struct data_resp r;
	struct data_stats ds;
	size_t got;
	int fd = raw_connect();

	memcpy(fx.seg + 10 + STAMP_BYTES, "hello", 5);
	gf_stamp(fx.seg + 10, GF_OBJECT, 5);
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++)
		data_req_encode(&reqs[i], out[i]);
	ck_assert_int_eq(send(fd, out, sizeof(out), 0), sizeof(out));
	spin(50);
	ck_assert_int_eq(raw_drain(fd, buf, sizeof(buf), &got), 0);
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_OK);
	ck_assert_mem_eq(p + DATA_RESP_BYTES + STAMP_BYTES, "hello", 5);
	p += DATA_RESP_BYTES + r.length;
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_E_NO_SEGMENT);
	p += DATA_RESP_BYTES + r.length;
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_E_RANGE);
	p += DATA_RESP_BYTES + r.length;
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_OK);
	ck_assert_uint_eq(r.length, DATA_STATS_BYTES);
	data_stats_decode(p + DATA_RESP_BYTES, &ds);
	ck_assert_uint_eq(ds.reads, 1);
	ck_assert_uint_eq(ds.read_bytes, n);
	p += DATA_RESP_BYTES + r.length;
	ck_assert_uint_eq((size_t)(p - buf), got);
	close(fd);
}
END_TEST

static void send_all(int fd, const void *buf, size_t n)
{
	ck_assert_int_eq(send(fd, buf, n, 0), (ssize_t)n);
}

/* A WRITE whose payload trickles in goes straight into the segment:
 * exactly its range, never the bytes of the requests pipelined behind it,
 * which are then served in step (a refused WRITE, a READ). */
START_TEST(test_raw_write_in_pieces)
{
	const uint64_t off = 1000, len = 48u << 10;
	struct data_req reqs[] = {
	    {DATA_OP_WRITE, SEG_ID, off, len,
	     gf_grant(DATA_OP_WRITE, SEG_ID, off, len, 1)},
	    {DATA_OP_WRITE, SEG_ID, 0, 4, {1, UINT64_MAX, 1}}, /* forged */
	    /* granted, but no object's stamp there: refused in step */
	    {DATA_OP_READ, SEG_ID, off, 8,
	     gf_grant(DATA_OP_READ, SEG_ID, off, 8, 1)},
	};
	uint8_t hdr[3][DATA_REQ_BYTES], buf[1024], *p = buf;
	struct data_resp r;
	size_t got;
	int fd = raw_connect();

	for (int i = 0; i < 3; i++)
		data_req_encode(&reqs[i], hdr[i]);
	send_all(fd, hdr[0], DATA_REQ_BYTES);
	send_all(fd, fx.src, 1000);
	spin(20);
	send_all(fd, fx.src + 1000, 20000);
	spin(20);
	ck_assert_mem_eq(fx.seg + off, fx.src, 21000);
	send_all(fd, fx.src + 21000, len - 21000);
	send_all(fd, hdr[1], DATA_REQ_BYTES);
	send_all(fd, "junk", 4);
	send_all(fd, hdr[2], DATA_REQ_BYTES);
	spin(50);
	ck_assert_int_eq(raw_drain(fd, buf, sizeof(buf), &got), 0);
	ck_assert_mem_eq(fx.seg + off, fx.src, len);
	ck_assert_uint_eq(fx.seg[off - 1], 0);
	for (size_t i = 0; i < 2 * DATA_REQ_BYTES; i++)
		ck_assert_uint_eq(fx.seg[off + len + i], 0);
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_OK);
	ck_assert_uint_eq(r.length, 0);
	p += DATA_RESP_BYTES;
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_E_DENIED);
	p += DATA_RESP_BYTES + r.length;
	ck_assert_int_eq(data_resp_decode(p, &r), 0);
	ck_assert_uint_eq(r.status, DATA_E_DENIED); /* no oracle (grant.h) */
	ck_assert_uint_eq((size_t)(p + DATA_RESP_BYTES + r.length - buf), got);
	ck_assert_uint_eq(fx.seg[0], 0);
	close(fd);
}
END_TEST

/* A sender that stops mid-payload is an idle connection: closed after
 * the idle timeout, with the part of the payload it sent, and no more. */
START_TEST(test_raw_idle_mid_payload_closes)
{
	struct data_server_config dc;
	struct data_server_counters c;
	const uint64_t len = 64u << 10;
	struct data_req w = {DATA_OP_WRITE, SEG_ID, 0, len,
			     gf_grant(DATA_OP_WRITE, SEG_ID, 0, len, 1)};
	uint8_t hdr[DATA_REQ_BYTES], buf[64];
	char err[256] = "";
	size_t got;
	int fd;

	data_server_destroy(fx.ds);
	data_server_config_init(&dc);
	dc.port = 0;
	dc.idle_timeout_ms = 100;
	fx.ds = data_server_create(fx.base, &dc, err, sizeof(err));
	ck_assert_msg(fx.ds != NULL, "%s", err);
	data_server_bind(
	    fx.ds, data_server_add_segment(fx.ds, fx.seg, SEG_BYTES), SEG_ID);
	gf_arm(fx.ds, 0);
	fd = raw_connect();
	data_req_encode(&w, hdr);
	send_all(fd, hdr, sizeof(hdr));
	send_all(fd, fx.src, 5000);
	spin(20);
	send_all(fd, fx.src + 5000, 5000);
	spin(300);
	ck_assert_int_eq(raw_drain(fd, buf, sizeof(buf), &got), 1);
	ck_assert_uint_eq(got, 0);
	data_server_counters(fx.ds, &c);
	ck_assert_uint_eq(c.idle_closed, 1);
	ck_assert_uint_eq(c.connections, 0);
	ck_assert_mem_eq(fx.seg, fx.src, 10000);
	ck_assert_uint_eq(fx.seg[10000], 0);
	close(fd);
}
END_TEST

Suite *make_copy_tcp_suite(void)
{
	Suite *s = suite_create("copy_tcp");
	TCase *tc = tcase_create("engine");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_copy_exact, 0,
			    (int)(sizeof(sizes) / sizeof(sizes[0])));
	tcase_add_test(tc, test_wrong_token_refused);
	tcase_add_test(tc, test_refused_mid_payload_releases_source_first);
	tcase_add_test(tc, test_past_segment_end_refused);
	tcase_add_test(tc, test_peer_closed_mid_copy);
	tcase_add_test(tc, test_silent_peer_times_out);
	tcase_add_test(tc, test_copy_on_reused_connection_lost_is_retried_once);
	tcase_add_test(tc, test_connect_refused);
	tcase_add_loop_test(tc, test_inflight_bound, 0,
			    (int)(sizeof(bounds) / sizeof(bounds[0])));
	tcase_add_test(tc, test_destroy_cancels);
	tcase_add_test(tc, test_raw_garbage_closes);
	tcase_add_test(tc, test_raw_read_and_stats);
	tcase_add_test(tc, test_raw_write_in_pieces);
	tcase_add_test(tc, test_raw_idle_mid_payload_closes);
	suite_add_tcase(s, tc);
	return s;
}
