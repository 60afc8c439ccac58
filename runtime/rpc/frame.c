/* RPC frame codec: length prefix + packed Envelope (see frame.h). */
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "frame.h"

rpc_frame_result rpc_frame_encode(const rpc_frame_head *head,
				  const uint8_t *body, size_t body_len,
				  uint8_t **frame_out, size_t *len_out)
{
	McreplRpc__Envelope env;
	uint8_t *frame;
	size_t n;

	mcrepl_rpc__envelope__init(&env);
	env.request_id = head->request_id;
	env.method = head->method;
	env.status = head->status;
	/* protobuf-c never writes through the string while packing. */
	env.error = (char *)(uintptr_t)(head->error ? head->error : "");
	env.body.data = (uint8_t *)(uintptr_t)body;
	env.body.len = body ? body_len : 0;
	n = mcrepl_rpc__envelope__get_packed_size(&env);
	if (n > UINT32_MAX)
		return RPC_FRAME_INVALID;
	frame = malloc(RPC_FRAME_PREFIX_BYTES + n);
	if (!frame)
		return RPC_FRAME_NOMEM;
	put_be32(frame, (uint32_t)n);
	mcrepl_rpc__envelope__pack(&env, frame + RPC_FRAME_PREFIX_BYTES);
	*frame_out = frame;
	*len_out = RPC_FRAME_PREFIX_BYTES + n;
	return RPC_FRAME_OK;
}

rpc_frame_result rpc_frame_encode_msg(const rpc_frame_head *head,
				      const ProtobufCMessage *body,
				      uint8_t **frame_out, size_t *len_out)
{
	rpc_frame_result r;
	uint8_t *buf = NULL;
	size_t n = 0;

	if (body) {
		n = protobuf_c_message_get_packed_size(body);
		buf = malloc(n ? n : 1);
		if (!buf)
			return RPC_FRAME_NOMEM;
		protobuf_c_message_pack(body, buf);
	}
	r = rpc_frame_encode(head, buf, n, frame_out, len_out);
	free(buf);
	return r;
}

rpc_frame_result rpc_frame_peek(const uint8_t *buf, size_t len,
				size_t max_frame_bytes, size_t *frame_len)
{
	uint32_t n;

	if (len < RPC_FRAME_PREFIX_BYTES)
		return RPC_FRAME_NEED_MORE;
	n = get_be32(buf);
	if (n > max_frame_bytes)
		return RPC_FRAME_TOO_LARGE;
	*frame_len = RPC_FRAME_PREFIX_BYTES + (size_t)n;
	return RPC_FRAME_OK;
}

bool rpc_frame_is_http(const uint8_t *buf, size_t len)
{
	return len >= 4 && memcmp(buf, "HTTP", 4) == 0;
}

rpc_frame_result rpc_frame_parse(const uint8_t *buf, size_t len,
				 size_t max_frame_bytes,
				 McreplRpc__Envelope **env_out,
				 size_t *consumed)
{
	McreplRpc__Envelope *env;
	rpc_frame_result r;
	size_t total;

	r = rpc_frame_peek(buf, len, max_frame_bytes, &total);
	if (r != RPC_FRAME_OK)
		return r;
	if (len < total)
		return RPC_FRAME_NEED_MORE;
	*consumed = total;
	env = mcrepl_rpc__envelope__unpack(NULL, total - RPC_FRAME_PREFIX_BYTES,
					   buf + RPC_FRAME_PREFIX_BYTES);
	if (!env)
		return RPC_FRAME_BAD_ENVELOPE;
	*env_out = env;
	return RPC_FRAME_OK;
}

const char *rpc_frame_result_str(rpc_frame_result r)
{
	switch (r) {
	case RPC_FRAME_OK:
		return "ok";
	case RPC_FRAME_NEED_MORE:
		return "need-more";
	case RPC_FRAME_TOO_LARGE:
		return "frame-too-large";
	case RPC_FRAME_BAD_ENVELOPE:
		return "bad-envelope";
	case RPC_FRAME_NOMEM:
		return "out-of-memory";
	case RPC_FRAME_INVALID:
		return "invalid";
	}
	return "unknown";
}
