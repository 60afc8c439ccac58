/*
 * The monotonic clock of the daemons, their tools and tests: one
 * CLOCK_MONOTONIC reading, in milliseconds for deadlines and periods, in
 * seconds for benchmark rates and latencies. (The net_ prefix is kept from
 * netutil.h, where net_now_ms() began and where its callers find it.)
 * Thread-safe.
 */
#ifndef MCREPL_CLOCK_H
#define MCREPL_CLOCK_H

#include <stdint.h>
#include <sys/time.h>
#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC. */
static inline int64_t net_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Seconds on CLOCK_MONOTONIC, with nanosecond resolution. */
static inline double net_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A duration of ms milliseconds as a struct timeval (libevent, sockets). */
static inline struct timeval net_timeval_ms(uint64_t ms)
{
	return (struct timeval){.tv_sec = (time_t)(ms / 1000),
				.tv_usec = (suseconds_t)(ms % 1000) * 1000};
}

#endif
