/* Raw loopback sockets for the daemon tests that play a broken or hostile
 * peer (check_overload*). Test support, not a test suite; failures are
 * Check assertions. */
#ifndef MCREPL_TEST_RAWSOCK_H
#define MCREPL_TEST_RAWSOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A blocking connection to 127.0.0.1:port from source address src (NULL =
 * any), with a 5 s receive timeout. */
int connect_from(const char *src, uint16_t port);
int raw_connect(uint16_t port);

/* Sends all of buf (asserted). */
void raw_send(int fd, const void *buf, size_t len);

/* The peer closes within timeout_ms (reading and dropping what comes):
 * for a check that it does not close (yet). */
bool closed_within(int fd, int timeout_ms);
/* The peer closes, before a wait's bound (wait.h): for a check that it
 * does. */
bool closed_soon(int fd);

/* The file descriptors process pid has open (its accepted connections
 * among them). */
int fd_count(pid_t pid);

/* A 5 s send timeout on fd. */
void set_send_timeout(int fd);

/* Sends what the socket takes now of buf[0, len), without waiting. */
size_t send_some(int fd, const uint8_t *buf, size_t len);

#endif
