/* RPC handlers of mcrepl-master: protobuf in, store operation, protobuf
 * out. Every input is validated by the store; bad input gets a Result with
 * a code and one clear line, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service.h"

#define SVC(s) ((struct master_service *)(void *)(s))
#define MAX_TASKS_PER_FETCH 256

struct reply {
	McreplRpc__Result result;
	char msg[256];
};

static void reply_init(struct reply *r, McreplRpc__Code code,
		       const char *reason)
{
	mcrepl_rpc__result__init(&r->result);
	r->result.code = code;
	r->result.reason = (char *)(uintptr_t)(reason ? reason : "");
	r->result.message = r->msg;
	if (!r->msg[0] && code != MCREPL_RPC__CODE__OK)
		snprintf(r->msg, sizeof(r->msg), "%s",
			 protobuf_c_enum_descriptor_get_value(
			     &mcrepl_rpc__code__descriptor, (int)code)
			     ? protobuf_c_enum_descriptor_get_value(
				   &mcrepl_rpc__code__descriptor, (int)code)
				   ->name
			     : "error");
}

static char *mut(const char *s)
{
	return (char *)(uintptr_t)(s ? s : "");
}

/* A replica message for r (strings borrowed from the store). */
static void fill_replica(struct store *s, McreplRpc__Replica *m,
			 const struct replica *r, bool with_grant)
{
	struct segment *seg = store_segment(s, r->segment_id);

	mcrepl_rpc__replica__init(m);
	m->segment_id = r->segment_id;
	m->offset = r->offset;
	m->size = r->size;
	m->status = r->status == REPLICA_COMPLETE
			? MCREPL_RPC__REPLICA_STATUS__COMPLETE
			: MCREPL_RPC__REPLICA_STATUS__PROCESSING;
	m->dynamic = r->dynamic;
	if (with_grant)
		m->write_token = store_grant(s, r);
	if (!seg)
		return;
	m->client_id = seg->client_id;
	m->host_id = seg->host;
	m->domain = seg->domain;
	m->endpoint = seg->endpoint;
	m->remote_addr = seg->base_addr + r->offset;
	m->rkey = seg->rkey;
}

/* ---- segments ------------------------------------------------------------ */

static bool has_cap(const McreplRpc__MountSegmentRequest *req, const char *cap)
{
	for (size_t i = 0; i < req->n_capabilities; i++)
		if (strcmp(req->capabilities[i], cap) == 0)
			return true;
	return false;
}

static void h_mount(McreplRpc__Master_Service *svc,
		    const McreplRpc__MountSegmentRequest *req,
		    McreplRpc__MountSegmentResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	struct mount_args a = {
	    .client_id = req->client_id,
	    .host = req->host_id,
	    .domain = req->domain,
	    .name = req->name,
	    .endpoint = req->endpoint,
	    .capacity = req->capacity,
	    .base_addr = req->base_addr,
	    .rkey = req->rkey,
	    .dynamic_copy = has_cap(req, "dynamic_copy"),
	};
	McreplRpc__MountSegmentResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__mount_segment_response__init(&resp);
	resp.heartbeat_interval_ms =
	    (uint32_t)(store_opts(s)->client_ttl_ms / 4);
	resp.grant_key = store_grant_key(s);
	store_lock(s);
	/* a domain joining a running cluster is warmed with what is hot */
	code = store_mount(s, &a, SVC(svc)->now_ms(), &resp.segment_id, r.msg,
			   sizeof(r.msg));
	store_unlock(s);
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

static void h_unmount(McreplRpc__Master_Service *svc,
		      const McreplRpc__UnmountSegmentRequest *req,
		      McreplRpc__UnmountSegmentResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__UnmountSegmentResponse resp;
	struct reply r = {0};

	mcrepl_rpc__unmount_segment_response__init(&resp);
	store_lock(s);
	reply_init(&r,
		   store_unmount(s, req->client_id, req->segment_id,
				 SVC(svc)->now_ms()),
		   NULL);
	store_unlock(s);
	resp.result = &r.result;
	done(&resp, cd);
}

static void h_heartbeat(McreplRpc__Master_Service *svc,
			const McreplRpc__HeartbeatRequest *req,
			McreplRpc__HeartbeatResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__HeartbeatResponse resp;
	struct reply r = {0};
	size_t n = req->n_segment_ids < req->n_segment_reads
		       ? req->n_segment_ids
		       : req->n_segment_reads;

	mcrepl_rpc__heartbeat_response__init(&resp);
	store_lock(s);
	reply_init(&r,
		   store_heartbeat(s, req->client_id, req->segment_ids,
				   req->segment_reads, n, SVC(svc)->now_ms()),
		   NULL);
	store_unlock(s);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- puts ---------------------------------------------------------------- */

static void h_put_start(McreplRpc__Master_Service *svc,
			const McreplRpc__PutStartRequest *req,
			McreplRpc__PutStartResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__PutStartResponse resp;
	McreplRpc__Replica msgs[16], *ptrs[16];
	struct reply r = {0};
	struct object *o = NULL;
	McreplRpc__Code code;

	mcrepl_rpc__put_start_response__init(&resp);
	store_lock(s);
	code = store_put_start(s, req->tenant, req->key, req->size,
			       req->replica_num, SVC(svc)->now_ms(), &o, r.msg,
			       sizeof(r.msg));
	if (code == MCREPL_RPC__CODE__OK) {
		resp.version = o->version;
		for (size_t i = 0; i < o->n_replicas && i < 16; i++) {
			fill_replica(s, &msgs[i], &o->replicas[i], true);
			ptrs[i] = &msgs[i];
			resp.n_replicas = i + 1;
		}
		resp.replicas = ptrs;
	}
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
}

static void h_put_end(McreplRpc__Master_Service *svc,
		      const McreplRpc__PutEndRequest *req,
		      McreplRpc__PutEndResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__PutEndResponse resp;
	struct reply r = {0};

	mcrepl_rpc__put_end_response__init(&resp);
	store_lock(s);
	reply_init(&r, store_put_end(s, req->tenant, req->key, req->version),
		   NULL);
	store_unlock(s);
	resp.result = &r.result;
	done(&resp, cd);
}

static void h_put_revoke(McreplRpc__Master_Service *svc,
			 const McreplRpc__PutRevokeRequest *req,
			 McreplRpc__PutRevokeResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__PutRevokeResponse resp;
	struct reply r = {0};

	mcrepl_rpc__put_revoke_response__init(&resp);
	store_lock(s);
	reply_init(&r, store_put_revoke(s, req->tenant, req->key, req->version),
		   NULL);
	store_unlock(s);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- reads --------------------------------------------------------------- */

/* One key's answer; replica messages live in msgs/ptrs (MAX each). */
struct get_answer {
	McreplRpc__GetReplicaListResponse resp;
	struct reply r;
	McreplRpc__Replica msgs[MASTER_MAX_REPLICAS];
	McreplRpc__Replica *ptrs[MASTER_MAX_REPLICAS];
};

/* Fills a with the outcome of a lookup: on OK the replicas order[0..n) of
 * o; lease_ttl_ms is the read lease the lookup granted (0: none). */
static void answer_object(struct store *s, struct get_answer *a,
			  const char *key, McreplRpc__Code code,
			  const struct object *o, const size_t *order, size_t n,
			  uint64_t lease_ttl_ms)
{
	a->resp.key = mut(key);
	if (code == MCREPL_RPC__CODE__OK) {
		a->resp.version = o->version;
		a->resp.size = o->size;
		a->resp.lease_ttl_ms = lease_ttl_ms;
		for (size_t i = 0; i < n; i++) {
			fill_replica(s, &a->msgs[i], &o->replicas[order[i]],
				     false);
			a->ptrs[i] = &a->msgs[i];
		}
		a->resp.n_replicas = n;
		a->resp.replicas = a->ptrs;
	}
	reply_init(&a->r, code, NULL);
	a->resp.result = &a->r.result;
}

static void answer_get(struct store *s, struct get_answer *a,
		       const char *tenant, const char *key, const char *domain,
		       uint64_t now)
{
	size_t order[MASTER_MAX_REPLICAS], n = 0;
	struct object *o = NULL;
	McreplRpc__Code code;

	mcrepl_rpc__get_replica_list_response__init(&a->resp);
	a->r.msg[0] = '\0';
	code = store_get(s, tenant, key, domain, now, &o, order,
			 MASTER_MAX_REPLICAS, &n);
	if (code == MCREPL_RPC__CODE__INVALID_ARGUMENT)
		store_key_valid(tenant, key, a->r.msg, sizeof(a->r.msg));
	answer_object(s, a, key, code, o, order, n,
		      store_opts(s)->kv_lease_ttl_ms);
}

/* A zeroed answer, or NULL after replying INTERNAL (out of memory). */
static struct get_answer *
answer_alloc(McreplRpc__GetReplicaListResponse_Closure done, void *cd)
{
	struct get_answer *a = calloc(1, sizeof(*a));
	McreplRpc__GetReplicaListResponse oom;
	struct reply r = {0};

	if (a)
		return a;
	mcrepl_rpc__get_replica_list_response__init(&oom);
	reply_init(&r, MCREPL_RPC__CODE__INTERNAL, NULL);
	oom.result = &r.result;
	done(&oom, cd);
	return NULL;
}

static void h_get(McreplRpc__Master_Service *svc,
		  const McreplRpc__GetReplicaListRequest *req,
		  McreplRpc__GetReplicaListResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	struct get_answer *a = answer_alloc(done, cd);

	if (!a)
		return;
	store_lock(s);
	store_read_begin(s);
	answer_get(s, a, req->tenant, req->key, req->requester_domain,
		   SVC(svc)->now_ms());
	done(&a->resp, cd);
	store_unlock(s);
	free(a);
}

/* GetReplicaList's answer without its side effects (store_stat). */
static void h_stat(McreplRpc__Master_Service *svc,
		   const McreplRpc__StatRequest *req,
		   McreplRpc__GetReplicaListResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	struct get_answer *a = answer_alloc(done, cd);
	size_t order[MASTER_MAX_REPLICAS], n = 0;
	struct object *o = NULL;
	McreplRpc__Code code;

	if (!a)
		return;
	mcrepl_rpc__get_replica_list_response__init(&a->resp);
	store_lock(s);
	code = store_stat(s, req->tenant, req->key, &o, order,
			  MASTER_MAX_REPLICAS, &n, a->r.msg, sizeof(a->r.msg));
	answer_object(s, a, req->key, code, o, order, n, 0);
	done(&a->resp, cd);
	store_unlock(s);
	free(a);
}

static void h_batch_get(McreplRpc__Master_Service *svc,
			const McreplRpc__BatchGetReplicaListRequest *req,
			McreplRpc__BatchGetReplicaListResponse_Closure done,
			void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__BatchGetReplicaListResponse resp;
	struct get_answer *a = NULL;
	McreplRpc__GetReplicaListResponse **ptrs = NULL;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;
	uint64_t now = SVC(svc)->now_ms();

	mcrepl_rpc__batch_get_replica_list_response__init(&resp);
	code = store_batch_check(s, req->n_keys, r.msg, sizeof(r.msg));
	if (code == MCREPL_RPC__CODE__OK) {
		a = calloc(req->n_keys, sizeof(*a));
		ptrs = calloc(req->n_keys, sizeof(*ptrs));
		if (!a || !ptrs)
			code = MCREPL_RPC__CODE__INTERNAL;
	}
	store_lock(s);
	if (code == MCREPL_RPC__CODE__OK) {
		store_read_begin(s);
		for (size_t i = 0; i < req->n_keys; i++) {
			answer_get(s, &a[i], req->tenant, req->keys[i],
				   req->requester_domain, now);
			ptrs[i] = &a[i].resp;
		}
		resp.n_entries = req->n_keys;
		resp.entries = ptrs;
	}
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
	free(a);
	free(ptrs);
}

static void h_exist(McreplRpc__Master_Service *svc,
		    const McreplRpc__ExistRequest *req,
		    McreplRpc__ExistResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__ExistResponse resp;
	struct reply r = {0};

	mcrepl_rpc__exist_response__init(&resp);
	store_lock(s);
	resp.exists = store_exists(s, req->tenant, req->key);
	store_unlock(s);
	reply_init(&r,
		   req->key[0] ? MCREPL_RPC__CODE__OK
			       : MCREPL_RPC__CODE__INVALID_ARGUMENT,
		   NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

static void h_remove(McreplRpc__Master_Service *svc,
		     const McreplRpc__RemoveRequest *req,
		     McreplRpc__RemoveResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__RemoveResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__remove_response__init(&resp);
	store_lock(s);
	code = store_remove(s, req->tenant, req->key, SVC(svc)->now_ms(), r.msg,
			    sizeof(r.msg));
	store_unlock(s);
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- tasks ---------------------------------------------------------------- */

static void h_fetch_tasks(McreplRpc__Master_Service *svc,
			  const McreplRpc__FetchTasksRequest *req,
			  McreplRpc__FetchTasksResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__FetchTasksResponse resp;
	struct task *tasks[MAX_TASKS_PER_FETCH];
	McreplRpc__Task *ptrs[MAX_TASKS_PER_FETCH];
	size_t max = req->max_tasks ? req->max_tasks : 16, n;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	mcrepl_rpc__fetch_tasks_response__init(&resp);
	if (max > MAX_TASKS_PER_FETCH)
		max = MAX_TASKS_PER_FETCH;
	store_lock(s);
	n = store_fetch_tasks(s, req->client_id, tasks, max,
			      SVC(svc)->now_ms());
	for (size_t i = 0; i < n; i++)
		ptrs[i] = &tasks[i]->msg;
	resp.n_tasks = n;
	resp.tasks = ptrs;
	if (n == 0 && !store_client_known(s, req->client_id))
		code = MCREPL_RPC__CODE__UNKNOWN_CLIENT;
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
}

static void h_mark_task(McreplRpc__Master_Service *svc,
			const McreplRpc__MarkTaskToCompleteRequest *req,
			McreplRpc__MarkTaskToCompleteResponse_Closure done,
			void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__MarkTaskToCompleteResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__mark_task_to_complete_response__init(&resp);
	store_lock(s);
	code = store_task_report(s, req->client_id, req->task_id);
	store_unlock(s);
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- ordinary copy -------------------------------------------------------- */

static void h_copy_start(McreplRpc__Master_Service *svc,
			 const McreplRpc__CopyStartRequest *req,
			 McreplRpc__CopyStartResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__CopyStartResponse resp;
	McreplRpc__Replica src_m, dst_m;
	struct replica src, dst;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__copy_start_response__init(&resp);
	store_lock(s);
	code =
	    store_copy_start(s, req->tenant, req->key, req->source_segment_id,
			     req->target_segment_id, SVC(svc)->now_ms(), &src,
			     &dst, r.msg, sizeof(r.msg));
	if (code == MCREPL_RPC__CODE__OK) {
		fill_replica(s, &src_m, &src, false);
		fill_replica(s, &dst_m, &dst, true);
		resp.source = &src_m;
		resp.target = &dst_m;
		resp.write_token = dst_m.write_token;
	}
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
}

static McreplRpc__Code copy_finish(McreplRpc__Master_Service *svc,
				   const char *tenant, const char *key, bool ok)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__Code code;

	store_lock(s);
	code = store_copy_finish(s, tenant, key, ok, SVC(svc)->now_ms());
	store_unlock(s);
	return code;
}

static void h_copy_end(McreplRpc__Master_Service *svc,
		       const McreplRpc__CopyEndRequest *req,
		       McreplRpc__CopyEndResponse_Closure done, void *cd)
{
	McreplRpc__CopyEndResponse resp;
	struct reply r = {0};

	mcrepl_rpc__copy_end_response__init(&resp);
	reply_init(&r, copy_finish(svc, req->tenant, req->key, true), NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

static void h_copy_revoke(McreplRpc__Master_Service *svc,
			  const McreplRpc__CopyRevokeRequest *req,
			  McreplRpc__CopyRevokeResponse_Closure done, void *cd)
{
	McreplRpc__CopyRevokeResponse resp;
	struct reply r = {0};

	mcrepl_rpc__copy_revoke_response__init(&resp);
	reply_init(&r, copy_finish(svc, req->tenant, req->key, false), NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- dynamic copy --------------------------------------------------------- */

static mcrepl_fence fence_of(uint64_t lease, uint64_t version, uint64_t client,
			     uint64_t src, uint64_t dst)
{
	return (mcrepl_fence){
	    .lease = {lease},
	    .version = version,
	    .caller = {client},
	    .source = {src},
	    .target = {dst},
	};
}

static void h_dyn_start(McreplRpc__Master_Service *svc,
			const McreplRpc__DynamicReplicaCopyStartRequest *req,
			McreplRpc__DynamicReplicaCopyStartResponse_Closure done,
			void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__DynamicReplicaCopyStartResponse resp;
	mcrepl_fence f =
	    fence_of(req->lease_id, req->version, req->client_id,
		     req->source_segment_id, req->target_segment_id);
	McreplRpc__Replica src_m, dst_m;
	struct replica src, dst;
	const char *reason = NULL;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__dynamic_replica_copy_start_response__init(&resp);
	store_lock(s);
	code = dyn_copy_start(s, &f, req->tenant, req->key, req->task_id,
			      SVC(svc)->now_ms(), &src, &dst, &reason);
	if (code == MCREPL_RPC__CODE__OK) {
		fill_replica(s, &src_m, &src, false);
		fill_replica(s, &dst_m, &dst, true);
		resp.source = &src_m;
		resp.target = &dst_m;
		resp.write_token = dst_m.write_token;
	}
	reply_init(&r, code, reason);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
}

/* End (success) or Revoke of a dynamic copy, under the store lock. */
static McreplRpc__Code dyn_finish(McreplRpc__Master_Service *svc,
				  uint64_t lease, uint64_t version,
				  uint64_t client, const char *tenant,
				  const char *key, bool success,
				  const char **reason)
{
	struct store *s = SVC(svc)->store;
	mcrepl_fence f = fence_of(lease, version, client, 0, 0);
	uint64_t now = SVC(svc)->now_ms();
	McreplRpc__Code code;

	store_lock(s);
	code = success ? dyn_copy_end(s, &f, tenant, key, now, reason)
		       : dyn_copy_revoke(s, &f, tenant, key, now, reason);
	store_unlock(s);
	return code;
}

static void h_dyn_end(McreplRpc__Master_Service *svc,
		      const McreplRpc__DynamicReplicaCopyEndRequest *req,
		      McreplRpc__DynamicReplicaCopyEndResponse_Closure done,
		      void *cd)
{
	McreplRpc__DynamicReplicaCopyEndResponse resp;
	const char *reason = NULL;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__dynamic_replica_copy_end_response__init(&resp);
	code = dyn_finish(svc, req->lease_id, req->version, req->client_id,
			  req->tenant, req->key, true, &reason);
	reply_init(&r, code, reason);
	resp.result = &r.result;
	done(&resp, cd);
}

static void
h_dyn_revoke(McreplRpc__Master_Service *svc,
	     const McreplRpc__DynamicReplicaCopyRevokeRequest *req,
	     McreplRpc__DynamicReplicaCopyRevokeResponse_Closure done, void *cd)
{
	McreplRpc__DynamicReplicaCopyRevokeResponse resp;
	const char *reason = NULL;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__dynamic_replica_copy_revoke_response__init(&resp);
	code = dyn_finish(svc, req->lease_id, req->version, req->client_id,
			  req->tenant, req->key, false, &reason);
	reply_init(&r, code, reason);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- proposals and stats -------------------------------------------------- */

static McreplRpc__Code status_code(mcrepl_status st)
{
	switch (st) {
	case MCREPL_OK:
		return MCREPL_RPC__CODE__OK;
	case MCREPL_EREJECTED:
		return MCREPL_RPC__CODE__REJECTED;
	case MCREPL_ECONFLICT:
		return MCREPL_RPC__CODE__ALREADY_EXISTS;
	case MCREPL_EINVAL:
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	default:
		return MCREPL_RPC__CODE__INTERNAL;
	}
}

static void
h_propose(McreplRpc__Master_Service *svc,
	  const McreplRpc__SubmitReplicaActionProposalRequest *req,
	  McreplRpc__SubmitReplicaActionProposalResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__SubmitReplicaActionProposalResponse resp;
	McreplRpc__ReplicaActionLease lm;
	mcrepl_propose_result res = {0};
	struct reply r = {0};
	uint64_t now = SVC(svc)->now_ms();
	mcrepl_proposal p = {
	    .action = MCREPL_ACTION_ADD,
	    .proposal_id = req->proposal_id,
	    .tenant = req->tenant,
	    .key = req->key,
	    .requester_domain = req->requester_domain,
	    .target_domain = req->target_domain,
	    .observed_version = req->observed_version,
	    .expected_size = req->expected_size,
	    .preferred_target = {req->preferred_target_segment_id},
	    .expires_at_ms =
		now + (req->expires_in_ms ? req->expires_in_ms
					  : store_opts(s)->cfg.lease_ttl_ms),
	};
	McreplRpc__Code code = MCREPL_RPC__CODE__UNAVAILABLE;

	mcrepl_rpc__submit_replica_action_proposal_response__init(&resp);
	mcrepl_rpc__replica_action_lease__init(&lm);
	store_lock(s);
	if (!store_opts(s)->enable_proposal_rpc) {
		snprintf(r.msg, sizeof(r.msg),
			 "SubmitReplicaActionProposal is "
			 "internal; start the master "
			 "with --enable_proposal_rpc");
	} else {
		code = status_code(dyn_propose(s, &p, now, &res));
	}
	if (code == MCREPL_RPC__CODE__OK) {
		lm.proposal_id = mut(req->proposal_id);
		lm.lease_id = res.lease.id.v;
		lm.tenant = mut(req->tenant);
		lm.key = mut(req->key);
		lm.source_segment_id = res.lease.source.v;
		lm.target_segment_id = res.lease.target.v;
		lm.target_domain = res.lease.target_domain;
		lm.version = res.lease.version;
		lm.expires_at_ms = res.lease.expires_at_ms;
		lm.task_id = res.lease.task.v;
		resp.lease = &lm;
		resp.repeated = res.repeated;
	}
	reply_init(&r, code,
		   code == MCREPL_RPC__CODE__UNAVAILABLE
		       ? NULL
		       : mcrepl_reason_name(res.reason));
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
}

static void h_stats(McreplRpc__Master_Service *svc,
		    const McreplRpc__StatsRequest *req,
		    McreplRpc__StatsResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__StatsResponse resp;
	McreplRpc__Segment *msgs = NULL, **ptrs = NULL;
	char *text = master_metrics(s, NULL);
	struct store_figures figures;
	struct reply r = {0};
	size_t n_segs;

	(void)req;
	mcrepl_rpc__stats_response__init(&resp);
	resp.metrics_text = text ? text : mut("");
	store_lock(s);
	store_figures(s, &figures);
	n_segs = store_n_segments(s);
	msgs = calloc(n_segs + 1, sizeof(*msgs));
	ptrs = calloc(n_segs + 1, sizeof(*ptrs));
	for (size_t i = 0; msgs && ptrs && i < n_segs; i++) {
		const struct segment *seg = store_segment_at(s, i);

		mcrepl_rpc__segment__init(&msgs[i]);
		msgs[i].segment_id = seg->id;
		msgs[i].name = seg->name;
		msgs[i].client_id = seg->client_id;
		msgs[i].host_id = seg->host;
		msgs[i].domain = seg->domain;
		msgs[i].capacity = seg->capacity;
		msgs[i].used = store_used(seg);
		msgs[i].endpoint = seg->endpoint;
		msgs[i].dynamic_copy = seg->dynamic_copy;
		msgs[i].reads = seg->reads_total;
		resp.capacity += seg->capacity;
		resp.used += msgs[i].used;
		ptrs[i] = &msgs[i];
		resp.n_segments = i + 1;
	}
	resp.segments = ptrs;
	resp.keys = figures.keys;
	reply_init(&r,
		   text && msgs && ptrs ? MCREPL_RPC__CODE__OK
					: MCREPL_RPC__CODE__INTERNAL,
		   NULL);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
	free(msgs);
	free(ptrs);
	free(text);
}

static void h_warmup(McreplRpc__Master_Service *svc,
		     const McreplRpc__WarmupRequest *req,
		     McreplRpc__WarmupResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	const struct master_opts *opts = store_opts(s);
	McreplRpc__WarmupResponse resp;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	mcrepl_rpc__warmup_response__init(&resp);
	store_lock(s);
	if (!opts->cfg.domain_aware) {
		code = MCREPL_RPC__CODE__UNAVAILABLE;
		snprintf(r.msg, sizeof(r.msg),
			 "warmup needs "
			 "--dynamic_replication_domain_"
			 "aware=true");
	} else if (!mcrepl_domain_is_valid(req->domain) || !req->domain[0]) {
		code = MCREPL_RPC__CODE__INVALID_ARGUMENT;
		snprintf(r.msg, sizeof(r.msg), "warmup needs a valid domain");
	} else {
		resp.queued = dyn_warmup(
		    s, req->domain,
		    req->max_copies ? req->max_copies : opts->warmup_max_copies,
		    req->max_bytes ? req->max_bytes : opts->warmup_max_bytes,
		    SVC(svc)->now_ms());
	}
	store_unlock(s);
	reply_init(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

void master_service_init(struct master_service *svc, struct store *store,
			 uint64_t (*now_ms)(void))
{
	memset(svc, 0, sizeof(*svc));
	mcrepl_rpc__master__init(&svc->base, NULL);
	svc->base.mount_segment = h_mount;
	svc->base.unmount_segment = h_unmount;
	svc->base.heartbeat = h_heartbeat;
	svc->base.put_start = h_put_start;
	svc->base.put_end = h_put_end;
	svc->base.put_revoke = h_put_revoke;
	svc->base.get_replica_list = h_get;
	svc->base.batch_get_replica_list = h_batch_get;
	svc->base.exist = h_exist;
	svc->base.remove = h_remove;
	svc->base.fetch_tasks = h_fetch_tasks;
	svc->base.mark_task_to_complete = h_mark_task;
	svc->base.copy_start = h_copy_start;
	svc->base.copy_end = h_copy_end;
	svc->base.copy_revoke = h_copy_revoke;
	svc->base.dynamic_replica_copy_start = h_dyn_start;
	svc->base.dynamic_replica_copy_end = h_dyn_end;
	svc->base.dynamic_replica_copy_revoke = h_dyn_revoke;
	svc->base.submit_replica_action_proposal = h_propose;
	svc->base.stats = h_stats;
	svc->base.warmup = h_warmup;
	svc->base.stat = h_stat;
	svc->store = store;
	svc->now_ms = now_ms;
}
