/*
 * Rate-limited logging: a line that a loop can repeat (an accept error at
 * the fd limit, a refused connection, a peer's bad stream) goes through a
 * struct ratelog owned by the call site, so stderr gets at most one such
 * line per RATELOG_PERIOD_MS, and the next one says how many were held
 * back in between:
 *
 *     static struct ratelog rl;
 *     ratelog(&rl, LOG_WARN, "rpc_server: accept: %s", strerror(errno));
 *
 * logs "mcrepl-master: warn: rpc_server: accept: Too many open files"
 * once (log.h: program, level, text), then, a second later at the
 * earliest, "... (+41213 suppressed)". A line below the process's
 * --log_level is neither printed nor counted. A zeroed struct is ready.
 *
 * Thread-safety: a ratelog belongs to one thread (its loop's).
 */
#ifndef MCREPL_RATELOG_H
#define MCREPL_RATELOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"

#define RATELOG_PERIOD_MS 1000

struct ratelog {
	int64_t next_ms;     /* no line before this (net_now_ms clock) */
	uint64_t suppressed; /* lines held back since the last one printed */
	uint64_t total;	     /* every call, printed or not */
};

/* Logs fmt at level lv (log_line) unless a line went out less than a
 * period ago; returns whether it printed. */
__attribute__((format(printf, 3, 4))) bool
ratelog(struct ratelog *rl, enum log_level lv, const char *fmt, ...);

/* As ratelog(), at time now_ms, into out (for tests). */
__attribute__((format(printf, 4, 5))) bool
ratelog_at(struct ratelog *rl, int64_t now_ms, FILE *out, const char *fmt, ...);

#endif
