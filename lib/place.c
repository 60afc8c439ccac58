/* Source and target placement, reader order (RFC "Source Selection",
 * "Destination Selection"). Pure: no allocation, no globals, no clock. */
#include <string.h>

#include "mcrepl/domain.h"
#include "mcrepl/place.h"

#include "internal.h"

#define RDV_SEED 0x6d637265706c7264ULL /* "mcreplrd" */
#define RDV_K1 0x9e3779b97f4a7c15ULL
#define RDV_K2 0xc2b2ae3d27d4eb4fULL
#define RDV_K3 0x165667b19e3779f9ULL
#define RDV_K4 0x27d4eb2f165667c5ULL

/* Watermarks are compared in parts per billion (see place.h). */
#define PPB 1000000000ULL

/* ---- rendezvous score ---------------------------------------------------- */

/* Little-endian load of n <= 8 bytes, whatever the host byte order. */
static uint64_t load_le(const unsigned char *p, size_t n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* Fold one string, framed by its length, into h. */
static uint64_t rdv_absorb(uint64_t h, const char *s)
{
	const unsigned char *p = (const unsigned char *)mcu_nz(s);
	size_t n = strlen(mcu_nz(s));

	h = mcu_mix64(h ^ ((uint64_t)n + RDV_K1)) + RDV_K2;
	for (; n >= 8; p += 8, n -= 8)
		h = mcu_mix64(h ^ load_le(p, 8)) + RDV_K2;
	return mcu_mix64(h ^ load_le(p, n)) + RDV_K2;
}

/* The (tenant, key) part, computed once per call. */
static uint64_t rdv_prefix(const char *tenant, const char *key)
{
	return rdv_absorb(rdv_absorb(RDV_SEED, tenant), key);
}

static uint64_t rdv_score(uint64_t prefix, uint64_t segment, uint64_t salt)
{
	uint64_t h = mcu_mix64(prefix ^ mcu_mix64(segment + RDV_K3));

	return mcu_mix64(h + mcu_mix64(salt ^ RDV_K4));
}

uint64_t mcrepl_rendezvous(const char *tenant, const char *key,
			   uint64_t segment, uint64_t salt)
{
	return rdv_score(rdv_prefix(tenant, key), segment, salt);
}

/* ---- exact 64x64 products ------------------------------------------------ */

typedef struct u128 {
	uint64_t hi, lo;
} u128;

static u128 mul64(uint64_t a, uint64_t b)
{
	uint64_t al = a & 0xffffffffu, ah = a >> 32;
	uint64_t bl = b & 0xffffffffu, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
	u128 r;

	r.lo = mid << 32 | (ll & 0xffffffffu);
	r.hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	return r;
}

/* Sign of a*b - c*d, computed exactly. */
static int cmp_products(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	u128 x = mul64(a, b), y = mul64(c, d);

	if (x.hi != y.hi)
		return x.hi < y.hi ? -1 : 1;
	if (x.lo != y.lo)
		return x.lo < y.lo ? -1 : 1;
	return 0;
}

/* ---- shared helpers ------------------------------------------------------ */

static void set_why(mcrepl_reason *why, mcrepl_reason r)
{
	if (why)
		*why = r;
}

static mcrepl_status reject(mcrepl_reason *why, mcrepl_reason r)
{
	set_why(why, r);
	return MCREPL_EREJECTED;
}

/* The domain placement is restricted to, or NULL for "any". */
static const char *domain_filter(const mcrepl_config *cfg,
				 const mcrepl_place_request *req)
{
	if (!cfg->domain_aware || !req->target_domain || !req->target_domain[0])
		return NULL;
	return req->target_domain;
}

static bool host_known(const char *host)
{
	return host && host[0];
}

/* ---- source -------------------------------------------------------------- */

typedef struct src_rank {
	unsigned cost; /* 0 = in the target domain */
	uint32_t inflight;
	uint64_t score;
} src_rank;

static bool src_better(const src_rank *a, const src_rank *b)
{
	if (a->cost != b->cost)
		return a->cost < b->cost;
	if (a->inflight != b->inflight)
		return a->inflight < b->inflight;
	return a->score > b->score;
}

mcrepl_status mcrepl_place_source(const mcrepl_config *cfg,
				  const mcrepl_place_request *req,
				  const mcrepl_replica_view *replicas,
				  size_t n_replicas, size_t *pick,
				  mcrepl_reason *why)
{
	const char *dom;
	uint64_t prefix;
	src_rank best = {0}, cur;
	bool readable = false, found = false;
	size_t i, best_i = 0;

	set_why(why, MCREPL_REASON_NONE);
	if (!cfg || !req || !pick || (n_replicas && !replicas))
		return MCREPL_EINVAL;
	dom = domain_filter(cfg, req);
	prefix = rdv_prefix(req->tenant, req->key);
	for (i = 0; i < n_replicas; i++) {
		const mcrepl_replica_view *r = &replicas[i];

		if (!r->readable || !r->memory)
			continue;
		readable = true;
		if (!r->can_copy)
			continue;
		/* Two-level cost: "in the target domain" is cost 0. */
		cur.cost = dom ? mcrepl_domain_cost(dom, r->domain) : 0;
		cur.inflight = r->inflight;
		cur.score = rdv_score(prefix, r->segment.v, 0);
		if (!found || src_better(&cur, &best)) {
			best = cur;
			best_i = i;
			found = true;
		}
	}
	if (!found)
		return reject(why, readable ? MCREPL_REASON_NO_CAPABLE_SOURCE
					    : MCREPL_REASON_NO_SOURCE);
	*pick = best_i;
	return MCREPL_OK;
}

/* ---- target -------------------------------------------------------------- */

static uint64_t watermark_ppb(double wm)
{
	if (!(wm > 0.0))
		return 0;
	if (wm >= 1.0)
		return PPB;
	return (uint64_t)(wm * (double)PPB + 0.5);
}

/* Room for size bytes, and at or under the watermark after the copy. */
static bool seg_has_room(const mcrepl_segment_view *s, uint64_t size,
			 uint64_t wm_ppb)
{
	if (!s->capacity || s->used > s->capacity ||
	    size > s->capacity - s->used)
		return false;
	return cmp_products(s->used + size, PPB, s->capacity, wm_ppb) <= 0;
}

static bool seg_holds_key(const mcrepl_segment_view *s,
			  const mcrepl_replica_view *replicas, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (replicas[i].segment.v == s->id.v)
			return true;
	return false;
}

static bool host_has_readable(const char *host,
			      const mcrepl_replica_view *replicas, size_t n)
{
	size_t i;

	if (!host_known(host))
		return false;
	for (i = 0; i < n; i++)
		if (replicas[i].readable && host_known(replicas[i].host) &&
		    strcmp(replicas[i].host, host) == 0)
			return true;
	return false;
}

typedef enum tgt_state {
	TGT_INVALID,
	TGT_OUT_OF_DOMAIN, /* valid but for the domain filter */
	TGT_VALID
} tgt_state;

static tgt_state target_state(const mcrepl_segment_view *s,
			      const mcrepl_place_request *req, const char *dom,
			      uint64_t wm_ppb,
			      const mcrepl_replica_view *replicas, size_t n)
{
	if (!s->id.v || !s->allocatable ||
	    !seg_has_room(s, req->size, wm_ppb) ||
	    seg_holds_key(s, replicas, n))
		return TGT_INVALID;
	if (dom && !mcrepl_domain_equal(dom, s->domain))
		return TGT_OUT_OF_DOMAIN;
	return TGT_VALID;
}

typedef struct tgt_rank {
	bool shared_host; /* a readable replica of the key is on its host */
	uint64_t read_load;
	uint64_t used_after, capacity;
	uint64_t score;
} tgt_rank;

static bool tgt_better(const tgt_rank *a, const tgt_rank *b, bool load_aware)
{
	int util;

	if (a->shared_host != b->shared_host)
		return !a->shared_host;
	if (load_aware && a->read_load != b->read_load)
		return a->read_load < b->read_load;
	util = cmp_products(a->used_after, b->capacity, b->used_after,
			    a->capacity);
	if (util)
		return util < 0;
	return a->score > b->score;
}

mcrepl_status
mcrepl_place_target(const mcrepl_config *cfg, const mcrepl_place_request *req,
		    const mcrepl_segment_view *segments, size_t n_segments,
		    const mcrepl_replica_view *replicas, size_t n_replicas,
		    size_t *pick, mcrepl_reason *why)
{
	const char *dom;
	uint64_t prefix, wm;
	tgt_rank best = {0}, cur;
	bool out_of_domain = false, found = false;
	size_t i, best_i = 0;

	set_why(why, MCREPL_REASON_NONE);
	if (!cfg || !req || !pick || (n_segments && !segments) ||
	    (n_replicas && !replicas))
		return MCREPL_EINVAL;
	dom = domain_filter(cfg, req);
	wm = watermark_ppb(cfg->target_high_watermark);
	prefix = rdv_prefix(req->tenant, req->key);
	for (i = 0; i < n_segments; i++) {
		const mcrepl_segment_view *s = &segments[i];
		tgt_state st =
		    target_state(s, req, dom, wm, replicas, n_replicas);

		out_of_domain |= st == TGT_OUT_OF_DOMAIN;
		if (st != TGT_VALID)
			continue;
		if (req->preferred_target.v &&
		    s->id.v == req->preferred_target.v) {
			*pick = i;
			return MCREPL_OK;
		}
		cur.shared_host =
		    host_has_readable(s->host, replicas, n_replicas);
		cur.read_load = s->read_load;
		cur.used_after = s->used + req->size;
		cur.capacity = s->capacity;
		cur.score = rdv_score(prefix, s->id.v, 0);
		if (!found ||
		    tgt_better(&cur, &best, cfg->read_load_aware_placement)) {
			best = cur;
			best_i = i;
			found = true;
		}
	}
	if (!found)
		return reject(why, out_of_domain
				       ? MCREPL_REASON_NO_TARGET_IN_DOMAIN
				       : MCREPL_REASON_NO_TARGET);
	*pick = best_i;
	return MCREPL_OK;
}

/* ---- reader order -------------------------------------------------------- */

/* Replicas whose tie-break scores are computed once, up front. */
#define ORDER_SCORED 256

typedef struct order_ctx {
	const mcrepl_replica_view *replicas;
	const uint64_t *load;
	uint64_t prefix, salt;
	const uint64_t *score; /* per replica, or NULL: compute on demand */
} order_ctx;

static uint64_t order_score(const order_ctx *c, size_t i)
{
	return c->score
		   ? c->score[i]
		   : rdv_score(c->prefix, c->replicas[i].segment.v, c->salt);
}

/* Strictly before; equal elements keep input order (the sort is stable). */
static bool read_before(const order_ctx *c, size_t a, size_t b)
{
	const mcrepl_replica_view *ra = &c->replicas[a], *rb = &c->replicas[b];

	if (ra->readable != rb->readable)
		return ra->readable;
	if (!ra->readable)
		return false;
	if (c->load && c->load[a] != c->load[b])
		return c->load[a] < c->load[b];
	return order_score(c, a) > order_score(c, b);
}

mcrepl_status mcrepl_order_replicas(const char *tenant, const char *key,
				    const mcrepl_replica_view *replicas,
				    const uint64_t *load, size_t n,
				    uint64_t salt, size_t *order_out)
{
	uint64_t score[ORDER_SCORED];
	order_ctx c;
	size_t i, j;

	if (!n)
		return MCREPL_OK;
	if (!replicas || !order_out)
		return MCREPL_EINVAL;
	c.replicas = replicas;
	c.load = load;
	c.prefix = rdv_prefix(tenant, key);
	c.salt = salt;
	c.score = NULL;
	if (n <= ORDER_SCORED) {
		for (i = 0; i < n; i++)
			score[i] =
			    rdv_score(c.prefix, replicas[i].segment.v, salt);
		c.score = score;
	}
	/* Insertion sort: n is the replica count of one key. */
	for (i = 0; i < n; i++) {
		for (j = i; j > 0 && read_before(&c, i, order_out[j - 1]); j--)
			order_out[j] = order_out[j - 1];
		order_out[j] = i;
	}
	return MCREPL_OK;
}

mcrepl_status mcrepl_pick_replica(const char *tenant, const char *key,
				  const mcrepl_replica_view *replicas,
				  const uint64_t *load, size_t n, uint64_t salt,
				  size_t *pick)
{
	order_ctx c = {.replicas = replicas,
		       .load = load,
		       .prefix = rdv_prefix(tenant, key),
		       .salt = salt};
	size_t best = 0;

	if (!n)
		return MCREPL_ENOENT;
	if (!replicas || !pick)
		return MCREPL_EINVAL;
	for (size_t i = 1; i < n; i++)
		if (read_before(&c, i, best))
			best = i;
	*pick = best;
	return MCREPL_OK;
}
