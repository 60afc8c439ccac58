/* The master's RPC method table (see methods.h). */
#include <stdlib.h>
#include <string.h>

#include "methods.h"

#define ROW(Name, lower, input_lower, who, under_lock, ha_class, why, lim)     \
	{                                                                      \
		.name = #Name,                                                 \
		.input = &mcrepl_rpc__##input_lower##__descriptor,             \
		.handler = (method_fn)method_##lower, .caller = who,           \
		.reply_under_lock = under_lock, .ha = ha_class, .ha_why = why, \
		.limit = lim,                                                  \
	}

/* The HA class of each row with its reason (methods.h, docs/HA.md): a
 * method is served while recovering only when its answer and effect rest
 * on nothing a worker may still re-register. */
const struct master_method master_methods[] = {
    ROW(MountSegment, mount_segment, mount_segment_request, CALLER_WORKER_MOUNT,
	false, HA_SERVE, "recovery itself: a worker mounts, then re-registers",
	NULL),
    ROW(UnmountSegment, unmount_segment, unmount_segment_request, CALLER_WORKER,
	false, HA_SERVE, "the caller's own segment, which it mounted here",
	NULL),
    ROW(Heartbeat, heartbeat, heartbeat_request, CALLER_WORKER, false, HA_SERVE,
	"keeps the re-registering workers known", NULL),
    ROW(PutStart, put_start, put_start_request, CALLER_WRITE, true, HA_REFUSE,
	"a key not re-registered yet would be written over (ALREADY_EXISTS "
	"unknown) and its region maybe placed on a held one",
	NULL),
    ROW(PutEnd, put_end, put_end_request, CALLER_WRITE, false, HA_SERVE,
	"ends only a put this leader started; another term's is STALE", NULL),
    ROW(PutRevoke, put_revoke, put_revoke_request, CALLER_WRITE, false,
	HA_SERVE,
	"revokes only a put this leader started; another term's is "
	"STALE",
	NULL),
    ROW(GetReplicaList, get_replica_list, get_replica_list_request, CALLER_READ,
	true, HA_ASK_IF_NOTHING,
	"what it finds is served; nothing may be an object still coming back",
	NULL),
    ROW(BatchGetReplicaList, batch_get_replica_list,
	batch_get_replica_list_request, CALLER_READ, true, HA_ASK_IF_NOTHING,
	"as GetReplicaList, when any key finds nothing", "--max_batch_keys"),
    ROW(Exist, exist, exist_request, CALLER_READ, false, HA_ASK_IF_NOTHING,
	"true is sure; false may be an object still coming back", NULL),
    ROW(Remove, remove, remove_request, CALLER_REMOVE, false, HA_REFUSE,
	"would remove only the replicas back so far (or answer NOT_FOUND) "
	"and a later record would bring the key back",
	NULL),
    ROW(FetchTasks, fetch_tasks, fetch_tasks_request, CALLER_WORKER, true,
	HA_SERVE, "this leader's own tasks and journal, which feed recovery",
	NULL),
    ROW(MarkTaskToComplete, mark_task_to_complete,
	mark_task_to_complete_request, CALLER_WORKER, false, HA_SERVE,
	"only a task this leader queued", NULL),
    ROW(CopyStart, copy_start, copy_start_request, CALLER_WORKER_TASK, true,
	HA_SERVE, "only a task this leader queued, on an object it holds",
	NULL),
    ROW(CopyEnd, copy_end, copy_end_request, CALLER_WORKER_TASK, false,
	HA_SERVE, "only a copy this leader started", NULL),
    ROW(CopyRevoke, copy_revoke, copy_revoke_request, CALLER_WORKER_TASK, false,
	HA_SERVE, "only a copy this leader started", NULL),
    ROW(DynamicReplicaCopyStart, dynamic_replica_copy_start,
	dynamic_replica_copy_start_request, CALLER_WORKER_TASK, true, HA_SERVE,
	"only a task this leader queued, on an object it holds", NULL),
    ROW(DynamicReplicaCopyEnd, dynamic_replica_copy_end,
	dynamic_replica_copy_end_request, CALLER_WORKER_TASK, false, HA_SERVE,
	"only a copy this leader started", NULL),
    ROW(DynamicReplicaCopyRevoke, dynamic_replica_copy_revoke,
	dynamic_replica_copy_revoke_request, CALLER_WORKER_TASK, false,
	HA_SERVE, "only a copy this leader started", NULL),
    ROW(SubmitReplicaActionProposal, submit_replica_action_proposal,
	submit_replica_action_proposal_request, CALLER_ADMIN, false, HA_REFUSE,
	"acts on a key's replicas, some maybe not re-registered yet", NULL),
    ROW(Stats, stats, stats_request, CALLER_ANY, true, HA_SERVE,
	"figures as they stand, for operators; nothing is decided on them",
	NULL),
    ROW(Warmup, warmup, warmup_request, CALLER_ADMIN, false, HA_REFUSE,
	"would warm only the keys back so far and call the rest done", NULL),
    ROW(Stat, stat, stat_request, CALLER_READ, true, HA_ASK_IF_NOTHING,
	"as GetReplicaList", NULL),
    ROW(RegisterObjects, register_objects, register_objects_request,
	CALLER_WORKER, false, HA_SERVE, "recovery itself", NULL),
    ROW(Drain, drain, drain_request, CALLER_WORKER_ADMIN, false, HA_SERVE,
	"a refused drain is given up by the worker (it does not ask again): "
	"what is back is planned, and the worker asks again every poll",
	NULL),
};

const size_t master_methods_n =
    sizeof(master_methods) / sizeof(master_methods[0]);

const struct master_method *
master_method_by_input(const ProtobufCMessageDescriptor *input)
{
	for (size_t i = 0; i < master_methods_n; i++)
		if (master_methods[i].input == input)
			return &master_methods[i];
	return NULL;
}

void master_methods_bind(McreplRpc__Master_Service *svc)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;
	/* protobuf-c keeps the handlers right after the base, in method
	 * order (protobuf_c_service_invoke_internal) */
	method_fn *slots = (method_fn *)(void *)(&svc->base + 1);

	for (unsigned i = 0; i < d->n_methods; i++) {
		const struct master_method *m =
		    master_method_by_input(d->methods[i].input);

		slots[i] = m ? m->handler : NULL;
	}
}

void method_reply_result(const ProtobufCMessageDescriptor *od,
			 McreplRpc__Result *res, ProtobufCClosure done,
			 void *cd)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(od, "result");
	ProtobufCMessage *msg = calloc(1, od->sizeof_message);

	if (!msg) {
		done(NULL, cd);
		return;
	}
	protobuf_c_message_init(od, msg);
	if (f && f->type == PROTOBUF_C_TYPE_MESSAGE &&
	    f->descriptor == &mcrepl_rpc__result__descriptor)
		*(McreplRpc__Result **)(void *)((char *)msg + f->offset) = res;
	done(msg, cd);
	free(msg);
}
