/* A throw-away etcd for the HA tests and the failover benchmark
 * (docs/HA.md): 1 or 3 members on free loopback ports, data in a fresh
 * temporary directory removed at the end, fast raft timers (heartbeat 50
 * ms, election 500 ms). Needs the etcd binary (Debian: etcd-server);
 * etcd_proc_available() says whether it is there. */
#ifndef MCREPL_ETCD_PROC_H
#define MCREPL_ETCD_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define ETCD_PROC_MAX 3

struct etcd_proc {
	int n;
	pid_t pid[ETCD_PROC_MAX];
	uint16_t client_port[ETCD_PROC_MAX], peer_port[ETCD_PROC_MAX];
	char dir[256];
	char endpoints[256]; /* "127.0.0.1:p0,127.0.0.1:p1,..." */
};

/* The etcd binary ($MCREPL_ETCD, else etcd on PATH), or NULL. */
const char *etcd_proc_available(void);
/* Start members (1 or 3) and wait until every one answers /health
 * healthy (10 s at most). 0, or -1 (everything started is stopped). */
int etcd_proc_start(struct etcd_proc *e, int members);
/* Signal member i (SIGKILL, SIGSTOP, SIGCONT, ...). */
void etcd_proc_signal(struct etcd_proc *e, int i, int sig);
/* Kill every member, remove the data. */
void etcd_proc_stop(struct etcd_proc *e);

#endif
