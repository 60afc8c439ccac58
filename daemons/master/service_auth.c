/* Authorization of every RPC: who may do what, from the
 * principal the connection authenticated as (rpc_call_principal), never
 * from a request field. Without an auth table every check passes.
 *
 *   objects   a client principal with the right (read: GetReplicaList,
 *             BatchGetReplicaList, Stat, Exist; write: PutStart/End/Revoke;
 *             remove: Remove) on the request's tenant
 *   admin     SubmitReplicaActionProposal, Warmup, and Stats' detail (the
 *             segments and the metrics text) need the admin right
 *   workers   MountSegment, UnmountSegment, Heartbeat, FetchTasks,
 *             MarkTaskToComplete and the copy RPCs need a worker principal;
 *             a mount's host, domain and capacity must be allowed to it,
 *             and every client id it names must be in its id space
 *             (auth_id_owned, auth.h), so no principal mounts, beats or
 *             re-mounts under another's id, even once the id expired or
 *             the master restarted; a copy RPC must name a task queued
 *             for that client id, with the task's tenant, key and
 *             segments
 *
 * A refusal is PERMISSION_DENIED (UNAUTHENTICATED for a request without a
 * principal) with Result.reason "auth_<why>" and one line naming the
 * principal and what it lacks; counted by why for /metrics, and logged
 * (warn, at most a line a second per reason, so a flood of one kind hides
 * no other) with the method, the principal, the peer's address, the
 * message and the reason; a client id outside the caller's space adds the
 * principal whose id it is (the reply does not say). Which check a method
 * gets is its row's caller (methods.h): svc_authorize() runs it before the
 * handler, from the RPC loop; a task's check reads the store and runs
 * under its lock. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"
#include "ratelog.h"
#include "rpc_dispatch.h"
#include "service_priv.h"

static const char *const refusal_names[] = {
#define SVC_REFUSAL_NAME(name) #name,
    SVC_REFUSALS(SVC_REFUSAL_NAME)
#undef SVC_REFUSAL_NAME
};

const char *svc_refusal_name(enum svc_refusal r)
{
	return (unsigned)r < SVC_REFUSAL_COUNT ? refusal_names[r] : "?";
}

static const char *const refusal_labels[] = {
#define SVC_REFUSAL_LABEL(name) "auth_" #name,
    SVC_REFUSALS(SVC_REFUSAL_LABEL)
#undef SVC_REFUSAL_LABEL
};

/* The refusal in r (message already written), counted and logged; note
 * ends the log line only. */
static McreplRpc__Code refuse(struct master_service *svc, const void *cd,
			      struct reply *r, enum svc_refusal why,
			      const char *note)
{
	const struct auth_principal *p = rpc_call_principal(cd);

	r->why = refusal_labels[why];
	svc->refused[why]++;
	ratelog(&svc->rl_refused[why], LOG_WARN,
		"refused %s from %s%s%s at %s: %s (%s)%s", rpc_call_method(cd),
		p ? "principal '" : "no principal", p ? p->name : "",
		p ? "'" : "", rpc_call_peer(cd), r->msg, r->why, note);
	return why == SVC_REFUSED_unauthenticated
		   ? MCREPL_RPC__CODE__UNAUTHENTICATED
		   : MCREPL_RPC__CODE__PERMISSION_DENIED;
}

static McreplRpc__Code deny(struct master_service *svc, const void *cd,
			    struct reply *r, enum svc_refusal why,
			    const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static McreplRpc__Code deny(struct master_service *svc, const void *cd,
			    struct reply *r, enum svc_refusal why,
			    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	return refuse(svc, cd, r, why, "");
}

/* The caller, or NULL after deny() (no principal under an auth table). */
static const struct auth_principal *caller(struct master_service *svc,
					   const void *cd, struct reply *r,
					   McreplRpc__Code *code)
{
	const struct auth_principal *p = rpc_call_principal(cd);

	if (!p)
		*code = deny(svc, cd, r, SVC_REFUSED_unauthenticated,
			     "this master requires authentication");
	return p;
}

static const char *kind_name(const struct auth_principal *p)
{
	return p->kind == AUTH_WORKER ? "worker" : "client";
}

/* svc_authorize's parts: each returns OK when cd's principal may do it
 * (always without an auth table), else the refusal's code with r->msg and
 * r->why filled. Called from the RPC loop; svc_auth_task reads the store
 * and runs under its lock. */
static McreplRpc__Code svc_auth_object(struct master_service *svc,
				       const void *cd, const char *tenant,
				       unsigned right, struct reply *r)
{
	const struct auth_principal *p;
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	if (!svc->auth)
		return code;
	p = caller(svc, cd, r, &code);
	if (!p)
		return code;
	if (p->kind != AUTH_CLIENT)
		return deny(svc, cd, r, SVC_REFUSED_kind,
			    "worker principal '%s' has no tenants: object "
			    "calls need a client principal",
			    p->name);
	if (!(p->rights & right))
		return deny(svc, cd, r, SVC_REFUSED_right,
			    "principal '%s' lacks the %s right", p->name,
			    auth_right_name(right));
	if (!auth_tenant_ok(p, tenant))
		return deny(svc, cd, r, SVC_REFUSED_tenant,
			    "principal '%s' may not use tenant '%.64s'",
			    p->name, tenant);
	return code;
}

static McreplRpc__Code svc_auth_admin(struct master_service *svc,
				      const void *cd, const char *what,
				      struct reply *r)
{
	const struct auth_principal *p;
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	if (!svc->auth)
		return code;
	p = caller(svc, cd, r, &code);
	if (!p)
		return code;
	if (p->kind != AUTH_CLIENT || !(p->rights & AUTH_ADMIN))
		return deny(svc, cd, r, SVC_REFUSED_right,
			    "%s needs the admin right; principal '%s' lacks "
			    "it",
			    what, p->name);
	return code;
}

bool svc_auth_is_admin(const struct master_service *svc, const void *cd)
{
	const struct auth_principal *p;

	if (!svc->auth)
		return true;
	p = rpc_call_principal(cd);
	return p && p->kind == AUTH_CLIENT && (p->rights & AUTH_ADMIN);
}

/* ---- client ids ------------------------------------------------------ */

/* The worker principal whose id space holds client_id, or NULL. */
static const struct auth_principal *space_owner(const struct auth_table *t,
						uint64_t client_id)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->p[i].kind == AUTH_WORKER &&
		    auth_id_owned(&t->p[i], client_id))
			return &t->p[i];
	return NULL;
}

/* p named client_id, which is not in its space: refused, and logged with
 * the principal whose id it is (the reply does not name it). */
static McreplRpc__Code not_its_id(struct master_service *svc, const void *cd,
				  const struct auth_principal *p,
				  uint64_t client_id, struct reply *r)
{
	const struct auth_principal *o = space_owner(svc->auth, client_id);
	char note[AUTH_NAME_MAX + 40];

	snprintf(note, sizeof(note), ", an id of %s%s%s",
		 o ? "principal '" : "no principal", o ? o->name : "",
		 o ? "'" : "");
	snprintf(r->msg, sizeof(r->msg),
		 "client_id %llu is not in principal '%s''s id space",
		 (unsigned long long)client_id, p->name);
	return refuse(svc, cd, r, SVC_REFUSED_client_id, note);
}

int svc_seal(const void *cd, const char *label, uint8_t *buf, size_t len)
{
	const uint8_t *key = rpc_call_session_key(cd);

	return key ? auth_seal(key, label, buf, len) : 0;
}

/* A worker principal naming client_id: one of its own space. */
static McreplRpc__Code worker_id(struct master_service *svc, const void *cd,
				 const struct auth_principal *p,
				 uint64_t client_id, struct reply *r)
{
	if (p->kind != AUTH_WORKER)
		return deny(svc, cd, r, SVC_REFUSED_kind,
			    "client principal '%s' may not make worker "
			    "calls",
			    p->name);
	if (!auth_id_owned(p, client_id))
		return not_its_id(svc, cd, p, client_id, r);
	return MCREPL_RPC__CODE__OK;
}

/* Worker calls naming client_id (Unmount, Heartbeat, FetchTasks, ...). */
static McreplRpc__Code svc_auth_worker(struct master_service *svc,
				       const void *cd, uint64_t client_id,
				       struct reply *r)
{
	const struct auth_principal *p;
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	if (!svc->auth)
		return code;
	p = caller(svc, cd, r, &code);
	return p ? worker_id(svc, cd, p, client_id, r) : code;
}

static McreplRpc__Code svc_auth_mount(struct master_service *svc,
				      const void *cd,
				      const McreplRpc__MountSegmentRequest *req,
				      struct reply *r)
{
	const struct auth_principal *p;
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;

	if (!svc->auth)
		return code;
	p = caller(svc, cd, r, &code);
	if (!p)
		return code;
	if (p->kind != AUTH_WORKER)
		return deny(svc, cd, r, SVC_REFUSED_kind,
			    "MountSegment needs a worker principal; '%s' is "
			    "a %s",
			    p->name, kind_name(p));
	if (!auth_host_ok(p, req->host_id))
		return deny(svc, cd, r, SVC_REFUSED_host,
			    "worker '%s' may not mount for host '%.64s'",
			    p->name, req->host_id);
	if (!auth_domain_ok(p, req->domain))
		return deny(svc, cd, r, SVC_REFUSED_domain,
			    "worker '%s' may not mount in domain '%.64s'",
			    p->name, req->domain);
	if (req->capacity > p->max_capacity)
		return deny(svc, cd, r, SVC_REFUSED_capacity,
			    "segment of %llu bytes is above worker '%s''s "
			    "max_capacity %llu",
			    (unsigned long long)req->capacity, p->name,
			    (unsigned long long)p->max_capacity);
	return worker_id(svc, cd, p, req->client_id, r);
}

McreplRpc__Code svc_auth_writer(struct master_service *svc, const void *cd,
				uint64_t client_id, struct reply *r)
{
	const struct auth_principal *p = rpc_call_principal(cd);

	/* the put's bounds are p's (store_quota.c) */
	store_put_caller(svc->store, svc->auth, svc->auth ? p : NULL, &r->why);
	if (!svc->auth || !client_id || !p)
		return MCREPL_RPC__CODE__OK; /* svc_auth_object said no */
	if (!auth_id_owned(p, client_id) ||
	    !store_client_known(svc->store, client_id)) {
		store_put_caller(svc->store, NULL, NULL, NULL);
		return deny(svc, cd, r, SVC_REFUSED_client_id,
			    "client_id %llu is not bound to principal '%s' "
			    "(leave it 0)",
			    (unsigned long long)client_id, p->name);
	}
	return MCREPL_RPC__CODE__OK;
}

/* A copy RPC: a worker call whose task is queued for client_id and names
 * the same object (and, for starts, the same segments). */
struct task_claim {
	uint64_t client_id, task_id;
	const char *tenant, *key;
	bool check_segments;
	uint64_t source, target;
};

static McreplRpc__Code svc_auth_task(struct master_service *svc, const void *cd,
				     const struct task_claim *c,
				     struct reply *r)
{
	McreplRpc__Code code = svc_auth_worker(svc, cd, c->client_id, r);
	const struct task *t;

	if (!svc->auth || code != MCREPL_RPC__CODE__OK)
		return code;
	t = store_task(svc->store, c->task_id);
	if (!t || t->client_id != c->client_id)
		return deny(svc, cd, r, SVC_REFUSED_task,
			    "task %llu is not queued for client_id %llu",
			    (unsigned long long)c->task_id,
			    (unsigned long long)c->client_id);
	if (strcmp(t->msg.tenant, c->tenant) || strcmp(t->msg.key, c->key) ||
	    (c->check_segments && (t->msg.source_segment_id != c->source ||
				   t->msg.target_segment_id != c->target)))
		return deny(svc, cd, r, SVC_REFUSED_task,
			    "task %llu names another object or other "
			    "segments",
			    (unsigned long long)c->task_id);
	return code;
}

/* ---- the method table's rule ----------------------------------------- */

/* The request's field `name` of `type` (not repeated), or NULL. */
static const void *field(const ProtobufCMessage *m, const char *name,
			 ProtobufCType type)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
							    name);

	if (!f || f->type != type || f->label == PROTOBUF_C_LABEL_REPEATED)
		return NULL;
	return (const char *)m + f->offset;
}

static uint64_t field_u64(const ProtobufCMessage *m, const char *name)
{
	const uint64_t *v = field(m, name, PROTOBUF_C_TYPE_UINT64);

	return v ? *v : 0;
}

static const char *field_str(const ProtobufCMessage *m, const char *name)
{
	const char *const *v = field(m, name, PROTOBUF_C_TYPE_STRING);

	return v && *v ? *v : "";
}

McreplRpc__Code svc_authorize(struct master_service *svc, const void *cd,
			      const struct master_method *m,
			      const ProtobufCMessage *req, struct reply *r)
{
	static const unsigned rights[] = {
	    [CALLER_READ] = AUTH_READ,
	    [CALLER_WRITE] = AUTH_WRITE,
	    [CALLER_REMOVE] = AUTH_REMOVE,
	};
	char what[64];

	if (!svc->auth || m->caller == CALLER_ANY)
		return MCREPL_RPC__CODE__OK;
	switch (m->caller) {
	case CALLER_READ:
	case CALLER_WRITE:
	case CALLER_REMOVE:
		return svc_auth_object(svc, cd, field_str(req, "tenant"),
				       rights[m->caller], r);
	case CALLER_WORKER:
		return svc_auth_worker(svc, cd, field_u64(req, "client_id"), r);
	case CALLER_WORKER_MOUNT:
		return svc_auth_mount(
		    svc, cd, (const McreplRpc__MountSegmentRequest *)req, r);
	case CALLER_WORKER_TASK: {
		struct task_claim c = {
		    .client_id = field_u64(req, "client_id"),
		    .task_id = field_u64(req, "task_id"),
		    .tenant = field_str(req, "tenant"),
		    .key = field_str(req, "key"),
		    /* a start names both segments: the task's */
		    .check_segments = field(req, "source_segment_id",
					    PROTOBUF_C_TYPE_UINT64) != NULL,
		    .source = field_u64(req, "source_segment_id"),
		    .target = field_u64(req, "target_segment_id"),
		};

		return svc_auth_task(svc, cd, &c, r);
	}
	case CALLER_WORKER_ADMIN:
		if (field_u64(req, "client_id"))
			return svc_auth_worker(svc, cd,
					       field_u64(req, "client_id"), r);
		snprintf(what, sizeof(what), "%s of a host", m->name);
		return svc_auth_admin(svc, cd, what, r);
	case CALLER_ADMIN:
		return svc_auth_admin(svc, cd, m->name, r);
	case CALLER_ANY:
		break;
	}
	return MCREPL_RPC__CODE__OK;
}
