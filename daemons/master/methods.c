/* The master's RPC method table (see methods.h). */
#include <stdlib.h>
#include <string.h>

#include "methods.h"

#define ROW(Name, lower, input_lower, who, under_lock, ha_class, lim)          \
	{                                                                      \
		.name = #Name,                                                 \
		.input = &mcrepl_rpc__##input_lower##__descriptor,             \
		.handler = (method_fn)method_##lower, .caller = who,           \
		.reply_under_lock = under_lock, .ha = ha_class, .limit = lim,  \
	}

const struct master_method master_methods[] = {
    ROW(MountSegment, mount_segment, mount_segment_request, CALLER_WORKER_MOUNT,
	false, HA_SERVE, NULL),
    ROW(UnmountSegment, unmount_segment, unmount_segment_request, CALLER_WORKER,
	false, HA_SERVE, NULL),
    ROW(Heartbeat, heartbeat, heartbeat_request, CALLER_WORKER, false, HA_SERVE,
	NULL),
    ROW(PutStart, put_start, put_start_request, CALLER_WRITE, true, HA_REFUSE,
	NULL),
    ROW(PutEnd, put_end, put_end_request, CALLER_WRITE, false, HA_SERVE, NULL),
    ROW(PutRevoke, put_revoke, put_revoke_request, CALLER_WRITE, false,
	HA_SERVE, NULL),
    ROW(GetReplicaList, get_replica_list, get_replica_list_request, CALLER_READ,
	true, HA_ASK_IF_NOTHING, NULL),
    ROW(BatchGetReplicaList, batch_get_replica_list,
	batch_get_replica_list_request, CALLER_READ, true, HA_ASK_IF_NOTHING,
	"--max_batch_keys"),
    ROW(Exist, exist, exist_request, CALLER_READ, false, HA_ASK_IF_NOTHING,
	NULL),
    ROW(Remove, remove, remove_request, CALLER_REMOVE, false, HA_SERVE, NULL),
    ROW(FetchTasks, fetch_tasks, fetch_tasks_request, CALLER_WORKER, true,
	HA_SERVE, NULL),
    ROW(MarkTaskToComplete, mark_task_to_complete,
	mark_task_to_complete_request, CALLER_WORKER, false, HA_SERVE, NULL),
    ROW(CopyStart, copy_start, copy_start_request, CALLER_WORKER_TASK, true,
	HA_SERVE, NULL),
    ROW(CopyEnd, copy_end, copy_end_request, CALLER_WORKER_TASK, false,
	HA_SERVE, NULL),
    ROW(CopyRevoke, copy_revoke, copy_revoke_request, CALLER_WORKER_TASK, false,
	HA_SERVE, NULL),
    ROW(DynamicReplicaCopyStart, dynamic_replica_copy_start,
	dynamic_replica_copy_start_request, CALLER_WORKER_TASK, true, HA_SERVE,
	NULL),
    ROW(DynamicReplicaCopyEnd, dynamic_replica_copy_end,
	dynamic_replica_copy_end_request, CALLER_WORKER_TASK, false, HA_SERVE,
	NULL),
    ROW(DynamicReplicaCopyRevoke, dynamic_replica_copy_revoke,
	dynamic_replica_copy_revoke_request, CALLER_WORKER_TASK, false,
	HA_SERVE, NULL),
    ROW(SubmitReplicaActionProposal, submit_replica_action_proposal,
	submit_replica_action_proposal_request, CALLER_ADMIN, false, HA_SERVE,
	NULL),
    ROW(Stats, stats, stats_request, CALLER_ANY, true, HA_SERVE, NULL),
    ROW(Warmup, warmup, warmup_request, CALLER_ADMIN, false, HA_SERVE, NULL),
    ROW(Stat, stat, stat_request, CALLER_READ, true, HA_ASK_IF_NOTHING, NULL),
    ROW(RegisterObjects, register_objects, register_objects_request,
	CALLER_WORKER, false, HA_SERVE, NULL),
    ROW(Drain, drain, drain_request, CALLER_WORKER_ADMIN, false, HA_SERVE,
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
