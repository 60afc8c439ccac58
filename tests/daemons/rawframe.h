/* Raw RPC frames for the daemon tests that talk to a server byte by byte
 * (check_rpc, check_overload). Test support, not a test suite. */
#ifndef MCREPL_TEST_RAWFRAME_H
#define MCREPL_TEST_RAWFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "mcrepl.pb-c.h"

/* Receive exactly len bytes; 0, or -1 at EOF or on an error. */
int raw_read_full(int fd, uint8_t *buf, size_t len);

/* One whole reply frame (asserted well formed); NULL at EOF. Caller frees
 * with mcrepl_rpc__envelope__free_unpacked. */
McreplRpc__Envelope *raw_read_frame(int fd);

#endif
