/* Support for tests that check a message exactly: what a call printed on
 * stderr (or any FILE *), captured into a buffer. */
#ifndef MCREPL_TEST_CAPTURE_H
#define MCREPL_TEST_CAPTURE_H

#include <stddef.h>

/* Redirects stderr to a temporary file until capture_end(). */
void capture_begin(void);
/* Restores stderr; the captured text (truncated to cap - 1 bytes, one
 * trailing newline cut) in buf. */
void capture_end(char *buf, size_t cap);

#endif
