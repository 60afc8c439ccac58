/* RPC handlers of mcrepl-master: protobuf in, store operation, protobuf
 * out. Every input is validated by the store; bad input gets a Result with
 * a code and one clear line, never a crash. This file: the shared reply
 * helpers, segments, Stats and Warmup, and the service's binding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ratelog.h"
#include "rpc_auth.h"
#include "rpc_dispatch.h"
#include "methods.h"
#include "service_priv.h"

void svc_reply(struct reply *r, McreplRpc__Code code, const char *reason)
{
	mcrepl_rpc__result__init(&r->result);
	r->result.code = code;
	if (!reason)
		reason = r->why; /* a refusal's label, or NULL */
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

McreplRpc__Code svc_settling(struct store *s, const char *tenant,
			     const char *key, struct reply *r)
{
	if (!store_key_settling(s, tenant, key))
		return MCREPL_RPC__CODE__OK;
	r->why = "recovering";
	snprintf(r->msg, sizeof(r->msg), "%s", STORE_SETTLING_MSG);
	return MCREPL_RPC__CODE__UNAVAILABLE;
}

char *svc_mut(const char *s)
{
	return (char *)(uintptr_t)(s ? s : "");
}

void svc_fill_replica(struct store *s, McreplRpc__Replica *m,
		      const struct replica *r, uint64_t version,
		      uint8_t grant_op, uint64_t read_expires_ms)
{
	struct segment *seg = store_segment(s, r->segment_id);

	mcrepl_rpc__replica__init(m);
	m->segment_id = r->segment_id;
	m->offset = r->offset;
	m->size = r->size;
	m->stamp_bytes = STAMP_BYTES;
	m->status = r->status == REPLICA_COMPLETE
			? MCREPL_RPC__REPLICA_STATUS__COMPLETE
			: MCREPL_RPC__REPLICA_STATUS__PROCESSING;
	m->dynamic = r->dynamic;
	if (grant_op) {
		struct data_grant g =
		    store_grant(s, grant_op, seg, r, version,
				grant_op == DATA_OP_WRITE ? r->grant_until_ms
							  : read_expires_ms);

		m->grant_object_id = g.object_id;
		m->grant_expires_ms = g.expires_ms;
		m->grant_tag = g.tag;
	}
	if (!seg)
		return;
	m->client_id = seg->client_id;
	m->host_id = seg->host;
	m->domain = seg->domain;
	m->endpoint = seg->endpoint;
	m->rdma_endpoint = svc_mut(seg->rdma_endpoint);
}

void svc_replica_rdma(struct store *s, McreplRpc__Replica *m,
		      const struct replica *r)
{
	struct segment *seg = store_segment(s, r->segment_id);

	if (!seg)
		return;
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

/* Membership in the log: each mount at info, refusals rate-limited with
 * the principal and the address they came from. */
static void log_mount(const void *cd, const struct mount_args *a,
		      McreplRpc__Code code, uint64_t segment_id,
		      const char *why)
{
	static struct ratelog refused;
	const struct auth_principal *p = rpc_call_principal(cd);

	if (code == MCREPL_RPC__CODE__OK)
		log_line(LOG_INFO,
			 "segment %llu mounted: client %llu host %s domain %s "
			 "endpoint %s capacity %llu",
			 (unsigned long long)segment_id,
			 (unsigned long long)a->client_id, a->host, a->domain,
			 a->endpoint, (unsigned long long)a->capacity);
	else
		ratelog(&refused, LOG_WARN,
			"refused MountSegment from %s%s%s at %s: segment '%s' "
			"of client %llu, host '%s': %s",
			p ? "principal '" : "no principal", p ? p->name : "",
			p ? "'" : "", rpc_call_peer(cd),
			a->name && a->name[0] ? a->name : "(no name)",
			(unsigned long long)a->client_id,
			a->host && a->host[0] ? a->host : "(no host)",
			why[0] ? why : "refused");
}

/* Longest a worker's re-registration may keep its segment out of
 * placement (docs/HA.md). */
#define MOUNT_HOLD_MS 10000

void method_mount_segment(McreplRpc__Master_Service *svc,
			  const McreplRpc__MountSegmentRequest *req,
			  McreplRpc__MountSegmentResponse_Closure done,
			  void *cd)
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
	    .rdma_endpoint = req->rdma_endpoint,
	    .dynamic_copy = has_cap(req, "dynamic_copy"),
	};
	McreplRpc__MountSegmentResponse resp;
	uint8_t secret[GRANT_SECRET_BYTES];
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__mount_segment_response__init(&resp);
	resp.heartbeat_interval_ms =
	    (uint32_t)(store_opts(s)->client_ttl_ms / 4);
	store_lock(s);
	/* a domain joining a running cluster is warmed with what is hot */
	code = store_mount(s, &a, SVC(svc)->now_ms(), &resp.segment_id, r.msg,
			   sizeof(r.msg));
	if (code == MCREPL_RPC__CODE__OK && req->hold) /* HA re-registration */
		store_hold_segment(s, req->client_id, resp.segment_id,
				   SVC(svc)->now_ms() + MOUNT_HOLD_MS);
	if (code == MCREPL_RPC__CODE__OK) {
		/* the key of this segment's grants (grant.h), to its worker
		 * only, sealed for its connection when authenticated */
		store_segment_grant_key(s, resp.segment_id, secret);
		if (svc_seal(cd, MOUNT_GRANT_KEY_LABEL, secret, sizeof(secret)))
			code = MCREPL_RPC__CODE__INTERNAL;
	}
	if (code == MCREPL_RPC__CODE__OK) {
		resp.grant_secret.data = secret;
		resp.grant_secret.len = GRANT_SECRET_BYTES;
		resp.incarnation = store_incarnation(s);
		resp.master_time_ms = SVC(svc)->now_ms();
	}
	store_unlock(s);
	log_mount(cd, &a, code, resp.segment_id, r.msg);
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

void method_unmount_segment(McreplRpc__Master_Service *svc,
			    const McreplRpc__UnmountSegmentRequest *req,
			    McreplRpc__UnmountSegmentResponse_Closure done,
			    void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__UnmountSegmentResponse resp;
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__unmount_segment_response__init(&resp);
	store_lock(s);
	code = store_unmount(s, req->client_id, req->segment_id,
			     SVC(svc)->now_ms());
	store_unlock(s);
	if (code == MCREPL_RPC__CODE__OK)
		log_line(LOG_INFO, "segment %llu unmounted by client %llu",
			 (unsigned long long)req->segment_id,
			 (unsigned long long)req->client_id);
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

void method_heartbeat(McreplRpc__Master_Service *svc,
		      const McreplRpc__HeartbeatRequest *req,
		      McreplRpc__HeartbeatResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__HeartbeatResponse resp;
	struct reply r = {0};
	size_t n = req->n_segment_ids < req->n_segment_reads
		       ? req->n_segment_ids
		       : req->n_segment_reads;
	McreplRpc__Code code;

	mcrepl_rpc__heartbeat_response__init(&resp);
	resp.master_time_ms = SVC(svc)->now_ms(); /* grant expiries */
	code = store_heartbeat(s, req->client_id, req->segment_ids,
			       req->segment_reads, n, SVC(svc)->now_ms());
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* One message per mounted segment into resp (strings borrowed from the
 * store); false when out of memory. The arrays are the caller's to free. */
static bool segment_messages(struct store *s, McreplRpc__StatsResponse *resp,
			     McreplRpc__Segment **msgs_out,
			     McreplRpc__Segment ***ptrs_out)
{
	size_t n_segs = store_n_segments(s);
	McreplRpc__Segment *msgs = calloc(n_segs + 1, sizeof(*msgs));
	McreplRpc__Segment **ptrs = calloc(n_segs + 1, sizeof(*ptrs));

	*msgs_out = msgs;
	*ptrs_out = ptrs;
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
		msgs[i].rdma_endpoint = svc_mut(seg->rdma_endpoint);
		msgs[i].reads = seg->reads_total;
		resp->capacity += seg->capacity;
		resp->used += msgs[i].used;
		ptrs[i] = &msgs[i];
		resp->n_segments = i + 1;
	}
	resp->segments = ptrs;
	return msgs && ptrs;
}

void method_stats(McreplRpc__Master_Service *svc,
		  const McreplRpc__StatsRequest *req,
		  McreplRpc__StatsResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__StatsResponse resp;
	McreplRpc__Segment *msgs = NULL, **ptrs = NULL;
	/* the segments (client ids, hosts) and the metrics are for admins;
	 * any principal gets the totals */
	bool detail = svc_auth_is_admin(SVC(svc), cd), ok;
	char *text = detail ? master_metrics(s, NULL) : strdup("");
	struct store_figures figures;
	struct reply r = {0};

	(void)req;
	mcrepl_rpc__stats_response__init(&resp);
	resp.metrics_text = text ? text : svc_mut("");
	store_lock(s);
	store_figures(s, &figures);
	resp.keys = figures.keys;
	ok = segment_messages(s, &resp, &msgs, &ptrs);
	if (!detail)
		resp.n_segments = 0;
	svc_reply(
	    &r, text && ok ? MCREPL_RPC__CODE__OK : MCREPL_RPC__CODE__INTERNAL,
	    NULL);
	resp.result = &r.result;
	done(&resp, cd);
	store_unlock(s);
	free(msgs);
	free(ptrs);
	free(text);
}

void method_warmup(McreplRpc__Master_Service *svc,
		   const McreplRpc__WarmupRequest *req,
		   McreplRpc__WarmupResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	const struct master_opts *opts = store_opts(s);
	McreplRpc__WarmupResponse resp;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	mcrepl_rpc__warmup_response__init(&resp);
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
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}

/* A call its row refuses: the caller's check (svc_authorize), then the
 * request's bound; OK, or the code with r filled. */
static McreplRpc__Code admit(struct master_service *svc, const void *cd,
			     const struct master_method *m,
			     const ProtobufCMessage *in, struct reply *r)
{
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	if (svc->auth)
		code = svc_authorize(svc, cd, m, in, r);
	if (code == MCREPL_RPC__CODE__OK)
		code = method_limit_check(m, store_opts(svc->store), in, r->msg,
					  sizeof(r->msg));
	return code;
}

/* Every call runs by its method's row: the caller's check and the bound
 * (admit), then the handler, under the store lock when the row says
 * METHOD_LOCKED. Rows are in the service's order (check_methods.c), so the
 * row is the method's index. Only a task's check reads the store (under
 * the lock, which a locked row keeps for its handler); the others read
 * the principal and the request, on the RPC loop, before the lock. */
static void master_invoke(ProtobufCService *base, unsigned method,
			  const ProtobufCMessage *in, ProtobufCClosure done,
			  void *cd)
{
	struct master_service *svc = (struct master_service *)(void *)base;
	const ProtobufCMethodDescriptor *d = &base->descriptor->methods[method];
	const struct master_method *m =
	    method < master_methods_n ? &master_methods[method] : NULL;
	bool locked = m && (m->flags & METHOD_LOCKED);
	bool task = m && svc->auth && m->caller == CALLER_WORKER_TASK;
	struct reply r = {0};
	McreplRpc__Code code = MCREPL_RPC__CODE__UNIMPLEMENTED;

	if (task)
		store_lock(svc->store);
	if (m) /* every method has a row (check_methods.c) */
		code = admit(svc, cd, m, in, &r);
	if (task && (code != MCREPL_RPC__CODE__OK || !locked))
		store_unlock(svc->store);
	if (code != MCREPL_RPC__CODE__OK) {
		svc_reply(&r, code, NULL);
		method_reply_result(d->output, &r.result, done, cd);
		return;
	}
	if (locked && !task)
		store_lock(svc->store);
	protobuf_c_service_invoke_internal(base, method, in, done, cd);
	if (locked)
		store_unlock(svc->store);
}

int master_service_init(struct master_service *svc, struct store *store,
			uint64_t (*now_ms)(void), const struct auth_table *auth)
{
	memset(svc, 0, sizeof(*svc));
	svc->auth = auth;
	svc->base = (McreplRpc__Master_Service)MASTER_HANDLERS;
	svc->base.base.invoke = master_invoke;
	svc->store = store;
	svc->now_ms = now_ms;
	return 0;
}

void master_service_fini(struct master_service *svc)
{
	(void)svc;
}
