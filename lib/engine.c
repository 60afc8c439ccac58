/*
 * The policy engine (mcrepl/engine.h): segments and nodes, routed reads,
 * the tick, the reader order and proposals with projected loads. Tracked
 * dynamic replicas and retirement: engine_retire.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_priv.h"

#define SEED_NODE 0x6d63726c6e6f6465ULL /* "mcrlnode" */
#define TAB_EMPTY 0
#define TAB_DEAD UINT64_MAX
#define NAME_MAX_BYTES 255

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 16;

	while (p < n)
		p *= 2;
	return p;
}

/* ---- create / destroy ------------------------------------------------- */

static mcrepl_status opts_read(const mcrepl_engine_opts *in,
			       mcrepl_engine_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (in) {
		if (in->struct_size < sizeof(size_t))
			return MCREPL_EINVAL;
		memcpy(o, in,
		       in->struct_size < sizeof(*o) ? in->struct_size
						    : sizeof(*o));
	}
	o->max_segments = o->max_segments ? o->max_segments : 4096;
	o->max_dynamic_keys =
	    o->max_dynamic_keys ? o->max_dynamic_keys : 1u << 20;
	o->order_period_ms = o->order_period_ms ? o->order_period_ms : 1000;
	return o->max_segments <= (1u << 24) ? MCREPL_OK : MCREPL_EINVAL;
}

static int alloc_tables(mcrepl_engine *e)
{
	uint32_t tab = pow2_at_least(2 * e->max_segs);

	e->segs = calloc(e->max_segs, sizeof(*e->segs));
	e->nodes = calloc(e->max_segs, sizeof(*e->nodes));
	e->memo = calloc(e->max_segs, sizeof(*e->memo));
	e->scratch = calloc(e->max_segs, sizeof(*e->scratch));
	e->tab = calloc(tab, sizeof(*e->tab));
	e->tab_mask = tab - 1;
	if (!e->segs || !e->nodes || !e->memo || !e->scratch || !e->tab ||
	    mcr_eng_views_init(e))
		return -1;
	return mcr_eng_dkeys_init(e);
}

mcrepl_status mcrepl_engine_create(const mcrepl_config *cfg,
				   const mcrepl_engine_opts *opts,
				   mcrepl_engine **out)
{
	mcrepl_engine_opts o;
	mcrepl_heat_params hp;
	mcrepl_engine *e;

	if (!cfg || !out || mcrepl_config_validate(cfg, NULL) != MCREPL_OK ||
	    opts_read(opts, &o) != MCREPL_OK)
		return MCREPL_EINVAL;
	*out = NULL;
	if (!(e = calloc(1, sizeof(*e))))
		return MCREPL_ENOMEM;
	e->cfg = *cfg;
	e->on =
	    cfg->policy == MCREPL_POLICY_AUTO && cfg->mode != MCREPL_MODE_OFF;
	e->order_by_load = o.order_by_load;
	e->order_period_ms = o.order_period_ms;
	e->room_permille = o.room_permille ? o.room_permille : 10;
	e->max_segs = o.max_segments;
	e->max_dkeys = o.max_dynamic_keys;
	mcrepl_heat_params_init(&hp, cfg);
	e->bucket_ms = (uint32_t)hp.bucket_ms;
	if (e->on)
		hp.refire_buckets = 1;
	e->hp = hp;
	atomic_store(&e->read_threshold, hp.threshold);
	e->incarnation = o.incarnation;
	if (pthread_mutex_init(&e->mu, NULL)) {
		free(e);
		return MCREPL_ENOMEM;
	}
	if (alloc_tables(e) ||
	    mcrepl_leases_create(cfg, &e->leases) != MCREPL_OK ||
	    mcrepl_triggers_create(o.trigger_limit ? o.trigger_limit
						   : cfg->admission_queue_limit,
				   &e->triggers) != MCREPL_OK) {
		mcrepl_engine_destroy(e);
		return MCREPL_ENOMEM;
	}
	e->stats = o.stats;
	mcr_leases_set_stats(e->leases, o.stats);
	*out = e;
	return MCREPL_OK;
}

void mcrepl_engine_destroy(mcrepl_engine *e)
{
	if (!e)
		return;
	mcr_eng_dkeys_free(e);
	for (uint32_t i = 0; e->segs && i < e->max_segs; i++) {
		free(e->segs[i].host);
		free(e->segs[i].domain);
		free(e->segs[i].name);
	}
	for (uint32_t i = 0; e->nodes && i < e->max_segs; i++) {
		free(e->nodes[i].name);
		free(e->nodes[i].st_mem);
	}
	mcrepl_leases_destroy(e->leases);
	mcrepl_triggers_destroy(e->triggers);
	free(e->segs);
	free(e->nodes);
	free(e->memo);
	free(e->scratch);
	mcr_eng_views_free(e);
	free(e->tab);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

mcrepl_leases *mcrepl_engine_leases(mcrepl_engine *e)
{
	return e ? e->leases : NULL;
}

bool mcrepl_engine_is_auto(const mcrepl_engine *e)
{
	return e && e->on;
}

/* ---- the id -> slot table (lock-free readers, writers under mu) --------- */

uint32_t mcr_eng_slot(const mcrepl_engine *e, uint64_t id)
{
	uint32_t i = (uint32_t)mcu_splitmix64_mix(id) & e->tab_mask;

	if (id == TAB_EMPTY || id == TAB_DEAD)
		return ENG_NONE;
	for (uint32_t n = 0; n <= e->tab_mask; n++, i = (i + 1) & e->tab_mask) {
		uint64_t k =
		    atomic_load_explicit(&e->tab[i].id, memory_order_acquire);

		if (k == id)
			return atomic_load_explicit(&e->tab[i].slot,
						    memory_order_relaxed);
		if (k == TAB_EMPTY)
			break;
	}
	return ENG_NONE;
}

static void tab_put(mcrepl_engine *e, uint64_t id, uint32_t slot)
{
	uint32_t i = (uint32_t)mcu_splitmix64_mix(id) & e->tab_mask;

	while (true) {
		uint64_t k = atomic_load(&e->tab[i].id);

		if (k == TAB_EMPTY || k == TAB_DEAD) {
			atomic_store_explicit(&e->tab[i].slot, slot,
					      memory_order_relaxed);
			atomic_store_explicit(&e->tab[i].id, id,
					      memory_order_release);
			return;
		}
		i = (i + 1) & e->tab_mask;
	}
}

/* Dead markers at the end of a probe chain (the next entry empty) end no
 * chain: they become empty again, so churn does not fill the table with
 * markers every lookup has to walk. */
static void tab_trim(mcrepl_engine *e, uint32_t i)
{
	uint32_t m = e->tab_mask;

	if (atomic_load(&e->tab[(i + 1) & m].id) != TAB_EMPTY)
		return;
	while (atomic_load(&e->tab[i].id) == TAB_DEAD) {
		atomic_store(&e->tab[i].id, TAB_EMPTY);
		i = (i - 1) & m;
	}
}

static void tab_del(mcrepl_engine *e, uint64_t id)
{
	uint32_t i = (uint32_t)mcu_splitmix64_mix(id) & e->tab_mask;

	for (uint32_t n = 0; n <= e->tab_mask; n++, i = (i + 1) & e->tab_mask) {
		uint64_t k = atomic_load(&e->tab[i].id);

		if (k == id) {
			atomic_store(&e->tab[i].id, TAB_DEAD);
			tab_trim(e, i);
			return;
		}
		if (k == TAB_EMPTY)
			return;
	}
}

/* ---- nodes -------------------------------------------------------------- */

static uint32_t node_find(const mcrepl_engine *e, const char *name, uint64_t h)
{
	for (uint32_t i = 0; i < e->max_segs; i++)
		if (e->nodes[i].name && e->nodes[i].name_hash == h &&
		    strcmp(e->nodes[i].name, name) == 0)
			return i;
	return ENG_NONE;
}

static void node_clear(struct enode *n)
{
	free(n->name);
	n->name = NULL;
	n->segs = 0;
	for (uint32_t k = 0; k < ENG_B; k++)
		n->fade[k] = 0;
	for (uint32_t s = 0; n->st && s < ENG_STRIPES; s++) {
		for (uint32_t k = 0; k < ENG_B; k++)
			atomic_store(&n->st[s].bucket[k], 0);
		atomic_store(&n->st[s].now_reads, 0);
		atomic_store(&n->st[s].at_tick, 0);
	}
	atomic_store(&n->prev_reads, 0);
	atomic_store(&n->used, 0);
	atomic_store(&n->snap, 0);
	n->proj = 0;
	n->closed = n->closed_recent = 0;
}

/* Node n's reads in bucket k, and in this reader-order period: the sums of
 * its stripes (lock-free). */
static uint32_t node_bucket(const struct enode *n, uint32_t k)
{
	uint32_t sum = 0;

	for (uint32_t m = atomic_load_explicit(&n->used, memory_order_relaxed);
	     m; m &= m - 1)
		sum += atomic_load_explicit(&n->st[__builtin_ctz(m)].bucket[k],
					    memory_order_relaxed);
	return sum;
}

/* The reader order's base for node n (mutex held): each used stripe's
 * period count now, and their sum. */
static void node_snap(struct enode *n)
{
	uint32_t sum = 0;

	/* relaxed, as the readers read them; every tick walks every node,
	 * so an unchanged value is not written again */
	for (uint32_t m = atomic_load(&n->used); m; m &= m - 1) {
		struct estripe *st = &n->st[__builtin_ctz(m)];
		uint32_t x = atomic_load(&st->now_reads);

		if (atomic_load_explicit(&st->at_tick, memory_order_relaxed) !=
		    x)
			atomic_store_explicit(&st->at_tick, x,
					      memory_order_relaxed);
		sum += x;
	}
	if (atomic_load_explicit(&n->snap, memory_order_relaxed) != sum)
		atomic_store_explicit(&n->snap, sum, memory_order_relaxed);
}

/* Node n's reads this reader-order period as stripe s's reader estimates
 * them: the sum at the last tick, plus its own reads since times the
 * stripes used (lock-free; only n's tick-written fields and the caller's
 * own stripe are read). */
static uint32_t node_order_reads(const struct enode *n, uint32_t s)
{
	uint32_t used = atomic_load_explicit(&n->used, memory_order_relaxed);
	uint32_t est = atomic_load_explicit(&n->snap, memory_order_relaxed);
	uint32_t now, at;

	if (!(used & 1u << s))
		return est;
	now = atomic_load_explicit(&n->st[s].now_reads, memory_order_relaxed);
	at = atomic_load_explicit(&n->st[s].at_tick, memory_order_relaxed);
	return now > at ? est + (now - at) * (uint32_t)__builtin_popcount(used)
			: est;
}

/* Node n's stripe s, marked used (the mark is written once: afterwards
 * every reader only reads it). */
static struct estripe *node_stripe(struct enode *n, uint32_t s)
{
	if (!(atomic_load_explicit(&n->used, memory_order_relaxed) & 1u << s))
		atomic_fetch_or_explicit(&n->used, 1u << s,
					 memory_order_relaxed);
	return &n->st[s];
}

/* Node slot n's stripes, allocated at the slot's first use (zeroed; kept
 * while the slot is reused): false on ENOMEM. One stripe more than needed
 * for the alignment. */
static bool node_stripes(struct enode *n)
{
	uintptr_t a;

	if (n->st)
		return true;
	if (!(n->st_mem = calloc(ENG_STRIPES + 1, sizeof(struct estripe))))
		return false;
	a = (uintptr_t)n->st_mem + sizeof(struct estripe) - 1;
	n->st = (struct estripe *)(a - a % sizeof(struct estripe));
	return true;
}

/* The node named `name` (made on first use), or ENG_NONE on ENOMEM. */
static uint32_t node_get(mcrepl_engine *e, const char *name)
{
	uint64_t h = mcu_hash_str(name, SEED_NODE);
	uint32_t i = node_find(e, name, h);

	if (i != ENG_NONE)
		return i;
	for (i = 0; i < e->max_segs && e->nodes[i].name; i++)
		;
	if (i == e->max_segs || !node_stripes(&e->nodes[i]) ||
	    !(e->nodes[i].name = mcu_strdup(name)))
		return ENG_NONE;
	e->nodes[i].name_hash = h;
	e->n_nodes++;
	return i;
}

/* Every node slot is taken and segment's node `old` is moving to `name`:
 * when `old` holds only that segment, its slot becomes `name` (counts
 * cleared; the caller's unref then keeps its one reference). ENG_NONE
 * otherwise or on ENOMEM. */
static uint32_t node_rename(mcrepl_engine *e, uint32_t old, const char *name)
{
	char *c;

	if (old == ENG_NONE || e->nodes[old].segs != 1 ||
	    !(c = mcu_strdup(name)))
		return ENG_NONE;
	node_clear(&e->nodes[old]);
	e->nodes[old].name = c;
	e->nodes[old].name_hash = mcu_hash_str(c, SEED_NODE);
	e->nodes[old].segs = 1;
	return old;
}

static void node_unref(mcrepl_engine *e, uint32_t i)
{
	if (i == ENG_NONE || --e->nodes[i].segs)
		return;
	node_clear(&e->nodes[i]);
	e->n_nodes--;
}

/* A node's load as the policy judges it (mutex held): its window count,
 * or the rate its last buckets show where that is clearly higher
 * (mcr_policy_rising(), once a full window has been seen), plus its
 * projections; a node projected to lose reads no lower than that rate
 * (mcr_policy_recent_low()): the node still served them lately, and a
 * projection made against a rising count outlives the count. */
bool mcr_eng_full(const mcrepl_engine *e)
{
	return e->started && e->epoch >= e->start_epoch + ENG_B;
}

/* The buckets a window count covers at the latest tick: the B - 1
 * complete ones and the open one's elapsed fraction (mutex held). */
static double window_span(const mcrepl_engine *e)
{
	return (double)(ENG_B - 1) +
	       (double)(e->last_ms % e->bucket_ms) / (double)e->bucket_ms;
}

/* The recent rate alone (est = recent span / buckets) does not pass the
 * count, the margin covering rounding: mcr_policy_rising() is the count,
 * as its estimate is est less its noise, never over est. */
static bool rate_under(uint32_t recent, double span, uint32_t count)
{
	double b = MCREPL_POLICY_RISING_NODE_BUCKETS;

	return (double)recent * (span / b) * (1 + 1e-9) <= (double)count;
}

/* mcr_policy_rising() of node i's counts, a full window seen (mutex
 * held). The policy's estimates depend on nothing but the counts,
 * the latest tick and the bucket length, so a memo hit returns exactly
 * what computing them again would. */
static uint32_t node_rising(const mcrepl_engine *e, uint32_t i, uint32_t sum,
			    uint32_t recent)
{
	struct ememo *m = &e->memo[i];
	double span = window_span(e);

	if (m->bucket_ms == e->bucket_ms && m->ms == e->last_ms &&
	    m->sum == sum && m->recent == recent)
		return m->rising;
	*m = (struct ememo){
	    .ms = e->last_ms,
	    .bucket_ms = e->bucket_ms,
	    .sum = sum,
	    .recent = recent,
	    .rising = rate_under(recent, span, sum)
			  ? sum
			  : mcr_policy_rising(
				sum, recent, MCREPL_POLICY_RISING_NODE_BUCKETS,
				span, MCREPL_POLICY_RISING_NODE_Z),
	};
	return m->rising;
}

/* mcr_policy_recent_low() of node i's recent count, after node_rising()
 * of the same counts (mutex held). */
static double node_low(const mcrepl_engine *e, uint32_t i, uint32_t recent)
{
	struct ememo *m = &e->memo[i];

	if (!m->has_low) {
		m->low = mcr_policy_recent_low(
		    recent, MCREPL_POLICY_RISING_NODE_BUCKETS, window_span(e),
		    MCREPL_POLICY_RISING_NODE_Z);
		m->has_low = true;
	}
	return m->low;
}

/* An upper bound of mcr_policy_recent_low() of node counts `recent` at
 * every span from the latest tick's to the bucket's end (ENG_B): that is
 * est - z sqrt(est f), est = recent f, f = span / buckets, and both est
 * and the term taken off grow with the span, so est at ENG_B less the
 * term now bounds it. The margins (1e-9, relative) cover the rounding of
 * either computation. */
static double low_bound(const mcrepl_engine *e, uint32_t recent)
{
	double b = MCREPL_POLICY_RISING_NODE_BUCKETS;
	double f = window_span(e) / b, est = (double)recent * f;
	double hi = (double)recent * ((double)ENG_B / b) * (1 + 1e-9);
	double off = MCREPL_POLICY_RISING_NODE_Z * sqrt(est * f) * (1 - 1e-9);

	return hi - off > 0 ? hi - off : 0;
}

uint64_t mcr_eng_node_load_span(const mcrepl_engine *e, uint32_t node,
				bool *span)
{
	const struct enode *n = &e->nodes[node];
	uint32_t cur = atomic_load(&e->cur), recent = n->closed_recent;
	uint32_t sum = n->closed + node_bucket(n, cur);
	bool full = mcr_eng_full(e);
	double x, low, bound;

	x = n->proj + (double)(full ? node_rising(e, node, sum, recent) : sum);
	low = full && n->proj < 0 ? node_low(e, node, recent) : 0;
	if (x < low)
		x = low;
	if (span && full) {
		/* the rising estimate, and the floor of a node projected to
		 * lose reads, stay under its count and load till the roll */
		bound = low_bound(e, recent);
		*span = !(bound <= (double)sum &&
			  (n->proj >= 0 || n->proj + (double)sum >= bound));
	} else if (span) {
		*span = false;
	}
	return x > 0 ? (uint64_t)(x + 0.5) : 0;
}

uint64_t mcr_eng_node_load(const mcrepl_engine *e, uint32_t node)
{
	return mcr_eng_node_load_span(e, node, NULL);
}

/* The load of the segment in slot (mutex held). */
static uint64_t seg_load_at(const mcrepl_engine *e, uint32_t slot)
{
	if (!e->on)
		return e->segs[slot].read_load;
	return mcr_eng_node_load(e, atomic_load(&e->segs[slot].node));
}

uint64_t mcr_eng_seg_load(const mcrepl_engine *e, uint64_t id)
{
	uint32_t slot = mcr_eng_slot(e, id);

	return slot == ENG_NONE ? 0 : seg_load_at(e, slot);
}

/* ---- segments ---------------------------------------------------------- */

static bool name_ok(const char *s)
{
	return !s || strlen(s) <= NAME_MAX_BYTES;
}

/* The node name of segment s: node, else host, else "#<id>". */
static const char *node_name(const mcrepl_engine_segment *s, char *buf,
			     size_t cap)
{
	if (s->node && *s->node)
		return s->node;
	if (s->host && *s->host)
		return s->host;
	snprintf(buf, cap, "#%llu", (unsigned long long)s->id.v);
	return buf;
}

/* Replace *dst with a copy of src ("" for NULL) unless equal. */
static int set_str(char **dst, const char *src)
{
	char *c;

	src = mcu_nz(src);
	if (*dst && strcmp(*dst, src) == 0)
		return 0;
	if (!(c = mcu_strdup(src)))
		return -1;
	free(*dst);
	*dst = c;
	return 0;
}

static mcrepl_status seg_fill(mcrepl_engine *e, struct eseg *g,
			      const mcrepl_engine_segment *s)
{
	char buf[32];
	uint32_t node, old = atomic_load(&g->node);

	mcr_eng_views_reset(e); /* the views point at its strings */
	if (set_str(&g->host, s->host) || set_str(&g->domain, s->domain) ||
	    set_str(&g->name, s->name))
		return MCREPL_ENOMEM;
	node = node_get(e, node_name(s, buf, sizeof(buf)));
	if (node == ENG_NONE && g->id && e->n_nodes == e->max_segs)
		node = node_rename(e, old, node_name(s, buf, sizeof(buf)));
	if (node == ENG_NONE)
		return MCREPL_ENOMEM;
	e->nodes[node].segs++;
	atomic_store(&g->node, node);
	if (g->id)
		node_unref(e, old);
	g->client = s->client.v;
	g->capacity = s->capacity;
	g->used = s->used;
	g->promised = 0;
	g->allocatable = s->allocatable;
	g->can_copy = s->can_copy;
	g->read_load = s->read_load;
	return MCREPL_OK;
}

mcrepl_status mcr_eng_seg_set(mcrepl_engine *e,
			      const mcrepl_engine_segment *seg)
{
	mcrepl_engine_segment named = mcr_eng_seg_named(seg);
	const mcrepl_engine_segment *s = &named;
	mcrepl_status st;
	uint32_t slot;

	if (s->id.v == TAB_EMPTY || s->id.v == TAB_DEAD || !name_ok(s->host) ||
	    !name_ok(s->domain) || !name_ok(s->node) || !name_ok(s->name))
		return MCREPL_EINVAL;
	slot = mcr_eng_slot(e, s->id.v);
	if (slot != ENG_NONE) {
		st = MCREPL_ECONFLICT; /* two names, one id: never merged */
		if (!seg->id.v && e->segs[slot].name &&
		    strcmp(e->segs[slot].name, s->name) != 0)
			goto out;
		st = seg_fill(e, &e->segs[slot], s);
		goto out;
	}
	for (slot = 0; slot < e->max_segs && e->segs[slot].id; slot++)
		;
	st = MCREPL_EFULL;
	if (slot == e->max_segs)
		goto out;
	atomic_store(&e->segs[slot].node, ENG_NONE);
	st = seg_fill(e, &e->segs[slot], s);
	if (st != MCREPL_OK)
		goto out;
	e->segs[slot].id = s->id.v;
	e->n_segs++;
	tab_put(e, s->id.v, slot);
out:
	if (e->on) /* the replica cap follows at once, not at the next tick */
		e->view.nodes = e->n_nodes;
	return st;
}

mcrepl_status mcrepl_engine_segment_set(mcrepl_engine *e,
					const mcrepl_engine_segment *s)
{
	mcrepl_status st;

	if (!e || !s)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	st = mcr_eng_seg_set(e, s);
	pthread_mutex_unlock(&e->mu);
	return st;
}

mcrepl_status mcrepl_engine_segment_used(mcrepl_engine *e, mcrepl_segment_id id,
					 uint64_t used, bool allocatable)
{
	mcrepl_status st = MCREPL_ENOENT;
	uint32_t slot;

	if (!e)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	slot = mcr_eng_slot(e, id.v);
	if (slot != ENG_NONE) {
		e->segs[slot].used = used;
		e->segs[slot].promised = 0;
		e->segs[slot].allocatable = allocatable;
		mcr_eng_views_seg(e, slot);
		st = MCREPL_OK;
	}
	pthread_mutex_unlock(&e->mu);
	return st;
}

void mcr_eng_seg_drop(mcrepl_engine *e, uint32_t slot)
{
	struct eseg *g = &e->segs[slot];

	mcr_eng_forget_segment(e, g->id);
	tab_del(e, g->id);
	node_unref(e, atomic_load(&g->node));
	free(g->host);
	free(g->domain);
	free(g->name);
	memset(g, 0, sizeof(*g));
	atomic_store(&g->node, ENG_NONE);
	e->n_segs--;
	mcr_eng_views_reset(e);
	if (e->on)
		e->view.nodes = e->n_nodes;
}

mcrepl_status mcrepl_engine_segment_remove(mcrepl_engine *e,
					   mcrepl_segment_id id)
{
	uint32_t slot;

	if (!e)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	slot = mcr_eng_slot(e, id.v);
	if (slot != ENG_NONE)
		mcr_eng_seg_drop(e, slot);
	pthread_mutex_unlock(&e->mu);
	return slot == ENG_NONE ? MCREPL_ENOENT : MCREPL_OK;
}

/* ---- reads and reader order (lock-free) -------------------------------- */

static uint32_t node_of_id(const mcrepl_engine *e, uint64_t id)
{
	uint32_t slot = mcr_eng_slot(e, id);

	return slot == ENG_NONE ? ENG_NONE
				: atomic_load_explicit(&e->segs[slot].node,
						       memory_order_relaxed);
}

/* The calling thread's stripe: its thread pointer (one instruction where
 * the compiler has the builtin; pthread_self() otherwise), hashed. Not a
 * stack address: that moves with the call depth, and one thread counting
 * on two stripes makes the reader order an estimate. Two threads share a
 * stripe with odds 1 in ENG_STRIPES, and then only cost what every read
 * cost unstriped. */
#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer)
#define ENG_THREAD_ID() ((uint64_t)(uintptr_t)__builtin_thread_pointer())
#endif
#endif
#ifdef ENG_THREAD_ID
static uint64_t caller_id(void)
{
	return ENG_THREAD_ID();
}
#else
static uint64_t caller_id(void)
{
	pthread_t self = pthread_self();
	uint64_t v = 0;

	memcpy(&v, &self, sizeof(self) < sizeof(v) ? sizeof(self) : sizeof(v));
	return v;
}
#endif

static uint32_t caller_stripe(void)
{
	return (uint32_t)(mcu_splitmix64_mix(caller_id()) % ENG_STRIPES);
}

void mcrepl_engine_read(mcrepl_engine *e, mcrepl_segment_id id)
{
	uint32_t node, cur;
	struct estripe *st;

	if (!e || (node = node_of_id(e, id.v)) == ENG_NONE ||
	    node >= e->max_segs)
		return;
	cur = atomic_load_explicit(&e->cur, memory_order_relaxed);
	st = node_stripe(&e->nodes[node], caller_stripe());
	atomic_fetch_add_explicit(&st->bucket[cur], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&st->now_reads, 1, memory_order_relaxed);
	if (e->on)
		mcr_eng_views_mark(e, node);
}

/* Most replicas of one key the order handles with loads (more: no load). */
#define ORDER_MAX 1024

/* The reader-order loads of n replicas into load[]; false when the order
 * takes no loads. */
static bool order_loads(const mcrepl_engine *e,
			const mcrepl_replica_view *replicas, size_t n,
			uint64_t *load)
{
	bool by_load = e && (e->on || e->order_by_load) && n <= ORDER_MAX;
	uint32_t s = by_load ? caller_stripe() : 0;

	for (size_t i = 0; by_load && replicas && i < n; i++) {
		uint32_t node = node_of_id(e, replicas[i].segment.v);
		const struct enode *x;

		if (node == ENG_NONE || node >= e->max_segs) {
			load[i] = 0;
			continue;
		}
		x = &e->nodes[node];
		load[i] = node_order_reads(x, s);
		if (!e->on)
			load[i] += atomic_load_explicit(&x->prev_reads,
							memory_order_relaxed);
	}
	return by_load;
}

mcrepl_status mcrepl_engine_order(mcrepl_engine *e, const char *tenant,
				  const char *key,
				  const mcrepl_replica_view *replicas, size_t n,
				  uint64_t salt, size_t *order_out)
{
	uint64_t load[ORDER_MAX];
	bool by_load = order_loads(e, replicas, n, load);

	return mcrepl_order_replicas(tenant, key, replicas,
				     by_load ? load : NULL, n, salt, order_out);
}

mcrepl_status mcrepl_engine_pick(mcrepl_engine *e, const char *tenant,
				 const char *key,
				 const mcrepl_replica_view *replicas, size_t n,
				 uint64_t salt, size_t *pick)
{
	uint64_t load[ORDER_MAX];
	bool by_load = order_loads(e, replicas, n, load);

	return mcrepl_pick_replica(tenant, key, replicas, by_load ? load : NULL,
				   n, salt, pick);
}

/* ---- the tick ----------------------------------------------------------- */

/* Node n's closed buckets summed, cur the current one: only a roll closes
 * one, so between rolls a window count is these plus the current bucket
 * (a read counted late on a closed bucket, racing the roll, shows from
 * the next roll on). */
static void close_buckets(struct enode *n, uint32_t cur)
{
	n->closed = n->closed_recent = 0;
	for (uint32_t k = 1; k < ENG_B; k++) {
		uint32_t b = node_bucket(n, (cur + ENG_B - k) % ENG_B);

		n->closed += b;
		if (k <= MCREPL_POLICY_RISING_NODE_BUCKETS)
			n->closed_recent += b;
	}
}

static void roll(mcrepl_engine *e)
{
	uint32_t next = (atomic_load(&e->cur) + 1) % ENG_B;

	for (uint32_t i = 0; i < e->max_segs; i++) {
		struct enode *n = &e->nodes[i];

		if (!n->name)
			continue;
		for (uint32_t m = atomic_load(&n->used); m; m &= m - 1)
			atomic_store(&n->st[__builtin_ctz(m)].bucket[next], 0);
		n->proj -= n->fade[next];
		n->fade[next] = 0;
		close_buckets(n, next);
	}
	atomic_store(&e->cur, next);
}

/* The period ends; `skipped`: periods passed without a tick, so the
 * previous period (the one before the new one) had no reads counted. */
static void roll_period(mcrepl_engine *e, bool skipped)
{
	for (uint32_t i = 0; i < e->max_segs; i++) {
		struct enode *n = &e->nodes[i];
		uint32_t x = 0;

		if (!n->name)
			continue;
		for (uint32_t m = atomic_load(&n->used); m; m &= m - 1)
			x += atomic_exchange(&n->st[__builtin_ctz(m)].now_reads,
					     0);
		atomic_store(&n->prev_reads, skipped ? 0 : x);
	}
}

/* Every node's reader-order base (node_snap()), and the window's reads as
 * the tick sees them: each node's closed buckets as of the last roll and
 * its current one; one pass, as both read the nodes' stripes. */
static uint64_t snap_nodes(mcrepl_engine *e)
{
	uint32_t cur = atomic_load(&e->cur);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < e->max_segs; i++) {
		struct enode *n = &e->nodes[i];

		if (!n->name)
			continue;
		node_snap(n);
		if (e->on)
			sum += (uint64_t)n->closed + node_bucket(n, cur);
	}
	return sum;
}

static uint64_t window_reads(const mcrepl_engine *e)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < e->max_segs; i++)
		for (uint32_t k = 0; e->nodes[i].name && k < ENG_B; k++)
			sum += node_bucket(&e->nodes[i], k);
	return sum;
}

void mcrepl_engine_tick(mcrepl_engine *e, uint64_t now_ms,
			mcrepl_engine_tick_result *out)
{
	uint64_t epoch = now_ms / e->bucket_ms;
	uint64_t period = now_ms / e->order_period_ms, window;
	bool rolled = false;

	pthread_mutex_lock(&e->mu);
	if (now_ms > e->last_ms)
		e->last_ms = now_ms;
	if (!e->started) {
		e->started = true;
		e->start_epoch = epoch;
		e->epoch = epoch;
		e->period = period;
	}
	for (uint64_t x = e->epoch; x < epoch && x < e->epoch + ENG_B; x++)
		roll(e);
	if (epoch > e->epoch) {
		e->epoch = epoch;
		rolled = true;
	}
	if (period > e->period) {
		roll_period(e, period > e->period + 1);
		e->period = period;
	}
	window = snap_nodes(e);
	if (e->on) {
		e->view.nodes = e->n_nodes;
		e->view.window_reads = window;
		atomic_store(&e->read_threshold,
			     mcr_threshold_trigger(&e->cfg, &e->view));
	}
	if (rolled && epoch % ENG_B == 0) { /* a new window: room budget */
		e->room_spent = 0;
		e->room_live = false;
		for (uint32_t i = 0; i < e->max_segs; i++)
			e->segs[i].room_key = 0;
	}
	if (rolled && e->on && epoch % ENG_B == 0) {
		e->pass_open = true;
		e->cursor = e->head;
		e->passes++;
	}
	if (out) {
		out->threshold = atomic_load(&e->read_threshold);
		out->retire_due = e->pass_open && e->cursor;
	}
	pthread_mutex_unlock(&e->mu);
}

void mcrepl_engine_heat_params(mcrepl_engine *e, mcrepl_heat_params *out)
{
	if (!e || !out)
		return;
	*out = e->hp;
	out->threshold = atomic_load(&e->read_threshold);
}

void mcrepl_engine_cluster(mcrepl_engine *e, mcrepl_cluster_view *out)
{
	pthread_mutex_lock(&e->mu);
	*out = e->on ? e->view : (mcrepl_cluster_view){0};
	pthread_mutex_unlock(&e->mu);
}

uint64_t mcrepl_engine_load(mcrepl_engine *e, mcrepl_segment_id id)
{
	uint64_t l;

	pthread_mutex_lock(&e->mu);
	l = mcr_eng_seg_load(e, id.v);
	pthread_mutex_unlock(&e->mu);
	return l;
}

/* ---- proposals ---------------------------------------------------------- */

/* d reads per window on node: now, fading by d/B at each of the next B
 * bucket boundaries. */
static void add_projection(mcrepl_engine *e, uint64_t seg, double d)
{
	uint32_t node = node_of_id(e, seg), cur = atomic_load(&e->cur);
	struct enode *n;

	if (node == ENG_NONE)
		return;
	n = &e->nodes[node];
	n->proj += d;
	mcr_eng_views_mark(e, node);
	for (uint32_t k = 1; k <= ENG_B; k++)
		n->fade[(cur + k) % ENG_B] += d / ENG_B;
}

/* Auto: the reads a granted copy moves, readers spread by load: it fills
 * its target up to the level of the key's replicas, the lowest load among
 * their segments (mcr_policy_project_level()). */
static void project_auto(mcrepl_engine *e, const mcrepl_propose_input *in,
			 uint32_t held, const mcrepl_lease *l)
{
	uint64_t level = UINT64_MAX;
	mcrepl_projection p;

	for (size_t i = 0; i < in->n_replicas; i++) {
		const mcrepl_replica_view *r = &in->replicas[i];

		if (r->readable && mcr_eng_slot(e, r->segment.v) != ENG_NONE) {
			uint64_t x = mcr_eng_seg_load(e, r->segment.v);

			level = x < level ? x : level;
		}
	}
	mcr_policy_project_level(in->heat_count,
				 in->object->readable_memory_replicas,
				 level == UINT64_MAX ? 0 : level,
				 mcr_eng_seg_load(e, l->target.v), &p);
	/* the replicas give up at most the key's reads their window holds:
	 * a count judged by its recent rate (rising) stands for more reads
	 * than the window has seen */
	if (in->object->readable_memory_replicas &&
	    p.from_each > held / in->object->readable_memory_replicas)
		p.from_each = held / in->object->readable_memory_replicas;
	/* a copy moves reads, it makes none: the target gains what the
	 * replicas give up, so the projections keep the cluster's sum (the
	 * gate's mean) */
	if (in->object->readable_memory_replicas &&
	    p.to_target > p.from_each * in->object->readable_memory_replicas)
		p.to_target =
		    p.from_each * in->object->readable_memory_replicas;
	add_projection(e, l->target.v, (double)p.to_target);
	for (size_t i = 0; i < in->n_replicas; i++)
		if (in->replicas[i].readable)
			add_projection(e, in->replicas[i].segment.v,
				       -(double)p.from_each);
	e->projections++;
}

/* RFC with read-load-aware placement: the copy's share of the key's reads
 * counts on its target's reader-order period at once, so one batch of
 * admissions does not pile onto one reader-order-idle segment. */
static void project_rfc(mcrepl_engine *e, const mcrepl_propose_input *in,
			const mcrepl_lease *l)
{
	uint32_t node = node_of_id(e, l->target.v), d;
	struct estripe *st;
	struct enode *n;

	if (node == ENG_NONE || !e->cfg.read_load_aware_placement)
		return;
	n = &e->nodes[node];
	st = node_stripe(n, 0);
	d = in->heat_count / (in->object->readable_memory_replicas + 1u);
	/* in the order's sum at once, not in stripe 0's reads since the tick */
	atomic_fetch_add(&st->now_reads, d);
	atomic_fetch_add(&st->at_tick, d);
	atomic_fetch_add(&n->snap, d);
	e->projections++;
}

mcrepl_status mcrepl_engine_propose(mcrepl_engine *e,
				    const mcrepl_propose_input *in,
				    mcrepl_propose_result *res)
{
	mcrepl_replica_view *filled = NULL;
	mcrepl_propose_input x;
	mcrepl_status st;
	uint32_t slot;

	if (!e || !in || !res || !in->object)
		return MCREPL_EINVAL;
	pthread_mutex_lock(&e->mu);
	/* the nodes as of now (a mount counts at once); the reads as of the
	 * last tick, whose threshold the read path crossed, or as of now
	 * before the first tick (an empty view would skip the gate) */
	if (e->on) {
		e->view.nodes = e->n_nodes;
		if (!e->started)
			e->view.window_reads = window_reads(e);
	}
	x = *in;
	if (in->replicas_from_engine &&
	    mcr_eng_fill_replicas(e, in, &x, &filled) != MCREPL_OK) {
		pthread_mutex_unlock(&e->mu);
		return MCREPL_ENOMEM;
	}
	if (e->on && mcr_eng_full(e)) /* counts are comparable */
		x.heat_count = mcr_policy_rising(
		    in->heat_count, in->heat_recent, 1, window_span(e),
		    MCREPL_POLICY_RISING_KEY_Z);
	x.n_segments = mcr_eng_views_kept(e);
	x.segments = e->scratch;
	if (e->room_live) { /* credits write into the views */
		mcr_eng_room_credit(e, in, x.n_segments);
		mcr_eng_views_reset(e);
	}
	x.cluster = e->on ? &e->view : NULL;
	st = mcrepl_leases_propose(e->leases, &x, res);
	if (st == MCREPL_OK && !res->repeated) {
		slot = mcr_eng_slot(e, res->lease.target.v);
		if (slot != ENG_NONE) {
			e->segs[slot].promised += res->lease.size;
			e->segs[slot].room_key = 0; /* the swap is used */
			mcr_eng_views_seg(e, slot);
		}
		if (e->on)
			project_auto(e, &x, in->heat_count, &res->lease);
		else
			project_rfc(e, &x, &res->lease);
	}
	pthread_mutex_unlock(&e->mu);
	free(filled);
	return st;
}

/* ---- stats ---------------------------------------------------------------- */

void mcrepl_engine_get_stats(mcrepl_engine *e, mcrepl_engine_stats *out)
{
	mcrepl_engine_stats s = {.struct_size = sizeof(s)};
	size_t size;

	if (!e || !out || out->struct_size < sizeof(size_t))
		return;
	size = out->struct_size < sizeof(s) ? out->struct_size : sizeof(s);
	pthread_mutex_lock(&e->mu);
	s.segments = e->n_segs;
	s.nodes = e->n_nodes;
	s.window_reads = window_reads(e);
	s.threshold = atomic_load(&e->read_threshold);
	s.projections = e->projections;
	s.dynamic_keys = mcu_map_size(&e->dkeys);
	s.dynamic_replicas = e->n_dreplicas;
	s.untracked_total = e->untracked;
	s.retire_passes = e->passes;
	s.retire_visits = e->visits;
	s.retired_total = e->retired;
	s.room_total = e->room_ok;
	s.room_bytes_total = e->room_bytes;
	s.room_budget_total = e->room_budget;
	s.room_none_total = e->room_none;
	s.room_headroom_total = e->room_headroom;
	pthread_mutex_unlock(&e->mu);
	s.struct_size = size;
	memcpy(out, &s, size);
}
