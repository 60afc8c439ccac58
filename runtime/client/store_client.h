/*
 * A blocking Mooncake-Store-style client: object operations through the
 * master's RPC, object bytes straight to and from the workers' data ports
 * (data_proto.h). Used by mcrepl-cli, the demo and the tests.
 *
 * Status of a call (int): 0 on success; a positive value is the master's
 * McreplRpc__Code for the operation (NOT_FOUND, ALREADY_EXISTS, NO_SPACE, ...);
 * a negative value is a local failure (RPC transport, data plane, bad
 * argument, out of memory). After any non-zero status
 * store_client_error() holds one clear line.
 *
 * Reads: GetReplicaList returns COMPLETE replicas in the master's order
 * (the master spreads load over equal replicas). The client reads from a
 * replica on its own host when local_host is set and one exists, else from
 * one in its own domain when one exists, else from the first replica; on a
 * data-plane error it falls back to the next one.
 *
 * Hedged reads: when the first replica has not answered within the hedge
 * delay (hedge_ms; by default learnt: the running mean of this client's
 * read latency plus four mean deviations, at least 20 ms), the client
 * reads the next replica (on another endpoint) too, on a connection of its
 * own, takes the first answer whose stamp checks and closes the other
 * connection. At most one hedge per read, none with a single replica; an
 * answer whose stamp fails is never returned, the other one is still
 * awaited. Counted in store_data_stats (hedged, cancelled).
 *
 * Stamps: a master that places stamped replicas (Replica.stamp_bytes) has
 * the writer stamp each region with the object's identity (master
 * incarnation, version, tenant and key), the tag the master computed for
 * that identity (PutStartResponse.stamp_tag) and a CRC-32C of its bytes
 * (stamp.h); a reader checks the stamp of what it read, its tag against
 * the descriptor's (Replica.stamp_tag). A replica whose region holds
 * anything else (a descriptor from before a master restart, a region
 * reused after its lease, a torn copy, a stamp some other writer made up:
 * "not issued by the master") is -ESTALE and the next
 * replica is tried; when every replica was stale, store_client_get() asks
 * the master once more. Never a wrong byte.
 *
 * Payload digests: a stamp binds a region to an object's identity, not
 * to its bytes; a worker may serve other bytes under a valid stamp. When
 * the master gives the object's digest (GetReplicaListResponse.digest:
 * the SHA-256 its writer sent with PutEnd), the reader hashes what it
 * read and refuses a replica that differs like a stale one (counted in
 * store_client_digest_mismatches).
 *
 * Grants: every data-plane READ and WRITE carries the grant the master
 * handed out with the Replica (data_client.h); a worker refuses an expired
 * one (-EKEYEXPIRED), and one whose region no longer holds its object like
 * any grant it does not accept (-EACCES, grant.h: no oracle);
 * store_client_get() then asks the master once more, as for stale
 * replicas.
 *
 * Data plane: the client keeps its connections to workers' data ports open
 * between calls (at most data_conns, one per endpoint, least recently used
 * closed first; see data_client.h) and closes them in
 * store_client_close(). A request that fails in transport on a reused
 * connection is sent once more on a new one: reads are idempotent, and so
 * are put writes (the same bytes to the same granted, not yet readable
 * region; data_client.h says why).
 *
 * Thread-safety: a client must not be used by two threads at once;
 * distinct clients are independent.
 */
#ifndef MCREPL_DAEMON_STORE_CLIENT_H
#define MCREPL_DAEMON_STORE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "data_proto.h"
#include "mcrepl.pb-c.h"

typedef struct store_client store_client;
struct auth_cred;

struct store_client_config {
	const char *local_host; /* prefer replicas on this host_id; NULL none */
	/* The reader's domain, sent with every read (domain-aware heat) and
	 * preferred after the local host; NULL = env MOONCAKE_STORE_DOMAIN,
	 * else none. */
	const char *domain;
	uint32_t replicas;   /* replicas per put; 0 = 1 */
	int rpc_timeout_ms;  /* per master call; 5000 */
	int data_timeout_ms; /* per data-plane transfer; 30000 */
	uint32_t data_conns; /* data connections kept open; 0 = 16 */
	/* true: a new data connection per transfer, none kept (the client
	 * before connection reuse; for comparisons such as bench_client) */
	bool one_shot_data;
	/* The credential to authenticate to the master with (auth.h,
	 * rpc_auth.h), borrowed for the client's life; NULL = none (a
	 * master without --auth_file). */
	const struct auth_cred *cred;
	/* TLS to the master (tls.h, rpc_client_config.tls): a client
	 * context, borrowed; NULL = plain TCP. */
	struct ssl_ctx_st *tls;
	/* Read stamps without their master's tag, write them without one.
	 * Only for the benchmark baseline that measures what the tag costs
	 * (bench_client --grants, against daemons run with
	 * --insecure_no_grants_for_benchmarks; BENCHMARKS.md); never a
	 * default. false. */
	bool stamp_tags_off;
	/* Hedged reads: 0 = after the learnt delay (the default), > 0 =
	 * after this many ms, < 0 = never (the baseline of bench_hedge). */
	int hedge_ms;
	/* Send the payload's SHA-256 with every PutEnd, also where the
	 * tenant does not require it (the master says when it does:
	 * PutStartResponse.digest_required). Reads check a digest whenever
	 * the master gives one, whatever this says. false. */
	bool integrity;
};

void store_client_config_init(struct store_client_config *cfg);

/* Connects to the master at master_addr ("host:port"); tenant NULL =
 * "default"; cfg NULL = defaults (copied, strings too). On 0 *out is the
 * client (store_client_close()); else *out is NULL and err says why. */
int store_client_open(store_client **out, const char *master_addr,
		      const char *tenant, const struct store_client_config *cfg,
		      char *err, size_t errlen);

/* master_addr "etcd://host:port[,host:port]": the leader named by the
 * key /mcrepl/master/leader there (docs/HA.md), followed: a call that
 * fails in transport or is refused as not_leader waits (15 s at most) for
 * the next leader and is sent to it. How many times it moved: */
uint64_t store_client_leader_changes(const store_client *c);

/* Closes connections, frees. Accepts NULL. */
void store_client_close(store_client *c);

/* The last failure's one-line reason ("" after success). Owned by c. */
const char *store_client_error(const store_client *c);

/* Where a get was served from. */
struct store_read_info {
	uint64_t segment_id, version;
	char host_id[256];
	char endpoint[256];
	bool dynamic;
	uint32_t tried; /* replicas tried, the serving one included */
	bool hedged;	/* the next replica was read too (hedged reads) */
};

/* PutStart, a data-plane WRITE of buf to every replica with its token,
 * PutEnd; PutRevoke when any write fails. len must be > 0. */
int store_client_put(store_client *c, const char *key, const void *buf,
		     uint64_t len);

/* Reads the object into a malloc'd buffer (*buf_out, caller frees, of
 * *len_out bytes). info may be NULL. */
int store_client_get(store_client *c, const char *key, void **buf_out,
		     uint64_t *len_out, struct store_read_info *info);

/* GetReplicaList for key (*out: caller frees with
 * protobuf_c_message_free_unpacked), and the read of such a list into buf
 * (room for the object; the stamp is read apart) with stamp checks. For
 * callers that keep a list (tests, tools). */
int store_client_get_list(store_client *c, const char *key,
			  McreplRpc__GetReplicaListResponse **out);
int store_client_read_list(store_client *c,
			   const McreplRpc__GetReplicaListResponse *r,
			   uint8_t *buf, struct store_read_info *info);
/* Reads refused because a replica's stamp named another object. */
uint64_t store_client_stale_reads(const store_client *c);
/* Reads refused because a replica's bytes did not hash to the payload
 * digest the master gave (its writer's; docs/SECURITY.md "Payload
 * digests"): -ESTALE "payload digest mismatch (bytes not the ones
 * written)", then the next replica, as for a bad stamp. */
uint64_t store_client_digest_mismatches(const store_client *c);

int store_client_remove(store_client *c, const char *key);
int store_client_exist(store_client *c, const char *key, bool *exists);

struct store_replica_info {
	uint64_t segment_id, client_id, offset, size;
	char host_id[256], domain[128], endpoint[256];
	bool complete, dynamic;
};

struct store_object_info {
	uint64_t version, size;
	size_t n_replicas;
	struct store_replica_info replicas[64];
};

/* The readable replicas of key, in the master's metadata order, through
 * the master's Stat RPC: not a read (no heat, no LRU touch, no read
 * lease). Against a master without Stat (it answers UNKNOWN_METHOD or
 * UNIMPLEMENTED) the client falls back to GetReplicaList, for this and
 * later calls, which does count as a read there. NOT_FOUND when key has
 * no readable replica. */
int store_client_stat(store_client *c, const char *key,
		      struct store_object_info *out);

struct store_segment_info {
	uint64_t segment_id, client_id, capacity, used, reads;
	char name[256], host_id[256], domain[128], endpoint[256];
	bool dynamic_copy;
};

/* The master's segments (malloc'd array, caller frees) and, when text_out
 * is not NULL, its Prometheus metrics text (malloc'd, caller frees). */
int store_client_stats(store_client *c, struct store_segment_info **segs,
		       size_t *n_segs, char **text_out);

/* Ask a domain-aware master to warm `domain` with its hottest objects
 * (0 limits = the master's defaults); *queued = copies queued. */
int store_client_warmup(store_client *c, const char *domain,
			uint32_t max_copies, uint64_t max_bytes,
			uint32_t *queued);

/* Drain a host (admin; the master's Drain): copies of the objects whose
 * every readable replica is on host's segments go to other workers. One
 * call queues and reports; call again for progress. */
struct store_drain_info {
	uint32_t segments;
	uint64_t objects_left, copies_queued, copies_pending, no_target;
};
int store_client_drain(store_client *c, const char *host,
		       struct store_drain_info *out);

/* Cumulative data-plane connection counters of c (see data_client.h). */
struct store_data_stats {
	uint64_t connects, reuses, retries, evicted;
	size_t open;
	/* hedged reads: second replicas read because the first was slow;
	 * reads abandoned (their connection closed) when the other answered
	 * first; hedges whose replica answered first */
	uint64_t hedged, cancelled, hedge_wins;
	uint32_t hedge_delay_ms; /* the delay the next read would use */
};
void store_client_data_stats(const store_client *c,
			     struct store_data_stats *out);

/* ---- raw data plane (tools and tests) -------------------------------- */
/* One-shot: each call connects, sends one request and closes. */

/* The data-plane grant a Replica carries (zeros when it has none). */
struct data_grant store_replica_grant(const McreplRpc__Replica *r);

/* One WRITE of len bytes to endpoint's segment at offset with the master's
 * grant (NULL: none). 0, or a negative errno with a reason in err (the
 * worker's own text when it refused: -EACCES grant refused, -EKEYEXPIRED
 * grant expired, -ERANGE range, -ENOENT segment). */
int store_data_write(const char *endpoint, uint64_t segment_id, uint64_t offset,
		     const void *buf, uint64_t len,
		     const struct data_grant *grant, int timeout_ms, char *err,
		     size_t errlen);

/* One READ of len bytes into buf with the master's grant; as
 * store_data_write (-EACCES too when the region no longer holds the object
 * the grant names: the worker tells that apart from no forgery). */
int store_data_read(const char *endpoint, uint64_t segment_id, uint64_t offset,
		    void *buf, uint64_t len, const struct data_grant *grant,
		    int timeout_ms, char *err, size_t errlen);

#endif
