/* The Drain RPC (store_drain.c): a worker drains its own
 * segments (a worker principal naming a client id it mounted), an admin
 * client drains a host's (mcrepl-cli drain HOST). */
#include <stdio.h>

#include "service_priv.h"

void method_drain(McreplRpc__Master_Service *svc,
		  const McreplRpc__DrainRequest *req,
		  McreplRpc__DrainResponse_Closure done, void *cd)
{
	struct store *s = SVC(svc)->store;
	McreplRpc__DrainResponse resp;
	struct store_drain_figures f = {0};
	struct reply r = {0};
	McreplRpc__Code code;

	mcrepl_rpc__drain_response__init(&resp);
	code = store_drain_worker(s, req->client_id, req->host_id,
				  SVC(svc)->now_ms(), &f);
	if (code == MCREPL_RPC__CODE__NOT_FOUND)
		snprintf(r.msg, sizeof(r.msg),
			 "no segment of %s %.64s is mounted",
			 req->client_id ? "this client" : "host",
			 req->client_id ? "" : req->host_id);
	else if (code != MCREPL_RPC__CODE__OK)
		snprintf(r.msg, sizeof(r.msg),
			 "Drain names a client id or a host");
	resp.segments = f.segments;
	resp.objects_left = f.objects_left;
	resp.copies_queued = f.copies_queued;
	resp.copies_pending = f.copies_pending;
	resp.no_target = f.no_target;
	svc_reply(&r, code, NULL);
	resp.result = &r.result;
	done(&resp, cd);
}
