/* Hedged reads against real daemons on loopback: one mcrepl-master
 * (dynamic replication off) and three mcrepl-workers, each its own host,
 * objects put with two replicas. A worker is frozen with SIGSTOP: the
 * client reads the other replica once the first is late and closes the
 * stalled read; the master lists the frozen worker's replicas last once
 * it has missed its polls; and a hedge whose stamp fails is never what a
 * read returns. */
#include <check.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "harness.h"
#include "store_client.h"
#include "wait.h"

Suite *make_hedge_suite(void);

#define WORKERS 3
#define OBJ_BYTES (64u << 10)
/* what a read waits on a stalled replica without hedging (the client's
 * data timeout here): a read that took this long did not hedge */
#define DATA_TIMEOUT_MS 3000

static struct {
	struct proc master;
	struct proc workers[WORKERS];
	char addr[64];
	uint8_t obj[OBJ_BYTES];
} fx;

static void start_worker(int i)
{
	char bin[512], master[80], host[32];
	char *argv[] = {bin,  (char *)(uintptr_t) "--segment_size=16M", master,
			host, (char *)(uintptr_t) "--metrics_port=0",	NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(master, sizeof(master), "--master=%s", fx.addr);
	snprintf(host, sizeof(host), "--host_id=host-%c", 'a' + i);
	ck_assert_int_eq(proc_start(&fx.workers[i], argv, "mcrepl-worker ready",
				    test_hang_ms()),
			 0);
}

static void setup(void)
{
	const char *flags[] = {"--dynamic_replication_mode=off", NULL};

	memset(&fx, 0, sizeof(fx));
	fx.master.pid = -1;
	for (int i = 0; i < WORKERS; i++)
		fx.workers[i].pid = -1;
	for (size_t i = 0; i < OBJ_BYTES; i++)
		fx.obj[i] = (uint8_t)(i * 167 + (i >> 11));
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	snprintf(fx.addr, sizeof(fx.addr), "127.0.0.1:%u",
		 (unsigned)proc_field(&fx.master, "rpc_port"));
	for (int i = 0; i < WORKERS; i++)
		start_worker(i);
}

static void teardown(void)
{
	for (int i = 0; i < WORKERS; i++) {
		if (fx.workers[i].pid > 0)
			kill(fx.workers[i].pid, SIGCONT);
		proc_stop(&fx.workers[i]);
	}
	proc_stop(&fx.master);
}

static store_client *client(void)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[512];

	store_client_config_init(&cfg);
	cfg.replicas = 2;
	cfg.data_timeout_ms = DATA_TIMEOUT_MS;
	ck_assert_msg(
	    store_client_open(&c, fx.addr, "t1", &cfg, err, sizeof(err)) == 0,
	    "%s", err);
	ck_assert_msg(store_client_put(c, "k", fx.obj, OBJ_BYTES) == 0, "%s",
		      store_client_error(c));
	return c;
}

/* The worker serving rep (host-a is worker 0, ...). */
static struct proc *worker_of(const McreplRpc__Replica *rep)
{
	ck_assert_int_eq(strncmp(rep->host_id, "host-", 5), 0);
	ck_assert_int_lt(rep->host_id[5] - 'a', WORKERS);
	return &fx.workers[rep->host_id[5] - 'a'];
}

static McreplRpc__GetReplicaListResponse *list(store_client *c)
{
	McreplRpc__GetReplicaListResponse *r = NULL;

	ck_assert_msg(store_client_get_list(c, "k", &r) == 0, "%s",
		      store_client_error(c));
	ck_assert_uint_eq(r->n_replicas, 2);
	return r;
}

/* Reads that learn the client's latency and open its connections. */
static void warm(store_client *c)
{
	for (int i = 0; i < 20; i++) {
		void *buf = NULL;
		uint64_t len = 0;

		ck_assert_msg(store_client_get(c, "k", &buf, &len, NULL) == 0,
			      "%s", store_client_error(c));
		ck_assert_uint_eq(len, OBJ_BYTES);
		free(buf);
	}
}

static struct store_data_stats stats(const store_client *c)
{
	struct store_data_stats s;

	store_client_data_stats(c, &s);
	return s;
}

/* The first replica's worker frozen: the read returns the object from the
 * second well before the client's data timeout, one hedge, the stalled
 * read closed. */
/* covers: R-READ-1 */
START_TEST(test_hedge_reads_past_a_stopped_worker)
{
	store_client *c = client();
	McreplRpc__GetReplicaListResponse *r;
	struct store_data_stats s0, s1;
	struct store_read_info info;
	static uint8_t buf[OBJ_BYTES];
	int64_t t0, took;
	int st;

	warm(c);
	r = list(c);
	s0 = stats(c);
	kill(worker_of(r->replicas[0])->pid, SIGSTOP);
	t0 = net_now_ms();
	st = store_client_read_list(c, r, buf, &info);
	took = net_now_ms() - t0;
	kill(worker_of(r->replicas[0])->pid, SIGCONT);
	s1 = stats(c);
	ck_assert_msg(st == 0, "%s", store_client_error(c));
	ck_assert_int_eq(memcmp(buf, fx.obj, OBJ_BYTES), 0);
	ck_assert_msg(took < 1000, "read took %lld ms", (long long)took);
	ck_assert_uint_eq(info.segment_id, r->replicas[1]->segment_id);
	ck_assert_uint_eq(info.tried, 2);
	ck_assert(info.hedged);
	ck_assert_uint_eq(s1.hedged - s0.hedged, 1);
	ck_assert_uint_eq(s1.hedge_wins - s0.hedge_wins, 1);
	ck_assert_uint_eq(s1.cancelled - s0.cancelled, 1);
	ck_assert_uint_eq(store_client_stale_reads(c), 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	store_client_close(c);
}
END_TEST

struct resume {
	pid_t pid;
	int after_ms;
};

static void *resume_later(void *arg)
{
	const struct resume *z = arg;

	harness_sleep_ms(z->after_ms); /* the span of the stall is the point */
	kill(z->pid, SIGCONT);
	return NULL;
}

/* The first replica's worker frozen and the second replica's stamp tag
 * wrong: the hedge answers first, fails its stamp and is not returned;
 * the read waits for the first replica and returns its bytes. */
/* covers: R-READ-1 */
START_TEST(test_hedge_never_returns_a_bad_stamp)
{
	store_client *c = client();
	McreplRpc__GetReplicaListResponse *r;
	struct store_data_stats s0, s1;
	struct store_read_info info;
	static uint8_t buf[OBJ_BYTES];
	struct resume z = {.after_ms = 1500};
	pthread_t th;
	int64_t t0, took;
	int st;

	warm(c);
	r = list(c);
	r->replicas[1]->stamp_tag ^= 1; /* its bytes no longer check */
	s0 = stats(c);
	z.pid = worker_of(r->replicas[0])->pid;
	kill(z.pid, SIGSTOP);
	ck_assert_int_eq(pthread_create(&th, NULL, resume_later, &z), 0);
	t0 = net_now_ms();
	st = store_client_read_list(c, r, buf, &info);
	took = net_now_ms() - t0;
	pthread_join(th, NULL);
	s1 = stats(c);
	ck_assert_msg(st == 0, "%s", store_client_error(c));
	ck_assert_int_eq(memcmp(buf, fx.obj, OBJ_BYTES), 0);
	ck_assert_uint_eq(info.segment_id, r->replicas[0]->segment_id);
	ck_assert_uint_eq(info.tried, 2);
	ck_assert(info.hedged);
	ck_assert_msg(took >= 1400, "read took %lld ms", (long long)took);
	ck_assert_uint_eq(store_client_stale_reads(c), 1);
	ck_assert_uint_eq(s1.hedged - s0.hedged, 1);
	ck_assert_uint_eq(s1.hedge_wins - s0.hedge_wins, 0);
	ck_assert_uint_eq(s1.cancelled - s0.cancelled, 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	store_client_close(c);
}
END_TEST

/* The segment of the replica on p in r, 0 when none. */
static uint64_t segment_on(const McreplRpc__GetReplicaListResponse *r,
			   const struct proc *p)
{
	for (size_t i = 0; i < r->n_replicas; i++)
		if (worker_of(r->replicas[i]) == p)
			return r->replicas[i]->segment_id;
	return 0;
}

/* Whether the master lists p's replica first now. */
static bool listed_first(store_client *c, const struct proc *p)
{
	McreplRpc__GetReplicaListResponse *r = list(c);
	bool first = worker_of(r->replicas[0]) == p;

	protobuf_c_message_free_unpacked(&r->base, NULL);
	return first;
}

/* A worker that missed its polls: every list names its replica last, the
 * other first; once it polls again it is first again in turn. */
/* covers: R-READ-2 */
START_TEST(test_late_worker_listed_last)
{
	store_client *c = client();
	McreplRpc__GetReplicaListResponse *r = list(c);
	struct proc *late = worker_of(r->replicas[0]);
	uint64_t late_seg = r->replicas[0]->segment_id;
	uint64_t other_seg = r->replicas[1]->segment_id;

	protobuf_c_message_free_unpacked(&r->base, NULL);
	kill(late->pid, SIGSTOP);
	/* at least: the master's lateness bound (200 ms) is over */
	harness_sleep_ms(400);
	for (int i = 0; i < 20; i++) {
		r = list(c);
		ck_assert_uint_eq(r->replicas[0]->segment_id, other_seg);
		ck_assert_uint_eq(r->replicas[1]->segment_id, late_seg);
		ck_assert_uint_eq(segment_on(r, late), late_seg);
		protobuf_c_message_free_unpacked(&r->base, NULL);
	}
	kill(late->pid, SIGCONT);
	WAIT_UNTIL(listed_first(c, late));
	store_client_close(c);
}
END_TEST

Suite *make_hedge_suite(void)
{
	Suite *s = suite_create("hedge");
	TCase *tc = tcase_create("hedge");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hedge_reads_past_a_stopped_worker);
	tcase_add_test(tc, test_hedge_never_returns_a_bad_stamp);
	tcase_add_test(tc, test_late_worker_listed_last);
	suite_add_tcase(s, tc);
	return s;
}
