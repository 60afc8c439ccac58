/*
 * bench_failover: master failover under read/write load (docs/HA.md).
 * A throw-away etcd (1 member), two mcrepl-masters with the default HA
 * settings, three mcrepl-workers following the leader in etcd, N objects
 * preloaded; then one reader and one writer (store clients on etcd://)
 * run while the leader is killed with SIGKILL. After the load, every
 * object acknowledged before the kill is read back through the new leader
 * and compared byte for byte.
 *
 *   failover_ms   kill -> the later of the first read and the first write
 *                 started after it and completed (through the new leader)
 *   objects_before acknowledged puts before the kill
 *   readable_after of them, read back with identical bytes
 *   wrong_bytes   bytes that differed in any read (load or check)
 *   failed_ops    load operations that returned an error
 *
 * With an auth file by default, as production runs (a worker principal,
 * a client principal "admin"; every connection authenticates); --no-auth
 * without.
 *
 * With --etcd3: a 3-member etcd instead; one etcd member is killed (no
 * master is), and the run must see no failover and no error. Last line:
 *   etcd_member_killed=1 failovers=<n> step_downs=<n> failed_ops=<f> ops=<n>
 *
 * --kills K kills the leader K times (each killed master restarted as a
 * standby, the next kill once a master serves again; failover_ms is the
 * worst); --busy N runs N busy loops for the whole load (the cores
 * saturated); --settle-ms T waits T ms after the load (61000: past the
 * orphans' release) and reads back every object ever acknowledged.
 *
 *   bench_failover [--objects N] [--bytes B] [--kills K] [--busy N]
 *                  [--settle-ms T] [--etcd3] [--no-auth]
 * Last line (default): failover_ms=<t> objects_before=<n>
 * readable_after=<r> wrong_bytes=<w> failed_ops=<f>, then with --kills
 * above 1 or --busy: kills=<k> busy=<n> step_downs=<s> (leaderships
 * given up without a kill), and with --settle-ms: acked=<a>
 * readable_after_settle=<r>. --strict: exit 1 unless every object read
 * back whole, every failover took at most 5 s and no leader stepped down
 * without a kill (make check-failover-load).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth.h"
#include "bench_flags.h"
#include "clock.h"
#include "etcd_proc.h"
#include "harness.h"
#include "store_client.h"

#define WORKERS 3
#define MAX_OBJ 100000

static struct {
	struct etcd_proc etcd;
	struct proc m[2], w[WORKERS];
	char ep_flag[300], ep_url[300];
	size_t bytes;
	/* objects: key "o<i>", bytes from fill(i); acked[i] = put returned
	 * 0, at acked_ms[i] */
	atomic_int n_obj;
	atomic_bool acked[MAX_OBJ];
	int64_t acked_ms[MAX_OBJ];
	atomic_bool stop;
	atomic_llong ops, failed, wrong_bytes;
	int64_t kill_ms;
	atomic_llong first_read_ms, first_write_ms; /* after the kill */
	bool auth;
	struct harness_auth af;
	struct auth_cred admin;
	char auth_flag[400];
} B;

static void fill(uint8_t *buf, size_t n, int i)
{
	uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ULL + 1;

	for (size_t k = 0; k < n; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[k] = (uint8_t)x;
	}
}

static store_client *client(void)
{
	struct store_client_config cfg;
	store_client *c = NULL;
	char err[256];

	store_client_config_init(&cfg);
	cfg.cred = B.auth ? &B.admin : NULL;
	if (store_client_open(&c, B.ep_url, NULL, &cfg, err, sizeof(err))) {
		fprintf(stderr, "bench_failover: %s\n", err);
		exit(1);
	}
	return c;
}

static int put(store_client *c, int i, uint8_t *buf)
{
	char key[32];

	snprintf(key, sizeof(key), "o%d", i);
	fill(buf, B.bytes, i);
	return store_client_put(c, key, buf, B.bytes);
}

/* Read object i; counts wrong bytes. 0, or the client's status. */
static int check(store_client *c, int i, uint8_t *want)
{
	char key[32];
	void *got = NULL;
	uint64_t len = 0;
	int st;

	snprintf(key, sizeof(key), "o%d", i);
	st = store_client_get(c, key, &got, &len, NULL);
	if (st == 0) {
		fill(want, B.bytes, i);
		if (len != B.bytes) {
			B.wrong_bytes += (long long)B.bytes;
			st = -1;
		} else {
			for (size_t k = 0; k < len; k++)
				B.wrong_bytes += ((uint8_t *)got)[k] != want[k];
		}
	}
	free(got);
	return st;
}

/* An operation started after the kill completed at done_ms. */
static void note_first(atomic_llong *first, int64_t start_ms, int64_t done_ms)
{
	long long zero = 0;

	if (B.kill_ms && start_ms > B.kill_ms)
		atomic_compare_exchange_strong(first, &zero, done_ms);
}

static void *writer(void *arg)
{
	store_client *c = client();
	uint8_t *buf = malloc(B.bytes);

	(void)arg;
	while (!B.stop && B.n_obj < MAX_OBJ) {
		int i = B.n_obj;
		int64_t t0 = net_now_ms();
		int st = put(c, i, buf);

		B.ops++;
		if (st) {
			B.failed++;
			fprintf(stderr,
				"bench_failover: put o%d (%lld ms): %s\n", i,
				(long long)(net_now_ms() - t0),
				store_client_error(c));
		} else {
			B.acked_ms[i] = net_now_ms();
			B.acked[i] = true;
			note_first(&B.first_write_ms, t0, B.acked_ms[i]);
		}
		B.n_obj = i + 1;
		harness_sleep_ms(2);
	}
	free(buf);
	store_client_close(c);
	return NULL;
}

static void *reader(void *arg)
{
	store_client *c = client();
	uint8_t *want = malloc(B.bytes);
	unsigned seed = 7;

	(void)arg;
	while (!B.stop) {
		int n = B.n_obj, i = n ? (int)(rand_r(&seed) % (unsigned)n) : 0;
		int64_t t0 = net_now_ms();
		int st;

		if (!n || !B.acked[i])
			continue;
		st = check(c, i, want);
		B.ops++;
		if (st) {
			B.failed++;
			fprintf(stderr, "bench_failover: get o%d: %s\n", i,
				store_client_error(c));
		} else {
			note_first(&B.first_read_ms, t0, net_now_ms());
		}
		harness_sleep_ms(1);
	}
	free(want);
	store_client_close(c);
	return NULL;
}

static int start_cluster(int members)
{
	const char *mflags[] = {B.ep_flag, B.auth ? B.auth_flag : NULL, NULL};
	char bin[512], host[32], *argv[8];

	if (etcd_proc_start(&B.etcd, members) != 0)
		return -1;
	snprintf(B.ep_flag, sizeof(B.ep_flag), "--etcd_endpoints=%s",
		 B.etcd.endpoints);
	snprintf(B.ep_url, sizeof(B.ep_url), "etcd://%s", B.etcd.endpoints);
	for (int i = 0; i < 2; i++) {
		if (master_start(&B.m[i], mflags) != 0)
			return -1;
		harness_sleep_ms(300); /* m[0] leads */
	}
	harness_bin("mcrepl-worker", bin, sizeof(bin));
	for (int i = 0; i < WORKERS; i++) {
		snprintf(host, sizeof(host), "--host_id=fo-%d", i);
		argv[0] = bin;
		argv[1] = B.ep_flag;
		argv[2] = host;
		argv[3] = (char *)(uintptr_t) "--segment_size=256M";
		argv[4] = (char *)(uintptr_t) "--transport=tcp";
		argv[5] = B.auth ? B.af.principal_flag[0] : NULL;
		argv[6] = B.af.secret_flag[0];
		argv[7] = NULL;
		if (proc_start(&B.w[i], argv, "mcrepl-worker ready", 10000))
			return -1;
	}
	return 0;
}

static void stop_cluster(void)
{
	for (int i = 0; i < WORKERS; i++)
		if (B.w[i].pid > 0)
			proc_stop(&B.w[i]);
	for (int i = 0; i < 2; i++)
		if (B.m[i].pid > 0)
			proc_stop(&B.m[i]);
	etcd_proc_stop(&B.etcd);
	if (B.auth)
		harness_auth_cleanup(&B.af);
}

/* The auth file (harness_auth_setup's principals) and admin's credential. */
static int setup_auth(void)
{
	char err[256];

	if (harness_auth_setup(&B.af, NULL) != 0)
		return -1;
	snprintf(B.auth_flag, sizeof(B.auth_flag), "--auth_file=%s", B.af.file);
	if (auth_cred_load("admin",
			   B.af.secret_flag[1] + strlen("--secret_file="),
			   &B.admin, err, sizeof(err)) != 0) {
		fprintf(stderr, "bench_failover: %s\n", err);
		return -1;
	}
	return 0;
}

static long long metric(int i, const char *name)
{
	char *page =
	    http_get((uint16_t)proc_field(&B.m[i], "metrics_port"), "/metrics");
	long long v = page ? metric_value(page, name) : -1;

	free(page);
	return v;
}

/* Master i's step downs, any reason (0 when it does not answer). */
static long long step_downs(int i)
{
	static const char *const reasons[] = {"lease_expired", "lease_gone",
					      "other_term"};
	char name[96];
	long long n = 0, v;

	for (size_t r = 0; r < sizeof(reasons) / sizeof(*reasons); r++) {
		snprintf(name, sizeof(name),
			 "mcrepl_master_ha_step_downs_total{reason=\"%s\"}",
			 reasons[r]);
		v = metric(i, name);
		n += v > 0 ? v : 0;
	}
	return n;
}

static void preload(int n)
{
	store_client *c = client();
	uint8_t *buf = malloc(B.bytes);

	for (int i = 0; i < n; i++) {
		if (put(c, i, buf) != 0) {
			fprintf(stderr, "bench_failover: preload: %s\n",
				store_client_error(c));
			exit(1);
		}
		B.acked[i] = true;
		B.n_obj = i + 1;
	}
	free(buf);
	store_client_close(c);
}

static int run_etcd3(int objects)
{
	pthread_t tw, tr;
	long long fo, sd;

	if (start_cluster(3) != 0)
		return 1;
	harness_sleep_ms(2500); /* past the recovery window */
	preload(objects);
	pthread_create(&tw, NULL, writer, NULL);
	pthread_create(&tr, NULL, reader, NULL);
	harness_sleep_ms(2000);
	etcd_proc_signal(&B.etcd, 0, SIGKILL); /* the first endpoint */
	harness_sleep_ms(6000);
	B.stop = true;
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	fo = metric(0, "mcrepl_master_ha_failovers_total") +
	     metric(1, "mcrepl_master_ha_failovers_total");
	sd = step_downs(0) + step_downs(1);
	stop_cluster();
	printf("etcd_member_killed=1 failovers=%lld step_downs=%lld "
	       "failed_ops=%lld ops=%lld\n",
	       fo, sd, (long long)B.failed, (long long)B.ops);
	return fo == 0 && sd == 0 && B.failed == 0 ? 0 : 1;
}

/* --busy: n processes that spin until killed (the cores saturated). */
static void busy_start(pid_t *pids, int n)
{
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			volatile unsigned long x = 0;

			for (;;)
				x++;
		}
	}
}

static void busy_stop(const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (pids[i] > 0) {
			kill(pids[i], SIGKILL);
			waitpid(pids[i], NULL, 0);
		}
}

/* The master that serves (its /metrics says mcrepl_master_ha_serving 1),
 * other than not, within 20 s; -1 if none. */
static int wait_serving(int not )
{
	for (int t = 0; t < 400; t++) {
		for (int i = 0; i < 2; i++)
			if (i != not &&B.m[i].pid > 0 &&
			    metric(i, "mcrepl_master_ha_serving") == 1)
				return i;
		harness_sleep_ms(50);
	}
	return -1;
}

/* Kill the leader, wait for the first read and write through the next
 * one, restart the killed master (a standby now): the failover's ms. */
static long long kill_leader(int leader)
{
	const char *mflags[] = {B.ep_flag, B.auth ? B.auth_flag : NULL, NULL};
	long long fr, fw;

	B.first_read_ms = 0;
	B.first_write_ms = 0;
	long long elected = -1;

	B.kill_ms = net_now_ms();
	proc_kill9(&B.m[leader]);
	for (int t = 0; t < 600 && (!B.first_read_ms || !B.first_write_ms);
	     t++) {
		if (elected < 0 &&
		    metric(1 - leader, "mcrepl_master_ha_serving") == 1)
			elected = net_now_ms() - B.kill_ms;
		harness_sleep_ms(50);
	}
	fr = B.first_read_ms ? B.first_read_ms - B.kill_ms : -1;
	fw = B.first_write_ms ? B.first_write_ms - B.kill_ms : -1;
	fprintf(stderr,
		"bench_failover: kill of master %d: the other serves after "
		"%lld ms, first read %lld ms, first write %lld ms\n",
		leader, elected, fr, fw);
	if (master_start(&B.m[leader], mflags) != 0)
		fprintf(stderr, "bench_failover: master %d did not restart\n",
			leader);
	return fr < 0 || fw < 0 ? -1 : (fr > fw ? fr : fw);
}

/* Every object acknowledged before `until` (all: 0), read back. */
static void verify(int64_t until, int *acked, int *readable)
{
	store_client *c = client();
	uint8_t *want = malloc(B.bytes);

	*acked = *readable = 0;
	for (int i = 0; i < B.n_obj; i++) {
		if (!B.acked[i] || (until && B.acked_ms[i] > until))
			continue;
		(*acked)++;
		if (check(c, i, want) == 0)
			(*readable)++;
		else
			fprintf(stderr, "bench_failover: lost o%d: %s\n", i,
				store_client_error(c));
	}
	free(want);
	store_client_close(c);
}

static int run_failover(int objects, int kills, int busy, int settle_ms,
			bool strict)
{
	pthread_t tw, tr;
	int before = 0, readable = 0, leader = 0, acked = 0, later = -1;
	long long worst = 0, flaps;
	pid_t pids[64] = {0};
	int64_t first_kill;

	if (start_cluster(1) != 0)
		return 1;
	harness_sleep_ms(2500); /* past the recovery window */
	preload(objects);
	busy_start(pids, busy);
	pthread_create(&tw, NULL, writer, NULL);
	pthread_create(&tr, NULL, reader, NULL);
	harness_sleep_ms(2000);
	first_kill = net_now_ms();
	for (int k = 0; k < kills; k++) {
		long long fo;

		leader = wait_serving(-1);
		if (leader < 0) {
			fprintf(stderr, "bench_failover: no leader serves\n");
			worst = -1;
			break;
		}
		fo = kill_leader(leader);
		if (fo < 0 || worst < 0)
			worst = -1;
		else if (fo > worst)
			worst = fo;
		harness_sleep_ms(1000);
	}
	harness_sleep_ms(1000);
	B.stop = true;
	pthread_join(tw, NULL);
	pthread_join(tr, NULL);
	busy_stop(pids, busy);
	verify(first_kill, &before, &readable);
	if (settle_ms > 0) { /* past the orphans' release */
		harness_sleep_ms(settle_ms);
		verify(0, &acked, &later);
	}
	leader = wait_serving(-1);
	/* leaderships given up without a kill, since each was started */
	flaps = step_downs(0) + step_downs(1);
	fprintf(
	    stderr,
	    "bench_failover: objects recovered %lld (%lld of them "
	    "orphans adopted); ops %lld; suspensions %lld, pauses %lld at "
	    "the last leader\n",
	    leader < 0
		? -1
		: metric(leader, "mcrepl_master_ha_objects_recovered_total"),
	    leader < 0
		? -1
		: metric(leader, "mcrepl_master_ha_orphans_adopted_total"),
	    (long long)B.ops,
	    leader < 0 ? -1
		       : metric(leader, "mcrepl_master_ha_suspensions_total"),
	    leader < 0 ? -1 : metric(leader, "mcrepl_master_ha_pauses_total"));
	stop_cluster();
	printf("failover_ms=%lld objects_before=%d readable_after=%d "
	       "wrong_bytes=%lld failed_ops=%lld",
	       worst, before, readable, (long long)B.wrong_bytes,
	       (long long)B.failed);
	if (kills > 1 || busy)
		printf(" kills=%d busy=%d step_downs=%lld", kills, busy, flaps);
	if (settle_ms > 0)
		printf(" acked=%d readable_after_settle=%d", acked, later);
	printf("\n");
	if (!strict)
		return 0;
	/* --strict: nothing lost or wrong, no flap, failover within 5 s */
	return readable == before && (!settle_ms || later == acked) &&
		       !B.wrong_bytes && worst >= 0 && worst <= 5000 &&
		       flaps == 0
		   ? 0
		   : 1;
}

struct failover_opts {
	int32_t objects, kills, busy, settle_ms;
	uint64_t bytes;
	bool etcd3, strict, no_auth;
};

#define O(f) FLAG_AT(struct failover_opts, f)
static const struct flag failover_flags[] = {
    {.name = "objects",
     .type = FLAG_I32,
     .off = O(objects),
     .def = "2000",
     .help = "objects put before the first kill",
     .min = 1,
     .max = MAX_OBJ / 2},
    {.name = "bytes",
     .type = FLAG_SIZE,
     .off = O(bytes),
     .def = "16384",
     .help = "bytes per object, K/M suffixes",
     .min = 1,
     .max = 64 << 20},
    {.name = "kills",
     .type = FLAG_I32,
     .off = O(kills),
     .def = "1",
     .help = "times the leader is killed",
     .min = 1,
     .max = 100},
    {.name = "busy",
     .type = FLAG_I32,
     .off = O(busy),
     .def = "0",
     .help = "busy loops for the whole load (0 = none)",
     .max = 64},
    {.name = "settle-ms",
     .type = FLAG_I32,
     .off = O(settle_ms),
     .def = "0",
     .help = "ms to wait past the load, then read every object again "
	     "(0 = no second read)",
     .max = 600000},
    {.name = "strict",
     .type = FLAG_BOOL,
     .off = O(strict),
     .def = "false",
     .help = "exit 1 on a lost or wrong object, a slow failover or a "
	     "step-down without a kill"},
    {.name = "etcd3",
     .type = FLAG_BOOL,
     .off = O(etcd3),
     .def = "false",
     .help = "a 3-member etcd losing one member instead"},
    {.name = "no-auth",
     .type = FLAG_BOOL,
     .off = O(no_auth),
     .def = "false",
     .help = "masters and workers without --auth_file"},
};
#undef O

static const struct flag_set failover_set = {
    .prog = "bench_failover",
    .intro = "master failover under read/write load: kill -9 the leader",
    .title = "bench_failover flags",
    .width = 9,
    .flags = failover_flags,
    .n = sizeof(failover_flags) / sizeof(failover_flags[0]),
};

int main(int argc, char **argv)
{
	struct failover_opts o = {0};
	int st = bench_flags(&failover_set, &o, argc, argv);

	if (st >= 0)
		return st;
	B.bytes = o.bytes;
	B.auth = !o.no_auth;
	if (!etcd_proc_available()) {
		fprintf(stderr, "bench_failover: no etcd binary (Debian: "
				"apt-get install etcd-server)\n");
		return 1;
	}
	if (B.auth && setup_auth() != 0)
		return 1;
	return o.etcd3 ? run_etcd3(o.objects)
		       : run_failover(o.objects, o.kills, o.busy, o.settle_ms,
				      o.strict);
}
