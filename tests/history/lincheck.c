/* The per-key linearizability search (hist.h). */
#include <stdlib.h>
#include <string.h>

#include "hist.h"

/* What an operation asks of the key and does to it, in the model. */
enum mkind {
	M_PUT,	   /* absent -> value */
	M_REMOVE,  /* present -> absent */
	M_READ,	   /* holds value */
	M_ABSENT,  /* absent (get or remove: not found) */
	M_PRESENT, /* holds some value (remove refused as busy) */
};

struct mop {
	enum mkind kind;
	bool optional; /* unknown outcome: may never have happened */
	uint64_t value, zob;
	size_t src; /* index in the sorted ops */
};

/* An invoke (call) or complete event; a doubly linked list in time
 * order, with entries lifted out while their op is linearized. */
struct ev {
	int64_t t;
	bool call;
	size_t op, match; /* the op; the other event of it */
	size_t prev, next;
};

struct memo {
	uint64_t *h, *state;
	size_t cap, n, max;
};

struct frame {
	size_t call_ev;
	uint64_t state;
};

struct search {
	struct mop *m;
	size_t nm;
	struct ev *e; /* e[0] is the head sentinel; NONE ends */
	size_t ne;
	struct memo memo;
	struct frame *stack;
	size_t depth, best_depth, stuck;
	uint64_t state, set; /* the key's state; the linearized set's hash */
};

#define NONE ((size_t)-1)

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static int cmp_inv(const void *a, const void *b)
{
	const struct hop *x = a, *y = b;

	if (x->t_inv != y->t_inv)
		return x->t_inv < y->t_inv ? -1 : 1;
	return x->t_ret < y->t_ret ? -1 : x->t_ret > y->t_ret;
}

/* Calls before completes at the same instant: the overlap is kept. */
static int cmp_ev(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->call != y->call)
		return x->call ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

/* The model operation of op, false when it constrains nothing (a failed
 * put or get: ALREADY_EXISTS may come from another writer's unfinished
 * put, so it says nothing of the key's state). */
static bool model_of(const struct hop *o, struct mop *m)
{
	memset(m, 0, sizeof(*m));
	m->optional = o->out == HOUT_UNKNOWN;
	m->value = o->value;
	switch (o->kind) {
	case HOP_PUT:
		m->kind = M_PUT;
		return o->out != HOUT_FAIL;
	case HOP_REMOVE:
		if (o->out != HOUT_FAIL) {
			m->kind = M_REMOVE;
			return true;
		}
		m->kind = o->code == HCODE_BUSY ? M_PRESENT : M_ABSENT;
		return o->code == HCODE_BUSY || o->code == HCODE_NOT_FOUND;
	case HOP_GET:
		if (o->out == HOUT_OK) {
			m->kind = M_READ;
			return o->read == HREAD_VALUE;
		}
		m->kind = M_ABSENT;
		return o->out == HOUT_FAIL && o->code == HCODE_NOT_FOUND;
	}
	return false;
}

/* Applies m to state: false when the model refuses it. */
static bool step(const struct mop *m, uint64_t state, uint64_t *next)
{
	*next = state;
	switch (m->kind) {
	case M_PUT:
		*next = m->value;
		return state == 0;
	case M_REMOVE:
		*next = 0;
		return state != 0;
	case M_READ:
		return state == m->value;
	case M_ABSENT:
		return state == 0;
	case M_PRESENT:
		return state != 0;
	}
	return false;
}

static int memo_grow(struct memo *mm)
{
	size_t cap = mm->cap ? mm->cap * 2 : 4096;
	uint64_t *h = calloc(cap, sizeof(*h)), *st = calloc(cap, sizeof(*st));

	if (!h || !st) {
		free(h);
		free(st);
		return -1;
	}
	for (size_t i = 0; i < mm->cap; i++) {
		size_t j;

		if (!mm->h[i])
			continue;
		for (j = mm->h[i] & (cap - 1); h[j]; j = (j + 1) & (cap - 1))
			;
		h[j] = mm->h[i];
		st[j] = mm->state[i];
	}
	free(mm->h);
	free(mm->state);
	mm->h = h;
	mm->state = st;
	mm->cap = cap;
	return 0;
}

/* Adds (set hash, state): 1 added, 0 seen before, -1 full or no memory. */
static int memo_add(struct memo *mm, uint64_t set, uint64_t state)
{
	uint64_t h = mix64(set ^ mix64(state)) | 1;
	size_t j;

	if (mm->n >= mm->max)
		return -1;
	if ((mm->n + 1) * 2 > mm->cap && memo_grow(mm) != 0)
		return -1;
	for (j = h & (mm->cap - 1); mm->h[j]; j = (j + 1) & (mm->cap - 1))
		if (mm->h[j] == h && mm->state[j] == state)
			return 0;
	mm->h[j] = h;
	mm->state[j] = state;
	mm->n++;
	return 1;
}

static void lift(struct ev *e, size_t c)
{
	size_t r = e[c].match;

	e[e[c].prev].next = e[c].next;
	if (e[c].next != NONE)
		e[e[c].next].prev = e[c].prev;
	e[e[r].prev].next = e[r].next;
	if (e[r].next != NONE)
		e[e[r].next].prev = e[r].prev;
}

static void unlift(struct ev *e, size_t c)
{
	size_t r = e[c].match;

	e[e[r].prev].next = r;
	if (e[r].next != NONE)
		e[e[r].next].prev = r;
	e[e[c].prev].next = c;
	if (e[c].next != NONE)
		e[e[c].next].prev = c;
}

/* The event list of s->m (ops: their times), linked in time order:
 * 0 or -1 (no memory). An unknown op completes at the end of time. */
static int build_events(struct search *s, const struct hop *ops)
{
	size_t n = 2 * s->nm, *ret_at;
	struct ev *v = calloc(n + 1, sizeof(*v));

	ret_at = calloc(s->nm + 1, sizeof(*ret_at));
	if (!v || !ret_at) {
		free(v);
		free(ret_at);
		return -1;
	}
	for (size_t i = 0; i < s->nm; i++) {
		const struct hop *o = &ops[s->m[i].src];

		v[1 + 2 * i] =
		    (struct ev){.t = o->t_inv, .call = true, .op = i};
		v[2 + 2 * i] = (struct ev){
		    .t = s->m[i].optional ? INT64_MAX : o->t_ret, .op = i};
	}
	qsort(v + 1, n, sizeof(*v), cmp_ev);
	for (size_t k = 1; k <= n; k++)
		if (!v[k].call)
			ret_at[v[k].op] = k;
	for (size_t k = 0; k <= n; k++) {
		v[k].prev = k ? k - 1 : NONE;
		v[k].next = k < n ? k + 1 : NONE;
		if (k && v[k].call)
			v[ret_at[v[k].op]].match = k;
		if (k && v[k].call)
			v[k].match = ret_at[v[k].op];
	}
	free(ret_at);
	s->e = v;
	s->ne = n + 1;
	return 0;
}

/* Tries to linearize the op whose invoke is event cur next: 1 done
 * (a configuration not seen before), 0 not, -1 the memo is full. */
static int try_call(struct search *s, size_t cur)
{
	struct mop *m = &s->m[s->e[cur].op];
	uint64_t next;
	int added;

	if (!step(m, s->state, &next))
		return 0;
	added = memo_add(&s->memo, s->set ^ m->zob, next);
	if (added == 1) {
		s->stack[s->depth++] = (struct frame){cur, s->state};
		s->state = next;
		s->set ^= m->zob;
		lift(s->e, cur);
	}
	return added;
}

/* Undoes the last op linearized; the event to try after its invoke. */
static size_t backtrack(struct search *s)
{
	struct frame f = s->stack[--s->depth];

	s->state = f.state;
	s->set ^= s->m[s->e[f.call_ev].op].zob;
	unlift(s->e, f.call_ev);
	return s->e[f.call_ev].next;
}

/* Lowe's just-in-time search; returns the verdict. */
static enum hist_verdict search_run(struct search *s, uint64_t max_steps,
				    uint64_t *steps)
{
	struct ev *e = s->e;
	size_t cur = e[0].next;

	for (*steps = 0; *steps < max_steps; ++*steps) {
		if (e[0].next == NONE)
			return HIST_LINEARIZABLE;
		if (cur != NONE && e[cur].call) {
			int r = try_call(s, cur);

			if (r < 0)
				return HIST_UNDECIDED;
			cur = r ? e[0].next : e[cur].next;
			continue;
		}
		/* the earliest pending complete: an unknown op's (they are
     * last) means every known one is linearized */
		if (cur != NONE && s->m[e[cur].op].optional)
			return HIST_LINEARIZABLE;
		if (s->stuck == NONE || s->depth > s->best_depth) {
			s->best_depth = s->depth;
			s->stuck = cur != NONE ? s->m[e[cur].op].src : NONE;
		}
		if (s->depth == 0)
			return HIST_VIOLATION;
		cur = backtrack(s);
	}
	return HIST_UNDECIDED;
}

/* Whether a put of value v on this key may have run before t: its
 * invoke before t and not a definite failure. */
static bool put_before(const struct hop *ops, size_t n, uint64_t v, int64_t t)
{
	for (size_t i = 0; i < n && ops[i].t_inv < t; i++)
		if (ops[i].kind == HOP_PUT && ops[i].value == v &&
		    ops[i].out != HOUT_FAIL)
			return true;
	return false;
}

/* Reads judged without the search: corrupt bytes, phantom values. */
static void judge_reads(struct hop *ops, size_t n, struct hist_key_result *r)
{
	for (size_t i = 0; i < n; i++) {
		struct hop *o = &ops[i];

		if (o->kind != HOP_GET || o->out != HOUT_OK)
			continue;
		if (o->read == HREAD_VALUE &&
		    !put_before(ops, n, o->value, o->t_ret))
			o->read = HREAD_PHANTOM;
		if (o->read == HREAD_VALUE)
			continue;
		if (o->read == HREAD_CORRUPT)
			r->corrupt++;
		else
			r->phantom++;
		if (r->verdict == HIST_LINEARIZABLE) {
			r->verdict = HIST_VIOLATION;
			r->cls = o->read == HREAD_CORRUPT ? HCLASS_CORRUPT
							  : HCLASS_PHANTOM;
			r->bad_op = i;
		}
	}
}

/* The class of a search that could not place op o. */
static enum hist_class class_of(const struct hop *o)
{
	if (o->kind == HOP_GET)
		return o->out == HOUT_OK ? HCLASS_STALE : HCLASS_LOST;
	if (o->kind == HOP_PUT)
		return HCLASS_LOST; /* the key was to hold a value still */
	return o->out == HOUT_OK || o->code == HCODE_BUSY ? HCLASS_STALE
							  : HCLASS_LOST;
}

static void search_free(struct search *s)
{
	free(s->m);
	free(s->e);
	free(s->stack);
	free(s->memo.h);
	free(s->memo.state);
}

/* Runs the search on ops (sorted): -1 out of memory, else 0 with r set. */
static int search_key(const struct hop *ops, size_t n,
		      const struct hist_budget *b, struct hist_key_result *r)
{
	struct search s = {.best_depth = 0, .stuck = NONE};
	enum hist_verdict v;
	int rc = -1;

	s.m = calloc(n + 1, sizeof(*s.m));
	s.stack = calloc(n + 1, sizeof(*s.stack));
	if (!s.m || !s.stack)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (model_of(&ops[i], &s.m[s.nm])) {
			s.m[s.nm].src = i;
			s.m[s.nm].zob = mix64(0x5eed0000ULL + i) | 1;
			s.nm++;
		}
	s.memo.max = b->max_cache;
	if (build_events(&s, ops) != 0)
		goto out;
	v = search_run(&s, b->max_steps, &r->steps);
	if (v == HIST_VIOLATION && s.stuck != NONE) {
		r->cls = class_of(&ops[s.stuck]);
		r->bad_op = s.stuck;
		r->stale += r->cls == HCLASS_STALE;
		r->lost += r->cls == HCLASS_LOST;
	}
	r->verdict = v;
	rc = 0;
out:
	search_free(&s);
	return rc;
}

int hist_check_key(struct hop *ops, size_t n, const struct hist_budget *b,
		   struct hist_key_result *res)
{
	struct hist_key_result r;

	memset(res, 0, sizeof(*res));
	res->ops = n;
	res->bad_op = NONE;
	qsort(ops, n, sizeof(*ops), cmp_inv);
	judge_reads(ops, n, res);
	r = *res;
	r.verdict = HIST_LINEARIZABLE;
	/* the search leaves out the reads judged already */
	if (search_key(ops, n, b, &r) != 0)
		return -1;
	res->stale = r.stale;
	res->lost = r.lost;
	res->steps = r.steps;
	if (res->verdict == HIST_LINEARIZABLE) {
		res->verdict = r.verdict;
		res->cls = r.cls;
		res->bad_op = r.bad_op;
	}
	return 0;
}

const char *hist_class_name(enum hist_class c)
{
	static const char *const names[] = {"none", "stale", "lost", "phantom",
					    "corrupt"};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "?";
}
