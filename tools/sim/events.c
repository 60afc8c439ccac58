/* Binary min-heap of timed events (see events.h). */
#include <stdlib.h>

#include "events.h"

static int before(const struct sim_event *a, const struct sim_event *b)
{
	if (a->at_ms != b->at_ms)
		return a->at_ms < b->at_ms;
	return a->seq < b->seq;
}

static void swap(struct sim_event *a, struct sim_event *b)
{
	struct sim_event t = *a;

	*a = *b;
	*b = t;
}

int sim_events_push(struct sim_events *q, uint64_t at_ms,
		    enum sim_event_kind kind, uint64_t task)
{
	size_t i;

	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 256;
		struct sim_event *h = realloc(q->h, cap * sizeof(*h));

		if (!h)
			return -1;
		q->h = h;
		q->cap = cap;
	}
	i = q->n++;
	q->h[i] = (struct sim_event){
	    .at_ms = at_ms, .seq = q->seq++, .task = task, .kind = kind};
	while (i && before(&q->h[i], &q->h[(i - 1) / 2])) {
		swap(&q->h[i], &q->h[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

static void sift_down(struct sim_events *q)
{
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->n && before(&q->h[l], &q->h[m]))
			m = l;
		if (r < q->n && before(&q->h[r], &q->h[m]))
			m = r;
		if (m == i)
			return;
		swap(&q->h[i], &q->h[m]);
		i = m;
	}
}

int sim_events_pop_due(struct sim_events *q, uint64_t now_ms,
		       struct sim_event *out)
{
	if (!q->n || q->h[0].at_ms > now_ms)
		return 0;
	*out = q->h[0];
	q->h[0] = q->h[--q->n];
	sift_down(q);
	return 1;
}

void sim_events_free(struct sim_events *q)
{
	free(q->h);
	q->h = NULL;
	q->n = q->cap = 0;
}
