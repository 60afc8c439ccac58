/* Data-plane header codec (see data_proto.h). */
#include <errno.h>
#include "data_proto.h"

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

void data_put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

uint64_t data_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

void data_req_encode(const struct data_req *r, uint8_t out[DATA_REQ_BYTES])
{
	put_be32(out, DATA_REQ_MAGIC);
	out[4] = DATA_VERSION;
	out[5] = r->op;
	out[6] = out[7] = 0;
	data_put_be64(out + 8, r->segment_id);
	data_put_be64(out + 16, r->offset);
	data_put_be64(out + 24, r->length);
	data_put_be64(out + 32, r->write_token);
}

enum data_decode data_req_decode(const uint8_t in[DATA_REQ_BYTES],
				 struct data_req *r)
{
	if (get_be32(in) != DATA_REQ_MAGIC)
		return DATA_DECODE_BAD_MAGIC;
	if (in[4] != DATA_VERSION)
		return DATA_DECODE_BAD_VERSION;
	if (in[5] < DATA_OP_READ || in[5] > DATA_OP_STATS)
		return DATA_DECODE_BAD_OP;
	r->op = in[5];
	r->segment_id = data_get_be64(in + 8);
	r->offset = data_get_be64(in + 16);
	r->length = data_get_be64(in + 24);
	r->write_token = data_get_be64(in + 32);
	return DATA_DECODE_OK;
}

enum data_status data_req_check(const struct data_req *r, uint64_t seg_len,
				uint64_t max_len)
{
	if (r->op == DATA_OP_STATS)
		return DATA_OK;
	if (max_len && r->length > max_len)
		return DATA_E_TOO_LARGE;
	if (r->offset > seg_len || r->length > seg_len - r->offset)
		return DATA_E_RANGE;
	return DATA_OK;
}

void data_resp_encode(const struct data_resp *r, uint8_t out[DATA_RESP_BYTES])
{
	put_be32(out, DATA_RESP_MAGIC);
	out[4] = (uint8_t)(r->status >> 8);
	out[5] = (uint8_t)r->status;
	out[6] = out[7] = 0;
	data_put_be64(out + 8, r->length);
}

int data_resp_decode(const uint8_t in[DATA_RESP_BYTES], struct data_resp *r)
{
	if (get_be32(in) != DATA_RESP_MAGIC)
		return -1;
	r->status = (uint16_t)(in[4] << 8 | in[5]);
	r->length = data_get_be64(in + 8);
	return 0;
}

void data_stats_encode(const struct data_stats *s,
		       uint8_t out[DATA_STATS_BYTES])
{
	data_put_be64(out, s->reads);
	data_put_be64(out + 8, s->read_bytes);
	data_put_be64(out + 16, s->writes);
	data_put_be64(out + 24, s->write_bytes);
}

void data_stats_decode(const uint8_t in[DATA_STATS_BYTES], struct data_stats *s)
{
	s->reads = data_get_be64(in);
	s->read_bytes = data_get_be64(in + 8);
	s->writes = data_get_be64(in + 16);
	s->write_bytes = data_get_be64(in + 24);
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
	default:
		return -EIO;
	}
}
