/* High availability in the store (docs/HA.md): the term that fences
 * versions, the per-worker journal of committed and dropped replicas the
 * workers index, and the re-registration of what they hold. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "stamp.h"
#include "store_priv.h"

/* Most journal entries kept per worker: it acks them every FetchTasks
 * poll (20 ms by default), so this is only reached by a worker that
 * stopped polling; further entries are counted as journal_overflow. */
#define JOURNAL_MAX 65536u
/* Keyless re-registered regions kept at once, and for how long: they are
 * the puts of the last FetchTasks period before a failover, adopted by the
 * first lookup of their key or freed. */
#define ORPHANS_MAX 4096u
#define ORPHAN_TTL_MS 60000u
/* Re-registration is recovery after a leader change: a segment mounted
 * later than this after the term's first tick is never held, and a
 * segment not held has its records refused (recover_unheld). Workers
 * follow a new leader within a poll of etcd (500 ms). */
#define REMOUNT_WINDOW_MS 10000u
/* The term in an incarnation's low bits (ha.c). */
#define TERM_BITS 0x0000ffffffffffffULL

/* Keys removed in this term (store_remove), by stamp key hash with the
 * version removed, so no re-registered replica (a worker that re-mounts
 * still holding one) brings one back: two generations of at most
 * REMOVED_GEN keys; once the newer is full the older is forgotten
 * (removed_keys_forgotten_total) and a fresh one begins. 2 MiB at most,
 * allocated with the first remove of a term. */
#define REMOVED_GEN 32768u
#define REMOVED_SLOTS (2 * REMOVED_GEN) /* open addressing, half full */

struct removed_gen {
	size_t n;
	struct removed_slot {
		uint64_t hash, version; /* hash 0: empty */
	} slot[REMOVED_SLOTS];
};

struct store_removed {
	struct removed_gen *cur, *old;
};

struct orphan {
	uint64_t segment_id, offset, size, version, incarnation, key_hash;
	uint64_t stamp_tag, expires_ms;
};

struct jentry {
	uint64_t seq;
	bool drop, dynamic;
	uint64_t segment_id, offset, size, version, incarnation, stamp_tag;
	char *tenant, *key;
};

struct store_journal {
	struct jentry *e; /* [head, n) live, oldest first */
	size_t head, n, cap;
	uint64_t next_seq;
};

static void orphan_remove(struct store *s, size_t i)
{
	s->orphans[i] = s->orphans[--s->n_orphans];
}

void store_set_term(struct store *s, uint64_t term)
{
	if (term != s->term) {
		store__removed_free(s); /* a record of this term only */
		s->term_tick0_ms = 0;
	}
	s->term = term;
	if (term)
		s->next_version = (term & 0xffffffffULL) << 32 | 1;
}

uint64_t store_term(const struct store *s)
{
	return s->term;
}

uint64_t store_object_incarnation(const struct store *s, const struct object *o)
{
	return o->origin ? o->origin->incarnation : s->incarnation;
}

uint64_t store_object_stamp_tag(const struct store *s, const struct object *o)
{
	struct stamp_id id;

	if (o->origin)
		return o->origin->stamp_tag;
	if (s->opts.grants_off)
		return 0;
	id = (struct stamp_id){
	    .incarnation = s->incarnation,
	    .object_id = o->version,
	    .key_hash = stamp_key_hash(o->tenant, strlen(o->tenant), o->key,
				       strlen(o->key)),
	    .length = o->size,
	};
	return stamp_tag(&s->stamp_key, &id);
}

/* o was written under another master: it keeps that one's incarnation and
 * the stamp tag its worker reported (false: out of memory). */
static bool set_origin(struct object *o, uint64_t incarnation, uint64_t tag)
{
	o->origin = malloc(sizeof(*o->origin));
	if (!o->origin)
		return false;
	*o->origin = (struct object_origin){.incarnation = incarnation,
					    .stamp_tag = tag};
	return true;
}

void store_ha_figures(struct store *s, struct store_ha_figures *f)
{
	*f = s->ha;
}

/* ---- the journal ---------------------------------------------------------- */

static void jentry_free(struct jentry *e)
{
	free(e->tenant);
	free(e->key);
}

void store__journal_free(struct client *c)
{
	struct store_journal *j = c->journal;

	if (!j)
		return;
	for (size_t i = j->head; i < j->n; i++)
		jentry_free(&j->e[i]);
	free(j->e);
	free(j);
	c->journal = NULL;
}

static struct store_journal *journal_of(struct store *s, uint64_t client_id)
{
	struct client *c = store__find_client(s, client_id);

	if (!c)
		return NULL;
	if (!c->journal) {
		c->journal = calloc(1, sizeof(*c->journal));
		if (c->journal)
			c->journal->next_seq = 1;
	}
	return c->journal;
}

static void journal_add(struct store *s, const struct object *o,
			const struct replica *r, bool drop)
{
	struct segment *seg = store_segment(s, r->segment_id);
	struct store_journal *j;
	struct jentry *e;

	if (!s->term || !seg)
		return;
	j = journal_of(s, seg->client_id);
	if (!j || j->n - j->head >= JOURNAL_MAX) {
		s->ha.journal_overflow++;
		/* never acknowledged: waits for it to leave */
		store__rm_note_drop(s, seg->client_id, 0);
		return;
	}
	if (j->head && j->n == j->cap) { /* compact */
		memmove(j->e, j->e + j->head, (j->n - j->head) * sizeof(*e));
		j->n -= j->head;
		j->head = 0;
	}
	if (!store__grow(&j->e, j->n, &j->cap, sizeof(*e))) {
		s->ha.journal_overflow++;
		store__rm_note_drop(s, seg->client_id, 0);
		return;
	}
	e = &j->e[j->n];
	*e = (struct jentry){.seq = j->next_seq,
			     .drop = drop,
			     .dynamic = r->dynamic,
			     .segment_id = r->segment_id,
			     .offset = r->offset,
			     .size = o->size,
			     .version = o->version,
			     .incarnation = store_object_incarnation(s, o)};
	if (!drop) {
		e->stamp_tag = store_object_stamp_tag(s, o);
		e->tenant = strdup(o->tenant);
		e->key = strdup(o->key);
		if (!e->tenant || !e->key) {
			jentry_free(e);
			s->ha.journal_overflow++;
			store__rm_note_drop(s, seg->client_id, 0);
			return;
		}
	}
	store__rm_note_drop(s, seg->client_id, e->seq);
	j->next_seq++;
	j->n++;
}

void store__journal_commit(struct store *s, const struct object *o,
			   const struct replica *r)
{
	journal_add(s, o, r, false);
}

void store__journal_drop(struct store *s, const struct object *o,
			 const struct replica *r)
{
	if (r->status == REPLICA_COMPLETE)
		journal_add(s, o, r, true);
}

size_t store_journal_fill(struct store *s, uint64_t client_id, uint64_t ack,
			  McreplRpc__IndexEntry *out, size_t max)
{
	struct client *c = store__find_client(s, client_id);
	struct store_journal *j = c ? c->journal : NULL;
	size_t n = 0;

	if (!c)
		return 0;
	store__rm_acked(s, client_id, ack); /* the removes it held back */
	if (!j)
		return 0;
	while (j->head < j->n && j->e[j->head].seq <= ack)
		jentry_free(&j->e[j->head++]);
	if (j->head == j->n)
		j->head = j->n = 0;
	for (size_t i = j->head; i < j->n && n < max; i++, n++) {
		const struct jentry *e = &j->e[i];
		McreplRpc__IndexEntry *m = &out[n];

		mcrepl_rpc__index_entry__init(m);
		m->seq = e->seq;
		m->drop = e->drop;
		m->segment_id = e->segment_id;
		m->offset = e->offset;
		m->size = e->size;
		m->version = e->version;
		m->incarnation = e->incarnation;
		m->stamp_tag = e->stamp_tag;
		m->dynamic = e->dynamic;
		if (e->tenant) { /* drops carry no name */
			m->tenant = e->tenant;
			m->key = e->key;
		}
	}
	return n;
}

/* ---- keys removed in this term ----------------------------------------- */

static uint64_t removed_hash(uint64_t key_hash)
{
	return key_hash ? key_hash : 1; /* 0 marks an empty slot */
}

static struct removed_slot *removed_slot(struct removed_gen *g, uint64_t h)
{
	size_t i = (size_t)(h ^ h >> 29) & (REMOVED_SLOTS - 1);

	while (g->slot[i].hash && g->slot[i].hash != h)
		i = (i + 1) & (REMOVED_SLOTS - 1);
	return &g->slot[i];
}

void store__removed_free(struct store *s)
{
	if (!s->removed)
		return;
	free(s->removed->cur);
	free(s->removed->old);
	free(s->removed);
	s->removed = NULL;
}

void store__removed_note(struct store *s, const struct object *o)
{
	struct store_removed *r = s->removed;
	uint64_t h;
	struct removed_slot *slot;

	if (!s->term)
		return;
	if (!r) {
		r = s->removed = calloc(1, sizeof(*r));
		if (r)
			r->cur = calloc(1, sizeof(*r->cur));
		if (!r || !r->cur) {
			store__removed_free(s);
			s->ctr.removed_forgotten++;
			return;
		}
	}
	h = removed_hash(stamp_key_hash(o->tenant, strlen(o->tenant), o->key,
					strlen(o->key)));
	slot = removed_slot(r->cur, h);
	if (!slot->hash && r->cur->n >= REMOVED_GEN) { /* a new generation */
		struct removed_gen *g = r->old;

		if (g) {
			s->ctr.removed_forgotten += g->n;
			memset(g, 0, sizeof(*g));
		} else if (!(g = calloc(1, sizeof(*g)))) {
			s->ctr.removed_forgotten++;
			return;
		}
		r->old = r->cur;
		r->cur = g;
		slot = removed_slot(g, h);
	}
	if (!slot->hash) {
		slot->hash = h;
		r->cur->n++;
	}
	if (slot->version < o->version)
		slot->version = o->version;
}

/* The newest version of the key (by stamp key hash) removed in this term,
 * 0 when none is known. */
static uint64_t removed_version(const struct store *s, uint64_t key_hash)
{
	const struct store_removed *r = s->removed;
	uint64_t h = removed_hash(key_hash), v = 0;
	const struct removed_slot *slot;

	if (!r)
		return 0;
	slot = removed_slot(r->cur, h);
	if (slot->hash)
		v = slot->version;
	if (r->old) {
		slot = removed_slot(r->old, h);
		if (slot->hash && slot->version > v)
			v = slot->version;
	}
	return v;
}

/* ---- re-registration ---------------------------------------------------- */

/* A mount now is a re-mount after the leader change (the store has not
 * ticked yet, or did so first less than REMOUNT_WINDOW_MS ago). */
static bool remount_window(const struct store *s)
{
	return !s->term_tick0_ms ||
	       s->tick_ms - s->term_tick0_ms < REMOUNT_WINDOW_MS;
}

void store_hold_segment(struct store *s, uint64_t client_id, uint64_t seg_id,
			uint64_t until_ms)
{
	struct segment *seg = store_segment(s, seg_id);

	if (!seg || seg->client_id != client_id || !s->term) /* HA only */
		return;
	if (!until_ms || remount_window(s))
		seg->held_until_ms = until_ms;
}

bool store_segments_held(const struct store *s)
{
	for (size_t i = 0; i < s->n_segs; i++)
		if (s->segs[i]->held_until_ms)
			return true;
	return false;
}

void store__ha_tick(struct store *s, uint64_t now_ms)
{
	if (!s->term_tick0_ms)
		s->term_tick0_ms = now_ms ? now_ms : 1;
	s->tick_ms = now_ms;
	store__rm_tick(s, now_ms);
	for (size_t i = s->n_orphans; i-- > 0;) {
		struct orphan *p = &s->orphans[i];
		struct segment *seg;

		if (p->expires_ms > now_ms)
			continue;
		seg = store_segment(s, p->segment_id);
		if (seg)
			seg_alloc_free(seg->alloc, p->offset);
		s->ha.orphans_expired++;
		orphan_remove(s, i);
	}
	for (size_t i = 0; i < s->n_segs; i++)
		if (s->segs[i]->held_until_ms &&
		    s->segs[i]->held_until_ms <= now_ms)
			s->segs[i]->held_until_ms = 0;
}

static McreplRpc__Code refuse(struct store *s, McreplRpc__Code code, char *err,
			      size_t errlen, const char *why)
{
	s->ha.recover_refused++;
	snprintf(err, errlen, "%s", why);
	return code;
}

static McreplRpc__Code add_replica(struct store *s, struct object *o,
				   struct segment *seg,
				   const McreplRpc__IndexEntry *e, char *err,
				   size_t errlen)
{
	uint64_t offset = e->offset;
	struct replica r = {.segment_id = seg->id,
			    .offset = offset,
			    .size = o->size,
			    .status = REPLICA_COMPLETE,
			    .dynamic = e->dynamic};

	if (store__on_segment(o, seg->id) || !store_reserve_replica(o)) {
		seg_alloc_free(seg->alloc, offset);
		return refuse(s, MCREPL_RPC__CODE__ALREADY_EXISTS, err, errlen,
			      "the object already has a replica there (or "
			      "too many)");
	}
	o->replicas[o->n_replicas] = r;
	/* in its segment's index, so leaving drops it (store_obj.c) */
	if (!store__link_replica(seg, o, &o->replicas[o->n_replicas])) {
		seg_alloc_free(seg->alloc, offset);
		return refuse(s, MCREPL_RPC__CODE__INTERNAL, err, errlen,
			      "out of memory");
	}
	o->n_replicas++;
	s->ha.replicas_recovered++;
	store__journal_commit(s, o, &r);
	if (r.dynamic)
		dyn_on_replica_recovered(s, o, &r);
	return MCREPL_RPC__CODE__OK;
}

static McreplRpc__Code add_orphan(struct store *s, const struct segment *seg,
				  const McreplRpc__IndexEntry *e,
				  uint64_t now_ms, char *err, size_t errlen)
{
	if (s->n_orphans >= ORPHANS_MAX ||
	    !store__grow(&s->orphans, s->n_orphans, &s->cap_orphans,
			 sizeof(struct orphan))) {
		seg_alloc_free(seg->alloc, e->offset);
		return refuse(s, MCREPL_RPC__CODE__TOO_MANY, err, errlen,
			      "too many keyless regions");
	}
	s->orphans[s->n_orphans++] = (struct orphan){
	    .segment_id = seg->id,
	    .offset = e->offset,
	    .size = e->size,
	    .version = e->version,
	    .incarnation = e->incarnation,
	    .key_hash = e->key_hash,
	    .stamp_tag = e->stamp_tag,
	    .expires_ms = now_ms + ORPHAN_TTL_MS,
	};
	s->ha.orphans++;
	return MCREPL_RPC__CODE__OK;
}

struct object *store__adopt(struct store *s, const char *tenant,
			    const char *key)
{
	uint64_t h;
	struct object *o = NULL;

	if (!store__key_ok(tenant, key))
		return NULL;
	h = stamp_key_hash(tenant, strlen(tenant), key, strlen(key));
	for (size_t i = s->n_orphans; i-- > 0;) {
		struct orphan *p = &s->orphans[i];
		struct segment *seg = store_segment(s, p->segment_id);
		struct replica r = {.segment_id = p->segment_id,
				    .offset = p->offset,
				    .size = p->size,
				    .status = REPLICA_COMPLETE};

		if (p->key_hash != h)
			continue;
		if (!seg) { /* its worker went away */
			orphan_remove(s, i);
			continue;
		}
		if (p->version <= removed_version(s, h)) {
			/* its key was removed in this term */
			seg_alloc_free(seg->alloc, p->offset);
			s->ctr.removed_refused++;
			s->ha.recover_refused++;
			orphan_remove(s, i);
			continue;
		}
		if (o && (o->version != p->version || o->size != p->size ||
			  o->origin->stamp_tag != p->stamp_tag ||
			  store__on_segment(o, seg->id) ||
			  !store_reserve_replica(o)))
			continue; /* left to expire */
		if (!o) {
			o = store__new_object(tenant, key, p->size, 1);
			if (o && !set_origin(o, p->incarnation, p->stamp_tag)) {
				store__free_object(o);
				o = NULL;
			}
			if (!o)
				return NULL;
			o->version = p->version;
			o->complete = true;
			store__insert_object(s, o);
			s->ha.objects_recovered++;
			s->ha.orphans_adopted++;
		}
		r.size = o->size;
		o->replicas[o->n_replicas] = r;
		if (!store__link_replica(seg, o, &o->replicas[o->n_replicas]))
			continue; /* out of memory: left to expire */
		o->n_replicas++;
		s->ha.replicas_recovered++;
		store__journal_commit(s, o, &r);
		orphan_remove(s, i);
	}
	return o;
}

void store__orphans_removed(struct store *s, const struct object *o)
{
	uint64_t h;

	if (!s->n_orphans)
		return;
	h = stamp_key_hash(o->tenant, strlen(o->tenant), o->key,
			   strlen(o->key));
	for (size_t i = s->n_orphans; i-- > 0;) {
		struct orphan *p = &s->orphans[i];
		struct segment *seg = store_segment(s, p->segment_id);

		if (p->key_hash != h || p->version > o->version)
			continue;
		if (seg)
			seg_alloc_free(seg->alloc, p->offset);
		s->ha.recover_refused++;
		orphan_remove(s, i);
	}
}

McreplRpc__Code store_recover(struct store *s, uint64_t client_id,
			      uint64_t seg_id, const McreplRpc__IndexEntry *e,
			      uint64_t now_ms, char *err, size_t errlen)
{
	struct segment *seg = store_segment(s, seg_id);
	struct object *o;
	bool keyless;

	if (!seg || seg->client_id != client_id)
		return refuse(s, MCREPL_RPC__CODE__PERMISSION_DENIED, err,
			      errlen, "not a segment of this client");
	if (!seg->held_until_ms) {
		s->ctr.recover_unheld++;
		return refuse(s, MCREPL_RPC__CODE__PERMISSION_DENIED, err,
			      errlen,
			      "the segment is not re-registering after a "
			      "leader change");
	}
	if ((e->incarnation & TERM_BITS) >= (s->term & TERM_BITS) ||
	    (e->version >> 32) >= (s->term & 0xffffffffULL)) {
		s->ctr.recover_term++;
		return refuse(s, MCREPL_RPC__CODE__STALE, err, errlen,
			      "not written in an earlier term");
	}
	keyless = (!e->key || !e->key[0]) && e->key_hash;
	if ((!keyless && !store__key_ok(e->tenant, e->key)) || e->size == 0 ||
	    e->drop || !e->version || !e->incarnation || !e->stamp_tag ||
	    e->size > seg->capacity || e->size > STORE_MAX_OBJECT_BYTES)
		return refuse(s, MCREPL_RPC__CODE__INVALID_ARGUMENT, err,
			      errlen, "bad object record");
	if (e->version <=
	    removed_version(
		s, keyless ? e->key_hash
			   : stamp_key_hash(e->tenant, strlen(e->tenant),
					    e->key, strlen(e->key)))) {
		s->ctr.removed_refused++;
		return refuse(s, MCREPL_RPC__CODE__STALE, err, errlen,
			      "its key was removed in this term");
	}
	if (seg_alloc_alloc_at(seg->alloc, e->offset,
			       store_region_bytes(e->size)) != 0)
		return refuse(s, MCREPL_RPC__CODE__NO_SPACE, err, errlen,
			      "region overlaps another or leaves the segment");
	if (keyless)
		return add_orphan(s, seg, e, now_ms, err, errlen);
	o = store_find(s, e->tenant, e->key);
	if (o && o->complete && o->version < e->version) {
		/* an older version, evicted or retired as the old leader
		 * died, came back first: the newer one is the key's */
		s->ha.superseded++;
		store__free_replicas(s, o, now_ms);
		store_delete_object(s, o);
		o = NULL;
	}
	if (o) {
		if (o->version == e->version && o->size == e->size &&
		    o->complete &&
		    store_object_incarnation(s, o) == e->incarnation &&
		    store_object_stamp_tag(s, o) == e->stamp_tag)
			return add_replica(s, o, seg, e, err, errlen);
		seg_alloc_free(seg->alloc, e->offset);
		return refuse(s, MCREPL_RPC__CODE__ALREADY_EXISTS, err, errlen,
			      "another version holds the key");
	}
	o = store__new_object(e->tenant, e->key, e->size, 1);
	if (o && !set_origin(o, e->incarnation, e->stamp_tag)) {
		store__free_object(o);
		o = NULL;
	}
	if (!o) {
		seg_alloc_free(seg->alloc, e->offset);
		return refuse(s, MCREPL_RPC__CODE__INTERNAL, err, errlen,
			      "out of memory");
	}
	o->version = e->version;
	o->complete = true;
	o->last_read_ms = now_ms;
	store__insert_object(s, o);
	s->ha.objects_recovered++;
	return add_replica(s, o, seg, e, err, errlen);
}
