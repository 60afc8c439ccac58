/*
 * mcrepl-history: the linearizability history test of the HA store
 * (docs/HA.md "Checking it: the history test").
 *
 *   mcrepl-history [--seconds S] [--clients N] [--keys K] [--seed X]
 *                  [--partitions 0|1]
 *
 * Starts a throw-away etcd, two HA masters with an --auth_file and three
 * workers (cluster.h), each in a network namespace of its own when it
 * can (root, iproute2; --partitions 0: all on loopback); N clients (5) put, get and remove K keys (12)
 * while faults.h's faults come every 5-10 s for S seconds (90); then the
 * faults stop, a leader is awaited, the clients stop and one more reads
 * every key. Every key's history is checked (hist.h); a key that is not
 * linearizable gets a window of its history. The last line:
 *   history ops=<n> keys=<k> linearizable_keys=<a>/<k> stale=<s> lost=<l>
 *   phantom=<p> corrupt=<c>
 * Exit 0 when every key is linearizable, 1 otherwise (undecided too),
 * 2 when the cluster could not run. Without etcd: one line, exit 0.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "clients.h"
#include "cluster.h"
#include "faults.h"
#include "hist.h"

#define MAX_CLIENTS 16
#define OPS_PER_CLIENT 200000

struct opts {
	int seconds, clients, keys, partitions;
	uint64_t seed;
};

struct totals {
	size_t ops, good, undecided, stale, lost, phantom, corrupt;
	size_t out[3];
};

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){90, 5, 12, 1, 1};
	for (int i = 1; i + 1 < argc; i += 2) {
		long v = strtol(argv[i + 1], NULL, 10);

		if (strcmp(argv[i], "--seconds") == 0 && v > 0 && v <= 3600)
			o->seconds = (int)v;
		else if (strcmp(argv[i], "--clients") == 0 && v > 0 &&
			 v <= MAX_CLIENTS)
			o->clients = (int)v;
		else if (strcmp(argv[i], "--keys") == 0 && v > 0 && v <= 100)
			o->keys = (int)v;
		else if (strcmp(argv[i], "--partitions") == 0 &&
			 (v == 0 || v == 1))
			o->partitions = (int)v;
		else if (strcmp(argv[i], "--seed") == 0 && v > 0)
			o->seed = (uint64_t)v;
		else
			return -1;
	}
	return argc % 2 == 1 ? 0 : -1;
}

static int cmp_key(const void *a, const void *b)
{
	const struct hop *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static void check_one(struct hop *ops, size_t n, uint32_t key, int64_t t0,
		      struct totals *t)
{
	static const struct hist_budget b = {50000000, 4000000};
	struct hist_key_result r;

	if (hist_check_key(ops, n, &b, &r) != 0) {
		printf("history: key hist-k%02u: out of memory\n", key);
		t->undecided++;
		return;
	}
	t->stale += r.stale;
	t->lost += r.lost;
	t->phantom += r.phantom;
	t->corrupt += r.corrupt;
	if (r.verdict == HIST_LINEARIZABLE) {
		t->good++;
		return;
	}
	if (r.verdict == HIST_UNDECIDED) {
		printf("history: key hist-k%02u undecided after %llu steps "
		       "(%zu ops)\n",
		       key, (unsigned long long)r.steps, n);
		t->undecided++;
		return;
	}
	printf("history: key hist-k%02u NOT linearizable: %s (%zu ops, "
	       "stale=%zu lost=%zu phantom=%zu corrupt=%zu); around it:\n",
	       key, hist_class_name(r.cls), n, r.stale, r.lost, r.phantom,
	       r.corrupt);
	hist_print_window(stdout, ops, n, r.bad_op, t0, 24);
}

/* Checks every key of ops (all clients'), printing the summary. */
static bool check_all(struct hop *ops, size_t n, int keys, int64_t t0)
{
	struct totals t = {.ops = n};
	size_t i = 0;

	qsort(ops, n, sizeof(*ops), cmp_key);
	for (size_t j = 0; j < n; j++)
		t.out[ops[j].out]++;
	for (int k = 0; k < keys; k++) {
		size_t start = i;

		while (i < n && ops[i].key == (uint32_t)k)
			i++;
		check_one(ops + start, i - start, (uint32_t)k, t0, &t);
	}
	printf("history: ok=%zu fail=%zu unknown=%zu undecided_keys=%zu\n",
	       t.out[HOUT_OK], t.out[HOUT_FAIL], t.out[HOUT_UNKNOWN],
	       t.undecided);
	printf("history ops=%zu keys=%d linearizable_keys=%zu/%d stale=%zu "
	       "lost=%zu phantom=%zu corrupt=%zu\n",
	       t.ops, keys, t.good, keys, t.stale, t.lost, t.phantom,
	       t.corrupt);
	return t.good == (size_t)keys;
}

static FILE *open_log(void)
{
	const char *dir = getenv("MCREPL_TEST_LOG_DIR");
	char path[512];

	if (!dir || !dir[0])
		return NULL;
	snprintf(path, sizeof(path), "%s/ops.log", dir);
	return fopen(path, "w");
}

/* Every client's ops in one array (malloc'd): NULL when out of memory. */
static struct hop *gather(struct hclient *h, int n, size_t *total)
{
	struct hop *all;
	size_t at = 0;

	*total = 0;
	for (int i = 0; i < n; i++)
		*total += h[i].n;
	all = malloc((*total + 1) * sizeof(*all));
	for (int i = 0; all && i < n; i++) {
		memcpy(all + at, h[i].ops, h[i].n * sizeof(*all));
		at += h[i].n;
	}
	return all;
}

/* The clients under faults, then the final reads: 0 or -1. */
static int run(struct cluster *c, const struct opts *o, struct hclient *h,
	       int64_t t0)
{
	struct faults f = {.c = c, .t0 = t0, .rng = o->seed * 2654435761u};
	atomic_bool stop = false;
	int started = 0, rc;

	while (started < o->clients && hclient_start(&h[started], &stop) == 0)
		started++;
	rc = started == o->clients ? faults_run(&f, o->seconds) : -1;
	if (rc == 0 && cluster_leader(c, 20000) < 0)
		rc = -1;
	atomic_store(&stop, true);
	for (int i = 0; i < started; i++)
		hclient_join(&h[i]);
	printf("history: faults leader_stop=%u worker_stop=%u leader_kill=%u "
	       "cpu_burn=%u leader_isolated=%u leader_etcd_cut=%u "
	       "worker_cut=%u\n",
	       f.count[0], f.count[1], f.count[2], f.count[3], f.count[4],
	       f.count[5], f.count[6]);
	for (int k = 0; rc == 0 && k < o->keys; k++)
		hclient_op(&h[o->clients], HOP_GET, (uint32_t)k);
	return rc;
}

/* The namespaces for partitions, the caller in the clients' one; NULL
 * (with a line saying why) where they cannot be made. */
static struct netns *namespaces(struct netns *ns)
{
	char why[128];

	if (netns_setup(ns, why, sizeof(why)) == 0 &&
	    netns_enter(ns, NS_CLIENT) == 0)
		return ns;
	netns_teardown(ns);
	printf("history: partitions skipped: %s\n", why);
	return NULL;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct cluster c;
	struct netns ns;
	struct hclient h[MAX_CLIENTS + 1];
	struct hop *all = NULL;
	size_t n = 0;
	int opened = 0, rc = 2;
	int64_t t0;
	FILE *log;

	if (parse(argc, argv, &o) != 0) {
		fprintf(stderr, "usage: mcrepl-history [--seconds S] "
				"[--clients N] [--keys K] [--seed X] "
				"[--partitions 0|1]\n");
		return 2;
	}
	if (!etcd_proc_available()) {
		printf(
		    "history: skipped: no etcd binary (Debian: etcd-server)\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	log = open_log();
	c.ns = o.partitions ? namespaces(&ns) : NULL;
	if (cluster_start(&c) != 0)
		goto out;
	printf("history: clients=%d keys=%d seconds=%d seed=%llu\n", o.clients,
	       o.keys, o.seconds, (unsigned long long)o.seed);
	fflush(stdout);
	for (; opened <= o.clients; opened++)
		if (hclient_open(&h[opened], (uint32_t)opened, (uint32_t)o.keys,
				 c.addr, &c.cred, OPS_PER_CLIENT, log) != 0)
			goto out;
	t0 = hclient_now_ns();
	printf("history: t0=%lld ns (ops.log's clock; the times below are "
	       "from it)\n",
	       (long long)t0);
	if (run(&c, &o, h, t0) != 0)
		goto out;
	all = gather(h, opened, &n);
	if (all)
		rc = check_all(all, n, o.keys, t0) ? 0 : 1;
out:
	for (int i = 0; i < opened; i++)
		hclient_close(&h[i]);
	cluster_stop(&c);
	if (c.ns)
		netns_teardown(c.ns);
	free(all);
	if (log)
		fclose(log);
	return rc;
}
