/* Process harness (see harness.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

void harness_sleep_ms(int ms)
{
	struct timespec ts = {.tv_sec = ms / 1000,
			      .tv_nsec = (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

const char *harness_bin(const char *name, char *buf, size_t cap)
{
	const char *dir = getenv("MCREPL_BIN_DIR");

	snprintf(buf, cap, "%s/%s", dir ? dir : "build/bin", name);
	return buf;
}

static int read_line(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t n = 0;

	while (n + 1 < cap) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&pfd, 1, timeout_ms) <= 0)
			return -1;
		r = read(fd, buf + n, 1);
		if (r <= 0)
			return -1;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 0;
}

/* In the child: stderr to $MCREPL_TEST_LOG_DIR/<program>.log, appended,
 * when the variable is set (make check does, for the daemon tests). */
static void log_stderr(const char *prog)
{
	const char *dir = getenv("MCREPL_TEST_LOG_DIR");
	const char *base = strrchr(prog, '/');
	char path[1024];
	int fd;

	if (!dir || !dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s.log", dir, base ? base + 1 : prog);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd < 0)
		return;
	dup2(fd, STDERR_FILENO);
	close(fd);
}

int proc_start(struct proc *p, char *const argv[], const char *ready_prefix,
	       int timeout_ms)
{
	int fds[2];

	memset(p, 0, sizeof(*p));
	p->pid = -1;
	if (pipe(fds) != 0)
		return -1;
	pid_t parent = getpid();

	p->pid = fork();
	if (p->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* the parent died before prctl */
			_exit(127);
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		log_stderr(argv[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	p->out_fd = fds[0];
	if (p->pid < 0)
		return -1;
	while (read_line(p->out_fd, p->ready, sizeof(p->ready), timeout_ms) ==
	       0) {
		if (strncmp(p->ready, ready_prefix, strlen(ready_prefix)) == 0)
			return 0;
	}
	proc_kill9(p);
	return -1;
}

static int wait_exit(pid_t pid, int timeout_ms)
{
	int status;

	for (int waited = 0; waited <= timeout_ms; waited += 10) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status)
						 : 128 + WTERMSIG(status);
		harness_sleep_ms(10);
	}
	return -1;
}

int proc_stop(struct proc *p)
{
	int rc;

	if (p->pid <= 0)
		return -1;
	kill(p->pid, SIGTERM);
	rc = wait_exit(p->pid, 3000);
	if (rc < 0) {
		kill(p->pid, SIGKILL);
		waitpid(p->pid, NULL, 0);
	}
	close(p->out_fd);
	p->pid = -1;
	return rc;
}

void proc_kill9(struct proc *p)
{
	if (p->pid <= 0)
		return;
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	close(p->out_fd);
	p->pid = -1;
}

uint64_t proc_field(const struct proc *p, const char *name)
{
	char pat[64];
	const char *at;

	snprintf(pat, sizeof(pat), "%s=", name);
	at = strstr(p->ready, pat);
	return at ? strtoull(at + strlen(pat), NULL, 10) : 0;
}

int harness_timeout_scale(void)
{
	const char *s = getenv("MCREPL_TEST_TIMEOUT_SCALE");
	long v = s ? strtol(s, NULL, 10) : 1;

	return v >= 1 && v <= 1000 ? (int)v : 1;
}

int harness_ready_ms(void)
{
	return HARNESS_READY_MS * harness_timeout_scale();
}

int master_start(struct proc *p, const char *const *flags)
{
	char bin[512];
	const char *argv[64];
	size_t n = 0;

	argv[n++] = harness_bin("mcrepl-master", bin, sizeof(bin));
	argv[n++] = "--rpc_address=127.0.0.1";
	argv[n++] = "--rpc_port=0";
	argv[n++] = "--metrics_port=0";
	for (size_t i = 0; flags && flags[i] && n < 62; i++)
		argv[n++] = flags[i];
	argv[n] = NULL;
	/* a bound on a hang only: the ready line comes in milliseconds, but
	 * a master under valgrind on a loaded machine may take seconds */
	return proc_start(p, (char *const *)(uintptr_t)argv,
			  "mcrepl-master ready", harness_ready_ms());
}

rpc_client *harness_client(uint16_t port)
{
	return harness_client_as(port, NULL);
}

static struct ssl_ctx_st *harness_tls_ctx;

void harness_set_tls(struct ssl_ctx_st *ctx)
{
	harness_tls_ctx = ctx;
}

struct ssl_ctx_st *harness_tls(void)
{
	return harness_tls_ctx;
}

int harness_make_certs(const char *dir)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && umask 077 && { "
		 "openssl ecparam -name prime256v1 -genkey -noout -out ca.key "
		 "&& openssl req -x509 -new -key ca.key -subj /CN=harness-ca "
		 "-days 1 -out ca.pem && "
		 "openssl ecparam -name prime256v1 -genkey -noout -out "
		 "server.key && "
		 "openssl req -new -key server.key -subj /CN=localhost -out "
		 "server.csr && "
		 "echo subjectAltName=IP:127.0.0.1,DNS:localhost > server.ext "
		 "&& openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key "
		 "-CAcreateserial -days 1 -extfile server.ext -out server.pem "
		 "&& chmod 644 ca.pem server.pem; } >/dev/null 2>&1",
		 dir);
	if (system(cmd) != 0) {
		fprintf(stderr,
			"harness: cannot make certificates in %s "
			"(openssl)\n",
			dir);
		return -1;
	}
	return 0;
}

void harness_remove_certs(const char *dir)
{
	static const char *const files[] = {
	    "ca.key",	  "ca.pem",	"ca.srl",    "server.key",
	    "server.csr", "server.ext", "server.pem"};
	char path[600];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
}

rpc_client *harness_client_as(uint16_t port, const struct auth_cred *cred)
{
	char addr[64], err[256];
	rpc_client_config cfg;
	rpc_client *c = NULL;

	rpc_client_config_init(&cfg);
	cfg.cred = cred;
	cfg.tls = harness_tls_ctx;
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", port);
	if (rpc_client_open(&c, addr, &cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "harness: %s\n", err);
		return NULL;
	}
	return c;
}

ProtobufCMessage *harness_call(rpc_client *c, const char *name,
			       const ProtobufCMessage *req, int *status)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;
	int m = rpc_method_index(d, name);
	ProtobufCMessage *resp = NULL;
	char err[256] = "";
	int st;

	if (m < 0)
		return NULL;
	st = rpc_call(c, (uint32_t)m, req, d->methods[m].output, &resp, err,
		      sizeof(err));
	if (status)
		*status = st;
	return st == 0 ? resp : NULL;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A connection to 127.0.0.1:port whose connect and writes give up after
 * ms; -1 on failure. */
static int http_connect(uint16_t port, int ms)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = ms / 1000,
			     .tv_usec = (ms % 1000) * 1000};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 &&
	    (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0 ||
	     connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* What fd sends until it closes (or an error), into buf[0, cap - 1),
 * NUL-terminated: 0, or -1 when deadline (mono_ms()) passes first. */
static int http_read_all(int fd, char *buf, size_t cap, int64_t deadline)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	size_t n = 0;
	ssize_t r = 1;

	while (n + 1 < cap && r > 0) {
		int64_t left = deadline - mono_ms();
		int ready = left > 0 ? poll(&pfd, 1, (int)left) : 0;

		if (ready == 0)
			return -1;
		if (ready < 0 && errno == EINTR)
			continue;
		r = ready < 0 ? -1 : read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			r = 1;
		else if (r > 0)
			n += (size_t)r;
	}
	buf[n] = '\0';
	return 0;
}

char *http_get(uint16_t port, const char *path)
{
	int64_t deadline = mono_ms() + HARNESS_HTTP_TIMEOUT_MS;
	int fd = http_connect(port, HARNESS_HTTP_TIMEOUT_MS);
	size_t cap = 1 << 20;
	char req[256], *buf = malloc(cap);
	ssize_t sent;
	int rc = -1;

	if (fd >= 0 && buf) {
		snprintf(req, sizeof(req),
			 "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
		/* a failed write: what the peer says, if anything, counts */
		sent = write(fd, req, strlen(req));
		(void)sent;
		rc = http_read_all(fd, buf, cap, deadline);
		if (rc != 0)
			fprintf(stderr,
				"harness: GET 127.0.0.1:%u%s: no answer "
				"within %d ms\n",
				port, path, HARNESS_HTTP_TIMEOUT_MS);
	}
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

long long metric_value(const char *page, const char *name)
{
	size_t len = strlen(name);

	for (const char *l = page; l && *l; l = strchr(l, '\n')) {
		if (*l == '\n')
			l++;
		if (strncmp(l, name, len) == 0 && l[len] == ' ')
			return strtoll(l + len + 1, NULL, 10);
	}
	return -1;
}

/* ---- authentication ---------------------------------------------------- */

static const char *const default_principals[] = {
    "worker worker hosts=* domains=* max_capacity=1T",
    "client admin tenants=* rights=read,write,remove,admin",
    NULL,
};

static int random_secret(char *out, size_t cap)
{
	uint8_t b[24];

	if (cap < 2 * sizeof(b) + 1 ||
	    getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -1;
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	return 0;
}

static int write_private(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t n = strlen(text);
	int rc;

	if (fd < 0)
		return -1;
	rc = write(fd, text, n) == (ssize_t)n ? 0 : -1;
	close(fd);
	return rc;
}

const char *harness_auth_secret_file(const struct harness_auth *a,
				     const char *name, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%s.secret", a->dir, name);
	return buf;
}

int harness_mkdtemp(char *dir, size_t cap, const char *what)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (!base || !base[0])
		base = "/tmp";
	n = snprintf(dir, cap, "%s/mcrepl-%s-XXXXXX", base, what);
	if (n < 0 || (size_t)n >= cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return mkdtemp(dir) ? 0 : -1;
}

void harness_rmdtemp(const char *dir, const char *what)
{
	const char *name = strrchr(dir, '/');
	char prefix[64], cmd[600];

	snprintf(prefix, sizeof(prefix), "mcrepl-%s-", what);
	if (!name || strncmp(name + 1, prefix, strlen(prefix)) != 0 ||
	    strchr(dir, '\'') || strlen(dir) > 500)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "harness: cannot remove %s\n", dir);
}

int harness_auth_setup(struct harness_auth *a, const char *const *lines)
{
	char text[8192] = "# throwaway auth file (tools/common/harness.c)\n";
	char path[380], line[512];
	size_t len = strlen(text);

	memset(a, 0, sizeof(*a));
	if (harness_mkdtemp(a->dir, sizeof(a->dir), "auth") != 0) {
		perror("harness: mkdtemp");
		return -1;
	}
	snprintf(a->file, sizeof(a->file), "%s/auth.conf", a->dir);
	if (!lines)
		lines = default_principals;
	for (; *lines && a->n < HARNESS_AUTH_MAX; lines++, a->n++) {
		char kind[16], name[65], *sec = a->secrets[a->n];

		if (sscanf(*lines, "%15s %64s", kind, name) != 2 ||
		    random_secret(sec, sizeof(a->secrets[0])))
			return -1;
		memcpy(a->names[a->n], name, sizeof(name));
		snprintf(line, sizeof(line), "%s secret=%s\n", *lines, sec);
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%s",
					line);
		snprintf(line, sizeof(line), "%s\n", sec);
		harness_auth_secret_file(a, name, path, sizeof(path));
		if (len >= sizeof(text) || write_private(path, line))
			return -1;
		snprintf(a->principal_flag[a->n], sizeof(a->principal_flag[0]),
			 "--principal=%s", name);
		snprintf(a->secret_flag[a->n], sizeof(a->secret_flag[0]),
			 "--secret_file=%s", path);
	}
	return write_private(a->file, text);
}

void harness_auth_cleanup(struct harness_auth *a)
{
	char path[400];

	if (!a->dir[0])
		return;
	for (size_t i = 0; i < a->n; i++)
		unlink(harness_auth_secret_file(a, a->names[i], path,
						sizeof(path)));
	unlink(a->file);
	rmdir(a->dir);
	a->dir[0] = '\0';
}
