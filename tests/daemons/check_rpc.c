/* RPC server and clients over loopback: a test Master service runs on its
 * own event loop thread; bad input is sent as raw bytes. */
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "frame.h"
#include "rawframe.h"
#include "netutil.h"
#include "pbcheck.h"
#include "rpc_client.h"
#include "rpc_server.h"
#include "wait.h"

Suite *make_rpc_suite(void);

#define M_MOUNT 0
#define M_HEARTBEAT 2
#define M_PUT_END 4
#define M_PUT_REVOKE 5
#define M_EXIST 8
#define M_REMOVE 9
#define M_STATS 19
#define BIG_REPLY_BYTES (64 * 1024)

/* ---- the test service --------------------------------------------------- */

struct test_server {
	McreplRpc__Master_Service service; /* first: handlers cast back */
	struct event_base *base;
	rpc_server *server;
	struct event *stop_ev;
	int stop_fds[2];
	pthread_t thread;
	atomic_uint dispatched;
};

static char big_text[BIG_REPLY_BYTES + 1];

static struct test_server *server_of(McreplRpc__Master_Service *svc)
{
	return (struct test_server *)(void *)svc;
}

/* Exist: exists = (key == "yes"); key "big" adds a 64 KiB message. */
static void t_exist(McreplRpc__Master_Service *svc,
		    const McreplRpc__ExistRequest *in,
		    McreplRpc__ExistResponse_Closure closure,
		    void *closure_data)
{
	McreplRpc__ExistResponse resp;
	McreplRpc__Result result;

	atomic_fetch_add(&server_of(svc)->dispatched, 1);
	mcrepl_rpc__exist_response__init(&resp);
	mcrepl_rpc__result__init(&result);
	resp.exists = strcmp(in->key, "yes") == 0;
	if (strcmp(in->key, "big") == 0) {
		result.message = big_text;
		resp.result = &result;
	}
	closure(&resp, closure_data);
}

/* Heartbeat: echoes client_id and the segment count in result.message. */
static void t_heartbeat(McreplRpc__Master_Service *svc,
			const McreplRpc__HeartbeatRequest *in,
			McreplRpc__HeartbeatResponse_Closure closure,
			void *closure_data)
{
	McreplRpc__HeartbeatResponse resp;
	McreplRpc__Result result;
	char text[64];

	(void)svc;
	mcrepl_rpc__heartbeat_response__init(&resp);
	mcrepl_rpc__result__init(&result);
	snprintf(text, sizeof(text), "client %llu segments %zu",
		 (unsigned long long)in->client_id, in->n_segment_ids);
	result.message = text;
	resp.result = &result;
	closure(&resp, closure_data);
}

/* Stats: metrics_text = the calling peer, keys = open connections. */
static void t_stats(McreplRpc__Master_Service *svc,
		    const McreplRpc__StatsRequest *in,
		    McreplRpc__StatsResponse_Closure closure,
		    void *closure_data)
{
	rpc_server *server = server_of(svc)->server;
	rpc_conn *conn = rpc_server_current_conn(server);
	McreplRpc__StatsResponse resp;
	char peer[NET_ADDRSTRLEN];

	(void)in;
	ck_assert_ptr_eq(conn, rpc_server_closure_conn(closure_data));
	mcrepl_rpc__stats_response__init(&resp);
	snprintf(peer, sizeof(peer), "%s", rpc_conn_peer(conn));
	resp.metrics_text = peer;
	resp.keys = rpc_server_conn_count(server);
	closure(&resp, closure_data);
}

/* Misbehaving handlers: never replies / wrong type / NULL message. */
static void t_remove(McreplRpc__Master_Service *svc,
		     const McreplRpc__RemoveRequest *in,
		     McreplRpc__RemoveResponse_Closure closure,
		     void *closure_data)
{
	(void)svc;
	(void)in;
	(void)closure;
	(void)closure_data;
}

static void t_put_end(McreplRpc__Master_Service *svc,
		      const McreplRpc__PutEndRequest *in,
		      McreplRpc__PutEndResponse_Closure closure,
		      void *closure_data)
{
	McreplRpc__ExistResponse wrong;

	(void)svc;
	(void)in;
	mcrepl_rpc__exist_response__init(&wrong);
	closure((const McreplRpc__PutEndResponse *)(const void *)&wrong,
		closure_data);
}

static void t_put_revoke(McreplRpc__Master_Service *svc,
			 const McreplRpc__PutRevokeRequest *in,
			 McreplRpc__PutRevokeResponse_Closure closure,
			 void *closure_data)
{
	(void)svc;
	(void)in;
	closure(NULL, closure_data);
}

/* Methods left unimplemented: MCREPL_RPC__MASTER__INIT pastes these names. */
#define t_mount_segment NULL
#define t_unmount_segment NULL
#define t_put_start NULL
#define t_get_replica_list NULL
#define t_batch_get_replica_list NULL
#define t_fetch_tasks NULL
#define t_mark_task_to_complete NULL
#define t_copy_start NULL
#define t_copy_end NULL
#define t_copy_revoke NULL
#define t_dynamic_replica_copy_start NULL
#define t_dynamic_replica_copy_end NULL
#define t_dynamic_replica_copy_revoke NULL
#define t_submit_replica_action_proposal NULL
#define t_warmup NULL
#define t_stat NULL
#define t_register_objects NULL
#define t_drain NULL

static const McreplRpc__Master_Service test_service =
    MCREPL_RPC__MASTER__INIT(t_);

/* ---- server thread ------------------------------------------------------ */

static void stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

static void *server_main(void *arg)
{
	struct test_server *ts = arg;

	event_base_dispatch(ts->base);
	return NULL;
}

static struct test_server *server_start_cfg(const rpc_server_config *cfg)
{
	struct test_server *ts = calloc(1, sizeof(*ts));
	char err[160];

	ck_assert_ptr_nonnull(ts);
	ts->service = test_service;
	ts->base = event_base_new();
	ck_assert_ptr_nonnull(ts->base);
	ts->server = rpc_server_create(ts->base, cfg, &ts->service.base, err,
				       sizeof(err));
	ck_assert_msg(ts->server != NULL, "%s", err);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, ts->stop_fds), 0);
	ts->stop_ev =
	    event_new(ts->base, ts->stop_fds[0], EV_READ, stop_cb, ts->base);
	event_add(ts->stop_ev, NULL);
	ck_assert_int_eq(pthread_create(&ts->thread, NULL, server_main, ts), 0);
	return ts;
}

static struct test_server *server_start(uint16_t port)
{
	rpc_server_config cfg;

	rpc_server_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.port = port;
	return server_start_cfg(&cfg);
}

/* Stops the loop thread; the server and its connections stay open. */
static void server_pause(struct test_server *ts)
{
	ck_assert_int_eq(write(ts->stop_fds[1], "x", 1), 1);
	pthread_join(ts->thread, NULL);
}

static void server_free(struct test_server *ts)
{
	rpc_server_destroy(ts->server);
	event_free(ts->stop_ev);
	close(ts->stop_fds[0]);
	close(ts->stop_fds[1]);
	event_base_free(ts->base);
	free(ts);
}

static void server_stop(struct test_server *ts)
{
	server_pause(ts);
	server_free(ts);
}

static uint16_t server_port(const struct test_server *ts)
{
	return rpc_server_port(ts->server);
}

/* ---- helpers ------------------------------------------------------------ */

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static rpc_client *client_open(uint16_t port, int call_timeout_ms)
{
	rpc_client_config cfg;
	rpc_client *c = NULL;
	char addr[32], err[160];

	rpc_client_config_init(&cfg);
	cfg.call_timeout_ms = call_timeout_ms;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)port);
	ck_assert_msg(rpc_client_open(&c, addr, &cfg, err, sizeof(err)) ==
			  RPC_OK,
		      "%s", err);
	return c;
}

/* Exist(key) through the blocking client; returns the status. */
static int call_exist(rpc_client *c, const char *key, int *exists)
{
	McreplRpc__ExistRequest req;
	ProtobufCMessage *resp = NULL;
	char tenant[] = "t", k[32], err[160];
	int st;

	snprintf(k, sizeof(k), "%s", key);
	mcrepl_rpc__exist_request__init(&req);
	req.tenant = tenant;
	req.key = k;
	st = rpc_call(c, M_EXIST, &req.base,
		      &mcrepl_rpc__exist_response__descriptor, &resp, err,
		      sizeof(err));
	if (st == RPC_OK) {
		*exists = ((McreplRpc__ExistResponse *)resp)->exists;
		protobuf_c_message_free_unpacked(resp, NULL);
	}
	return st;
}

/* Open connections as the server sees them (asked over RPC). */
static uint64_t server_conns(rpc_client *c)
{
	McreplRpc__StatsRequest req;
	ProtobufCMessage *resp = NULL;
	char err[160];
	uint64_t n;

	mcrepl_rpc__stats_request__init(&req);
	ck_assert_int_eq(rpc_call(c, M_STATS, &req.base,
				  &mcrepl_rpc__stats_response__descriptor,
				  &resp, err, sizeof(err)),
			 RPC_OK);
	n = ((McreplRpc__StatsResponse *)resp)->keys;
	protobuf_c_message_free_unpacked(resp, NULL);
	return n;
}

/* Polls until the server counts `want` connections (wait.h). */
static void wait_conns(rpc_client *c, uint64_t want)
{
	uint64_t n;

	WAIT_UNTIL((n = server_conns(c)) == want);
	ck_assert_uint_eq(n, want);
}

static int raw_connect(uint16_t port)
{
	struct timeval tv = {5, 0};
	char err[160];
	int fd = net_connect("127.0.0.1", port, 2000, err, sizeof(err));

	ck_assert_msg(fd >= 0, "%s", err);
	ck_assert_int_eq(net_set_nonblock(fd, 0), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void raw_send(int fd, const void *buf, size_t len)
{
	ck_assert_int_eq(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

/* Sends one request frame with a raw body. */
static void raw_send_frame(int fd, uint64_t id, uint32_t method,
			   const uint8_t *body, size_t len)
{
	rpc_frame_head head = {id, method, MCREPL_RPC__CODE__OK, NULL};
	uint8_t *frame;
	size_t n;

	ck_assert_int_eq(rpc_frame_encode(&head, body, len, &frame, &n),
			 RPC_FRAME_OK);
	raw_send(fd, frame, n);
	free(frame);
}

/* Reads one reply and checks its id and status. */
static void raw_expect(int fd, uint64_t id, McreplRpc__Code status,
		       const char *error)
{
	McreplRpc__Envelope *env = raw_read_frame(fd);

	ck_assert_ptr_nonnull(env);
	ck_assert_uint_eq(env->request_id, id);
	ck_assert_int_eq(env->status, status);
	if (error)
		ck_assert_str_eq(env->error, error);
	protobuf_c_message_free_unpacked(&env->base, NULL);
}

static void raw_expect_eof(int fd)
{
	uint8_t b;

	ck_assert_int_eq(recv(fd, &b, 1, 0), 0);
}

/* ExistRequest { tenant: "t", key: "yes" } */
static const uint8_t exist_yes[] = {0x0a, 0x01, 't', 0x12, 0x03, 'y', 'e', 's'};

/* A listening socket that is never accepted from: connects succeed (the
 * kernel completes them), requests are never answered. */
static int silent_listener(uint16_t *port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	getsockname(fd, (struct sockaddr *)&sa, &len);
	*port = ntohs(sa.sin_port);
	return fd;
}

/* ---- blocking client and dispatch --------------------------------------- */

START_TEST(test_round_trip)
{
	struct test_server *ts = server_start(0);
	rpc_client *c = client_open(server_port(ts), 5000);
	int exists = -1;

	ck_assert_uint_ne(server_port(ts), 0);
	ck_assert_int_eq(call_exist(c, "yes", &exists), RPC_OK);
	ck_assert_int_eq(exists, 1);
	ck_assert_int_eq(call_exist(c, "no", &exists), RPC_OK);
	ck_assert_int_eq(exists, 0);
	rpc_client_close(c);
	server_stop(ts);
}
END_TEST

START_TEST(test_heartbeat_echo)
{
	struct test_server *ts = server_start(0);
	rpc_client *c = client_open(server_port(ts), 5000);
	uint64_t ids[2] = {7, 9}, reads[2] = {1, 2};
	McreplRpc__HeartbeatRequest req;
	McreplRpc__HeartbeatResponse *resp = NULL;
	char err[160];

	mcrepl_rpc__heartbeat_request__init(&req);
	req.client_id = 42;
	req.n_segment_ids = 2;
	req.segment_ids = ids;
	req.n_segment_reads = 2;
	req.segment_reads = reads;
	ck_assert_int_eq(rpc_call(c, M_HEARTBEAT, &req.base,
				  &mcrepl_rpc__heartbeat_response__descriptor,
				  (ProtobufCMessage **)&resp, err, sizeof(err)),
			 RPC_OK);
	ck_assert_ptr_nonnull(resp->result);
	ck_assert_str_eq(resp->result->message, "client 42 segments 2");
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	rpc_client_close(c);
	server_stop(ts);
}
END_TEST

START_TEST(test_peer_and_conn)
{
	struct test_server *ts = server_start(0);
	rpc_client *c = client_open(server_port(ts), 5000);
	McreplRpc__StatsRequest req;
	McreplRpc__StatsResponse *resp = NULL;
	char err[160];

	mcrepl_rpc__stats_request__init(&req);
	ck_assert_int_eq(rpc_call(c, M_STATS, &req.base,
				  &mcrepl_rpc__stats_response__descriptor,
				  (ProtobufCMessage **)&resp, err, sizeof(err)),
			 RPC_OK);
	ck_assert_msg(strncmp(resp->metrics_text, "127.0.0.1:", 10) == 0,
		      "peer %s", resp->metrics_text);
	ck_assert_uint_eq(resp->keys, 1);
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	rpc_client_close(c);
	server_stop(ts);
}
END_TEST

START_TEST(test_method_index)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;

	ck_assert_int_eq(rpc_method_index(d, "MountSegment"), M_MOUNT);
	ck_assert_int_eq(rpc_method_index(d, "Exist"), M_EXIST);
	ck_assert_int_eq(rpc_method_index(d, "Stats"), M_STATS);
	ck_assert_int_eq(rpc_method_index(d, "Warmup"), 20);
	ck_assert_int_eq(rpc_method_index(d, "NoSuch"), -1);
	ck_assert_str_eq(d->methods[M_EXIST].name, "Exist");
}
END_TEST

START_TEST(test_status_names)
{
	ck_assert_str_eq(rpc_status_str(RPC_OK), "OK");
	ck_assert_str_eq(rpc_status_str(RPC_E_TIMEOUT), "timed out");
	ck_assert_str_eq(rpc_status_str(RPC_E_UNAVAILABLE),
			 "not connected or connection lost");
	ck_assert_str_eq(rpc_status_str(MCREPL_RPC__CODE__UNKNOWN_METHOD),
			 "UNKNOWN_METHOD");
	ck_assert_str_eq(rpc_status_str(1000), "unknown status");
}
END_TEST

/* Replies from the server's own checks, all on one kept connection. */
struct bad_call {
	uint32_t method;
	int status;
	const char *error;
};

static const struct bad_call bad_calls[] = {
    {M_MOUNT, MCREPL_RPC__CODE__UNIMPLEMENTED, "MountSegment not implemented"},
    {20, MCREPL_RPC__CODE__UNIMPLEMENTED, "Warmup not implemented"},
    {21, MCREPL_RPC__CODE__UNIMPLEMENTED, "Stat not implemented"},
    {22, MCREPL_RPC__CODE__UNIMPLEMENTED, "RegisterObjects not implemented"},
    {23, MCREPL_RPC__CODE__UNIMPLEMENTED, "Drain not implemented"},
    /* one past the last method: what an older master says to a newer one */
    {24, MCREPL_RPC__CODE__UNKNOWN_METHOD, "unknown method 24"},
    {999, MCREPL_RPC__CODE__UNKNOWN_METHOD, "unknown method 999"},
    {M_REMOVE, MCREPL_RPC__CODE__INTERNAL, "handler did not reply"},
    {M_PUT_END, MCREPL_RPC__CODE__INTERNAL, "wrong response type"},
    {M_PUT_REVOKE, MCREPL_RPC__CODE__INTERNAL, "handler failed"},
};
#define N_BAD_CALLS (int)(sizeof(bad_calls) / sizeof(bad_calls[0]))

START_TEST(test_dispatch_errors)
{
	const struct bad_call *bc = &bad_calls[_i];
	struct test_server *ts = server_start(0);
	int fd = raw_connect(server_port(ts));

	/* An empty body is a valid (all-default) request for any method. */
	raw_send_frame(fd, 77, bc->method, NULL, 0);
	raw_expect(fd, 77, (McreplRpc__Code)bc->status, bc->error);
	raw_send_frame(fd, 78, M_EXIST, exist_yes, sizeof(exist_yes));
	raw_expect(fd, 78, MCREPL_RPC__CODE__OK, "");
	close(fd);
	server_stop(ts);
}
END_TEST

/* The blocking client sees the same statuses and error texts. */
START_TEST(test_client_statuses)
{
	struct test_server *ts = server_start(0);
	rpc_client *c = client_open(server_port(ts), 5000);
	McreplRpc__MountSegmentRequest req;
	ProtobufCMessage *resp = (ProtobufCMessage *)&req;
	char err[160];
	int exists = 0;

	mcrepl_rpc__mount_segment_request__init(&req);
	ck_assert_int_eq(
	    rpc_call(c, 999, &req.base,
		     &mcrepl_rpc__mount_segment_response__descriptor, &resp,
		     err, sizeof(err)),
	    MCREPL_RPC__CODE__UNKNOWN_METHOD);
	ck_assert_ptr_null(resp);
	ck_assert_str_eq(err, "unknown method 999");
	ck_assert_int_eq(
	    rpc_call(c, M_MOUNT, &req.base,
		     &mcrepl_rpc__mount_segment_response__descriptor, &resp,
		     err, sizeof(err)),
	    MCREPL_RPC__CODE__UNIMPLEMENTED);
	ck_assert_int_eq(call_exist(c, "yes", &exists), RPC_OK);
	ck_assert_int_eq(exists, 1);
	ck_assert_uint_eq(server_conns(c), 1); /* never reconnected */
	rpc_client_close(c);
	server_stop(ts);
}
END_TEST

/* Errors name the method, never a protobuf message type
 * ("mcrepl_rpc.ExistRequest: ..." read as noise to an operator). */
START_TEST(test_bad_body)
{
	static const uint8_t junk[] = {0x12, 0x7f, 'x'}; /* string runs off */
	struct test_server *ts = server_start(0);
	int fd = raw_connect(server_port(ts));

	raw_send_frame(fd, 5, M_EXIST, junk, sizeof(junk));
	raw_expect(fd, 5, MCREPL_RPC__CODE__BAD_REQUEST,
		   "Exist: the request does not parse");
	raw_send_frame(fd, 6, M_EXIST, exist_yes, sizeof(exist_yes));
	raw_expect(fd, 6, MCREPL_RPC__CODE__OK, "");
	close(fd);
	server_stop(ts);
}
END_TEST

/* Lifecycle item 8: "nul\0suffix" must not read as "nul"; the connection
 * stays usable. Nested strings (a Replica's host) are checked too. */
START_TEST(test_lifecycle8_string_with_nul_is_invalid_argument)
{
	static const uint8_t key_nul[] = {0x0a, 0x01, 't',  0x12, 0x0a,
					  'n',	'u',  0x6c, 0,	  's',
					  'u',	'f',  'f',  'i',  'x'};
	static const uint8_t tenant_nul[] = {0x0a, 0x02, 't', 0,  0x12,
					     0x03, 'y',	 'e', 's'};
	struct test_server *ts = server_start(0);
	int fd = raw_connect(server_port(ts));

	raw_send_frame(fd, 7, M_EXIST, key_nul, sizeof(key_nul));
	raw_expect(fd, 7, MCREPL_RPC__CODE__INVALID_ARGUMENT,
		   "Exist: key holds a NUL byte");
	raw_send_frame(fd, 8, M_EXIST, tenant_nul, sizeof(tenant_nul));
	raw_expect(fd, 8, MCREPL_RPC__CODE__INVALID_ARGUMENT,
		   "Exist: tenant holds a NUL byte");
	raw_send_frame(fd, 9, M_EXIST, exist_yes, sizeof(exist_yes));
	raw_expect(fd, 9, MCREPL_RPC__CODE__OK, "");
	close(fd);
	server_stop(ts);
}
END_TEST

START_TEST(test_pb_nul_string_walks_nested_messages)
{
	/* PutStartResponse.replicas[0].host_id = "h\0" (field 3 in field 3). */
	static const uint8_t nested[] = {0x1a, 0x04, 0x1a, 0x02, 'h', 0};
	static const uint8_t clean[] = {0x1a, 0x04, 0x1a, 0x02, 'h', 'i'};
	static const uint8_t cut[] = {0x1a, 0x09, 0x1a, 0x02, 'h', 0};

	ck_assert_str_eq(
	    pb_nul_string(&mcrepl_rpc__put_start_response__descriptor, nested,
			  sizeof(nested)),
	    "host_id");
	ck_assert_ptr_null(pb_nul_string(
	    &mcrepl_rpc__put_start_response__descriptor, clean, sizeof(clean)));
	ck_assert_ptr_null(pb_nul_string(
	    &mcrepl_rpc__put_start_response__descriptor, cut, sizeof(cut)));
	ck_assert_ptr_null(pb_nul_string(
	    &mcrepl_rpc__put_start_response__descriptor, NULL, 0));
}
END_TEST

/* ---- malformed streams --------------------------------------------------- */

START_TEST(test_oversized_prefix)
{
	static const uint8_t prefix[] = {0x01, 0x00, 0x00, 0x01}; /* 16M+1 */
	struct test_server *ts = server_start(0);
	rpc_client *other = client_open(server_port(ts), 5000);
	int fd = raw_connect(server_port(ts)), exists = 0;

	ck_assert_int_eq(call_exist(other, "yes", &exists), RPC_OK);
	raw_send(fd, prefix, sizeof(prefix));
	raw_expect(fd, 0, MCREPL_RPC__CODE__FRAME_TOO_LARGE,
		   "frame exceeds 16777216 bytes");
	raw_expect_eof(fd);
	close(fd);
	ck_assert_int_eq(call_exist(other, "yes", &exists), RPC_OK);
	ck_assert_int_eq(exists, 1);
	wait_conns(other, 1);
	rpc_client_close(other);
	server_stop(ts);
}
END_TEST

/* A configured limit: N == max is served, N == max + 1 is refused. */
START_TEST(test_configured_max)
{
	static const uint8_t over[] = {0x00, 0x00, 0x00, 0x21}; /* 33 */
	rpc_server_config cfg;
	struct test_server *ts;
	uint8_t body[26]; /* envelope: id 2 + method 2 + body 2 + 26 = 32 */
	int fd;

	rpc_server_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.max_frame_bytes = 32;
	ts = server_start_cfg(&cfg);
	fd = raw_connect(server_port(ts));
	/* exist_yes, then unknown field 15 = varint 0 (0x78 0x00) x 9 */
	memset(body, 0, sizeof(body));
	memcpy(body, exist_yes, sizeof(exist_yes));
	for (size_t i = sizeof(exist_yes); i + 1 < sizeof(body); i += 2)
		body[i] = 0x78;
	raw_send_frame(fd, 1, M_EXIST, body, sizeof(body));
	raw_expect(fd, 1, MCREPL_RPC__CODE__OK, "");
	raw_send(fd, over, sizeof(over));
	raw_expect(fd, 0, MCREPL_RPC__CODE__FRAME_TOO_LARGE,
		   "frame exceeds 32 bytes");
	raw_expect_eof(fd);
	close(fd);
	server_stop(ts);
}
END_TEST

/* HTTP to the RPC port: "GET " read as a length is ~1.2 GB. */
START_TEST(test_garbage_http)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	struct test_server *ts = server_start(0);
	int fd = raw_connect(server_port(ts));

	raw_send(fd, req, sizeof(req) - 1);
	raw_expect(fd, 0, MCREPL_RPC__CODE__FRAME_TOO_LARGE, NULL);
	raw_expect_eof(fd);
	close(fd);
	server_stop(ts);
}
END_TEST

START_TEST(test_malformed_envelope)
{
	static const uint8_t junk[] = {0x00, 0x00, 0x00, 0x04,
				       0xff, 0xff, 0xff, 0xff};
	struct test_server *ts = server_start(0);
	rpc_client *other = client_open(server_port(ts), 5000);
	int fd = raw_connect(server_port(ts)), exists = 0;

	raw_send(fd, junk, sizeof(junk));
	raw_expect(fd, 0, MCREPL_RPC__CODE__BAD_REQUEST, "malformed envelope");
	raw_expect_eof(fd);
	close(fd);
	ck_assert_int_eq(call_exist(other, "yes", &exists), RPC_OK);
	wait_conns(other, 1);
	rpc_client_close(other);
	server_stop(ts);
}
END_TEST

/* Half a frame, then the peer goes away: the connection is freed. */
START_TEST(test_truncated_then_close)
{
	static const uint8_t part[] = {0x00, 0x00, 0x00, 0x64, 0x08, 0x01};
	struct test_server *ts = server_start(0);
	rpc_client *other = client_open(server_port(ts), 5000);
	int fd = raw_connect(server_port(ts));

	wait_conns(other, 2);
	raw_send(fd, part, sizeof(part));
	close(fd);
	wait_conns(other, 1);
	rpc_client_close(other);
	server_stop(ts);
}
END_TEST

/* Many frames in one write come back in order; a half-closed peer still
 * gets every reply before the server closes. */
START_TEST(test_pipelined_half_close)
{
	struct test_server *ts = server_start(0);
	int fd = raw_connect(server_port(ts));
	uint64_t id;

	for (id = 1; id <= 100; id++)
		raw_send_frame(fd, id, M_EXIST, exist_yes, sizeof(exist_yes));
	shutdown(fd, SHUT_WR);
	for (id = 1; id <= 100; id++)
		raw_expect(fd, id, MCREPL_RPC__CODE__OK, "");
	raw_expect_eof(fd);
	close(fd);
	server_stop(ts);
}
END_TEST

/* A peer that does not read: the server stops dispatching its requests
 * once replies back up, and resumes as they are read. */
START_TEST(test_high_water)
{
	static const uint8_t big[] = {0x12, 0x03, 'b', 'i', 'g'};
	enum { N = 400 };
	rpc_server_config cfg;
	struct test_server *ts;
	unsigned seen;
	int fd, i;

	memset(big_text, 'x', BIG_REPLY_BYTES);
	rpc_server_config_init(&cfg);
	cfg.host = "127.0.0.1";
	cfg.out_high_water = 256 * 1024;
	ts = server_start_cfg(&cfg);
	fd = raw_connect(server_port(ts));
	for (i = 0; i < N; i++)
		raw_send_frame(fd, (uint64_t)i + 1, M_EXIST, big, sizeof(big));
	WAIT_UNTIL(atomic_load(&ts->dispatched) > 0);
	sleep_ms(300); /* a span for dispatching past the high water */
	seen = atomic_load(&ts->dispatched);
	ck_assert_msg(seen > 0 && seen < N, "dispatched %u of %d", seen, N);
	for (i = 0; i < N; i++)
		raw_expect(fd, (uint64_t)i + 1, MCREPL_RPC__CODE__OK, "");
	ck_assert_uint_eq(atomic_load(&ts->dispatched), N);
	close(fd);
	server_stop(ts);
}
END_TEST

/* ---- concurrency, timeouts, reconnects ---------------------------------- */

struct worker_arg {
	uint16_t port;
	int ok;
};

static void *client_thread(void *arg)
{
	struct worker_arg *w = arg;
	rpc_client *c = client_open(w->port, 10000);
	int i, exists;

	for (i = 0; i < 50; i++) {
		exists = -1;
		if (call_exist(c, i % 2 ? "yes" : "no", &exists) == RPC_OK &&
		    exists == i % 2)
			w->ok++;
	}
	rpc_client_close(c);
	return NULL;
}

START_TEST(test_many_clients)
{
	enum { N = 24 };
	struct test_server *ts = server_start(0);
	struct worker_arg args[N];
	pthread_t th[N];
	int i;

	for (i = 0; i < N; i++) {
		args[i].port = server_port(ts);
		args[i].ok = 0;
		ck_assert_int_eq(
		    pthread_create(&th[i], NULL, client_thread, &args[i]), 0);
	}
	for (i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(args[i].ok, 50);
	}
	server_stop(ts);
}
END_TEST

START_TEST(test_client_timeout)
{
	uint16_t port;
	int lfd = silent_listener(&port), exists = 0;
	rpc_client *c = client_open(port, 200);
	int64_t t0 = net_now_ms(), dt;

	ck_assert_int_eq(call_exist(c, "yes", &exists), RPC_E_TIMEOUT);
	dt = net_now_ms() - t0;
	ck_assert_msg(dt >= 190 && dt < 3000, "took %lld ms", (long long)dt);
	rpc_client_close(c);
	close(lfd);
}
END_TEST

START_TEST(test_client_connect_refused)
{
	uint16_t port;
	int lfd = silent_listener(&port);
	rpc_client *c = NULL;
	char addr[32], err[160];

	close(lfd); /* nothing listens there now */
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)port);
	ck_assert_int_eq(rpc_client_open(&c, addr, NULL, err, sizeof(err)),
			 RPC_E_UNAVAILABLE);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(rpc_client_open(&c, "nocolon", NULL, err, sizeof(err)),
			 RPC_E_INVALID);
	ck_assert_int_eq(rpc_client_open(&c, "h:99999", NULL, err, sizeof(err)),
			 RPC_E_INVALID);
}
END_TEST

START_TEST(test_client_reconnect)
{
	struct test_server *ts = server_start(0);
	uint16_t port = server_port(ts);
	rpc_client *c = client_open(port, 2000);
	int exists = 0;

	ck_assert_int_eq(call_exist(c, "yes", &exists), RPC_OK);
	server_stop(ts);
	ck_assert_int_eq(call_exist(c, "yes", &exists), RPC_E_UNAVAILABLE);
	ts = server_start(port);
	exists = 0;
	ck_assert_int_eq(call_exist(c, "yes", &exists), RPC_OK);
	ck_assert_int_eq(exists, 1);
	rpc_client_close(c);
	server_stop(ts);
}
END_TEST

/* ---- asynchronous client ------------------------------------------------ */

struct acall {
	int done;
	int status;
	int exists;
	char error[96];
};

static void acall_cb(int status, ProtobufCMessage *resp, const char *error,
		     void *arg)
{
	struct acall *a = arg;

	a->done++;
	a->status = status;
	snprintf(a->error, sizeof(a->error), "%s", error);
	if (resp) {
		a->exists = ((McreplRpc__ExistResponse *)resp)->exists;
		protobuf_c_message_free_unpacked(resp, NULL);
	}
}

static int acall_exist(rpc_aclient *c, const char *key, struct acall *a)
{
	McreplRpc__ExistRequest req;
	char tenant[] = "t", k[32];

	snprintf(k, sizeof(k), "%s", key);
	mcrepl_rpc__exist_request__init(&req);
	req.tenant = tenant;
	req.key = k;
	memset(a, 0, sizeof(*a));
	a->exists = -1;
	return rpc_aclient_call(c, M_EXIST, &req.base,
				&mcrepl_rpc__exist_response__descriptor,
				acall_cb, a);
}

/* Runs base until *done (wait.h: only a hang ends it sooner). */
static void run_until(struct event_base *base, const int *done)
{
	struct timeval tick = {0, 10000};
	int64_t end = net_now_ms() + test_hang_ms();

	while (!*done && net_now_ms() < end) {
		event_base_loopexit(base, &tick);
		event_base_dispatch(base);
	}
	ck_assert_msg(*done, "callback never came");
}

static rpc_aclient *aclient_new(struct event_base *base, uint16_t port,
				int timeout_ms)
{
	rpc_client_config cfg;
	rpc_aclient *c;
	char addr[32], err[160];

	rpc_client_config_init(&cfg);
	cfg.call_timeout_ms = timeout_ms;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)port);
	c = rpc_aclient_create(base, addr, &cfg, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	return c;
}

START_TEST(test_async_round_trip)
{
	enum { N = 20 };
	struct test_server *ts = server_start(0);
	struct event_base *base = event_base_new();
	rpc_aclient *c = aclient_new(base, server_port(ts), 5000);
	struct acall a[N];
	int i;

	for (i = 0; i < N; i++)
		ck_assert_int_eq(acall_exist(c, i % 3 ? "no" : "yes", &a[i]),
				 RPC_OK);
	ck_assert_uint_eq(rpc_aclient_pending(c), N);
	run_until(base, &a[N - 1].done);
	for (i = 0; i < N; i++) {
		ck_assert_int_eq(a[i].done, 1);
		ck_assert_int_eq(a[i].status, RPC_OK);
		ck_assert_int_eq(a[i].exists, i % 3 ? 0 : 1);
	}
	ck_assert_uint_eq(rpc_aclient_pending(c), 0);
	rpc_aclient_destroy(c);
	event_base_free(base);
	server_stop(ts);
}
END_TEST

START_TEST(test_async_server_status)
{
	struct test_server *ts = server_start(0);
	struct event_base *base = event_base_new();
	rpc_aclient *c = aclient_new(base, server_port(ts), 5000);
	McreplRpc__StatsRequest req;
	struct acall a = {0};

	mcrepl_rpc__stats_request__init(&req);
	ck_assert_int_eq(
	    rpc_aclient_call(c, 999, &req.base,
			     &mcrepl_rpc__stats_response__descriptor, acall_cb,
			     &a),
	    RPC_OK);
	run_until(base, &a.done);
	ck_assert_int_eq(a.status, MCREPL_RPC__CODE__UNKNOWN_METHOD);
	ck_assert_str_eq(a.error, "unknown method 999");
	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	run_until(base, &a.done);
	ck_assert_int_eq(a.status, RPC_OK);
	rpc_aclient_destroy(c);
	event_base_free(base);
	server_stop(ts);
}
END_TEST

START_TEST(test_async_timeout)
{
	uint16_t port;
	int lfd = silent_listener(&port);
	struct event_base *base = event_base_new();
	rpc_aclient *c = aclient_new(base, port, 200);
	int64_t t0 = net_now_ms(), dt;
	struct acall a;

	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	run_until(base, &a.done);
	dt = net_now_ms() - t0;
	ck_assert_int_eq(a.status, RPC_E_TIMEOUT);
	ck_assert_int_eq(a.done, 1);
	ck_assert_msg(dt >= 190 && dt < 3000, "took %lld ms", (long long)dt);
	ck_assert_uint_eq(rpc_aclient_pending(c), 0);
	rpc_aclient_destroy(c);
	event_base_free(base);
	close(lfd);
}
END_TEST

/* Pending calls fail UNAVAILABLE when the server goes; the next call
 * reconnects to the restarted server; destroy cancels what is left. */
START_TEST(test_async_reconnect)
{
	struct test_server *ts = server_start(0);
	uint16_t port = server_port(ts);
	struct event_base *base = event_base_new();
	rpc_aclient *c = aclient_new(base, port, 5000);
	struct acall a;

	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	run_until(base, &a.done);
	ck_assert_int_eq(a.status, RPC_OK);
	server_pause(ts); /* connection open, nobody serving */
	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	event_base_loop(base, EVLOOP_NONBLOCK);
	ck_assert_int_eq(a.done, 0);
	server_free(ts); /* closes the connection */
	run_until(base, &a.done);
	ck_assert_int_eq(a.status, RPC_E_UNAVAILABLE);
	ts = server_start(port);
	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	run_until(base, &a.done);
	ck_assert_int_eq(a.status, RPC_OK);
	ck_assert_int_eq(a.exists, 1);
	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	rpc_aclient_destroy(c);
	ck_assert_int_eq(a.done, 1);
	ck_assert_int_eq(a.status, RPC_E_CANCELLED);
	event_base_free(base);
	server_stop(ts);
}
END_TEST

START_TEST(test_async_refused)
{
	uint16_t port;
	int lfd = silent_listener(&port);
	struct event_base *base;
	rpc_aclient *c;
	struct acall a;

	close(lfd);
	base = event_base_new();
	c = aclient_new(base, port, 5000);
	ck_assert_int_eq(acall_exist(c, "yes", &a), RPC_OK);
	ck_assert_int_eq(a.done, 0); /* never from inside the call */
	run_until(base, &a.done);
	ck_assert_int_eq(a.status, RPC_E_UNAVAILABLE);
	rpc_aclient_destroy(c);
	event_base_free(base);
}
END_TEST

Suite *make_rpc_suite(void)
{
	Suite *s = suite_create("rpc");
	TCase *tc = tcase_create("server");
	TCase *bad = tcase_create("malformed");
	TCase *cl = tcase_create("clients");

	tcase_set_timeout(tc, 60);
	tcase_set_timeout(bad, 60);
	tcase_set_timeout(cl, 60);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_heartbeat_echo);
	tcase_add_test(tc, test_peer_and_conn);
	tcase_add_test(tc, test_method_index);
	tcase_add_test(tc, test_status_names);
	tcase_add_loop_test(tc, test_dispatch_errors, 0, N_BAD_CALLS);
	tcase_add_test(tc, test_client_statuses);
	tcase_add_test(tc, test_bad_body);
	tcase_add_test(tc, test_lifecycle8_string_with_nul_is_invalid_argument);
	tcase_add_test(tc, test_pb_nul_string_walks_nested_messages);
	tcase_add_test(tc, test_pipelined_half_close);
	tcase_add_test(tc, test_high_water);
	tcase_add_test(bad, test_oversized_prefix);
	tcase_add_test(bad, test_configured_max);
	tcase_add_test(bad, test_garbage_http);
	tcase_add_test(bad, test_malformed_envelope);
	tcase_add_test(bad, test_truncated_then_close);
	tcase_add_test(cl, test_many_clients);
	tcase_add_test(cl, test_client_timeout);
	tcase_add_test(cl, test_client_connect_refused);
	tcase_add_test(cl, test_client_reconnect);
	tcase_add_test(cl, test_async_round_trip);
	tcase_add_test(cl, test_async_server_status);
	tcase_add_test(cl, test_async_timeout);
	tcase_add_test(cl, test_async_reconnect);
	tcase_add_test(cl, test_async_refused);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, bad);
	suite_add_tcase(s, cl);
	return s;
}
