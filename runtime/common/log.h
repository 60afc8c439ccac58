/*
 * The daemons' log: one line per event on stderr, "<program>: <level>:
 * <text>", filtered by --log_level (error, warn, info, debug; default
 * info). Events a loop can repeat go through a struct ratelog as well
 * (ratelog.h). The level is the process's: set once at start, before any
 * thread is started, and only read after.
 */
#ifndef MCREPL_LOG_H
#define MCREPL_LOG_H

#include <stdbool.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

/* The choices a --log_level flag takes (flagparse .choices). */
#define LOG_LEVEL_CHOICES "error|warn|info|debug"

/* Program name for the prefix and the level by name (one of
 * LOG_LEVEL_CHOICES; anything else keeps info). */
void log_init(const char *prog, const char *level);

/* Whether lines of level lv are written. */
bool log_on(enum log_level lv);

/* A line at level lv (the newline is added). */
__attribute__((format(printf, 2, 3))) void log_line(enum log_level lv,
						    const char *fmt, ...);

#endif
