/*
 * mcrepl-worker internals shared by its files: the worker state, the
 * master link (control.c: mount, heartbeat, unmount), the task executor
 * (tasks.c: FetchTasks, dynamic copies), segment memory (segment.c) and
 * /metrics (metrics.c). Everything runs on one libevent loop; no call here
 * blocks it.
 */
#ifndef MCREPL_WORKER_H
#define MCREPL_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "auth.h"
#include "client_auth.h"
#include "copy_engine.h"
#include "data_server.h"
#include "flags.h"
#include "mcrepl.pb-c.h"
#include "ratelog.h"
#include "rpc_client.h"

struct worker;

struct widx; /* ha.c: the index of committed replicas */

struct wseg {
	struct worker *w;
	struct widx *index; /* committed replicas held here (HA) */
	bool registering;   /* RegisterObjects batches in flight */
	void *mem;
	uint64_t len;
	bool huge;	    /* backed by huge pages */
	int slot;	    /* data server slot */
	char name[320];	    /* unique per segment: host/client/index */
	uint64_t base_addr; /* as registered with the copy engine (RDMA) */
	uint32_t rkey;
	uint64_t id;  /* the master's segment id, 0 before the first mount */
	bool mounted; /* the current master knows it */
	bool mount_pending, unmount_pending;
	int64_t mount_sent_ms; /* when its pending MountSegment left */
	uint64_t mounted_inc;  /* HA: the master it was last mounted at */
	/* HA: the fence of its mount at the previous master (fence_inc,
	 * fence_id) is still to be read before it re-registers (ha.c);
	 * fence_scan: then look for that master's orphans too */
	bool fence_pending, fence_inflight, fence_scan;
	uint64_t fence_inc, fence_id;
	int64_t fence_next_ms;
};

struct worker_counters {
	uint64_t copies_started, copies_completed, copies_failed;
	uint64_t copies_stale_source; /* source stamp named another object */
	uint64_t copy_bytes, tasks_fetched, remounts;
	/* HA (ha.c) */
	uint64_t leader_changes, objects_registered, register_refused;
	uint64_t
	    stamps_bad; /* index entries whose region no longer holds them */
	uint64_t fences_found; /* mounts found fenced at a new leader */
};

struct etcd;

struct wtask;

struct worker {
	struct worker_flags flags;
	struct event_base *base;
	struct wseg *segs;
	uint32_t n_segs;
	struct data_server *ds;
	struct copy_engine *engine; /* NULL once shutting down */
	/* rdma workers: copies to targets the master names no rdma
	 * endpoint for (an older master, a worker without rdma) */
	struct copy_engine *tcp_engine;
	bool tcp_fallback_logged;
	const char *transport; /* engine name */
	rpc_aclient *rpc;
	/* --principal with --secret_file or a certificate, --tls_ca: how it
	 * calls the master (client_auth.h) */
	struct client_auth auth;
	SSL_CTX *tls_http; /* --tls_cert/--tls_key: /metrics over TLS */
	struct evhttp *http;
	struct httpcap *http_cap; /* its connection caps (httpcap.h) */
	uint16_t metrics_port;
	struct event *tick, *sigterm, *sigint;
	char endpoint[320];	 /* advertised "host:data_port" */
	char rdma_endpoint[320]; /* advertised "ip:rdma_cm_port", "" on tcp */
	char caps[2][16]; /* "dynamic_copy", "rdma" (protobuf wants char *) */
	uint64_t client_id;
	bool clock_known;   /* that master's clock offset is set */
	int64_t hb_sent_ms; /* when the pending Heartbeat left */
	uint32_t hb_interval_ms;
	int64_t next_hb_ms, next_mount_ms, next_fetch_ms, stop_deadline_ms;
	bool ready, hb_pending, fetch_pending, stopping, unmounting;
	bool master_down_logged;
	struct ratelog rl_mount; /* "mount refused", once a second */
	uint32_t mount_failures; /* in a row: the retry backs off */
	/* a refusal no retry can change (control.c): the loop ends and the
	 * worker exits 78 (EX_CONFIG) after one line naming what to fix */
	bool fatal;
	/* drain (drain.c): on SIGTERM, until drain_deadline_ms */
	bool draining, drain_pending;
	int64_t drain_deadline_ms, drain_started_ms, next_drain_ms;
	uint64_t drain_copies; /* queued by the master for this drain */
	struct wtask *tasks;
	uint32_t n_tasks;
	struct worker_counters ctr;
	/* HA (ha.c): the leader from etcd, the index feed */
	struct etcd *etcd;
	bool need_leader, resolving;
	int64_t next_resolve_ms;
	uint64_t index_ack;   /* journal seq applied from the current master */
	uint64_t revoke_ack;  /* WRITE grant revocations applied, the same */
	uint64_t incarnation; /* the current master's */
	/* the highest version the current master's journal committed here,
	 * and the previous master's incarnation and highest version: stamps
	 * of it above that are puts the journal did not reach (orphans) */
	uint64_t fed_max_version, prev_incarnation, prev_max_version;
	/* expired: the master forgot us (UNKNOWN_CLIENT); no_orphans: stamps
	 * of the current master are not trusted as orphans at the next one.
	 * A master that expires us fences our mounts in etcd: the next one
	 * then gets nothing of them (hafence.h) */
	bool expired, no_orphans;
	uint64_t indexes_forgotten; /* mcrepl_worker_index_forgotten_total */
};

/* ---- drain before stopping (drain.c) ---- */

/* A stop signal: drain first when --drain_timeout_ms and mounted, then
 * stop (worker_stop). Returns true when a drain started. */
bool drain_begin(struct worker *w);
/* Ask the master again when due; stop once drained or out of time. */
void drain_tick(struct worker *w, int64_t now_ms);
/* Stop: fail the copies in flight, then unmount (main.c). */
void worker_stop(struct worker *w);

/* ---- master link (control.c) ---- */

/* Calls Master method `name` on the async client. cb runs exactly once:
 * later from the loop, or at once (with a failure status) when the call
 * cannot be issued; call it only in tail position. */
void worker_call(struct worker *w, const char *name,
		 const ProtobufCMessage *req,
		 const ProtobufCMessageDescriptor *resp_desc, rpc_aclient_cb cb,
		 void *arg);

/* Mount what is not mounted, heartbeat when due. */
void control_tick(struct worker *w, int64_t now_ms);
/* The master forgot this client (restart or TTL): mount everything again. */
void control_remount(struct worker *w);
/* Unmount every mounted segment; breaks the loop when done. */
void control_unmount_all(struct worker *w);
/* After the loop ended during a stop (a second signal, the grace period
 * over): unmount, blocking, every segment the master may still list (its
 * async unmount not answered yet), all within budget_ms. Returns how many
 * could not be unmounted. */
int control_unmount_sync(struct worker *w, int budget_ms);
/* The segment with master id `id`, or NULL. */
struct wseg *worker_segment(struct worker *w, uint64_t id);
bool worker_all_mounted(const struct worker *w);
uint32_t worker_mounted_count(const struct worker *w);

/* ---- tasks (tasks.c) ---- */

/* Poll FetchTasks when there is room for more copies. */
void tasks_tick(struct worker *w);
/* Copies in flight (posted to the engine) right now. */
uint32_t tasks_copying(const struct worker *w);

/* ---- high availability (ha.c, docs/HA.md) ---- */

/* Set up etcd when --etcd_endpoints is given (the leader is looked up
 * before the first mount). 0, or -1 with err. */
int ha_setup(struct worker *w, char *err, size_t errlen);
void ha_teardown(struct worker *w);
/* Look the leader up when needed; switch the master link to it. */
void ha_tick(struct worker *w, int64_t now_ms);
/* A master call failed in transport (down) or was refused as not the
 * leader (r: its Result): look the leader up again. Returns true when r
 * said not_leader. */
bool ha_master_failed(struct worker *w, const McreplRpc__Result *r);
/* A segment was (re)mounted at a master of this incarnation. */
void ha_mounted(struct worker *w, struct wseg *s, uint64_t prev_id,
		uint64_t incarnation);
/* Whether s's mount should hold placement (it has replicas to register). */
bool ha_hold(const struct wseg *s);
/* Apply journal entries from FetchTasks. */
void ha_index_apply(struct worker *w, McreplRpc__IndexEntry **e, size_t n);
size_t ha_index_size(const struct wseg *s);

/* ---- segment memory (segment.c) ---- */

/* Maps len bytes (huge pages first when asked, else or on failure normal
 * pages). 0, or -1 with a reason in err. */
int segment_map(struct wseg *s, uint64_t len, bool hugepages, char *err,
		size_t errlen);
void segment_unmap(struct wseg *s);
/* Which pages of [off, off + len) are in memory (mincore(2)): vec[i] & 1
 * for the i-th page; at most cap pages, their number returned (0: off not
 * on a page boundary or past the end). A page never touched is not, so
 * it holds no stamp; a page swapped out is not either (segment memory is
 * not expected to be). On error every page says resident. */
size_t segment_resident(const struct wseg *s, uint64_t off, uint64_t len,
			unsigned char *vec, size_t cap);

/* ---- the master's RPC (main.c) ---- */

/* rpc_client_config_init() plus the worker's credential and TLS. */
void worker_rpc_config(const struct worker *w, rpc_client_config *cfg);

/* ---- metrics (metrics.c) ---- */

/* Serves /metrics on data_address:metrics_port. 0 or -1 (err). */
int metrics_start(struct worker *w, char *err, size_t errlen);
void metrics_stop(struct worker *w);

#endif
