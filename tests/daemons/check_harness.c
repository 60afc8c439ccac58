/* The harness's own guarantees the daemon suites lean on: its HTTP
 * getters (plain and TLS) give up on a peer that accepts and never
 * answers (a daemon whose loop is stuck), within their bound, instead of
 * hanging the test. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "harness.h"
#include "tlsfix.h"

Suite *make_harness_suite(void);

/* A loopback listener whose thread accepts one connection and never
 * writes to it: it reads (and drops) until the peer closes. */
static struct {
	int lfd;
	uint16_t port;
	pthread_t th;
} sl;

static void *silent(void *arg)
{
	char buf[256];
	int fd = accept(sl.lfd, NULL, NULL);

	(void)arg;
	if (fd < 0)
		return NULL;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	return NULL;
}

static void silent_listener(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t len = sizeof(sa);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sl.lfd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(sl.lfd, 0);
	ck_assert_int_eq(bind(sl.lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(sl.lfd, 4), 0);
	ck_assert_int_eq(getsockname(sl.lfd, (struct sockaddr *)&sa, &len), 0);
	sl.port = ntohs(sa.sin_port);
	ck_assert_int_eq(pthread_create(&sl.th, NULL, silent, NULL), 0);
}

static void silent_teardown(void)
{
	shutdown(sl.lfd, SHUT_RDWR); /* wakes an accept() still waiting */
	pthread_join(sl.th, NULL);
	close(sl.lfd);
}

/* A listener that accepts and never answers: http_get() returns NULL
 * once its bound has passed, not before, and not much later. */
START_TEST(test_http_get_silent_listener_times_out)
{
	int64_t t0, took;
	char *page;

	t0 = net_now_ms();
	page = http_get(sl.port, "/metrics");
	took = net_now_ms() - t0;
	ck_assert_ptr_null(page);
	ck_assert_int_ge(took, HARNESS_HTTP_TIMEOUT_MS);
	ck_assert_int_lt(took, HARNESS_HTTP_TIMEOUT_MS + 3000);
}
END_TEST

/* The same for the HTTPS getter: the listener never sends its half of
 * the handshake. */
START_TEST(test_https_get_silent_listener_times_out)
{
	struct tlsfix t;
	char ca[400];
	int64_t t0, took;
	char *page;

	ck_assert_int_eq(tlsfix_make(&t), 0);
	tlsfix_path(&t, "ca.pem", ca, sizeof(ca));
	t0 = net_now_ms();
	page = tlsfix_https_get(sl.port, "/metrics", ca);
	took = net_now_ms() - t0;
	tlsfix_cleanup(&t);
	ck_assert_ptr_null(page);
	ck_assert_int_ge(took, HARNESS_HTTP_TIMEOUT_MS);
	ck_assert_int_lt(took, HARNESS_HTTP_TIMEOUT_MS + 3000);
}
END_TEST

/* master_start()'s bound on a master's ready line is scaled like every
 * wait of the tests; an unset, zero or malformed scale is 1. */
START_TEST(test_master_ready_bound_scales)
{
	static const struct {
		const char *scale;
		int ms;
	} cases[] = {{.scale = NULL, .ms = 20000},
		     {.scale = "3", .ms = 60000},
		     {.scale = "0", .ms = 20000},
		     {.scale = "x", .ms = 20000},
		     {.scale = "1001", .ms = 20000}};
	const char *was = getenv("MCREPL_TEST_TIMEOUT_SCALE");
	char *saved = was ? strdup(was) : NULL;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].scale)
			setenv("MCREPL_TEST_TIMEOUT_SCALE", cases[i].scale, 1);
		else
			unsetenv("MCREPL_TEST_TIMEOUT_SCALE");
		ck_assert_int_eq(harness_ready_ms(), cases[i].ms);
	}
	if (saved)
		setenv("MCREPL_TEST_TIMEOUT_SCALE", saved, 1);
	else
		unsetenv("MCREPL_TEST_TIMEOUT_SCALE");
	free(saved);
}
END_TEST

Suite *make_harness_suite(void)
{
	Suite *s = suite_create("harness");
	TCase *tc = tcase_create("http");

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, silent_listener, silent_teardown);
	tcase_add_test(tc, test_http_get_silent_listener_times_out);
	tcase_add_test(tc, test_https_get_silent_listener_times_out);
	suite_add_tcase(s, tc);
	tc = tcase_create("bounds");
	tcase_add_test(tc, test_master_ready_bound_scales);
	suite_add_tcase(s, tc);
	return s;
}
