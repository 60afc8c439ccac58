/* The history test's cluster (cluster.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cluster.h"

static char *mut(const char *s)
{
	return (char *)(uintptr_t)s;
}

/* The HA timers of tests/daemons/check_ha.c: a 3 s lease, a 1 s
 * recovery window, puts' grants 2 s. Read leases of 2 ms: with the
 * default 10 s, keys read hundreds of times a second could never be
 * removed (BUSY), and removes are half of what the test is about. */
static const char *host_addr(const struct cluster *c, enum nshost h)
{
	return c->ns ? netns_addr(h) : "127.0.0.1";
}

/* Into host h's namespace (nothing on loopback): 0 or -1. */
static int enter(struct cluster *c, enum nshost h)
{
	return c->ns ? netns_enter(c->ns, h) : 0;
}

static int start_master(struct cluster *c, int i)
{
	char addr[64];
	const char *flags[] = {addr,
			       c->ep_flag,
			       "--ha_lease_ttl_ms=3000",
			       "--ha_poll_ms=100",
			       "--ha_recovery_ms=1000",
			       "--client_ttl=4",
			       "--put_start_discard_timeout_sec=2",
			       "--default_kv_lease_ttl=2",
			       c->auth_flag,
			       NULL};

	int rc;

	snprintf(addr, sizeof(addr), "--rpc_address=%s",
		 host_addr(c, NS_M0 + i));
	if (enter(c, NS_M0 + i) != 0)
		return -1;
	rc = master_start(&c->m[i], flags);
	return enter(c, NS_CLIENT) == 0 ? rc : -1;
}

static int start_worker(struct cluster *c, int i)
{
	int rc;
	char bin[512], host[32], addr[64];
	char *argv[] = {bin,
			addr,
			mut("--segment_size=32M"),
			c->ep_flag,
			host,
			mut("--poll_interval_ms=20"),
			mut("--metrics_port=0"),
			c->auth.principal_flag[0],
			c->auth.secret_flag[0],
			NULL};

	harness_bin("mcrepl-worker", bin, sizeof(bin));
	snprintf(host, sizeof(host), "--host_id=hist-%c", 'a' + i);
	snprintf(addr, sizeof(addr), "--data_address=%s",
		 host_addr(c, NS_W0 + i));
	if (enter(c, NS_W0 + i) != 0)
		return -1;
	rc = proc_start(&c->w[i], argv, "mcrepl-worker ready", 20000);
	return enter(c, NS_CLIENT) == 0 ? rc : -1;
}

static int load_cred(struct cluster *c)
{
	char path[400], err[256];

	harness_auth_secret_file(&c->auth, "admin", path, sizeof(path));
	if (auth_cred_load("admin", path, &c->cred, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "history: %s\n", err);
	return -1;
}

/* etcd: a throw-away one on loopback, or in the namespaces. */
static int start_etcd(struct cluster *c)
{
	if (!c->ns) {
		if (etcd_proc_start(&c->etcd, 1) != 0)
			return -1;
		snprintf(c->endpoints, sizeof(c->endpoints), "%s",
			 c->etcd.endpoints);
	} else {
		if (netns_etcd_start(c->ns) != 0)
			return -1;
		snprintf(c->endpoints, sizeof(c->endpoints), "%s:2379",
			 netns_addr(NS_ETCD));
	}
	c->etcd_up = true;
	return 0;
}

int cluster_start(struct cluster *c)
{
	struct netns *ns = c->ns;

	memset(c, 0, sizeof(*c));
	c->ns = ns;
	for (int i = 0; i < CLUSTER_MASTERS; i++)
		c->m[i].pid = -1;
	for (int i = 0; i < CLUSTER_WORKERS; i++)
		c->w[i].pid = -1;
	if (harness_auth_setup(&c->auth, NULL) != 0)
		return -1;
	c->auth_up = true;
	if (load_cred(c) != 0 || start_etcd(c) != 0) {
		fprintf(stderr, "history: etcd did not start\n");
		return -1;
	}
	snprintf(c->ep_flag, sizeof(c->ep_flag), "--etcd_endpoints=%s",
		 c->endpoints);
	snprintf(c->auth_flag, sizeof(c->auth_flag), "--auth_file=%s",
		 c->auth.file);
	snprintf(c->addr, sizeof(c->addr), "etcd://%s", c->endpoints);
	if (start_master(c, 0) != 0 || cluster_leader(c, 20000) != 0 ||
	    start_master(c, 1) != 0) {
		fprintf(stderr, "history: a master did not start or lead\n");
		return -1;
	}
	for (int i = 0; i < CLUSTER_WORKERS; i++)
		if (start_worker(c, i) != 0) {
			fprintf(stderr, "history: worker %d did not start\n",
				i);
			return -1;
		}
	return 0;
}

void cluster_stop(struct cluster *c)
{
	for (int i = 0; i < CLUSTER_WORKERS; i++)
		if (c->w[i].pid > 0) {
			kill(c->w[i].pid, SIGCONT);
			proc_stop(&c->w[i]);
		}
	for (int i = 0; i < CLUSTER_MASTERS; i++)
		if (c->m[i].pid > 0) {
			kill(c->m[i].pid, SIGCONT);
			proc_stop(&c->m[i]);
		}
	if (c->etcd_up && c->ns)
		netns_etcd_stop(c->ns);
	else if (c->etcd_up)
		etcd_proc_stop(&c->etcd);
	if (c->auth_up)
		harness_auth_cleanup(&c->auth);
	c->etcd_up = c->auth_up = false;
}

int cluster_http_get(const char *addr, uint16_t port, const char *path,
		     char *buf, size_t cap)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons(port)};
	struct timeval tv = {.tv_sec = 1};
	char req[256];
	int fd, len;
	size_t n = 0;
	ssize_t r;

	len = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\n\r\n", path);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1 || len <= 0 ||
	    (size_t)len >= sizeof(req) || cap == 0)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    write(fd, req, (size_t)len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	while (n + 1 < cap && (r = read(fd, buf + n, cap - n - 1)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return 0;
}

static bool leads(struct cluster *c, int i)
{
	char h[4096];

	return c->m[i].pid > 0 &&
	       cluster_http_get(host_addr(c, NS_M0 + i),
				(uint16_t)proc_field(&c->m[i], "metrics_port"),
				"/health", h, sizeof(h)) == 0 &&
	       strstr(h, "\"role\":\"leader\"");
}

int cluster_leader(struct cluster *c, int timeout_ms)
{
	for (int waited = 0;; waited += 50) {
		for (int i = 0; i < CLUSTER_MASTERS; i++)
			if (leads(c, i))
				return i;
		if (waited >= timeout_ms)
			return -1;
		harness_sleep_ms(50);
	}
}

int cluster_restart_master(struct cluster *c, int i)
{
	proc_kill9(&c->m[i]);
	return start_master(c, i);
}
