/* Segment offset allocator: TLSF over external range nodes. See alloc.h. */
#include "alloc.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define SL_LOG2 5u
#define SL_COUNT (1u << SL_LOG2)
#define FL_COUNT (64u - SL_LOG2 + 1u)
#define HASH_MIN_BITS 6u
#define HASH_MUL UINT64_C(0x9e3779b97f4a7c15)

/* One range of the segment, free or allocated. Ranges tile the segment and
 * are linked in address order; the link union is the free list of the
 * range's size class when free, the hash chain when allocated. */
struct range {
	uint64_t off;
	uint64_t len;
	struct range *addr_prev;
	struct range *addr_next;
	union {
		struct {
			struct range *prev;
			struct range *next;
		} free;
		struct range *hash_next;
	} link;
	bool is_free;
};

struct seg_alloc {
	struct seg_alloc_mem mem;
	uint64_t capacity;
	uint64_t align;
	unsigned int shift; /* log2(align) */
	uint64_t used;
	size_t live;
	size_t nfree;
	struct range *first; /* offset 0; never merged away */
	struct range *hint;  /* where seg_alloc_alloc_at last looked */
	struct range *spare; /* one node kept so a split cannot fail */
	struct range **buckets;
	unsigned int bucket_bits;
	uint64_t fl_map;
	uint32_t sl_map[FL_COUNT];
	struct range *heads[FL_COUNT][SL_COUNT];
};

static void *default_alloc(void *ctx, size_t size)
{
	(void)ctx;
	return malloc(size);
}

static void default_free(void *ctx, void *ptr)
{
	(void)ctx;
	free(ptr);
}

static const struct seg_alloc_mem default_mem = {
    .alloc = default_alloc,
    .free = default_free,
    .ctx = NULL,
};

static unsigned int msb64(uint64_t x)
{
	return 63u - (unsigned int)__builtin_clzll(x);
}

static unsigned int lsb64(uint64_t x)
{
	return (unsigned int)__builtin_ctzll(x);
}

static void *mem_alloc(const struct seg_alloc_mem *mem, size_t size)
{
	return mem->alloc(mem->ctx, size);
}

static void mem_free(const struct seg_alloc_mem *mem, void *ptr)
{
	mem->free(mem->ctx, ptr);
}

/* ---- size classes -------------------------------------------------------- */

/* Class of a length in granules: below SL_COUNT one class per size, above
 * it the top bit picks fl and the next SL_LOG2 bits pick sl. */
static void size_class(uint64_t g, unsigned int *fl, unsigned int *sl)
{
	unsigned int top;

	if (g < SL_COUNT) {
		*fl = 0;
		*sl = (unsigned int)g;
		return;
	}
	top = msb64(g);
	*fl = top - SL_LOG2 + 1u;
	*sl = (unsigned int)(g >> (top - SL_LOG2)) & (SL_COUNT - 1u);
}

static uint64_t class_min(unsigned int fl, unsigned int sl)
{
	if (fl == 0)
		return sl;
	return (uint64_t)(SL_COUNT + sl) << (fl - 1u);
}

static void range_class(const struct seg_alloc *a, const struct range *r,
			unsigned int *fl, unsigned int *sl)
{
	size_class(r->len >> a->shift, fl, sl);
}

static void free_list_insert(struct seg_alloc *a, struct range *r)
{
	unsigned int fl, sl;

	range_class(a, r, &fl, &sl);
	r->is_free = true;
	r->link.free.prev = NULL;
	r->link.free.next = a->heads[fl][sl];
	if (r->link.free.next)
		r->link.free.next->link.free.prev = r;
	a->heads[fl][sl] = r;
	a->sl_map[fl] |= 1u << sl;
	a->fl_map |= UINT64_C(1) << fl;
	a->nfree++;
}

static void free_list_remove(struct seg_alloc *a, struct range *r)
{
	unsigned int fl, sl;

	range_class(a, r, &fl, &sl);
	if (r->link.free.prev)
		r->link.free.prev->link.free.next = r->link.free.next;
	else
		a->heads[fl][sl] = r->link.free.next;
	if (r->link.free.next)
		r->link.free.next->link.free.prev = r->link.free.prev;
	if (!a->heads[fl][sl]) {
		a->sl_map[fl] &= ~(1u << sl);
		if (!a->sl_map[fl])
			a->fl_map &= ~(UINT64_C(1) << fl);
	}
	r->is_free = false;
	a->nfree--;
}

/* Head of the first non-empty class at or above (fl, sl); sl may be
 * SL_COUNT, meaning the start of fl + 1. */
static struct range *first_from(const struct seg_alloc *a, unsigned int fl,
				unsigned int sl)
{
	uint32_t sl_bits = sl < SL_COUNT ? a->sl_map[fl] & (~0u << sl) : 0;
	uint64_t fl_bits;

	if (!sl_bits) {
		fl_bits = a->fl_map & (~UINT64_C(0) << (fl + 1u));
		if (!fl_bits)
			return NULL;
		fl = lsb64(fl_bits);
		sl_bits = a->sl_map[fl];
	}
	return a->heads[fl][lsb64(sl_bits)];
}

static struct range *scan_class(const struct seg_alloc *a, unsigned int fl,
				unsigned int sl, uint64_t len)
{
	struct range *r;

	for (r = a->heads[fl][sl]; r; r = r->link.free.next)
		if (r->len >= len)
			return r;
	return NULL;
}

/* Any range in a class above len's own fits; len's own class holds ranges
 * from class_min up, so it is scanned only when nothing above exists. */
static struct range *find_fit(const struct seg_alloc *a, uint64_t len)
{
	uint64_t g = len >> a->shift;
	unsigned int fl, sl, start;
	struct range *r;

	size_class(g, &fl, &sl);
	start = g == class_min(fl, sl) ? sl : sl + 1u;
	r = first_from(a, fl, start);
	if (!r && start != sl)
		r = scan_class(a, fl, sl, len);
	return r;
}

/* ---- live hash map ------------------------------------------------------- */

static size_t hash_slot(uint64_t off, unsigned int shift, unsigned int bits)
{
	return (size_t)(((off >> shift) * HASH_MUL) >> (64u - bits));
}

static void hash_insert(struct seg_alloc *a, struct range *r)
{
	size_t i = hash_slot(r->off, a->shift, a->bucket_bits);

	r->link.hash_next = a->buckets[i];
	a->buckets[i] = r;
	a->live++;
}

static struct range *hash_remove(struct seg_alloc *a, uint64_t off)
{
	struct range **p =
	    &a->buckets[hash_slot(off, a->shift, a->bucket_bits)];
	struct range *r;

	for (; *p; p = &(*p)->link.hash_next) {
		if ((*p)->off != off)
			continue;
		r = *p;
		*p = r->link.hash_next;
		a->live--;
		return r;
	}
	return NULL;
}

static struct range **buckets_new(const struct seg_alloc_mem *mem,
				  unsigned int bits)
{
	size_t n = (size_t)1 << bits;
	struct range **b;

	if (n > SIZE_MAX / sizeof(*b))
		return NULL;
	b = mem_alloc(mem, n * sizeof(*b));
	if (b)
		memset(b, 0, n * sizeof(*b));
	return b;
}

/* Double the bucket array; on failure the old one stays in use. */
static int hash_grow(struct seg_alloc *a)
{
	unsigned int bits = a->bucket_bits + 1u;
	struct range **nb, *r;
	size_t i, n = (size_t)1 << a->bucket_bits;

	if (bits >= sizeof(size_t) * CHAR_BIT)
		return -ENOMEM;
	nb = buckets_new(&a->mem, bits);
	if (!nb)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		while ((r = a->buckets[i])) {
			size_t j = hash_slot(r->off, a->shift, bits);

			a->buckets[i] = r->link.hash_next;
			r->link.hash_next = nb[j];
			nb[j] = r;
		}
	}
	mem_free(&a->mem, a->buckets);
	a->buckets = nb;
	a->bucket_bits = bits;
	return 0;
}

/* ---- nodes ------------------------------------------------------------- */

static void node_release(struct seg_alloc *a, struct range *r)
{
	if (a->hint == r)
		a->hint = NULL;
	if (!a->spare)
		a->spare = r;
	else
		mem_free(&a->mem, r);
}

/* Get every resource the commit step may need, so it cannot fail. */
static int reserve(struct seg_alloc *a, bool need_node)
{
	if (need_node && !a->spare) {
		a->spare = mem_alloc(&a->mem, sizeof(*a->spare));
		if (!a->spare)
			return -ENOMEM;
	}
	if (a->live >= (size_t)1 << a->bucket_bits)
		return hash_grow(a);
	return 0;
}

/* Split the tail of r beyond len into the spare node, which becomes free. */
static void split(struct seg_alloc *a, struct range *r, uint64_t len)
{
	struct range *n = a->spare;

	a->spare = NULL;
	n->off = r->off + len;
	n->len = r->len - len;
	n->addr_prev = r;
	n->addr_next = r->addr_next;
	if (n->addr_next)
		n->addr_next->addr_prev = n;
	r->addr_next = n;
	r->len = len;
	free_list_insert(a, n);
}

/* Right-hand neighbour `right` is folded into `left` and released. */
static void absorb(struct seg_alloc *a, struct range *left, struct range *right)
{
	left->len += right->len;
	left->addr_next = right->addr_next;
	if (left->addr_next)
		left->addr_next->addr_prev = left;
	node_release(a, right);
}

/* ---- public API ---------------------------------------------------------- */

static int check_create_args(uint64_t capacity, uint64_t *align,
			     struct seg_alloc **out)
{
	if (!out)
		return -EINVAL;
	if (*align == 0)
		*align = SEG_ALLOC_DEFAULT_ALIGN;
	if (*align & (*align - 1u))
		return -EINVAL;
	if (capacity < *align)
		return -EINVAL;
	return 0;
}

static void init_fields(struct seg_alloc *a, uint64_t capacity, uint64_t align,
			const struct seg_alloc_mem *mem)
{
	memset(a, 0, sizeof(*a));
	a->mem = *mem;
	a->align = align;
	a->shift = lsb64(align);
	a->capacity = capacity & ~(align - 1u);
	a->bucket_bits = HASH_MIN_BITS;
}

int seg_alloc_create_with(uint64_t capacity, uint64_t align,
			  const struct seg_alloc_mem *mem,
			  struct seg_alloc **out)
{
	struct seg_alloc *a;
	struct range *r;
	int err = check_create_args(capacity, &align, out);

	if (err)
		return err;
	if (!mem)
		mem = &default_mem;
	if (!mem->alloc || !mem->free)
		return -EINVAL;
	a = mem_alloc(mem, sizeof(*a));
	if (!a)
		return -ENOMEM;
	init_fields(a, capacity, align, mem);
	a->buckets = buckets_new(mem, a->bucket_bits);
	if (!a->buckets)
		goto out_free_a;
	r = mem_alloc(mem, sizeof(*r));
	if (!r)
		goto out_free_buckets;
	memset(r, 0, sizeof(*r));
	r->len = a->capacity;
	a->first = r;
	free_list_insert(a, r);
	*out = a;
	return 0;

out_free_buckets:
	mem_free(mem, a->buckets);
out_free_a:
	mem_free(mem, a);
	return -ENOMEM;
}

int seg_alloc_create(uint64_t capacity, uint64_t align, struct seg_alloc **out)
{
	return seg_alloc_create_with(capacity, align, NULL, out);
}

void seg_alloc_destroy(struct seg_alloc *a)
{
	struct seg_alloc_mem mem;
	struct range *r, *next;

	if (!a)
		return;
	mem = a->mem;
	for (r = a->first; r; r = next) {
		next = r->addr_next;
		mem_free(&mem, r);
	}
	mem_free(&mem, a->spare);
	mem_free(&mem, a->buckets);
	mem_free(&mem, a);
}

int seg_alloc_alloc(struct seg_alloc *a, uint64_t size, uint64_t *offset_out)
{
	uint64_t len;
	struct range *r;
	int err;

	if (!a || !offset_out || size == 0 ||
	    size > UINT64_MAX - (a->align - 1u))
		return -EINVAL;
	len = (size + a->align - 1u) & ~(a->align - 1u);
	r = find_fit(a, len);
	if (!r)
		return -ENOSPC;
	err = reserve(a, r->len > len);
	if (err)
		return err;
	free_list_remove(a, r);
	if (r->len > len)
		split(a, r, len);
	hash_insert(a, r);
	a->used += len;
	*offset_out = r->off;
	return 0;
}

/* Carve [off, off + len) out of free range r (which holds it): the parts
 * before and after stay free, in the two nodes given. */
static void carve(struct seg_alloc *a, struct range *r, uint64_t off,
		  uint64_t len, struct range *n1, struct range *n2)
{
	free_list_remove(a, r);
	if (r->off < off) { /* r keeps the head; n1 becomes the middle */
		*n1 = (struct range){.off = off,
				     .len = r->off + r->len - off,
				     .addr_prev = r,
				     .addr_next = r->addr_next};
		if (n1->addr_next)
			n1->addr_next->addr_prev = n1;
		r->addr_next = n1;
		r->len = off - r->off;
		free_list_insert(a, r);
		r = n1;
	} else {
		mem_free(&a->mem, n1);
	}
	if (r->len > len) {
		a->spare = n2;
		split(a, r, len);
	} else {
		mem_free(&a->mem, n2);
	}
	hash_insert(a, r);
	a->used += len;
	a->hint = r;
}

int seg_alloc_alloc_at(struct seg_alloc *a, uint64_t offset, uint64_t size)
{
	struct range *r, *n1, *n2, *spare;
	uint64_t len;
	int err;

	if (!a || size == 0 || size > UINT64_MAX - (a->align - 1u) ||
	    (offset & (a->align - 1u)))
		return -EINVAL;
	len = (size + a->align - 1u) & ~(a->align - 1u);
	if (offset > a->capacity || len > a->capacity - offset)
		return -ENOSPC;
	r = a->hint && a->hint->off <= offset ? a->hint : a->first;
	while (r && r->off + r->len <= offset)
		r = r->addr_next;
	if (!r || !r->is_free || r->off + r->len < offset + len)
		return -ENOSPC;
	err = reserve(a, false);
	if (err)
		return err;
	n1 = mem_alloc(&a->mem, sizeof(*n1));
	n2 = mem_alloc(&a->mem, sizeof(*n2));
	if (!n1 || !n2) {
		mem_free(&a->mem, n1);
		mem_free(&a->mem, n2);
		return -ENOMEM;
	}
	spare = a->spare; /* split() takes a->spare: lend it n2 */
	carve(a, r, offset, len, n1, n2);
	if (spare && a->spare != spare) {
		if (a->spare)
			mem_free(&a->mem, a->spare);
		a->spare = spare;
	}
	return 0;
}

int seg_alloc_free(struct seg_alloc *a, uint64_t offset)
{
	struct range *r, *prev, *next;

	if (!a)
		return -EINVAL;
	r = hash_remove(a, offset);
	if (!r)
		return -ENOENT;
	a->used -= r->len;
	prev = r->addr_prev;
	if (prev && prev->is_free) {
		free_list_remove(a, prev);
		absorb(a, prev, r);
		r = prev;
	}
	next = r->addr_next;
	if (next && next->is_free) {
		free_list_remove(a, next);
		absorb(a, r, next);
	}
	free_list_insert(a, r);
	return 0;
}

uint64_t seg_alloc_used(const struct seg_alloc *a)
{
	return a->used;
}

uint64_t seg_alloc_capacity(const struct seg_alloc *a)
{
	return a->capacity;
}

size_t seg_alloc_live(const struct seg_alloc *a)
{
	return a->live;
}

size_t seg_alloc_free_ranges(const struct seg_alloc *a)
{
	return a->nfree;
}

uint64_t seg_alloc_largest_free(const struct seg_alloc *a)
{
	const struct range *r;
	unsigned int fl;
	uint64_t best = 0;

	if (!a->fl_map)
		return 0;
	fl = msb64(a->fl_map);
	r = a->heads[fl][msb64(a->sl_map[fl])];
	for (; r; r = r->link.free.next)
		if (r->len > best)
			best = r->len;
	return best;
}

/* ---- consistency check --------------------------------------------------- */

/* Address walk: ranges tile [0, capacity), free ones never touch, live
 * bytes and both counts match. */
static bool tiling_ok(const struct seg_alloc *a)
{
	const struct range *r, *prev = NULL;
	uint64_t pos = 0, used = 0;
	size_t nfree = 0, live = 0;

	for (r = a->first; r; prev = r, r = r->addr_next) {
		if (r->addr_prev != prev || r->off != pos || r->len == 0 ||
		    (r->len & (a->align - 1u)) || r->len > a->capacity - pos)
			return false;
		if (r->is_free && prev && prev->is_free)
			return false;
		pos += r->len;
		nfree += r->is_free;
		live += !r->is_free;
		used += r->is_free ? 0 : r->len;
	}
	return pos == a->capacity && used == a->used && nfree == a->nfree &&
	       live == a->live;
}

static bool class_list_ok(const struct seg_alloc *a, unsigned int fl,
			  unsigned int sl, size_t *count)
{
	const struct range *r, *prev = NULL;
	unsigned int rfl, rsl;

	for (r = a->heads[fl][sl]; r; prev = r, r = r->link.free.next) {
		range_class(a, r, &rfl, &rsl);
		if (!r->is_free || r->link.free.prev != prev || rfl != fl ||
		    rsl != sl || ++*count > a->nfree)
			return false;
	}
	return true;
}

static bool free_lists_ok(const struct seg_alloc *a)
{
	unsigned int fl, sl;
	size_t count = 0;
	bool fl_bit, sl_bit;

	for (fl = 0; fl < FL_COUNT; fl++) {
		fl_bit = (a->fl_map >> fl) & 1u;
		if (fl_bit != (a->sl_map[fl] != 0))
			return false;
		for (sl = 0; sl < SL_COUNT; sl++) {
			sl_bit = (a->sl_map[fl] >> sl) & 1u;
			if (sl_bit != (a->heads[fl][sl] != NULL) ||
			    !class_list_ok(a, fl, sl, &count))
				return false;
		}
	}
	return (a->fl_map >> FL_COUNT) == 0 && count == a->nfree;
}

static bool hash_ok(const struct seg_alloc *a)
{
	size_t i, n = (size_t)1 << a->bucket_bits, count = 0;
	const struct range *r;

	for (i = 0; i < n; i++) {
		for (r = a->buckets[i]; r; r = r->link.hash_next) {
			if (r->is_free || ++count > a->live ||
			    hash_slot(r->off, a->shift, a->bucket_bits) != i)
				return false;
		}
	}
	return count == a->live;
}

bool seg_alloc_is_consistent(const struct seg_alloc *a)
{
	return a && a->first && a->first->off == 0 && tiling_ok(a) &&
	       free_lists_ok(a) && hash_ok(a);
}
