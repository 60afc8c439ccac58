/* Blocking RPC client, status names and method lookup (see rpc_client.h). */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>

#include "frame.h"
#include "netutil.h"
#include "rpc_auth.h"
#include "rpc_client.h"
#include "tls.h"

#define HOST_MAX 256

struct rpc_client {
	rpc_client_config cfg;
	char host[HOST_MAX];
	uint16_t port;
	int fd; /* -1 = not connected */
	uint64_t next_id;
	bool sent; /* the last call's request left whole */
	uint8_t session[AUTH_MAC_BYTES]; /* with cred, once connected */
	SSL *ssl;			 /* with cfg.tls, once connected */
	uint8_t tls_key[TLS_SESSION_KEY_BYTES];
};

const char *rpc_status_str(int status)
{
	const ProtobufCEnumValue *v;

	switch (status) {
#define RPC_STATUS_CASE(name, value, text)                                     \
	case name:                                                             \
		return text;
		RPC_STATUS_MAP(RPC_STATUS_CASE)
#undef RPC_STATUS_CASE
	default:
		break;
	}
	v = protobuf_c_enum_descriptor_get_value(&mcrepl_rpc__code__descriptor,
						 status);
	return v ? v->name : "unknown status";
}

int rpc_method_index(const ProtobufCServiceDescriptor *desc, const char *name)
{
	const ProtobufCMethodDescriptor *m;

	m = protobuf_c_service_descriptor_get_method_by_name(desc, name);
	return m ? (int)(m - desc->methods) : -1;
}

void rpc_client_config_init(rpc_client_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->connect_timeout_ms = 3000;
	cfg->call_timeout_ms = 5000;
	cfg->max_frame_bytes = RPC_FRAME_DEFAULT_MAX_BYTES;
}

static void set_err(char *err, size_t errlen, const char *text)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", text);
}

static void drop(rpc_client *c)
{
	SSL_free(c->ssl);
	c->ssl = NULL;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* With no call outstanding, anything readable is EOF, an error or a
 * server's parting notice: the connection is of no further use. */
static int is_stale(const rpc_client *c)
{
	struct pollfd pfd = {.fd = c->fd, .events = POLLIN};

	return (c->ssl && SSL_has_pending(c->ssl)) || poll(&pfd, 1, 0) != 0;
}

static int send_all(rpc_client *c, const uint8_t *buf, size_t len,
		    int64_t deadline);
static int recv_reply(rpc_client *c, int64_t deadline,
		      McreplRpc__Envelope **env);
static int wait_fd(int fd, short events, int64_t deadline);

/* One SSL_* call's result: 1 done, 0 to retry after waiting (done), or a
 * negative RPC status. */
static int ssl_wait(rpc_client *c, int rc, int64_t deadline)
{
	int e = SSL_get_error(c->ssl, rc), st;

	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
		st = wait_fd(c->fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT,
			     deadline);
		return st ? st : 0;
	}
	if (e == SSL_ERROR_SYSCALL && rc < 0 && errno == EINTR)
		return 0;
	ERR_clear_error();
	return RPC_E_UNAVAILABLE;
}

/* The TLS handshake on the new connection: the master's certificate
 * checked against the CA and the host dialed. */
static int tls_start(rpc_client *c, int64_t deadline, char *err, size_t errlen)
{
	BIO *bio;
	int rc, st;

	c->ssl = tls_client_ssl(c->cfg.tls, c->host);
	bio = c->ssl ? tls_socket_bio(c->fd) : NULL;
	if (!bio) {
		set_err(err, errlen, "out of memory (TLS)");
		drop(c);
		return RPC_E_NOMEM;
	}
	SSL_set_bio(c->ssl, bio, bio);
	/* what the socket has in one read, not a record's header then its
	 * body (libevent's OpenSSL bufferevents cannot have this) */
	SSL_set_read_ahead(c->ssl, 1);
	for (;;) {
		errno = 0;
		rc = SSL_connect(c->ssl);
		if (rc == 1)
			break;
		st = ssl_wait(c, rc, deadline);
		if (st == 0)
			continue;
		if (st == RPC_E_TIMEOUT)
			set_err(err, errlen, "TLS handshake timed out");
		else
			tls_client_error(c->ssl, 0, errno, err, errlen);
		drop(c);
		return st;
	}
	if (tls_session_key(c->ssl, c->tls_key)) {
		set_err(err, errlen, "TLS: no session key");
		drop(c);
		return RPC_E_PROTOCOL;
	}
	return RPC_OK;
}

/* The handshake of rpc_auth.h on a new connection, before any call. */
static int handshake(rpc_client *c, int64_t deadline, char *err, size_t errlen)
{
	struct rpc_auth_client a;
	McreplRpc__Envelope *env;
	uint8_t *frame;
	size_t len;
	int st = rpc_auth_client_hello(&a, c->cfg.cred, &frame, &len);

	while (st == RPC_OK && frame) {
		st = send_all(c, frame, len, deadline);
		free(frame);
		frame = NULL;
		if (st == RPC_OK)
			st = recv_reply(c, deadline, &env);
		if (st != RPC_OK) {
			set_err(err, errlen, rpc_status_str(st));
			break;
		}
		st = rpc_auth_client_step(&a, env, &frame, &len, err, errlen);
		protobuf_c_message_free_unpacked(&env->base, NULL);
	}
	if (st != RPC_OK)
		drop(c);
	else
		memcpy(c->session, a.session, sizeof(c->session));
	memset(&a, 0, sizeof(a));
	return st;
}

/* A new connection to the server, authenticated when configured. */
static int connect_fd(rpc_client *c, int timeout_ms, int64_t deadline,
		      char *err, size_t errlen)
{
	int st;

	c->fd = net_connect(c->host, c->port, timeout_ms, err, errlen);
	if (c->fd < 0)
		return RPC_E_UNAVAILABLE;
	if (c->cfg.tls && (st = tls_start(c, deadline, err, errlen)) != RPC_OK)
		return st;
	return c->cfg.cred ? handshake(c, deadline, err, errlen) : RPC_OK;
}

/* A TLS master judges the client's certificate once the handshake is
 * done and may then refuse the connection with one frame (request_id 0):
 * that frame, read here, is the call's answer (not a reconnection). */
static bool parting_notice(rpc_client *c, char *err, size_t errlen, int *st)
{
	McreplRpc__Envelope *env = NULL;
	bool got;

	got = recv_reply(c, net_now_ms() + 100, &env) == RPC_OK &&
	      env->request_id == 0 && env->status != MCREPL_RPC__CODE__OK;
	if (got) {
		set_err(err, errlen, env->error);
		*st = (int)env->status;
	}
	if (env)
		protobuf_c_message_free_unpacked(&env->base, NULL);
	drop(c);
	return got;
}

static int ensure_connected(rpc_client *c, int64_t deadline, char *err,
			    size_t errlen)
{
	int timeout = net_remaining_ms(deadline);
	int st;

	if (c->fd >= 0 && is_stale(c)) {
		if (c->ssl && parting_notice(c, err, errlen, &st))
			return st;
		drop(c);
	}
	if (c->fd >= 0)
		return RPC_OK;
	if (timeout < 0 || timeout > c->cfg.connect_timeout_ms)
		timeout = c->cfg.connect_timeout_ms;
	return connect_fd(c, timeout, deadline, err, errlen);
}

/* net_wait_fd as an RPC status. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	int rc = net_wait_fd(fd, events, deadline);

	if (rc == -ETIMEDOUT)
		return RPC_E_TIMEOUT;
	return rc < 0 ? RPC_E_UNAVAILABLE : RPC_OK;
}

/* Writes (out) or reads all len bytes of buf through the TLS session,
 * waiting for the socket as OpenSSL asks, until deadline. */
static int ssl_all(rpc_client *c, uint8_t *buf, size_t len, bool out,
		   int64_t deadline)
{
	size_t n;
	int rc, st;

	while (len > 0) {
		rc = out ? SSL_write_ex(c->ssl, buf, len, &n)
			 : SSL_read_ex(c->ssl, buf, len, &n);
		if (rc == 1) {
			buf += n;
			len -= n;
			continue;
		}
		st = ssl_wait(c, rc, deadline);
		if (st)
			return st;
	}
	return RPC_OK;
}

static int send_all(rpc_client *c, const uint8_t *buf, size_t len,
		    int64_t deadline)
{
	int fd = c->fd;
	ssize_t n;
	int st;

	if (c->ssl)
		return ssl_all(c, (uint8_t *)(uintptr_t)buf, len, true,
			       deadline);
	while (len > 0) {
		n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return RPC_E_UNAVAILABLE;
		st = wait_fd(fd, POLLOUT, deadline);
		if (st)
			return st;
	}
	return RPC_OK;
}

static int recv_all(rpc_client *c, uint8_t *buf, size_t len, int64_t deadline)
{
	int fd = c->fd;
	ssize_t n;
	int st;

	if (c->ssl)
		return ssl_all(c, buf, len, false, deadline);
	while (len > 0) {
		n = recv(fd, buf, len, 0);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return RPC_E_UNAVAILABLE;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return RPC_E_UNAVAILABLE;
		st = wait_fd(fd, POLLIN, deadline);
		if (st)
			return st;
	}
	return RPC_OK;
}

static int send_request(rpc_client *c, uint64_t id, uint32_t method,
			const ProtobufCMessage *req, int64_t deadline)
{
	rpc_frame_head head = {
	    .request_id = id, .method = method, .status = MCREPL_RPC__CODE__OK};
	uint8_t *frame;
	size_t len;
	int st;

	if (rpc_frame_encode_msg(&head, req, &frame, &len) != RPC_FRAME_OK)
		return RPC_E_NOMEM;
	if (len - RPC_FRAME_PREFIX_BYTES > c->cfg.max_frame_bytes)
		st = RPC_E_INVALID;
	else
		st = send_all(c, frame, len, deadline);
	free(frame);
	return st;
}

static int recv_reply(rpc_client *c, int64_t deadline,
		      McreplRpc__Envelope **env)
{
	uint8_t prefix[RPC_FRAME_PREFIX_BYTES], *frame;
	size_t total, used;
	int st;

	st = recv_all(c, prefix, sizeof(prefix), deadline);
	if (st)
		return st;
	if (rpc_frame_peek(prefix, sizeof(prefix), c->cfg.max_frame_bytes,
			   &total) != RPC_FRAME_OK)
		return c->ssl					? RPC_E_PROTOCOL
		       : prefix[0] == 0x15 && prefix[1] == 0x03 ? RPC_E_TLS_PEER
		       : rpc_frame_is_http(prefix, sizeof(prefix))
			   ? RPC_E_HTTP_PEER
			   : RPC_E_PROTOCOL;
	frame = malloc(total);
	if (!frame)
		return RPC_E_NOMEM;
	memcpy(frame, prefix, sizeof(prefix));
	st = recv_all(c, frame + sizeof(prefix), total - sizeof(prefix),
		      deadline);
	if (st == RPC_OK &&
	    rpc_frame_parse(frame, total, c->cfg.max_frame_bytes, env, &used) !=
		RPC_FRAME_OK)
		st = RPC_E_PROTOCOL;
	free(frame);
	return st;
}

/* Turns a reply envelope into the call's status and response. */
static int take_reply(rpc_client *c, const McreplRpc__Envelope *env,
		      uint64_t id, const ProtobufCMessageDescriptor *resp_desc,
		      ProtobufCMessage **resp_out, char *err, size_t errlen)
{
	if (env->request_id != id) {
		drop(c);
		if (env->status == MCREPL_RPC__CODE__OK) {
			set_err(err, errlen, "reply for another request");
			return RPC_E_PROTOCOL;
		}
	}
	if (env->status != MCREPL_RPC__CODE__OK) {
		set_err(err, errlen, env->error);
		return (int)env->status;
	}
	*resp_out = protobuf_c_message_unpack(resp_desc, NULL, env->body.len,
					      env->body.data);
	if (!*resp_out) {
		set_err(err, errlen, "reply body does not parse");
		return RPC_E_PROTOCOL;
	}
	return RPC_OK;
}

int rpc_call(rpc_client *client, uint32_t method, const ProtobufCMessage *req,
	     const ProtobufCMessageDescriptor *resp_desc,
	     ProtobufCMessage **resp_out, char *err, size_t errlen)
{
	int timeout = client->cfg.call_timeout_ms;
	int64_t deadline = timeout < 0 ? -1 : net_now_ms() + timeout;
	uint64_t id = ++client->next_id;
	McreplRpc__Envelope *env = NULL;
	int st;

	*resp_out = NULL;
	client->sent = false;
	set_err(err, errlen, "");
	st = ensure_connected(client, deadline, err, errlen);
	if (st)
		return st; /* err says why */
	st = send_request(client, id, method, req, deadline);
	if (st == RPC_OK) {
		client->sent = true;
		st = recv_reply(client, deadline, &env);
	}
	if (st) {
		drop(client);
		set_err(err, errlen, rpc_status_str(st));
		return st;
	}
	st = take_reply(client, env, id, resp_desc, resp_out, err, errlen);
	protobuf_c_message_free_unpacked(&env->base, NULL);
	return st;
}

bool rpc_call_sent(const rpc_client *client)
{
	return client && client->sent;
}

int rpc_client_open(rpc_client **out, const char *addr,
		    const rpc_client_config *cfg, char *err, size_t errlen)
{
	rpc_client *c;
	int st;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		set_err(err, errlen, "out of memory");
		return RPC_E_NOMEM;
	}
	if (cfg)
		c->cfg = *cfg;
	else
		rpc_client_config_init(&c->cfg);
	if (!c->cfg.max_frame_bytes)
		c->cfg.max_frame_bytes = RPC_FRAME_DEFAULT_MAX_BYTES;
	c->fd = -1;
	if (net_split_hostport(addr, c->host, sizeof(c->host), &c->port)) {
		snprintf(err, errlen, "bad address \"%s\" (want host:port)",
			 addr);
		free(c);
		return RPC_E_INVALID;
	}
	st = connect_fd(c, c->cfg.connect_timeout_ms,
			c->cfg.call_timeout_ms < 0
			    ? -1
			    : net_now_ms() + c->cfg.call_timeout_ms,
			err, errlen);
	if (st != RPC_OK) {
		free(c);
		return st;
	}
	*out = c;
	return RPC_OK;
}

const uint8_t *rpc_client_session_key(const rpc_client *client)
{
	if (client->fd < 0)
		return NULL;
	if (client->cfg.cred)
		return client->session;
	return client->ssl ? client->tls_key : NULL;
}

void rpc_client_close(rpc_client *client)
{
	if (!client)
		return;
	drop(client);
	free(client);
}
