/* A throw-away etcd (see etcd_proc.h). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "etcd_proc.h"
#include "harness.h"

static char etcd_path[512];

const char *etcd_proc_available(void)
{
	const char *env = getenv("MCREPL_ETCD"), *path = getenv("PATH");
	char dir[4096];

	if (env && env[0])
		return access(env, X_OK) == 0 ? env : NULL;
	snprintf(dir, sizeof(dir), "%s", path ? path : "/usr/bin:/bin");
	for (char *save = NULL, *d = strtok_r(dir, ":", &save); d;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(etcd_path, sizeof(etcd_path), "%s/etcd", d);
		if (access(etcd_path, X_OK) == 0)
			return etcd_path;
	}
	return NULL;
}

/* A loopback port free right now (the kernel picks it). */
static uint16_t free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	uint16_t port = 0;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static pid_t spawn(const struct etcd_proc *e, int i, const char *bin,
		   const char *cluster)
{
	char name[16], data[300], curl[64], purl[64], log[300];
	const char *argv[24];
	size_t n = 0;
	pid_t pid;

	snprintf(name, sizeof(name), "m%d", i);
	snprintf(data, sizeof(data), "%s/%s", e->dir, name);
	snprintf(curl, sizeof(curl), "http://127.0.0.1:%u", e->client_port[i]);
	snprintf(purl, sizeof(purl), "http://127.0.0.1:%u", e->peer_port[i]);
	snprintf(log, sizeof(log), "%s/%s.log", e->dir, name);
	argv[n++] = bin;
	argv[n++] = "--name";
	argv[n++] = name;
	argv[n++] = "--data-dir";
	argv[n++] = data;
	argv[n++] = "--listen-client-urls";
	argv[n++] = curl;
	argv[n++] = "--advertise-client-urls";
	argv[n++] = curl;
	argv[n++] = "--listen-peer-urls";
	argv[n++] = purl;
	argv[n++] = "--initial-advertise-peer-urls";
	argv[n++] = purl;
	argv[n++] = "--initial-cluster";
	argv[n++] = cluster;
	argv[n++] = "--initial-cluster-state=new";
	argv[n++] = "--heartbeat-interval=50";
	argv[n++] = "--election-timeout=500";
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	return pid;
}

static bool healthy(uint16_t port)
{
	char *body = http_get(port, "/health");
	bool ok = body && strstr(body, "\"health\":\"true\"");

	free(body);
	return ok;
}

int etcd_proc_start(struct etcd_proc *e, int members)
{
	const char *bin = etcd_proc_available();
	char cluster[512] = "";
	size_t len = 0;

	memset(e, 0, sizeof(*e));
	if (!bin || members < 1 || members > ETCD_PROC_MAX)
		return -1;
	if (harness_mkdtemp(e->dir, sizeof(e->dir), "etcd") != 0)
		return -1;
	e->n = members;
	for (int i = 0; i < members; i++) {
		e->client_port[i] = free_port();
		e->peer_port[i] = free_port();
		len += (size_t)snprintf(cluster + len, sizeof(cluster) - len,
					"%sm%d=http://127.0.0.1:%u",
					i ? "," : "", i, e->peer_port[i]);
		snprintf(e->endpoints + strlen(e->endpoints),
			 sizeof(e->endpoints) - strlen(e->endpoints),
			 "%s127.0.0.1:%u", i ? "," : "", e->client_port[i]);
	}
	for (int i = 0; i < members; i++)
		e->pid[i] = spawn(e, i, bin, cluster);
	for (int t = 0; t < 200; t++) {
		int ok = 0;

		for (int i = 0; i < members; i++)
			ok += healthy(e->client_port[i]);
		if (ok == members)
			return 0;
		harness_sleep_ms(50);
	}
	fprintf(stderr, "etcd_proc: not healthy after 10 s (logs in %s)\n",
		e->dir);
	etcd_proc_stop(e);
	return -1;
}

void etcd_proc_signal(struct etcd_proc *e, int i, int sig)
{
	if (i >= 0 && i < e->n && e->pid[i] > 0)
		kill(e->pid[i], sig);
}

void etcd_proc_stop(struct etcd_proc *e)
{
	for (int i = 0; i < e->n; i++) {
		if (e->pid[i] <= 0)
			continue;
		kill(e->pid[i], SIGKILL);
		waitpid(e->pid[i], NULL, 0);
		e->pid[i] = 0;
	}
	if (e->dir[0])
		harness_rmdtemp(e->dir, "etcd");
	e->dir[0] = '\0';
}
