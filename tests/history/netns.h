/* Network namespaces for the history test's partitions (needs root and
 * iproute2): a hub namespace with a bridge, and one namespace per host
 * wired to it, 10.79.0.<n>/24 on eth0: etcd (.10), the masters (.1,
 * .2), the workers (.11-.13) and the runner with its clients (.20).
 * Processes are started in a host's namespace by entering it
 * (netns_enter) around the fork; the runner's own threads stay in the
 * clients' namespace. Partitions are blackhole routes, both ways, or a
 * host's link down (tc here has no netem). */
#ifndef MCREPL_HISTORY_NETNS_H
#define MCREPL_HISTORY_NETNS_H

#include <stdbool.h>
#include <sys/types.h>

enum nshost { NS_ETCD, NS_M0, NS_M1, NS_W0, NS_W1, NS_W2, NS_CLIENT, NS_N };

struct netns {
	char prefix[24];
	bool made[NS_N + 1]; /* the hub last */
	int fd[NS_N];	     /* open /var/run/netns/<name> */
	int root_fd;
	/* the etcd of the namespaces */
	pid_t etcd_pid;
	char etcd_dir[256];
};

/* Creates the namespaces: 0, or -1 with the reason in why (then
 * netns_teardown() removes what was made). */
int netns_setup(struct netns *n, char *why, size_t cap);
void netns_teardown(struct netns *n);
/* The address of a host ("10.79.0.1"). */
const char *netns_addr(enum nshost h);
/* Moves the calling thread into host h's namespace: 0 or -1. */
int netns_enter(struct netns *n, enum nshost h);
/* Starts a one-member etcd in NS_ETCD on netns_addr(NS_ETCD):2379 and
 * waits (10 s at most) for its /health from the calling thread's
 * namespace. 0 or -1. */
int netns_etcd_start(struct netns *n);
void netns_etcd_stop(struct netns *n);
/* Cuts (cut true) or mends the traffic between hosts a and b with
 * blackhole routes in both namespaces: 0 or -1. */
int netns_cut(struct netns *n, enum nshost a, enum nshost b, bool cut);
/* Takes host h's link down (up false) or up again: 0 or -1. */
int netns_link(struct netns *n, enum nshost h, bool up);

#endif
