/* The Result of a Master response (see rpcresult.h). */
#include <check.h>
#include <string.h>

#include "rpcresult.h"

McreplRpc__Code rpc_result_code(const ProtobufCMessage *m)
{
	const ProtobufCFieldDescriptor *f;
	McreplRpc__Result *r;

	ck_assert_ptr_nonnull(m);
	f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
							    "result");
	ck_assert_ptr_nonnull(f);
	memcpy(&r, (const uint8_t *)m + f->offset, sizeof(r));
	return r ? r->code : MCREPL_RPC__CODE__OK;
}
