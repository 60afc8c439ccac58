/* Intrusive chained hash map with incremental rehashing (see map.h). */
#include <stdlib.h>

#include "map.h"

/* Buckets visited per rehash step; a step runs on every insert/remove, so
 * a rehash started at n == buckets ends long before the next one is due. */
#define REHASH_STEP 8

int mcrepl__map_init(struct mcrepl__map *m, size_t buckets)
{
	m->tab[0] = calloc(buckets, sizeof(*m->tab[0]));
	if (!m->tab[0])
		return -1;
	m->tab[1] = NULL;
	m->mask[0] = buckets - 1;
	m->mask[1] = 0;
	m->rehash = 0;
	m->n = 0;
	return 0;
}

void mcrepl__map_fini(struct mcrepl__map *m)
{
	free(m->tab[0]);
	free(m->tab[1]);
	m->tab[0] = NULL;
	m->tab[1] = NULL;
	m->n = 0;
}

/* The bucket that holds (or would hold) hash right now. */
static struct mcrepl__map_node **bucket(const struct mcrepl__map *m,
					uint64_t hash)
{
	size_t i = (size_t)hash & m->mask[0];

	if (m->tab[1] && i < m->rehash)
		return &m->tab[1][(size_t)hash & m->mask[1]];
	return &m->tab[0][i];
}

static void rehash_step(struct mcrepl__map *m)
{
	size_t end;

	if (!m->tab[1])
		return;
	end = m->rehash + REHASH_STEP;
	for (; m->rehash <= m->mask[0] && m->rehash < end; m->rehash++) {
		struct mcrepl__map_node *x = m->tab[0][m->rehash];

		while (x) {
			struct mcrepl__map_node *next = x->next;
			struct mcrepl__map_node **b =
			    &m->tab[1][(size_t)x->hash & m->mask[1]];

			x->next = *b;
			*b = x;
			x = next;
		}
		m->tab[0][m->rehash] = NULL;
	}
	if (m->rehash > m->mask[0]) {
		free(m->tab[0]);
		m->tab[0] = m->tab[1];
		m->mask[0] = m->mask[1];
		m->tab[1] = NULL;
		m->rehash = 0;
	}
}

/* Start a rehash into twice the buckets once the load factor passes 1. */
static void maybe_grow(struct mcrepl__map *m)
{
	size_t size = m->mask[0] + 1;

	if (m->tab[1] || m->n < size || size > SIZE_MAX / 2 / sizeof(void *))
		return;
	m->tab[1] = calloc(size * 2, sizeof(*m->tab[1]));
	if (!m->tab[1])
		return;
	m->mask[1] = size * 2 - 1;
	m->rehash = 0;
}

struct mcrepl__map_node *mcrepl__map_find(const struct mcrepl__map *m,
					  uint64_t hash, mcrepl__map_eq_fn eq,
					  const void *key)
{
	struct mcrepl__map_node *x = *bucket(m, hash);

	for (; x; x = x->next) {
		if (x->hash == hash && eq(x, key))
			return x;
	}
	return NULL;
}

void mcrepl__map_insert(struct mcrepl__map *m, struct mcrepl__map_node *x,
			uint64_t hash)
{
	struct mcrepl__map_node **b;

	maybe_grow(m);
	rehash_step(m);
	b = bucket(m, hash);
	x->hash = hash;
	x->next = *b;
	*b = x;
	m->n++;
}

void mcrepl__map_remove(struct mcrepl__map *m, struct mcrepl__map_node *x)
{
	struct mcrepl__map_node **p = bucket(m, x->hash);

	while (*p && *p != x)
		p = &(*p)->next;
	if (*p) {
		*p = x->next;
		x->next = NULL;
		m->n--;
	}
	rehash_step(m);
}

void mcrepl__map_drain(struct mcrepl__map *m,
		       void (*fn)(struct mcrepl__map_node *x, void *ctx),
		       void *ctx)
{
	for (int t = 0; t < 2; t++) {
		if (!m->tab[t])
			continue;
		for (size_t i = 0; i <= m->mask[t]; i++) {
			struct mcrepl__map_node *x = m->tab[t][i];

			m->tab[t][i] = NULL;
			while (x) {
				struct mcrepl__map_node *next = x->next;

				fn(x, ctx);
				x = next;
			}
		}
	}
	m->n = 0;
}
