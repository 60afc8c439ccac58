/*
 * The worker data plane: a tiny binary protocol on each worker's data port
 * that moves object bytes (never protobuf on this path). Pure encode and
 * decode functions over byte buffers, no I/O.
 *
 * Request (client -> worker), DATA_REQ_BYTES = 56, all integers big-endian:
 *
 *     off  size  field
 *       0     4  magic        0x4D434450 ("MCDP")
 *       4     1  version      2 (1: no grants; refused)
 *       5     1  op           1 READ, 2 WRITE, 3 STATS
 *       6     2  reserved     0 (ignored by version 2 receivers)
 *       8     8  segment_id   the master's id of a segment on this worker
 *      16     8  offset       within the segment
 *      24     8  length       bytes to read or write
 *      32     8  object_id    the grant: the object (version) it names
 *      40     8  expires_ms   the grant's expiry, master clock (grant.h)
 *      48     8  tag          the grant's MAC (grant.h); 0 for STATS
 *
 * READ and WRITE need the master's grant for exactly this op, segment,
 * offset and length (grant.h, docs/SECURITY.md); STATS needs none.
 * A WRITE is followed by exactly `length` raw payload bytes. READ and STATS
 * carry no payload.
 *
 * Response (worker -> client), DATA_RESP_BYTES = 16:
 *
 *     off  size  field
 *       0     4  magic        0x4D434452 ("MCDR")
 *       4     2  status       enum data_status
 *       6     2  reserved     0
 *       8     8  length       payload bytes that follow
 *
 * Payload: READ OK -> the `length` bytes read; STATS OK -> DATA_STATS_BYTES
 * (reads, read_bytes, writes, write_bytes of the segment, 4 x u64 BE);
 * WRITE OK -> none; any error -> a one-line UTF-8 reason (at most
 * DATA_ERR_MAX bytes, no NUL).
 *
 * Semantics. A connection carries any number of requests, served in order
 * and answered in order, so a client may keep it open and pipeline. The
 * receiver may close a connection that has been idle (no request, no reply
 * pending) for its configured idle timeout; a client that keeps
 * connections must expect that and reconnect. A request is refused (error status,
 * connection kept) when its segment is unknown, its range is not inside
 * the segment, its length is above the receiver's configured maximum
 * (READ), its grant is forged or for anything else (DENIED), its grant has
 * expired (EXPIRED: ask the master again), or a READ's region no longer
 * starts with the stamp of the object its grant names (STALE); the payload of a refused WRITE
 * is read and discarded so the stream stays in step. A bad magic, an
 * unknown version or op, or a WRITE longer than the configured maximum
 * gets an error reply and the connection is closed. A granted WRITE whose
 * grant expires while its payload streams is cut there: the connection is
 * closed and no byte lands after the expiry.
 *
 * Thread-safety: every function is reentrant; no state is kept.
 */
#ifndef MCREPL_DAEMON_DATA_PROTO_H
#define MCREPL_DAEMON_DATA_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define DATA_REQ_MAGIC 0x4D434450u
#define DATA_RESP_MAGIC 0x4D434452u
#define DATA_VERSION 2u
#define DATA_REQ_BYTES 56u
/* magic and version: a receiver judges a request this far in */
#define DATA_REQ_PREFIX 8u
#define DATA_RESP_BYTES 16u
#define DATA_STATS_BYTES 32u
#define DATA_ERR_MAX 200u

enum data_op {
	DATA_OP_READ = 1,
	DATA_OP_WRITE = 2,
	DATA_OP_STATS = 3,
};

/* X(name, value, text): response statuses. STALE is no longer sent: a READ
 * whose region holds another object than its grant names is DENIED, as a
 * forged grant is (no oracle, grant.h); it stays for older workers. */
#define DATA_STATUS_MAP(X)                                                     \
	X(DATA_OK, 0, "ok")                                                    \
	X(DATA_E_BAD_REQUEST, 1, "bad request")                                \
	X(DATA_E_NO_SEGMENT, 2, "no such segment")                             \
	X(DATA_E_RANGE, 3, "range outside the segment")                        \
	X(DATA_E_DENIED, 4, "grant refused")                                   \
	X(DATA_E_TOO_LARGE, 5, "length above the configured maximum")          \
	X(DATA_E_INTERNAL, 6, "internal error")                                \
	X(DATA_E_EXPIRED, 7, "grant expired")                                  \
	X(DATA_E_STALE, 8, "region holds another object")

enum data_status {
#define DATA_STATUS_ENUM(name, value, text) name = value,
	DATA_STATUS_MAP(DATA_STATUS_ENUM)
#undef DATA_STATUS_ENUM
};

/* "grant refused", ...; "unknown status" for other values. */
const char *data_status_str(int status);

/* Bytes one read or write syscall may move on a data connection (libevent's
 * default is 16 KiB, far too small for bulk transfers). */
#define BULK_IO_BYTES (4u << 20)

/* The negative errno a refusal maps to: DENIED -EACCES, RANGE -ERANGE,
 * NO_SEGMENT -ENOENT, TOO_LARGE -EMSGSIZE, EXPIRED -EKEYEXPIRED, STALE
 * -ESTALE, anything else -EIO. */
int data_status_errno(uint16_t status);

/* The master's grant for one op on one region (grant.h). */
struct data_grant {
	uint64_t object_id;  /* the object (version) the region holds */
	uint64_t expires_ms; /* master clock */
	uint64_t tag;	     /* MAC; 0 = none */
};

struct data_req {
	uint8_t op; /* enum data_op */
	uint64_t segment_id, offset, length;
	struct data_grant grant;
};

struct data_resp {
	uint16_t status; /* enum data_status */
	uint64_t length;
};

struct data_stats {
	uint64_t reads, read_bytes, writes, write_bytes;
};

/* Results of decoding a request header. */
enum data_decode {
	DATA_DECODE_OK = 0,
	DATA_DECODE_BAD_MAGIC,	 /* not our protocol: close */
	DATA_DECODE_BAD_VERSION, /* close */
	DATA_DECODE_BAD_OP,	 /* close */
};

/* Writes the header of r into out. */
void data_req_encode(const struct data_req *r, uint8_t out[DATA_REQ_BYTES]);

/* Reads a header; *r is filled only on DATA_DECODE_OK. */
enum data_decode data_req_decode(const uint8_t in[DATA_REQ_BYTES],
				 struct data_req *r);

/* Judges the first DATA_REQ_PREFIX bytes of a header (magic, version): a
 * sender of another version is answered at once, not after a timeout. */
enum data_decode data_req_decode_prefix(const uint8_t in[DATA_REQ_PREFIX]);

/* Checks r against a segment of seg_len bytes and a per-request maximum
 * (0 = none): DATA_E_TOO_LARGE when length > max_len, DATA_E_RANGE when
 * [offset, offset+length) is not inside the segment (overflow-safe), else
 * DATA_OK. STATS requests always pass. */
enum data_status data_req_check(const struct data_req *r, uint64_t seg_len,
				uint64_t max_len);

void data_resp_encode(const struct data_resp *r, uint8_t out[DATA_RESP_BYTES]);

/* -1 on a bad magic, else 0 with *r filled. */
int data_resp_decode(const uint8_t in[DATA_RESP_BYTES], struct data_resp *r);

void data_stats_encode(const struct data_stats *s,
		       uint8_t out[DATA_STATS_BYTES]);
void data_stats_decode(const uint8_t in[DATA_STATS_BYTES],
		       struct data_stats *s);

#endif
