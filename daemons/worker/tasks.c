/*
 * REPLICA_COPY tasks, each an asynchronous chain on the loop:
 *
 *   FetchTasks -> [Dynamic]ReplicaCopyStart -> engine post_write
 *     -> [Dynamic]ReplicaCopyEnd    (copy succeeded)
 *     -> [Dynamic]ReplicaCopyRevoke (copy failed, or shutting down)
 *   -> MarkTaskToComplete(status) -> freed
 *
 * A refused Start goes straight to MarkTaskToComplete with its code. At
 * most max_copies tasks exist at once, so FetchTasks asks for no more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "netutil.h"
#include "span.h"
#include "stamp.h"
#include "worker.h"

#define FETCH_BACKOFF_MS 500

struct wtask {
	struct wtask *prev, *next;
	struct worker *w;
	uint64_t id, lease_id, version, size, src_seg, dst_seg, incarnation;
	uint64_t stamp_tag; /* the source's stamp must carry it (0: unknown) */
	bool dynamic, copying;
	char *tenant, *key;
	McreplRpc__Code status; /* reported by MarkTaskToComplete */
	char msg[512];
	char endpoint[320];
	char rdma_endpoint[320];
	struct copy_target target;
};

static void task_free(struct wtask *t)
{
	struct worker *w = t->w;

	if (t->prev)
		t->prev->next = t->next;
	else
		w->tasks = t->next;
	if (t->next)
		t->next->prev = t->prev;
	w->n_tasks--;
	free(t->tenant);
	free(t->key);
	free(t);
}

uint32_t tasks_copying(const struct worker *w)
{
	uint32_t n = 0;

	for (const struct wtask *t = w->tasks; t; t = t->next)
		n += t->copying;
	return n;
}

static McreplRpc__Code code_of(const McreplRpc__Result *r)
{
	return r ? r->code : MCREPL_RPC__CODE__OK;
}

static void free_resp(ProtobufCMessage *resp)
{
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
}

/* ---- the master's copy RPCs ------------------------------------------------ */

/* A copy step talks to the master with the plain (Copy*) or the dynamic
 * (DynamicReplicaCopy*) message family. The dynamic requests are the plain
 * ones plus lease_id, version (and message), and the responses share their
 * fields' names, so one builder fills either by field name. */
enum copy_step { STEP_START, STEP_END, STEP_REVOKE };

struct step_rpc {
	const char *method;
	const ProtobufCMessageDescriptor *req, *resp;
};

static const struct step_rpc step_rpcs[2][3] = {
    [false] =
	{
	    [STEP_START] = {"CopyStart",
			    &mcrepl_rpc__copy_start_request__descriptor,
			    &mcrepl_rpc__copy_start_response__descriptor},
	    [STEP_END] = {"CopyEnd", &mcrepl_rpc__copy_end_request__descriptor,
			  &mcrepl_rpc__copy_end_response__descriptor},
	    [STEP_REVOKE] = {"CopyRevoke",
			     &mcrepl_rpc__copy_revoke_request__descriptor,
			     &mcrepl_rpc__copy_revoke_response__descriptor},
	},
    [true] =
	{
	    [STEP_START] =
		{"DynamicReplicaCopyStart",
		 &mcrepl_rpc__dynamic_replica_copy_start_request__descriptor,
		 &mcrepl_rpc__dynamic_replica_copy_start_response__descriptor},
	    [STEP_END] =
		{"DynamicReplicaCopyEnd",
		 &mcrepl_rpc__dynamic_replica_copy_end_request__descriptor,
		 &mcrepl_rpc__dynamic_replica_copy_end_response__descriptor},
	    [STEP_REVOKE] =
		{"DynamicReplicaCopyRevoke",
		 &mcrepl_rpc__dynamic_replica_copy_revoke_request__descriptor,
		 &mcrepl_rpc__dynamic_replica_copy_revoke_response__descriptor},
	},
};

/* The field `name` of m if its type is `type`, else NULL (not in this
 * family's message). */
static void *field_at(const ProtobufCMessage *m, const char *name,
		      ProtobufCType type)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
							    name);

	return f && f->type == type ? (char *)(uintptr_t)m + f->offset : NULL;
}

static void set_u64(ProtobufCMessage *m, const char *name, uint64_t v)
{
	uint64_t *p = field_at(m, name, PROTOBUF_C_TYPE_UINT64);

	if (p)
		*p = v;
}

static void set_str(ProtobufCMessage *m, const char *name, char *v)
{
	char **p = field_at(m, name, PROTOBUF_C_TYPE_STRING);

	if (p)
		*p = v;
}

/* A response's message field `name`, or NULL. */
static const void *resp_field(const ProtobufCMessage *r, const char *name)
{
	void *const *p = r ? field_at(r, name, PROTOBUF_C_TYPE_MESSAGE) : NULL;

	return p ? *p : NULL;
}

/* Sends step of t's copy to the master; cb gets the response. */
static void call_step(struct wtask *t, enum copy_step step, rpc_aclient_cb cb)
{
	const struct step_rpc *rpc = &step_rpcs[t->dynamic][step];
	union {
		ProtobufCMessage base;
		McreplRpc__CopyStartRequest start;
		McreplRpc__CopyEndRequest end;
		McreplRpc__CopyRevokeRequest revoke;
		McreplRpc__DynamicReplicaCopyStartRequest dyn_start;
		McreplRpc__DynamicReplicaCopyEndRequest dyn_end;
		McreplRpc__DynamicReplicaCopyRevokeRequest dyn_revoke;
	} req;

	protobuf_c_message_init(rpc->req, &req);
	set_u64(&req.base, "client_id", t->w->client_id);
	set_u64(&req.base, "task_id", t->id);
	set_u64(&req.base, "lease_id", t->lease_id);
	set_u64(&req.base, "version", t->version);
	set_str(&req.base, "tenant", t->tenant);
	set_str(&req.base, "key", t->key);
	if (step == STEP_START) {
		set_u64(&req.base, "source_segment_id", t->src_seg);
		set_u64(&req.base, "target_segment_id", t->dst_seg);
	}
	if (step == STEP_REVOKE)
		set_str(&req.base, "message", t->msg);
	worker_call(t->w, rpc->method, &req.base, rpc->resp, cb, t);
}

/* ---- the last step: report ------------------------------------------------ */

static void on_marked(int status, ProtobufCMessage *resp, const char *error,
		      void *arg)
{
	struct wtask *t = arg;

	static struct ratelog rl;

	if (status != RPC_OK)
		ratelog(&rl, LOG_WARN, "task %llu: MarkTaskToComplete: %s",
			(unsigned long long)t->id, error);
	free_resp(resp);
	task_free(t);
}

static void mark(struct wtask *t, McreplRpc__Code code, const char *msg)
{
	static struct ratelog rl;
	McreplRpc__MarkTaskToCompleteRequest req;

	t->status = code;
	if (msg != t->msg)
		snprintf(t->msg, sizeof(t->msg), "%s", msg ? msg : "");
	if (code != MCREPL_RPC__CODE__OK)
		ratelog(&rl, LOG_WARN, "task %llu (%s) failed: %s",
			(unsigned long long)t->id, t->key, t->msg);
	mcrepl_rpc__mark_task_to_complete_request__init(&req);
	req.client_id = t->w->client_id;
	req.task_id = t->id;
	req.status = code;
	req.message = t->msg;
	worker_call(t->w, "MarkTaskToComplete", &req.base,
		    &mcrepl_rpc__mark_task_to_complete_response__descriptor,
		    on_marked, t);
}

/* ---- end or revoke --------------------------------------------------------- */

static void ended(struct wtask *t, int status, const char *error,
		  const McreplRpc__Result *res)
{
	McreplRpc__Code code =
	    status != RPC_OK ? MCREPL_RPC__CODE__UNAVAILABLE : code_of(res);
	char msg[sizeof(t->msg)];

	if (code == MCREPL_RPC__CODE__OK) {
		t->w->ctr.copies_completed++;
		t->w->ctr.copy_bytes += t->size;
		mark(t, code, "");
		return;
	}
	snprintf(msg, sizeof(msg), "copy end refused: %s%s%s",
		 status != RPC_OK ? error
		 : res->message	  ? res->message
				  : "",
		 res && res->reason && res->reason[0] ? " reason=" : "",
		 res && res->reason ? res->reason : "");
	t->w->ctr.copies_failed++;
	mark(t, code, msg);
}

static void on_ended(int status, ProtobufCMessage *resp, const char *error,
		     void *arg)
{
	ended(arg, status, error, resp_field(resp, "result"));
	free_resp(resp);
}

static void on_revoked(int status, ProtobufCMessage *resp, const char *error,
		       void *arg)
{
	struct wtask *t = arg;

	static struct ratelog rl;

	if (status != RPC_OK)
		ratelog(&rl, LOG_WARN, "task %llu: revoke: %s",
			(unsigned long long)t->id, error);
	free_resp(resp);
	mark(t, t->status, t->msg);
}

static void end_copy(struct wtask *t)
{
	call_step(t, STEP_END, on_ended);
}

/* The copy will not complete: release the master's target, then report
 * code with the reason. */
static void revoke(struct wtask *t, McreplRpc__Code code, const char *why)
{
	t->status = code;
	snprintf(t->msg, sizeof(t->msg), "%s", why);
	call_step(t, STEP_REVOKE, on_revoked);
}

/* ---- the copy itself -------------------------------------------------------- */

static void copy_done(int status, const char *error, void *arg)
{
	struct wtask *t = arg;
	char why[sizeof(t->msg)];

	t->copying = false;
	if (status == 0) {
		end_copy(t);
		return;
	}
	t->w->ctr.copies_failed++;
	snprintf(why, sizeof(why), "copy to %s failed: %s", t->endpoint,
		 error ? error : strerror(-status));
	revoke(t,
	       status == -ECANCELED ? MCREPL_RPC__CODE__UNAVAILABLE
				    : MCREPL_RPC__CODE__INTERNAL,
	       why);
}

/* Where to copy from, checked against our own segments. */
static const uint8_t *source_bytes(struct wtask *t,
				   const McreplRpc__Replica *src,
				   const McreplRpc__Replica *dst, char *why,
				   size_t cap)
{
	struct wseg *s = src ? worker_segment(t->w, src->segment_id) : NULL;

	if (!s || !dst || !dst->endpoint || !dst->endpoint[0]) {
		snprintf(
		    why, cap,
		    "start reply names no local source segment or no target");
		return NULL;
	}
	if (src->size != dst->size || src->stamp_bytes != dst->stamp_bytes ||
	    (src->stamp_bytes && src->stamp_bytes != STAMP_BYTES) ||
	    !span_within2(src->offset, src->stamp_bytes, src->size, s->len)) {
		snprintf(
		    why, cap,
		    "source [%llu, +%llu+%u) does not fit segment %llu or target size %llu+%u differs",
		    (unsigned long long)src->offset,
		    (unsigned long long)src->size, src->stamp_bytes,
		    (unsigned long long)s->id, (unsigned long long)dst->size,
		    dst->stamp_bytes);
		return NULL;
	}
	return (const uint8_t *)s->mem + src->offset;
}

/* A stamped source region must hold the task's object, whole: a region
 * reused or torn is never copied (it would become a replica). */
static bool source_is_the_object(const struct wtask *t,
				 const McreplRpc__Replica *src,
				 const uint8_t *bytes, char *why, size_t cap)
{
	struct stamp_id want = {
	    .incarnation = t->incarnation,
	    .object_id = t->version,
	    .key_hash = stamp_key_hash(t->tenant, strlen(t->tenant), t->key,
				       strlen(t->key)),
	    .length = src->size,
	    .tag = t->stamp_tag,
	};
	enum stamp_result r;

	if (!src->stamp_bytes)
		return true;
	r = stamp_verify(bytes, STAMP_BYTES + (size_t)src->size, &want);
	if (r == STAMP_OK)
		return true;
	snprintf(why, cap, "source segment %llu offset %llu: %s",
		 (unsigned long long)src->segment_id,
		 (unsigned long long)src->offset, stamp_result_text(r));
	return false;
}

/* rdma reaches a target at the rdma_cm endpoint the master hands out
 * with it; a master that predates the field sends none: tcp copies. */
static struct copy_engine *engine_for(struct worker *w,
				      const McreplRpc__Replica *dst)
{
	if (!w->engine || !w->tcp_engine ||
	    (dst->rdma_endpoint && dst->rdma_endpoint[0]))
		return w->engine;
	if (!w->tcp_fallback_logged)
		log_line(LOG_WARN,
			 "target %s came without an rdma endpoint (a master "
			 "older than this worker, or a target without rdma): "
			 "copying over tcp",
			 dst->endpoint);
	w->tcp_fallback_logged = true;
	return w->tcp_engine;
}

static void start_copy(struct wtask *t, const McreplRpc__Replica *src,
		       const McreplRpc__Replica *dst)
{
	struct copy_engine *engine;
	char why[sizeof(t->msg)];
	const uint8_t *bytes = source_bytes(t, src, dst, why, sizeof(why));
	int st;

	if (!bytes) {
		revoke(t, MCREPL_RPC__CODE__INTERNAL, why);
		return;
	}
	if (!source_is_the_object(t, src, bytes, why, sizeof(why))) {
		t->w->ctr.copies_stale_source++;
		revoke(t, MCREPL_RPC__CODE__STALE, why);
		return;
	}
	snprintf(t->endpoint, sizeof(t->endpoint), "%s", dst->endpoint);
	t->size = src->size;
	snprintf(t->rdma_endpoint, sizeof(t->rdma_endpoint), "%s",
		 dst->rdma_endpoint ? dst->rdma_endpoint : "");
	t->target = (struct copy_target){
	    .endpoint = t->endpoint,
	    .segment_id = dst->segment_id,
	    .offset = dst->offset,
	    .length = dst->size + dst->stamp_bytes,
	    .grant = {.object_id = dst->grant_object_id,
		      .expires_ms = dst->grant_expires_ms,
		      .tag = dst->grant_tag},
	    .remote_addr = dst->remote_addr,
	    .rkey = dst->rkey,
	    .rdma_endpoint = t->rdma_endpoint,
	};
	engine = engine_for(t->w, dst);
	st = engine ? engine->ops->post_write(engine, bytes,
					      src->size + src->stamp_bytes,
					      &t->target, copy_done, t)
		    : -ECANCELED;
	if (st) {
		snprintf(why, sizeof(why), "cannot post copy to %s: %s",
			 t->endpoint, strerror(-st));
		revoke(t, MCREPL_RPC__CODE__INTERNAL, why);
		return;
	}
	t->copying = true;
	t->w->ctr.copies_started++;
}

static void started(struct wtask *t, int status, const char *error,
		    const McreplRpc__Result *res, const McreplRpc__Replica *src,
		    const McreplRpc__Replica *dst)
{
	char why[sizeof(t->msg)];

	if (status != RPC_OK) {
		snprintf(why, sizeof(why), "copy start: %s", error);
		revoke(t, MCREPL_RPC__CODE__UNAVAILABLE, why);
	} else if (code_of(res) != MCREPL_RPC__CODE__OK) {
		snprintf(why, sizeof(why), "copy start refused: %s%s%s",
			 res->message ? res->message : "",
			 res->reason && res->reason[0] ? " reason=" : "",
			 res->reason ? res->reason : "");
		mark(t, res->code, why);
	} else if (t->w->stopping) {
		revoke(t, MCREPL_RPC__CODE__UNAVAILABLE,
		       "worker shutting down");
	} else {
		start_copy(t, src, dst);
	}
}

static void on_started(int status, ProtobufCMessage *resp, const char *error,
		       void *arg)
{
	started(arg, status, error, resp_field(resp, "result"),
		resp_field(resp, "source"), resp_field(resp, "target"));
	free_resp(resp);
}

static void start_task(struct wtask *t)
{
	call_step(t, STEP_START, on_started);
}

/* ---- fetching ------------------------------------------------------------------ */

static struct wtask *task_new(struct worker *w, const McreplRpc__Task *m)
{
	struct wtask *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tenant = strdup(m->tenant ? m->tenant : "");
	t->key = strdup(m->key ? m->key : "");
	if (!t->tenant || !t->key) {
		free(t->tenant);
		free(t->key);
		free(t);
		return NULL;
	}
	t->w = w;
	t->id = m->task_id;
	t->lease_id = m->lease_id;
	t->version = m->version;
	t->incarnation = m->incarnation;
	t->stamp_tag = m->stamp_tag;
	t->size = m->size;
	t->src_seg = m->source_segment_id;
	t->dst_seg = m->target_segment_id;
	t->dynamic = m->dynamic;
	t->next = w->tasks;
	if (w->tasks)
		w->tasks->prev = t;
	w->tasks = t;
	w->n_tasks++;
	return t;
}

static void run_task(struct worker *w, const McreplRpc__Task *m)
{
	struct wtask *t = task_new(w, m);

	if (!t) {
		log_line(LOG_ERROR, "out of memory for task %llu",
			 (unsigned long long)m->task_id);
		return;
	}
	w->ctr.tasks_fetched++;
	if (m->type != MCREPL_RPC__TASK_TYPE__REPLICA_COPY)
		mark(t, MCREPL_RPC__CODE__UNIMPLEMENTED, "unknown task type");
	else if (w->stopping)
		mark(t, MCREPL_RPC__CODE__UNAVAILABLE, "worker shutting down");
	else
		start_task(t);
}

/* The master's revocations of WRITE grants, in seq order, up to the first
 * this data port cannot record (then not acknowledged: sent again). */
static void apply_revokes(struct worker *w, McreplRpc__WriteRevoke **v,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const McreplRpc__WriteRevoke *r = v[i];

		if (r->seq <= w->revoke_ack)
			continue;
		if (data_server_revoke_write(w->ds, r->segment_id, r->offset,
					     r->length, r->object_id,
					     r->until_ms) != 0)
			return;
		w->revoke_ack = r->seq;
	}
}

static void on_fetched(int status, ProtobufCMessage *resp, const char *error,
		       void *arg)
{
	struct worker *w = arg;
	McreplRpc__FetchTasksResponse *r =
	    (McreplRpc__FetchTasksResponse *)resp;
	bool journaled = false;

	(void)error; /* the heartbeat reports an unreachable master */
	w->fetch_pending = false;
	if (status != RPC_OK) {
		w->next_fetch_ms = net_now_ms() + FETCH_BACKOFF_MS;
		ha_master_failed(w, NULL); /* HA: look the leader up again */
	}
	if (status == RPC_OK &&
	    code_of(r->result) == MCREPL_RPC__CODE__UNKNOWN_CLIENT) {
		control_remount(w);
	} else if (status == RPC_OK && !ha_master_failed(w, r->result)) {
		ha_index_apply(w, r->index, r->n_index);
		apply_revokes(w, r->revokes, r->n_revokes);
		for (size_t i = 0; i < r->n_tasks; i++)
			run_task(w, r->tasks[i]);
		journaled = r->n_index > 0;
	}
	free_resp(resp);
	/* removes and puts wait for this acknowledgement (docs/HA.md): at
	 * once */
	if (journaled)
		tasks_tick(w);
}

void tasks_tick(struct worker *w)
{
	McreplRpc__FetchTasksRequest req;

	if (w->stopping || w->fetch_pending || !worker_all_mounted(w) ||
	    w->n_tasks >= w->flags.max_copies ||
	    net_now_ms() < w->next_fetch_ms)
		return;
	mcrepl_rpc__fetch_tasks_request__init(&req);
	req.client_id = w->client_id;
	req.max_tasks = w->flags.max_copies - w->n_tasks;
	req.index_ack = w->index_ack;
	req.revoke_ack = w->revoke_ack;
	w->fetch_pending = true;
	worker_call(w, "FetchTasks", &req.base,
		    &mcrepl_rpc__fetch_tasks_response__descriptor, on_fetched,
		    w);
}
