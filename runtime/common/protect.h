/*
 * Protected mode, like Redis's: a daemon started without
 * authentication serves loopback only. Its bind address, when not given,
 * becomes 127.0.0.1 (with authentication: every address, as before); a
 * non-loopback address is refused unless --insecure is given, and then it
 * says loudly at start that anyone who reaches the port can use it.
 */
#ifndef MCREPL_DAEMON_PROTECT_H
#define MCREPL_DAEMON_PROTECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether host is a loopback address: "localhost", 127.0.0.0/8, ::1. */
bool net_is_loopback(const char *host);

/* Applies the rule to the bind address `host` (cap bytes) of the flag
 * named flag: "" becomes authed ? any_default : "127.0.0.1". authed: the
 * daemon authenticates its callers (--auth_file on the master, a
 * credential on a worker); what: the remedy to name ("--auth_file").
 * Prints one line to log about the outcome when it is protected or
 * insecure. 0, or -1 with err. */
int net_protected_bind(const char *prog, const char *flag, char *host,
		       size_t cap, const char *any_default, bool authed,
		       bool insecure, const char *what, FILE *log, char *err,
		       size_t errlen);

#endif
