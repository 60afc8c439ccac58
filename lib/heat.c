/* Heat window: the bucketed sliding count, its embeddable cell and the
 * bounded, sharded table of cells (8-way sets, fingerprints apart). */
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "mcrepl/domain.h"
#include "internal.h"
#include "threshold.h"
#include "mcrepl/heat.h"

#define BUCKETS MCREPL_HEAT_BUCKETS
#define WAYS 8
#define LINE 64
#define MAX_SHARDS 256
#define HALF_EPOCHS 0x80000000u
#define HUGE_PAGE (2u << 20)
#define SEED_KEY 0x6d63726570686561ULL /* "mcrephea" */
/* mixed into the key's seed so a key never hashes with a tenant's seed */
#define SEED_KEYPART 0x6d637265706b6579ULL /* "mcrepkey" */

#if defined(__x86_64__) || defined(__i386__)
#define heat_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define heat_relax() __asm__ __volatile__("yield")
#else
#define heat_relax() ((void)0)
#endif

/* One lock and its statistics per cache line. */
struct heat_shard {
	atomic_uint lock;
	uint32_t max_probe;
	uint64_t replacements;
	unsigned char pad[LINE - 16];
};

struct mcrepl_heat {
	mcrepl_heat_params p;
	uint64_t bucket_inv; /* heat_inverse(p.bucket_ms) */
	uint64_t nsets;
	uint64_t max_entries;
	unsigned shard_shift; /* shard = set >> shard_shift */
	unsigned nshards;
	bool domain_aware;
	uint32_t *fps;		 /* WAYS per set, 0 = empty; 2 sets a line */
	mcrepl_heat_cell *cells; /* nsets * WAYS, parallel to fps */
	struct heat_shard *shards;
	void *mem; /* the block holding shards, fps and cells */
	uint64_t bytes;
	unsigned char pad0[LINE];
	atomic_uint_fast64_t entries; /* alone on its line: written by all */
	unsigned char pad1[LINE];
};

/* Where a key lives: its set, fingerprint and shard. */
struct heat_loc {
	uint64_t set;
	uint32_t fp;
	struct heat_shard *sh;
};

/* What one pass over a set found. */
struct heat_scan {
	int empty;	 /* first empty way, -1 if none */
	int victim;	 /* coldest live way, -1 if none */
	uint32_t vcount; /* its windowed count */
	unsigned live;	 /* live entries examined */
};

/* ---- the window algorithm (one cell) ---------------------------------- */

void mcrepl_heat_params_init(mcrepl_heat_params *p, const mcrepl_config *cfg)
{
	uint64_t w = cfg->heat_window_ms;
	uint64_t b = w / BUCKETS + (w % BUCKETS != 0);

	p->bucket_ms = b ? b : 1;
	/* no cluster view: the lower of the config's and cross-domain counts */
	p->threshold = mcr_threshold_trigger(cfg, NULL);
	p->refire_buckets = BUCKETS;
}

static inline uint32_t heat_epoch(const mcrepl_heat_params *p, uint64_t now)
{
	return (uint32_t)(now / (p->bucket_ms ? p->bucket_ms : 1));
}

/* ceil(2^64 / b), so the table divides by a multiply; 0 when b <= 1. */
static uint64_t heat_inverse(uint64_t b)
{
	return b > 1 ? UINT64_MAX / b + 1 : 0;
}

/* now / b: the multiply-high estimate is exact or one too large. */
static inline uint32_t heat_epoch_fast(uint64_t now, uint64_t b, uint64_t inv)
{
	uint64_t q;

	if (!inv)
		return (uint32_t)now;
	q = (uint64_t)(((__uint128_t)now * inv) >> 64);
	return (uint32_t)(q - (q * b > now));
}

/* Sum of the 8 buckets, two 64-bit words at a time. */
static inline uint32_t cell_sum(const mcrepl_heat_cell *c)
{
	const uint64_t lo16 = 0x0000ffff0000ffffULL;
	uint64_t a, b;

	memcpy(&a, &c->count[0], sizeof(a));
	memcpy(&b, &c->count[4], sizeof(b));
	a = (a & lo16) + ((a >> 16) & lo16) + (b & lo16) + ((b >> 16) & lo16);
	return (uint32_t)(a + (a >> 32));
}

/* The unit doubles back while every bucket fits twice over (hysteresis:
 * it halved at 65,536 units, it doubles back under 16,384). */
static void cell_unscale(mcrepl_heat_cell *c)
{
	while (c->scale) {
		uint16_t mx = 0;
		uint32_t unit;

		for (unsigned i = 0; i < BUCKETS; i++)
			mx = c->count[i] > mx ? c->count[i] : mx;
		if (mx >= 1u << 14)
			return;
		for (unsigned i = 0; i < BUCKETS; i++)
			c->count[i] = (uint16_t)(c->count[i] << 1);
		c->scale--;
		unit = 1u << c->scale;
		c->count[c->head % BUCKETS] += (uint16_t)(c->rest / unit);
		c->rest = (uint16_t)(c->rest % unit);
	}
}

/* Move the newest bucket forward to epoch e (0 < e - head < 2^31). */
static inline void cell_advance(mcrepl_heat_cell *c, uint32_t e)
{
	uint32_t d = e - c->head;

	if (d >= BUCKETS) {
		memset(c->count, 0, sizeof(c->count));
		c->scale = 0;
		c->rest = 0;
	} else {
		for (uint32_t i = 1; i <= d; i++)
			c->count[(c->head + i) % BUCKETS] = 0;
	}
	c->head = e;
	/* Keep fired within one window of head, so it never wraps. */
	if (c->fired) {
		uint32_t age = c->fired - 1u + d;

		c->fired = age >= BUCKETS ? 0 : (uint8_t)(age + 1);
	}
	if (c->scale) /* rest carries into the new bucket */
		cell_unscale(c);
}

/* Bring the cell to epoch e; an older e keeps the newest bucket. */
static inline void cell_move(mcrepl_heat_cell *c, uint32_t e)
{
	uint32_t d = e - c->head;

	if (d == 0)
		return;
	if (d < HALF_EPOCHS) {
		cell_advance(c, e);
	} else if (cell_sum(c) == 0 && c->rest == 0) {
		c->head = e; /* an empty cell has no past to keep */
		c->fired = 0;
		c->scale = 0;
	}
}

static inline uint32_t cell_total(const mcrepl_heat_cell *c, uint32_t units)
{
	return (uint32_t)(((uint64_t)units << c->scale) + c->rest);
}

/* One read into a scaled or full cell: the rare path of cell_record. */
static uint32_t cell_add_slow(mcrepl_heat_cell *c, uint16_t *slot)
{
	uint32_t unit = 1u << c->scale;

	if (c->rest + 1u < unit) {
		c->rest++;
	} else if (*slot < UINT16_MAX) {
		c->rest = 0;
		(*slot)++;
	} else if (c->scale < MCREPL_HEAT_MAX_SCALE) {
		/* halve every bucket (the others rounded half up), the newest
		 * keeping its odd unit as reads in rest */
		uint32_t r = c->rest + 1u + ((*slot & 1u) << c->scale);

		for (unsigned i = 0; i < BUCKETS; i++)
			if (&c->count[i] != slot)
				c->count[i] =
				    (uint16_t)((c->count[i] + 1u) >> 1);
		*slot >>= 1;
		c->scale++;
		unit <<= 1;
		if (r >= unit) {
			r -= unit;
			(*slot)++;
		}
		c->rest = (uint16_t)r;
	} /* else: 2^32 reads a window, no longer counted */
	return cell_total(c, cell_sum(c));
}

static inline mcrepl_heat_event cell_record(mcrepl_heat_cell *c, uint32_t e,
					    uint32_t threshold, uint32_t refire,
					    uint32_t *count_out)
{
	uint16_t *slot;
	uint32_t n;

	cell_move(c, e);
	slot = &c->count[c->head % BUCKETS];
	/* Sum before the increment: reading the 64-bit words right after a
	 * 16-bit store into one of them stalls store-to-load forwarding
	 * (about 7 ns of a read that costs 100). */
	n = cell_sum(c);
	if (__builtin_expect(!c->scale && *slot < UINT16_MAX, 1)) {
		(*slot)++;
		n++;
	} else {
		n = cell_add_slow(c, slot);
	}
	if (count_out)
		*count_out = n;
	if (n < threshold)
		return MCREPL_HEAT_COLD;
	/* advance() forgets a firing a window old: refire >= BUCKETS is
	 * once per window */
	if (c->fired && c->fired - 1u < refire)
		return MCREPL_HEAT_HOT;
	c->fired = 1;
	return MCREPL_HEAT_CROSSED;
}

static inline uint32_t cell_count(const mcrepl_heat_cell *c, uint32_t e)
{
	uint32_t d = e - c->head;
	uint32_t n = 0;

	if (d >= HALF_EPOCHS) /* now is before the newest bucket */
		return cell_total(c, cell_sum(c));
	if (d >= BUCKETS)
		return 0;
	for (uint32_t i = d; i < BUCKETS; i++)
		n += c->count[(c->head - (i - d)) % BUCKETS];
	return cell_total(c, n);
}

/* The bucket of epoch e - 1, with rest when that is the newest one. */
static inline uint32_t cell_recent(const mcrepl_heat_cell *c, uint32_t e)
{
	uint32_t d = e - c->head;

	if (d >= HALF_EPOCHS || d == 0) /* the newest bucket is still open */
		return (uint32_t)c->count[(c->head - 1u) % BUCKETS] << c->scale;
	if (d == 1)
		return cell_total(c, c->count[c->head % BUCKETS]);
	return 0;
}

/* Most reads land in the cell's newest bucket: see that with a multiply
 * instead of a divide (head * b cannot overflow while b <= 2^32). */
static inline uint32_t cell_epoch(const mcrepl_heat_cell *c,
				  const mcrepl_heat_params *p, uint64_t now)
{
	uint64_t b = p->bucket_ms;

	if (b - 1 < UINT32_MAX && now - (uint64_t)c->head * b < b)
		return c->head;
	return heat_epoch(p, now);
}

mcrepl_heat_event mcrepl_heat_cell_record(mcrepl_heat_cell *cell,
					  const mcrepl_heat_params *p,
					  uint64_t now_ms, uint32_t *count_out)
{
	return cell_record(cell, cell_epoch(cell, p, now_ms), p->threshold,
			   p->refire_buckets ? p->refire_buckets : BUCKETS,
			   count_out);
}

uint32_t mcrepl_heat_cell_count(const mcrepl_heat_cell *cell,
				const mcrepl_heat_params *p, uint64_t now_ms)
{
	return cell_count(cell, cell_epoch(cell, p, now_ms));
}

uint32_t mcrepl_heat_cell_recent(const mcrepl_heat_cell *cell,
				 const mcrepl_heat_params *p, uint64_t now_ms)
{
	return cell_recent(cell, cell_epoch(cell, p, now_ms));
}

/* ---- table: creation -------------------------------------------------- */

#ifdef MADV_HUGEPAGE
/* Random probes into a large table miss the TLB; ask for huge pages. */
static void heat_advise(void *mem, size_t size)
{
	uintptr_t lo =
	    ((uintptr_t)mem + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
	uintptr_t hi = ((uintptr_t)mem + size) & ~(uintptr_t)(HUGE_PAGE - 1);

	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}
#else
static void heat_advise(void *mem, size_t size)
{
	(void)mem;
	(void)size;
}
#endif

/* Smallest shift >= 1 leaving at most MAX_SHARDS shards: shards guard
 * contiguous runs of a power-of-two number of sets, paired sets share one. */
static unsigned heat_shard_shift(uint64_t nsets)
{
	unsigned shift = 1;

	while (((nsets - 1) >> shift) + 1 > MAX_SHARDS)
		shift++;
	return shift;
}

static void *heat_align(void *p)
{
	return (void *)(((uintptr_t)p + LINE - 1) & ~(uintptr_t)(LINE - 1));
}

/* One block: [pad to a line][shards][fps][cells]. The fingerprints of a
 * pair of sets fill one line and a set's cells start on a line (3 lines). */
static mcrepl_status heat_alloc_arrays(mcrepl_heat *h)
{
	uint64_t per_set = WAYS * (sizeof(uint32_t) + sizeof(mcrepl_heat_cell));
	uint64_t head = (uint64_t)h->nshards * sizeof(struct heat_shard) + LINE;
	uint64_t nfps = (h->nsets + 1) / 2 * 2 * WAYS;
	size_t size;

	if (h->nsets >= (SIZE_MAX - head) / per_set)
		return MCREPL_ENOMEM;
	size = (size_t)(head + (h->nsets + 1) * per_set);
	h->mem = calloc(1, size);
	if (!h->mem)
		return MCREPL_ENOMEM;
	heat_advise(h->mem, size);
	h->shards = heat_align(h->mem);
	h->fps = (uint32_t *)(h->shards + h->nshards);
	h->cells = (mcrepl_heat_cell *)(h->fps + nfps);
	h->bytes = sizeof(*h) + size;
	return MCREPL_OK;
}

mcrepl_status mcrepl_heat_create(const mcrepl_config *cfg, mcrepl_heat **out)
{
	mcrepl_heat *h;
	uint64_t max;

	if (!out || !cfg || mcrepl_config_validate(cfg, NULL) != MCREPL_OK ||
	    cfg->heat_max_entries == 0)
		return MCREPL_EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return MCREPL_ENOMEM;
	max = cfg->heat_max_entries;
	mcrepl_heat_params_init(&h->p, cfg);
	h->bucket_inv = heat_inverse(h->p.bucket_ms);
	h->max_entries = max;
	h->nsets = (max + max / 4 + (max % 4 != 0) + WAYS - 1) / WAYS;
	h->shard_shift = heat_shard_shift(h->nsets);
	h->nshards = (unsigned)(((h->nsets - 1) >> h->shard_shift) + 1);
	h->domain_aware = cfg->domain_aware;
	if (heat_alloc_arrays(h) != MCREPL_OK) {
		free(h);
		return MCREPL_ENOMEM;
	}
	atomic_init(&h->entries, 0);
	*out = h;
	return MCREPL_OK;
}

void mcrepl_heat_destroy(mcrepl_heat *h)
{
	if (!h)
		return;
	free(h->mem);
	free(h);
}

/* ---- table: locking and lookup ---------------------------------------- */

static void heat_lock(struct heat_shard *sh)
{
	unsigned spins = 0;

	while (atomic_exchange_explicit(&sh->lock, 1, memory_order_acquire)) {
		while (atomic_load_explicit(&sh->lock, memory_order_relaxed)) {
			if (++spins % 128 == 0)
				sched_yield();
			else
				heat_relax();
		}
	}
}

static void heat_unlock(struct heat_shard *sh)
{
	atomic_store_explicit(&sh->lock, 0, memory_order_release);
}

/* tenant, key[, domain]: each string chained into the seed of the next. */
static uint64_t heat_hash(const mcrepl_heat *h, const char *tenant,
			  const char *key, const char *domain)
{
	uint64_t x = SEED_KEY;

	if (tenant && tenant[0])
		x = mcu_hash_str(tenant, x);
	x = mcu_hash_str(key, x ^ SEED_KEYPART);
	if (h->domain_aware)
		x = mcu_hash_str(
		    domain && domain[0] ? domain : MCREPL_DEFAULT_DOMAIN, x);
	return x;
}

/* Set by multiply-shift range reduction of the whole hash; the low 32 bits
 * become the fingerprint. The set's lines are fetched before the lock. */
static void heat_locate(const mcrepl_heat *h, const char *tenant,
			const char *key, const char *domain, struct heat_loc *l)
{
	uint64_t x = heat_hash(h, tenant, key, domain);
	const mcrepl_heat_cell *c;

	l->set = (uint64_t)(((__uint128_t)x * h->nsets) >> 64);
	l->fp = (uint32_t)x ? (uint32_t)x : 1;
	l->sh = &h->shards[l->set >> h->shard_shift];
	c = &h->cells[l->set * WAYS];
	__builtin_prefetch(&h->fps[l->set * WAYS], 1);
	__builtin_prefetch((const char *)c, 1);
	__builtin_prefetch((const char *)c + LINE, 1);
	__builtin_prefetch((const char *)c + 2 * LINE, 1);
}

#ifdef __SSE2__
/* Index of the way holding fp, or -1: 8 fingerprints in two compares. */
static inline int heat_find(const mcrepl_heat *h, const struct heat_loc *l)
{
	const __m128i *fps = (const __m128i *)&h->fps[l->set * WAYS];
	__m128i want = _mm_set1_epi32((int)l->fp);
	__m128i lo = _mm_cmpeq_epi32(_mm_load_si128(fps), want);
	__m128i hi = _mm_cmpeq_epi32(_mm_load_si128(fps + 1), want);
	unsigned m = (unsigned)_mm_movemask_ps(_mm_castsi128_ps(lo)) |
		     (unsigned)_mm_movemask_ps(_mm_castsi128_ps(hi)) << 4;

	return m ? __builtin_ctz(m) : -1;
}
#else
static inline int heat_find(const mcrepl_heat *h, const struct heat_loc *l)
{
	const uint32_t *fps = &h->fps[l->set * WAYS];
	unsigned m = 0;

	for (unsigned i = 0; i < WAYS; i++)
		m |= (unsigned)(fps[i] == l->fp) << i;
	return m ? __builtin_ctz(m) : -1;
}
#endif

static void heat_note_probe(struct heat_shard *sh, unsigned probe)
{
	if (probe > sh->max_probe)
		sh->max_probe = probe;
}

/* ---- table: insertion and replacement --------------------------------- */

static bool heat_take_entry(mcrepl_heat *h)
{
	uint_fast64_t n =
	    atomic_load_explicit(&h->entries, memory_order_relaxed);

	do {
		if (n >= h->max_entries)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(&h->entries, &n, n + 1,
							memory_order_relaxed,
							memory_order_relaxed));
	return true;
}

static void heat_clear_way(mcrepl_heat *h, uint64_t set, int way)
{
	h->fps[set * WAYS + (unsigned)way] = 0;
	memset(&h->cells[set * WAYS + (unsigned)way], 0,
	       sizeof(mcrepl_heat_cell));
}

static int heat_claim(mcrepl_heat *h, uint64_t set, int way, uint32_t fp)
{
	heat_clear_way(h, set, way);
	h->fps[set * WAYS + (unsigned)way] = fp;
	return way;
}

/* Is way i colder than the current victim (ties: least recently read)? */
static bool heat_colder(const mcrepl_heat_cell *c, uint32_t n,
			const struct heat_scan *sc, const mcrepl_heat_cell *set)
{
	if (sc->victim < 0 || n < sc->vcount)
		return true;
	return n == sc->vcount && (int32_t)(c->head - set[sc->victim].head) < 0;
}

/* One pass over a set: frees entries gone cold, finds an empty way and the
 * coldest live one. At most WAYS entries are examined. */
static void heat_scan_set(mcrepl_heat *h, uint64_t set, uint32_t e,
			  struct heat_scan *sc)
{
	const mcrepl_heat_cell *cells = &h->cells[set * WAYS];
	uint32_t n;

	*sc = (struct heat_scan){.empty = -1, .victim = -1};
	for (int i = 0; i < WAYS; i++) {
		if (h->fps[set * WAYS + (unsigned)i] != 0) {
			sc->live++;
			n = cell_count(&cells[i], e);
			if (n > 0 && heat_colder(&cells[i], n, sc, cells)) {
				sc->victim = i;
				sc->vcount = n;
			}
			if (n > 0)
				continue;
			heat_clear_way(h, set, i);
			atomic_fetch_sub_explicit(&h->entries, 1,
						  memory_order_relaxed);
		}
		if (sc->empty < 0)
			sc->empty = i;
	}
}

/* The table is at its limit and the key's own set holds nothing to
 * replace: evict the coldest entry of the paired set (same shard). */
static int heat_insert_pair(mcrepl_heat *h, const struct heat_loc *l,
			    uint32_t e, int empty)
{
	uint64_t pair = l->set ^ 1;
	struct heat_scan sc;

	if (pair >= h->nsets)
		return -1;
	heat_scan_set(h, pair, e, &sc);
	heat_note_probe(l->sh, sc.live);
	if (!heat_take_entry(h)) {
		if (sc.victim < 0)
			return -1;
		heat_clear_way(h, pair, sc.victim);
		l->sh->replacements++;
	}
	return heat_claim(h, l->set, empty, l->fp);
}

static int heat_insert(mcrepl_heat *h, const struct heat_loc *l, uint32_t e)
{
	struct heat_scan sc;

	heat_scan_set(h, l->set, e, &sc);
	heat_note_probe(l->sh, sc.live);
	if (sc.empty >= 0 && heat_take_entry(h))
		return heat_claim(h, l->set, sc.empty, l->fp);
	if (sc.victim >= 0) {
		l->sh->replacements++;
		return heat_claim(h, l->set, sc.victim, l->fp);
	}
	if (sc.live == 0)
		return heat_insert_pair(h, l, e, sc.empty);
	return -1; /* another thread took the entries this set just freed */
}

/* ---- table: the calls ----------------------------------------------- */

mcrepl_heat_event mcrepl_heat_record(mcrepl_heat *h, const char *tenant,
				     const char *key, const char *domain,
				     uint64_t now_ms, uint32_t *count_out)
{
	uint32_t e = heat_epoch_fast(now_ms, h->p.bucket_ms, h->bucket_inv);
	mcrepl_heat_event ev = MCREPL_HEAT_COLD;
	struct heat_loc l;
	int way;

	heat_locate(h, tenant, key, domain, &l);
	heat_lock(l.sh);
	way = heat_find(h, &l);
	if (way >= 0)
		heat_note_probe(l.sh, (unsigned)way + 1);
	else
		way = heat_insert(h, &l, e);
	if (way >= 0)
		ev = cell_record(&h->cells[l.set * WAYS + (unsigned)way], e,
				 h->p.threshold, BUCKETS, count_out);
	else if (count_out)
		*count_out = 0;
	heat_unlock(l.sh);
	return ev;
}

uint32_t mcrepl_heat_count(mcrepl_heat *h, const char *tenant, const char *key,
			   const char *domain, uint64_t now_ms)
{
	struct heat_loc l;
	uint32_t n = 0;
	int way;

	heat_locate(h, tenant, key, domain, &l);
	heat_lock(l.sh);
	way = heat_find(h, &l);
	if (way >= 0)
		n = cell_count(&h->cells[l.set * WAYS + (unsigned)way],
			       heat_epoch(&h->p, now_ms));
	heat_unlock(l.sh);
	return n;
}

void mcrepl_heat_get_stats(mcrepl_heat *h, mcrepl_heat_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < h->nshards; i++) {
		heat_lock(&h->shards[i]);
		out->replacements += h->shards[i].replacements;
		if (h->shards[i].max_probe > out->max_probe)
			out->max_probe = h->shards[i].max_probe;
		heat_unlock(&h->shards[i]);
	}
	out->entries = atomic_load_explicit(&h->entries, memory_order_relaxed);
	out->capacity = h->nsets * WAYS;
	out->max_entries = h->max_entries;
	out->bytes = h->bytes;
}
