/* RPC handlers of mcrepl-master for objects: PutStart/End/Revoke, the
 * read path (GetReplicaList, BatchGetReplicaList, Stat), Exist, Remove. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "rpc_dispatch.h"
#include "service_priv.h"

/* ---- puts ---------------------------------------------------------------- */

void method_put_start(McreplRpc__Master_Service *svc,
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
	/* beyond the write right (svc_authorize): the writer id's owner */
	code = svc_auth_writer(SVC(svc), cd, req->client_id, &r);
	if (code == MCREPL_RPC__CODE__OK)
		code = svc_settling(s, req->tenant, req->key, &r);
	if (code == MCREPL_RPC__CODE__OK)
		code = store_put_start(s, req->tenant, req->key, req->size,
				       req->replica_num, SVC(svc)->now_ms(), &o,
				       r.msg, sizeof(r.msg));
	if (code == MCREPL_RPC__CODE__OK) {
		store_put_owner(s, o, req->client_id);
		/* its connection's close releases it (store_conns_gone) */
		store_put_conn(s, o, rpc_call_conn_id(cd));
		resp.version = o->version;
		resp.incarnation = store_incarnation(s);
		resp.stamp_tag = store_object_stamp_tag(s, o);
		resp.digest_required = auth_tenant_integrity(
		    SVC(svc)->auth, req->tenant, store_opts(s)->integrity);
		for (size_t i = 0; i < o->n_replicas && i < 16; i++) {
			svc_fill_replica(s, &msgs[i], &o->replicas[i],
					 o->version, DATA_OP_WRITE, 0);
			msgs[i].stamp_tag = resp.stamp_tag;
			ptrs[i] = &msgs[i];
			resp.n_replicas = i + 1;
		}
		resp.replicas = ptrs;
	}
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* A PutEnd's reply, given once its commits are acknowledged (HA), or
 * "unconfirmed" when the leader steps down first (the store client then
 * looks for its put at the next leader). */
struct put_end_later {
	struct rpc_later later;
	bool deferred;
};

static void put_end_reply(struct put_end_later *p, McreplRpc__Code code,
			  const char *reason,
			  McreplRpc__PutEndResponse_Closure done, void *cd)
{
	McreplRpc__PutEndResponse resp;
	struct reply r = {0};

	mcrepl_rpc__put_end_response__init(&resp);
	svc_reply(&r, code, reason);
	resp.result = &r.result;
	if (p && p->deferred)
		rpc_later_reply(&p->later, &resp.base);
	else
		done(&resp, cd);
}

static void put_ended(void *arg, McreplRpc__Code code, const char *reason)
{
	struct put_end_later *p = arg;

	if (p->deferred) /* else answered already (in-process) */
		put_end_reply(p, code, reason, NULL, NULL);
	free(p);
}

/* The PutEnd's payload digest kept (store_put_digest), or false after
 * refusing the PutEnd for it (a missing digest its tenant requires, one
 * of a wrong length). */
static bool put_digest_ok(struct master_service *svc,
			  const McreplRpc__PutEndRequest *req,
			  McreplRpc__PutEndResponse_Closure done, void *cd)
{
	McreplRpc__PutEndResponse resp;
	struct reply r = {0};
	bool need = auth_tenant_integrity(svc->auth, req->tenant,
					  store_opts(svc->store)->integrity);
	McreplRpc__Code code = store_put_digest(
	    svc->store, req->tenant, req->key, req->version, req->digest.data,
	    req->digest.len, need, r.msg, sizeof(r.msg));

	if (code == MCREPL_RPC__CODE__OK || !r.msg[0])
		return true; /* the put's own codes: store_put_end's answer */
	mcrepl_rpc__put_end_response__init(&resp);
	svc_reply(&r, code,
		  code == MCREPL_RPC__CODE__REJECTED ? "digest_required"
						     : NULL);
	resp.result = &r.result;
	done(&resp, cd);
	return false;
}

void method_put_end(McreplRpc__Master_Service *svc,
		    const McreplRpc__PutEndRequest *req,
		    McreplRpc__PutEndResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	struct put_end_later *p = calloc(1, sizeof(*p));
	McreplRpc__Code code;
	bool later = false;

	/* answered when the workers' indexes name it (docs/HA.md) */
	if (!put_digest_ok(SVC(svc), req, done, cd)) {
		free(p);
		return;
	}
	code = store_put_end_acked(s, req->tenant, req->key, req->version,
				   SVC(svc)->now_ms(), p ? put_ended : NULL, p,
				   &later);
	if (later)
		p->deferred = rpc_call_defer(cd, &p->later);
	if (later && p->deferred)
		return;
	put_end_reply(NULL, code, NULL, done, cd);
	if (!later) /* else freed when the wait ends */
		free(p);
}

void method_put_revoke(McreplRpc__Master_Service *svc,
		       const McreplRpc__PutRevokeRequest *req,
		       McreplRpc__PutRevokeResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__PutRevokeResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__put_revoke_response__init(&resp);
	code = store_put_revoke(s, req->tenant, req->key, req->version);
	svc_reply(&r, code, NULL);
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
	uint8_t digest[STORE_DIGEST_BYTES]; /* a copy: replied unlocked */
};

/* Fills a with the outcome of a lookup: on OK the replicas order[0..n) of
 * o; lease_ttl_ms is the read lease the lookup granted (0: none). */
static void answer_object(struct store *s, struct get_answer *a,
			  const char *key, McreplRpc__Code code,
			  const struct object *o, const size_t *order, size_t n,
			  uint64_t lease_ttl_ms, uint64_t read_grant_expires_ms)
{
	a->resp.key = svc_mut(key);
	if (code == MCREPL_RPC__CODE__OK) {
		/* one tag per object: every replica carries the same stamp */
		uint64_t tag = store_object_stamp_tag(s, o);

		a->resp.version = o->version;
		a->resp.incarnation = store_object_incarnation(s, o);
		a->resp.size = o->size;
		a->resp.lease_ttl_ms = lease_ttl_ms;
		if (o->digest) { /* the writer's, from this leader's PutEnd */
			memcpy(a->digest, o->digest, STORE_DIGEST_BYTES);
			a->resp.digest.data = a->digest;
			a->resp.digest.len = STORE_DIGEST_BYTES;
		}
		for (size_t i = 0; i < n; i++) {
			svc_fill_replica(
			    s, &a->msgs[i], &o->replicas[order[i]], o->version,
			    read_grant_expires_ms ? DATA_OP_READ : 0,
			    read_grant_expires_ms);
			a->msgs[i].stamp_tag = tag;
			a->ptrs[i] = &a->msgs[i];
		}
		a->resp.n_replicas = n;
		a->resp.replicas = a->ptrs;
	}
	svc_reply(&a->r, code, NULL);
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
	code = svc_settling(s, tenant, key, &a->r);
	if (code == MCREPL_RPC__CODE__OK)
		code = store_get(s, tenant, key, domain, now, &o, order,
				 MASTER_MAX_REPLICAS, &n);
	if (code == MCREPL_RPC__CODE__INVALID_ARGUMENT)
		store_key_valid(tenant, key, a->r.msg, sizeof(a->r.msg));
	answer_object(s, a, key, code, o, order, n,
		      store_opts(s)->kv_lease_ttl_ms,
		      store_read_grant_expiry(s, now));
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
	svc_reply(&r, MCREPL_RPC__CODE__INTERNAL, NULL);
	oom.result = &r.result;
	done(&oom, cd);
	return NULL;
}

void method_get_replica_list(McreplRpc__Master_Service *svc,
			     const McreplRpc__GetReplicaListRequest *req,
			     McreplRpc__GetReplicaListResponse_Closure done,
			     void *cd)
{
	struct store *s = SVC(svc)->store;
	struct get_answer *a = answer_alloc(done, cd);

	if (!a)
		return;
	store_read_begin(s);
	answer_get(s, a, req->tenant, req->key, req->requester_domain,
		   SVC(svc)->now_ms());
	done(&a->resp, cd);
	free(a);
}

/* GetReplicaList's answer without its side effects (store_stat). */
void method_stat(McreplRpc__Master_Service *svc,
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
	code = svc_settling(s, req->tenant, req->key, &a->r);
	if (code == MCREPL_RPC__CODE__OK)
		code = store_stat(s, req->tenant, req->key, &o, order,
				  MASTER_MAX_REPLICAS, &n, a->r.msg,
				  sizeof(a->r.msg));
	answer_object(s, a, req->key, code, o, order, n, 0, 0); /* no grant */
	done(&a->resp, cd);
	free(a);
}

void method_batch_get_replica_list(
    McreplRpc__Master_Service *svc,
    const McreplRpc__BatchGetReplicaListRequest *req,
    McreplRpc__BatchGetReplicaListResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__BatchGetReplicaListResponse resp;
	struct get_answer *a = NULL;
	McreplRpc__GetReplicaListResponse **ptrs = NULL;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;
	uint64_t now = SVC(svc)->now_ms();

	/* n_keys is within --max_batch_keys (its row's limit) */
	mcrepl_rpc__batch_get_replica_list_response__init(&resp);
	a = calloc(req->n_keys, sizeof(*a));
	ptrs = calloc(req->n_keys, sizeof(*ptrs));
	if (!a || !ptrs)
		code = MCREPL_RPC__CODE__INTERNAL;
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
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
	free(a);
	free(ptrs);
}

void method_exist(McreplRpc__Master_Service *svc,
		  const McreplRpc__ExistRequest *req,
		  McreplRpc__ExistResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__ExistResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__exist_response__init(&resp);
	code = req->key[0] ? svc_settling(s, req->tenant, req->key, &r)
			   : MCREPL_RPC__CODE__INVALID_ARGUMENT;
	resp.exists = code == MCREPL_RPC__CODE__OK &&
		      store_exists(s, req->tenant, req->key);
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* A Remove's reply, given once its drops are acknowledged (HA). */
struct remove_later {
	struct rpc_later later;
	bool deferred;
};

static void remove_reply(struct remove_later *p, McreplRpc__Code code,
			 const char *reason, const char *msg,
			 McreplRpc__RemoveResponse_Closure done, void *cd)
{
	McreplRpc__RemoveResponse resp;
	struct reply r = {0};

	mcrepl_rpc__remove_response__init(&resp);
	snprintf(r.msg, sizeof(r.msg), "%s", msg);
	svc_reply(&r, code, reason);
	resp.result = &r.result;
	if (p && p->deferred)
		rpc_later_reply(&p->later, &resp.base);
	else
		done(&resp, cd);
}

/* recovering: asked again here; unconfirmed: the leader stepped down */
static void removed(void *arg, McreplRpc__Code code, const char *reason)
{
	struct remove_later *p = arg;

	if (p->deferred) /* else answered already (in-process) */
		remove_reply(p, code, reason,
			     !reason ? ""
			     : strcmp(reason, "recovering") == 0
				 ? "a worker has not acknowledged the drop yet"
				 : "the leader stepped down",
			     NULL, NULL);
	free(p);
}

void method_remove(McreplRpc__Master_Service *svc,
		   const McreplRpc__RemoveRequest *req,
		   McreplRpc__RemoveResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	struct remove_later *p = calloc(1, sizeof(*p));
	char msg[256] = "";
	McreplRpc__Code code;
	bool later = false;

	/* answered when no worker can bring the object back (docs/HA.md) */
	code = store_remove_acked(s, req->tenant, req->key, req->request_id,
				  SVC(svc)->now_ms(), p ? removed : NULL, p,
				  &later, msg, sizeof(msg));
	if (later)
		p->deferred = rpc_call_defer(cd, &p->later);
	if (later && p->deferred)
		return;
	remove_reply(NULL, code,
		     code == MCREPL_RPC__CODE__UNAVAILABLE ? "recovering"
							   : NULL,
		     msg, done, cd);
	if (!later) /* else freed when the wait ends */
		free(p);
}
