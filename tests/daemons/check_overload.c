/*
 * Transport bounds: idle and partial-frame timeouts, the input
 * budget, connection caps (global, per address, the reserved share), string
 * length limits, rate-limited logs, accept back-off at the fd limit, HTTP
 * limits (the data port: check_overload_data; HTTP connection caps:
 * check_overload_http). Real sockets on
 * loopback; an in-process rpc_server where a bound needs a small setting,
 * a real mcrepl-master where the daemon's wiring is the point. Timing
 * asserts are generous bounds only.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "frame.h"
#include "harness.h"
#include "netutil.h"
#include "ratelog.h"
#include "rawframe.h"
#include "rawsock.h"
#include "rpc_server.h"
#include "wait.h"

Suite *make_overload_suite(void);

#define M_HEARTBEAT 2
#define M_EXIST 8

/* ---- an in-process server: Exist and Heartbeat -------------------------- */

struct tserver {
	McreplRpc__Master_Service service; /* first: handlers cast back */
	struct event_base *base;
	rpc_server *server;
	struct event *stop_ev;
	int stop_fds[2];
	pthread_t thread;
};

/* Exist calls served, and when the one for key "b" was (the server's
 * thread writes, the test reads with the loop stopped). */
static unsigned exist_calls, exist_b_at;
static rpc_server *exist_server; /* when set: connections open at "b" */
static size_t exist_b_conns;

static void t_exist(McreplRpc__Master_Service *svc,
		    const McreplRpc__ExistRequest *in,
		    McreplRpc__ExistResponse_Closure closure,
		    void *closure_data)
{
	McreplRpc__ExistResponse resp;

	(void)svc;
	exist_calls++;
	if (strcmp(in->key, "b") == 0) {
		exist_b_at = exist_calls;
		if (exist_server)
			exist_b_conns = rpc_server_conn_count(exist_server);
	}
	mcrepl_rpc__exist_response__init(&resp);
	resp.exists = strcmp(in->key, "yes") == 0;
	closure(&resp, closure_data);
}

static void t_heartbeat(McreplRpc__Master_Service *svc,
			const McreplRpc__HeartbeatRequest *in,
			McreplRpc__HeartbeatResponse_Closure closure,
			void *closure_data)
{
	McreplRpc__HeartbeatResponse resp;

	(void)svc;
	(void)in;
	mcrepl_rpc__heartbeat_response__init(&resp);
	closure(&resp, closure_data);
}

#define t_mount_segment NULL
#define t_unmount_segment NULL
#define t_put_start NULL
#define t_put_end NULL
#define t_put_revoke NULL
#define t_get_replica_list NULL
#define t_batch_get_replica_list NULL
#define t_remove NULL
#define t_fetch_tasks NULL
#define t_mark_task_to_complete NULL
#define t_copy_start NULL
#define t_copy_end NULL
#define t_copy_revoke NULL
#define t_dynamic_replica_copy_start NULL
#define t_dynamic_replica_copy_end NULL
#define t_dynamic_replica_copy_revoke NULL
#define t_submit_replica_action_proposal NULL
#define t_stats NULL
#define t_warmup NULL
#define t_stat NULL
#define t_register_objects NULL
#define t_drain NULL

static const McreplRpc__Master_Service tservice = MCREPL_RPC__MASTER__INIT(t_);

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void *server_main(void *arg)
{
	struct tserver *ts = arg;

	event_base_dispatch(ts->base);
	return NULL;
}

static void server_run(struct tserver *ts)
{
	ck_assert_int_eq(pthread_create(&ts->thread, NULL, server_main, ts), 0);
}

/* Stops the loop thread (the server stays), so its stats can be read. */
static void server_pause(struct tserver *ts)
{
	char b;

	ck_assert_int_eq(write(ts->stop_fds[1], "x", 1), 1);
	pthread_join(ts->thread, NULL);
	ck_assert_int_eq(read(ts->stop_fds[0], &b, 1), 1);
	event_add(ts->stop_ev, NULL);
}

static struct tserver *server_start(const rpc_server_config *cfg)
{
	struct tserver *ts = calloc(1, sizeof(*ts));
	char err[160];

	ck_assert_ptr_nonnull(ts);
	ts->service = tservice;
	ts->base = event_base_new();
	ts->server = rpc_server_create(ts->base, cfg, &ts->service.base, err,
				       sizeof(err));
	ck_assert_msg(ts->server != NULL, "%s", err);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ts->stop_fds), 0);
	ts->stop_ev =
	    event_new(ts->base, ts->stop_fds[0], EV_READ, stop_cb, ts->base);
	event_add(ts->stop_ev, NULL);
	server_run(ts);
	return ts;
}

/* The connections the server holds now (paused to read them). */
static uint64_t conns_now(struct tserver *ts)
{
	uint64_t n;

	server_pause(ts);
	n = rpc_server_conn_count(ts->server);
	server_run(ts);
	return n;
}

static void server_stop(struct tserver *ts, rpc_server_stats *st)
{
	server_pause(ts);
	if (st)
		rpc_server_stats_get(ts->server, st);
	rpc_server_destroy(ts->server);
	event_free(ts->stop_ev);
	close(ts->stop_fds[0]);
	close(ts->stop_fds[1]);
	event_base_free(ts->base);
	free(ts);
}

static void cfg_init(rpc_server_config *cfg)
{
	rpc_server_config_init(cfg);
	cfg->host = "127.0.0.1";
}

static void send_frame(int fd, uint64_t id, uint32_t method,
		       const ProtobufCMessage *body)
{
	rpc_frame_head head = {id, method, MCREPL_RPC__CODE__OK, NULL};
	uint8_t *frame;
	size_t n;

	ck_assert_int_eq(rpc_frame_encode_msg(&head, body, &frame, &n),
			 RPC_FRAME_OK);
	raw_send(fd, frame, n);
	free(frame);
}

static void send_exist(int fd, uint64_t id, const char *tenant, const char *key)
{
	McreplRpc__ExistRequest req;

	mcrepl_rpc__exist_request__init(&req);
	req.tenant = (char *)(uintptr_t)tenant;
	req.key = (char *)(uintptr_t)key;
	send_frame(fd, id, M_EXIST, &req.base);
}

/* Reads one reply: its id and status, and that its error contains want. */
static void expect(int fd, uint64_t id, McreplRpc__Code status,
		   const char *want)
{
	McreplRpc__Envelope *env = raw_read_frame(fd);

	ck_assert_msg(env != NULL, "no reply (want status %d)", (int)status);
	ck_assert_uint_eq(env->request_id, id);
	ck_assert_int_eq(env->status, status);
	if (want)
		ck_assert_msg(strstr(env->error, want), "error '%s' lacks '%s'",
			      env->error, want);
	protobuf_c_message_free_unpacked(&env->base, NULL);
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* CPU seconds this process (every thread) uses while sleeping ms. */
static double cpu_s_over(int ms)
{
	struct rusage a, b;

	getrusage(RUSAGE_SELF, &a);
	sleep_ms(ms);
	getrusage(RUSAGE_SELF, &b);
	return (double)(b.ru_utime.tv_sec - a.ru_utime.tv_sec) +
	       (double)(b.ru_stime.tv_sec - a.ru_stime.tv_sec) +
	       (double)(b.ru_utime.tv_usec - a.ru_utime.tv_usec) / 1e6 +
	       (double)(b.ru_stime.tv_usec - a.ru_stime.tv_usec) / 1e6;
}

/* An Exist frame whose key is key_len bytes of 'k'. */
static uint8_t *exist_frame(uint64_t id, size_t key_len, size_t *len)
{
	McreplRpc__ExistRequest req;
	rpc_frame_head head = {id, M_EXIST, MCREPL_RPC__CODE__OK, NULL};
	char *key = malloc(key_len + 1);
	uint8_t *frame;

	memset(key, 'k', key_len);
	key[key_len] = '\0';
	mcrepl_rpc__exist_request__init(&req);
	req.key = key;
	ck_assert_int_eq(rpc_frame_encode_msg(&head, &req.base, &frame, len),
			 RPC_FRAME_OK);
	free(key);
	return frame;
}

/* ---- RPC: time -------------------------------------------------------- */

START_TEST(test_idle_connection_is_closed)
{
	rpc_server_config cfg;
	struct tserver *ts;
	rpc_server_stats st;
	int idle, busy;

	cfg_init(&cfg);
	cfg.idle_timeout_ms = 200;
	ts = server_start(&cfg);
	idle = raw_connect(rpc_server_port(ts->server));
	busy = raw_connect(rpc_server_port(ts->server));
	for (int i = 0; i < 8; i++) { /* 400 ms of calls: never idle */
		send_exist(busy, (uint64_t)i + 1, "t", "yes");
		expect(busy, (uint64_t)i + 1, MCREPL_RPC__CODE__OK, NULL);
		sleep_ms(50);
	}
	ck_assert(closed_soon(idle));
	send_exist(busy, 99, "t", "yes");
	expect(busy, 99, MCREPL_RPC__CODE__OK, NULL);
	close(busy);
	close(idle);
	server_stop(ts, &st);
	ck_assert_uint_eq(st.idle_closed, 1);
}
END_TEST

START_TEST(test_slowloris_frame_is_closed)
{
	rpc_server_config cfg;
	struct tserver *ts;
	rpc_server_stats st;
	size_t len;
	uint8_t *frame = exist_frame(1, 64, &len);
	int fd, good;
	bool closed = false;

	cfg_init(&cfg);
	cfg.frame_timeout_ms = 300;
	cfg.idle_timeout_ms = 0;
	ts = server_start(&cfg);
	fd = raw_connect(rpc_server_port(ts->server));
	good = raw_connect(rpc_server_port(ts->server));
	/* a byte every 100 ms: never idle, never a whole frame */
	for (size_t i = 0; i < len - 1 && !closed; i++) {
		if (send(fd, frame + i, 1, MSG_NOSIGNAL) != 1)
			break;
		send_exist(good, i + 1, "t", "yes");
		expect(good, i + 1, MCREPL_RPC__CODE__OK, NULL);
		closed = closed_within(fd, 100);
	}
	ck_assert(closed || closed_soon(fd));
	free(frame);
	close(fd);
	close(good);
	server_stop(ts, &st);
	ck_assert_uint_eq(st.frame_timeouts, 1);
}
END_TEST

/* ---- RPC: memory ------------------------------------------------------ */

START_TEST(test_large_frames_wait_for_input_budget)
{
	rpc_server_config cfg;
	struct tserver *ts;
	rpc_server_stats st;
	enum { N = 3 };
	uint8_t *frame[N];
	size_t len[N], sent[N];
	int fd[N];

	cfg_init(&cfg);
	cfg.max_frame_bytes = 1u << 20;
	cfg.input_budget = 1; /* raised to one whole largest frame */
	ts = server_start(&cfg);
	for (int i = 0; i < N; i++) {
		frame[i] = exist_frame((uint64_t)i + 1, 700 * 1024, &len[i]);
		fd[i] = raw_connect(rpc_server_port(ts->server));
		set_send_timeout(fd[i]);
		sent[i] = send_some(fd[i], frame[i], 300 * 1024);
		sleep_ms(100);
	}
	/* waiting frames cost no CPU: libevent 2.1 re-runs read_cb while a
	 * connection sits at its read high-water mark with reading on */
	ck_assert_double_lt(cpu_s_over(500), 0.1);
	server_pause(ts);
	rpc_server_stats_get(ts->server, &st);
	server_run(ts);
	ck_assert_uint_eq(st.budget_used, len[0]);
	ck_assert_uint_eq(st.budget_waiting, N - 1);
	ck_assert_uint_eq(st.budget_waits, N - 1);
	/* in arrival order, each frame is read once the one before is done */
	for (int i = 0; i < N; i++) {
		raw_send(fd[i], frame[i] + sent[i], len[i] - sent[i]);
		expect(fd[i], (uint64_t)i + 1,
		       MCREPL_RPC__CODE__INVALID_ARGUMENT,
		       "Exist: key is 716800 bytes, above "
		       "max_key_bytes=1024");
		free(frame[i]);
		close(fd[i]);
	}
	server_stop(ts, &st);
	ck_assert_uint_eq(st.budget_used, 0);
	ck_assert_uint_eq(st.budget_waiting, 0);
}
END_TEST

/* ---- RPC: connections ------------------------------------------------- */

START_TEST(test_connection_cap_keeps_reserve_for_workers)
{
	rpc_server_config cfg;
	struct tserver *ts;
	rpc_server_stats st;
	McreplRpc__HeartbeatRequest hb;
	int c[3], late, worker, over;
	uint16_t port;

	cfg_init(&cfg);
	cfg.max_connections = 4;
	cfg.reserved_share = 0.25; /* the 4th is kept for workers, admin */
	ts = server_start(&cfg);
	port = rpc_server_port(ts->server);
	for (int i = 0; i < 3; i++) {
		c[i] = raw_connect(port);
		send_exist(c[i], 1, "t", "yes");
		expect(c[i], 1, MCREPL_RPC__CODE__OK, NULL);
	}
	late = raw_connect(port); /* a client in the reserve: refused */
	send_exist(late, 7, "t", "yes");
	expect(late, 7, MCREPL_RPC__CODE__TOO_MANY, "kept for MountSegment");
	ck_assert(closed_soon(late));
	close(late);
	WAIT_UNTIL(conns_now(ts) == 3); /* its place is given back */
	worker = raw_connect(port);	/* a worker in the reserve: admitted */
	mcrepl_rpc__heartbeat_request__init(&hb);
	send_frame(worker, 8, M_HEARTBEAT, &hb.base);
	expect(worker, 8, MCREPL_RPC__CODE__OK, NULL);
	send_exist(worker, 9, "t", "yes");
	expect(worker, 9, MCREPL_RPC__CODE__OK, NULL);
	over = raw_connect(port); /* over the cap: told so, closed */
	expect(over, 0, MCREPL_RPC__CODE__TOO_MANY,
	       "server at its connection limit (4, rpc_max_connections)");
	ck_assert(closed_soon(over));
	close(over);
	close(worker);
	for (int i = 0; i < 3; i++)
		close(c[i]);
	server_stop(ts, &st);
	ck_assert_uint_eq(st.refused_reserve, 1);
	ck_assert_uint_eq(st.refused_cap, 1);
	ck_assert_uint_eq(st.max_connections, 4);
	ck_assert_uint_eq(st.reserved, 1);
}
END_TEST

START_TEST(test_per_peer_cap)
{
	rpc_server_config cfg;
	struct tserver *ts;
	rpc_server_stats st;
	int a[2], a3, b;
	uint16_t port;

	cfg_init(&cfg);
	cfg.max_per_peer = 2;
	ts = server_start(&cfg);
	port = rpc_server_port(ts->server);
	for (int i = 0; i < 2; i++) {
		a[i] = connect_from("127.0.0.1", port);
		send_exist(a[i], 1, "t", "yes");
		expect(a[i], 1, MCREPL_RPC__CODE__OK, NULL);
	}
	a3 = connect_from("127.0.0.1", port);
	expect(a3, 0, MCREPL_RPC__CODE__TOO_MANY,
	       "127.0.0.1: 2 connections from this address, the limit "
	       "(rpc_max_connections_per_peer)");
	ck_assert(closed_soon(a3));
	b = connect_from("127.0.0.2", port);
	send_exist(b, 1, "t", "yes");
	expect(b, 1, MCREPL_RPC__CODE__OK, NULL);
	close(a3);
	close(b);
	close(a[0]);
	close(a[1]);
	server_stop(ts, &st);
	ck_assert_uint_eq(st.refused_peer, 1);
}
END_TEST

/* ---- RPC: strings ----------------------------------------------------- */

START_TEST(test_key_and_tenant_length_limits)
{
	rpc_server_config cfg;
	struct tserver *ts;
	char key[1026], tenant[258];
	int fd;

	cfg_init(&cfg); /* the defaults: 1024 and 256 */
	ck_assert_uint_eq(cfg.max_key_bytes, 1024);
	ck_assert_uint_eq(cfg.max_tenant_bytes, 256);
	ts = server_start(&cfg);
	fd = raw_connect(rpc_server_port(ts->server));
	memset(key, 'k', sizeof(key));
	key[1024] = '\0';
	send_exist(fd, 1, "t", key);
	expect(fd, 1, MCREPL_RPC__CODE__OK, NULL);
	key[1024] = 'k';
	key[1025] = '\0';
	send_exist(fd, 2, "t", key);
	expect(fd, 2, MCREPL_RPC__CODE__INVALID_ARGUMENT,
	       "Exist: key is 1025 bytes, above max_key_bytes=1024");
	memset(tenant, 't', sizeof(tenant));
	tenant[257] = '\0';
	send_exist(fd, 3, tenant, "yes");
	expect(fd, 3, MCREPL_RPC__CODE__INVALID_ARGUMENT,
	       "Exist: tenant is 257 bytes, above "
	       "max_tenant_bytes=256");
	send_exist(fd, 4, "t", "yes"); /* the connection stays */
	expect(fd, 4, MCREPL_RPC__CODE__OK, NULL);
	close(fd);
	server_stop(ts, NULL);
}
END_TEST

/* ---- rate-limited log lines -------------------------------------------- */

/* One peer pipelining 200 calls does not hold the loop: a call on another
 * connection, ready in the same turn, is served after at most 16 of them
 * (FRAMES_PER_TURN), not after all 200. */
START_TEST(test_pipelined_peer_gets_a_turn_not_the_loop)
{
	enum { N = 200 };
	rpc_server_config cfg;
	struct tserver *ts;
	uint16_t port;
	int a, b;

	cfg_init(&cfg);
	ts = server_start(&cfg);
	port = rpc_server_port(ts->server);
	server_pause(ts); /* both connections' calls wait in their sockets */
	a = raw_connect(port);
	b = raw_connect(port);
	for (int i = 0; i < N; i++)
		send_exist(a, (uint64_t)i + 1, "", "a");
	send_exist(b, 1, "", "b");
	exist_calls = exist_b_at = 0;
	server_run(ts);
	expect(b, 1, MCREPL_RPC__CODE__OK, NULL);
	for (int i = 0; i < N; i++)
		expect(a, (uint64_t)i + 1, MCREPL_RPC__CODE__OK, NULL);
	close(a);
	close(b);
	server_stop(ts, NULL);
	ck_assert_uint_eq(exist_calls, N + 1);
	ck_assert_uint_ge(exist_b_at, 1);
	ck_assert_uint_le(exist_b_at, 17);
}
END_TEST

/* A crowd leaving at once (300 peers closing) is closed 32 a loop turn,
 * after the turn's ready calls: a call on another connection is served
 * while most of the crowd's connections still wait to be closed, not after
 * all 300 closes. Every one is closed in the end. */
START_TEST(test_crowd_leaving_is_closed_in_slices)
{
	enum { N = 300 };
	rpc_server_config cfg;
	struct tserver *ts;
	uint16_t port;
	int fd[N], b;

	cfg_init(&cfg);
	ts = server_start(&cfg);
	port = rpc_server_port(ts->server);
	for (int i = 0; i < N; i++)
		fd[i] = raw_connect(port);
	b = raw_connect(port);
	WAIT_UNTIL(conns_now(ts) == N + 1);
	server_pause(ts);
	ck_assert_uint_eq(rpc_server_conn_count(ts->server), N + 1);
	for (int i = 0; i < N; i++) /* EOFs first, then b's call */
		close(fd[i]);
	send_exist(b, 1, "", "b");
	exist_server = ts->server;
	exist_b_conns = 0;
	server_run(ts);
	expect(b, 1, MCREPL_RPC__CODE__OK, NULL);
	WAIT_UNTIL(conns_now(ts) == 1); /* every EOF handled */
	server_pause(ts);
	exist_server = NULL;
	ck_assert_uint_gt(exist_b_conns, 50);
	ck_assert_uint_eq(rpc_server_conn_count(ts->server), 1);
	server_run(ts);
	close(b);
	server_stop(ts, NULL);
}
END_TEST

START_TEST(test_ratelog_one_line_per_second_with_count)
{
	struct ratelog rl = {0};
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	ck_assert(ratelog_at(&rl, 5000, f, "accept: %s", "EMFILE"));
	ck_assert(!ratelog_at(&rl, 5001, f, "accept: %s", "EMFILE"));
	ck_assert(!ratelog_at(&rl, 5999, f, "accept: %s", "EMFILE"));
	ck_assert(ratelog_at(&rl, 6000, f, "accept: %s", "ENFILE"));
	ck_assert(!ratelog_at(&rl, 6500, f, "accept: %s", "ENFILE"));
	fclose(f);
	ck_assert_str_eq(text,
			 "accept: EMFILE\naccept: ENFILE (+2 suppressed)\n");
	ck_assert_uint_eq(rl.total, 5);
	ck_assert_uint_eq(rl.suppressed, 1);
	free(text);
}
END_TEST

/* ---- the master at its fd limit --------------------------------------- */

/* Starts a master whose RLIMIT_NOFILE is nofile (set by a shell, which
 * then execs it: under valgrind the test's own setrlimit is not passed
 * on), its stderr into a file (*err_fd, the caller closes). */
static void master_start_limited(struct proc *m, unsigned nofile,
				 const char *const *flags, int *err_fd)
{
	char path[] = "/tmp/mcrepl-overload-XXXXXX", bin[512], script[64];
	const char *argv[16];
	size_t n = 0;
	int saved = dup(STDERR_FILENO);

	*err_fd = mkstemp(path);
	ck_assert_int_ge(*err_fd, 0);
	unlink(path);
	snprintf(script, sizeof(script), "ulimit -n %u && exec \"$0\" \"$@\"",
		 nofile);
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n++] = harness_bin("mcrepl-master", bin, sizeof(bin));
	argv[n++] = "--rpc_address=127.0.0.1";
	argv[n++] = "--rpc_port=0";
	argv[n++] = "--metrics_port=0";
	for (size_t i = 0; flags && flags[i] && n < 15; i++)
		argv[n++] = flags[i];
	argv[n] = NULL;
	dup2(*err_fd, STDERR_FILENO);
	ck_assert_int_eq(proc_start(m, (char *const *)(uintptr_t)argv,
				    "mcrepl-master ready", test_hang_ms()),
			 0);
	dup2(saved, STDERR_FILENO);
	close(saved);
}

static off_t file_size(int fd)
{
	return lseek(fd, 0, SEEK_END);
}

/* A non-blocking connect to 127.0.0.1:port (may still be in progress). */
static int connect_nb(uint16_t port)
{
	struct sockaddr_in sa = {0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	net_set_nonblock(fd, 1);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	(void)connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	return fd;
}

START_TEST(test_master_fd_limit_refuses_clearly)
{
	static const char *const flags[] = {"--http_timeout_ms=500", NULL};
	enum { N = 24 };
	struct proc m;
	int fd[N], err_fd, refused = 0, quiet = 0;
	uint16_t port, http;
	char *page;

	/* nofile 128: the cap is its floor, 16, one of them reserved */
	master_start_limited(&m, 128, flags, &err_fd);
	port = (uint16_t)proc_field(&m, "rpc_port");
	http = (uint16_t)proc_field(&m, "metrics_port");
	for (int i = 0; i < N; i++) {
		fd[i] = raw_connect(port);
		sleep_ms(5); /* accepted in this order */
	}
	for (int i = 0; i < N; i++) {
		struct pollfd p = {fd[i], POLLIN, 0};
		McreplRpc__Envelope *env;

		/* the first 15 quiet (50 ms), the rest refused (a reply
		 * before the wait's bound) */
		if (poll(&p, 1, i < 15 ? 50 : test_hang_ms()) <= 0) {
			quiet++;
			continue;
		}
		env = raw_read_frame(fd[i]);
		ck_assert_ptr_nonnull(env);
		ck_assert_int_eq(env->status, MCREPL_RPC__CODE__TOO_MANY);
		ck_assert_ptr_nonnull(strstr(env->error, "connection limit"));
		protobuf_c_message_free_unpacked(&env->base, NULL);
		refused++;
	}
	/* 15 in; the 16th is the reserved one, which an address holding 8
	 * or more connections does not get */
	ck_assert_int_eq(refused, N - 15);
	ck_assert_int_eq(quiet, 15);
	page = http_get(http, "/health"); /* admin still gets in */
	ck_assert_ptr_nonnull(page);
	free(page);
	for (int i = 0; i < N; i++)
		close(fd[i]);
	ck_assert_int_eq(proc_stop(&m), 0);
	ck_assert_int_lt(file_size(err_fd), 4096);
	close(err_fd);
}
END_TEST

START_TEST(test_master_accept_emfile_backs_off_quietly)
{
	static const char *const flags[] = {"--rpc_max_connections=100000",
					    "--http_timeout_ms=60000", NULL};
	enum { N = 160, H = 8 };
	struct proc m;
	int fd[N + H], err_fd;
	uint16_t port, http;
	rpc_client *c;
	char *page;

	master_start_limited(&m, 96, flags, &err_fd);
	port = (uint16_t)proc_field(&m, "rpc_port");
	http = (uint16_t)proc_field(&m, "metrics_port");
	for (int i = 0; i < N; i++)
		fd[i] = connect_nb(port);
	for (int i = 0; i < H; i++) /* the HTTP listener at EMFILE too */
		fd[N + i] = connect_nb(http);
	sleep_ms(1500);
	/* a spinning listener writes megabytes here in that time */
	ck_assert_int_lt(file_size(err_fd), 2048);
	for (int i = 0; i < N + H; i++)
		close(fd[i]);
	WAIT_UNTIL((c = harness_client(port)) != NULL); /* it recovers */
	rpc_client_close(c);
	page = http_get(http, "/health");
	ck_assert_ptr_nonnull(page);
	free(page);
	ck_assert_int_eq(proc_stop(&m), 0);
	close(err_fd);
}
END_TEST

/* ---- HTTP limits ------------------------------------------------------ */

START_TEST(test_http_headers_and_slowloris_are_bounded)
{
	static const char *const flags[] = {"--http_timeout_ms=300", NULL};
	struct proc m;
	char *big = malloc(64 * 1024), resp[64] = "";
	int slow, flood;
	uint16_t http;
	ssize_t n;

	ck_assert_int_eq(master_start(&m, flags), 0);
	http = (uint16_t)proc_field(&m, "metrics_port");
	slow = raw_connect(http);
	raw_send(slow, "GET /health HTTP/1.1\r\n", 22);
	flood = raw_connect(http);
	set_send_timeout(flood);
	raw_send(flood, "GET /health HTTP/1.1\r\n", 22);
	memset(big, 'a', 64 * 1024);
	memcpy(big, "X-Pad: ", 7);
	(void)!send(flood, big, 64 * 1024, MSG_NOSIGNAL);
	/* refused (4xx) or closed; never buffered without end */
	n = recv(flood, resp, sizeof(resp) - 1, 0);
	ck_assert_msg(n <= 0 || strncmp(resp, "HTTP/1.1 4", 10) == 0, "%s",
		      resp);
	ck_assert(closed_soon(flood));
	ck_assert(closed_soon(slow));
	free(big);
	close(slow);
	close(flood);
	ck_assert_int_eq(proc_stop(&m), 0);
}
END_TEST

Suite *make_overload_suite(void)
{
	Suite *s = suite_create("overload");
	TCase *tc = tcase_create("rpc");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_idle_connection_is_closed);
	tcase_add_test(tc, test_slowloris_frame_is_closed);
	tcase_add_test(tc, test_large_frames_wait_for_input_budget);
	tcase_add_test(tc, test_connection_cap_keeps_reserve_for_workers);
	tcase_add_test(tc, test_per_peer_cap);
	tcase_add_test(tc, test_key_and_tenant_length_limits);
	tcase_add_test(tc, test_pipelined_peer_gets_a_turn_not_the_loop);
	tcase_add_test(tc, test_crowd_leaving_is_closed_in_slices);
	tcase_add_test(tc, test_ratelog_one_line_per_second_with_count);
	suite_add_tcase(s, tc);
	tc = tcase_create("daemons");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_master_fd_limit_refuses_clearly);
	tcase_add_test(tc, test_master_accept_emfile_backs_off_quietly);
	tcase_add_test(tc, test_http_headers_and_slowloris_are_bounded);
	suite_add_tcase(s, tc);
	return s;
}
