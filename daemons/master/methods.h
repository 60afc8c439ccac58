/*
 * The master's RPC method table: one row per method of the Master service
 * (proto/mcrepl.proto), in the service's order. A row names the handler,
 * who may call the method, whether its reply goes out under the store lock,
 * what the HA gate does with it while a new leader recovers, and its
 * limit. The service binds its handlers from it (master_service_init),
 * the HA gate reads its class (ha_gate.c), docs/DAEMONS.md's method list
 * follows it, and tests/daemons/check_methods.c checks that every method
 * of the service has exactly one row. Adding an RPC: docs/CONTRIBUTING.md.
 */
#ifndef MCREPL_MASTER_METHODS_H
#define MCREPL_MASTER_METHODS_H

#include <stdbool.h>
#include <stddef.h>

#include "mcrepl.pb-c.h"

/* Every handler has the one shape of protobuf-c's service methods: the
 * service, the request, the closure that takes the reply, its data. */
#define METHOD_HANDLER(name, Req, Resp)                                        \
	void method_##name(McreplRpc__Master_Service *svc,                     \
			   const McreplRpc__##Req *req,                        \
			   McreplRpc__##Resp##_Closure done, void *cd)

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

typedef void (*method_fn)(void *svc, const ProtobufCMessage *req,
			  ProtobufCClosure done, void *cd);

struct master_method {
	const char *name; /* as in the proto, for docs and logs only */
	const ProtobufCMessageDescriptor *input;
	method_fn handler;
	enum method_caller caller;
	/* The reply carries strings or replica messages borrowed from the
	 * store, so it goes out before the store lock is released; the
	 * others reply after releasing it. */
	bool reply_under_lock;
	enum method_ha ha;
	/* why ha is right for the method, in one line (docs/DAEMONS.md) */
	const char *ha_why;
	const char *limit; /* the flag bounding one request, or NULL */
};

/* The rows, in the service descriptor's method order. */
extern const struct master_method master_methods[];
extern const size_t master_methods_n;

/* The row of the method taking requests of type input; NULL if none. */
const struct master_method *
master_method_by_input(const ProtobufCMessageDescriptor *input);

/* Binds every row's handler into svc at its method's index. */
void master_methods_bind(McreplRpc__Master_Service *svc);

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
