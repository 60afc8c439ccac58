/* Fences for the mounts of expired workers (store.h, hafence.h). */
#include <stdlib.h>

#include "store_priv.h"

struct fence {
	uint64_t client_id, segment_id;
	bool sent; /* its write is in flight */
};

struct store_fences {
	struct fence *f;
	size_t n, cap;
};

void store__fences_free(struct store *s)
{
	if (!s->fences)
		return;
	free(s->fences->f);
	free(s->fences);
	s->fences = NULL;
}

static bool fences_room(struct store *s, size_t more)
{
	struct store_fences *fs = s->fences;
	struct fence *f;
	size_t cap;

	if (!fs && !(fs = s->fences = calloc(1, sizeof(*fs))))
		return false;
	if (fs->n + more <= fs->cap)
		return true;
	cap = fs->cap ? fs->cap * 2 : 16;
	while (cap < fs->n + more)
		cap *= 2;
	f = realloc(fs->f, cap * sizeof(*f));
	if (!f)
		return false;
	fs->f = f;
	fs->cap = cap;
	return true;
}

void store__fence_client(struct store *s, uint64_t client_id,
			 const uint64_t *seg_ids, size_t n)
{
	/* without a term no other leader takes over; without memory the
	 * removes end rather than wait forever (the fence is lost) */
	if (!s->term || n == 0 || !fences_room(s, n)) {
		store__rm_client_gone(s, client_id);
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->fences->f[s->fences->n++] = (struct fence){
		    .client_id = client_id, .segment_id = seg_ids[i]};
}

size_t store_fences_to_write(struct store *s, uint64_t *segment_ids, size_t cap)
{
	struct store_fences *fs = s->fences;
	size_t k = 0;

	for (size_t i = 0; fs && i < fs->n && k < cap; i++)
		if (!fs->f[i].sent) {
			fs->f[i].sent = true;
			segment_ids[k++] = fs->f[i].segment_id;
		}
	return k;
}

void store_fence_done(struct store *s, uint64_t segment_id, bool written)
{
	struct store_fences *fs = s->fences;
	uint64_t client_id;

	for (size_t i = 0; fs && i < fs->n; i++) {
		if (fs->f[i].segment_id != segment_id)
			continue;
		if (!written) {
			s->ctr.fences_failed++;
			fs->f[i].sent = false;
			return;
		}
		s->ctr.fences_written++;
		client_id = fs->f[i].client_id;
		fs->f[i] = fs->f[--fs->n];
		for (size_t j = 0; j < fs->n; j++)
			if (fs->f[j].client_id == client_id)
				return; /* another of its mounts is not yet */
		store__rm_client_gone(s, client_id);
		return;
	}
}
