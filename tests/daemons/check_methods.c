/* The master's RPC method table (daemons/master/methods.h): every method
 * of the service has exactly one row, in the service's order; binding
 * fills every handler; the HA gate's classes and the reply-under-lock
 * rule are the ones the docs state. */
#include <check.h>
#include <string.h>

#include "methods.h"

/* The field the authorization of a row's caller reads from the request
 * (svc_authorize), by name and type; NULL: none. */
static bool has(const struct master_method *m, const char *name,
		ProtobufCType type)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(m->input, name);

	return f && f->type == type && f->label != PROTOBUF_C_LABEL_REPEATED;
}

/* Every row's caller class finds what it checks in the method's request:
 * a tenant for the object rights, a client id for worker calls, the task,
 * object (and, for starts, both segments) for copy calls; and every
 * method's response can carry a refusal (Result, field "result"). The
 * classes are the ones docs/SECURITY.md states. */
START_TEST(test_methods_callers_find_their_fields)
{
	static const struct {
		const char *name;
		enum method_caller caller;
	} want[] = {
	    {"MountSegment", CALLER_WORKER_MOUNT},
	    {"UnmountSegment", CALLER_WORKER},
	    {"Heartbeat", CALLER_WORKER},
	    {"PutStart", CALLER_WRITE},
	    {"PutEnd", CALLER_WRITE},
	    {"PutRevoke", CALLER_WRITE},
	    {"GetReplicaList", CALLER_READ},
	    {"BatchGetReplicaList", CALLER_READ},
	    {"Exist", CALLER_READ},
	    {"Remove", CALLER_REMOVE},
	    {"FetchTasks", CALLER_WORKER},
	    {"MarkTaskToComplete", CALLER_WORKER},
	    {"CopyStart", CALLER_WORKER_TASK},
	    {"CopyEnd", CALLER_WORKER_TASK},
	    {"CopyRevoke", CALLER_WORKER_TASK},
	    {"DynamicReplicaCopyStart", CALLER_WORKER_TASK},
	    {"DynamicReplicaCopyEnd", CALLER_WORKER_TASK},
	    {"DynamicReplicaCopyRevoke", CALLER_WORKER_TASK},
	    {"SubmitReplicaActionProposal", CALLER_ADMIN},
	    {"Stats", CALLER_ANY},
	    {"Warmup", CALLER_ADMIN},
	    {"Stat", CALLER_READ},
	    {"RegisterObjects", CALLER_WORKER},
	    {"Drain", CALLER_WORKER_ADMIN},
	};
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;

	ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), master_methods_n);
	for (size_t i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];
		const ProtobufCFieldDescriptor *r =
		    protobuf_c_message_descriptor_get_field_by_name(
			d->methods[i].output, "result");

		ck_assert_str_eq(m->name, want[i].name);
		ck_assert_msg(m->caller == want[i].caller, "%s: caller %d",
			      m->name, (int)m->caller);
		ck_assert_msg(r && r->descriptor ==
				       &mcrepl_rpc__result__descriptor,
			      "%s: no result", m->name);
		switch (m->caller) {
		case CALLER_READ:
		case CALLER_WRITE:
		case CALLER_REMOVE:
			ck_assert_msg(has(m, "tenant", PROTOBUF_C_TYPE_STRING),
				      "%s", m->name);
			break;
		case CALLER_WORKER_TASK:
			ck_assert_msg(
			    has(m, "task_id", PROTOBUF_C_TYPE_UINT64) &&
				has(m, "key", PROTOBUF_C_TYPE_STRING) &&
				has(m, "tenant", PROTOBUF_C_TYPE_STRING),
			    "%s", m->name);
			ck_assert_msg(has(m, "source_segment_id",
					  PROTOBUF_C_TYPE_UINT64) ==
					  (strstr(m->name, "Start") != NULL),
				      "%s", m->name);
			/* fall through: and the client id */
		case CALLER_WORKER:
		case CALLER_WORKER_MOUNT:
		case CALLER_WORKER_ADMIN:
			ck_assert_msg(
			    has(m, "client_id", PROTOBUF_C_TYPE_UINT64), "%s",
			    m->name);
			break;
		case CALLER_ANY:
		case CALLER_ADMIN:
			break;
		}
	}
}
END_TEST

Suite *make_methods_suite(void);

START_TEST(test_methods_every_method_has_one_row_in_order)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;

	ck_assert_uint_eq(master_methods_n, d->n_methods);
	ck_assert_uint_eq(master_methods_n, 24);
	for (unsigned i = 0; i < d->n_methods; i++) {
		const struct master_method *row = &master_methods[i];
		unsigned seen = 0;

		ck_assert_str_eq(row->name, d->methods[i].name);
		ck_assert_ptr_eq(row->input, d->methods[i].input);
		ck_assert_ptr_nonnull(row->handler);
		ck_assert_ptr_eq(master_method_by_input(d->methods[i].input),
				 row);
		for (size_t j = 0; j < master_methods_n; j++)
			seen += master_methods[j].input == d->methods[i].input;
		ck_assert_msg(seen == 1, "%s: %u rows", row->name, seen);
	}
	ck_assert_ptr_null(
	    master_method_by_input(&mcrepl_rpc__result__descriptor));
}
END_TEST

START_TEST(test_methods_bind_fills_every_handler)
{
	McreplRpc__Master_Service svc;
	method_fn *slots;

	memset(&svc, 0, sizeof(svc));
	mcrepl_rpc__master__init(&svc, NULL);
	master_methods_bind(&svc);
	slots = (method_fn *)(void *)(&svc.base + 1);
	for (size_t i = 0; i < master_methods_n; i++)
		ck_assert_msg(slots[i] == master_methods[i].handler, "%s",
			      master_methods[i].name);
	ck_assert(svc.put_start == method_put_start);
	ck_assert(svc.drain == method_drain);
}
END_TEST

/* While a new leader recovers: what rests on objects not re-registered
 * yet is refused (a put, a remove, a warmup, a replica proposal), reads
 * that find nothing are asked again (BatchGetReplicaList and Stat as
 * GetReplicaList), the rest is served (docs/HA.md). */
START_TEST(test_methods_ha_classes)
{
	static const char *const ask[] = {
	    "GetReplicaList", "BatchGetReplicaList", "Exist", "Stat"};
	static const char *const refuse[] = {"PutStart", "Remove", "Warmup",
					     "SubmitReplicaActionProposal"};

	for (size_t i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];
		enum method_ha want = HA_SERVE;

		for (size_t j = 0; j < sizeof(refuse) / sizeof(refuse[0]); j++)
			if (strcmp(m->name, refuse[j]) == 0)
				want = HA_REFUSE;
		for (size_t j = 0; j < sizeof(ask) / sizeof(ask[0]); j++)
			if (strcmp(m->name, ask[j]) == 0)
				want = HA_ASK_IF_NOTHING;
		ck_assert_msg(m->ha == want, "%s: class %d, want %d", m->name,
			      (int)m->ha, (int)want);
	}
}
END_TEST

/* Every row's HA class carries its reason: one line, no newline, some
 * words (docs/DAEMONS.md lists them). */
START_TEST(test_methods_every_ha_class_has_a_reason)
{
	for (size_t i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];

		ck_assert_msg(m->ha_why != NULL, "%s: no HA reason", m->name);
		ck_assert_msg(strlen(m->ha_why) >= 10, "%s: HA reason \"%s\"",
			      m->name, m->ha_why);
		ck_assert_msg(strlen(m->ha_why) <= 200,
			      "%s: HA reason of %zu bytes", m->name,
			      strlen(m->ha_why));
		ck_assert_msg(!strchr(m->ha_why, '\n'),
			      "%s: HA reason of more than a line", m->name);
	}
}
END_TEST

/* The replies that carry store memory (replica lists, task lists, the
 * segments of Stats) go out under the store lock; no other does. */
START_TEST(test_methods_reply_under_lock_only_with_store_memory)
{
	static const char *const under[] = {"PutStart",
					    "GetReplicaList",
					    "BatchGetReplicaList",
					    "FetchTasks",
					    "CopyStart",
					    "DynamicReplicaCopyStart",
					    "Stats",
					    "Stat"};
	unsigned n = 0;

	for (size_t i = 0; i < master_methods_n; i++) {
		bool want = false;

		for (size_t j = 0; j < sizeof(under) / sizeof(under[0]); j++)
			want |= strcmp(master_methods[i].name, under[j]) == 0;
		ck_assert_msg(master_methods[i].reply_under_lock == want, "%s",
			      master_methods[i].name);
		n += want;
	}
	ck_assert_uint_eq(n, 8);
}
END_TEST

Suite *make_methods_suite(void)
{
	Suite *s = suite_create("methods");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_methods_every_method_has_one_row_in_order);
	tcase_add_test(tc, test_methods_bind_fills_every_handler);
	tcase_add_test(tc, test_methods_ha_classes);
	tcase_add_test(tc, test_methods_every_ha_class_has_a_reason);
	tcase_add_test(tc,
		       test_methods_reply_under_lock_only_with_store_memory);
	tcase_add_test(tc, test_methods_callers_find_their_fields);
	suite_add_tcase(s, tc);
	return s;
}
