/* RPC handlers of mcrepl-master for work between workers: FetchTasks and
 * MarkTaskToComplete, ordinary copies, the fenced dynamic copies and
 * SubmitReplicaActionProposal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service_priv.h"

#define MAX_TASKS_PER_FETCH 256
#define MAX_INDEX_PER_FETCH 256	 /* HA journal entries per FetchTasks */
#define MAX_REVOKES_PER_FETCH 64 /* WRITE grant revocations per FetchTasks */

/* ---- tasks ---------------------------------------------------------------- */

void method_fetch_tasks(McreplRpc__Master_Service *svc,
			const McreplRpc__FetchTasksRequest *req,
			McreplRpc__FetchTasksResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__FetchTasksResponse resp;
	struct task *tasks[MAX_TASKS_PER_FETCH];
	McreplRpc__Task *ptrs[MAX_TASKS_PER_FETCH];
	McreplRpc__IndexEntry index[MAX_INDEX_PER_FETCH];
	McreplRpc__IndexEntry *iptrs[MAX_INDEX_PER_FETCH];
	struct write_revoke wr[MAX_REVOKES_PER_FETCH];
	McreplRpc__WriteRevoke rm[MAX_REVOKES_PER_FETCH];
	McreplRpc__WriteRevoke *rptrs[MAX_REVOKES_PER_FETCH];
	size_t max = req->max_tasks ? req->max_tasks : 16, n;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	mcrepl_rpc__fetch_tasks_response__init(&resp);
	if (max > MAX_TASKS_PER_FETCH)
		max = MAX_TASKS_PER_FETCH;
	n = store_fetch_tasks(s, req->client_id, tasks, max,
			      SVC(svc)->now_ms());
	for (size_t i = 0; i < n; i++)
		ptrs[i] = &tasks[i]->msg;
	resp.n_tasks = n;
	resp.tasks = ptrs;
	if (code == MCREPL_RPC__CODE__OK && n == 0 &&
	    !store_client_known(s, req->client_id))
		code = MCREPL_RPC__CODE__UNKNOWN_CLIENT;
	/* the journal and the revocations are the caller's own, and only
	 * for a client this master knows (an ack from an earlier master
	 * names nothing here) */
	if (code == MCREPL_RPC__CODE__OK) {
		resp.n_index =
		    store_journal_fill(s, req->client_id, req->index_ack, index,
				       MAX_INDEX_PER_FETCH);
		resp.n_revokes =
		    store_revokes(s, req->client_id, req->revoke_ack, wr,
				  MAX_REVOKES_PER_FETCH);
	}
	for (size_t i = 0; i < resp.n_index; i++)
		iptrs[i] = &index[i];
	resp.index = iptrs;
	for (size_t i = 0; i < resp.n_revokes; i++) {
		mcrepl_rpc__write_revoke__init(&rm[i]);
		rm[i].seq = wr[i].seq;
		rm[i].segment_id = wr[i].segment_id;
		rm[i].offset = wr[i].offset;
		rm[i].length = wr[i].length;
		rm[i].object_id = wr[i].object_id;
		rm[i].until_ms = wr[i].until_ms;
		rptrs[i] = &rm[i];
	}
	resp.revokes = rptrs;
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

void method_mark_task_to_complete(
    McreplRpc__Master_Service *svc,
    const McreplRpc__MarkTaskToCompleteRequest *req,
    McreplRpc__MarkTaskToCompleteResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__MarkTaskToCompleteResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__mark_task_to_complete_response__init(&resp);
	code = store_task_report(s, req->client_id, req->task_id);
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- ordinary copy -------------------------------------------------------- */

/* A started copy's source and target as messages (strings borrowed from
 * the store): the source readable (a pulling executor) as long as the
 * target is writable, the target's RDMA address for the source worker.
 * The object's version. */
static uint64_t copy_ends(struct store *s, const char *tenant, const char *key,
			  const struct replica *src, const struct replica *dst,
			  McreplRpc__Replica *src_m, McreplRpc__Replica *dst_m)
{
	const struct object *o = store_find(s, tenant, key);
	uint64_t version = o ? o->version : 0;

	svc_fill_replica(s, src_m, src, version, DATA_OP_READ,
			 dst->grant_until_ms);
	svc_fill_replica(s, dst_m, dst, version, DATA_OP_WRITE, 0);
	svc_replica_rdma(s, dst_m, dst);
	src_m->stamp_tag = dst_m->stamp_tag =
	    o ? store_object_stamp_tag(s, o) : 0;
	return version;
}

void method_copy_start(McreplRpc__Master_Service *svc,
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
	code = store_copy_start(s, req->client_id, req->tenant, req->key,
				req->source_segment_id, req->target_segment_id,
				SVC(svc)->now_ms(), &src, &dst, r.msg,
				sizeof(r.msg));
	if (code == MCREPL_RPC__CODE__OK) {
		resp.version = copy_ends(s, req->tenant, req->key, &src, &dst,
					 &src_m, &dst_m);
		resp.source = &src_m;
		resp.target = &dst_m;
	}
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* The End (success) or Revoke of a copy: an ordinary one, or a dynamic
 * one fenced by its lease and version. */
struct copy_finish {
	bool dynamic, success;
	uint64_t client, lease, version;
	const char *tenant, *key;
};

/* A dynamic copy call's fence. */
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

/* The one body of CopyEnd, CopyRevoke, DynamicReplicaCopyEnd and
 * DynamicReplicaCopyRevoke: the store's answer into r. */
static void copy_finish(McreplRpc__Master_Service *svc,
			const struct copy_finish *c, struct reply *r)
{
	struct store *s = SVC(svc)->store;
	mcrepl_fence f = fence_of(c->lease, c->version, c->client, 0, 0);
	uint64_t now = SVC(svc)->now_ms();
	const char *reason = NULL;
	McreplRpc__Code code;

	if (!c->dynamic)
		code = store_copy_finish(s, c->client, c->tenant, c->key,
					 c->success, now);
	else if (c->success)
		code = dyn_copy_end(s, &f, c->tenant, c->key, now, &reason);
	else
		code = dyn_copy_revoke(s, &f, c->tenant, c->key, now, &reason);
	svc_reply(r, code, reason);
}

void method_copy_end(McreplRpc__Master_Service *svc,
		     const McreplRpc__CopyEndRequest *req,
		     McreplRpc__CopyEndResponse_Closure done, void *cd)
{
	McreplRpc__CopyEndResponse resp;
	struct reply r = {0};

	mcrepl_rpc__copy_end_response__init(&resp);
	copy_finish(svc,
		    &(struct copy_finish){.success = true,
					  .client = req->client_id,
					  .tenant = req->tenant,
					  .key = req->key},
		    &r);
	resp.result = &r.result;
	done(&resp, cd);
}

void method_copy_revoke(McreplRpc__Master_Service *svc,
			const McreplRpc__CopyRevokeRequest *req,
			McreplRpc__CopyRevokeResponse_Closure done, void *cd)
{
	McreplRpc__CopyRevokeResponse resp;
	struct reply r = {0};

	mcrepl_rpc__copy_revoke_response__init(&resp);
	copy_finish(svc,
		    &(struct copy_finish){.client = req->client_id,
					  .tenant = req->tenant,
					  .key = req->key},
		    &r);
	resp.result = &r.result;
	done(&resp, cd);
}

/* ---- dynamic copy --------------------------------------------------------- */

void method_dynamic_replica_copy_start(
    McreplRpc__Master_Service *svc,
    const McreplRpc__DynamicReplicaCopyStartRequest *req,
    McreplRpc__DynamicReplicaCopyStartResponse_Closure done, void *cd)
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
	code = dyn_copy_start(s, &f, req->tenant, req->key, req->task_id,
			      SVC(svc)->now_ms(), &src, &dst, &reason);
	if (code == MCREPL_RPC__CODE__OK) {
		copy_ends(s, req->tenant, req->key, &src, &dst, &src_m, &dst_m);
		resp.source = &src_m;
		resp.target = &dst_m;
	}
	svc_reply(&r, code, reason);
	resp.result = &r.result;
	done(&resp, cd);
}

void method_dynamic_replica_copy_end(
    McreplRpc__Master_Service *svc,
    const McreplRpc__DynamicReplicaCopyEndRequest *req,
    McreplRpc__DynamicReplicaCopyEndResponse_Closure done, void *cd)
{
	McreplRpc__DynamicReplicaCopyEndResponse resp;
	struct reply r = {0};

	mcrepl_rpc__dynamic_replica_copy_end_response__init(&resp);
	copy_finish(svc,
		    &(struct copy_finish){.dynamic = true,
					  .success = true,
					  .client = req->client_id,
					  .lease = req->lease_id,
					  .version = req->version,
					  .tenant = req->tenant,
					  .key = req->key},
		    &r);
	resp.result = &r.result;
	done(&resp, cd);
}

void method_dynamic_replica_copy_revoke(
    McreplRpc__Master_Service *svc,
    const McreplRpc__DynamicReplicaCopyRevokeRequest *req,
    McreplRpc__DynamicReplicaCopyRevokeResponse_Closure done, void *cd)
{
	McreplRpc__DynamicReplicaCopyRevokeResponse resp;
	struct reply r = {0};

	mcrepl_rpc__dynamic_replica_copy_revoke_response__init(&resp);
	copy_finish(svc,
		    &(struct copy_finish){.dynamic = true,
					  .client = req->client_id,
					  .lease = req->lease_id,
					  .version = req->version,
					  .tenant = req->tenant,
					  .key = req->key},
		    &r);
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

static mcrepl_proposal
proposal_of(const McreplRpc__SubmitReplicaActionProposalRequest *req,
	    uint64_t now, uint64_t lease_ttl_ms)
{
	return (mcrepl_proposal){
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
		now + (req->expires_in_ms ? req->expires_in_ms : lease_ttl_ms),
	};
}

/* The granted lease as a message (strings from req and res). */
static void
lease_message(McreplRpc__ReplicaActionLease *lm,
	      const McreplRpc__SubmitReplicaActionProposalRequest *req,
	      mcrepl_propose_result *res)
{
	lm->proposal_id = svc_mut(req->proposal_id);
	lm->lease_id = res->lease.id.v;
	lm->tenant = svc_mut(req->tenant);
	lm->key = svc_mut(req->key);
	lm->source_segment_id = res->lease.source.v;
	lm->target_segment_id = res->lease.target.v;
	lm->target_domain = res->lease.target_domain;
	lm->version = res->lease.version;
	lm->expires_at_ms = res->lease.expires_at_ms;
	lm->task_id = res->lease.task.v;
}

void method_submit_replica_action_proposal(
    McreplRpc__Master_Service *svc,
    const McreplRpc__SubmitReplicaActionProposalRequest *req,
    McreplRpc__SubmitReplicaActionProposalResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	const struct master_opts *opts = store_opts(s);
	McreplRpc__SubmitReplicaActionProposalResponse resp;
	McreplRpc__ReplicaActionLease lm;
	mcrepl_propose_result res = {0};
	struct reply r = {0};
	uint64_t now = SVC(svc)->now_ms();
	mcrepl_proposal p = proposal_of(req, now, opts->cfg.lease_ttl_ms);
	McreplRpc__Code code = MCREPL_RPC__CODE__UNAVAILABLE;

	mcrepl_rpc__submit_replica_action_proposal_response__init(&resp);
	mcrepl_rpc__replica_action_lease__init(&lm);
	if (!opts->enable_proposal_rpc) {
		snprintf(r.msg, sizeof(r.msg),
			 "SubmitReplicaActionProposal is "
			 "internal; start the master "
			 "with --enable_proposal_rpc");
	} else {
		code = status_code(dyn_propose(s, &p, now, &res));
	}
	if (code == MCREPL_RPC__CODE__OK) {
		lease_message(&lm, req, &res);
		resp.lease = &lm;
		resp.repeated = res.repeated;
	}
	svc_reply(&r, code,
		  code == MCREPL_RPC__CODE__UNAVAILABLE
		      ? NULL
		      : mcrepl_reason_name(res.reason));
	resp.result = &r.result;
	done(&resp, cd);
}
