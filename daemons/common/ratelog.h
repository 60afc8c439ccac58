/*
 * Rate-limited logging: a line that a loop can repeat (an accept error at
 * the fd limit, a refused connection, a peer's bad stream) goes through a
 * struct ratelog owned by the call site, so stderr gets at most one such
 * line per RATELOG_PERIOD_MS, and the next one says how many were held
 * back in between:
 *
 *     static struct ratelog rl;
 *     ratelog(&rl, "rpc_server: accept: %s", strerror(errno));
 *
 * prints "rpc_server: accept: Too many open files" once, then, a second
 * later at the earliest, "... (+41213 suppressed)". A zeroed struct is
 * ready. The line gets its newline here.
 *
 * Thread-safety: a ratelog belongs to one thread (its loop's).
 */
#ifndef MCREPL_RATELOG_H
#define MCREPL_RATELOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define RATELOG_PERIOD_MS 1000

struct ratelog {
	int64_t next_ms;     /* no line before this (net_now_ms clock) */
	uint64_t suppressed; /* lines held back since the last one printed */
	uint64_t total;	     /* every call, printed or not */
};

/* Prints fmt to stderr unless a line went out less than a period ago;
 * returns whether it printed. */
__attribute__((format(printf, 2, 3))) bool ratelog(struct ratelog *rl,
						   const char *fmt, ...);

/* As ratelog(), at time now_ms, into out (for tests). */
__attribute__((format(printf, 4, 5))) bool
ratelog_at(struct ratelog *rl, int64_t now_ms, FILE *out, const char *fmt, ...);

#endif
