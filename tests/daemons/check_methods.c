/* The master's RPC method table (daemons/master/methods.h): every method
 * of the service has exactly one row, in the service's order, each with
 * a handler, a caller its check finds fields for, a lock rule, an HA
 * class with its reason; the service runs what the rows say (the lock,
 * the bound); and docs/DAEMONS.md's method table is the one the rows
 * render. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flagparse.h"
#include "flags.h"
#include "methods.h"
#include "rpc_dispatch.h"
#include "service.h"

/* The field the authorization of a row's caller reads from the request
 * (svc_authorize), by name and type; NULL: none. */
static bool has(const struct master_method *m, const char *name,
		ProtobufCType type)
{
	const ProtobufCFieldDescriptor *f =
	    protobuf_c_message_descriptor_get_field_by_name(m->input, name);

	return f && f->type == type && f->label != PROTOBUF_C_LABEL_REPEATED;
}

/* What m's caller class checks is in its request. */
static void assert_caller_fields(const struct master_method *m)
{
	switch (m->caller) {
	case CALLER_READ:
	case CALLER_WRITE:
	case CALLER_REMOVE:
		ck_assert_msg(has(m, "tenant", PROTOBUF_C_TYPE_STRING), "%s",
			      m->name);
		break;
	case CALLER_WORKER_TASK:
		ck_assert_msg(has(m, "task_id", PROTOBUF_C_TYPE_UINT64) &&
				  has(m, "key", PROTOBUF_C_TYPE_STRING) &&
				  has(m, "tenant", PROTOBUF_C_TYPE_STRING),
			      "%s", m->name);
		ck_assert_msg(
		    has(m, "source_segment_id", PROTOBUF_C_TYPE_UINT64) ==
			(strstr(m->name, "Start") != NULL),
		    "%s", m->name);
		/* fall through: and the client id */
	case CALLER_WORKER:
	case CALLER_WORKER_MOUNT:
	case CALLER_WORKER_ADMIN:
		ck_assert_msg(has(m, "client_id", PROTOBUF_C_TYPE_UINT64), "%s",
			      m->name);
		break;
	case CALLER_ANY:
	case CALLER_ADMIN:
		break;
	}
}

/* Every row's caller class finds what it checks in the method's request
 * (a tenant for the object rights, a client id for worker calls, the
 * task, object and, for starts, both segments for copy calls), and every
 * method's response can carry a refusal (Result, field "result"). */
START_TEST(test_methods_callers_find_their_fields)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;

	for (size_t i = 0; i < master_methods_n; i++) {
		const ProtobufCFieldDescriptor *r =
		    protobuf_c_message_descriptor_get_field_by_name(
			d->methods[i].output, "result");

		ck_assert_msg(r && r->descriptor ==
				       &mcrepl_rpc__result__descriptor,
			      "%s: no result", master_methods[i].name);
		assert_caller_fields(&master_methods[i]);
	}
}
END_TEST

Suite *make_methods_suite(void);

START_TEST(test_methods_every_method_has_one_row_in_order)
{
	const ProtobufCServiceDescriptor *d = &mcrepl_rpc__master__descriptor;

	ck_assert_uint_eq(master_methods_n, d->n_methods);
	for (unsigned i = 0; i < d->n_methods; i++) {
		const struct master_method *row = &master_methods[i];
		unsigned seen = 0;

		ck_assert_str_eq(row->name, d->methods[i].name);
		ck_assert_ptr_eq(row->input, d->methods[i].input);
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

/* The service binds every method's handler (MASTER_HANDLERS: by name, in
 * the service's order, typed by the compiler) and runs calls itself. */
START_TEST(test_methods_service_binds_every_handler)
{
	typedef void (*any_fn)(void);
	struct master_service svc;
	const any_fn *slots;

	master_service_init(&svc, NULL, NULL, NULL);
	slots = (const any_fn *)(const void *)(&svc.base.base + 1);
	for (size_t i = 0; i < master_methods_n; i++)
		ck_assert_msg(slots[i] != NULL, "%s", master_methods[i].name);
	ck_assert(svc.base.put_start == method_put_start);
	ck_assert(svc.base.drain == method_drain);
	ck_assert(svc.base.base.invoke != protobuf_c_service_invoke_internal);
	master_service_fini(&svc);
}
END_TEST

/* No worker call is refused while a new leader recovers: re-registering
 * needs them (docs/HA.md). Every class carries its reason: one line,
 * some words. */
START_TEST(test_methods_ha_classes_and_reasons)
{
	for (size_t i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];

		ck_assert_msg(m->ha == HA_SERVE || m->ha == HA_REFUSE ||
				  m->ha == HA_ASK_IF_NOTHING,
			      "%s: class %d", m->name, (int)m->ha);
		if (m->caller >= CALLER_WORKER &&
		    m->caller <= CALLER_WORKER_TASK)
			ck_assert_msg(m->ha != HA_REFUSE, "%s", m->name);
		ck_assert_msg(m->ha_why != NULL, "%s: no HA reason", m->name);
		ck_assert_msg(
		    strlen(m->ha_why) >= 10 && strlen(m->ha_why) <= 200 &&
			!strchr(m->ha_why, '\n') && !strchr(m->ha_why, '|'),
		    "%s: HA reason \"%s\"", m->name, m->ha_why);
	}
}
END_TEST

/* A row either has the service hold the lock or says what its handler
 * does outside it; a task's check and the handler it admits share one
 * hold (the task cannot change between them). */
START_TEST(test_methods_lock_rule_per_row)
{
	unsigned locked = 0;

	for (size_t i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];
		bool held = (m->flags & METHOD_LOCKED) != 0;

		ck_assert_msg((m->flags & ~(unsigned)METHOD_LOCKED) == 0, "%s",
			      m->name);
		ck_assert_msg(held == (m->lock_why == NULL), "%s", m->name);
		if (m->caller == CALLER_WORKER_TASK)
			ck_assert_msg(held, "%s", m->name);
		locked += held;
	}
	ck_assert_uint_eq(locked, master_methods_n - 3);
}
END_TEST

/* ---- the service runs the rows ----------------------------------------- */

static struct store *probe_store;
static atomic_bool probe_got;

static void *probe_lock(void *arg)
{
	(void)arg;
	store_lock(probe_store);
	atomic_store(&probe_got, true);
	store_unlock(probe_store);
	return NULL;
}

struct answer {
	unsigned replies;
	bool lock_held; /* the store lock, when the reply went out */
	pthread_t prober;
	McreplRpc__Code code;
	char message[256];
};

/* A reply: its code and line, and whether the store lock was held as it
 * went out: a thread taking the lock gets it within 20 ms when it is free
 * (a slow thread can only make a free lock look held); when it is held,
 * the thread waits for the call to return and is joined then. */
static void reply(void *arg, const rpc_frame_head *head,
		  const ProtobufCMessage *msg)
{
	struct answer *a = arg;
	const ProtobufCFieldDescriptor *f;
	const McreplRpc__Result *res = NULL;
	struct timespec ms = {0, 1000000};

	a->replies++;
	a->code = (McreplRpc__Code)head->status;
	atomic_store(&probe_got, false);
	ck_assert_int_eq(pthread_create(&a->prober, NULL, probe_lock, NULL), 0);
	for (int i = 0; i < 20 && !atomic_load(&probe_got); i++)
		nanosleep(&ms, NULL);
	a->lock_held = !atomic_load(&probe_got);
	f = msg ? protobuf_c_message_descriptor_get_field_by_name(
		      msg->descriptor, "result")
		: NULL;
	if (f)
		res = *(const McreplRpc__Result *const
			    *)(const void *)((const char *)msg + f->offset);
	if (res) {
		a->code = res->code;
		snprintf(a->message, sizeof(a->message), "%s", res->message);
	}
}

static uint64_t fixed_now(void)
{
	return 1000;
}

/* Calls method i of svc with req (through the server's dispatch). */
static struct answer call(struct master_service *svc, unsigned i,
			  const ProtobufCMessage *req)
{
	McreplRpc__Envelope env;
	struct answer a = {0};
	size_t n = protobuf_c_message_get_packed_size(req);
	uint8_t *body = malloc(n ? n : 1);

	ck_assert(body && protobuf_c_message_pack(req, body) == n);
	mcrepl_rpc__envelope__init(&env);
	env.method = i;
	env.body.data = body;
	env.body.len = n;
	rpc_dispatch(&svc->base.base, &env, reply, &a);
	free(body);
	ck_assert_uint_eq(a.replies, 1);
	pthread_join(a.prober, NULL);
	return a;
}

#define BATCH (&mcrepl_rpc__batch_get_replica_list_request__descriptor)

static struct store *new_store(struct master_opts *o)
{
	static const uint8_t secret[GRANT_SECRET_BYTES] = "methods-test-key";
	struct store *s = NULL;

	ck_assert_int_eq(store_create(o, secret, 7, &s), 0);
	return s;
}

/* A METHOD_LOCKED row's handler replies with the store lock held (by the
 * service, not the handler), whatever its answer. */
START_TEST(test_methods_locked_rows_reply_under_the_lock)
{
	struct master_opts o;
	struct master_service svc;
	char k[] = "k", *keys[1] = {k};

	master_opts_defaults(&o);
	probe_store = new_store(&o);
	master_service_init(&svc, probe_store, fixed_now, NULL);
	for (unsigned i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];
		ProtobufCMessage *req;
		struct answer a;

		if (!(m->flags & METHOD_LOCKED))
			continue;
		req = calloc(1, m->input->sizeof_message);
		ck_assert_ptr_nonnull(req);
		protobuf_c_message_init(m->input, req);
		if (m->input == BATCH) {
			McreplRpc__BatchGetReplicaListRequest *b = (void *)req;

			b->keys = keys; /* one key: within its bound */
			b->n_keys = 1;
		}
		a = call(&svc, i, req);
		ck_assert_msg(a.lock_held, "%s replied without the lock",
			      m->name);
		free(req);
	}
	master_service_fini(&svc);
	store_destroy(probe_store);
}
END_TEST

/* m's bound on req once its counted field holds n (*count): code, and
 * the refusal's line want ("" when none). */
static void expect_bound(const struct master_method *m,
			 const struct master_opts *o, ProtobufCMessage *req,
			 size_t *count, size_t n, McreplRpc__Code code,
			 const char *want)
{
	char msg[128] = "";

	*count = n;
	ck_assert_int_eq(method_limit_check(m, o, req, msg, sizeof(msg)), code);
	ck_assert_str_eq(msg, want);
}

/* BatchGetReplicaList's bound is the flag its row names: 1..N keys, exact
 * codes and lines at, past and under it. */
START_TEST(test_methods_batch_bound_is_its_flag)
{
	char prog[] = "mcrepl-master", flag[] = "--max_batch_keys=7";
	char *argv[] = {prog, flag};
	static struct master_flags f;
	const struct master_method *b = master_method_by_input(BATCH);
	McreplRpc__BatchGetReplicaListRequest req;
	char k[] = "k", *keys[8] = {k, k, k, k, k, k, k, k};

	ck_assert_int_eq(master_flags_parse(&f, 2, argv), 0);
	ck_assert_ptr_nonnull(flags_find(master_flag_set(), "max_batch_keys"));
	ck_assert_str_eq(b->limit.flag, "--max_batch_keys");
	ck_assert_uint_eq(b->limit.of(&f.opts), 7);
	mcrepl_rpc__batch_get_replica_list_request__init(&req);
	req.keys = keys;
	expect_bound(b, &f.opts, &req.base, &req.n_keys, 7,
		     MCREPL_RPC__CODE__OK, "");
	expect_bound(b, &f.opts, &req.base, &req.n_keys, 8,
		     MCREPL_RPC__CODE__TOO_MANY,
		     "a batch holds 1..7 keys, not 8");
	expect_bound(b, &f.opts, &req.base, &req.n_keys, 0,
		     MCREPL_RPC__CODE__INVALID_ARGUMENT,
		     "a batch holds 1..7 keys, not 0");
}
END_TEST

/* RegisterObjects' bound is fixed: 0..4096 records. */
START_TEST(test_methods_register_objects_bound)
{
	const struct master_method *m = master_method_by_input(
	    &mcrepl_rpc__register_objects_request__descriptor);
	McreplRpc__RegisterObjectsRequest req;
	struct master_opts o;

	master_opts_defaults(&o);
	mcrepl_rpc__register_objects_request__init(&req);
	ck_assert_ptr_null(m->limit.flag);
	expect_bound(m, &o, &req.base, &req.n_objects, 0, MCREPL_RPC__CODE__OK,
		     "");
	expect_bound(m, &o, &req.base, &req.n_objects, 4096,
		     MCREPL_RPC__CODE__OK, "");
	expect_bound(m, &o, &req.base, &req.n_objects, 4097,
		     MCREPL_RPC__CODE__TOO_MANY,
		     "one RegisterObjects holds 0..4096 objects, not 4097");
}
END_TEST

/* A row's bound counts a repeated field of its request, and is a flag's
 * (with its reader) or a fixed number, and names what it bounds. */
START_TEST(test_methods_bounds_count_repeated_fields)
{
	for (size_t i = 0; i < master_methods_n; i++) {
		const struct master_method *m = &master_methods[i];
		const struct method_limit *l = &m->limit;
		const ProtobufCFieldDescriptor *fd;

		if (!l->field)
			continue;
		fd = protobuf_c_message_descriptor_get_field_by_name(m->input,
								     l->field);
		ck_assert_msg(fd && fd->label == PROTOBUF_C_LABEL_REPEATED,
			      "%s", m->name);
		ck_assert_msg(!l->flag == !l->of && (l->flag || l->most) &&
				  l->what,
			      "%s", m->name);
	}
}
END_TEST

/* Through the service: a batch past --max_batch_keys is refused before
 * its handler, with the bound's code and line. */
START_TEST(test_methods_service_refuses_past_the_bound)
{
	struct master_opts o;
	struct master_service svc;
	McreplRpc__BatchGetReplicaListRequest req;
	char k[] = "k", *keys[3] = {k, k, k};
	unsigned i = (unsigned)(master_method_by_input(BATCH) - master_methods);
	struct answer a;

	master_opts_defaults(&o);
	o.max_batch_keys = 2;
	probe_store = new_store(&o);
	master_service_init(&svc, probe_store, fixed_now, NULL);
	mcrepl_rpc__batch_get_replica_list_request__init(&req);
	req.keys = keys;
	req.n_keys = 3;
	a = call(&svc, i, &req.base);
	ck_assert_int_eq(a.code, MCREPL_RPC__CODE__TOO_MANY);
	ck_assert_str_eq(a.message, "a batch holds 1..2 keys, not 3");
	req.n_keys = 2;
	a = call(&svc, i, &req.base);
	ck_assert_int_eq(a.code, MCREPL_RPC__CODE__OK);
	master_service_fini(&svc);
	store_destroy(probe_store);
}
END_TEST

/* ---- docs/DAEMONS.md's method table ------------------------------------ */

static const char *const caller_text[] = {
    [CALLER_ANY] = "anyone (segments and metrics: admins)",
    [CALLER_READ] = "a client with the read right on the tenant",
    [CALLER_WRITE] = "a client with the write right on the tenant",
    [CALLER_REMOVE] = "a client with the remove right on the tenant",
    [CALLER_WORKER] = "the worker owning the client id",
    [CALLER_WORKER_MOUNT] = "the worker owning the client id, for a host, "
			    "domain and capacity its principal allows",
    [CALLER_WORKER_TASK] = "the worker a task is queued for (its object "
			   "and, for a start, its segments)",
    [CALLER_WORKER_ADMIN] = "the worker for itself, or an admin",
    [CALLER_ADMIN] = "an admin",
};

static const char *const ha_text[] = {
    [HA_SERVE] = "served",
    [HA_REFUSE] = "refused (ask again)",
    [HA_ASK_IF_NOTHING] = "nothing found: ask again",
};

/* One row of the table into out[0, cap). */
static void render_row(const struct master_method *m, char *out, size_t cap)
{
	const struct method_limit *l = &m->limit;
	char bound[96] = "-", lock[128];

	if (l->field && l->flag)
		snprintf(bound, sizeof(bound), "%u..`%s` %s",
			 l->nonempty ? 1u : 0u, l->flag, l->field);
	else if (l->field)
		snprintf(bound, sizeof(bound), "%u..%u %s",
			 l->nonempty ? 1u : 0u, l->most, l->field);
	if (m->flags & METHOD_LOCKED)
		snprintf(lock, sizeof(lock), "held by the service");
	else
		snprintf(lock, sizeof(lock), "the handler's: %s", m->lock_why);
	snprintf(out, cap, "| %s | %s | %s | %s | %s | %s |\n", m->name,
		 caller_text[m->caller], lock, bound, ha_text[m->ha],
		 m->ha_why);
}

#define TABLE_BEGIN "<!-- method table: rendered from daemons/master/methods.c"
#define TABLE_END "<!-- end of the method table -->"

/* The table the rows render (malloc'd). */
static char *render_table(void)
{
	size_t cap = 512 * (master_methods_n + 2), n;
	char *t = malloc(cap);

	ck_assert_ptr_nonnull(t);
	n = (size_t)snprintf(t, cap, "%s",
			     "| method | caller | store lock | bound | while "
			     "recovering | why |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < master_methods_n; i++) {
		render_row(&master_methods[i], t + n, cap - n);
		n += strlen(t + n);
	}
	return t;
}

/* The lines between the markers in docs/DAEMONS.md (malloc'd), or NULL. */
static char *docs_table(void)
{
	FILE *f = fopen("docs/DAEMONS.md", "r");
	char *buf = calloc(1, 1 << 17), *b, *e;
	size_t n;

	ck_assert_msg(f != NULL, "docs/DAEMONS.md: run from the source tree");
	ck_assert_ptr_nonnull(buf);
	n = fread(buf, 1, (1 << 17) - 1, f);
	buf[n] = '\0';
	fclose(f);
	b = strstr(buf, TABLE_BEGIN);
	e = b ? strstr(b, TABLE_END) : NULL;
	b = b ? strchr(b, '\n') : NULL;
	if (!b || !e || e < b) {
		free(buf);
		return NULL;
	}
	memmove(buf, b + 1, (size_t)(e - b - 1));
	buf[e - b - 1] = '\0';
	return buf;
}

/* docs/DAEMONS.md's method table is the one the rows render; when it is
 * not, the rendered table is written to methods-table.md in the test's
 * directory (TMPDIR) to paste in. */
START_TEST(test_methods_docs_table_is_the_rows)
{
	char *want = render_table(), *got = docs_table(), path[512];
	const char *dir = getenv("TMPDIR");
	size_t line = 1, i = 0;
	FILE *f;

	ck_assert_msg(got != NULL, "docs/DAEMONS.md: no method table markers");
	if (strcmp(want, got) != 0) {
		snprintf(path, sizeof(path), "%s/methods-table.md",
			 dir ? dir : "/tmp");
		f = fopen(path, "w");
		if (f) {
			fputs(want, f);
			fclose(f);
		}
		for (; want[i] && want[i] == got[i]; i++)
			line += want[i] == '\n';
		ck_abort_msg("docs/DAEMONS.md's method table differs from the "
			     "rows at its line %zu; the rows' table: %s",
			     line, path);
	}
	free(want);
	free(got);
}
END_TEST

Suite *make_methods_suite(void)
{
	Suite *s = suite_create("methods");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_methods_every_method_has_one_row_in_order);
	tcase_add_test(tc, test_methods_service_binds_every_handler);
	tcase_add_test(tc, test_methods_ha_classes_and_reasons);
	tcase_add_test(tc, test_methods_lock_rule_per_row);
	tcase_add_test(tc, test_methods_callers_find_their_fields);
	tcase_add_test(tc, test_methods_locked_rows_reply_under_the_lock);
	tcase_add_test(tc, test_methods_batch_bound_is_its_flag);
	tcase_add_test(tc, test_methods_register_objects_bound);
	tcase_add_test(tc, test_methods_bounds_count_repeated_fields);
	tcase_add_test(tc, test_methods_service_refuses_past_the_bound);
	tcase_add_test(tc, test_methods_docs_table_is_the_rows);
	suite_add_tcase(s, tc);
	return s;
}
