/* Frame codec: golden bytes (hand-encoded from the protobuf wire format),
 * partial input, limits and malformed envelopes. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "evframe.h"
#include "frame.h"

Suite *make_frame_suite(void);

/* clang-format off */
/* ExistRequest { tenant: "t", key: "yes" } */
static const uint8_t exist_body[] = {0x0a, 0x01, 't', 0x12, 0x03, 'y', 'e', 's'};
/* clang-format on */

struct golden {
	rpc_frame_head head;
	const uint8_t *body;
	size_t body_len;
	const uint8_t *frame;
	size_t frame_len;
};

/* clang-format off */
/* id 1, method 8 (Exist), status OK, no error, body exist_body. */
static const uint8_t frame_call[] = {
	0x00, 0x00, 0x00, 0x0e,			/* N = 14 */
	0x08, 0x01,				/* request_id = 1 */
	0x10, 0x08,				/* method = 8 */
	0x2a, 0x08,				/* body: 8 bytes */
	0x0a, 0x01, 't', 0x12, 0x03, 'y', 'e', 's',
};

/* id 300, method 99, status UNKNOWN_METHOD, error "no", no body. */
static const uint8_t frame_error[] = {
	0x00, 0x00, 0x00, 0x0b,			/* N = 11 */
	0x08, 0xac, 0x02,			/* request_id = 300 (varint) */
	0x10, 0x63,				/* method = 99 */
	0x18, 0x0c,				/* status = 12 */
	0x22, 0x02, 'n', 'o',			/* error = "no" */
};
/* clang-format on */

/* All defaults: an empty envelope. */
static const uint8_t frame_empty[] = {0x00, 0x00, 0x00, 0x00};

static const struct golden goldens[] = {
    {{1, 8, MCREPL_RPC__CODE__OK, NULL},
     exist_body,
     sizeof(exist_body),
     frame_call,
     sizeof(frame_call)},
    {{300, 99, MCREPL_RPC__CODE__UNKNOWN_METHOD, "no"},
     NULL,
     0,
     frame_error,
     sizeof(frame_error)},
    {{0, 0, MCREPL_RPC__CODE__OK, ""},
     NULL,
     0,
     frame_empty,
     sizeof(frame_empty)},
};
#define N_GOLDENS (int)(sizeof(goldens) / sizeof(goldens[0]))

START_TEST(test_golden_encode)
{
	const struct golden *g = &goldens[_i];
	uint8_t *frame = NULL;
	size_t len = 0;

	ck_assert_int_eq(
	    rpc_frame_encode(&g->head, g->body, g->body_len, &frame, &len),
	    RPC_FRAME_OK);
	ck_assert_uint_eq(len, g->frame_len);
	ck_assert_mem_eq(frame, g->frame, len);
	free(frame);
}
END_TEST

START_TEST(test_golden_parse)
{
	const struct golden *g = &goldens[_i];
	McreplRpc__Envelope *env = NULL;
	size_t used = 0;

	ck_assert_int_eq(
	    rpc_frame_parse(g->frame, g->frame_len, 1024, &env, &used),
	    RPC_FRAME_OK);
	ck_assert_uint_eq(used, g->frame_len);
	ck_assert_uint_eq(env->request_id, g->head.request_id);
	ck_assert_uint_eq(env->method, g->head.method);
	ck_assert_int_eq(env->status, g->head.status);
	ck_assert_str_eq(env->error, g->head.error ? g->head.error : "");
	ck_assert_uint_eq(env->body.len, g->body_len);
	if (g->body_len)
		ck_assert_mem_eq(env->body.data, g->body, g->body_len);
	protobuf_c_message_free_unpacked(&env->base, NULL);
}
END_TEST

/* Every strict prefix of a frame asks for more and touches no output. */
START_TEST(test_need_more)
{
	McreplRpc__Envelope *env = NULL;
	size_t used = 12345;

	ck_assert_int_eq(
	    rpc_frame_parse(frame_call, (size_t)_i, 1024, &env, &used),
	    RPC_FRAME_NEED_MORE);
	ck_assert_ptr_null(env);
	ck_assert_uint_eq(used, 12345);
}
END_TEST

START_TEST(test_encode_msg_matches_golden)
{
	rpc_frame_head head = {1, 8, MCREPL_RPC__CODE__OK, NULL};
	char tenant[] = "t", key[] = "yes";
	McreplRpc__ExistRequest req;
	uint8_t *frame = NULL;
	size_t len = 0;

	mcrepl_rpc__exist_request__init(&req);
	req.tenant = tenant;
	req.key = key;
	ck_assert_int_eq(rpc_frame_encode_msg(&head, &req.base, &frame, &len),
			 RPC_FRAME_OK);
	ck_assert_uint_eq(len, sizeof(frame_call));
	ck_assert_mem_eq(frame, frame_call, len);
	free(frame);
}
END_TEST

START_TEST(test_too_large)
{
	static const uint8_t at_max[] = {0x00, 0x00, 0x04, 0x00};
	static const uint8_t over[] = {0x00, 0x00, 0x04, 0x01};
	static const uint8_t huge[] = {0xff, 0xff, 0xff, 0xff};
	McreplRpc__Envelope *env = NULL;
	size_t used = 0, total = 0;

	/* N == max is allowed (and incomplete here); N == max + 1 is not. */
	ck_assert_int_eq(rpc_frame_peek(at_max, 4, 1024, &total), RPC_FRAME_OK);
	ck_assert_uint_eq(total, 1028);
	ck_assert_int_eq(rpc_frame_parse(at_max, 4, 1024, &env, &used),
			 RPC_FRAME_NEED_MORE);
	ck_assert_int_eq(rpc_frame_parse(over, 4, 1024, &env, &used),
			 RPC_FRAME_TOO_LARGE);
	ck_assert_int_eq(
	    rpc_frame_parse(huge, 4, RPC_FRAME_DEFAULT_MAX_BYTES, &env, &used),
	    RPC_FRAME_TOO_LARGE);
	ck_assert_ptr_null(env);
}
END_TEST

/* Wire bytes that are not an Envelope: the frame is still skippable. */
START_TEST(test_bad_envelope)
{
	/* field 1 as a varint that never ends; then a truncated string */
	static const uint8_t bad1[] = {0x00, 0x00, 0x00, 0x03,
				       0x08, 0xff, 0xff};
	static const uint8_t bad2[] = {0x00, 0x00, 0x00, 0x02, 0x22, 0x05};
	McreplRpc__Envelope *env = NULL;
	size_t used = 0;

	ck_assert_int_eq(rpc_frame_parse(bad1, sizeof(bad1), 1024, &env, &used),
			 RPC_FRAME_BAD_ENVELOPE);
	ck_assert_uint_eq(used, sizeof(bad1));
	ck_assert_int_eq(rpc_frame_parse(bad2, sizeof(bad2), 1024, &env, &used),
			 RPC_FRAME_BAD_ENVELOPE);
	ck_assert_uint_eq(used, sizeof(bad2));
	ck_assert_ptr_null(env);
}
END_TEST

/* Two frames back to back come out one at a time, in order. */
START_TEST(test_back_to_back)
{
	uint8_t buf[sizeof(frame_call) + sizeof(frame_error)];
	McreplRpc__Envelope *env = NULL;
	size_t used = 0;

	memcpy(buf, frame_call, sizeof(frame_call));
	memcpy(buf + sizeof(frame_call), frame_error, sizeof(frame_error));
	ck_assert_int_eq(rpc_frame_parse(buf, sizeof(buf), 64, &env, &used),
			 RPC_FRAME_OK);
	ck_assert_uint_eq(used, sizeof(frame_call));
	ck_assert_uint_eq(env->request_id, 1);
	protobuf_c_message_free_unpacked(&env->base, NULL);
	ck_assert_int_eq(
	    rpc_frame_parse(buf + used, sizeof(buf) - used, 64, &env, &used),
	    RPC_FRAME_OK);
	ck_assert_uint_eq(env->request_id, 300);
	protobuf_c_message_free_unpacked(&env->base, NULL);
}
END_TEST

/* The evbuffer adapter: frames split across adds, then drained. */
START_TEST(test_evframe)
{
	struct evbuffer *in = evbuffer_new();
	McreplRpc__Envelope *env = NULL;

	evbuffer_add(in, frame_call, 3);
	ck_assert_int_eq(rpc_evframe_take(in, 64, &env), RPC_FRAME_NEED_MORE);
	evbuffer_add(in, frame_call + 3, sizeof(frame_call) - 3);
	evbuffer_add(in, frame_error, 5);
	ck_assert_int_eq(rpc_evframe_take(in, 64, &env), RPC_FRAME_OK);
	ck_assert_uint_eq(env->request_id, 1);
	protobuf_c_message_free_unpacked(&env->base, NULL);
	ck_assert_uint_eq(evbuffer_get_length(in), 5);
	ck_assert_int_eq(rpc_evframe_take(in, 64, &env), RPC_FRAME_NEED_MORE);
	ck_assert_int_eq(rpc_evframe_take(in, 8, &env), RPC_FRAME_TOO_LARGE);
	ck_assert_uint_eq(evbuffer_get_length(in), 5);
	evbuffer_free(in);
}
END_TEST

START_TEST(test_result_names)
{
	ck_assert_str_eq(rpc_frame_result_str(RPC_FRAME_OK), "ok");
	ck_assert_str_eq(rpc_frame_result_str(RPC_FRAME_NEED_MORE),
			 "need-more");
	ck_assert_str_eq(rpc_frame_result_str(RPC_FRAME_TOO_LARGE),
			 "frame-too-large");
	ck_assert_str_eq(rpc_frame_result_str(RPC_FRAME_BAD_ENVELOPE),
			 "bad-envelope");
}
END_TEST

Suite *make_frame_suite(void)
{
	Suite *s = suite_create("frame");
	TCase *tc = tcase_create("codec");

	tcase_add_loop_test(tc, test_golden_encode, 0, N_GOLDENS);
	tcase_add_loop_test(tc, test_golden_parse, 0, N_GOLDENS);
	tcase_add_loop_test(tc, test_need_more, 0, (int)sizeof(frame_call));
	tcase_add_test(tc, test_encode_msg_matches_golden);
	tcase_add_test(tc, test_too_large);
	tcase_add_test(tc, test_bad_envelope);
	tcase_add_test(tc, test_back_to_back);
	tcase_add_test(tc, test_evframe);
	tcase_add_test(tc, test_result_names);
	suite_add_tcase(s, tc);
	return s;
}
