/* mcrepl-worker's flag checks (daemons/worker/flags.c) and the choice of
 * the advertised data address (runtime/common/advertise.c), in process. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../daemons/worker/flags.h"
#include "advertise.h"
#include "capture.h"
#include "flagcheck.h"
#include "flagparse.h"

Suite *make_worker_flags_suite(void);

/* worker_flags_parse over one argument; its stderr in err. */
static int wparse(struct worker_flags *f, const char *arg, char *err,
		  size_t cap)
{
	char *argv[] = {(char *)(uintptr_t) "mcrepl-worker",
			(char *)(uintptr_t)arg, NULL};
	int rc;

	capture_begin(STDERR_FILENO);
	rc = worker_flags_parse(f, arg ? 2 : 1, argv);
	capture_end(err, cap);
	return rc;
}

#define DOMAIN_RULE                                                            \
	"allowed: up to 63 characters of A-Z a-z 0-9 . _ - (empty = default)"

/* An invalid domain stops the worker at start, the field named (it used
 * to retry its mount forever). */
START_TEST(test_invalid_domain_refused)
{
	struct worker_flags f;
	char err[512];

	unsetenv("MOONCAKE_STORE_DOMAIN");
	ck_assert_int_eq(wparse(&f, "--domain=zone a", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "mcrepl-worker: command line: invalid value "
			      "'zone a' for --domain (domain of the segments "
			      "(default: $MOONCAKE_STORE_DOMAIN, else "
			      "default)); " DOMAIN_RULE);
	setenv("MOONCAKE_STORE_DOMAIN", "zone/b", 1);
	ck_assert_int_eq(wparse(&f, NULL, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "mcrepl-worker: $MOONCAKE_STORE_DOMAIN: invalid "
			      "value 'zone/b' for --domain; " DOMAIN_RULE);
	ck_assert_int_eq(wparse(&f, "--domain=zone-b", err, sizeof(err)), 0);
	ck_assert_str_eq(f.domain, "zone-b");
	unsetenv("MOONCAKE_STORE_DOMAIN");
	ck_assert_int_eq(wparse(&f, NULL, err, sizeof(err)), 0);
	ck_assert_str_eq(f.domain, "default");
}
END_TEST

/* Risky values pass, with one warning line each. */
START_TEST(test_risky_values_warned)
{
	struct worker_flags f;
	char err[512], out[1024];
	FILE *mem;
	size_t len;
	char *buf;

	ck_assert_int_eq(
	    wparse(&f, "--copy_timeout_ms=40000", err, sizeof(err)), 0);
	f.segment_size = 2ull << 30;
	f.segments = 2;
	mem = open_memstream(&buf, &len);
	ck_assert_int_eq(worker_flags_warn(&f, 3ull << 30, mem), 2);
	fclose(mem);
	snprintf(out, sizeof(out), "%s", buf);
	free(buf);
	ck_assert_str_eq(
	    out, "mcrepl-worker: warning: --copy_timeout_ms 40000 is longer "
		 "than the master's default copy lease (30000 ms, "
		 "dynamic_replication_lease_ttl_seconds): a slow copy outlives "
		 "its lease and is wasted; lower it\n"
		 "mcrepl-worker: warning: --segment_size x --segments = "
		 "4294967296 bytes is more than this host's RAM (3221225472 "
		 "bytes); writes may fail or swap: lower --segment_size\n");
	ck_assert_int_eq(wparse(&f, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(worker_flags_warn(&f, 0, stderr), 0);
}
END_TEST

/* The advertised address: the rules of advertise.h, one row each. */
static const struct host_addr eth[] = {
    {"lo", "127.0.0.1"}, {"eth0", "10.1.2.3"}, {"eth1", "192.168.0.7"}};

static const struct {
	const char *given, *bind;
	size_t n_addrs;	  /* of eth[] */
	const char *want; /* NULL: refused */
	const char *err;
} adv[] = {
    {"", "127.0.0.1", 3, "127.0.0.1", NULL},
    {"", "10.9.9.9", 3, "10.9.9.9", NULL},
    {"", "0.0.0.0", 3, "10.1.2.3", NULL},
    {"", "", 3, "10.1.2.3", NULL},
    {"", "::", 3, "10.1.2.3", NULL},
    {"worker-7.example", "0.0.0.0", 3, "worker-7.example", NULL},
    {"10.5.5.5", "127.0.0.1", 0, "10.5.5.5", NULL},
    {"", "0.0.0.0", 1, NULL,
     "--data_address 0.0.0.0 binds every address but this host has no "
     "non-loopback IPv4 address to advertise; set --advertise_address to "
     "the address other hosts reach this worker at"},
    {"0.0.0.0", "0.0.0.0", 3, NULL,
     "--advertise_address 0.0.0.0 is a wildcard; give the address other "
     "hosts reach this worker at"},
};

START_TEST(test_advertise_choose)
{
	char out[64] = "", err[256] = "";
	int rc =
	    advertise_choose(adv[_i].given, adv[_i].bind, eth, adv[_i].n_addrs,
			     out, sizeof(out), err, sizeof(err));

	if (adv[_i].want) {
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(out, adv[_i].want);
	} else {
		ck_assert_int_eq(rc, -1);
		ck_assert_str_eq(err, adv[_i].err);
	}
}
END_TEST

START_TEST(test_loopback_and_wildcard)
{
	ck_assert(advertise_is_loopback("127.0.0.1:50051"));
	ck_assert(advertise_is_loopback("localhost:50051"));
	ck_assert(advertise_is_loopback("[::1]:50051"));
	ck_assert(!advertise_is_loopback("localhost2:1"));
	ck_assert(!advertise_is_loopback("10.0.0.1:50051"));
	ck_assert(advertise_is_wildcard("0.0.0.0"));
	ck_assert(!advertise_is_wildcard("0.0.0.1"));
}
END_TEST

/* The value of the first "key=" line of a unit file, or "" (static). */
static const char *unit_value(const char *path, const char *key)
{
	static char value[256];
	char line[512];
	size_t n = strlen(key);
	FILE *f = fopen(path, "r");

	ck_assert_msg(f != NULL, "%s", path);
	value[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, n) == 0 && line[n] == '=') {
			snprintf(value, sizeof(value), "%s", line + n + 1);
			value[strcspn(value, "\n")] = '\0';
			break;
		}
	fclose(f);
	return value;
}

/* The shipped units do not restart a daemon that exits 2 (a flag error)
 * or 78 (EX_CONFIG: refused for good; they restarted it every 2 s
 * forever), and the worker's stop timeout covers its drain, stop and
 * unmount at the default --drain_timeout_ms (SIGKILL landed mid-drain at
 * TimeoutStopSec=10). */
START_TEST(test_units_match_exit_statuses_and_stop)
{
	static const char *const units[] = {
	    "contrib/systemd/mcrepl-master.service",
	    "contrib/systemd/mcrepl-worker@.service"};
	struct worker_flags f;
	char err[256];
	long stop_s;

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		ck_assert_str_eq(
		    unit_value(units[i], "RestartPreventExitStatus"), "2 78");
	ck_assert_int_eq(wparse(&f, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(f.drain_timeout_ms, WORKER_DRAIN_TIMEOUT_MS_DEFAULT);
	stop_s = strtol(unit_value(units[1], "TimeoutStopSec"), NULL, 10);
	ck_assert_int_gt(stop_s * 1000, WORKER_DRAIN_TIMEOUT_MS_DEFAULT +
					    WORKER_STOP_GRACE_MS +
					    WORKER_STOP_UNMOUNT_MS);
}
END_TEST

/* Every flag whose range allows 0 says in --help what 0 means
 * (--copy_timeout_ms and --max_copy_bytes took 0 with no word on it). The
 * rule runs over the table, the shared data and HTTP tables chained to it
 * included. */
START_TEST(test_zero_values_say_what_they_mean)
{
	assert_zero_values_said(worker_flag_set());
}
END_TEST

Suite *make_worker_flags_suite(void)
{
	Suite *s = suite_create("worker_flags");
	TCase *tc = tcase_create("flags");

	tcase_add_test(tc, test_invalid_domain_refused);
	tcase_add_test(tc, test_risky_values_warned);
	tcase_add_loop_test(tc, test_advertise_choose, 0,
			    (int)(sizeof(adv) / sizeof(adv[0])));
	tcase_add_test(tc, test_loopback_and_wildcard);
	tcase_add_test(tc, test_units_match_exit_statuses_and_stop);
	tcase_add_test(tc, test_zero_values_say_what_they_mean);
	suite_add_tcase(s, tc);
	return s;
}
