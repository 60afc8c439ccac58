/* Bounds on puts (docs/SECURITY.md, "Quotas and fair share").
 *
 * A put is charged its size x replicas from PutStart until its object
 * goes: to its tenant, and under an auth file to the principal that
 * started it, whose unwritten part is also counted until PutEnd. Before
 * placing, store_put_start checks the caller's reserve= and quota= and the
 * tenant's quota (auth.h); a put over one is QUOTA, its reason and bound in
 * the Result, and nothing is evicted for it. While a put evicts to make
 * room, another tenant's objects are taken only while that tenant holds
 * more than its fair share: the mounted capacity over the tenants holding
 * puts (the putting one counted). So one tenant's puts, written or not,
 * never evict another below its share. The watermark's eviction, when
 * two or more tenants hold puts, takes from tenants above their share
 * first, the least recently read when none is (store_evict.c). A principal with nothing unwritten may always
 * start one put, whatever its reserve bound.
 * Everything here is O(1) per put but the share, one pass over the
 * segments when a put has to evict (and at each eviction step). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "util/hash.h"
#include "store_priv.h"

struct quota_tenant {
	struct mcu_map_node node;
	uint64_t bytes;
	char name[];
};

static bool tenant_eq(const struct mcu_map_node *n, const void *k)
{
	return strcmp(((const struct quota_tenant *)(const void *)n)->name,
		      k) == 0;
}

static uint64_t tenant_hash(const char *tenant)
{
	return mcu_hash_str(tenant, 0x9e0a7a);
}

/* tenant name's entry, or NULL; the last one found is kept (most puts
 * in a row are one tenant's), so a hit costs one comparison. */
static struct quota_tenant *tenant_of(struct store *s, const char *name)
{
	struct quota_tenant *e = s->q.last;

	if (e && strcmp(e->name, name) == 0)
		return e;
	if (!s->q.tenants.tab[0])
		return NULL;
	e = (struct quota_tenant *)(void *)mcu_map_find(
	    &s->q.tenants, tenant_hash(name), tenant_eq, name);
	if (e)
		s->q.last = e;
	return e;
}

static uint64_t tenant_bytes(struct store *s, const char *name)
{
	const struct quota_tenant *e = tenant_of(s, name);

	return e ? e->bytes : 0;
}

/* p's use, the table grown to the auth table's principals; NULL when
 * none (no caller) or memory is short. */
static struct quota_use *use_of(struct store *s)
{
	const struct auth_table *t = s->q.auth;
	size_t i;

	if (!t || !s->q.caller)
		return NULL;
	i = (size_t)(s->q.caller - t->p);
	if (i >= t->n)
		return NULL;
	if (s->q.n_who < t->n) {
		struct quota_use *w = realloc(s->q.who, t->n * sizeof(*w));

		if (!w)
			return NULL;
		memset(w + s->q.n_who, 0, (t->n - s->q.n_who) * sizeof(*w));
		s->q.who = w;
		s->q.n_who = t->n;
	}
	return &s->q.who[i];
}

static uint64_t mounted_capacity(const struct store *s)
{
	uint64_t cap = 0;

	for (size_t i = 0; i < s->n_segs; i++)
		cap += s->segs[i]->capacity;
	return cap;
}

void store_put_caller(struct store *s, const struct auth_table *t,
		      const struct auth_principal *p, const char **why)
{
	s->q.auth = p ? t : NULL;
	s->q.caller = p;
	s->q.why = why;
}

static McreplRpc__Code refuse(struct store *s, uint64_t *ctr,
			      const char *reason, char *err, size_t errlen,
			      const char *what, const char *name, uint64_t held,
			      uint64_t bytes, const char *bound, uint64_t limit)
{
	(*ctr)++;
	if (s->q.why)
		*s->q.why = reason;
	snprintf(err, errlen,
		 "%s '%s' holds %llu bytes%s: %llu more would pass its %s "
		 "of %llu bytes",
		 what, name, (unsigned long long)held,
		 ctr == &s->q.refused.reserve ? " unwritten" : " of puts",
		 (unsigned long long)bytes, bound, (unsigned long long)limit);
	return MCREPL_RPC__CODE__QUOTA;
}

McreplRpc__Code store__quota_check(struct store *s, const char *tenant,
				   uint64_t bytes, char *err, size_t errlen)
{
	const struct auth_principal *p = s->q.caller;
	struct quota_use *u;
	uint64_t cap, limit;

	if (!s->q.auth) /* no auth file: no bounds */
		return MCREPL_RPC__CODE__OK;
	u = use_of(s);
	if (u) {
		cap = mounted_capacity(s);
		limit = auth_reserve_bound(p, cap);
		/* one put at a time always: an object may be that large */
		if (cap && u->unwritten && u->unwritten + bytes > limit)
			return refuse(s, &s->q.refused.reserve, "quota_reserve",
				      err, errlen, "principal", p->name,
				      u->unwritten, bytes, "reserve bound",
				      limit);
		if (p->quota && u->bytes + bytes > p->quota)
			return refuse(s, &s->q.refused.principal,
				      "quota_principal", err, errlen,
				      "principal", p->name, u->bytes, bytes,
				      "quota", p->quota);
	}
	limit = auth_tenant_quota(s->q.auth, tenant);
	if (limit && tenant_bytes(s, tenant) + bytes > limit)
		return refuse(s, &s->q.refused.tenant, "quota_tenant", err,
			      errlen, "tenant", tenant, tenant_bytes(s, tenant),
			      bytes, "quota", limit);
	return MCREPL_RPC__CODE__OK;
}

static uint64_t charge_of(const struct object *o)
{
	return o->size * o->quota_n;
}

/* Adds (or takes, add false) bytes to tenant's entry: made at its first
 * bytes, gone with its last. */
static void tenant_add(struct store *s, const char *name, uint64_t bytes,
		       bool add)
{
	struct quota_tenant *e = tenant_of(s, name);
	size_t n = strlen(name) + 1;

	if (!add && e) {
		e->bytes -= bytes < e->bytes ? bytes : e->bytes;
		if (e->bytes == 0) {
			if (s->q.last == e)
				s->q.last = NULL;
			mcu_map_remove(&s->q.tenants, &e->node);
			free(e);
		}
		return;
	}
	if (!add)
		return;
	if (!e) {
		if (!s->q.tenants.tab[0] && mcu_map_init(&s->q.tenants, 64))
			return;
		e = calloc(1, sizeof(*e) + n);
		if (!e)
			return;
		memcpy(e->name, name, n);
		mcu_map_insert(&s->q.tenants, &e->node, tenant_hash(name));
	}
	e->bytes += bytes;
}

void store__quota_charge(struct store *s, struct object *o)
{
	struct quota_use *u = use_of(s);

	o->quota_n = o->n_replicas;
	tenant_add(s, o->tenant, charge_of(o), true);
	if (!u)
		return;
	o->quota_who = (uint16_t)(u - s->q.who + 1);
	u->bytes += charge_of(o);
	u->unwritten += charge_of(o);
}

static struct quota_use *charged_to(struct store *s, const struct object *o)
{
	return o->quota_who && o->quota_who <= s->q.n_who
		   ? &s->q.who[o->quota_who - 1]
		   : NULL;
}

static void take(uint64_t *v, uint64_t bytes)
{
	*v -= bytes < *v ? bytes : *v;
}

void store__quota_written(struct store *s, struct object *o)
{
	struct quota_use *u = charged_to(s, o);

	if (u)
		take(&u->unwritten, charge_of(o));
}

void store__quota_release(struct store *s, struct object *o)
{
	struct quota_use *u = charged_to(s, o);

	if (!o->quota_n)
		return;
	tenant_add(s, o->tenant, charge_of(o), false);
	if (u) {
		take(&u->bytes, charge_of(o));
		if (!o->complete)
			take(&u->unwritten, charge_of(o));
	}
	o->quota_n = 0;
	o->quota_who = 0;
}

void store__quota_evict_for(struct store *s, bool on, const char *tenant)
{
	size_t n = mcu_map_size(&s->q.tenants);

	if (on && tenant)
		n += !tenant_of(s, tenant);
	s->q.guard = on && n > 1;
	s->q.evict_for = tenant;
	if (s->q.guard)
		s->q.share = mounted_capacity(s) / n;
}

bool store__quota_may_evict(struct store *s, const struct object *o)
{
	if (!s->q.guard ||
	    (s->q.evict_for && strcmp(o->tenant, s->q.evict_for) == 0) ||
	    tenant_bytes(s, o->tenant) > s->q.share)
		return true;
	s->q.share_skips++;
	return false;
}

static void drain_tenant(struct mcu_map_node *n, void *ctx)
{
	(void)ctx;
	free(n);
}

void store__quota_free(struct store *s)
{
	if (s->q.tenants.tab[0]) {
		mcu_map_drain(&s->q.tenants, drain_tenant, NULL);
		mcu_map_fini(&s->q.tenants);
	}
	s->q.last = NULL;
	free(s->q.who);
	s->q.who = NULL;
	s->q.n_who = 0;
}

void store_quota_figures(struct store *s, struct store_quota_figures *f)
{
	*f = s->q.refused;
}
