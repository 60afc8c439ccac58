/* Intrusive chained hash map with incremental rehashing (see map.h). */
#include <stdlib.h>

#include "util/map.h"

/* Buckets visited per rehash step; a step runs on every insert/remove, so
 * a rehash started at n == buckets ends long before the next one is due. */
#define REHASH_STEP 8

int mcu_map_init(struct mcu_map *m, size_t buckets)
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

void mcu_map_fini(struct mcu_map *m)
{
	free(m->tab[0]);
	free(m->tab[1]);
	m->tab[0] = NULL;
	m->tab[1] = NULL;
	m->n = 0;
}

/* The bucket that holds (or would hold) hash right now. */
static struct mcu_map_node **bucket(const struct mcu_map *m, uint64_t hash)
{
	size_t i = (size_t)hash & m->mask[0];

	if (m->tab[1] && i < m->rehash)
		return &m->tab[1][(size_t)hash & m->mask[1]];
	return &m->tab[0][i];
}

static void rehash_step(struct mcu_map *m)
{
	size_t end;

	if (!m->tab[1])
		return;
	end = m->rehash + REHASH_STEP;
	for (; m->rehash <= m->mask[0] && m->rehash < end; m->rehash++) {
		struct mcu_map_node *x = m->tab[0][m->rehash];

		while (x) {
			struct mcu_map_node *next = x->next;
			struct mcu_map_node **b =
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
static void maybe_grow(struct mcu_map *m)
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

struct mcu_map_node *mcu_map_find(const struct mcu_map *m, uint64_t hash,
				  mcu_map_eq_fn eq, const void *key)
{
	struct mcu_map_node *x = *bucket(m, hash);

	for (; x; x = x->next) {
		if (x->hash == hash && eq(x, key))
			return x;
	}
	return NULL;
}

void mcu_map_insert(struct mcu_map *m, struct mcu_map_node *x, uint64_t hash)
{
	struct mcu_map_node **b;

	maybe_grow(m);
	rehash_step(m);
	b = bucket(m, hash);
	x->hash = hash;
	x->next = *b;
	*b = x;
	m->n++;
}

void mcu_map_remove(struct mcu_map *m, struct mcu_map_node *x)
{
	struct mcu_map_node **p = bucket(m, x->hash);

	while (*p && *p != x)
		p = &(*p)->next;
	if (*p) {
		*p = x->next;
		x->next = NULL;
		m->n--;
	}
	rehash_step(m);
}

void mcu_map_drain(struct mcu_map *m,
		   void (*fn)(struct mcu_map_node *x, void *ctx), void *ctx)
{
	for (int t = 0; t < 2; t++) {
		if (!m->tab[t])
			continue;
		for (size_t i = 0; i <= m->mask[t]; i++) {
			struct mcu_map_node *x = m->tab[t][i];

			m->tab[t][i] = NULL;
			while (x) {
				struct mcu_map_node *next = x->next;

				fn(x, ctx);
				x = next;
			}
		}
	}
	m->n = 0;
}
