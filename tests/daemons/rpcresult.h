/* The Result of a Master response, shared by the daemon suites that make
 * raw RPC calls. */
#ifndef MCREPL_TESTS_RPCRESULT_H
#define MCREPL_TESTS_RPCRESULT_H

#include <protobuf-c/protobuf-c.h>

#include "mcrepl.pb-c.h"

/* The code of m's `Result result` field (OK when it is absent); fails the
 * running test when m is NULL or has no such field. */
McreplRpc__Code rpc_result_code(const ProtobufCMessage *m);

#endif
