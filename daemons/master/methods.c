/* The master's RPC method table (see methods.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "methods.h"
#include "store.h"

#define IN(request) (&mcrepl_rpc__##request##__descriptor)

static uint32_t max_batch_keys(const struct master_opts *o)
{
	return o->max_batch_keys;
}

/* Most records one RegisterObjects may carry (the worker sends 256). */
#define MAX_RECORDS 4096

/* The HA class of each row with its reason (methods.h, docs/HA.md): a
 * method is served while recovering only when its answer and effect rest
 * on nothing a worker may still re-register. */
const struct master_method master_methods[] = {
    {.name = "MountSegment",
     .input = IN(mount_segment_request),
     .caller = CALLER_WORKER_MOUNT,
     .lock_why = "logs the mount or its refusal after the lock",
     .ha = HA_SERVE,
     .ha_why = "recovery itself: a worker mounts, then re-registers"},
    {.name = "UnmountSegment",
     .input = IN(unmount_segment_request),
     .caller = CALLER_WORKER,
     .lock_why = "logs the unmount after the lock",
     .ha = HA_SERVE,
     .ha_why = "the caller's own segment, which it mounted here"},
    {.name = "Heartbeat",
     .input = IN(heartbeat_request),
     .caller = CALLER_WORKER,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "keeps the re-registering workers known"},
    {.name = "PutStart",
     .input = IN(put_start_request),
     .caller = CALLER_WRITE,
     .flags = METHOD_LOCKED,
     .ha = HA_REFUSE,
     .ha_why = "a key not re-registered yet would be written over "
	       "(ALREADY_EXISTS unknown) and its region maybe placed on a "
	       "held one"},
    {.name = "PutEnd",
     .input = IN(put_end_request),
     .caller = CALLER_WRITE,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "ends only a put this leader started; another term's is "
	       "STALE"},
    {.name = "PutRevoke",
     .input = IN(put_revoke_request),
     .caller = CALLER_WRITE,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "revokes only a put this leader started; another term's is "
	       "STALE"},
    {.name = "GetReplicaList",
     .input = IN(get_replica_list_request),
     .caller = CALLER_READ,
     .flags = METHOD_LOCKED,
     .ha = HA_ASK_IF_NOTHING,
     .ha_why = "what it finds is served; nothing may be an object still "
	       "coming back"},
    {.name = "BatchGetReplicaList",
     .input = IN(batch_get_replica_list_request),
     .caller = CALLER_READ,
     .flags = METHOD_LOCKED,
     .limit = {.field = "keys",
	       .flag = "--max_batch_keys",
	       .of = max_batch_keys,
	       .nonempty = true,
	       .what = "a batch"},
     .ha = HA_ASK_IF_NOTHING,
     .ha_why = "as GetReplicaList, when any key finds nothing"},
    {.name = "Exist",
     .input = IN(exist_request),
     .caller = CALLER_READ,
     .flags = METHOD_LOCKED,
     .ha = HA_ASK_IF_NOTHING,
     .ha_why = "true is sure; false may be an object still coming back"},
    {.name = "Remove",
     .input = IN(remove_request),
     .caller = CALLER_REMOVE,
     .flags = METHOD_LOCKED,
     .ha = HA_REFUSE,
     .ha_why = "would remove only the replicas back so far (or answer "
	       "NOT_FOUND) and a later record would bring the key back"},
    {.name = "FetchTasks",
     .input = IN(fetch_tasks_request),
     .caller = CALLER_WORKER,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "this leader's own tasks and journal, which feed recovery"},
    {.name = "MarkTaskToComplete",
     .input = IN(mark_task_to_complete_request),
     .caller = CALLER_WORKER,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a task this leader queued"},
    {.name = "CopyStart",
     .input = IN(copy_start_request),
     .caller = CALLER_WORKER_TASK,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a task this leader queued, on an object it holds"},
    {.name = "CopyEnd",
     .input = IN(copy_end_request),
     .caller = CALLER_WORKER_TASK,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a copy this leader started"},
    {.name = "CopyRevoke",
     .input = IN(copy_revoke_request),
     .caller = CALLER_WORKER_TASK,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a copy this leader started"},
    {.name = "DynamicReplicaCopyStart",
     .input = IN(dynamic_replica_copy_start_request),
     .caller = CALLER_WORKER_TASK,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a task this leader queued, on an object it holds"},
    {.name = "DynamicReplicaCopyEnd",
     .input = IN(dynamic_replica_copy_end_request),
     .caller = CALLER_WORKER_TASK,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a copy this leader started"},
    {.name = "DynamicReplicaCopyRevoke",
     .input = IN(dynamic_replica_copy_revoke_request),
     .caller = CALLER_WORKER_TASK,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "only a copy this leader started"},
    {.name = "SubmitReplicaActionProposal",
     .input = IN(submit_replica_action_proposal_request),
     .caller = CALLER_ADMIN,
     .flags = METHOD_LOCKED,
     .ha = HA_REFUSE,
     .ha_why = "acts on a key's replicas, some maybe not re-registered yet"},
    {.name = "Stats",
     .input = IN(stats_request),
     .caller = CALLER_ANY,
     .lock_why = "renders the metrics text first, which takes the lock",
     .ha = HA_SERVE,
     .ha_why = "figures as they stand, for operators; nothing is decided "
	       "on them"},
    {.name = "Warmup",
     .input = IN(warmup_request),
     .caller = CALLER_ADMIN,
     .flags = METHOD_LOCKED,
     .ha = HA_REFUSE,
     .ha_why = "would warm only the keys back so far and call the rest done"},
    {.name = "Stat",
     .input = IN(stat_request),
     .caller = CALLER_READ,
     .flags = METHOD_LOCKED,
     .ha = HA_ASK_IF_NOTHING,
     .ha_why = "as GetReplicaList"},
    {.name = "RegisterObjects",
     .input = IN(register_objects_request),
     .caller = CALLER_WORKER,
     .flags = METHOD_LOCKED,
     .limit = {.field = "objects",
	       .most = MAX_RECORDS,
	       .what = "one RegisterObjects"},
     .ha = HA_SERVE,
     .ha_why = "recovery itself"},
    {.name = "Drain",
     .input = IN(drain_request),
     .caller = CALLER_WORKER_ADMIN,
     .flags = METHOD_LOCKED,
     .ha = HA_SERVE,
     .ha_why = "a refused drain is given up by the worker (it does not ask "
	       "again): what is back is planned, and the worker asks again "
	       "every poll"},
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

/* How many entries req's repeated field name holds (0 when it has none). */
static size_t count_of(const ProtobufCMessage *req, const char *name)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(req->descriptor,
							    name);

	if (!f || f->label != PROTOBUF_C_LABEL_REPEATED)
		return 0;
	return *(const size_t *)(const void *)((const char *)req +
					       f->quantifier_offset);
}

McreplRpc__Code method_limit_check(const struct master_method *m,
				   const struct master_opts *opts,
				   const ProtobufCMessage *req, char *msg,
				   size_t cap)
{
	const struct method_limit *l = &m->limit;
	uint32_t most = l->of ? l->of(opts) : l->most;
	size_t n;

	if (!l->field)
		return MCREPL_RPC__CODE__OK;
	n = count_of(req, l->field);
	if (n <= most && (n > 0 || !l->nonempty))
		return MCREPL_RPC__CODE__OK;
	snprintf(msg, cap, "%s holds %u..%u %s, not %zu", l->what,
		 l->nonempty ? 1u : 0u, most, l->field, n);
	return n ? MCREPL_RPC__CODE__TOO_MANY
		 : MCREPL_RPC__CODE__INVALID_ARGUMENT;
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
