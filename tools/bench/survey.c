/* Replica counts of the hottest keys, from the master (see run.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static const uint64_t *sort_counts;

static int by_count_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t cx = sort_counts[x], cy = sort_counts[y];

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return (x > y) - (x < y);
}

/* Dense block indexes, most-read first (single-threaded: the comparator
 * reads a file-scope pointer). NULL on OOM. */
static uint32_t *hottest_blocks(const struct trace *tr)
{
	uint32_t *order = malloc((tr->n_blocks + 1) * sizeof(*order));

	if (!order)
		return NULL;
	for (size_t b = 0; b < tr->n_blocks; b++)
		order[b] = (uint32_t)b;
	sort_counts = tr->counts;
	qsort(order, tr->n_blocks, sizeof(*order), by_count_desc);
	sort_counts = NULL;
	return order;
}

int survey_replicas(struct survey *sv, store_client *sc, const struct load *l,
		    size_t top)
{
	struct store_object_info *info = malloc(sizeof(*info));
	uint32_t *order = l->tr ? hottest_blocks(l->tr) : NULL;
	char name[64];
	int rc = 0;

	memset(sv, 0, sizeof(*sv));
	if (!info || (l->tr ? !order : !l->z)) {
		free(info);
		free(order);
		return -1;
	}
	if (top > l->n_keys)
		top = l->n_keys;
	for (size_t i = 0; i < top && rc == 0; i++) {
		int st;

		load_key_name(l, l->tr ? order[i] : load_hot_key(l, i), name,
			      sizeof(name));
		st = store_client_stat(sc, name, info);
		if (st < 0)
			rc = -1;
		if (st != 0)
			continue; /* not stored (a trace cut short) */
		sv->checked++;
		sv->replicas += info->n_replicas;
		sv->multi += info->n_replicas > 1;
		if (sv->n_top < SURVEY_TOP)
			sv->top[sv->n_top++] = (uint32_t)info->n_replicas;
	}
	free(info);
	free(order);
	return rc;
}
