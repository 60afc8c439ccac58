/*
 * The HTTP ports' connection caps (httpcap.h): a real
 * mcrepl-master and a real mcrepl-worker with small caps; connections from
 * their own 127.x addresses. Past a cap a connection gets a 503 naming the
 * cap, then a close; an operator's request from a fresh address still gets
 * in while others hold the general share; closed connections give their
 * place back (after a reply, at EOF, after a 413); no fd is left behind.
 */
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "rawsock.h"
#include "wait.h"

Suite *make_overload_http_suite(void);

/* Caps of both daemons here: 8 at once, 2 of them reserved, 4 per
 * address; no idle timeout within the test. */
static const char *const cap_flags[] = {
    "--http_max_connections=8", "--http_max_connections_per_peer=4",
    "--http_reserved_connections=2", "--http_timeout_ms=60000", NULL};

/* Nothing arrives on fd within ms, and it is still open. */
static bool quiet(int fd, int ms)
{
	struct pollfd p = {fd, POLLIN, 0};

	return poll(&p, 1, ms) == 0;
}

/* A connection from src the server refuses: the whole reply (a 503 whose
 * body contains want), then EOF. */
static void expect_refused(const char *src, uint16_t port, const char *want)
{
	char buf[1024];
	size_t n = 0;
	ssize_t r;
	int fd = connect_from(src, port);

	while (n + 1 < sizeof(buf) &&
	       (r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0)) > 0)
		n += (size_t)r;
	ck_assert_int_eq(r, 0); /* closed after the reply */
	buf[n] = '\0';
	ck_assert_msg(!strncmp(buf, "HTTP/1.1 503 ", 13), "reply: %s", buf);
	ck_assert_msg(strstr(buf, "Connection: close"), "reply: %s", buf);
	ck_assert_msg(strstr(buf, want), "reply lacks '%s': %s", want, buf);
	close(fd);
}

/* GET path from 127.0.0.1 (HTTP/1.0: the server closes after the reply):
 * the status line's code. */
static int get_status(uint16_t port, const char *path)
{
	char *page = http_get(port, path);
	int code = -1;

	ck_assert_ptr_nonnull(page);
	ck_assert_int_eq(sscanf(page, "HTTP/1.%*d %d", &code), 1);
	free(page);
	return code;
}

/* What /metrics says after check_cap: 1 refusal per address, 3 by the
 * global cap or its reserve; only the scrape's own connection open. */
static void check_metrics(uint16_t port, const char *prefix)
{
	char *page = http_get(port, "/metrics"), name[128];

	ck_assert_ptr_nonnull(page);
	snprintf(name, sizeof(name), "%s_refused_total{reason=\"peer\"}",
		 prefix);
	ck_assert_int_eq(metric_value(page, name), 1);
	snprintf(name, sizeof(name), "%s_refused_total{reason=\"cap\"}",
		 prefix);
	ck_assert_int_eq(metric_value(page, name), 3);
	snprintf(name, sizeof(name), "%s_connections", prefix);
	ck_assert_int_eq(metric_value(page, name), 1);
	free(page);
}

/* The cap of the HTTP server on port (of process pid), path served, its
 * metrics named prefix_*. */
static void check_cap(uint16_t port, pid_t pid, const char *path,
		      const char *prefix)
{
	int fds0 = fd_count(pid), a[4], b[2], c, d, big;
	char hdr[16384];

	/* the server's fds say what it has accepted: each step waits for
	 * them, so the next connection meets the counts it is meant to */
	for (int i = 0; i < 4; i++)
		a[i] = connect_from("127.0.5.1", port);
	WAIT_UNTIL(fd_count(pid) == fds0 + 4);
	for (int i = 0; i < 4; i++)
		ck_assert(quiet(a[i], 0)); /* admitted, waiting */
	expect_refused("127.0.5.1", port, "http_max_connections_per_peer");
	b[0] = connect_from("127.0.5.2", port);
	b[1] = connect_from("127.0.5.2", port);
	WAIT_UNTIL(fd_count(pid) == fds0 + 6);
	ck_assert(quiet(b[1], 0));
	/* 6 open: the last 2 only for an address holding none */
	expect_refused("127.0.5.2", port, "kept for addresses with no other");
	ck_assert_int_eq(get_status(port, path), 200); /* the operator */
	/* its connection was given back after the reply: 2 more fit */
	c = connect_from("127.0.5.3", port);
	d = connect_from("127.0.5.4", port);
	WAIT_UNTIL(fd_count(pid) == fds0 + 8);
	ck_assert(quiet(d, 0));
	ck_assert_int_eq(get_status(port, path), 503); /* 8 open: full */
	expect_refused("127.0.5.5", port, "(8, http_max_connections)");
	/* a 413 gives its place back too */
	close(d);
	WAIT_UNTIL(fd_count(pid) == fds0 + 7);
	big = connect_from("127.0.5.4", port);
	memset(hdr, 'a', sizeof(hdr));
	memcpy(hdr, "GET / HTTP/1.1\r\nX: ", 19);
	set_send_timeout(big);
	(void)!send(big, hdr, sizeof(hdr), MSG_NOSIGNAL);
	ck_assert(closed_soon(big));
	close(big);
	for (int i = 0; i < 4; i++) /* EOF before any request */
		close(a[i]);
	WAIT_UNTIL(fd_count(pid) == fds0 + 3);
	ck_assert_int_eq(get_status(port, path), 200);
	close(b[0]);
	close(b[1]);
	close(c);
	WAIT_UNTIL(fd_count(pid) == fds0);
	check_metrics(port, prefix);
}

START_TEST(test_master_http_connection_cap)
{
	struct proc m;

	ck_assert_int_eq(master_start(&m, cap_flags), 0);
	check_cap((uint16_t)proc_field(&m, "metrics_port"), m.pid, "/health",
		  "mcrepl_master_http");
	ck_assert_int_eq(proc_stop(&m), 0);
}
END_TEST

START_TEST(test_worker_http_connection_cap)
{
	struct proc m, w;
	char bin[512], master[64];
	const char *argv[16] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
				"--master",
				master,
				"--segment_size=1M",
				"--transport=tcp",
				"--metrics_port=0"};
	size_t n = 6;

	for (size_t i = 0; cap_flags[i]; i++)
		argv[n++] = cap_flags[i];

	ck_assert_int_eq(master_start(&m, NULL), 0);
	snprintf(master, sizeof(master), "127.0.0.1:%u",
		 (unsigned)proc_field(&m, "rpc_port"));
	ck_assert_int_eq(proc_start(&w, (char *const *)(uintptr_t)argv,
				    "mcrepl-worker ready", test_hang_ms()),
			 0);
	check_cap((uint16_t)proc_field(&w, "metrics_port"), w.pid, "/metrics",
		  "mcrepl_worker_http");
	ck_assert_int_eq(proc_stop(&w), 0);
	ck_assert_int_eq(proc_stop(&m), 0);
}
END_TEST

Suite *make_overload_http_suite(void)
{
	Suite *s = suite_create("overload_http");
	TCase *tc = tcase_create("cap");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_master_http_connection_cap);
	tcase_add_test(tc, test_worker_http_connection_cap);
	suite_add_tcase(s, tc);
	return s;
}
