/*
 * The worker data-plane header codec (runtime/data/data_proto.h), as
 * runtime/data/data_server.c and runtime/client/data_client.c use it. The
 * input is cut into a 40-byte request header, a segment length and a
 * per-request maximum (8 bytes each, big-endian), a 16-byte response header
 * and a 32-byte stats payload; missing bytes are zero.
 *
 * Properties: data_req_decode accepts exactly the right magic, version and
 * ops, leaves the request untouched otherwise, and re-encodes to the input
 * (reserved bytes zeroed); a request that passes data_req_check against
 * the fixed SEG_LEN or the input's segment length and maximum lies inside
 * the segment and under the maximum, and every such request passes (STATS
 * always); data_resp_decode refuses exactly a bad magic and round trips;
 * stats round trip exactly; status texts and errnos are total.
 */
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "data_proto.h"
#include "fuzz.h"

#define SEG_LEN (1u << 20)
#define IN_BYTES (DATA_REQ_BYTES + 16 + DATA_RESP_BYTES + DATA_STATS_BYTES)

static bool inside(const struct data_req *r, uint64_t seg_len, uint64_t max)
{
	uint64_t end;

	if (max && r->length > max)
		return false;
	return !__builtin_add_overflow(r->offset, r->length, &end) &&
	       end <= seg_len;
}

static void check_req(const uint8_t *in, uint64_t seg_len, uint64_t max)
{
	struct data_req r, untouched;
	uint8_t out[DATA_REQ_BYTES];
	enum data_decode d;
	enum data_status st;

	memset(&r, 0xa5, sizeof(r));
	untouched = r;
	d = data_req_decode(in, &r);
	if (get_be32(in) != DATA_REQ_MAGIC)
		FUZZ_CHECK(d == DATA_DECODE_BAD_MAGIC);
	else if (in[4] != DATA_VERSION)
		FUZZ_CHECK(d == DATA_DECODE_BAD_VERSION);
	else if (in[5] < DATA_OP_READ || in[5] > DATA_OP_STATS)
		FUZZ_CHECK(d == DATA_DECODE_BAD_OP);
	else
		FUZZ_CHECK(d == DATA_DECODE_OK);
	if (d != DATA_DECODE_OK) {
		FUZZ_CHECK(memcmp(&r, &untouched, sizeof(r)) == 0);
		return;
	}
	data_req_encode(&r, out);
	FUZZ_CHECK(memcmp(out, in, 6) == 0 && out[6] == 0 && out[7] == 0);
	FUZZ_CHECK(memcmp(out + 8, in + 8, DATA_REQ_BYTES - 8) == 0);

	st = data_req_check(&r, seg_len, max);
	if (r.op == DATA_OP_STATS)
		FUZZ_CHECK(st == DATA_OK);
	else if (inside(&r, seg_len, max))
		FUZZ_CHECK(st == DATA_OK);
	else
		FUZZ_CHECK(st == (max && r.length > max ? DATA_E_TOO_LARGE
							: DATA_E_RANGE));
}

static void check_resp(const uint8_t *in)
{
	struct data_resp r;
	uint8_t out[DATA_RESP_BYTES];

	if (data_resp_decode(in, &r) != 0) {
		FUZZ_CHECK(get_be32(in) != DATA_RESP_MAGIC);
		return;
	}
	FUZZ_CHECK(get_be32(in) == DATA_RESP_MAGIC);
	data_resp_encode(&r, out);
	FUZZ_CHECK(memcmp(out, in, 6) == 0 && out[6] == 0 && out[7] == 0);
	FUZZ_CHECK(memcmp(out + 8, in + 8, DATA_RESP_BYTES - 8) == 0);
	FUZZ_CHECK(data_status_str(r.status) != NULL);
	FUZZ_CHECK(data_status_errno(r.status) < 0);
}

static void check_stats(const uint8_t *in)
{
	struct data_stats s;
	uint8_t out[DATA_STATS_BYTES];

	data_stats_decode(in, &s);
	data_stats_encode(&s, out);
	FUZZ_CHECK(memcmp(out, in, DATA_STATS_BYTES) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t in[IN_BYTES] = {0};
	const uint8_t *p = in;

	memcpy(in, data, size < IN_BYTES ? size : IN_BYTES);
	check_req(p, SEG_LEN, 0);
	check_req(p, get_be64(p + DATA_REQ_BYTES),
		  get_be64(p + DATA_REQ_BYTES + 8));
	p += DATA_REQ_BYTES + 16;
	check_resp(p);
	p += DATA_RESP_BYTES;
	check_stats(p);
	return 0;
}
