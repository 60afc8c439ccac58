/*
 * bench_data_read: the data port's READ path alone: an in-process data
 * server on its own loop thread (as a worker's), one blocking client on
 * loopback reading one granted, stamped region again and again, one READ
 * at a time on one connection. Per size: the median of REPS rounds'
 * per-READ wall time and per-READ CPU time of the server's loop thread
 * (µs; the thread's CPU clock, so a busy machine's waits do not count).
 * It measures what the server does per reply (grant and stamp checks,
 * read holds, the reply window, the send), so the cost of a change there
 * shows against the same binary built without it (bench/read-holds.sh
 * alternates the two).
 *
 *   bench_data_read [--reads N]   (N READs a round per size; 20000)
 *
 * Last line: cpu_us_4k=<x> cpu_us_64k=<x> cpu_us_1m=<x> wall_us_4k=<x>
 * wall_us_64k=<x> wall_us_1m=<x> reads=<n>
 */
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
#include "data_server.h"
#include "grant.h"
#include "stamp.h"

#define SEG_ID 1
#define INCARNATION 0xb0b
#define OBJECT 42u
#define MAX_PAYLOAD (1u << 20)
#define REPS 5
static const uint8_t secret[GRANT_SECRET_BYTES] = "bench-read-key!";

struct server {
	struct event_base *base;
	struct data_server *ds;
	uint8_t *seg;
	pthread_t thread;
};

static void *server_main(void *arg)
{
	struct server *t = arg;

	event_base_loop(t->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

static int server_start(struct server *t)
{
	struct data_server_config dc;
	char err[256];

	t->base = event_base_new();
	data_server_config_init(&dc);
	t->ds = data_server_create(t->base, &dc, err, sizeof(err));
	t->seg = calloc(1, STAMP_BYTES + MAX_PAYLOAD);
	if (!t->ds || !t->seg) {
		fprintf(stderr, "bench_data_read: %s\n", t->ds ? "oom" : err);
		return -1;
	}
	data_server_bind(
	    t->ds,
	    data_server_add_segment(t->ds, t->seg, STAMP_BYTES + MAX_PAYLOAD),
	    SEG_ID);
	data_server_set_grant_key(t->ds, 0, secret, INCARNATION);
	data_server_set_master_clock(t->ds, (uint64_t)net_now_ms(),
				     net_now_ms());
	return pthread_create(&t->thread, NULL, server_main, t);
}

/* The region holds one object of len payload bytes from offset 0. */
static void stamp_region(uint8_t *seg, uint64_t len)
{
	struct stamp_id id = {
	    .incarnation = INCARNATION, .object_id = OBJECT, .length = len};

	stamp_write(seg, &id, seg + STAMP_BYTES);
}

static int connect_to(uint16_t port)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int recv_full(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = recv(fd, (char *)buf + got, n - got, 0);

		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/* One round of n READs of the whole region (len payload bytes): the mean
 * µs per READ, or -1. */
static double round_us(int fd, uint64_t len, uint8_t *buf, uint64_t n)
{
	struct grant_key k;
	struct data_req r = {.op = DATA_OP_READ,
			     .segment_id = SEG_ID,
			     .offset = 0,
			     .length = STAMP_BYTES + len};
	uint8_t req[DATA_REQ_BYTES], rh[DATA_RESP_BYTES];
	struct data_resp resp;
	double t0;

	grant_key_init(&k, secret, INCARNATION);
	r.grant = grant_sign(&k, DATA_OP_READ, SEG_ID, 0, r.length, OBJECT,
			     (uint64_t)net_now_ms() + 3600000);
	data_req_encode(&r, req);
	t0 = net_now_s();
	for (uint64_t i = 0; i < n; i++) {
		if (send(fd, req, sizeof(req), 0) != (ssize_t)sizeof(req) ||
		    recv_full(fd, rh, sizeof(rh)) != 0 ||
		    data_resp_decode(rh, &resp) != 0 ||
		    resp.status != DATA_OK || resp.length != r.length ||
		    recv_full(fd, buf, (size_t)r.length) != 0)
			return -1;
	}
	return (net_now_s() - t0) * 1e6 / (double)n;
}

/* The server thread's CPU time, in µs. */
static double cpu_us(pthread_t th)
{
	struct timespec ts;
	clockid_t cid;

	if (pthread_getcpuclockid(th, &cid) != 0 ||
	    clock_gettime(cid, &ts) != 0)
		return 0;
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static const struct flag read_flags[] = {
    {.name = "reads",
     .type = FLAG_U64,
     .off = 0,
     .def = "20000",
     .help = "READs a round per size (a sixteenth of them at 1 MiB)",
     .min = 1,
     .max = 100000000},
};

static const struct flag_set read_set = {
    .prog = "bench_data_read",
    .intro = "READ latency and server CPU of the worker's data server",
    .title = "bench_data_read flags",
    .width = 6,
    .flags = read_flags,
    .n = sizeof(read_flags) / sizeof(read_flags[0]),
};

int main(int argc, char **argv)
{
	static const uint64_t sizes[] = {4096, 65536, MAX_PAYLOAD};
	static const char *const names[] = {"4k", "64k", "1m"};
	struct server t;
	uint64_t reads = 0;
	double med[3], cmed[3];
	uint8_t *buf;
	int fd, st = bench_flags(&read_set, &reads, argc, argv);

	if (st >= 0)
		return st;
	buf = malloc(STAMP_BYTES + MAX_PAYLOAD);
	if (!buf)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if (server_start(&t) != 0 ||
	    (fd = connect_to(data_server_port(t.ds))) < 0)
		return 1;
	for (size_t s = 0; s < 3; s++) {
		double us[REPS], cpu[REPS];
		/* big reads take longer: fewer of them, the same bytes order */
		uint64_t n = s == 2 ? reads / 16 + 1 : reads;

		stamp_region(t.seg, sizes[s]);
		for (int i = 0; i < REPS; i++) {
			double c0 = cpu_us(t.thread);

			us[i] = round_us(fd, sizes[s], buf, n);
			cpu[i] = (cpu_us(t.thread) - c0) / (double)n;
			if (us[i] < 0) {
				fprintf(stderr,
					"bench_data_read: READ failed\n");
				return 1;
			}
		}
		qsort(us, REPS, sizeof(us[0]), cmp_double);
		qsort(cpu, REPS, sizeof(cpu[0]), cmp_double);
		med[s] = us[REPS / 2];
		cmed[s] = cpu[REPS / 2];
		printf("%s: median %.2f us per READ, server CPU %.3f us, over "
		       "%d rounds of %llu\n",
		       names[s], med[s], cmed[s], REPS, (unsigned long long)n);
	}
	printf("cpu_us_4k=%.3f cpu_us_64k=%.3f cpu_us_1m=%.3f wall_us_4k=%.2f "
	       "wall_us_64k=%.2f wall_us_1m=%.2f reads=%llu\n",
	       cmed[0], cmed[1], cmed[2], med[0], med[1], med[2],
	       (unsigned long long)reads);
	close(fd);
	free(buf);
	return 0;
}
