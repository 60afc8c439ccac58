/*
 * The master's RPC method table: one row per method of the Master service
 * (proto/mcrepl.proto), in the service's order. A row says who may call
 * the method, how its handler stands to the store lock, the bound on one
 * request, and what the HA gate does with it while a new leader recovers.
 * The service runs each call by its row (master_invoke, service.c): the
 * caller's check, the bound, the lock, then the handler; the HA gate
 * reads the class (ha_gate.c). Handlers are bound by name in the
 * service's order (MASTER_HANDLERS), so the compiler checks each one's
 * request and reply types. tests/daemons/check_methods.c checks the rows
 * and that docs/DAEMONS.md's method table is the one they render. Adding
 * an RPC: docs/CONTRIBUTING.md.
 */
#ifndef MCREPL_MASTER_METHODS_H
#define MCREPL_MASTER_METHODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl.pb-c.h"

/* Every handler has the one shape of protobuf-c's service methods: the
 * service, the request, the closure that takes the reply, its data. */
#define METHOD_HANDLER(name, Req, Resp)                                        \
	void method_##name(McreplRpc__Master_Service *svc,                     \
			   const McreplRpc__##Req *req,                        \
			   McreplRpc__##Resp##_Closure done, void *cd)

/* The handlers in the service's order, for a McreplRpc__Master_Service:
 * protobuf-c's initializer names method_<method> for each method, typed
 * as the method's request and reply. */
#define MASTER_HANDLERS MCREPL_RPC__MASTER__INIT(method_)

/* Who may call a method once authentication is on. The service checks
 * it from the row before the handler runs (svc_authorize(), reading the
 * request's tenant, client_id, task_id, key and segment fields by name),
 * so no handler can leave it out. */
enum method_caller {
	CALLER_ANY,	     /* any principal (Stats: totals; details admin) */
	CALLER_READ,	     /* a client with the read right on the tenant */
	CALLER_WRITE,	     /* ... the write right */
	CALLER_REMOVE,	     /* ... the remove right */
	CALLER_WORKER,	     /* the worker owning the client id */
	CALLER_WORKER_MOUNT, /* ... for a host, domain, capacity allowed it */
	CALLER_WORKER_TASK,  /* that worker, for a task queued for it */
	CALLER_WORKER_ADMIN, /* the worker for itself (client_id), or an admin */
	CALLER_ADMIN,	     /* an admin client */
};

/* What the HA gate does with a method while a new leader recovers (its
 * workers re-register their objects, docs/HA.md): a method whose answer
 * or effect depends on objects not yet re-registered is refused, or, for
 * a read, asked again when it finds nothing. */
enum method_ha {
	HA_SERVE,	   /* served as usual */
	HA_REFUSE,	   /* refused UNAVAILABLE "recovering": ask again */
	HA_ASK_IF_NOTHING, /* served; an answer of nothing becomes "ask again" */
};

/* How a handler stands to the store lock (enum method_flags). */
enum method_flags {
	/* master_invoke holds the store lock over the whole handler, its
	 * reply included (replies borrow the store's strings and replicas),
	 * and, for a task's caller, over the check of the task too. A
	 * handler that defers its reply (rpc_call_defer) gives it later from
	 * where the wait ends. */
	METHOD_LOCKED = 1u << 0,
	/* none: the handler takes the lock itself around its store calls;
	 * the row's lock_why says what it does outside */
};

struct master_opts;

/* The bound on one request: its repeated field `field` holds at most
 * `most` entries (the value of flag `flag`, read by `of`, when named) and,
 * when nonempty, at least one. master_invoke refuses a request outside it
 * before the handler runs: TOO_MANY, or INVALID_ARGUMENT for none, with
 * "<what> holds <least>..<most> <field>, not <n>". */
struct method_limit {
	const char *field; /* the counted repeated field; NULL: no bound */
	const char *flag;  /* "--max_batch_keys", or NULL: most */
	uint32_t (*of)(const struct master_opts *o);
	uint32_t most;
	bool nonempty;
	const char *what; /* "a batch" */
};

struct master_method {
	const char *name; /* as in the proto, for docs and logs only */
	const ProtobufCMessageDescriptor *input;
	enum method_caller caller;
	unsigned flags; /* enum method_flags */
	/* without METHOD_LOCKED: what the handler does outside the lock */
	const char *lock_why;
	struct method_limit limit;
	enum method_ha ha;
	/* why ha is right for the method, in one line (docs/DAEMONS.md) */
	const char *ha_why;
};

/* The rows, in the service descriptor's method order. */
extern const struct master_method master_methods[];
extern const size_t master_methods_n;

/* The row of the method taking requests of type input; NULL if none. */
const struct master_method *
master_method_by_input(const ProtobufCMessageDescriptor *input);

/* m's bound (its limit) on req: OK, or the refusal's code with its line in
 * msg[0, cap). opts: the master's, for a bound a flag sets. */
McreplRpc__Code method_limit_check(const struct master_method *m,
				   const struct master_opts *opts,
				   const ProtobufCMessage *req, char *msg,
				   size_t cap);

/* Answers a call of a method whose output is od with a message holding
 * only its Result: res (every response's field 1, "result"). */
void method_reply_result(const ProtobufCMessageDescriptor *od,
			 McreplRpc__Result *res, ProtobufCClosure done,
			 void *cd);

/* The handlers (service*.c, ha_service.c). */
METHOD_HANDLER(mount_segment, MountSegmentRequest, MountSegmentResponse);
METHOD_HANDLER(unmount_segment, UnmountSegmentRequest, UnmountSegmentResponse);
METHOD_HANDLER(heartbeat, HeartbeatRequest, HeartbeatResponse);
METHOD_HANDLER(put_start, PutStartRequest, PutStartResponse);
METHOD_HANDLER(put_end, PutEndRequest, PutEndResponse);
METHOD_HANDLER(put_revoke, PutRevokeRequest, PutRevokeResponse);
METHOD_HANDLER(get_replica_list, GetReplicaListRequest, GetReplicaListResponse);
METHOD_HANDLER(batch_get_replica_list, BatchGetReplicaListRequest,
	       BatchGetReplicaListResponse);
METHOD_HANDLER(exist, ExistRequest, ExistResponse);
METHOD_HANDLER(remove, RemoveRequest, RemoveResponse);
METHOD_HANDLER(fetch_tasks, FetchTasksRequest, FetchTasksResponse);
METHOD_HANDLER(mark_task_to_complete, MarkTaskToCompleteRequest,
	       MarkTaskToCompleteResponse);
METHOD_HANDLER(copy_start, CopyStartRequest, CopyStartResponse);
METHOD_HANDLER(copy_end, CopyEndRequest, CopyEndResponse);
METHOD_HANDLER(copy_revoke, CopyRevokeRequest, CopyRevokeResponse);
METHOD_HANDLER(dynamic_replica_copy_start, DynamicReplicaCopyStartRequest,
	       DynamicReplicaCopyStartResponse);
METHOD_HANDLER(dynamic_replica_copy_end, DynamicReplicaCopyEndRequest,
	       DynamicReplicaCopyEndResponse);
METHOD_HANDLER(dynamic_replica_copy_revoke, DynamicReplicaCopyRevokeRequest,
	       DynamicReplicaCopyRevokeResponse);
METHOD_HANDLER(submit_replica_action_proposal,
	       SubmitReplicaActionProposalRequest,
	       SubmitReplicaActionProposalResponse);
METHOD_HANDLER(stats, StatsRequest, StatsResponse);
METHOD_HANDLER(warmup, WarmupRequest, WarmupResponse);
METHOD_HANDLER(stat, StatRequest, GetReplicaListResponse);
METHOD_HANDLER(register_objects, RegisterObjectsRequest,
	       RegisterObjectsResponse);
METHOD_HANDLER(drain, DrainRequest, DrainResponse);

#endif
