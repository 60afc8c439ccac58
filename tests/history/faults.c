/* The faults of the history test (faults.h). */
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clients.h"
#include "faults.h"

static const char *const names[FAULT_KINDS] = {
    "leader_stop",     "worker_stop",	  "leader_kill", "cpu_burn",
    "leader_isolated", "leader_etcd_cut", "worker_cut"};

static int between(uint64_t *rng, int lo, int hi)
{
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return lo + (int)(*rng % (uint64_t)(hi - lo + 1));
}

static void note(const struct faults *f, const char *what, int who, int ms)
{
	char target[16] = "";

	if (who >= 0)
		snprintf(target, sizeof(target), " %s%d",
			 what[0] == 'w' ? "w" : "m", who);
	printf("fault t=%.3fs %s%s %dms\n",
	       (double)(hclient_now_ns() - f->t0) / 1e9, what, target, ms);
	fflush(stdout);
}

/* Stops process pid for ms, then lets it go on. */
static void pause_proc(pid_t pid, int ms)
{
	kill(pid, SIGSTOP);
	harness_sleep_ms(ms); /* the fault's length is the point */
	kill(pid, SIGCONT);
}

static void burn(void)
{
	volatile uint64_t x = 1;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;)
		x = x * 6364136223846793005ULL + 1;
}

/* Two spinning children for ms (the machine has two cores). */
static void cpu_burn(int ms)
{
	pid_t kid[2];

	for (int i = 0; i < 2; i++)
		if ((kid[i] = fork()) == 0)
			burn();
	harness_sleep_ms(ms);
	for (int i = 0; i < 2; i++)
		if (kid[i] > 0) {
			kill(kid[i], SIGKILL);
			waitpid(kid[i], NULL, 0);
		}
}

/* A partition for ms: the leader's link down, the leader cut from etcd,
 * or worker w cut from both masters. 0 or -1. */
static int partition(struct faults *f, int k, int leader, int w, int ms)
{
	struct netns *ns = f->c->ns;
	enum nshost m = (enum nshost)(NS_M0 + leader),
		    wh = (enum nshost)(NS_W0 + w);
	int rc;

	if (k == 4) {
		rc = netns_link(ns, m, false);
		harness_sleep_ms(ms);
		return netns_link(ns, m, true) == 0 ? rc : -1;
	}
	if (k == 5) {
		rc = netns_cut(ns, m, NS_ETCD, true);
		harness_sleep_ms(ms);
		return netns_cut(ns, m, NS_ETCD, false) == 0 ? rc : -1;
	}
	rc = netns_cut(ns, wh, NS_M0, true) | netns_cut(ns, wh, NS_M1, true);
	harness_sleep_ms(ms);
	return (netns_cut(ns, wh, NS_M0, false) |
		netns_cut(ns, wh, NS_M1, false)) == 0
		   ? rc
		   : -1;
}

/* One fault of kind k; -1 when the cluster has no leader afterwards. */
static int fault_once(struct faults *f, int k)
{
	struct cluster *c = f->c;
	int leader = cluster_leader(c, 20000), ms, w;

	if (leader < 0)
		return -1;
	if (k >= 4) {
		w = between(&f->rng, 0, CLUSTER_WORKERS - 1);
		ms = k == 6 ? between(&f->rng, 3000, 6000)
			    : between(&f->rng, 4000, 8000);
		note(f, names[k], k == 6 ? w : leader, ms);
		if (partition(f, k, leader, w, ms) != 0)
			printf("history: %s: ip failed\n", names[k]);
		f->count[k]++;
		return cluster_leader(c, 20000) < 0 ? -1 : 0;
	}
	switch (k) {
	case 0:
		note(f, names[k], leader, ms = between(&f->rng, 3000, 8000));
		pause_proc(c->m[leader].pid, ms);
		break;
	case 1:
		w = between(&f->rng, 0, CLUSTER_WORKERS - 1);
		note(f, names[k], w, ms = between(&f->rng, 2000, 5000));
		pause_proc(c->w[w].pid, ms);
		break;
	case 2:
		note(f, names[k], leader, 0);
		if (cluster_restart_master(c, leader) != 0)
			return -1;
		break;
	default:
		note(f, names[3], -1, 10000);
		cpu_burn(10000);
	}
	f->count[k]++;
	return cluster_leader(c, 20000) < 0 ? -1 : 0;
}

int faults_run(struct faults *f, int seconds)
{
	int64_t end = f->t0 + (int64_t)seconds * 1000000000LL;
	int kinds = f->c->ns ? FAULT_KINDS : 4;
	int k = between(&f->rng, 0, kinds - 1);

	for (;;) {
		int64_t left = (end - hclient_now_ns()) / 1000000;
		int gap = between(&f->rng, 5000, 10000);

		if (left <= 0)
			return 0;
		harness_sleep_ms(gap < left ? gap : (int)left);
		if (hclient_now_ns() >= end)
			return 0;
		if (fault_once(f, k) != 0) {
			printf("history: no leader within 20 s after %s\n",
			       names[k]);
			return -1;
		}
		k = (k + 1) % kinds;
	}
}
