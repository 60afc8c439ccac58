/*
 * mcrepl-sim timed events: a binary min-heap ordered by (time, insertion
 * sequence), so events due at the same millisecond run in the order they
 * were scheduled and runs stay deterministic.
 */
#ifndef SIM_EVENTS_H
#define SIM_EVENTS_H

#include <stddef.h>
#include <stdint.h>

enum sim_event_kind {
	SIM_EV_FETCH, /* the source worker fetched its REPLICA_COPY task */
	SIM_EV_END    /* the transfer finished on both NICs */
};

struct sim_event {
	uint64_t at_ms;
	uint64_t seq;
	uint64_t task;
	enum sim_event_kind kind;
};

struct sim_events {
	struct sim_event *h;
	size_t n, cap;
	uint64_t seq;
};

/* 0, or -1 on ENOMEM. */
int sim_events_push(struct sim_events *q, uint64_t at_ms,
		    enum sim_event_kind kind, uint64_t task);

/* Pop the earliest event due at or before now_ms into *out: 1, else 0. */
int sim_events_pop_due(struct sim_events *q, uint64_t now_ms,
		       struct sim_event *out);

void sim_events_free(struct sim_events *q);

#endif
