/*
 * The read load: reader threads, each with its own store_client, running
 * the Zipf mix or replaying a trace, and the counters they share with the
 * sampler. Reads are counted on the client by the worker owning the
 * serving segment (exact, unlike the workers' heartbeat counts), and their
 * bytes as cross-domain when that worker is in another domain than the
 * reader (reader j is in cluster_reader_domain(cl, j)).
 *
 * Lifecycle: load_init, [load_put_all], load_start, (sampler reads the
 * counters), load_stop, load_latency, load_free. The counters are atomics;
 * everything else is owned by the thread that calls these functions.
 */
#ifndef MBENCH_LOAD_H
#define MBENCH_LOAD_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster.h"
#include "opts.h"
#include "../common/trace.h"
#include "keys.h"

struct load_thread;

struct load {
	const struct bench_opts *o;
	const struct cluster *cl;
	const struct zipf_keys *z; /* zipf, shifting, flash, rehot */
	const struct trace *tr;	   /* trace workload */
	uint64_t object_bytes;	   /* bytes of every object */
	uint64_t n_keys;	   /* keys (zipf) or distinct blocks (trace) */
	_Atomic uint64_t worker_reads[BENCH_MAX_WORKERS];
	_Atomic uint64_t reads;	  /* successful gets */
	_Atomic uint64_t errors;  /* failed gets and puts, bad bytes */
	_Atomic uint64_t corrupt; /* gets whose bytes were not the key's */
	_Atomic uint64_t misses;  /* trace: blocks written before reading */
	_Atomic uint64_t evicted_reads;	  /* zipf: reads of evicted keys (then
					   written back) */
	_Atomic uint64_t flash_reads;	  /* flash: reads of the flash key */
	_Atomic uint64_t dyn_reads;	  /* served by a dynamic replica */
	_Atomic uint64_t read_bytes;	  /* bytes of the successful gets */
	_Atomic uint64_t cross_bytes;	  /* of them, served by a worker in
					 another domain than the reader's */
	_Atomic uint64_t replicated_keys; /* seen on a dynamic replica or on
					     two segments */
	_Atomic uint64_t late;		  /* trace: started >= 100 ms late */
	_Atomic uint64_t done_reqs;	  /* trace: requests finished */
	_Atomic int64_t first_dyn_ns;	  /* first dynamic read, -1 none */
	_Atomic uint32_t running;	  /* reader threads still running */
	_Atomic int stop;
	volatile const sig_atomic_t *cancel; /* Ctrl-C: stop too (or NULL) */
	_Atomic size_t next_req;	     /* trace: next request to take */
	_Atomic unsigned char *key_state;    /* per key: first worker + 1, or
					     255 = replicated */
	_Atomic unsigned char *stored;	     /* trace: 0 absent, 1 writing,
					     2 stored */
	_Atomic uint32_t errors_shown;
	int64_t t0_ns; /* monotonic start of the reads */
	struct load_thread *th;
	uint32_t n_th;
};

/* Monotonic clock in ns. */
int64_t bench_now_ns(void);

/* Set up for o->clients threads and n_keys keys; 0 or -1 (OOM). */
int load_init(struct load *l, const struct bench_opts *o,
	      const struct cluster *cl, uint64_t n_keys, uint64_t object_bytes);

/* Zipf: put every key, in id order through one client (so the layout is
 * the same in every run with the same seed). 0, or -1 with err. *seconds
 * receives how long it took. */
int load_put_all(struct load *l, double *seconds, char *err, size_t errlen);

/* Open the clients and start the readers (t0 = now). 0 or -1 with err. */
int load_start(struct load *l, char *err, size_t errlen);

/* True when every reader finished by itself (the trace ended). */
bool load_finished(struct load *l);

/* Ask the readers to stop and join them. */
void load_stop(struct load *l);

/* Read latency percentiles q[0..n) (each in [0, 1]) over the successful
 * gets that ended from_s seconds or later after the reads began, in
 * microseconds, into out[] (0 when there was none). After load_stop.
 * 0, or -1 when memory is short. */
int load_latency_us(const struct load *l, double from_s, const double *q,
		    double *out, size_t n);

void load_free(struct load *l);

/* Not trace: the key at popularity rank `rank` (0: the hottest) in the
 * ranking read last (reader 0's, after load_stop). */
uint32_t load_hot_key(const struct load *l, uint64_t rank);

/* Not trace: popgen_digest over the top `top` keys of the ranking of the
 * run's last millisecond (--duration - 1 ms, as mcrepl-sim's last 1 ms
 * tick); 0 for a trace or when memory is short. */
uint64_t load_ranking_digest(const struct load *l, uint64_t top);

/* The store key of key index `key`: "block-<id>" (trace) or "zipf-<n>". */
void load_key_name(const struct load *l, uint32_t key, char *out, size_t cap);

#endif
