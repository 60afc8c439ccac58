/* Support for tests that check a message exactly: what a call printed on
 * stderr or stdout, captured into a buffer (one capture at a time). */
#ifndef MCREPL_TEST_CAPTURE_H
#define MCREPL_TEST_CAPTURE_H

#include <stddef.h>

/* Redirects fd (STDERR_FILENO, STDOUT_FILENO) to a temporary file until
 * capture_end(). */
void capture_begin(int fd);
/* Restores fd; the captured text (truncated to cap - 1 bytes, one
 * trailing newline cut) in buf. */
void capture_end(char *buf, size_t cap);

#endif
