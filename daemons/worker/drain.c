/* Drain before stopping: on SIGTERM the worker asks the master
 * (Drain) to copy the objects whose every readable replica is here to
 * other workers, keeps serving reads and running those copies, asks again
 * every DRAIN_POLL_MS for progress, and stops (unmounts) once nothing is
 * left, nothing more can move, or --drain_timeout_ms is over. A master
 * that cannot drain (unreachable, older) means stopping at once. */
#include <stdio.h>

#include "log.h"
#include "netutil.h"
#include "worker.h"

#define DRAIN_POLL_MS 100

static void drained(struct worker *w, const char *how)
{
	log_line(LOG_INFO,
		 "drain %s after %lld ms (%llu copies "
		 "queued)",
		 how, (long long)(net_now_ms() - w->drain_started_ms),
		 (unsigned long long)w->drain_copies);
	worker_stop(w);
}

static void on_drain(int status, ProtobufCMessage *resp, const char *error,
		     void *arg)
{
	struct worker *w = arg;
	McreplRpc__DrainResponse *r = (McreplRpc__DrainResponse *)resp;
	char how[200];

	w->drain_pending = false;
	if (!w->draining) {
		/* stopped meanwhile */
	} else if (status != RPC_OK || !r->result ||
		   r->result->code != MCREPL_RPC__CODE__OK) {
		snprintf(how, sizeof(how), "refused (%s)",
			 status != RPC_OK		   ? error
			 : r->result && r->result->message ? r->result->message
							   : "?");
		drained(w, how);
	} else {
		w->drain_copies += r->copies_queued;
		if (r->objects_left == 0) {
			drained(w, "done: every object is served elsewhere");
		} else if (r->copies_pending == 0) {
			snprintf(how, sizeof(how),
				 "stopped: %llu object(s) no other worker can "
				 "take",
				 (unsigned long long)r->objects_left);
			drained(w, how);
		}
	}
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
}

static void ask(struct worker *w, int64_t now_ms)
{
	McreplRpc__DrainRequest req;

	mcrepl_rpc__drain_request__init(&req);
	req.client_id = w->client_id;
	req.timeout_ms = (uint64_t)(w->drain_deadline_ms - now_ms);
	w->drain_pending = true;
	w->next_drain_ms = now_ms + DRAIN_POLL_MS;
	worker_call(w, "Drain", &req.base,
		    &mcrepl_rpc__drain_response__descriptor, on_drain, w);
}

bool drain_begin(struct worker *w)
{
	int64_t now = net_now_ms();

	if (!w->flags.drain_timeout_ms || !w->ready || !worker_all_mounted(w) ||
	    !w->flags.master[0])
		return false;
	log_line(LOG_INFO,
		 "draining: the objects only this worker holds "
		 "go to others first (up to %u ms; signal again to stop now)",
		 w->flags.drain_timeout_ms);
	w->draining = true;
	w->drain_started_ms = now;
	w->drain_deadline_ms = now + w->flags.drain_timeout_ms;
	w->drain_copies = 0;
	ask(w, now);
	return true;
}

void drain_tick(struct worker *w, int64_t now_ms)
{
	if (!w->draining || w->drain_pending)
		return;
	if (now_ms >= w->drain_deadline_ms)
		drained(w, "timed out (--drain_timeout_ms)");
	else if (now_ms >= w->next_drain_ms)
		ask(w, now_ms);
}
