/* RegisterObjects: a worker re-registers the committed replicas it holds
 * with a new leader (docs/HA.md). Each record is checked and its region
 * reserved at its offset by store_recover(); refusals are counted, the
 * rest of the batch still goes in. Its row (methods.c) bounds the records
 * of one call and holds the store lock. */
#include <stdio.h>

#include "service_priv.h"

void method_register_objects(McreplRpc__Master_Service *svc,
			     const McreplRpc__RegisterObjectsRequest *req,
			     McreplRpc__RegisterObjectsResponse_Closure done,
			     void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__RegisterObjectsResponse resp;
	McreplRpc__Code code = MCREPL_RPC__CODE__OK;
	struct reply r = {0};
	char why[128] = "";

	mcrepl_rpc__register_objects_response__init(&resp);
	if (!store_term(s)) {
		snprintf(
		    r.msg, sizeof(r.msg),
		    "RegisterObjects is for masters with --etcd_endpoints");
		code = MCREPL_RPC__CODE__UNAVAILABLE;
	} else if (!store_client_known(s, req->client_id)) {
		code = MCREPL_RPC__CODE__UNKNOWN_CLIENT;
	} else {
		for (size_t i = 0; i < req->n_objects; i++) {
			if (store_recover(s, req->client_id, req->segment_id,
					  req->objects[i], SVC(svc)->now_ms(),
					  why,
					  sizeof(why)) == MCREPL_RPC__CODE__OK)
				resp.accepted++;
			else
				resp.refused++;
		}
		/* the last batch ends the hold: nothing after it is taken */
		if (req->last)
			store_hold_segment(s, req->client_id, req->segment_id,
					   0);
	}
	if (resp.refused)
		snprintf(r.msg, sizeof(r.msg), "%u refused, the last: %s",
			 resp.refused, why);
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}
