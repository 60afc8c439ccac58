/*
 * The daemons' exit statuses, for a supervisor (contrib/systemd/: the
 * units restart on failure, except after DAEMON_EXIT_USAGE and
 * DAEMON_EXIT_CONFIG, which no restart fixes):
 *
 *   0   stopped by a signal, cleanly
 *   1   failed in a way a restart may fix: a port in use, memory, a
 *       name that does not resolve yet
 *   2   a flag or --config line is invalid (one line names it)
 *   78  EX_CONFIG (sysexits.h): the configuration cannot work, found at
 *       start (protected mode, an unreadable auth, secret or TLS file, an
 *       address to advertise, a transport this host lacks) or, for a
 *       worker, refused by the master for good (its credential, or a
 *       host, domain or capacity its principal is not allowed)
 *
 * A master that cannot be reached is not a configuration error: the
 * worker keeps retrying it.
 */
#ifndef MCREPL_EXITCODE_H
#define MCREPL_EXITCODE_H

enum daemon_exit {
	DAEMON_EXIT_RETRY = 1,
	DAEMON_EXIT_USAGE = 2,
	DAEMON_EXIT_CONFIG = 78,
};

#endif
