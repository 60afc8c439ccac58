/* Data-plane header codec: golden bytes both ways, refused headers, and
 * the range/size checks (overflow included). */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bytes.h"
#include "data_proto.h"

Suite *make_data_proto_suite(void);

struct golden_req {
	struct data_req req;
	uint8_t bytes[DATA_REQ_BYTES];
};

/* clang-format off */
static const struct golden_req golden_reqs[] = {
	{{DATA_OP_READ, 3, 0x1000, 0x20, {0, 0, 0}},
	 {0x4d, 0x43, 0x44, 0x50,		/* "MCDP" */
	  0x02, 0x01, 0x00, 0x00,		/* version 2, READ */
	  0, 0, 0, 0, 0, 0, 0, 0x03,		/* segment 3 */
	  0, 0, 0, 0, 0, 0, 0x10, 0x00,		/* offset 0x1000 */
	  0, 0, 0, 0, 0, 0, 0, 0x20,		/* length 0x20 */
	  0, 0, 0, 0, 0, 0, 0, 0,		/* no grant: object */
	  0, 0, 0, 0, 0, 0, 0, 0,		/* expiry */
	  0, 0, 0, 0, 0, 0, 0, 0}},		/* tag */
	{{DATA_OP_WRITE, 0x0102030405060708ULL, 0x1112131415161718ULL,
	  0x2122232425262728ULL,
	  {0x3132333435363738ULL, 0x4142434445464748ULL,
	   0xa1a2a3a4a5a6a7a8ULL}},
	 {0x4d, 0x43, 0x44, 0x50, 0x02, 0x02, 0x00, 0x00,
	  0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
	  0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18,
	  0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28,
	  0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38,
	  0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48,
	  0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8}},
	{{DATA_OP_STATS, 9, 0, 0, {0, 0, 0}},
	 {0x4d, 0x43, 0x44, 0x50, 0x02, 0x03, 0x00, 0x00,
	  0, 0, 0, 0, 0, 0, 0, 0x09,
	  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	  0, 0, 0, 0, 0, 0, 0, 0}},
};

/* status DENIED (4), 5 bytes of reason follow */
static const uint8_t golden_resp[DATA_RESP_BYTES] = {
	0x4d, 0x43, 0x44, 0x52, 0x00, 0x04, 0x00, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0x05,
};

static const uint8_t golden_stats[DATA_STATS_BYTES] = {
	0, 0, 0, 0, 0, 0, 0, 0x01,
	0, 0, 0, 0, 0, 0, 0x01, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0x02,
	0x80, 0, 0, 0, 0, 0, 0, 0x00,
};
/* clang-format on */
#define N_GOLDEN_REQS (int)(sizeof(golden_reqs) / sizeof(golden_reqs[0]))

START_TEST(test_req_encode_golden)
{
	const struct golden_req *g = &golden_reqs[_i];
	uint8_t out[DATA_REQ_BYTES];

	memset(out, 0xee, sizeof(out));
	data_req_encode(&g->req, out);
	ck_assert_mem_eq(out, g->bytes, DATA_REQ_BYTES);
}
END_TEST

START_TEST(test_req_decode_golden)
{
	const struct golden_req *g = &golden_reqs[_i];
	struct data_req r;

	ck_assert_int_eq(data_req_decode(g->bytes, &r), DATA_DECODE_OK);
	ck_assert_uint_eq(r.op, g->req.op);
	ck_assert_uint_eq(r.segment_id, g->req.segment_id);
	ck_assert_uint_eq(r.offset, g->req.offset);
	ck_assert_uint_eq(r.length, g->req.length);
	ck_assert_uint_eq(r.grant.object_id, g->req.grant.object_id);
	ck_assert_uint_eq(r.grant.expires_ms, g->req.grant.expires_ms);
	ck_assert_uint_eq(r.grant.tag, g->req.grant.tag);
}
END_TEST

/* Byte index, value written there, expected result. */
static const struct {
	int at;
	uint8_t value;
	enum data_decode want;
} bad_headers[] = {
    {0, 'X', DATA_DECODE_BAD_MAGIC},	{3, 0x51, DATA_DECODE_BAD_MAGIC},
    {4, 0x00, DATA_DECODE_BAD_VERSION}, {4, 0x01, DATA_DECODE_BAD_VERSION},
    {4, 0x03, DATA_DECODE_BAD_VERSION}, {5, 0x00, DATA_DECODE_BAD_OP},
    {5, 0x04, DATA_DECODE_BAD_OP},	{5, 0xff, DATA_DECODE_BAD_OP},
    {6, 0xff, DATA_DECODE_OK},
};

START_TEST(test_req_decode_refused)
{
	uint8_t buf[DATA_REQ_BYTES];
	struct data_req r = {0};

	memcpy(buf, golden_reqs[0].bytes, sizeof(buf));
	buf[bad_headers[_i].at] = bad_headers[_i].value;
	ck_assert_int_eq(data_req_decode(buf, &r), bad_headers[_i].want);
	/* magic and version are judged from the first bytes already */
	ck_assert_int_eq(data_req_decode_prefix(buf),
			 bad_headers[_i].want == DATA_DECODE_BAD_OP
			     ? DATA_DECODE_OK
			     : bad_headers[_i].want);
	if (bad_headers[_i].want != DATA_DECODE_OK)
		ck_assert_uint_eq(r.segment_id, 0); /* untouched */
}
END_TEST

static const struct {
	uint8_t op;
	uint64_t seg_len, max, offset, length;
	enum data_status want;
} checks[] = {
    {DATA_OP_READ, 100, 0, 0, 100, DATA_OK},
    {DATA_OP_READ, 100, 0, 99, 1, DATA_OK},
    {DATA_OP_READ, 100, 0, 100, 0, DATA_OK},
    {DATA_OP_READ, 100, 0, 100, 1, DATA_E_RANGE},
    {DATA_OP_READ, 100, 0, 101, 0, DATA_E_RANGE},
    {DATA_OP_WRITE, 100, 0, 50, 51, DATA_E_RANGE},
    {DATA_OP_WRITE, 100, 0, UINT64_MAX, 2, DATA_E_RANGE},
    {DATA_OP_WRITE, 100, 0, 2, UINT64_MAX, DATA_E_RANGE},
    {DATA_OP_WRITE, UINT64_MAX, 0, UINT64_MAX - 1, 1, DATA_OK},
    {DATA_OP_WRITE, 1000, 64, 0, 65, DATA_E_TOO_LARGE},
    {DATA_OP_WRITE, 1000, 64, 0, 64, DATA_OK},
    {DATA_OP_READ, 10, 64, 0, 65, DATA_E_TOO_LARGE},
    {DATA_OP_STATS, 0, 1, 5, 5, DATA_OK},
};

START_TEST(test_req_check)
{
	struct data_req r = {
	    checks[_i].op, 1, checks[_i].offset, checks[_i].length, {0, 0, 0}};

	ck_assert_int_eq(data_req_check(&r, checks[_i].seg_len, checks[_i].max),
			 checks[_i].want);
}
END_TEST

START_TEST(test_resp_golden)
{
	struct data_resp r = {DATA_E_DENIED, 5}, back;
	uint8_t out[DATA_RESP_BYTES], bad[DATA_RESP_BYTES];

	data_resp_encode(&r, out);
	ck_assert_mem_eq(out, golden_resp, sizeof(out));
	ck_assert_int_eq(data_resp_decode(golden_resp, &back), 0);
	ck_assert_uint_eq(back.status, DATA_E_DENIED);
	ck_assert_uint_eq(back.length, 5);
	memcpy(bad, golden_resp, sizeof(bad));
	bad[0] = 0;
	ck_assert_int_eq(data_resp_decode(bad, &back), -1);
}
END_TEST

START_TEST(test_stats_golden)
{
	struct data_stats s = {1, 256, 2, 0x8000000000000000ULL}, back;
	uint8_t out[DATA_STATS_BYTES];

	data_stats_encode(&s, out);
	ck_assert_mem_eq(out, golden_stats, sizeof(out));
	data_stats_decode(golden_stats, &back);
	ck_assert_mem_eq(&back, &s, sizeof(s));
}
END_TEST

START_TEST(test_status_names)
{
	ck_assert_str_eq(data_status_str(DATA_OK), "ok");
	ck_assert_str_eq(data_status_str(DATA_E_DENIED), "grant refused");
	ck_assert_str_eq(data_status_str(DATA_E_EXPIRED), "grant expired");
	ck_assert_str_eq(data_status_str(DATA_E_STALE),
			 "region holds another object");
	ck_assert_int_eq(data_status_errno(DATA_E_EXPIRED), -EKEYEXPIRED);
	ck_assert_int_eq(data_status_errno(DATA_E_STALE), -ESTALE);
	ck_assert_str_eq(data_status_str(DATA_E_RANGE),
			 "range outside the segment");
	ck_assert_str_eq(data_status_str(77), "unknown status");
	ck_assert_uint_eq(get_be64(golden_reqs[1].bytes + 8),
			  0x0102030405060708ULL);
}
END_TEST

Suite *make_data_proto_suite(void)
{
	Suite *s = suite_create("data_proto");
	TCase *tc = tcase_create("codec");

	tcase_add_loop_test(tc, test_req_encode_golden, 0, N_GOLDEN_REQS);
	tcase_add_loop_test(tc, test_req_decode_golden, 0, N_GOLDEN_REQS);
	tcase_add_loop_test(
	    tc, test_req_decode_refused, 0,
	    (int)(sizeof(bad_headers) / sizeof(bad_headers[0])));
	tcase_add_loop_test(tc, test_req_check, 0,
			    (int)(sizeof(checks) / sizeof(checks[0])));
	tcase_add_test(tc, test_resp_golden);
	tcase_add_test(tc, test_stats_golden);
	tcase_add_test(tc, test_status_names);
	suite_add_tcase(s, tc);
	return s;
}
