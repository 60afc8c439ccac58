/* The history test's clients: each a thread with its own store client
 * (store_client.h, "etcd://..." so it follows the leader) running random
 * puts, gets and removes on the shared key set, every one recorded with
 * its invoke and complete times (CLOCK_MONOTONIC) and outcome (hist.h).
 * A client's ops array is its own until the thread is joined. */
#ifndef MCREPL_HISTORY_CLIENTS_H
#define MCREPL_HISTORY_CLIENTS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "hist.h"
#include "store_client.h"

struct hclient {
	uint32_t id, keys;
	store_client *sc;
	struct hop *ops;
	size_t n, cap;
	uint32_t seq;
	uint64_t rng;
	uint8_t *buf; /* PAYLOAD_MAX bytes */
	FILE *log;    /* every op with the client's reason; or NULL */
	const atomic_bool *stop;
	pthread_t th;
};

int64_t hclient_now_ns(void);
/* Opens client id (at most cap ops) on addr with cred; log may be NULL
 * (borrowed). 0, or -1 with a line on stderr (nothing left to close). */
int hclient_open(struct hclient *h, uint32_t id, uint32_t keys,
		 const char *addr, const struct auth_cred *cred, size_t cap,
		 FILE *log);
/* Runs one operation of kind k on key, recording it (unless full). */
void hclient_op(struct hclient *h, enum hop_kind k, uint32_t key);
/* The thread: random operations until *stop or the ops array is full. */
int hclient_start(struct hclient *h, const atomic_bool *stop);
void hclient_join(struct hclient *h);
void hclient_close(struct hclient *h);

#endif
