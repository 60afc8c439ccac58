/* Taking frames off a libevent evbuffer (see evframe.h). */
#include "evframe.h"

rpc_frame_result rpc_evframe_take(struct evbuffer *in, size_t max_frame_bytes,
				  McreplRpc__Envelope **env_out)
{
	uint8_t prefix[RPC_FRAME_PREFIX_BYTES];
	size_t frame_len, consumed;
	rpc_frame_result r;
	ev_ssize_t n;
	uint8_t *buf;

	n = evbuffer_copyout(in, prefix, sizeof(prefix));
	r = rpc_frame_peek(prefix, n < 0 ? 0 : (size_t)n, max_frame_bytes,
			   &frame_len);
	if (r != RPC_FRAME_OK)
		return r;
	if (evbuffer_get_length(in) < frame_len)
		return RPC_FRAME_NEED_MORE;
	buf = evbuffer_pullup(in, (ev_ssize_t)frame_len);
	if (!buf)
		return RPC_FRAME_NOMEM;
	r = rpc_frame_parse(buf, frame_len, max_frame_bytes, env_out,
			    &consumed);
	evbuffer_drain(in, frame_len);
	return r;
}
