/* Network namespaces for the history test (netns.h). */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cluster.h"
#include "netns.h"

static const char *const names[NS_N] = {"e", "m0", "m1", "w0", "w1", "w2", "c"};
static const char *const addrs[NS_N] = {
    "10.79.0.10", "10.79.0.1",	"10.79.0.2", "10.79.0.11",
    "10.79.0.12", "10.79.0.13", "10.79.0.20"};

const char *netns_addr(enum nshost h)
{
	return addrs[h];
}

/* Runs ip with the words of fmt (no shell); 0 when it exits 0. */
static int ip(const char *fmt, ...)
{
	char line[512], *argv[24], *save = NULL;
	size_t n = 0;
	va_list ap;
	pid_t pid;
	int st;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	argv[n++] = (char *)(uintptr_t) "ip";
	for (char *w = strtok_r(line, " ", &save); w && n < 23;
	     w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	argv[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, STDERR_FILENO);
		execvp("ip", argv);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int add_host(struct netns *n, int h)
{
	const char *p = n->prefix, *nm = names[h];
	char path[128];

	if (ip("netns add %s%s", p, nm) != 0)
		return -1;
	n->made[h] = true;
	if (ip("-n %shub link add v%s type veth peer name eth0 netns %s%s", p,
	       nm, p, nm) != 0 ||
	    ip("-n %shub link set v%s master br0 up", p, nm) != 0 ||
	    ip("-n %s%s addr add %s/24 dev eth0", p, nm, addrs[h]) != 0 ||
	    ip("-n %s%s link set eth0 up", p, nm) != 0 ||
	    ip("-n %s%s link set lo up", p, nm) != 0)
		return -1;
	snprintf(path, sizeof(path), "/var/run/netns/%s%s", p, nm);
	n->fd[h] = open(path, O_RDONLY | O_CLOEXEC);
	return n->fd[h] >= 0 ? 0 : -1;
}

int netns_setup(struct netns *n, char *why, size_t cap)
{
	memset(n, 0, sizeof(*n));
	for (int i = 0; i < NS_N; i++)
		n->fd[i] = -1;
	snprintf(n->prefix, sizeof(n->prefix), "h3h%d", (int)getpid());
	n->root_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (geteuid() != 0 || n->root_fd < 0) {
		snprintf(why, cap, "not root");
		return -1;
	}
	if (ip("netns add %shub", n->prefix) != 0) {
		snprintf(why, cap, "cannot create network namespaces");
		return -1;
	}
	n->made[NS_N] = true;
	if (ip("-n %shub link add br0 type bridge", n->prefix) != 0 ||
	    ip("-n %shub link set br0 up", n->prefix) != 0) {
		snprintf(why, cap, "cannot create a bridge");
		return -1;
	}
	for (int h = 0; h < NS_N; h++)
		if (add_host(n, h) != 0) {
			snprintf(why, cap, "cannot wire host %s", names[h]);
			return -1;
		}
	return 0;
}

void netns_teardown(struct netns *n)
{
	netns_etcd_stop(n);
	if (n->root_fd >= 0)
		setns(n->root_fd, CLONE_NEWNET);
	for (int h = 0; h < NS_N; h++) {
		if (n->fd[h] >= 0)
			close(n->fd[h]);
		if (n->made[h])
			ip("netns del %s%s", n->prefix, names[h]);
	}
	if (n->made[NS_N])
		ip("netns del %shub", n->prefix);
	if (n->root_fd >= 0)
		close(n->root_fd);
	memset(n->made, 0, sizeof(n->made));
}

int netns_enter(struct netns *n, enum nshost h)
{
	return setns(n->fd[h], CLONE_NEWNET) == 0 ? 0 : -1;
}

static pid_t spawn_etcd(struct netns *n, const char *bin)
{
	char data[300], curl[64], log[300];
	const char *purl = "http://127.0.0.1:2380";
	const char *argv[] = {bin,
			      "--name=h",
			      "--data-dir",
			      data,
			      "--listen-client-urls",
			      curl,
			      "--advertise-client-urls",
			      curl,
			      "--listen-peer-urls",
			      purl,
			      "--initial-advertise-peer-urls",
			      purl,
			      "--initial-cluster=h=http://127.0.0.1:2380",
			      "--initial-cluster-state=new",
			      "--heartbeat-interval=50",
			      "--election-timeout=500",
			      NULL};
	pid_t pid;

	snprintf(data, sizeof(data), "%s/data", n->etcd_dir);
	snprintf(log, sizeof(log), "%s/etcd.log", n->etcd_dir);
	snprintf(curl, sizeof(curl), "http://%s:2379", addrs[NS_ETCD]);
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

int netns_etcd_start(struct netns *n)
{
	const char *bin = etcd_proc_available();
	char body[1024];
	int back;

	if (!bin ||
	    harness_mkdtemp(n->etcd_dir, sizeof(n->etcd_dir), "etcd") != 0)
		return -1;
	if (netns_enter(n, NS_ETCD) != 0)
		return -1;
	n->etcd_pid = spawn_etcd(n, bin);
	back = netns_enter(n, NS_CLIENT);
	if (n->etcd_pid <= 0 || back != 0)
		return -1;
	for (int waited = 0; waited < 10000; waited += 50) {
		if (cluster_http_get(addrs[NS_ETCD], 2379, "/health", body,
				     sizeof(body)) == 0 &&
		    strstr(body, "\"health\":\"true\""))
			return 0;
		harness_sleep_ms(50);
	}
	return -1;
}

void netns_etcd_stop(struct netns *n)
{
	if (n->etcd_pid > 0) {
		kill(n->etcd_pid, SIGKILL);
		waitpid(n->etcd_pid, NULL, 0);
		n->etcd_pid = 0;
	}
	if (n->etcd_dir[0])
		harness_rmdtemp(n->etcd_dir, "etcd");
	n->etcd_dir[0] = '\0';
}

int netns_cut(struct netns *n, enum nshost a, enum nshost b, bool cut)
{
	const char *verb = cut ? "add" : "del";
	int ra = ip("-n %s%s route %s blackhole %s/32", n->prefix, names[a],
		    verb, addrs[b]);
	int rb = ip("-n %s%s route %s blackhole %s/32", n->prefix, names[b],
		    verb, addrs[a]);

	return ra == 0 && rb == 0 ? 0 : -1;
}

int netns_link(struct netns *n, enum nshost h, bool up)
{
	return ip("-n %s%s link set eth0 %s", n->prefix, names[h],
		  up ? "up" : "down");
}
