/* Small socket helpers shared by the RPC server and clients.
 * Thread-safety: every function is reentrant. */
#ifndef MCREPL_DAEMON_NETUTIL_H
#define MCREPL_DAEMON_NETUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "clock.h" /* net_now_ms() */

/* Longest "host:port" / "[v6]:port" string the helpers produce, with NUL. */
#define NET_ADDRSTRLEN 64

/* Splits "host:port", "[v6addr]:port" or ":port" (host = "") into host
 * (copied into host, hostlen bytes) and port. Returns 0, or -1 when the
 * string is malformed, the port is not 0..65535 or the host does not fit. */
int net_split_hostport(const char *addr, char *host, size_t hostlen,
		       uint16_t *port);

/* Resolves host (NULL or "" = any address when passive, else loopback) and
 * port into *ss. Returns 0, or -1 with a message in err. Blocks on DNS for
 * names; numeric addresses do not touch the resolver. */
int net_resolve(const char *host, uint16_t port, int passive,
		struct sockaddr_storage *ss, socklen_t *sslen, char *err,
		size_t errlen);

/* Connects a TCP socket to host:port, trying each resolved address in turn
 * within timeout_ms overall (< 0 = no limit). Returns a connected,
 * non-blocking, TCP_NODELAY fd the caller closes, or -1 with a message in
 * err. Blocks (poll) for at most the timeout, plus DNS time for names. */
int net_connect(const char *host, uint16_t port, int timeout_ms, char *err,
		size_t errlen);

/* Formats sa as "1.2.3.4:5" or "[::1]:5" into out (NET_ADDRSTRLEN bytes). */
void net_format_addr(const struct sockaddr *sa, socklen_t salen, char *out,
		     size_t outlen);

/* Sets O_NONBLOCK (on != 0) or clears it. Returns 0 or -1 (errno set). */
int net_set_nonblock(int fd, int on);

/* Sets TCP_NODELAY on fd; errors are ignored (not a TCP socket, ...). */
void net_set_nodelay(int fd);

/* Milliseconds from now until the net_now_ms() deadline, never below 0;
 * -1 when deadline < 0 (no deadline). Ready to pass to poll(). */
int net_remaining_ms(int64_t deadline);

/* Wait until fd is ready for poll `events` or the deadline (net_now_ms
 * clock) passes: 0, -ETIMEDOUT, or -errno. EINTR is retried. */
int net_wait_fd(int fd, short events, int64_t deadline);

#endif
