/* Nodes, segments, objects and dynamic replicas (see cluster.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cluster.h"

static char *fmt_name(const char *prefix, uint32_t i)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%s%u", prefix, i);
	return strdup(buf);
}

static int init_names(struct sim_cluster *c)
{
	c->host_names = calloc(c->n_nodes, sizeof(*c->host_names));
	c->domain_names = calloc(c->n_domains, sizeof(*c->domain_names));
	if (!c->host_names || !c->domain_names)
		return -1;
	for (uint32_t i = 0; i < c->n_nodes; i++)
		if (!(c->host_names[i] = fmt_name("node-", i)))
			return -1;
	/* One domain is the default domain: "". */
	for (uint32_t i = 0; i < c->n_domains; i++)
		if (!(c->domain_names[i] =
			  c->n_domains > 1 ? fmt_name("d", i) : strdup("")))
			return -1;
	return 0;
}

static void init_segments(struct sim_cluster *c)
{
	for (uint32_t s = 0; s < c->n_segs; s++) {
		uint32_t n = sim_node_of(c, s);
		mcrepl_segment_view *v = &c->segs[s];

		memset(v, 0, sizeof(*v));
		v->id.v = s + 1;
		v->client.v = s + 1;
		v->host = c->host_names[n];
		v->domain = c->domain_names[c->nodes[n].domain];
		v->capacity = c->node_capacity / c->hosts_per_node;
		v->allocatable = true;
	}
}

/* Huge pages for the objects where the kernel gives them on request:
 * every read looks one up at random, and at 10 M keys 4 KiB pages miss
 * the TLB on nearly every lookup (only the aligned inside of the block is
 * advised; before the first touch). */
#ifdef MADV_HUGEPAGE
static void advise_huge(void *p, size_t bytes)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(huge - 1);

	if (p && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}
#else
static void advise_huge(void *p, size_t bytes)
{
	(void)p;
	(void)bytes;
}
#endif

static void *alloc_objs(size_t bytes)
{
	void *p = malloc(bytes ? bytes : 1);

	advise_huge(p, bytes);
	return p;
}

int sim_cluster_init(struct sim_cluster *c, uint32_t nodes,
		     uint32_t hosts_per_node, uint32_t domains, uint64_t n_objs,
		     uint64_t object_size, uint64_t node_capacity)
{
	memset(c, 0, sizeof(*c));
	c->n_nodes = nodes;
	c->hosts_per_node = hosts_per_node;
	c->n_segs = nodes * hosts_per_node;
	c->n_domains = domains;
	c->object_size = object_size;
	c->node_capacity = node_capacity;
	c->dyn_free = SIM_NONE;
	c->nodes = calloc(nodes, sizeof(*c->nodes));
	c->segs = calloc(c->n_segs, sizeof(*c->segs));
	c->seg_inflight = calloc(c->n_segs, sizeof(*c->seg_inflight));
	c->dirty = calloc(nodes, sizeof(*c->dirty));
	c->active = calloc(nodes, sizeof(*c->active));
	c->objs = alloc_objs(n_objs * sizeof(*c->objs));
	if (!c->nodes || !c->segs || !c->seg_inflight || !c->dirty ||
	    !c->active || !c->objs || init_names(c))
		return -1;
	for (uint32_t i = 0; i < nodes; i++) {
		c->nodes[i].domain = i % domains;
		c->active[c->n_active++] = i;
	}
	init_segments(c);
	c->n_objs = n_objs;
	for (uint64_t o = 0; o < n_objs; o++) {
		memset(&c->objs[o].heat, 0, sizeof(c->objs[o].heat));
		c->objs[o].primary = SIM_NONE;
		c->objs[o].dyn = SIM_NONE;
		c->objs[o].reads = 0;
		c->objs[o].window_reads = 0;
	}
	return 0;
}

void sim_cluster_free(struct sim_cluster *c)
{
	if (c->nodes)
		for (uint32_t i = 0; i < c->n_nodes; i++)
			free(c->nodes[i].dyn);
	if (c->host_names)
		for (uint32_t i = 0; i < c->n_nodes; i++)
			free(c->host_names[i]);
	if (c->domain_names)
		for (uint32_t i = 0; i < c->n_domains; i++)
			free(c->domain_names[i]);
	free(c->host_names);
	free(c->domain_names);
	free(c->nodes);
	free(c->segs);
	free(c->seg_inflight);
	free(c->dirty);
	free(c->active);
	free(c->objs);
	free(c->key_id);
	free(c->obj_of);
	free(c->dyn);
	memset(c, 0, sizeof(*c));
}

/* Mount or unmount dom's segments; the active list is the joined nodes,
 * in index order (identity when every domain is in). */
static void set_joined(struct sim_cluster *c, uint32_t dom, bool in)
{
	for (uint32_t s = 0; s < c->n_segs; s++)
		if (c->nodes[sim_node_of(c, s)].domain == dom)
			c->segs[s].allocatable = in;
	c->segs_gen++;
	c->n_active = 0;
	for (uint32_t i = 0; i < c->n_nodes; i++)
		if (c->segs[i * c->hosts_per_node].allocatable)
			c->active[c->n_active++] = i;
}

void sim_cluster_hold(struct sim_cluster *c, uint32_t dom)
{
	set_joined(c, dom, false);
}

void sim_cluster_join(struct sim_cluster *c, uint32_t dom)
{
	set_joined(c, dom, true);
}

uint32_t sim_cluster_put_segment(const struct sim_cluster *c)
{
	uint32_t best = SIM_NONE;

	for (uint32_t i = 0; i < c->n_active; i++)
		for (uint32_t h = 0; h < c->hosts_per_node; h++) {
			uint32_t s = c->active[i] * c->hosts_per_node + h;
			const mcrepl_segment_view *v = &c->segs[s];

			/* every segment has the same capacity: lower
			 * utilization after the write = lower used */
			if (best == SIM_NONE || v->used < c->segs[best].used)
				best = s;
		}
	return best;
}

uint32_t sim_cluster_put_nth(const struct sim_cluster *c, uint64_t n)
{
	uint64_t i = n % ((uint64_t)c->n_active * c->hosts_per_node);

	return c->active[i / c->hosts_per_node] * c->hosts_per_node +
	       (uint32_t)(i % c->hosts_per_node);
}

uint32_t sim_cluster_pick_reader(const struct sim_cluster *c, sim_rng *r)
{
	return c->active[sim_rng_below(r, c->n_active)];
}

static void add_used(struct sim_cluster *c, uint32_t seg, uint64_t bytes)
{
	struct sim_node *n = &c->nodes[sim_node_of(c, seg)];

	c->segs[seg].used += bytes;
	c->segs_gen++;
	n->used += bytes;
	if (!n->dirty) {
		n->dirty = true;
		c->dirty[c->n_dirty++] = sim_node_of(c, seg);
	}
}

void sim_cluster_write(struct sim_cluster *c, uint64_t o, uint32_t seg)
{
	c->objs[o].primary = seg;
	c->primary_bytes += c->object_size;
	add_used(c, seg, c->object_size);
}

void sim_cluster_evict(struct sim_cluster *c, uint64_t o)
{
	uint32_t seg = c->objs[o].primary;
	struct sim_node *n = &c->nodes[sim_node_of(c, seg)];

	c->objs[o].primary = SIM_NONE;
	c->primary_bytes -= c->object_size;
	c->segs[seg].used -= c->object_size;
	c->segs_gen++;
	n->used -= c->object_size;
}

static uint32_t dyn_alloc(struct sim_cluster *c)
{
	uint32_t d = c->dyn_free;

	if (d != SIM_NONE) {
		c->dyn_free = c->dyn[d].next;
		return d;
	}
	if (c->n_dyn_slots == c->cap_dyn_slots) {
		uint32_t cap = c->cap_dyn_slots ? 2 * c->cap_dyn_slots : 1024;
		struct sim_dyn *p = realloc(c->dyn, cap * sizeof(*p));

		if (!p)
			return SIM_NONE;
		c->dyn = p;
		c->cap_dyn_slots = cap;
	}
	return c->n_dyn_slots++;
}

static int node_list_add(struct sim_node *n, uint32_t d, uint32_t *pos)
{
	if (n->n_dyn == n->cap_dyn) {
		uint32_t cap = n->cap_dyn ? 2 * n->cap_dyn : 16;
		uint32_t *p = realloc(n->dyn, cap * sizeof(*p));

		if (!p)
			return -1;
		n->dyn = p;
		n->cap_dyn = cap;
	}
	*pos = n->n_dyn;
	n->dyn[n->n_dyn++] = d;
	return 0;
}

uint32_t sim_dyn_add(struct sim_cluster *c, uint64_t o, uint32_t seg)
{
	const mcrepl_segment_view *s = &c->segs[seg];
	struct sim_node *n = &c->nodes[sim_node_of(c, seg)];
	struct sim_dyn *x;
	uint32_t d;

	if (s->used > s->capacity || c->object_size > s->capacity - s->used)
		return SIM_NONE;
	d = dyn_alloc(c);
	if (d == SIM_NONE)
		return SIM_NONE;
	x = &c->dyn[d];
	if (node_list_add(n, d, &x->pos)) {
		x->next = c->dyn_free;
		c->dyn_free = d;
		return SIM_NONE;
	}
	x->obj = (uint32_t)o;
	x->seg = seg;
	x->last_read_ms = 0;
	x->readable = false;
	x->next = c->objs[o].dyn;
	c->objs[o].dyn = d;
	c->dyn_bytes += c->object_size;
	add_used(c, seg, c->object_size);
	return d;
}

void sim_dyn_ready(struct sim_cluster *c, uint32_t d)
{
	struct sim_dyn *x = &c->dyn[d];

	if (x->readable)
		return;
	if (sim_obj_readable_dyn(c, x->obj) == 0)
		c->replicated_keys++;
	x->readable = true;
	c->dyn_readable++;
}

static void unlink_obj(struct sim_cluster *c, uint32_t d)
{
	uint32_t *p = &c->objs[c->dyn[d].obj].dyn;

	while (*p != d)
		p = &c->dyn[*p].next;
	*p = c->dyn[d].next;
}

void sim_dyn_remove(struct sim_cluster *c, uint32_t d)
{
	struct sim_dyn *x = &c->dyn[d];
	struct sim_node *n = &c->nodes[sim_node_of(c, x->seg)];
	uint32_t last = n->dyn[--n->n_dyn];

	n->dyn[x->pos] = last;
	c->dyn[last].pos = x->pos;
	unlink_obj(c, d);
	if (x->readable) {
		c->dyn_readable--;
		if (sim_obj_readable_dyn(c, x->obj) == 0)
			c->replicated_keys--;
	}
	c->segs[x->seg].used -= c->object_size;
	c->segs_gen++;
	n->used -= c->object_size;
	c->dyn_bytes -= c->object_size;
	x->next = c->dyn_free;
	c->dyn_free = d;
}

uint32_t sim_obj_readable_dyn(const struct sim_cluster *c, uint64_t o)
{
	uint32_t n = 0;

	for (uint32_t d = c->objs[o].dyn; d != SIM_NONE; d = c->dyn[d].next)
		n += c->dyn[d].readable;
	return n;
}
