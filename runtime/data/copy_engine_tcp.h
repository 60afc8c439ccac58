/* TCP copy engine extras beyond copy_engine.h: counters for metrics and
 * tests. Thread-safety: as the engine (its event_base's thread). */
#ifndef MCREPL_DAEMON_COPY_ENGINE_TCP_H
#define MCREPL_DAEMON_COPY_ENGINE_TCP_H

#include <stdint.h>

#include "copy_engine.h"

struct copy_engine_tcp_stats {
	uint32_t inflight;		  /* admitted, not completed */
	uint32_t max_inflight_seen;	  /* high-water mark of inflight */
	uint64_t inflight_bytes;	  /* their bytes */
	uint64_t max_inflight_bytes_seen; /* high-water mark */
	uint32_t queued;		  /* posted, waiting for a slot */
	uint32_t peers;			  /* open connections */
	uint64_t posted, completed, failed, bytes_copied;
	uint64_t retried; /* sent again after a reused connection was lost */
	/* answered while chunks of the source were still queued (refused
	 * mid-payload): completed only once they were released */
	uint64_t held;
};

/* Counters of a tcp engine; zeros when e is not one. */
void copy_engine_tcp_stats(const struct copy_engine *e,
			   struct copy_engine_tcp_stats *out);

#endif
