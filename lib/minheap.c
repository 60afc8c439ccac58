/* Intrusive indexed binary min-heap (see minheap.h). */
#include <assert.h>
#include <stdlib.h>

#include "minheap.h"

void mcr_heap_init(struct mcr_heap *h)
{
	h->a = NULL;
	h->n = 0;
	h->cap = 0;
}

void mcr_heap_fini(struct mcr_heap *h)
{
	free(h->a);
	mcr_heap_init(h);
}

void mcr_heap_node_init(struct mcr_heap_node *x, uint64_t tie)
{
	x->at = 0;
	x->tie = tie;
	x->pos = MCREPL__HEAP_OUT;
}

int mcr_heap_reserve(struct mcr_heap *h, size_t want)
{
	struct mcr_heap_node **a;
	size_t cap = h->cap ? h->cap : 16;

	if (want <= h->cap)
		return 0;
	while (cap < want) {
		if (cap > SIZE_MAX / 2 / sizeof(*a))
			return -1;
		cap *= 2;
	}
	a = realloc(h->a, cap * sizeof(*a));
	if (!a)
		return -1;
	h->a = a;
	h->cap = cap;
	return 0;
}

static bool before(const struct mcr_heap_node *x, const struct mcr_heap_node *y)
{
	return x->at < y->at || (x->at == y->at && x->tie < y->tie);
}

static void place(struct mcr_heap *h, size_t i, struct mcr_heap_node *x)
{
	h->a[i] = x;
	x->pos = i;
}

static void sift_up(struct mcr_heap *h, size_t i)
{
	struct mcr_heap_node *x = h->a[i];

	while (i > 0 && before(x, h->a[(i - 1) / 2])) {
		place(h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(h, i, x);
}

static void sift_down(struct mcr_heap *h, size_t i)
{
	struct mcr_heap_node *x = h->a[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h->a[c + 1], h->a[c]))
			c++;
		if (!before(h->a[c], x))
			break;
		place(h, i, h->a[c]);
		i = c;
	}
	place(h, i, x);
}

void mcr_heap_set(struct mcr_heap *h, struct mcr_heap_node *x, uint64_t at)
{
	if (!mcr_heap_node_in(x)) {
		assert(h->n < h->cap);
		x->at = at;
		place(h, h->n++, x);
		sift_up(h, x->pos);
		return;
	}
	x->at = at;
	sift_up(h, x->pos);
	sift_down(h, x->pos);
}

void mcr_heap_remove(struct mcr_heap *h, struct mcr_heap_node *x)
{
	size_t i = x->pos;
	struct mcr_heap_node *last;

	if (i == MCREPL__HEAP_OUT)
		return;
	x->pos = MCREPL__HEAP_OUT;
	last = h->a[--h->n];
	if (last == x)
		return;
	place(h, i, last);
	sift_up(h, i);
	sift_down(h, last->pos);
}

struct mcr_heap_node *mcr_heap_top(const struct mcr_heap *h)
{
	return h->n ? h->a[0] : NULL;
}
