/* Intrusive indexed binary min-heap (see minheap.h). */
#include <assert.h>
#include <stdlib.h>

#include "minheap.h"

void mcrepl__heap_init(struct mcrepl__heap *h)
{
	h->a = NULL;
	h->n = 0;
	h->cap = 0;
}

void mcrepl__heap_fini(struct mcrepl__heap *h)
{
	free(h->a);
	mcrepl__heap_init(h);
}

void mcrepl__heap_node_init(struct mcrepl__heap_node *x, uint64_t tie)
{
	x->at = 0;
	x->tie = tie;
	x->pos = MCREPL__HEAP_OUT;
}

int mcrepl__heap_reserve(struct mcrepl__heap *h, size_t want)
{
	struct mcrepl__heap_node **a;
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

static bool before(const struct mcrepl__heap_node *x,
		   const struct mcrepl__heap_node *y)
{
	return x->at < y->at || (x->at == y->at && x->tie < y->tie);
}

static void place(struct mcrepl__heap *h, size_t i, struct mcrepl__heap_node *x)
{
	h->a[i] = x;
	x->pos = i;
}

static void sift_up(struct mcrepl__heap *h, size_t i)
{
	struct mcrepl__heap_node *x = h->a[i];

	while (i > 0 && before(x, h->a[(i - 1) / 2])) {
		place(h, i, h->a[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	place(h, i, x);
}

static void sift_down(struct mcrepl__heap *h, size_t i)
{
	struct mcrepl__heap_node *x = h->a[i];

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

void mcrepl__heap_set(struct mcrepl__heap *h, struct mcrepl__heap_node *x,
		      uint64_t at)
{
	if (!mcrepl__heap_node_in(x)) {
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

void mcrepl__heap_remove(struct mcrepl__heap *h, struct mcrepl__heap_node *x)
{
	size_t i = x->pos;
	struct mcrepl__heap_node *last;

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

struct mcrepl__heap_node *mcrepl__heap_top(const struct mcrepl__heap *h)
{
	return h->n ? h->a[0] : NULL;
}
