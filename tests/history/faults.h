/* The faults the history test injects, one every 5-10 s, in turn: the
 * leader SIGSTOPped 3-8 s, a worker SIGSTOPped 2-5 s, the leader killed
 * (-9) and started again, two CPU burners for 10 s; and when the cluster
 * runs in network namespaces (netns.h), partitions: the leader isolated
 * (its link down, 4-8 s), the leader cut from etcd only (4-8 s), a
 * worker cut from both masters (3-6 s). After each, a leader is awaited
 * (20 s at most). */
#ifndef MCREPL_HISTORY_FAULTS_H
#define MCREPL_HISTORY_FAULTS_H

#include <stdint.h>

#include "cluster.h"

#define FAULT_KINDS 7

struct faults {
	struct cluster *c;
	int64_t t0; /* hclient_now_ns() at the start, for the lines */
	uint64_t rng;
	unsigned count[FAULT_KINDS];
};

/* Faults for seconds, printing a line for each ("fault t=... kind who
 * ms"). 0, or -1 when no leader came back (the cluster is then left as
 * it is, every process running). */
int faults_run(struct faults *f, int seconds);

#endif
