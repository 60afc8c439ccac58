/* Read holds (hold.h). */
#include "hold.h"

#include <stdlib.h>

struct hold {
	struct hold *next, *prev;   /* the set's */
	struct hold *onext, *oprev; /* the owner's */
	struct hold_set *set;	    /* NULL once detached */
	struct hold_owner *owner;
	int slot;
	uint64_t offset, end;
};

static bool overlaps(const struct hold *h, int slot, uint64_t offset,
		     uint64_t length)
{
	return h->slot == slot && offset < h->end &&
	       h->offset < offset + length;
}

struct hold *hold_add(struct hold_set *set, struct hold_owner *owner, int slot,
		      uint64_t offset, uint64_t length)
{
	struct hold *h = set->spare;

	if (h) {
		set->spare = h->next;
		set->n_spare--;
	} else if (!(h = malloc(sizeof(*h)))) {
		return NULL;
	}
	*h = (struct hold){.next = set->first,
			   .onext = owner->first,
			   .set = set,
			   .owner = owner,
			   .slot = slot,
			   .offset = offset,
			   .end = offset + length};
	if (set->first)
		set->first->prev = h;
	set->first = h;
	if (owner->first)
		owner->first->oprev = h;
	owner->first = h;
	set->n++;
	return h;
}

static void detach(struct hold *h)
{
	if (h->prev)
		h->prev->next = h->next;
	else
		h->set->first = h->next;
	if (h->next)
		h->next->prev = h->prev;
	if (h->oprev)
		h->oprev->onext = h->onext;
	else
		h->owner->first = h->onext;
	if (h->onext)
		h->onext->oprev = h->oprev;
	h->set->n--;
	h->set = NULL;
	h->owner = NULL;
}

void hold_release(struct hold *h)
{
	struct hold_set *set = h->set;

	if (!set) {
		free(h);
		return;
	}
	detach(h);
	if (set->n_spare >= HOLD_SPARE_MAX) {
		free(h);
		return;
	}
	h->next = set->spare;
	set->spare = h;
	set->n_spare++;
}

void hold_set_fini(struct hold_set *set)
{
	while (set->first)
		detach(set->first);
	while (set->spare) {
		struct hold *h = set->spare;

		set->spare = h->next;
		free(h);
	}
	set->n_spare = 0;
}

void hold_detach_all(struct hold_owner *owner)
{
	while (owner->first)
		detach(owner->first);
}

struct hold_owner *hold_find(const struct hold_set *set, int slot,
			     uint64_t offset, uint64_t length)
{
	for (const struct hold *h = set->first; h; h = h->next)
		if (overlaps(h, slot, offset, length))
			return h->owner;
	return NULL;
}

bool hold_owner_overlaps(const struct hold_owner *owner, int slot,
			 uint64_t offset, uint64_t length)
{
	for (const struct hold *h = owner->first; h; h = h->onext)
		if (overlaps(h, slot, offset, length))
			return true;
	return false;
}
