/*
 * The cluster a bench run reads from: either one started here (a master
 * and N workers on loopback, distinct host ids, stopped after the run and
 * killed with the bench) or a running master. Workers are found through
 * the master's Stats: segments grouped by their client id, each worker in
 * the domain of its segments.
 */
#ifndef MBENCH_CLUSTER_H
#define MBENCH_CLUSTER_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "client_auth.h"
#include "harness.h"
#include "opts.h"
#include "store_client.h"

#define BENCH_MAX_SEGS 256

struct cluster {
	struct proc master;
	struct proc workers[BENCH_MAX_WORKERS];
	uint32_t n_started; /* local workers started */
	char addr[64];	    /* master RPC host:port */
	/* segment -> worker (index into name[]) */
	size_t n_segs;
	uint64_t seg_id[BENCH_MAX_SEGS];
	uint32_t seg_worker[BENCH_MAX_SEGS];
	uint32_t n_workers;
	uint64_t worker_client[BENCH_MAX_WORKERS];
	char name[BENCH_MAX_WORKERS][64]; /* host id of each worker */
	/* Domains: --local --domains N > 1 lists d0..d<N-1> (worker i was
	 * started in d<i % N>); else the distinct domains of the workers'
	 * segments ("" = default), sorted by name. A worker's domain is its
	 * first segment's. */
	uint32_t n_domains;
	char domain[BENCH_MAX_WORKERS][64];
	uint32_t worker_domain[BENCH_MAX_WORKERS]; /* index into domain[] */
	uint32_t fixed_domains; /* d0.. listed before the workers: N, or 0 */
	/* Authentication: a local cluster runs with a throwaway
	 * auth file (principals "worker" and "admin"); a running master with
	 * --principal/--secret_file. cred: what the bench's clients use
	 * (NULL: none). */
	struct harness_auth auth;
	char auth_flag[400];
	struct auth_cred own;
	const struct auth_cred *cred;
	/* --master: its credential and TLS from the flags (client_auth.h);
	 * tls: the clients' context, NULL = plain */
	struct client_auth given;
	SSL_CTX *tls;
};

/*
 * Start a master in `mode` (off, observe, enforce; domain = enforce with
 * --dynamic_replication_domain_aware=true), then o->master_flags, and
 * o->local workers with segment_bytes each (worker i in domain d<i % N>
 * when o->domains = N > 1), or adopt o->master. Then wait (up to 10 s) until the
 * master lists the expected workers and build the segment map. 0, or -1
 * with the reason in err. cluster_stop() also after a failure.
 */
int cluster_start(struct cluster *c, const struct bench_opts *o,
		  const char *mode, uint64_t segment_bytes, char *err,
		  size_t errlen);

/* Stop the local daemons (SIGTERM, then SIGKILL). Safe to call twice. */
void cluster_stop(struct cluster *c);

/* The worker index serving segment id, or -1 when unknown. */
int cluster_worker_of(const struct cluster *c, uint64_t segment_id);

/* The domain (index into c->domain[]) of reader j: j % n_domains, so
 * reader j is in d<j % N> on a local cluster with --domains N. */
uint32_t cluster_reader_domain(const struct cluster *c, uint32_t reader);

#endif
