/* Data-plane header codec (see data_proto.h). */
#include <errno.h>
#include "bytes.h"
#include "data_proto.h"
#include "span.h"

const char *data_status_str(int status)
{
	switch (status) {
#define DATA_STATUS_CASE(name, value, text)                                    \
	case name:                                                             \
		return text;
		DATA_STATUS_MAP(DATA_STATUS_CASE)
#undef DATA_STATUS_CASE
	default:
		return "unknown status";
	}
}

void data_req_encode(const struct data_req *r, uint8_t out[DATA_REQ_BYTES])
{
	put_be32(out, DATA_REQ_MAGIC);
	out[4] = DATA_VERSION;
	out[5] = r->op;
	out[6] = out[7] = 0;
	put_be64(out + 8, r->segment_id);
	put_be64(out + 16, r->offset);
	put_be64(out + 24, r->length);
	put_be64(out + 32, r->grant.object_id);
	put_be64(out + 40, r->grant.expires_ms);
	put_be64(out + 48, r->grant.tag);
}

enum data_decode data_req_decode_prefix(const uint8_t in[DATA_REQ_PREFIX])
{
	if (get_be32(in) != DATA_REQ_MAGIC)
		return DATA_DECODE_BAD_MAGIC;
	if (in[4] != DATA_VERSION)
		return DATA_DECODE_BAD_VERSION;
	return DATA_DECODE_OK;
}

enum data_decode data_req_decode(const uint8_t in[DATA_REQ_BYTES],
				 struct data_req *r)
{
	enum data_decode d = data_req_decode_prefix(in);

	if (d != DATA_DECODE_OK)
		return d;
	if (in[5] < DATA_OP_READ || in[5] > DATA_OP_STATS)
		return DATA_DECODE_BAD_OP;
	r->op = in[5];
	r->segment_id = get_be64(in + 8);
	r->offset = get_be64(in + 16);
	r->length = get_be64(in + 24);
	r->grant.object_id = get_be64(in + 32);
	r->grant.expires_ms = get_be64(in + 40);
	r->grant.tag = get_be64(in + 48);
	return DATA_DECODE_OK;
}

enum data_status data_req_check(const struct data_req *r, uint64_t seg_len,
				uint64_t max_len)
{
	if (r->op == DATA_OP_STATS)
		return DATA_OK;
	if (max_len && r->length > max_len)
		return DATA_E_TOO_LARGE;
	if (!span_within(r->offset, r->length, seg_len))
		return DATA_E_RANGE;
	return DATA_OK;
}

void data_resp_encode(const struct data_resp *r, uint8_t out[DATA_RESP_BYTES])
{
	put_be32(out, DATA_RESP_MAGIC);
	out[4] = (uint8_t)(r->status >> 8);
	out[5] = (uint8_t)r->status;
	out[6] = out[7] = 0;
	put_be64(out + 8, r->length);
}

int data_resp_decode(const uint8_t in[DATA_RESP_BYTES], struct data_resp *r)
{
	if (get_be32(in) != DATA_RESP_MAGIC)
		return -1;
	r->status = (uint16_t)(in[4] << 8 | in[5]);
	r->length = get_be64(in + 8);
	return 0;
}

void data_stats_encode(const struct data_stats *s,
		       uint8_t out[DATA_STATS_BYTES])
{
	put_be64(out, s->reads);
	put_be64(out + 8, s->read_bytes);
	put_be64(out + 16, s->writes);
	put_be64(out + 24, s->write_bytes);
}

void data_stats_decode(const uint8_t in[DATA_STATS_BYTES], struct data_stats *s)
{
	s->reads = get_be64(in);
	s->read_bytes = get_be64(in + 8);
	s->writes = get_be64(in + 16);
	s->write_bytes = get_be64(in + 24);
}

int data_status_errno(uint16_t status)
{
	switch (status) {
	case DATA_E_DENIED:
		return -EACCES;
	case DATA_E_RANGE:
		return -ERANGE;
	case DATA_E_NO_SEGMENT:
		return -ENOENT;
	case DATA_E_TOO_LARGE:
		return -EMSGSIZE;
	case DATA_E_EXPIRED:
		return -EKEYEXPIRED;
	case DATA_E_STALE:
		return -ESTALE;
	default:
		return -EIO;
	}
}
