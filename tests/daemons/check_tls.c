/*
 * TLS: a real mcrepl-master serving TLS (--tls_cert, --tls_key)
 * and, in the mutual cases, requiring client certificates (--tls_ca) with
 * an auth file whose principals w1, writer and reader are auth=cert and
 * alice has a secret. Certificates are made at test time (tlsfix.h). Each
 * test asserts the exact code, reason and message of a refusal and that
 * it came fast; the end-to-end test runs a real worker and mcrepl-cli.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "netutil.h"
#include "rpc_auth.h"
#include "rawsock.h"
#include "tls.h"
#include "tlsfix.h"
#include "wait.h"

Suite *make_tls_suite(void);

static struct tlsfix certs;

static struct {
	struct proc master, worker;
	uint16_t port, http;
	char auth_file[400], alice_secret_file[400];
	SSL_CTX *ctx[4];
	size_t nctx;
} fx;

static const char alice_secret[] = "alice-secret-0123456789abcdef";

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

static const char *cpath(const char *file)
{
	static char buf[8][400];
	static int next;

	next = (next + 1) % 8;
	return tlsfix_path(&certs, file, buf[next], sizeof(buf[0]));
}

static void make_certs(void)
{
	ck_assert_int_eq(tlsfix_make(&certs), 0);
}

static void drop_certs(void)
{
	tlsfix_cleanup(&certs);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, 0600), 0);
}

/* A master on TLS with server certificate `server`; mutual: with --tls_ca
 * and the auth file; extra flags (NULL-terminated, or NULL). */
static void start_master_with(const char *server, bool mutual,
			      const char *const *extra)
{
	char cert[420], key[420], ca[420], auth[420];
	const char *flags[16] = {cert, key};
	size_t n = 2;
	char text[1024];

	snprintf(cert, sizeof(cert), "--tls_cert=%s", cpath(server));
	snprintf(key, sizeof(key), "--tls_key=%s", cpath(server));
	memcpy(strrchr(cert, '.'), ".pem", 5);
	memcpy(strrchr(key, '.'), ".key", 5);
	if (mutual) {
		tlsfix_path(&certs, "auth.conf", fx.auth_file,
			    sizeof(fx.auth_file));
		snprintf(text, sizeof(text),
			 "worker w1 auth=cert hosts=* domains=* "
			 "max_capacity=1G\n"
			 "client writer auth=cert tenants=* "
			 "rights=read,write,remove,admin\n"
			 "client reader auth=cert tenants=* rights=read\n"
			 "client alice secret=%s tenants=* rights=read\n",
			 alice_secret);
		write_file(fx.auth_file, text);
		tlsfix_path(&certs, "alice.secret", fx.alice_secret_file,
			    sizeof(fx.alice_secret_file));
		snprintf(text, sizeof(text), "%s\n", alice_secret);
		write_file(fx.alice_secret_file, text);
		snprintf(ca, sizeof(ca), "--tls_ca=%s", cpath("ca.pem"));
		snprintf(auth, sizeof(auth), "--auth_file=%s", fx.auth_file);
		flags[n++] = ca;
		flags[n++] = auth;
		flags[n++] = "--rpc_address=127.0.0.1";
	}
	flags[n++] = "--rpc_frame_timeout_ms=400";
	for (; extra && *extra; extra++)
		flags[n++] = *extra;
	flags[n] = NULL;
	ck_assert_int_eq(master_start(&fx.master, flags), 0);
	fx.port = (uint16_t)proc_field(&fx.master, "rpc_port");
	fx.http = (uint16_t)proc_field(&fx.master, "metrics_port");
}

static void start_master(const char *server, bool mutual)
{
	start_master_with(server, mutual, NULL);
}

static void setup(void)
{
	memset(&fx, 0, sizeof(fx));
	fx.master.pid = -1;
	fx.worker.pid = -1;
}

static void teardown(void)
{
	for (size_t i = 0; i < fx.nctx; i++)
		SSL_CTX_free(fx.ctx[i]);
	if (fx.worker.pid > 0)
		proc_stop(&fx.worker);
	if (fx.master.pid > 0)
		ck_assert_int_eq(proc_stop(&fx.master), 0);
}

/* A client context: CA file, and the client certificate NAME (NULL =
 * none). */
static SSL_CTX *client_ctx(const char *ca, const char *name)
{
	char err[256], cert[64], key[64];
	SSL_CTX *ctx;

	snprintf(cert, sizeof(cert), "%s.pem", name ? name : "");
	snprintf(key, sizeof(key), "%s.key", name ? name : "");
	ctx = tls_client_ctx(cpath(ca), name ? cpath(cert) : NULL,
			     name ? cpath(key) : NULL, err, sizeof(err));
	ck_assert_msg(ctx != NULL, "%s", err);
	fx.ctx[fx.nctx++] = ctx;
	return ctx;
}

/* Opens host:port with ctx (NULL = plain) and cred; the status, err. */
static int open_client(const char *host, SSL_CTX *ctx,
		       const struct auth_cred *cred, rpc_client **out,
		       char *err, size_t errlen)
{
	rpc_client_config cfg;
	char addr[80];

	rpc_client_config_init(&cfg);
	cfg.tls = ctx;
	cfg.cred = cred;
	snprintf(addr, sizeof(addr), "%s:%u", host, fx.port);
	return rpc_client_open(out, addr, &cfg, err, errlen);
}

/* One Exist call on a client opened with ctx and cred: the status, the
 * error text in err, and how long it took. */
static int exist_as(SSL_CTX *ctx, const struct auth_cred *cred, char *err,
		    size_t errlen, int64_t *ms)
{
	McreplRpc__ExistRequest req;
	ProtobufCMessage *resp = NULL;
	int64_t t0 = net_now_ms();
	rpc_client *c = NULL;
	int st = open_client("127.0.0.1", ctx, cred, &c, err, errlen);

	if (st == RPC_OK) {
		mcrepl_rpc__exist_request__init(&req);
		req.key = mut("k");
		req.tenant = mut("default");
		st =
		    rpc_call(c,
			     (uint32_t)rpc_method_index(
				 &mcrepl_rpc__master__descriptor, "Exist"),
			     &req.base, &mcrepl_rpc__exist_response__descriptor,
			     &resp, err, errlen);
	}
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	rpc_client_close(c);
	*ms = net_now_ms() - t0;
	return st;
}

static long long metric(const char *name)
{
	char *page = tlsfix_https_get(fx.http, "/metrics", cpath("ca.pem"));
	long long v;

	ck_assert_ptr_nonnull(page);
	v = metric_value(page, name);
	free(page);
	return v;
}

static long long failures(const char *reason)
{
	char name[128];

	snprintf(name, sizeof(name),
		 "mcrepl_master_auth_failures_total{reason=\"%s\"}", reason);
	return metric(name);
}

static int cli(const char *args)
{
	char bin[512], cmd[4096];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "%s --master 127.0.0.1:%u --tls_ca %s %s >/dev/null 2>&1",
		 harness_bin("mcrepl-cli", bin, sizeof(bin)), fx.port,
		 cpath("ca.pem"), args);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(test_tls_end_to_end_worker_mounts_and_cli_puts_and_gets)
{
	char bin[512], master[80], cert[420], key[420], ca[420], args[2048];
	char in[400], *page;
	const char *argv[] = {harness_bin("mcrepl-worker", bin, sizeof(bin)),
			      master,
			      "--host_id=host-a",
			      "--segment_size=16M",
			      "--transport=tcp",
			      "--metrics_port=0",
			      "--principal=w1",
			      cert,
			      key,
			      ca,
			      NULL};

	start_master("server.pem", true);
	snprintf(master, sizeof(master), "--master=127.0.0.1:%u", fx.port);
	snprintf(cert, sizeof(cert), "--tls_cert=%s", cpath("w1.pem"));
	snprintf(key, sizeof(key), "--tls_key=%s", cpath("w1.key"));
	snprintf(ca, sizeof(ca), "--tls_ca=%s", cpath("ca.pem"));
	ck_assert_int_eq(proc_start(&fx.worker, (char *const *)(uintptr_t)argv,
				    "mcrepl-worker ready", test_hang_ms()),
			 0);
	WAIT_UNTIL(metric("mcrepl_master_segments") == 1);
	/* the worker's /metrics is HTTPS with its --tls_cert */
	page =
	    tlsfix_https_get((uint16_t)proc_field(&fx.worker, "metrics_port"),
			     "/metrics", cpath("ca.pem"));
	ck_assert_ptr_nonnull(page);
	ck_assert_msg(strncmp(page, "HTTP/1.1 200", 12) == 0, "%s", page);
	free(page);
	tlsfix_path(&certs, "in.txt", in, sizeof(in));
	write_file(in, "bytes over TLS\n");
	snprintf(args, sizeof(args),
		 "--principal writer --tls_cert %s --tls_key %s put k1 %s",
		 cpath("writer.pem"), cpath("writer.key"), in);
	ck_assert_int_eq(cli(args), 0);
	snprintf(args, sizeof(args),
		 "--principal reader --tls_cert %s --tls_key %s get k1 %s.out",
		 cpath("reader.pem"), cpath("reader.key"), in);
	ck_assert_int_eq(cli(args), 0);
	snprintf(args, sizeof(args), "cmp -s %s %s.out", in, in);
	ck_assert_int_eq(system(args), 0);
	/* the worker's grant secret came sealed with the TLS session key:
	 * the read above verified its grant */
	ck_assert_int_ge(metric("mcrepl_master_auth_handshakes_total"), 3);
}
END_TEST

START_TEST(test_tls_plaintext_client_to_tls_master_refused_fast)
{
	char err[256];
	int64_t ms;

	start_master("server.pem", false);
	ck_assert_int_eq(exist_as(NULL, NULL, err, sizeof(err), &ms),
			 MCREPL_RPC__CODE__BAD_REQUEST);
	ck_assert_str_eq(err, "this master serves TLS on its RPC port: "
			      "connect with --tls_ca");
	ck_assert_int_lt(ms, 1000);
	ck_assert_int_eq(failures("tls"), 1);
}
END_TEST

START_TEST(test_tls_client_to_plain_master_refused_fast)
{
	char err[256];
	int64_t ms;

	ck_assert_int_eq(master_start(&fx.master, NULL), 0);
	fx.port = (uint16_t)proc_field(&fx.master, "rpc_port");
	ck_assert_int_eq(
	    exist_as(client_ctx("ca.pem", NULL), NULL, err, sizeof(err), &ms),
	    RPC_E_UNAVAILABLE);
	ck_assert_msg(strstr(err, "TLS handshake failed: ") == err &&
			  strstr(err, "(does the master serve TLS? --tls_cert "
				      "on it)"),
		      "%s", err);
	ck_assert_int_lt(ms, 1000);
}
END_TEST

START_TEST(test_tls_server_cert_from_another_ca_refused)
{
	char err[256];
	int64_t ms;

	start_master("server-ca2.pem", false);
	ck_assert_int_eq(
	    exist_as(client_ctx("ca.pem", NULL), NULL, err, sizeof(err), &ms),
	    RPC_E_UNAVAILABLE);
	ck_assert_str_eq(err, "TLS: the master's certificate was refused: "
			      "unable to get local issuer certificate "
			      "(--tls_ca)");
}
END_TEST

START_TEST(test_tls_wrong_host_name_refused)
{
	char err[256];
	rpc_client *c = NULL;
	int64_t ms;

	start_master("server-other.pem", false);
	ck_assert_int_eq(
	    exist_as(client_ctx("ca.pem", NULL), NULL, err, sizeof(err), &ms),
	    RPC_E_UNAVAILABLE);
	ck_assert_str_eq(err, "TLS: the master's certificate was refused: IP "
			      "address mismatch (--tls_ca)");
	ck_assert_int_eq(
	    open_client("localhost", fx.ctx[0], NULL, &c, err, sizeof(err)),
	    RPC_E_UNAVAILABLE);
	ck_assert_str_eq(err, "TLS: the master's certificate was refused: "
			      "hostname mismatch (--tls_ca)");
}
END_TEST

/* Mutual TLS: the refusal of a connection, code, text and reason. */
static void assert_mtls_refused(const char *cert, const struct auth_cred *cred,
				int code, const char *text, const char *reason)
{
	char err[256];
	int64_t ms;

	ck_assert_int_eq(
	    exist_as(client_ctx("ca.pem", cert), cred, err, sizeof(err), &ms),
	    code);
	ck_assert_str_eq(err, text);
	ck_assert_int_lt(ms, 1000);
	ck_assert_int_eq(failures(reason), 1);
}

START_TEST(test_mtls_no_client_cert_refused)
{
	start_master("server.pem", true);
	assert_mtls_refused(NULL, NULL, MCREPL_RPC__CODE__UNAUTHENTICATED,
			    "this master requires a client certificate "
			    "(mutual TLS): connect with --tls_cert and "
			    "--tls_key",
			    "no_cert");
}
END_TEST

START_TEST(test_mtls_client_cert_from_another_ca_refused)
{
	start_master("server.pem", true);
	assert_mtls_refused("foreign", NULL, MCREPL_RPC__CODE__UNAUTHENTICATED,
			    "client certificate refused: unable to verify the "
			    "first certificate (it must chain to the master's "
			    "--tls_ca)",
			    "bad_cert");
}
END_TEST

START_TEST(test_mtls_cert_cn_naming_no_principal_refused)
{
	start_master("server.pem", true);
	assert_mtls_refused("nobody", NULL, MCREPL_RPC__CODE__UNAUTHENTICATED,
			    "client certificate CN 'nobody' names no principal",
			    "cert_unknown");
}
END_TEST

START_TEST(test_mtls_cert_principal_authorized_by_its_rights)
{
	McreplRpc__PutStartRequest ps;
	McreplRpc__PutStartResponse *r;
	rpc_client *c = NULL;
	char err[256];
	int st = -100;
	int64_t ms;

	start_master("server.pem", true);
	ck_assert_int_eq(exist_as(client_ctx("ca.pem", "reader"), NULL, err,
				  sizeof(err), &ms),
			 RPC_OK);
	ck_assert_int_eq(
	    open_client("127.0.0.1", fx.ctx[0], NULL, &c, err, sizeof(err)),
	    RPC_OK);
	mcrepl_rpc__put_start_request__init(&ps);
	ps.tenant = mut("default");
	ps.key = mut("k");
	ps.size = 4096;
	ps.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(c, "PutStart", &ps.base,
							&st);
	ck_assert_msg(r != NULL, "PutStart: %d", st);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__PERMISSION_DENIED);
	ck_assert_str_eq(r->result->reason, "auth_right");
	ck_assert_str_eq(r->result->message,
			 "principal 'reader' lacks the write right");
	protobuf_c_message_free_unpacked(&r->base, NULL);
	rpc_client_close(c);
	ck_assert_int_eq(metric("mcrepl_master_auth_handshakes_total"), 2);
}
END_TEST

START_TEST(test_mtls_secret_principal_cannot_use_its_cert_alone)
{
	start_master("server.pem", true);
	assert_mtls_refused("alice", NULL, MCREPL_RPC__CODE__UNAUTHENTICATED,
			    "principal 'alice' authenticates by secret, not "
			    "by its certificate: add --secret_file",
			    "secret_required");
}
END_TEST

START_TEST(test_mtls_secret_principal_with_cert_and_secret_accepted)
{
	struct auth_cred cred;
	char err[256];
	int64_t ms;

	start_master("server.pem", true);
	ck_assert_int_eq(auth_cred_load("alice", fx.alice_secret_file, &cred,
					err, sizeof(err)),
			 0);
	ck_assert_int_eq(exist_as(client_ctx("ca.pem", "alice"), &cred, err,
				  sizeof(err), &ms),
			 RPC_OK);
	/* with another principal's certificate: refused */
	assert_mtls_refused("reader", &cred, MCREPL_RPC__CODE__UNAUTHENTICATED,
			    "authentication refused: principal 'reader' "
			    "authenticates by its certificate (auth=cert), "
			    "not by a secret: drop "
			    "--secret_file",
			    "cert_required");
}
END_TEST

START_TEST(test_mtls_cert_principal_cannot_use_a_secret)
{
	struct auth_cred cred;

	start_master("server.pem", true);
	/* reader has no secret: any proof fails, whatever the cert */
	memset(&cred, 0, sizeof(cred));
	snprintf(cred.name, sizeof(cred.name), "reader");
	memcpy(cred.secret, alice_secret, sizeof(alice_secret) - 1);
	cred.secret_len = sizeof(alice_secret) - 1;
	assert_mtls_refused("alice", &cred, MCREPL_RPC__CODE__UNAUTHENTICATED,
			    "authentication refused: principal 'reader' is not "
			    "the one of the client certificate ('alice')",
			    "cert_mismatch");
}
END_TEST

START_TEST(test_tls_http_health_and_metrics_answer_plain_http_refused)
{
	char *page;

	start_master("server.pem", false);
	page = tlsfix_https_get(fx.http, "/health", cpath("ca.pem"));
	ck_assert_ptr_nonnull(page);
	ck_assert_msg(strncmp(page, "HTTP/1.1 200", 12) == 0, "%s", page);
	ck_assert_ptr_nonnull(strstr(page, "\"status\":\"ok\""));
	free(page);
	ck_assert_int_eq(metric("mcrepl_master_tls_enabled"), 1);
	/* plain HTTP: the handshake fails, the connection closes unread */
	page = http_get(fx.http, "/health");
	ck_assert_ptr_nonnull(page);
	ck_assert_str_eq(page, "");
	free(page);
}
END_TEST

START_TEST(test_tls_handshake_never_finished_closed_by_frame_timeout)
{
	char err[128], buf[64];
	int64_t t0;
	ssize_t n;
	int fd;

	start_master("server.pem", false);
	fd = net_connect("127.0.0.1", fx.port, 1000, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	net_set_nonblock(fd, 0);
	/* the first bytes of a ClientHello record, then nothing */
	ck_assert_int_eq(send(fd, "\x16\x03\x01\x02\x00", 5, MSG_NOSIGNAL), 5);
	t0 = net_now_ms();
	n = recv(fd, buf, sizeof(buf), 0);
	ck_assert_int_le(n, 0);
	ck_assert_int_ge(net_now_ms() - t0, 300);
	ck_assert_int_lt(net_now_ms() - t0, 3000);
	close(fd);
	ck_assert_int_eq(metric("mcrepl_master_rpc_frame_timeouts_total"), 1);
}
END_TEST

START_TEST(test_tls_http_caps_still_apply)
{
	static const char *const cap[] = {"--http_max_connections=1", NULL};
	char err[128];
	int fd, fds0;

	start_master_with("server.pem", false, cap);
	fds0 = fd_count(fx.master.pid);
	fd = net_connect("127.0.0.1", fx.http, 1000, err, sizeof(err));
	ck_assert_int_ge(fd, 0);
	/* admitted: the one connection allowed */
	WAIT_UNTIL(fd_count(fx.master.pid) == fds0 + 1);
	ck_assert_ptr_null(
	    tlsfix_https_get(fx.http, "/health", cpath("ca.pem")));
	close(fd);
	/* its place given back, /metrics is served again */
	WAIT_UNTIL(fd_count(fx.master.pid) == fds0);
	ck_assert_int_eq(
	    metric("mcrepl_master_http_refused_total{reason=\"cap\"}"), 1);
}
END_TEST

START_TEST(test_tls_connection_caps_still_apply)
{
	static const char *const cap[] = {"--rpc_max_connections_per_peer=1",
					  NULL};
	rpc_client *first = NULL;
	char err[256];
	int64_t ms;

	start_master_with("server.pem", false, cap);
	ck_assert_int_eq(open_client("127.0.0.1", client_ctx("ca.pem", NULL),
				     NULL, &first, err, sizeof(err)),
			 RPC_OK);
	ck_assert_int_eq(exist_as(fx.ctx[0], NULL, err, sizeof(err), &ms),
			 MCREPL_RPC__CODE__TOO_MANY);
	ck_assert_str_eq(err, "127.0.0.1: 1 connections from this address, "
			      "the limit (rpc_max_connections_per_peer)");
	ck_assert_int_lt(ms, 1000);
	rpc_client_close(first);
}
END_TEST

/* A program started with args exits want_rc, its last line on stderr
 * starting with want_prefix. */
static void start_fails(const char *prog, const char *args, int want_rc,
			const char *want_prefix)
{
	char bin[512], cmd[4096], line[512] = "", next[512], out[400];
	bool master = strcmp(prog, "mcrepl-master") == 0;
	FILE *f;
	int rc;

	tlsfix_path(&certs, "stderr.txt", out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "%s %s %s >/dev/null 2>%s",
		 harness_bin(prog, bin, sizeof(bin)),
		 master ? "--rpc_port=0 --metrics_port=0" : "", args, out);
	rc = system(cmd);
	ck_assert_int_eq(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, want_rc);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(next, sizeof(next), f)) /* the last line: the error */
		memcpy(line, next, sizeof(line));
	fclose(f);
	ck_assert_msg(strncmp(line, want_prefix, strlen(want_prefix)) == 0,
		      "got: %s\nwant: %s", line, want_prefix);
}

/* Bad TLS files, protected mode: the daemon stops with one line and
 * exits 78 (EX_CONFIG, which the shipped units do not restart; it exited
 * 1 and was restarted every 2 s); a client's usage error exits 2. */
START_TEST(test_tls_bad_files_stop_the_programs_with_one_line)
{
	char args[2048], want[1024], open_key[400], cmd[1024];

	snprintf(args, sizeof(args), "--tls_cert=%s --tls_key=%s",
		 cpath("server.pem"), cpath("writer.key"));
	snprintf(
	    want, sizeof(want),
	    "mcrepl-master: error: --tls_key %s: does not match the certificate "
	    "of --tls_cert (",
	    cpath("writer.key"));
	start_fails("mcrepl-master", args, 78, want);
	snprintf(args, sizeof(args), "--tls_cert=%s --tls_key=%s",
		 cpath("missing.pem"), cpath("server.key"));
	snprintf(
	    want, sizeof(want),
	    "mcrepl-master: error: --tls_cert %s: No such file or directory\n",
	    cpath("missing.pem"));
	start_fails("mcrepl-master", args, 78, want);
	tlsfix_path(&certs, "notakey.key", open_key, sizeof(open_key));
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 600 %s", cpath("ca.pem"),
		 open_key, open_key);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(args, sizeof(args), "--tls_cert=%s --tls_key=%s",
		 cpath("server.pem"), open_key);
	snprintf(want, sizeof(want),
		 "mcrepl-master: error: --tls_key %s: not a PEM private key (",
		 open_key);
	start_fails("mcrepl-master", args, 78, want);
	snprintf(args, sizeof(args), "--tls_ca=%s", cpath("ca.pem"));
	start_fails(
	    "mcrepl-master", args, 78,
	    "mcrepl-master: error: --tls_ca needs --tls_cert and --tls_key "
	    "(mutual TLS on the RPC port)\n");
	snprintf(args, sizeof(args), "--tls_cert=%s", cpath("server.pem"));
	start_fails("mcrepl-master", args, 78,
		    "mcrepl-master: error: --tls_cert needs --tls_key\n");
	/* a key others may read */
	tlsfix_path(&certs, "open.key", open_key, sizeof(open_key));
	snprintf(cmd, sizeof(cmd), "cp %s %s && chmod 644 %s",
		 cpath("server.key"), open_key, open_key);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(args, sizeof(args), "--tls_cert=%s --tls_key=%s",
		 cpath("server.pem"), open_key);
	snprintf(
	    want, sizeof(want),
	    "mcrepl-master: error: --tls_key: %s holds secrets but others may "
	    "access it (mode 0644): chmod 600 %s\n",
	    open_key, open_key);
	start_fails("mcrepl-master", args, 78, want);
	/* protected mode, either daemon: a configuration no restart fixes */
	start_fails("mcrepl-master", "--rpc_address=0.0.0.0", 78,
		    "mcrepl-master: error: protected mode: --rpc_address "
		    "0.0.0.0 is not a loopback address and there is no "
		    "--auth_file, ");
	start_fails("mcrepl-worker",
		    "--data_address=0.0.0.0 --master=127.0.0.1:1", 78,
		    "mcrepl-worker: error: protected mode: --data_address "
		    "0.0.0.0 is not a loopback address and there is no "
		    "--principal, ");
	/* clients */
	snprintf(args, sizeof(args), "--tls_cert %s --tls_key %s segments",
		 cpath("writer.pem"), cpath("writer.key"));
	start_fails("mcrepl-cli", args, 2,
		    "mcrepl-cli: --tls_cert needs --tls_ca (TLS to the master, "
		    "whose certificate must be verified)\n");
	snprintf(args, sizeof(args),
		 "--principal reader --tls_ca %s --tls_cert %s --tls_key %s "
		 "segments",
		 cpath("ca.pem"), cpath("writer.pem"), cpath("writer.key"));
	start_fails("mcrepl-cli", args, 2,
		    "mcrepl-cli: --principal reader: the CN of --tls_cert is "
		    "'writer', not the principal\n");
	snprintf(args, sizeof(args), "--principal reader --tls_ca %s segments",
		 cpath("ca.pem"));
	start_fails("mcrepl-cli", args, 2,
		    "mcrepl-cli: --principal reader needs --secret_file, or "
		    "--tls_cert, --tls_key and --tls_ca to authenticate by "
		    "certificate\n");
}
END_TEST

Suite *make_tls_suite(void)
{
	Suite *s = suite_create("tls");
	TCase *tc = tcase_create("tls");

	tcase_add_unchecked_fixture(tc, make_certs, drop_certs);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc,
		       test_tls_end_to_end_worker_mounts_and_cli_puts_and_gets);
	tcase_add_test(tc,
		       test_tls_plaintext_client_to_tls_master_refused_fast);
	tcase_add_test(tc, test_tls_client_to_plain_master_refused_fast);
	tcase_add_test(tc, test_tls_server_cert_from_another_ca_refused);
	tcase_add_test(tc, test_tls_wrong_host_name_refused);
	tcase_add_test(tc, test_mtls_no_client_cert_refused);
	tcase_add_test(tc, test_mtls_client_cert_from_another_ca_refused);
	tcase_add_test(tc, test_mtls_cert_cn_naming_no_principal_refused);
	tcase_add_test(tc, test_mtls_cert_principal_authorized_by_its_rights);
	tcase_add_test(tc,
		       test_mtls_secret_principal_cannot_use_its_cert_alone);
	tcase_add_test(
	    tc, test_mtls_secret_principal_with_cert_and_secret_accepted);
	tcase_add_test(tc, test_mtls_cert_principal_cannot_use_a_secret);
	tcase_add_test(
	    tc, test_tls_http_health_and_metrics_answer_plain_http_refused);
	tcase_add_test(
	    tc, test_tls_handshake_never_finished_closed_by_frame_timeout);
	tcase_add_test(tc, test_tls_connection_caps_still_apply);
	tcase_add_test(tc, test_tls_http_caps_still_apply);
	tcase_add_test(tc, test_tls_bad_files_stop_the_programs_with_one_line);
	suite_add_tcase(s, tc);
	return s;
}
