/* Task queues: per client, oldest first, indexed by id. Workers fetch
 * their tasks and report them done; dynamic copies keep their task until
 * the lease ends. */
#include <stdlib.h>

#include "util/hash.h"
#include "util/str.h"
#include "store_priv.h"

static bool id_eq_task(const struct mcu_map_node *n, const void *k)
{
	return ((const struct task *)(const void *)n)->msg.task_id ==
	       *(const uint64_t *)k;
}

static void free_task(struct task *t)
{
	free(t->msg.tenant);
	free(t->msg.key);
	free(t);
}

static void drain_task(struct mcu_map_node *n, void *ctx)
{
	(void)ctx;
	free_task((struct task *)(void *)n);
}

void store__free_tasks(struct store *s)
{
	if (s->tasks.tab[0])
		mcu_map_drain(&s->tasks, drain_task, NULL);
	mcu_map_fini(&s->tasks);
}

struct task *store_task(struct store *s, uint64_t id)
{
	return (struct task *)(void *)mcu_map_find(&s->tasks, mcu_mix64(id),
						   id_eq_task, &id);
}

static void client_append(struct client *c, struct task *t)
{
	t->prev = c->tail;
	if (c->tail)
		c->tail->next = t;
	else
		c->head = t;
	c->tail = t;
	c->n_tasks++;
}

static void client_unlink(struct client *c, struct task *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		c->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		c->tail = t->prev;
	c->n_tasks--;
}

struct task *store_add_task(struct store *s, uint64_t client_id,
			    const McreplRpc__Task *msg, uint64_t now_ms,
			    uint64_t lease_expires_at_ms)
{
	struct client *c = store__find_client(s, client_id);
	struct task *t;

	(void)now_ms;
	if (!c)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->msg = *msg;
	t->msg.tenant = mcu_strdup(msg->tenant);
	t->msg.key = mcu_strdup(msg->key);
	if (!t->msg.tenant || !t->msg.key) {
		free_task(t);
		return NULL;
	}
	t->msg.task_id = s->next_task_id++;
	t->client_id = client_id;
	t->lease_expires_at_ms = lease_expires_at_ms;
	client_append(c, t);
	mcu_map_insert(&s->tasks, &t->node, mcu_mix64(t->msg.task_id));
	return t;
}

size_t store_fetch_tasks(struct store *s, uint64_t client_id, struct task **out,
			 size_t max, uint64_t now_ms)
{
	struct client *c = store__find_client(s, client_id);
	size_t n = 0;

	if (!c)
		return 0;
	c->last_seen_ms = now_ms;
	for (struct task *t = c->head; t && n < max; t = t->next) {
		if (t->fetched)
			continue;
		const struct object *o =
		    store__lookup(s, t->msg.tenant, t->msg.key);

		t->fetched = true;
		/* a recovered object keeps the incarnation it was written
		 * under (HA) */
		t->msg.incarnation =
		    o ? store_object_incarnation(s, o) : s->incarnation;
		t->msg.stamp_tag = o ? store_object_stamp_tag(s, o) : 0;
		t->msg.lease_ttl_ms = t->lease_expires_at_ms > now_ms
					  ? t->lease_expires_at_ms - now_ms
					  : 0;
		out[n++] = t;
	}
	return n;
}

void store_finish_task(struct store *s, struct task *t)
{
	struct client *c = store__find_client(s, t->client_id);

	if (c)
		client_unlink(c, t);
	mcu_map_remove(&s->tasks, &t->node);
	free_task(t);
}

void store__fail_client_tasks(struct store *s, struct client *c)
{
	while (c->head) {
		dyn_on_task_failed(s, c->head);
		store_finish_task(s, c->head);
	}
}

/* Forget a reported task, unless it is a dynamic copy whose lease still
 * lives (the lease's end or expiry forgets it). */
static void task_reported(struct store *s, struct task *t)
{
	if (dyn_task_lease_live(s, t)) {
		t->done = true;
		return;
	}
	store_finish_task(s, t);
}

McreplRpc__Code store_task_report(struct store *s, uint64_t client_id,
				  uint64_t task_id)
{
	struct task *t = store_task(s, task_id);

	if (t && t->client_id != client_id)
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	if (t) {
		task_reported(s, t);
		return MCREPL_RPC__CODE__OK;
	}
	/* a task the master issued and already closed (End, Revoke, a
	 * refused Start, expiry): the report is late, not wrong */
	return task_id == 0 || task_id >= s->next_task_id
		   ? MCREPL_RPC__CODE__NOT_FOUND
		   : MCREPL_RPC__CODE__OK;
}
