/*
 * The master's /metrics page as a whole: every family's HELP and TYPE
 * line, in order, pinned (metrics_page_heads.h), and exact values of a
 * few families after a mount, a put and a read. A real master on
 * loopback; the test plays the worker and the reader over RPC.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hafx.h"
#include "harness.h"
#include "metrics_page.h"
#include "rpcresult.h"

Suite *make_metrics_page_suite(void);

#define MIB (1024 * 1024)
#define WORKER 0xa1

struct page_fx {
	struct proc master;
	rpc_client *c;
	uint16_t metrics_port;
};

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static void fx_mount(struct page_fx *fx)
{
	McreplRpc__MountSegmentRequest req;
	McreplRpc__MountSegmentResponse *resp;
	char *caps[] = {mut("dynamic_copy")};

	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = WORKER;
	req.host_id = mut("host-a");
	req.domain = mut("");
	req.name = mut("seg-a");
	req.capacity = 64 * MIB;
	req.endpoint = mut("127.0.0.1:1");
	req.protocol_version = 1;
	req.n_capabilities = 1;
	req.capabilities = caps;
	resp = (McreplRpc__MountSegmentResponse *)harness_call(
	    fx->c, "MountSegment", &req.base, NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_int_eq(resp->result->code, MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
}

static void fx_put(struct page_fx *fx, const char *key, uint64_t size)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutEndRequest pe;
	McreplRpc__PutStartResponse *r;
	ProtobufCMessage *e;

	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("t");
	ps.key = mut(key);
	ps.size = size;
	ps.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(fx->c, "PutStart",
							&ps.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	mcrepl_rpc__put_end_request__init(&pe);
	pe.tenant = mut("t");
	pe.key = mut(key);
	pe.version = r->version;
	protobuf_c_message_free_unpacked(&r->base, NULL);
	e = harness_call(fx->c, "PutEnd", &pe.base, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(rpc_result_code(e), MCREPL_RPC__CODE__OK);
	protobuf_c_message_free_unpacked(e, NULL);
}

static void fx_get(struct page_fx *fx, const char *key)
{
	McreplRpc__GetReplicaListRequest req;
	McreplRpc__GetReplicaListResponse *r;

	mcrepl_rpc__get_replica_list_request__init(&req);
	req.tenant = mut("t");
	req.key = mut(key);
	r = (McreplRpc__GetReplicaListResponse *)harness_call(
	    fx->c, "GetReplicaList", &req.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 1);
	protobuf_c_message_free_unpacked(&r->base, NULL);
}

static void fx_start(struct page_fx *fx)
{
	static const char *const flags[] = {"--sweep_interval_ms=10", NULL};

	memset(fx, 0, sizeof(*fx));
	ck_assert_int_eq(master_start(&fx->master, flags), 0);
	fx->metrics_port = (uint16_t)proc_field(&fx->master, "metrics_port");
	fx->c = harness_client((uint16_t)proc_field(&fx->master, "rpc_port"));
	ck_assert_ptr_nonnull(fx->c);
	fx_mount(fx);
	fx_put(fx, "k1", MIB);
	fx_get(fx, "k1");
}

static void fx_stop(struct page_fx *fx)
{
	rpc_client_close(fx->c);
	ck_assert_int_eq(proc_stop(&fx->master), 0);
}

/* The page's HELP and TYPE lines (heads true) or its samples without
 * their values, in order, against the lists of parts (NULL-ended), one
 * after the other: the first difference fails the test. */
static void expect_lines(const char *page, bool heads,
			 const char *const *const *parts)
{
	char *copy = strdup(page), *save = NULL, *body, *sp;
	size_t part = 0, i = 0;

	ck_assert_ptr_nonnull(copy);
	body = strstr(copy, "\r\n\r\n"); /* past the HTTP head */
	ck_assert_ptr_nonnull(body);
	for (char *l = strtok_r(body + 4, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		if ((strncmp(l, "# ", 2) == 0) != heads)
			continue;
		sp = heads ? NULL : strrchr(l, ' ');
		if (sp)
			*sp = '\0'; /* the value varies; the name does not */
		while (parts[part] && !parts[part][i]) {
			part++;
			i = 0;
		}
		ck_assert_msg(parts[part], "an extra line on the page: %s", l);
		ck_assert_str_eq(l, parts[part][i]);
		i++;
	}
	while (parts[part] && !parts[part][i]) {
		part++;
		i = 0;
	}
	ck_assert_msg(!parts[part], "a line missing from the page: %s",
		      parts[part] ? parts[part][i] : "");
	free(copy);
}

static char *scrape(uint16_t port)
{
	char *page = http_get(port, "/metrics");

	ck_assert_ptr_nonnull(page);
	return page;
}

START_TEST(test_metrics_page_keeps_every_family_and_value)
{
	struct page_fx fx;
	char *page;

	fx_start(&fx);
	page = scrape(fx.metrics_port);
	expect_lines(
	    page, true,
	    (const char *const *const[]){store_heads, rpc_heads, NULL});
	expect_lines(page, false, (const char *const *const[]){samples, NULL});
	ck_assert_int_eq(metric_value(page, "mcrepl_master_segments"), 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_clients"), 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_capacity_bytes"),
			 64 * MIB);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_keys"), 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_put_requests_total"),
			 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_get_requests_total"),
			 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_get_keys_total"), 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_put_refusals_total"
					    "{reason=\"quota_reserve\"}"),
			 0);
	ck_assert_int_eq(
	    metric_value(page, "mcrepl_master_reservations_reclaimed_"
			       "total{kind=\"put\",reason=\"deadline\"}"),
	    0);
	ck_assert_int_eq(metric_value(page, "mcrepl_dynamic_replicas"), 0);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_rpc_connections"),
			 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_auth_enabled"), 0);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_tls_enabled"), 0);
	free(page);
	fx_stop(&fx);
}
END_TEST

/* The lint warnings a deprecated metric still draws while it is kept
 * (docs/HA.md): each goes when its metric goes. */
static const char *const deprecated[] = {
    "mcrepl_master_ha_longest_pause_ms metric names should not contain "
    "abbreviated units\n",
    NULL};

/* Cuts those warnings out of promtool's output; true when it held one. */
static bool drop_deprecated(char *out)
{
	bool any = false;

	for (size_t i = 0; deprecated[i]; i++) {
		size_t len = strlen(deprecated[i]);
		char *at = strstr(out, deprecated[i]);

		if (at) {
			memmove(at, at + len, strlen(at + len) + 1);
			any = true;
		}
	}
	return any;
}

/* promtool check metrics on a page's body says nothing at all: no error
 * and no lint warning but those above (a warning alone may exit 0 in
 * some promtool releases; its output is what counts). */
static void lint(const char *page, const char *who)
{
	const char *dir = getenv("TMPDIR"), *body = strstr(page, "\r\n\r\n");
	char path[512], cmd[700], out[4096] = "";
	size_t n;
	FILE *p;
	int fd, st;

	ck_assert_ptr_nonnull(body);
	body += 4;
	snprintf(path, sizeof(path), "%s/prom-XXXXXX",
		 dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, body, strlen(body)), (ssize_t)strlen(body));
	close(fd);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' 2>&1", path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	st = pclose(p);
	unlink(path);
	ck_assert_msg(WIFEXITED(st), "promtool killed (status %d)", st);
	st = WEXITSTATUS(st);
	if (drop_deprecated(out) && st == 3) /* 3: lint problems */
		st = 0;
	ck_assert_msg(st == 0 && out[0] == '\0',
		      "promtool on the %s's /metrics (exit %d): %s", who, st,
		      out);
}

static bool no_promtool(void)
{
	return system("command -v promtool > /dev/null 2>&1") != 0;
}

static void lint_if_installed(const char *page, const char *who)
{
	if (!no_promtool())
		lint(page, who);
}

/* promtool, when installed, finds nothing to say of a single master's
 * page. */
START_TEST(test_metrics_page_passes_promtool)
{
	struct page_fx fx;
	char *page;

	if (no_promtool())
		return; /* not installed: nothing to ask */
	fx_start(&fx);
	page = scrape(fx.metrics_port);
	lint(page, "master");
	free(page);
	fx_stop(&fx);
}
END_TEST

/* The longest pause in seconds is the one in milliseconds, / 1000. */
static void expect_pause_seconds(const char *page)
{
	static const char name[] = "\nmcrepl_master_ha_longest_pause_seconds ";
	const char *at = strstr(page, name);
	long long ms = metric_value(page, "mcrepl_master_ha_longest_pause_ms");
	char want[32];

	ck_assert_ptr_nonnull(at);
	ck_assert_int_ge(ms, 0);
	snprintf(want, sizeof(want), "%lld.%03lld\n", ms / 1000, ms % 1000);
	ck_assert_int_eq(strncmp(at + strlen(name), want, strlen(want)), 0);
}

/* An HA pair: the leader's page adds the HA families to the store's and
 * the RPC port's; the standby (no store) shows the RPC and HA ones only.
 * promtool (where installed) finds nothing to say about either, nor about
 * a worker's page. */
START_TEST(test_metrics_page_of_ha_leader_and_standby)
{
	store_client *sc;
	char *page;
	int l;

	if (hafx_skip())
		return;
	sc = hafx_start_clients(2, 1, 0);
	ck_assert_ptr_nonnull(sc);
	l = hafx_wait_leader(-1);
	ck_assert_int_ge(l, 0);
	page = scrape((uint16_t)proc_field(hafx_master(l), "metrics_port"));
	expect_lines(page, true,
		     (const char *const *const[]){store_heads, rpc_heads,
						  ha_heads, NULL});
	ck_assert_int_eq(
	    metric_value(page, "mcrepl_master_ha_role{role=\"leader\"}"), 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_ha_serving"), 1);
	ck_assert_int_eq(
	    metric_value(page, "mcrepl_master_ha_elections_won_total"), 1);
	expect_pause_seconds(page);
	lint_if_installed(page, "HA leader");
	free(page);
	page = scrape((uint16_t)proc_field(hafx_master(1 - l), "metrics_port"));
	expect_lines(page, true,
		     (const char *const *const[]){rpc_heads, ha_heads, NULL});
	ck_assert_int_eq(
	    metric_value(page, "mcrepl_master_ha_role{role=\"standby\"}"), 1);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_ha_term"), 0);
	ck_assert_int_eq(metric_value(page, "mcrepl_master_keys"), -1);
	lint_if_installed(page, "HA standby");
	free(page);
	page = scrape((uint16_t)proc_field(hafx_worker(0), "metrics_port"));
	lint_if_installed(page, "worker");
	free(page);
	store_client_close(sc);
	hafx_stop();
}
END_TEST

Suite *make_metrics_page_suite(void)
{
	Suite *s = suite_create("metrics_page");
	TCase *tc = tcase_create("page");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_metrics_page_keeps_every_family_and_value);
	tcase_add_test(tc, test_metrics_page_passes_promtool);
	tcase_add_test(tc, test_metrics_page_of_ha_leader_and_standby);
	suite_add_tcase(s, tc);
	return s;
}
