/*
 * bench_copy: TCP copy engine throughput (post_write into a worker data
 * server on loopback, the target in its own thread as a separate worker
 * would be) beside a raw loopback socket stream of the same sizes (length
 * header, payload, one-byte ack), measured in the same run. Medians of 5.
 *
 * Last line: copy_16m_gbps=<x> raw_16m_gbps=<x> ratio=<x>
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench_flags.h"
#include "clock.h"
#include "copy_engine.h"
#include "grant.h"
#include "data_server.h"

#define SEG_ID 1
#define INCARNATION 0xb0b
/* the grant secret master and worker would share (grant.h) */
static const uint8_t secret[GRANT_SECRET_BYTES] = "bench-copy-key!";
#define MAX_BYTES (64u << 20)
#define REPS 5

/* ---- the target: a data server on its own loop thread ------------------- */

struct target {
	struct event_base *base;
	struct data_server *ds;
	uint8_t *seg;
	pthread_t thread;
	uint16_t port;
};

static void *target_main(void *arg)
{
	struct target *t = arg;

	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

static int target_start(struct target *t)
{
	struct data_server_config dc;
	char err[256];

	t->base = event_base_new();
	data_server_config_init(&dc);
	dc.port = 0;
	t->ds = data_server_create(t->base, &dc, err, sizeof(err));
	t->seg = calloc(1, MAX_BYTES);
	if (!t->ds || !t->seg)
		return -1;
	data_server_bind(
	    t->ds, data_server_add_segment(t->ds, t->seg, MAX_BYTES), SEG_ID);
	data_server_set_grant_key(t->ds, 0, secret, INCARNATION);
	data_server_set_master_clock(t->ds, (uint64_t)net_now_ms(),
				     net_now_ms());
	t->port = data_server_port(t->ds);
	return pthread_create(&t->thread, NULL, target_main, t);
}

/* ---- copy engine side ------------------------------------------------------ */

static int done;

static void on_done(int status, const char *error, void *arg)
{
	(void)arg;
	if (status != 0) {
		fprintf(stderr, "bench_copy: copy failed: %s\n", error);
		exit(1);
	}
	done = 1;
}

static double engine_gbps(struct copy_engine *e, struct event_base *base,
			  const uint8_t *src, uint64_t len, const char *ep)
{
	struct grant_key k;
	struct copy_target t = {
	    .endpoint = ep, .segment_id = SEG_ID, .length = len};

	grant_key_init(&k, secret, INCARNATION);
	t.grant = grant_sign(&k, DATA_OP_WRITE, SEG_ID, 0, len, 1,
			     (uint64_t)net_now_ms() + 3600000);
	int n = (int)((512u << 20) / len) + 2;
	double t0 = net_now_s();

	for (int i = 0; i < n; i++) {
		done = 0;
		if (e->ops->post_write(e, src, len, &t, on_done, NULL) != 0)
			return 0;
		while (!done)
			event_base_loop(base, EVLOOP_ONCE);
	}
	return (double)len * n / (net_now_s() - t0) / 1e9;
}

/* ---- raw baseline: header + payload + 1-byte ack ---------------------------- */

struct raw {
	int lfd;
	uint16_t port;
	uint8_t *seg;
	pthread_t thread;
};

static int read_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t r = write(fd, (const char *)buf + put, n - put);

		if (r <= 0)
			return -1;
		put += (size_t)r;
	}
	return 0;
}

static void *raw_main(void *arg)
{
	struct raw *r = arg;
	int fd = accept(r->lfd, NULL, NULL);
	uint64_t len;
	uint8_t ack = 1;

	while (fd >= 0 && read_full(fd, &len, sizeof(len)) == 0 &&
	       len <= MAX_BYTES && read_full(fd, r->seg, len) == 0)
		if (write_full(fd, &ack, 1) != 0)
			break;
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int raw_start(struct raw *r)
{
	struct sockaddr_in sa = {0};
	socklen_t sl = sizeof(sa);

	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	r->lfd = socket(AF_INET, SOCK_STREAM, 0);
	r->seg = malloc(MAX_BYTES);
	if (r->lfd < 0 || !r->seg ||
	    bind(r->lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    listen(r->lfd, 1) ||
	    getsockname(r->lfd, (struct sockaddr *)&sa, &sl))
		return -1;
	r->port = ntohs(sa.sin_port);
	return pthread_create(&r->thread, NULL, raw_main, r);
}

static double raw_gbps(int fd, const uint8_t *src, uint64_t len)
{
	int n = (int)((512u << 20) / len) + 2, one = 1;
	double t0 = net_now_s();
	uint8_t ack;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	for (int i = 0; i < n; i++)
		if (write_full(fd, &len, sizeof(len)) ||
		    write_full(fd, src, len) || read_full(fd, &ack, 1))
			return 0;
	return (double)len * n / (net_now_s() - t0) / 1e9;
}

static int raw_connect(uint16_t port)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return -1;
	return fd;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* No flags of its own: --help and --version. */
static const struct flag_set copy_set = {
    .prog = "bench_copy",
    .intro = "the TCP copy engine vs a raw loopback stream, GB/s by size",
    .title = "bench_copy flags (none)",
};

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = {64u << 10, 1u << 20, 16u << 20,
					 64u << 20};
	struct copy_engine_config cfg;
	struct target tgt = {0};
	struct raw raw = {0};
	struct event_base *base;
	struct copy_engine *e;
	char err[256], ep[64];
	double c16 = 0, r16 = 0;
	uint8_t *src;
	int fd, st = bench_flags(&copy_set, NULL, argc, argv);

	if (st >= 0)
		return st;
	signal(SIGPIPE, SIG_IGN);
	src = malloc(MAX_BYTES);
	base = event_base_new();
	copy_engine_config_init(&cfg);
	e = copy_engine_tcp_create(base, &cfg, err, sizeof(err));
	if (!src || !e || target_start(&tgt) || raw_start(&raw) ||
	    (fd = raw_connect(raw.port)) < 0) {
		fprintf(stderr, "bench_copy: setup failed\n");
		return 1;
	}
	memset(src, 0xa5, MAX_BYTES);
	snprintf(ep, sizeof(ep), "127.0.0.1:%u", tgt.port);
	printf("%-8s %12s %12s %8s   (GB/s, medians of %d)\n", "size",
	       "copy_engine", "raw_socket", "ratio", REPS);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double c[REPS], r[REPS];

		for (int k = 0; k < REPS; k++) {
			c[k] = engine_gbps(e, base, src, sizes[i], ep);
			r[k] = raw_gbps(fd, src, sizes[i]);
		}
		qsort(c, REPS, sizeof(double), cmp);
		qsort(r, REPS, sizeof(double), cmp);
		printf("%-8llu %12.2f %12.2f %8.2f\n",
		       (unsigned long long)(sizes[i] >> 10), c[REPS / 2],
		       r[REPS / 2], c[REPS / 2] / r[REPS / 2]);
		if (sizes[i] == 16u << 20) {
			c16 = c[REPS / 2];
			r16 = r[REPS / 2];
		}
	}
	printf("(size in KiB)\ncopy_16m_gbps=%.2f raw_16m_gbps=%.2f "
	       "ratio=%.2f\n",
	       c16, r16, c16 / r16);
	close(fd); /* the raw reader sees it and ends */
	pthread_join(raw.thread, NULL);
	close(raw.lfd);
	free(raw.seg);
	free(src);
	copy_engine_destroy(e);
	event_base_free(base);
	return 0;
}
