/*
 * bench_stress (make stress): one real mcrepl-master holding
 * --keys objects, a well-behaved client calling GetReplicaList on one
 * connection, first alone (unloaded), then while attacker processes hold
 * idle connections, slowloris and partial 16 MiB frames, storm the
 * connection cap, flood the HTTP port with headers and send 4,000-byte
 * keys; new workers mount meanwhile. Attackers are child processes (each
 * has its own fd table) bound to their own 127.x addresses (the master
 * caps connections per address); every loop is bounded in time.
 *
 *   bench_stress [--keys N] [--idle N] [--seconds S] [--only a,b]
 *                [--pin 0|1]
 *
 * --pin 1 (with 2 or more CPUs): the master gets CPU 0 to itself; this
 * process (the probe), the attackers and the workers run on the others,
 * as if they were other hosts. --pin 0 (the default, the layout of the
 * figures in BENCHMARKS.md): everything shares every core, the attackers
 * niced.
 *
 * Prints what each attacker did, the client's p99 unloaded and under
 * attack, master RSS growth (peak VmRSS under attack less VmRSS once
 * loaded), master stderr bytes, worker mount times; last line:
 * stress_p99_ms=<x> unloaded_p99_ms=<y> rss_growth_mb=<z> stderr_kb=<k>
 * mount_ms=<m>
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "preload.h"
#include "bench_flags.h"
#include "bytes.h"
#include "clock.h"
#include "frame.h"
#include "harness.h"

#define SLOWLORIS 200
#define PARTIAL 48
#define STORM 2000
#define HTTP_FLOOD_BYTES (256ull << 20)
#define LONG_KEY 4000
#define PER_ADDR 1000 /* idle connections per source address */
#define WORKERS 3
#define HTTP_HOLD 150 /* HTTP connections held, HTTP_HOLD_PER per address */
#define HTTP_HOLD_PER 10

static volatile sig_atomic_t stopping;
static uint16_t rpc_port, http_port;
static double attack_end; /* net_now_s() */
static int idle_part;	  /* which idle attacker a child is: its addresses */

/* ---- loading the master ----------------------------------------------- */

/* ---- measuring -------------------------------------------------------- */

static long rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct probe {
	rpc_client *c;
	uint64_t keys;
	double seconds, start;
	double *lat, *at; /* latency (ms) and start time of each call */
	size_t n, cap;
	uint64_t errors;
};

/* Sequential GetReplicaList calls for p->seconds; latencies in ms. */
static void *probe_main(void *arg)
{
	struct probe *p = arg;
	McreplRpc__GetReplicaListRequest g;
	uint64_t rng = 7;
	double end = net_now_s() + p->seconds;
	char key[32];
	int st;

	mcrepl_rpc__get_replica_list_request__init(&g);
	g.tenant = (char *)(uintptr_t) "";
	g.key = key;
	p->n = 0;
	p->start = net_now_s();
	while (net_now_s() < end && p->n < p->cap) {
		double t0 = net_now_s();
		ProtobufCMessage *r;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		snprintf(key, sizeof(key), "key-%llu",
			 (unsigned long long)((rng >> 33) % p->keys));
		r = harness_call(p->c, "GetReplicaList", &g.base, &st);
		if (!r) {
			p->errors++;
			continue;
		}
		protobuf_c_message_free_unpacked(r, NULL);
		p->at[p->n] = t0 - p->start;
		p->lat[p->n++] = (net_now_s() - t0) * 1e3;
		usleep(200); /* a client, not a flood: ~3-4 k calls/s */
	}
	return NULL;
}

/* p99 per window of w seconds, on one line (before p99() sorts); returns
 * the worst. */
static double p99_timeline(const struct probe *p, double w)
{
	double *v = malloc(p->n * sizeof(double)), worst = 0;
	size_t i = 0;

	printf("p99 ms per %.0f s:", w);
	while (i < p->n) {
		size_t n = 0, first = i;

		while (i < p->n && p->at[i] < p->at[first] + w)
			v[n++] = p->lat[i++];
		qsort(v, n, sizeof(double), cmp);
		printf(" %.2f", v[(size_t)((double)n * 0.99)]);
		if (v[(size_t)((double)n * 0.99)] > worst)
			worst = v[(size_t)((double)n * 0.99)];
	}
	printf("\n");
	free(v);
	return worst;
}

/* Open fds of pid (its connections, mostly). */
static int fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static double p99(struct probe *p)
{
	if (!p->n)
		return -1;
	qsort(p->lat, p->n, sizeof(double), cmp);
	return p->lat[(size_t)((double)p->n * 0.99)];
}

/* ---- attackers (child processes) -------------------------------------- */

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

/* A non-blocking socket from src connecting to 127.0.0.1:port; -1 when
 * out of fds or the bind fails. */
static int dial(const char *src, uint16_t port)
{
	struct sockaddr_in sa = {0}, me = {0};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0)
		return -1;
	/* the port is chosen at connect(), per destination: more than the
	 * ephemeral range's worth of sockets across source addresses */
	(void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			 sizeof(one));
	me.sin_family = AF_INET;
	inet_pton(AF_INET, src, &me.sin_addr);
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) != 0) {
		close(fd);
		return -1;
	}
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Closed by the peer (EOF or error) without blocking; drains input. */
static bool peer_closed(int fd)
{
	char b[4096];
	ssize_t n;

	while ((n = recv(fd, b, sizeof(b), MSG_DONTWAIT)) > 0)
		;
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void nap_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* How many of fd[0, n) finish connecting within a second. */
static int wait_connected(const int *fd, int n)
{
	int ok = 0;

	for (int i = 0; i < n; i++) {
		struct pollfd p = {fd[i], POLLOUT, 0};
		int err = 0;
		socklen_t len = sizeof(err);

		if (poll(&p, 1, 1000) == 1 &&
		    getsockopt(fd[i], SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
		    err == 0)
			ok++;
	}
	return ok;
}

/* Holds n idle connections (PER_ADDR per 127.0.1x.y address). */
static void attack_idle(int n)
{
	int *fd = calloc((size_t)n, sizeof(int)), held = 0, closed = 0;
	int established = 0, last_err = 0;
	char src[32];

	for (int i = 0; i < n && !stopping; i++) {
		snprintf(src, sizeof(src), "127.0.%d.%d", 10 + idle_part,
			 1 + i / PER_ADDR);
		fd[held] = dial(src, rpc_port);
		if (fd[held] >= 0)
			held++;
		else
			last_err = errno;
		if (held % 100 == 0 && held) /* within the accept backlog */
			established += wait_connected(fd + held - 100, 100);
	}
	while (!stopping && net_now_s() < attack_end)
		nap_ms(100);
	for (int i = 0; i < held; i++) {
		closed += peer_closed(fd[i]);
		close(fd[i]);
	}
	printf("idle: held %d connections, %d established at once (%d "
	       "closed by the master)%s%s\n",
	       held, established, closed, last_err ? "; dial: " : "",
	       last_err ? strerror(last_err) : "");
	free(fd);
}

/* Slowloris (a byte a second of a 1 KiB frame) and partial 16 MiB frames
 * (as much as the socket takes); reconnects what the master closes. */
static void attack_slow(void)
{
	static uint8_t junk[1 << 16];
	int slow[SLOWLORIS], part[PARTIAL];
	uint64_t closes = 0, sent = 0;

	for (int i = 0; i < SLOWLORIS; i++)
		slow[i] = -1;
	for (int i = 0; i < PARTIAL; i++)
		part[i] = -1;
	while (!stopping && net_now_s() < attack_end) {
		for (int i = 0; i < SLOWLORIS; i++) {
			if (slow[i] >= 0 && peer_closed(slow[i])) {
				close(slow[i]);
				slow[i] = -1;
				closes++;
			}
			if (slow[i] < 0) {
				slow[i] = dial("127.0.2.1", rpc_port);
				nap_ms(1);
				put_be32(junk, 1024);
			}
			if (slow[i] >= 0)
				(void)!send(slow[i], junk, 1,
					    MSG_NOSIGNAL | MSG_DONTWAIT);
		}
		for (int i = 0; i < PARTIAL; i++) {
			ssize_t n;

			if (part[i] >= 0 && peer_closed(part[i])) {
				close(part[i]);
				part[i] = -1;
				closes++;
			}
			if (part[i] < 0) {
				part[i] = dial("127.0.2.2", rpc_port);
				nap_ms(1);
				put_be32(junk, 16u << 20);
				if (part[i] >= 0)
					(void)!send(part[i], junk, 4,
						    MSG_NOSIGNAL);
			}
			n = part[i] < 0 ? 0
					: send(part[i], junk, sizeof(junk),
					       MSG_NOSIGNAL | MSG_DONTWAIT);
			sent += n > 0 ? (uint64_t)n : 0;
		}
		nap_ms(1000);
	}
	printf("slowloris+partial: %d + %d connections, %llu closed by the "
	       "master, %.1f MiB of partial frames sent\n",
	       SLOWLORIS, PARTIAL, (unsigned long long)closes,
	       (double)sent / (1 << 20));
}

/* Waves of STORM connections past the cap: held 2 s, then closed; what
 * each got: connected at all (the listen backlog overflows in a burst),
 * told TOO_MANY, closed without a word (over MAX_REFUSING refusals
 * flushing), or left open (admitted into the reserve: it has
 * rpc_frame_timeout_ms to make a reserved call). */
static void attack_storm(void)
{
	int fd[STORM], waves = 0;
	uint64_t told = 0, opened = 0, connected = 0, closed = 0, open = 0;

	while (!stopping && net_now_s() < attack_end) {
		int n = 0;

		for (int i = 0; i < STORM; i++) {
			/* two addresses: past the per-address cap too */
			fd[n] =
			    dial(i % 2 ? "127.0.3.1" : "127.0.3.2", rpc_port);
			n += fd[n] >= 0;
		}
		opened += (uint64_t)n;
		nap_ms(2000);
		for (int i = 0; i < n; i++) {
			struct pollfd p = {fd[i], POLLOUT, 0};
			int err = 0;
			socklen_t len = sizeof(err);
			uint8_t b[4];
			ssize_t r;

			if (poll(&p, 1, 0) == 1 &&
			    getsockopt(fd[i], SOL_SOCKET, SO_ERROR, &err,
				       &len) == 0 &&
			    err == 0)
				connected++;
			r = recv(fd[i], b, 4, MSG_DONTWAIT);
			if (r == 4)
				told++; /* the TOO_MANY frame's prefix */
			else if (r == 0 || (r < 0 && errno == ECONNRESET))
				closed++;
			else if (r < 0 && errno == EAGAIN && !err)
				open++;
			close(fd[i]);
		}
		waves++;
		nap_ms(500);
	}
	printf("storm: %d waves of %d, %llu connections: %llu connected "
	       "within 2 s, %llu told TOO_MANY, %llu closed without a word, "
	       "%llu left open\n",
	       waves, STORM, (unsigned long long)opened,
	       (unsigned long long)connected, (unsigned long long)told,
	       (unsigned long long)closed, (unsigned long long)open);
}

/* HTTP_HOLD connections held open, HTTP_HOLD_PER from each address: past
 * http_max_connections (less its reserve) they get a 503. */
static int *http_hold(int *held, int *refused)
{
	int *fd = calloc(HTTP_HOLD, sizeof(int));
	char src[32], b[16];

	*held = *refused = 0;
	for (int i = 0; i < HTTP_HOLD; i++) {
		snprintf(src, sizeof(src), "127.0.4.%d",
			 10 + i / HTTP_HOLD_PER);
		fd[i] = dial(src, http_port);
		nap_ms(1);
	}
	nap_ms(500);
	for (int i = 0; i < HTTP_HOLD; i++) {
		ssize_t r =
		    fd[i] < 0 ? 0 : recv(fd[i], b, sizeof(b), MSG_DONTWAIT);

		if (r > 12 && !strncmp(b, "HTTP/1.1 503", 12))
			(*refused)++;
		else if (r < 0 && errno == EAGAIN)
			(*held)++;
	}
	return fd;
}

/* 256 MiB of HTTP headers, a connection at a time until it is cut. */
static void attack_http(void)
{
	static char hdr[1 << 16];
	uint64_t sent = 0, conns = 0;
	int held, refused, *hold = http_hold(&held, &refused);

	memset(hdr, 'a', sizeof(hdr));
	for (size_t i = 0; i + 2 < sizeof(hdr); i += 100)
		memcpy(hdr + i, "\r\nX:", 4);
	double t0 = net_now_s(), rate;

	/* paced over the attack: an unpaced sender takes a core of this
	 * 2-core machine, and the probe measures that, not the master */
	rate = (double)HTTP_FLOOD_BYTES / (attack_end - 12 - t0);
	while (!stopping && sent < HTTP_FLOOD_BYTES &&
	       net_now_s() < attack_end) {
		int fd;

		if ((double)sent > rate * (net_now_s() - t0)) {
			nap_ms(10);
			continue;
		}
		fd = dial("127.0.4.1", http_port);
		struct pollfd p;

		if (fd < 0) {
			nap_ms(10);
			continue;
		}
		conns++;
		p = (struct pollfd){fd, POLLOUT, 0};
		(void)poll(&p, 1, 1000);
		(void)!send(fd, "GET /health HTTP/1.1", 20, MSG_NOSIGNAL);
		for (;;) {
			ssize_t n = send(fd, hdr, sizeof(hdr),
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			if (n > 0) {
				sent += (uint64_t)n;
				if ((double)sent > rate * (net_now_s() - t0))
					nap_ms(10);
				continue;
			}
			if (n < 0 && errno == EAGAIN && poll(&p, 1, 500) > 0 &&
			    !stopping)
				continue;
			break;
		}
		close(fd);
	}
	printf("http: %.0f MiB of headers offered over %llu connections; "
	       "%d connections held: %d open, %d refused with 503\n",
	       (double)sent / (1 << 20), (unsigned long long)conns, HTTP_HOLD,
	       held, refused);
	for (int i = 0; i < HTTP_HOLD; i++)
		if (hold[i] >= 0)
			close(hold[i]);
	free(hold);
}

/* PutStart and GetReplicaList with LONG_KEY-byte keys. */
static void attack_long_keys(void)
{
	char addr[64], err[160], *key = malloc(LONG_KEY + 1);
	uint64_t refused = 0, too_many = 0, other = 0;
	rpc_client *c = NULL;

	memset(key, 'K', LONG_KEY);
	key[LONG_KEY] = '\0';
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", rpc_port);
	if (rpc_client_open(&c, addr, NULL, err, sizeof(err)) != RPC_OK) {
		printf("long keys: cannot connect: %s\n", err);
		return;
	}
	while (!stopping && net_now_s() < attack_end &&
	       refused + too_many + other < 20000) {
		McreplRpc__PutStartRequest ps;
		int st;
		ProtobufCMessage *r;

		mcrepl_rpc__put_start_request__init(&ps);
		ps.tenant = (char *)(uintptr_t) "";
		ps.key = key;
		ps.size = 1024;
		ps.replica_num = 1;
		r = harness_call(c, "PutStart", &ps.base, &st);
		if (r)
			protobuf_c_message_free_unpacked(r, NULL);
		if (!r && st == MCREPL_RPC__CODE__INVALID_ARGUMENT) {
			refused++;
			nap_ms(1);
			continue;
		}
		/* TOO_MANY: its reconnection met a full master (the reserve
		 * takes only workers' and admin calls); the client reconnects
		 * at the next call */
		if (!r && st == MCREPL_RPC__CODE__TOO_MANY)
			too_many++;
		else
			other++;
		nap_ms(100);
	}
	printf("long keys: %llu PutStart of %d-byte keys refused "
	       "INVALID_ARGUMENT; %llu connections refused TOO_MANY, %llu "
	       "other results\n",
	       (unsigned long long)refused, LONG_KEY,
	       (unsigned long long)too_many, (unsigned long long)other);
	rpc_client_close(c);
	free(key);
}

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t pid = fork();

	if (pid == 0) {
		/* attackers are remote in life: here they yield the cores */
		(void)!nice(19);
		signal(SIGTERM, on_term);
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	return pid;
}

static void run_slow(int a)
{
	(void)a;
	attack_slow();
}
static void run_storm(int a)
{
	(void)a;
	attack_storm();
}
static void run_http(int a)
{
	(void)a;
	attack_http();
}
static void run_keys(int a)
{
	(void)a;
	attack_long_keys();
}

/* ---- the run ------------------------------------------------------------ */

/* --only idle,slow,storm,http,keys: a subset of the attackers (all by
 * default), to tell which one costs what. */
static const char *only;

static bool attacking(const char *name)
{
	return !only || strstr(only, name);
}

static void raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	printf("nofile: %llu (hard limit) per process\n",
	       (unsigned long long)rl.rlim_cur);
}

/* --pin: the master's threads on CPU 0, this process (and the children it
 * forks later) on the other CPUs. 0, or -1 with nothing changed when the
 * machine has one CPU or the calls fail. */
static int pin_master(pid_t master)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t one, rest;
	char path[64];
	struct dirent *e;
	DIR *d;

	if (n < 2 || n > CPU_SETSIZE)
		return -1;
	CPU_ZERO(&one);
	CPU_ZERO(&rest);
	CPU_SET(0, &one);
	for (long i = 1; i < n; i++)
		CPU_SET((int)i, &rest);
	if (sched_setaffinity(0, sizeof(rest), &rest) != 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)master);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    sched_setaffinity((pid_t)atoi(e->d_name), sizeof(one),
				      &one) != 0) {
			closedir(d);
			return -1;
		}
	closedir(d);
	return 0;
}

/* The master, its stderr into err_fd. */
static int start_master(struct proc *m, int err_fd)
{
	static const char *const flags[] = {"--rpc_port=0", "--metrics_port=0",
					    NULL};
	int saved = dup(STDERR_FILENO), rc;

	dup2(err_fd, STDERR_FILENO);
	rc = master_start(m, flags);
	dup2(saved, STDERR_FILENO);
	close(saved);
	return rc;
}

/* Starts a worker; returns the ms from spawn to its ready line, or -1. */
static double mount_worker(struct proc *w)
{
	char bin[512], master[64];
	char *argv[] = {
	    (char *)(uintptr_t)harness_bin("mcrepl-worker", bin, sizeof(bin)),
	    (char *)(uintptr_t) "--master",
	    master,
	    (char *)(uintptr_t) "--segment_size=16M",
	    (char *)(uintptr_t) "--transport=tcp",
	    NULL};
	double t0 = net_now_s();

	snprintf(master, sizeof(master), "127.0.0.1:%u", rpc_port);
	if (proc_start(w, argv, "mcrepl-worker ready", 10000) != 0)
		return -1;
	return (net_now_s() - t0) * 1e3;
}

/* What the run keeps of each round. */
struct round {
	double un_p99, st_p99, worst_window, mount_max, health_ms;
	long rss_peak_kb;
	int fds_peak;
	uint64_t errors;
};

/* Samples master RSS (every 200 ms) and fds (every 2 s: listing 18 k fds
 * in /proc takes a few ms of this process's CPU, on the cores the probe
 * and the master share) until `until`. */
static void sample_until(pid_t pid, double until, struct round *r)
{
	double next_fds = 0;

	while (net_now_s() < until && !stopping) {
		long kb = rss_kb(pid);

		r->rss_peak_kb = kb > r->rss_peak_kb ? kb : r->rss_peak_kb;
		if (net_now_s() >= next_fds) {
			int f = fd_count(pid);

			r->fds_peak = f > r->fds_peak ? f : r->fds_peak;
			next_fds = net_now_s() + 2;
		}
		nap_ms(200);
	}
}

/* The probe for pr->seconds on its thread while this one samples, mounts
 * WORKERS workers (at 1/4, 2/4, 3/4 of the phase) and fetches /health
 * once: in both phases, so that what differs between them is the attack
 * alone (a run with no attacker at all measured a median ratio of 2.0
 * when only the attacked phase mounted workers). The workers stop after
 * the phase. Returns the probe's p99. */
static double measure(struct probe *pr, pid_t master, struct round *r,
		      bool attack)
{
	double end, t0, health, cpu0 = proc_cpu_s(master), worst;
	struct proc w[WORKERS];
	bool up[WORKERS];
	pthread_t th;
	char *page;

	pr->errors = 0;
	pthread_create(&th, NULL, probe_main, pr);
	end = net_now_s() + pr->seconds;
	printf("  %s: workers mounted in", attack ? "attack" : "unloaded");
	for (int i = 0; i < WORKERS; i++) {
		double ms;

		sample_until(master, net_now_s() + pr->seconds / (WORKERS + 1),
			     r);
		ms = mount_worker(&w[i]);
		up[i] = ms >= 0;
		printf(" %.0f", ms);
		if (attack && (ms < 0 || ms > r->mount_max))
			r->mount_max = ms < 0 ? 1e9 : ms;
	}
	t0 = net_now_s();
	page = http_get(http_port, "/health");
	health = page && strstr(page, "200 OK") ? (net_now_s() - t0) * 1e3 : -1;
	printf(" ms; /health %s in %.0f ms\n", health >= 0 ? "200" : "FAILED",
	       (net_now_s() - t0) * 1e3);
	free(page);
	if (attack)
		r->health_ms = health;
	sample_until(master, end, r);
	pthread_join(th, NULL);
	printf("  %s: %zu calls, %llu errors, master CPU %.0f %%; ",
	       attack ? "attack" : "unloaded", pr->n,
	       (unsigned long long)pr->errors,
	       (proc_cpu_s(master) - cpu0) * 100 / pr->seconds);
	worst = p99_timeline(pr, 2);
	if (attack)
		r->worst_window = worst;
	r->errors += pr->errors;
	for (int i = 0; i < WORKERS; i++)
		if (up[i])
			proc_stop(&w[i]);
	return p99(pr);
}

/* Starts the attackers; returns how many. */
static int attack_start(pid_t *kids, int idle, double secs)
{
	int nk = 0;

	stopping = 0;
	attack_end = net_now_s() + secs + 12;
	/* long keys first: its one connection is in before the master is
	 * full (later it would be refused, as any new non-worker is) */
	if (attacking("keys")) {
		kids[nk++] = spawn(run_keys, 0);
		nap_ms(200);
	}
	/* idle connections from two processes: each has the fd limit */
	for (idle_part = 0; idle_part < 2 && attacking("idle"); idle_part++)
		kids[nk++] = spawn(attack_idle, idle / 2);
	if (attacking("slow"))
		kids[nk++] = spawn(run_slow, 0);
	nap_ms(3000); /* the idle connections are in, the frames started */
	if (attacking("storm"))
		kids[nk++] = spawn(run_storm, 0);
	if (attacking("http"))
		kids[nk++] = spawn(run_http, 0);
	nap_ms(2000);
	return nk;
}

static void attack_stop(pid_t *kids, int nk)
{
	for (int i = 0; i < nk; i++)
		kill(kids[i], SIGTERM);
	for (int i = 0; i < nk; i++)
		waitpid(kids[i], NULL, 0);
}

/* One round: the probe alone for secs, then under attack for secs, WORKERS
 * workers mounting in each; the attackers' connections closed after. */
static void run_round(int n, struct probe *pr, pid_t master, int idle,
		      double secs, struct round *r)
{
	pid_t kids[8];
	int nk;

	printf("round %d\n", n);
	memset(r, 0, sizeof(*r));
	r->rss_peak_kb = rss_kb(master);
	pr->seconds = secs;
	r->un_p99 = measure(pr, master, r, false);
	printf("  unloaded p99 %.3f ms, master RSS %ld MiB\n", r->un_p99,
	       r->rss_peak_kb / 1024);
	nk = attack_start(kids, idle, secs);
	r->st_p99 = measure(pr, master, r, true);
	printf("  attack p99 %.3f ms (ratio %.2f), worst 2 s window %.3f "
	       "ms; master fds peak %d, RSS peak %ld MiB\n",
	       r->st_p99, r->st_p99 / r->un_p99, r->worst_window, r->fds_peak,
	       r->rss_peak_kb / 1024);
	attack_stop(kids, nk);
	nap_ms(2000); /* the master closes what the attackers held */
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void target(const char *what, bool met, double v, const char *unit)
{
	printf("target %-46s %s (%.3f%s)\n", what, met ? "met   " : "MISSED", v,
	       unit);
}

struct stress_opts {
	uint64_t keys;
	int32_t idle, rounds;
	double seconds;
	const char *only;
	bool pin;
};

#define O(f) FLAG_AT(struct stress_opts, f)
static const struct flag stress_flags[] = {
    {.name = "keys",
     .type = FLAG_U64,
     .off = O(keys),
     .def = "1000000",
     .help = "objects loaded into the master",
     .min = 1,
     .max = 100000000},
    {.name = "idle",
     .type = FLAG_I32,
     .off = O(idle),
     .def = "20000",
     .help = "idle connections held by the attackers (0 = none)",
     .max = 1000000},
    {.name = "seconds",
     .type = FLAG_DOUBLE,
     .off = O(seconds),
     .def = "20",
     .help = "seconds of each round's attack",
     .dmin = 1,
     .dmax = 3600},
    {.name = "rounds",
     .type = FLAG_I32,
     .off = O(rounds),
     .def = "5",
     .help = "rounds, each unloaded then attacked",
     .min = 1,
     .max = 16},
    {.name = "only",
     .type = FLAG_STRP,
     .off = O(only),
     .help = "a subset of the attackers: idle,slow,storm,http,keys (all "
	     "when not given)"},
    {.name = "pin",
     .type = FLAG_BOOL,
     .off = O(pin),
     .def = "false",
     .help = "the master on CPU 0, everything else on the others"},
};
#undef O

static const struct flag_set stress_set = {
    .prog = "bench_stress",
    .intro = "a good client's GetReplicaList p99 while attackers flood "
	     "the master",
    .title = "bench_stress flags",
    .width = 8,
    .flags = stress_flags,
    .n = sizeof(stress_flags) / sizeof(stress_flags[0]),
};

/* The master's last stderr lines, after a failed load. */
static void print_tail(int err_fd)
{
	char tail[2048];
	off_t end = lseek(err_fd, 0, SEEK_END);
	ssize_t got = pread(
	    err_fd, tail, sizeof(tail) - 1,
	    end > (off_t)sizeof(tail) - 1 ? end - (off_t)sizeof(tail) + 1 : 0);

	tail[got > 0 ? got : 0] = 0;
	fprintf(stderr, "bench_stress: loading failed; master: %s\n", tail);
}

/* The rounds' figures, gathered. */
struct totals {
	int n;
	double un[16], st[16], ratio[16], worst, mount;
	long rss_peak;
	bool health;
	uint64_t errors;
};

static void run_rounds(struct probe *pr, pid_t master,
		       const struct stress_opts *o, struct totals *t)
{
	struct round r;

	*t = (struct totals){.n = o->rounds, .health = true};
	for (int i = 0; i < t->n; i++) {
		run_round(i + 1, pr, master, o->idle, o->seconds, &r);
		t->un[i] = r.un_p99;
		t->st[i] = r.st_p99;
		t->ratio[i] = r.st_p99 / r.un_p99;
		t->worst =
		    r.worst_window > t->worst ? r.worst_window : t->worst;
		t->mount = r.mount_max > t->mount ? r.mount_max : t->mount;
		t->rss_peak =
		    r.rss_peak_kb > t->rss_peak ? r.rss_peak_kb : t->rss_peak;
		t->health = t->health && r.health_ms >= 0;
		t->errors += r.errors;
	}
}

/* The targets, met or not, and the last line. */
static void report(struct totals *t, long rss0, double stderr_kb, bool exit0)
{
	double mu = median(t->un, t->n), ms = median(t->st, t->n);
	double mr;
	double grow = (double)(t->rss_peak - rss0) / 1024.0;

	printf("ratios per round:");
	for (int i = 0; i < t->n; i++)
		printf(" %.2f", t->ratio[i]);
	printf("\n");
	mr = median(t->ratio, t->n);
	target("p99 <= 2 ms (median of rounds)", ms <= 2, ms, " ms");
	target("p99 <= 2 ms throughout (worst 2 s window)", t->worst <= 2,
	       t->worst, " ms");
	target("within 1.5x of unloaded (median ratio)", mr <= 1.5, mr, "x");
	target("new worker mounts within 1 s (slowest)", t->mount <= 1000,
	       t->mount, " ms");
	target("master RSS <= unloaded + 64 MiB", grow <= 64, grow,
	       " MiB more");
	target("stderr <= 1 MB", stderr_kb <= 1024, stderr_kb, " KiB");
	target("/health answers under attack (every round)", t->health, t->n,
	       " rounds");
	target("no crash (master exits 0, no probe errors)",
	       exit0 && !t->errors, (double)t->errors, " errors");
	printf("stress_p99_ms=%.3f unloaded_p99_ms=%.3f rss_growth_mb=%.1f "
	       "stderr_kb=%.1f mount_ms=%.0f\n",
	       ms, mu, grow, stderr_kb, t->mount);
}

int main(int argc, char **argv)
{
	int err_fd, pin;
	double t0;
	char path[] = "/tmp/bench-stress-XXXXXX";
	struct probe pr = {0};
	struct totals tot;
	struct proc m;
	struct preload_keeper *keeper;
	long rss0;
	bool exit0;
	struct stress_opts o = {0};
	int rc = bench_flags(&stress_set, &o, argc, argv);

	if (rc >= 0)
		return rc;
	only = o.only;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	raise_nofile();
	err_fd = mkstemp(path);
	unlink(path);
	if (err_fd < 0 || start_master(&m, err_fd) != 0) {
		fprintf(stderr, "bench_stress: cannot start the master\n");
		return 1;
	}
	pin = o.pin && pin_master(m.pid) == 0;
	printf("cpus: %s\n", pin ? "master on CPU 0, probe, attackers and "
				   "workers on the others"
				 : "shared by all");
	rpc_port = (uint16_t)proc_field(&m, "rpc_port");
	http_port = (uint16_t)proc_field(&m, "metrics_port");
	t0 = net_now_s();
	keeper = preload_keep(rpc_port, NULL);
	if (!keeper || preload_master(rpc_port, o.keys) != 0) {
		print_tail(err_fd);
		return 1;
	}
	printf("loaded %llu objects in %.1f s\n", (unsigned long long)o.keys,
	       net_now_s() - t0);
	rss0 = rss_kb(m.pid);
	printf("master RSS loaded: %ld MiB\n", rss0 / 1024);
	pr.c = harness_client(rpc_port);
	pr.keys = o.keys;
	pr.cap = 1u << 22;
	pr.lat = malloc(pr.cap * sizeof(double));
	pr.at = malloc(pr.cap * sizeof(double));
	run_rounds(&pr, m.pid, &o, &tot);
	printf("after the attackers left: master RSS %ld MiB\n",
	       rss_kb(m.pid) / 1024);
	rpc_client_close(pr.c);
	preload_release(keeper);
	exit0 = proc_stop(&m) == 0;
	printf("master stderr: %lld bytes; exit %s\n",
	       (long long)lseek(err_fd, 0, SEEK_END), exit0 ? "0" : "NOT 0");
	report(&tot, rss0, (double)lseek(err_fd, 0, SEEK_END) / 1024.0, exit0);
	close(err_fd);
	free(pr.lat);
	free(pr.at);
	return 0;
}
