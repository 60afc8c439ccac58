/* Segments and the clients that mount them: mount, unmount (a leaving
 * segment's replicas dropped over loop turns), heartbeats, client expiry,
 * the indexes by id and by host, and the per-segment routed-read window. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "util/hash.h"
#include "log.h"
#include "util/str.h"
#include "span.h"
#include "store_priv.h"

/* ---- indexes: segments by id, mounted segments per host ------------------ */

static struct segment *seg_of(const struct mcu_map_node *n)
{
	return (struct segment *)(void *)((char *)(uintptr_t)n -
					  offsetof(struct segment, id_node));
}

static bool seg_id_eq(const struct mcu_map_node *n, const void *k)
{
	return seg_of(n)->id == *(const uint64_t *)k;
}

struct segment *store__segment_any(const struct store *s, uint64_t id)
{
	struct mcu_map_node *n =
	    mcu_map_find(&s->seg_ids, mcu_mix64(id), seg_id_eq, &id);

	return n ? seg_of(n) : NULL;
}

struct host_ref {
	struct mcu_map_node node;
	size_t segs; /* mounted segments on the host */
	char host[];
};

static bool host_eq(const struct mcu_map_node *n, const void *k)
{
	return strcmp(((const struct host_ref *)(const void *)n)->host, k) == 0;
}

/* A mounted segment on host came (delta 1) or went (-1). False when memory
 * is short for a new host (nothing changed). */
static bool host_count(struct store *s, const char *host, int delta)
{
	uint64_t h = mcu_hash_str(host, 0x4057);
	struct host_ref *r = (struct host_ref *)(void *)mcu_map_find(
	    &s->hosts, h, host_eq, host);

	if (!r && delta > 0) {
		r = calloc(1, sizeof(*r) + strlen(host) + 1);
		if (!r)
			return false;
		strcpy(r->host, host);
		mcu_map_insert(&s->hosts, &r->node, h);
	}
	if (!r)
		return true;
	r->segs += (size_t)delta;
	if (r->segs == 0) {
		mcu_map_remove(&s->hosts, &r->node);
		free(r);
	}
	return true;
}

struct client *store__find_client(struct store *s, uint64_t id)
{
	for (size_t i = 0; i < s->n_clients; i++)
		if (s->clients[i]->id == id)
			return s->clients[i];
	return NULL;
}

bool store_client_known(struct store *s, uint64_t client_id)
{
	return store__find_client(s, client_id) != NULL;
}

static struct client *get_client(struct store *s, uint64_t id, uint64_t now)
{
	struct client *c = store__find_client(s, id);

	if (c)
		return c;
	if (!store__grow(&s->clients, s->n_clients, &s->cap_clients, sizeof(c)))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->id = id;
	c->last_seen_ms = now;
	s->clients[s->n_clients++] = c;
	return c;
}

struct segment *store_segment(struct store *s, uint64_t id)
{
	struct segment *seg = store__segment_any(s, id);

	return seg && !seg->leaving ? seg : NULL;
}

size_t store_n_segments(const struct store *s)
{
	return s->n_segs;
}

const struct segment *store_segment_at(const struct store *s, size_t i)
{
	return s->segs[i];
}

uint64_t store_used(const struct segment *seg)
{
	return seg_alloc_used(seg->alloc);
}

static struct segment *find_segment_by_name(struct store *s, const char *name)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (strcmp(s->segs[i]->name, name) == 0)
			return s->segs[i];
	return NULL;
}

static void free_segment(struct segment *seg)
{
	free(seg->ix);
	seg_alloc_destroy(seg->alloc);
	free(seg->name);
	free(seg->host);
	free(seg->domain);
	free(seg->endpoint);
	free(seg);
}

static void free_host_ref(struct mcu_map_node *n, void *ctx)
{
	(void)ctx;
	free(n);
}

void store__free_segments(struct store *s)
{
	for (size_t i = 0; i < s->n_clients; i++) {
		store__journal_free(s->clients[i]);
		free(s->clients[i]);
	}
	free(s->clients);
	for (size_t i = 0; i < s->n_segs; i++)
		free_segment(s->segs[i]);
	free(s->segs);
	for (size_t i = 0; i < s->n_leaving; i++)
		free_segment(s->leaving[i]);
	free(s->leaving);
	if (s->hosts.tab[0])
		mcu_map_drain(&s->hosts, free_host_ref, NULL);
	mcu_map_fini(&s->hosts);
	mcu_map_fini(&s->seg_ids);
}

static struct segment *new_segment(const struct mount_args *a)
{
	struct segment *seg = calloc(1, sizeof(*seg));

	if (!seg)
		return NULL;
	seg->name = mcu_strdup(a->name);
	seg->host = mcu_strdup(a->host);
	seg->domain = mcu_strdup(mcrepl_domain_name(a->domain));
	seg->endpoint = mcu_strdup(a->endpoint);
	if (!seg->name || !seg->host || !seg->domain || !seg->endpoint ||
	    seg_alloc_create(a->capacity, 0, &seg->alloc) != 0) {
		free_segment(seg);
		return NULL;
	}
	seg->client_id = a->client_id;
	seg->capacity = a->capacity;
	seg->dynamic_copy = a->dynamic_copy;
	seg->base_addr = a->base_addr;
	seg->rkey = a->rkey;
	snprintf(seg->rdma_endpoint, sizeof(seg->rdma_endpoint), "%s",
		 a->rdma_endpoint ? a->rdma_endpoint : "");
	return seg;
}

static bool valid_text(const char *t, size_t max)
{
	return t && t[0] && strlen(t) <= max;
}

static McreplRpc__Code check_mount(const struct mount_args *a, char *err,
				   size_t errlen)
{
	if (a->client_id == 0 || a->capacity == 0 ||
	    !valid_text(a->name, 255) || !valid_text(a->endpoint, 255) ||
	    !valid_text(a->host, 255) || !mcrepl_domain_is_valid(a->domain) ||
	    (a->rdma_endpoint && strlen(a->rdma_endpoint) > 255)) {
		snprintf(err, errlen,
			 "mount needs a client id, a name, a host, "
			 "an endpoint, a valid domain and a "
			 "capacity");
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	if (a->capacity < SEG_ALLOC_DEFAULT_ALIGN) {
		snprintf(err, errlen,
			 "segment capacity %llu is below the %u-byte "
			 "allocation unit",
			 (unsigned long long)a->capacity,
			 SEG_ALLOC_DEFAULT_ALIGN);
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	if (!span_within(a->base_addr, a->capacity, UINT64_MAX)) {
		snprintf(err, errlen,
			 "segment at address %llu of %llu bytes passes the "
			 "end of the address space",
			 (unsigned long long)a->base_addr,
			 (unsigned long long)a->capacity);
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	return MCREPL_RPC__CODE__OK;
}

/* True when no mounted segment is in `domain`. */
static bool domain_is_new(struct store *s, const char *domain)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (mcrepl_domain_equal(s->segs[i]->domain, domain))
			return false;
	return true;
}

static McreplRpc__Code add_segment(struct store *s, struct client *c,
				   const struct mount_args *a,
				   uint64_t *segment_id)
{
	struct segment *seg;

	if (!store__grow(&s->segs, s->n_segs, &s->cap_segs, sizeof(seg)))
		return MCREPL_RPC__CODE__INTERNAL;
	seg = new_segment(a);
	if (seg) {
		seg->id = s->next_segment_id;
		grant_segment_key(&seg->grant, s->grant_secret, s->incarnation,
				  seg->id);
	}
	if (!seg || !host_count(s, seg->host, 1)) {
		if (seg)
			free_segment(seg);
		return MCREPL_RPC__CODE__INTERNAL;
	}
	if (store__policy_segment(s, seg) != MCREPL_OK) {
		host_count(s, seg->host, -1);
		free_segment(seg);
		return MCREPL_RPC__CODE__TOO_MANY;
	}
	s->next_segment_id++;
	mcu_map_insert(&s->seg_ids, &seg->id_node, mcu_mix64(seg->id));
	s->segs[s->n_segs++] = seg;
	c->n_segs++;
	*segment_id = seg->id;
	return MCREPL_RPC__CODE__OK;
}

/* A checked mount: a new segment, or the same client's again. */
static McreplRpc__Code mount_checked(struct store *s,
				     const struct mount_args *a,
				     uint64_t now_ms, uint64_t *segment_id,
				     char *err, size_t errlen)
{
	struct segment *seg = find_segment_by_name(s, a->name);
	struct client *c;

	if (seg && seg->client_id != a->client_id) {
		snprintf(err, errlen,
			 "segment name %s is mounted by another "
			 "client",
			 a->name);
		return MCREPL_RPC__CODE__ALREADY_EXISTS;
	}
	c = get_client(s, a->client_id, now_ms);
	if (!c)
		return MCREPL_RPC__CODE__INTERNAL;
	c->last_seen_ms = now_ms;
	if (seg) { /* idempotent re-mount */
		*segment_id = seg->id;
		return MCREPL_RPC__CODE__OK;
	}
	return add_segment(s, c, a, segment_id);
}

McreplRpc__Code store_mount(struct store *s, const struct mount_args *a,
			    uint64_t now_ms, uint64_t *segment_id, char *err,
			    size_t errlen)
{
	McreplRpc__Code code = check_mount(a, err, errlen);
	bool new_domain;

	if (code != MCREPL_RPC__CODE__OK)
		return code;
	new_domain = s->n_segs > 0 && domain_is_new(s, a->domain);
	code = mount_checked(s, a, now_ms, segment_id, err, errlen);
	if (code == MCREPL_RPC__CODE__OK && new_domain)
		dyn_on_new_domain(s, mcrepl_domain_name(a->domain), now_ms);
	return code;
}

/* Drop the last leaving segment, its replicas gone. */
static void forget_leaving(struct store *s)
{
	struct segment *seg = s->leaving[--s->n_leaving];

	mcu_map_remove(&s->seg_ids, &seg->id_node);
	free_segment(seg);
	if (s->n_leaving > 0 || s->drain_lost_r == 0)
		return;
	/* one line per drain, and only when something was lost */
	log_line(LOG_WARN,
		 "segments gone: %llu replicas lost, %llu objects lost their "
		 "last replica",
		 (unsigned long long)s->drain_lost_r,
		 (unsigned long long)s->drain_lost_o);
	s->drain_lost_r = s->drain_lost_o = 0;
}

bool store_drain(struct store *s, uint64_t now_ms)
{
	size_t budget = STORE_DRAIN_CHUNK;

	while (s->n_leaving > 0 && budget > 0) {
		struct segment *seg = s->leaving[s->n_leaving - 1];
		uint64_t r = 0, o = 0;

		budget -= store__drain_segment(s, seg, budget, now_ms, &r, &o);
		s->ctr.replicas_lost += r;
		s->ctr.objects_lost += o;
		s->drain_lost_r += r;
		s->drain_lost_o += o;
		if (seg->n_ix == 0)
			forget_leaving(s);
	}
	return s->n_leaving > 0;
}

bool store_backlog(const struct store *s)
{
	return s->n_leaving > 0;
}

/* Segment i leaves: out of the mounted list and of store_segment() now,
 * its replicas dropped by store_drain. */
static void remove_segment_at(struct store *s, size_t i, uint64_t now_ms)
{
	struct segment *seg = s->segs[i];
	struct client *c = store__find_client(s, seg->client_id);

	s->segs[i] = s->segs[--s->n_segs];
	host_count(s, seg->host, -1);
	mcrepl_engine_segment_remove(s->engine,
				     (mcrepl_segment_id){.v = seg->id});
	if (c && c->n_segs > 0)
		c->n_segs--;
	seg->leaving = true;
	if (!store__grow(&s->leaving, s->n_leaving, &s->cap_leaving,
			 sizeof(seg))) {
		uint64_t r = 0, o = 0; /* no memory: drop them all now */

		store__drain_segment(s, seg, SIZE_MAX, now_ms, &r, &o);
		s->ctr.replicas_lost += r;
		s->ctr.objects_lost += o;
		mcu_map_remove(&s->seg_ids, &seg->id_node);
		free_segment(seg);
		return;
	}
	s->leaving[s->n_leaving++] = seg;
}

McreplRpc__Code store_unmount(struct store *s, uint64_t client_id,
			      uint64_t segment_id, uint64_t now_ms)
{
	struct segment *seg = store_segment(s, segment_id);

	if (!seg)
		return MCREPL_RPC__CODE__NOT_FOUND;
	if (seg->client_id != client_id)
		return MCREPL_RPC__CODE__PERMISSION_DENIED;
	for (size_t i = 0; i < s->n_segs; i++)
		if (s->segs[i] == seg)
			remove_segment_at(s, i, now_ms);
	return MCREPL_RPC__CODE__OK;
}

static void count_reads(struct segment *seg, uint64_t reads)
{
	/* the first report after a mount is the baseline */
	seg->reads_recent = !seg->reads_seen ? 0
			    : reads >= seg->reads_total
				? reads - seg->reads_total
				: reads;
	seg->reads_seen = true;
	seg->reads_total = reads;
}

McreplRpc__Code store_heartbeat(struct store *s, uint64_t client_id,
				const uint64_t *seg_ids, const uint64_t *reads,
				size_t n, uint64_t now_ms)
{
	struct client *c = store__find_client(s, client_id);
	size_t mounted = 0;

	if (!c)
		return MCREPL_RPC__CODE__UNKNOWN_CLIENT;
	if (n > s->opts.max_heartbeat_segments) {
		s->ctr.heartbeats_refused++;
		return MCREPL_RPC__CODE__INVALID_ARGUMENT;
	}
	c->last_seen_ms = now_ms;
	mounted = c->n_segs;
	if (n > mounted) /* ids beyond the client's own are ignored */
		n = mounted;
	for (size_t i = 0; i < n; i++) {
		struct segment *seg = store_segment(s, seg_ids[i]);

		if (seg && seg->client_id == client_id) {
			count_reads(seg, reads[i]);
			store__policy_segment(s, seg);
		}
	}
	return MCREPL_RPC__CODE__OK;
}

size_t store_expire_clients(struct store *s, uint64_t now_ms)
{
	size_t gone = 0, segs = 0, replicas = 0, n_ids, had;
	uint64_t *ids;

	for (size_t i = s->n_clients; i-- > 0;) {
		struct client *c = s->clients[i];

		if (now_ms - c->last_seen_ms <= s->opts.client_ttl_ms)
			continue;
		/* its reservations and dynamic copies first, through the
		 * lease table, while its segments are still known */
		store__reclaim_client(s, c->id, now_ms);
		had = c->n_segs;
		ids = had ? calloc(had, sizeof(*ids)) : NULL;
		n_ids = 0;
		for (size_t j = s->n_segs; c->n_segs > 0 && j-- > 0;)
			if (s->segs[j]->client_id == c->id) {
				segs++;
				replicas += s->segs[j]->n_ix;
				if (ids && n_ids < had)
					ids[n_ids++] = s->segs[j]->id;
				remove_segment_at(s, j, now_ms);
			}
		store__fail_client_tasks(s, c);
		s->clients[i] = s->clients[--s->n_clients];
		store__journal_free(c);
		/* what it held is fenced: no later leader takes it back
		 * (docs/HA.md); the removes waiting on it end then */
		store__fence_client(s, c->id, ids, n_ids);
		free(ids);
		free(c);
		gone++;
	}
	if (replicas)
		log_line(LOG_WARN,
			 "%zu client(s) expired: %zu segment(s) leaving with "
			 "%zu replicas",
			 gone, segs, replicas);
	return gone;
}
