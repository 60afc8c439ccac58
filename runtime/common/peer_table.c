/* Connections per peer address (see peer_table.h). */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/hash.h"
#include "peer_table.h"

struct peer_entry {
	struct mcu_map_node node;
	uint8_t addr[17]; /* family tag, then up to 16 address bytes */
	uint32_t n;
};

/* sa's address as a key: a tag byte (4 or 6) then its bytes. */
static void key_of(const struct sockaddr *sa, uint8_t key[17])
{
	memset(key, 0, 17);
	if (sa->sa_family == AF_INET6) {
		key[0] = 6;
		memcpy(
		    key + 1,
		    &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
		    16);
	} else if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(
		    key + 1,
		    &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
		    4);
	}
}

static bool eq(const struct mcu_map_node *n, const void *key)
{
	const struct peer_entry *e = (const struct peer_entry *)(const void *)n;

	return memcmp(e->addr, key, sizeof(e->addr)) == 0;
}

static struct peer_entry *find(const struct peer_table *t,
			       const uint8_t key[17], uint64_t *hash)
{
	*hash = mcu_hash64(key, 17, 0x70656572);
	return (struct peer_entry *)(void *)mcu_map_find(&t->map, *hash, eq,
							 key);
}

int peer_table_init(struct peer_table *t)
{
	return mcu_map_init(&t->map, 64);
}

static void free_entry(struct mcu_map_node *x, void *ctx)
{
	(void)ctx;
	free(x);
}

void peer_table_fini(struct peer_table *t)
{
	mcu_map_drain(&t->map, free_entry, NULL);
	mcu_map_fini(&t->map);
}

struct peer_entry *peer_table_find(const struct peer_table *t,
				   const struct sockaddr *sa)
{
	uint8_t key[17];
	uint64_t h;

	key_of(sa, key);
	return find(t, key, &h);
}

uint32_t peer_table_count(const struct peer_table *t, const struct sockaddr *sa)
{
	struct peer_entry *e = peer_table_find(t, sa);

	return e ? e->n : 0;
}

struct peer_entry *peer_table_add(struct peer_table *t,
				  const struct sockaddr *sa)
{
	uint8_t key[17];
	uint64_t h;
	struct peer_entry *e;

	key_of(sa, key);
	e = find(t, key, &h);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return NULL;
		memcpy(e->addr, key, sizeof(e->addr));
		mcu_map_insert(&t->map, &e->node, h);
	}
	e->n++;
	return e;
}

void peer_table_put(struct peer_table *t, struct peer_entry *e)
{
	if (!e || --e->n)
		return;
	mcu_map_remove(&t->map, &e->node);
	free(e);
}
