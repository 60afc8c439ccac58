/*
 * Read holds: the segment ranges that READ replies still in flight
 * reference (the data port sends a reply from segment memory, no copy,
 * data_server.h). A hold lives from the reply's admission until the socket
 * has taken its last byte or its connection is gone; while it lives, no
 * WRITE may land in its range: the data port flushes or cuts the reply
 * first (docs/SECURITY.md, "A reader that stalls its reply").
 *
 * Each hold is in two lists: its set's (one per data server: the WRITE
 * side asks it) and its owner's (one per connection: dropped whole when
 * the connection closes). A detached hold (owner gone) is in neither and
 * is freed by hold_release when its reference is finally dropped.
 *
 * Bounded by the replies a connection may queue (DATA_MAX_QUEUED, and its
 * output high-water mark) times the connections.
 *
 * Thread-safety: none; the data server's loop owns every set and list.
 */
#ifndef MCREPL_DAEMON_HOLD_H
#define MCREPL_DAEMON_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hold;

struct hold_set {
	struct hold *first;
	size_t n; /* holds in the set now */
	/* released holds kept for reuse (a READ costs no malloc), at most
	 * HOLD_SPARE_MAX; hold_set_fini frees them */
	struct hold *spare;
	size_t n_spare;
};

#define HOLD_SPARE_MAX 1024

/* Frees the spare holds; holds still in the set are detached (each freed
 * by its hold_release). The set is empty and usable again. */
void hold_set_fini(struct hold_set *set);

struct hold_owner {
	struct hold *first;
};

/* A hold of [offset, +length) of slot by owner, in set. NULL when out of
 * memory (the caller must not send the reply by reference then). */
struct hold *hold_add(struct hold_set *set, struct hold_owner *owner, int slot,
		      uint64_t offset, uint64_t length);

/* The reply's reference is dropped (sent, or its buffer freed): h leaves
 * its lists if still in them, and is kept as a spare of its set or
 * freed (detached). */
void hold_release(struct hold *h);

/* owner is gone: each of its holds leaves both lists (hold_release frees
 * it later). */
void hold_detach_all(struct hold_owner *owner);

/* The owner of a hold in set overlapping [offset, +length) of slot, or
 * NULL. */
struct hold_owner *hold_find(const struct hold_set *set, int slot,
			     uint64_t offset, uint64_t length);

/* owner holds a range overlapping [offset, +length) of slot. */
bool hold_owner_overlaps(const struct hold_owner *owner, int slot,
			 uint64_t offset, uint64_t length);

#endif
