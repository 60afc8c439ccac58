/*
 * libmcrepl trigger queue: the bounded, deduplicating hand-off from the read
 * path to the background admission worker (docs/RFC.md R-DEC-*: a read
 * does no admission work itself; it leaves at most one pending trigger
 * per key for the worker).
 *
 * This header is the contract: what is not declared here is private.
 * Thread-safe (one internal mutex); push is O(1) expected; strings copied.
 */
#ifndef MCREPL_QUEUE_H
#define MCREPL_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "mcrepl/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcrepl_triggers mcrepl_triggers;

/* One queued trigger. Strings are owned by the trigger after pop and freed
 * by mcrepl_trigger_release(). */
typedef struct mcrepl_trigger {
	char *tenant;
	char *key;
	char *domain; /* requester domain ("" when not domain-aware) */
	uint64_t queued_at_ms;
} mcrepl_trigger;

/* limit = most triggers queued at once (>= 1). destroy accepts NULL. */
MCREPL_API mcrepl_status mcrepl_triggers_create(size_t limit,
						mcrepl_triggers **out);
MCREPL_API void mcrepl_triggers_destroy(mcrepl_triggers *q);

/* Queue a trigger for (tenant, key, domain). MCREPL_OK when queued,
 * MCREPL_EEXIST when an identical trigger is already queued (deduplicated),
 * MCREPL_EFULL when the queue is at its limit, MCREPL_ENOMEM. */
MCREPL_API mcrepl_status mcrepl_triggers_push(mcrepl_triggers *q,
					      const char *tenant,
					      const char *key,
					      const char *domain,
					      uint64_t now_ms);

/* Move up to cap triggers, oldest first, into out[]; returns the count.
 * The caller releases each with mcrepl_trigger_release(). */
MCREPL_API size_t mcrepl_triggers_pop(mcrepl_triggers *q, mcrepl_trigger *out,
				      size_t cap);

/* Free the strings of a popped trigger (NULL-safe fields). */
MCREPL_API void mcrepl_trigger_release(mcrepl_trigger *t);

/* Triggers currently queued. */
MCREPL_API size_t mcrepl_triggers_len(mcrepl_triggers *q);

#ifdef __cplusplus
}
#endif
#endif
