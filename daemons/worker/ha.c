/*
 * The worker's side of master high availability (docs/HA.md):
 *   - the leader: with --etcd_endpoints the master address is the value of
 *     the leader key; a master call that fails in transport or is refused
 *     as not_leader makes the worker look again (every RESOLVE_MS until a
 *     mount succeeds) and move its master link to a new address;
 *   - the index: per segment, the committed replicas it holds (offset,
 *     size, version, incarnation, tenant, key, whether a dynamic copy), fed
 *     by the master's journal with FetchTasks;
 *   - re-registration: after every mount the segment's index goes back to
 *     the master with RegisterObjects, in batches, each entry's region
 *     checked against its stamp first (a region that no longer holds the
 *     object is dropped from the index, never registered). The mount held
 *     the segment out of placement until the last batch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "etcd.h"
#include "hafence.h"
#include "util/hash.h"
#include "util/map.h"
#include "netutil.h"
#include "span.h"
#include "stamp.h"
#include "worker.h"

#define RESOLVE_MS 100 /* look at the leader key while lost */
/* (and ask again for a fence etcd did not answer) */
#define WATCH_MS                                                               \
	500			   /* and this often anyway (a stopped leader
				     answers nothing, not even an error) */
#define REG_BATCH 256		   /* records per RegisterObjects */
#define REG_BATCH_BYTES (8u << 20) /* bytes checked per batch (loop time) */
#define SCAN_BYTES (16u << 20)	   /* segment scanned for orphans per batch */

struct wentry {
	struct mcu_map_node node; /* by offset */
	struct wentry *prev, *next;
	uint64_t offset, size, version, incarnation;
	uint64_t stamp_tag; /* the master's, as fed: what the stamp carries */
	bool dynamic;	    /* a dynamic copy, as fed */
	char *tenant, *key;
};

struct widx {
	struct mcu_map map;
	struct wentry *head;
};

static void fences_tick(struct worker *w, int64_t now_ms);

/* ---- the leader ------------------------------------------------------- */

int ha_setup(struct worker *w, char *err, size_t errlen)
{
	if (!w->flags.etcd_endpoints[0])
		return 0;
	w->etcd =
	    etcd_create(w->base, w->flags.etcd_endpoints, 500, err, errlen);
	if (!w->etcd)
		return -1;
	w->need_leader = true;
	return 0;
}

static void switch_master(struct worker *w, const char *addr)
{
	char err[256];
	rpc_client_config rc;
	rpc_aclient *c;

	/* the same credential and TLS as for --master */
	worker_rpc_config(w, &rc);
	c = rpc_aclient_create(w->base, addr, &rc, err, sizeof(err));

	if (!c) {
		log_line(LOG_INFO, "leader %s: %s", addr, err);
		return;
	}
	log_line(LOG_INFO, "master leader is now %s (was %s)", addr,
		 w->flags.master);
	/* cancels what is in flight: every chain ends */
	rpc_aclient_destroy(w->rpc);
	w->rpc = c;
	snprintf(w->flags.master, sizeof(w->flags.master), "%s", addr);
	for (uint32_t i = 0; i < w->n_segs; i++)
		w->segs[i].mounted = false;
	w->next_mount_ms = 0;
	w->index_ack = 0;
	w->revoke_ack = 0;
	w->master_down_logged = false;
	w->ctr.leader_changes++;
}

static void on_leader(const struct etcd_result *r, void *arg)
{
	struct worker *w = arg;

	w->resolving = false;
	w->next_resolve_ms = net_now_ms() + RESOLVE_MS;
	if (r->status != 0 || !r->found || !r->value[0] || w->stopping)
		return; /* no leader now: look again */
	if (strcmp(r->value, w->flags.master) != 0)
		switch_master(w, r->value);
	else if (!worker_all_mounted(w))
		w->next_mount_ms = 0; /* same leader: try it now */
}

void ha_tick(struct worker *w, int64_t now_ms)
{
	if (w->etcd)
		fences_tick(w, now_ms);
	if (!w->etcd || w->resolving || now_ms < w->next_resolve_ms ||
	    (!w->need_leader && now_ms < w->next_resolve_ms + WATCH_MS))
		return;
	w->resolving = true;
	if (etcd_get(w->etcd, w->flags.ha_key, on_leader, w) != 0)
		w->resolving = false;
}

bool ha_master_failed(struct worker *w, const McreplRpc__Result *r)
{
	bool refused = r && r->code == MCREPL_RPC__CODE__UNAVAILABLE &&
		       r->reason && strcmp(r->reason, "not_leader") == 0;

	if (w->etcd && (!r || refused))
		w->need_leader = true;
	return refused;
}

/* ---- the index -------------------------------------------------------- */

static bool entry_at(const struct mcu_map_node *n, const void *key)
{
	return ((const struct wentry *)(const void *)n)->offset ==
	       *(const uint64_t *)key;
}

static struct wentry *find(struct widx *x, uint64_t offset)
{
	return x ? (struct wentry *)(void *)mcu_map_find(
		       &x->map, mcu_mix64(offset), entry_at, &offset)
		 : NULL;
}

static void entry_remove(struct widx *x, struct wentry *e)
{
	mcu_map_remove(&x->map, &e->node);
	if (e->prev)
		e->prev->next = e->next;
	else
		x->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	free(e->tenant);
	free(e->key);
	free(e);
}

static void ha_index_free(struct wseg *s)
{
	struct widx *x = s->index;

	if (!x)
		return;
	while (x->head)
		entry_remove(x, x->head);
	mcu_map_fini(&x->map);
	free(x);
	s->index = NULL;
}

void ha_teardown(struct worker *w)
{
	etcd_destroy(w->etcd);
	w->etcd = NULL;
	for (uint32_t i = 0; i < w->n_segs; i++)
		ha_index_free(&w->segs[i]);
}

size_t ha_index_size(const struct wseg *s)
{
	return s->index ? mcu_map_size(&s->index->map) : 0;
}

static struct widx *index_of(struct wseg *s)
{
	if (!s->index) {
		s->index = calloc(1, sizeof(*s->index));
		if (s->index && mcu_map_init(&s->index->map, 1024) != 0) {
			free(s->index);
			s->index = NULL;
		}
	}
	return s->index;
}

static void index_commit(struct wseg *s, const McreplRpc__IndexEntry *m)
{
	struct widx *x = index_of(s);
	struct wentry *e = find(x, m->offset);

	if (!x || !m->key || !m->key[0] || !m->tenant ||
	    !span_within2(m->offset, STAMP_BYTES, m->size, s->len))
		return;
	if (e)
		entry_remove(x, e);
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->offset = m->offset;
	e->size = m->size;
	e->version = m->version;
	e->incarnation = m->incarnation;
	e->stamp_tag = m->stamp_tag;
	e->dynamic = m->dynamic;
	e->tenant = strdup(m->tenant);
	e->key = strdup(m->key);
	if (!e->tenant || !e->key) {
		free(e->tenant);
		free(e->key);
		free(e);
		return;
	}
	e->next = x->head;
	if (x->head)
		x->head->prev = e;
	x->head = e;
	mcu_map_insert(&x->map, &e->node, mcu_mix64(e->offset));
}

void ha_index_apply(struct worker *w, McreplRpc__IndexEntry **ents, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const McreplRpc__IndexEntry *m = ents[i];
		struct wseg *s = worker_segment(w, m->segment_id);
		struct wentry *e;

		if (m->seq > w->index_ack)
			w->index_ack = m->seq;
		if (!s)
			continue;
		if (!m->drop) {
			index_commit(s, m);
			if (m->version > w->fed_max_version &&
			    m->incarnation == w->incarnation)
				w->fed_max_version = m->version;
			continue;
		}
		e = find(s->index, m->offset);
		if (e && e->version == m->version)
			entry_remove(s->index, e);
	}
}

bool ha_hold(const struct wseg *s)
{
	/* something to re-register: the index, or orphans of an earlier
	 * master (an HA worker mounting again) */
	return ha_index_size(s) > 0 || (s->w->etcd && s->w->incarnation);
}

/* ---- re-registration -------------------------------------------------- */

struct reg {
	struct wseg *s;
	uint64_t seg_id;
	uint64_t *offsets; /* the index at the mount, walked in batches */
	size_t n, next;
	/* then the orphan scan, SCAN_BYTES of segment per batch */
	uint64_t scan_at, scan_inc, scan_min_version;
	/* which pages from res_at are in memory (segment_resident): the
	 * scan skips pages never written, a segment's unused part */
	uint64_t res_at, page;
	size_t res_n;
	unsigned char res[SCAN_BYTES / 4096];
};

static void reg_end(struct reg *g)
{
	g->s->registering = false;
	free(g->offsets);
	free(g);
}

/* The region of e must still hold e (its stamp, with the tag the master
 * fed, and payload CRC): a stamp forged after the commit is not sent on
 * to the next master as the object. */
static bool holds(const struct wseg *s, const struct wentry *e)
{
	struct stamp_id want = {
	    .incarnation = e->incarnation,
	    .object_id = e->version,
	    .key_hash = stamp_key_hash(e->tenant, strlen(e->tenant), e->key,
				       strlen(e->key)),
	    .length = e->size,
	    .tag = e->stamp_tag,
	};

	return e->stamp_tag &&
	       stamp_verify((const uint8_t *)s->mem + e->offset,
			    (size_t)(STAMP_BYTES + e->size), &want) == STAMP_OK;
}

static void reg_send(struct reg *g);

/* The next orphan at or after g->scan_at within SCAN_BYTES: a region whose
 * valid stamp names the previous master above the last version its
 * journal told (a put the journal did not reach) and no indexed object. */
/* Whether the page of g->scan_at may hold a stamp: it is in memory. Its
 * residency is read for SCAN_BYTES at a time. Reading a page never
 * written costs a page fault (100-250 ms a 16 MiB batch on a busy host,
 * with the loop held and puts refused while the segment is re-registered);
 * a page not in memory holds no stamp. */
static bool scan_page_resident(struct reg *g)
{
	uint64_t i;

	if (!g->page)
		return true;
	i = (g->scan_at - g->res_at) / g->page;
	if (g->scan_at < g->res_at || i >= g->res_n) {
		g->res_at = g->scan_at / g->page * g->page;
		g->res_n = segment_resident(g->s, g->res_at, SCAN_BYTES, g->res,
					    sizeof(g->res));
		if (!g->res_n)
			return true;
		i = (g->scan_at - g->res_at) / g->page;
	}
	return g->res[i] & 1;
}

static bool next_orphan(struct reg *g, uint64_t stop,
			McreplRpc__IndexEntry *out)
{
	struct wseg *s = g->s;
	const uint8_t *mem = s->mem;

	for (; g->scan_at + STAMP_BYTES <= s->len && g->scan_at < stop;
	     g->scan_at += STAMP_BYTES) {
		const uint8_t *p = mem + g->scan_at;
		struct stamp_id id;
		uint32_t crc;

		if (!scan_page_resident(g)) { /* on to the next page */
			g->scan_at =
			    (g->scan_at / g->page + 1) * g->page - STAMP_BYTES;
			continue;
		}
		if (p[0] != 0x4D || p[1] != 0x43 || p[2] != 0x53 ||
		    p[3] != 0x4F) /* "MCSO" */
			continue;
		if (stamp_read(p, STAMP_BYTES, &id, &crc) != STAMP_OK ||
		    !id.tag || id.incarnation != g->scan_inc ||
		    id.object_id <= g->scan_min_version ||
		    id.length > s->len - g->scan_at - STAMP_BYTES ||
		    find(s->index, g->scan_at) ||
		    stamp_verify(p, (size_t)(STAMP_BYTES + id.length), &id) !=
			STAMP_OK)
			continue;
		mcrepl_rpc__index_entry__init(out);
		out->offset = g->scan_at;
		out->size = id.length;
		out->version = id.object_id;
		out->incarnation = id.incarnation;
		out->key_hash = id.key_hash;
		out->stamp_tag =
		    id.tag; /* unverifiable here: see SECURITY.md */
		out->segment_id = s->id;
		g->scan_at += (STAMP_BYTES + id.length + STAMP_BYTES - 1) /
			      STAMP_BYTES * STAMP_BYTES;
		return true;
	}
	return false;
}

static void on_registered(int status, ProtobufCMessage *resp, const char *error,
			  void *arg)
{
	struct reg *g = arg;
	struct worker *w = g->s->w;
	McreplRpc__RegisterObjectsResponse *r =
	    (McreplRpc__RegisterObjectsResponse *)resp;

	(void)error;
	if (status != RPC_OK || !r->result ||
	    r->result->code != MCREPL_RPC__CODE__OK) {
		/* the next mount starts over */
		if (status != RPC_OK)
			ha_master_failed(w, NULL);
		if (resp)
			protobuf_c_message_free_unpacked(resp, NULL);
		reg_end(g);
		return;
	}
	w->ctr.objects_registered += r->accepted;
	w->ctr.register_refused += r->refused;
	protobuf_c_message_free_unpacked(resp, NULL);
	if ((g->next < g->n || g->scan_inc) && g->s->mounted &&
	    g->s->id == g->seg_id)
		reg_send(g);
	else
		reg_end(g);
}

static void reg_send(struct reg *g)
{
	struct wseg *s = g->s;
	struct worker *w = s->w;
	McreplRpc__RegisterObjectsRequest req;
	McreplRpc__IndexEntry ents[REG_BATCH], *ptrs[REG_BATCH];
	size_t n = 0;
	uint64_t bytes = 0;

	while (g->next < g->n && n < REG_BATCH && bytes < REG_BATCH_BYTES) {
		struct wentry *e = find(s->index, g->offsets[g->next++]);

		if (!e)
			continue; /* dropped since */
		if (!holds(s, e)) {
			w->ctr.stamps_bad++;
			entry_remove(s->index, e);
			continue;
		}
		bytes += e->size;
		mcrepl_rpc__index_entry__init(&ents[n]);
		ents[n].key_hash = 0;
		ents[n].offset = e->offset;
		ents[n].size = e->size;
		ents[n].version = e->version;
		ents[n].incarnation = e->incarnation;
		ents[n].stamp_tag = e->stamp_tag;
		ents[n].dynamic = e->dynamic;
		ents[n].segment_id = s->id;
		ents[n].tenant = e->tenant;
		ents[n].key = e->key;
		ptrs[n] = &ents[n];
		n++;
	}
	if (g->next >= g->n && g->scan_inc) { /* the index sent: orphans */
		uint64_t stop = g->scan_at + SCAN_BYTES;

		while (n < REG_BATCH && next_orphan(g, stop, &ents[n])) {
			ptrs[n] = &ents[n];
			n++;
		}
		if (g->scan_at + STAMP_BYTES > s->len)
			g->scan_inc = 0; /* done */
	}
	mcrepl_rpc__register_objects_request__init(&req);
	req.client_id = w->client_id;
	req.segment_id = s->id;
	req.n_objects = n;
	req.objects = ptrs;
	req.last = g->next >= g->n && !g->scan_inc;
	worker_call(w, "RegisterObjects", &req.base,
		    &mcrepl_rpc__register_objects_response__descriptor,
		    on_registered, g);
}

/* scan: look for orphans of the previous master (a new master only) */
static void reg_start(struct wseg *s, bool scan)
{
	struct reg *g = calloc(1, sizeof(*g));
	size_t n = ha_index_size(s), i = 0;

	if (!g || !(g->offsets = malloc((n ? n : 1) * sizeof(*g->offsets)))) {
		free(g);
		return;
	}
	for (struct wentry *e = s->index ? s->index->head : NULL; e && i < n;
	     e = e->next)
		g->offsets[i++] = e->offset;
	g->s = s;
	g->seg_id = s->id;
	g->n = i;
	g->page = (uint64_t)sysconf(_SC_PAGESIZE);
	if (g->page < 4096 || g->page % STAMP_BYTES)
		g->page = 0; /* (not on Linux) every page is scanned */
	g->scan_inc = scan ? s->w->prev_incarnation : 0;
	g->scan_min_version = s->w->prev_max_version;
	s->registering = true;
	log_line(LOG_INFO, "re-registering %zu object(s) of segment %s", i,
		 s->name);
	reg_send(g);
}

/* Not at the master that expired it (UNKNOWN_CLIENT): its records would
 * be refused there (nothing there is recovery), so the index is forgotten
 * and no stamp of that master is an orphan at the next. */
static void forget_if_expired(struct worker *w, uint64_t incarnation)
{
	if (!w->expired || incarnation != w->incarnation)
		return;
	for (uint32_t i = 0; i < w->n_segs; i++)
		if (w->segs[i].index) {
			w->indexes_forgotten++;
			ha_index_free(&w->segs[i]);
		}
	w->no_orphans = true;
	log_line(LOG_WARN, "expired by the master: the index is forgotten, "
			   "nothing re-registered");
}

/* ---- fences (hafence.h) ----------------------------------------------- */

static void fence_key_of(const struct wseg *s, char *out, size_t cap)
{
	ha_fence_key(out, cap, s->w->flags.ha_key, s->fence_inc, s->fence_id);
}

static void on_fence_deleted(const struct etcd_result *r, void *arg)
{
	(void)r; /* a fence left behind is read once more, and deleted then */
	(void)arg;
}

/* The fence of s's previous mount: found, the master it was mounted at
 * expired it, and may have answered removes this index never applied, so
 * it is forgotten, orphans included; then s re-registers (what is left). */
static void on_fence(const struct etcd_result *r, void *arg)
{
	struct wseg *s = arg;
	struct worker *w = s->w;
	char key[sizeof(w->flags.ha_key) + 64];

	s->fence_inflight = false;
	if (r->status != 0 || w->stopping) {
		s->fence_next_ms = net_now_ms() + RESOLVE_MS; /* ha_tick */
		return;
	}
	s->fence_pending = false;
	if (r->found) {
		w->indexes_forgotten += s->index != NULL;
		w->ctr.fences_found++;
		ha_index_free(s);
		s->fence_scan = false;
		log_line(LOG_WARN,
			 "segment %s: fenced (the master it was mounted at "
			 "expired it): its index is forgotten, nothing "
			 "re-registered",
			 s->name);
		fence_key_of(s, key, sizeof(key));
		etcd_delete(w->etcd, key, on_fence_deleted, NULL);
	}
	if (s->mounted && !s->registering)
		reg_start(s, s->fence_scan);
}

static void fence_check(struct wseg *s)
{
	char key[sizeof(s->w->flags.ha_key) + 64];

	fence_key_of(s, key, sizeof(key));
	s->fence_inflight = etcd_get(s->w->etcd, key, on_fence, s) == 0;
	if (!s->fence_inflight)
		s->fence_next_ms = net_now_ms() + RESOLVE_MS;
}

static void fences_tick(struct worker *w, int64_t now_ms)
{
	for (uint32_t i = 0; i < w->n_segs; i++) {
		struct wseg *s = &w->segs[i];

		if (s->fence_pending && !s->fence_inflight && s->mounted &&
		    now_ms >= s->fence_next_ms)
			fence_check(s);
	}
}

void ha_mounted(struct worker *w, struct wseg *s, uint64_t prev_id,
		uint64_t incarnation)
{
	bool hold, scan = s->mounted_inc != incarnation;

	if (w->etcd)
		forget_if_expired(w, incarnation);
	w->expired = false;
	hold = ha_hold(s);
	/* a mount at another master: the previous one may be fenced (the
	 * first such check still pending keeps its mount) */
	if (w->etcd && scan && s->mounted_inc && !s->fence_pending) {
		s->fence_pending = true;
		s->fence_inc = s->mounted_inc;
		s->fence_id = prev_id;
		s->fence_next_ms = 0;
	}
	/* mounted again at the master that expired it: the fence of the
	 * mount it lost there is of no more use */
	if (w->etcd && !scan && prev_id && prev_id != s->id) {
		char key[sizeof(w->flags.ha_key) + 64];

		ha_fence_key(key, sizeof(key), w->flags.ha_key, incarnation,
			     prev_id);
		etcd_delete(w->etcd, key, on_fence_deleted, NULL);
	}
	s->mounted_inc = incarnation;
	if (incarnation != w->incarnation) { /* another master */
		w->prev_incarnation = w->no_orphans ? 0 : w->incarnation;
		w->prev_max_version = w->fed_max_version;
		w->fed_max_version = 0;
		w->incarnation = incarnation;
		w->no_orphans = false;
	}
	if (worker_all_mounted(w))
		w->need_leader = false;
	s->fence_scan = scan;
	if (s->fence_pending) {
		if (!s->fence_inflight)
			fence_check(s);
		return; /* on_fence re-registers */
	}
	if (hold && !s->registering)
		reg_start(s, scan);
}
