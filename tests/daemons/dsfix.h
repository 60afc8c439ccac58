/* A data server run in-process on its own event loop thread, for the
 * suites that play the worker themselves (check_grant, check_integrity,
 * check_stamp_forge): made on an ephemeral loopback port, its segments
 * added (and mounted at a real master as a worker would) before its loop
 * runs, paused while the test thread calls it. Failures are Check
 * assertions. */
#ifndef MCREPL_TEST_DSFIX_H
#define MCREPL_TEST_DSFIX_H

#include <pthread.h>
#include <stdint.h>

#include "data_server.h"

struct dsfix {
	struct event_base *base;
	struct data_server *ds;
	pthread_t th;
	char ep[64]; /* "127.0.0.1:<its port>" */
};

/* A server with the default configuration on port 0; its loop not
 * running yet. */
void dsfix_create(struct dsfix *d);
/* Runs its loop on a thread of its own. */
void dsfix_run(struct dsfix *d);
/* Stops the loop thread: the test thread may call the server, which
 * belongs to its loop (libevent without its thread support: a connection
 * wakes it to see the break). dsfix_run() runs it again. */
void dsfix_pause(struct dsfix *d);
/* Pauses it, destroys the server and its base. */
void dsfix_destroy(struct dsfix *d);

/* Adds seg[0, bytes) and mounts it at the master on port as worker
 * client_id of host (segment name), armed with the master's grant key and
 * clock and bound to the segment id, which it returns. Before
 * dsfix_run() or paused. */
uint64_t dsfix_mount(struct dsfix *d, uint16_t port, uint64_t client_id,
		     const char *host, const char *name, uint8_t *seg,
		     uint64_t bytes);

#endif
