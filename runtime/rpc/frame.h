/* RPC frame codec: pure functions over byte buffers, no I/O.
 *
 * A frame on the wire (TCP, both directions):
 *
 *     +----------------------+---------------------------------+
 *     | N: uint32 big-endian | N bytes: packed mcrepl.Envelope |
 *     +----------------------+---------------------------------+
 *
 * Envelope { request_id, method, status, error, body }: `method` is the index
 * in the generated Master service descriptor, `body` the packed request or
 * response message of that method. N counts the envelope bytes only (not the
 * 4 prefix bytes). N = 0 is a valid frame (an all-default envelope). A
 * receiver refuses N > max_frame_bytes before reading the envelope.
 *
 * Thread-safety: every function is reentrant; no state is kept.
 */
#ifndef MCREPL_DAEMON_FRAME_H
#define MCREPL_DAEMON_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl.pb-c.h"

#define RPC_FRAME_PREFIX_BYTES 4u
#define RPC_FRAME_DEFAULT_MAX_BYTES (16u * 1024u * 1024u)

typedef enum rpc_frame_result {
	RPC_FRAME_OK = 0,
	RPC_FRAME_NEED_MORE,	/* not a whole frame yet: read more bytes */
	RPC_FRAME_TOO_LARGE,	/* N > max_frame_bytes: refuse and close */
	RPC_FRAME_BAD_ENVELOPE, /* N bytes present but unpack failed */
	RPC_FRAME_NOMEM,	/* encode: allocation failed */
	RPC_FRAME_INVALID,	/* encode: envelope would exceed UINT32_MAX */
} rpc_frame_result;

/* The fields of an envelope, borrowed by the encoders (nothing is kept). */
typedef struct rpc_frame_head {
	uint64_t request_id;
	uint32_t method;
	McreplRpc__Code status;
	const char *error; /* NULL = "" */
} rpc_frame_head;

/* Encodes head + body bytes into one malloc'd frame. On RPC_FRAME_OK the
 * caller owns *frame_out (free()) of *len_out bytes; on error both are left
 * untouched. body may be NULL when body_len is 0. */
rpc_frame_result rpc_frame_encode(const rpc_frame_head *head,
				  const uint8_t *body, size_t body_len,
				  uint8_t **frame_out, size_t *len_out);

/* As rpc_frame_encode, packing `body` (NULL = empty body) as the body. */
rpc_frame_result rpc_frame_encode_msg(const rpc_frame_head *head,
				      const ProtobufCMessage *body,
				      uint8_t **frame_out, size_t *len_out);

/* Reads the length prefix at buf. RPC_FRAME_NEED_MORE if len < 4;
 * RPC_FRAME_TOO_LARGE if N > max_frame_bytes; else RPC_FRAME_OK with
 * *frame_len = 4 + N (the whole frame, which may not all be in buf yet). */
rpc_frame_result rpc_frame_peek(const uint8_t *buf, size_t len,
				size_t max_frame_bytes, size_t *frame_len);

/* The len bytes at buf start an HTTP response ("HTTP/1.1 400 ..."): a
 * client dialed an HTTP port (the master's /metrics) for RPC. */
bool rpc_frame_is_http(const uint8_t *buf, size_t len);

/* Tries to take one frame from the start of buf. On RPC_FRAME_OK *env_out is
 * the unpacked envelope, owned by the caller (free it with
 * protobuf_c_message_free_unpacked(&env->base, NULL)), and *consumed is the
 * frame's length. On RPC_FRAME_BAD_ENVELOPE *consumed is also set, so the
 * caller may skip the frame; otherwise the outputs are untouched. */
rpc_frame_result rpc_frame_parse(const uint8_t *buf, size_t len,
				 size_t max_frame_bytes,
				 McreplRpc__Envelope **env_out,
				 size_t *consumed);

/* A short name for a result ("ok", "need-more", ...), never NULL. */
const char *rpc_frame_result_str(rpc_frame_result r);

#endif
