/* Frames (frame.h) taken from a libevent input buffer; shared by the
 * server and the asynchronous client. Thread-safety: as the evbuffer. */
#ifndef MCREPL_DAEMON_EVFRAME_H
#define MCREPL_DAEMON_EVFRAME_H

#include <event2/buffer.h>

#include "frame.h"

/* Takes the first whole frame off `in`. RPC_FRAME_OK: *env_out as in
 * rpc_frame_parse (caller frees) and the frame is drained.
 * RPC_FRAME_BAD_ENVELOPE: the frame is drained. RPC_FRAME_NEED_MORE,
 * RPC_FRAME_TOO_LARGE, RPC_FRAME_NOMEM: `in` is untouched. Only the frame
 * itself is linearised, never the whole buffer. */
rpc_frame_result rpc_evframe_take(struct evbuffer *in, size_t max_frame_bytes,
				  McreplRpc__Envelope **env_out);

#endif
