/*
 * Filling a master for the benches (bench_master, bench_stress): a fake
 * segment of 1 TiB is mounted (client 1, host "bench-host", endpoint
 * 127.0.0.1:1, nothing listens there: only metadata is exercised), then
 * keys objects "key-0".. "key-<keys-1>" of 1 KiB (tenant "") are put
 * through one pipelined connection, 64 calls in flight.
 */
#ifndef MCREPL_PRELOAD_H
#define MCREPL_PRELOAD_H

#include <stdint.h>
#include <sys/types.h>

/* 0, or -1 with a line on stderr. */
int preload_master(uint16_t rpc_port, uint64_t keys);

/* The same against a master with --auth_file: the segment is mounted as
 * the worker principal `worker`, the puts made as the client `client`
 * (auth.h credentials; NULL = none). */
struct auth_cred;
int preload_master_as(uint16_t rpc_port, uint64_t keys,
		      const struct auth_cred *worker,
		      const struct auth_cred *client);

/* The fake segment's client (1) heartbeats like a worker, or the master
 * drops the segment and every object on it client_ttl (10 s) after the
 * mount: a thread sends a Heartbeat every second, from before the load
 * (a load can outlast client_ttl on a busy machine) until preload_release.
 * NULL when the thread cannot start. */
struct preload_keeper;
struct preload_keeper *preload_keep(uint16_t rpc_port,
				    const struct auth_cred *worker);
void preload_release(struct preload_keeper *k);

/* CPU seconds (user + system, all threads) pid has used; -1 when /proc
 * cannot tell. */
double proc_cpu_s(pid_t pid);

#endif
