/* Raw RPC frames for the daemon tests (see rawframe.h). */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "frame.h"
#include "rawframe.h"

int raw_read_full(int fd, uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = recv(fd, buf, len, 0);

		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

McreplRpc__Envelope *raw_read_frame(int fd)
{
	uint8_t prefix[4], *frame;
	McreplRpc__Envelope *env = NULL;
	size_t total, used;

	if (raw_read_full(fd, prefix, 4))
		return NULL;
	ck_assert_int_eq(rpc_frame_peek(prefix, 4, 1u << 30, &total),
			 RPC_FRAME_OK);
	frame = malloc(total);
	ck_assert_ptr_nonnull(frame);
	memcpy(frame, prefix, 4);
	ck_assert_int_eq(raw_read_full(fd, frame + 4, total - 4), 0);
	ck_assert_int_eq(rpc_frame_parse(frame, total, 1u << 30, &env, &used),
			 RPC_FRAME_OK);
	free(frame);
	return env;
}
