/* The worker's link to the master: mount, heartbeat (re-mount when the
 * master answers UNKNOWN_CLIENT), unmount at shutdown. All asynchronous. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "netutil.h"
#include "rpc_auth.h"
#include "worker.h"

#define MOUNT_RETRY_MS 1000 /* doubling per failure in a row, to 8 s */
#define MOUNT_BACKOFF_MAX 3

void worker_call(struct worker *w, const char *name,
		 const ProtobufCMessage *req,
		 const ProtobufCMessageDescriptor *resp_desc, rpc_aclient_cb cb,
		 void *arg)
{
	int m = rpc_method_index(&mcrepl_rpc__master__descriptor, name);
	int st = m < 0 ? RPC_E_INVALID
		       : rpc_aclient_call(w->rpc, (uint32_t)m, req, resp_desc,
					  cb, arg);

	if (st != RPC_OK)
		cb(st, NULL, rpc_status_str(st), arg);
}

struct wseg *worker_segment(struct worker *w, uint64_t id)
{
	for (uint32_t i = 0; id && i < w->n_segs; i++)
		if (w->segs[i].id == id && w->segs[i].mounted)
			return &w->segs[i];
	return NULL;
}

uint32_t worker_mounted_count(const struct worker *w)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < w->n_segs; i++)
		n += w->segs[i].mounted;
	return n;
}

bool worker_all_mounted(const struct worker *w)
{
	return worker_mounted_count(w) == w->n_segs;
}

/* Logs a master failure once per outage (the loop retries quietly). */
static void master_down(struct worker *w, const char *what, const char *why)
{
	ha_master_failed(w, NULL); /* HA: look the leader up again */
	if (w->master_down_logged)
		return;
	w->master_down_logged = true;
	log_line(LOG_WARN, "%s: master %s: %s (retrying)", what,
		 w->flags.master, why);
}

/* What the operator must fix after a refusal no retry changes, or NULL
 * when a retry may succeed: the credential (the handshake failed), what
 * the auth file allows this principal, a request the master calls
 * invalid (the worker's flags). */
static const char *permanent(int status, const McreplRpc__Result *r)
{
	static const char *const allowed[] = {"auth_host", "auth_domain",
					      "auth_capacity", "auth_kind"};

	if (status == MCREPL_RPC__CODE__UNAUTHENTICATED ||
	    (status == RPC_OK && r &&
	     r->code == MCREPL_RPC__CODE__UNAUTHENTICATED))
		return CLIENT_AUTH_FIX;
	if (status != RPC_OK || !r)
		return NULL;
	if (r->code == MCREPL_RPC__CODE__INVALID_ARGUMENT)
		return "check the worker's flags";
	if (r->code != MCREPL_RPC__CODE__PERMISSION_DENIED || !r->reason)
		return NULL;
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (strcmp(r->reason, allowed[i]) == 0)
			return "the master's --auth_file line for this principal "
			       "must allow this --host_id, --domain and "
			       "--segment_size (hosts=, domains=, "
			       "max_capacity=)";
	return NULL;
}

/* One line, then the loop ends; main() exits DAEMON_EXIT_CONFIG (78). */
static void give_up(struct worker *w, const char *what, const char *why,
		    const char *fix)
{
	if (w->fatal)
		return;
	w->fatal = true;
	log_line(LOG_ERROR,
		 "%s refused by master %s: %s; %s; "
		 "exiting",
		 what, w->flags.master, why, fix);
	event_base_loopbreak(w->base);
}

static McreplRpc__Code code_of(const McreplRpc__Result *r)
{
	return r ? r->code : MCREPL_RPC__CODE__OK;
}

static const char *msg_of(const McreplRpc__Result *r)
{
	return r && r->message ? r->message : "";
}

/* The ready line: how many segments are mounted, and the master's ids
 * of them. */
static void print_ready(struct worker *w)
{
	printf("mcrepl-worker ready client_id=%llu data_port=%u segments=%u "
	       "segment_ids=",
	       (unsigned long long)w->client_id, data_server_port(w->ds),
	       w->n_segs);
	for (uint32_t i = 0; i < w->n_segs; i++)
		printf("%s%llu", i ? "," : "",
		       (unsigned long long)w->segs[i].id);
	printf(" transport=%s", w->transport);
	if (w->http)
		printf(" metrics_port=%u", w->metrics_port);
	printf("\n");
	fflush(stdout);
	w->ready = true;
}

/* The master answered a call sent at sent_ms with its clock: re-base the
 * grant expiries (grant.h). A slow answer (above CLOCK_MAX_RTT_MS) is
 * skipped once an offset is known: its estimate would be early by the
 * whole round trip. */
#define CLOCK_MAX_RTT_MS 1000
static void control_master_clock(struct worker *w, uint64_t master_time_ms,
				 int64_t sent_ms)
{
	if (!master_time_ms ||
	    (w->clock_known && net_now_ms() - sent_ms > CLOCK_MAX_RTT_MS))
		return;
	data_server_set_master_clock(w->ds, master_time_ms, sent_ms);
	w->clock_known = true;
}

/* A mount reply without the segment's 16-byte grant key (a master from
 * before grants): nothing could be read or written here, so it is
 * refused. */
static bool has_secret(const McreplRpc__MountSegmentResponse *r)
{
	return r->grant_secret.len == GRANT_SECRET_BYTES &&
	       r->grant_secret.data && r->master_time_ms;
}

static void mounted(struct worker *w, struct wseg *s,
		    const McreplRpc__MountSegmentResponse *r)
{
	/* sealed for this connection when authenticated (rpc_auth.h) */
	const uint8_t *key = rpc_aclient_session_key(w->rpc);
	uint8_t secret[GRANT_SECRET_BYTES];
	uint64_t prev_id = s->id; /* its mount at the last master */

	s->id = r->segment_id;
	s->mounted = true;
	w->hb_interval_ms =
	    r->heartbeat_interval_ms ? r->heartbeat_interval_ms : 1000;
	if (r->incarnation != w->incarnation)
		w->clock_known = false; /* another master, another clock */
	/* this segment's grant key: checks its requests only (grant.h) */
	memcpy(secret, r->grant_secret.data, GRANT_SECRET_BYTES);
	if (key)
		auth_seal(key, MOUNT_GRANT_KEY_LABEL, secret, sizeof(secret));
	data_server_set_grant_key(w->ds, s->slot, secret, r->incarnation);
	control_master_clock(w, r->master_time_ms, s->mount_sent_ms);
	data_server_bind(w->ds, s->slot, s->id);
	w->master_down_logged = false;
	w->mount_failures = 0;
	ha_mounted(w, s, prev_id, r->incarnation); /* HA: re-register */
	if (!worker_all_mounted(w))
		return;
	w->next_hb_ms = net_now_ms() + w->hb_interval_ms;
	if (!w->ready)
		print_ready(w);
	else
		log_line(LOG_INFO, "re-mounted %u segment(s)", w->n_segs);
}

static void on_mount(int status, ProtobufCMessage *resp, const char *error,
		     void *arg)
{
	struct wseg *s = arg;
	struct worker *w = s->w;
	McreplRpc__MountSegmentResponse *r =
	    (McreplRpc__MountSegmentResponse *)resp;
	const char *fix = permanent(status, r ? r->result : NULL);
	char what[400];

	s->mount_pending = false;
	if (fix && !w->stopping) {
		snprintf(what, sizeof(what), "mount of %s", s->name);
		give_up(w, what, status != RPC_OK ? error : msg_of(r->result),
			fix);
	} else if (status != RPC_OK) {
		master_down(w, "mount", error);
	} else if (code_of(r->result) != MCREPL_RPC__CODE__OK) {
		if (!ha_master_failed(w, r->result))
			ratelog(&w->rl_mount, LOG_WARN, "mount %s refused: %s",
				s->name, msg_of(r->result));
	} else if (!has_secret(r)) {
		ratelog(&w->rl_mount, LOG_WARN,
			"mount %s: the master sent no grant "
			"secret (older than this worker?): not serving it",
			s->name);
	} else if (!w->stopping) {
		mounted(w, s, r);
	}
	if (!s->mounted)
		w->next_mount_ms =
		    net_now_ms() +
		    (MOUNT_RETRY_MS << (w->mount_failures < MOUNT_BACKOFF_MAX
					    ? w->mount_failures++
					    : MOUNT_BACKOFF_MAX));
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
}

static void mount_one(struct worker *w, struct wseg *s)
{
	McreplRpc__MountSegmentRequest req;
	char *caps[] = {w->caps[0], w->caps[1]};

	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = w->client_id;
	req.host_id = w->flags.host_id;
	req.domain = w->flags.domain;
	req.name = s->name;
	req.capacity = s->len;
	req.endpoint = w->endpoint;
	req.protocol_version = 1;
	req.n_capabilities = strcmp(w->transport, "rdma") == 0 ? 2 : 1;
	req.capabilities = caps;
	req.base_addr = s->base_addr;
	req.rkey = s->rkey;
	req.rdma_endpoint = w->rdma_endpoint;
	req.hold = ha_hold(s);
	s->mount_pending = true;
	s->mount_sent_ms = net_now_ms();
	worker_call(w, "MountSegment", &req.base,
		    &mcrepl_rpc__mount_segment_response__descriptor, on_mount,
		    s);
}

static void mount_all(struct worker *w)
{
	for (uint32_t i = 0; i < w->n_segs; i++)
		if (!w->segs[i].mounted && !w->segs[i].mount_pending)
			mount_one(w, &w->segs[i]);
}

void control_remount(struct worker *w)
{
	if (w->stopping || !worker_all_mounted(w))
		return;
	log_line(LOG_WARN,
		 "master does not know client %llu (restarted or expired us): "
		 "re-mounting",
		 (unsigned long long)w->client_id);
	w->ctr.remounts++;
	w->index_ack = 0;  /* a new client record: its journal starts over */
	w->expired = true; /* its index is of no use there (ha.c) */
	w->revoke_ack = 0; /* and its revocations */
	/* unbound until re-mounted: the next master may give another of our
	 * segments an id one of these had */
	for (uint32_t i = 0; i < w->n_segs; i++) {
		w->segs[i].mounted = false;
		data_server_bind(w->ds, w->segs[i].slot, 0);
	}
	w->next_mount_ms = 0;
}

static void on_heartbeat(int status, ProtobufCMessage *resp, const char *error,
			 void *arg)
{
	struct worker *w = arg;
	McreplRpc__HeartbeatResponse *r = (McreplRpc__HeartbeatResponse *)resp;
	const char *fix = permanent(status, r ? r->result : NULL);

	w->hb_pending = false;
	if (fix && !w->stopping) {
		give_up(w, "heartbeat",
			status != RPC_OK ? error : msg_of(r->result), fix);
	} else if (status != RPC_OK) {
		master_down(w, "heartbeat", error);
	} else if (code_of(r->result) == MCREPL_RPC__CODE__UNKNOWN_CLIENT) {
		control_remount(w);
	} else if (!ha_master_failed(w, r->result)) {
		w->master_down_logged = false;
		control_master_clock(w, r->master_time_ms, w->hb_sent_ms);
	}
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
}

static void heartbeat(struct worker *w)
{
	McreplRpc__HeartbeatRequest req;
	uint64_t ids[64], reads[64];
	struct data_stats st;

	mcrepl_rpc__heartbeat_request__init(&req);
	req.client_id = w->client_id;
	for (uint32_t i = 0; i < w->n_segs && i < 64; i++) {
		data_server_slot_stats(w->ds, w->segs[i].slot, &st);
		ids[i] = w->segs[i].id;
		reads[i] = st.reads;
	}
	req.n_segment_ids = req.n_segment_reads = w->n_segs;
	req.segment_ids = ids;
	req.segment_reads = reads;
	w->hb_pending = true;
	w->hb_sent_ms = net_now_ms();
	worker_call(w, "Heartbeat", &req.base,
		    &mcrepl_rpc__heartbeat_response__descriptor, on_heartbeat,
		    w);
}

void control_tick(struct worker *w, int64_t now_ms)
{
	if (w->stopping)
		return;
	ha_tick(w, now_ms);
	if (w->etcd && !w->flags.master[0])
		return; /* no leader known yet */
	if (!worker_all_mounted(w)) {
		if (now_ms >= w->next_mount_ms)
			mount_all(w);
		return;
	}
	if (!w->hb_pending && now_ms >= w->next_hb_ms) {
		w->next_hb_ms = now_ms + w->hb_interval_ms;
		heartbeat(w);
	}
}

static bool unmounts_pending(const struct worker *w)
{
	for (uint32_t i = 0; i < w->n_segs; i++)
		if (w->segs[i].unmount_pending)
			return true;
	return false;
}

static void on_unmount(int status, ProtobufCMessage *resp, const char *error,
		       void *arg)
{
	struct wseg *s = arg;

	s->unmount_pending = false;
	if (status != RPC_OK)
		log_line(LOG_WARN, "unmount %s: %s", s->name, error);
	if (resp)
		protobuf_c_message_free_unpacked(resp, NULL);
	if (!unmounts_pending(s->w))
		event_base_loopbreak(s->w->base);
}

void control_unmount_all(struct worker *w)
{
	McreplRpc__UnmountSegmentRequest req;

	w->unmounting = true;
	for (uint32_t i = 0; i < w->n_segs; i++)
		w->segs[i].unmount_pending = w->segs[i].mounted;
	if (!unmounts_pending(w)) {
		event_base_loopbreak(w->base);
		return;
	}
	for (uint32_t i = 0; i < w->n_segs; i++) {
		struct wseg *s = &w->segs[i];

		if (!s->unmount_pending)
			continue;
		s->mounted = false;
		mcrepl_rpc__unmount_segment_request__init(&req);
		req.client_id = w->client_id;
		req.segment_id = s->id;
		worker_call(w, "UnmountSegment", &req.base,
			    &mcrepl_rpc__unmount_segment_response__descriptor,
			    on_unmount, s);
	}
}

int control_unmount_sync(struct worker *w, int budget_ms)
{
	int method =
	    rpc_method_index(&mcrepl_rpc__master__descriptor, "UnmountSegment");
	int64_t deadline = net_now_ms() + budget_ms;
	rpc_client_config cfg;
	rpc_client *c = NULL;
	char err[256];
	int left = 0;

	worker_rpc_config(w, &cfg);
	for (uint32_t i = 0; i < w->n_segs; i++) {
		struct wseg *s = &w->segs[i];
		McreplRpc__UnmountSegmentRequest req;
		ProtobufCMessage *resp = NULL;
		int64_t room = deadline - net_now_ms();

		if (!s->id || (!s->mounted && !s->unmount_pending))
			continue;
		if (room <= 0 || method < 0) {
			left++;
			continue;
		}
		cfg.connect_timeout_ms = cfg.call_timeout_ms = (int)room;
		if (!c && rpc_client_open(&c, w->flags.master, &cfg, err,
					  sizeof(err)) != RPC_OK) {
			left++;
			continue;
		}
		mcrepl_rpc__unmount_segment_request__init(&req);
		req.client_id = w->client_id;
		req.segment_id = s->id;
		if (rpc_call(c, (uint32_t)method, &req.base,
			     &mcrepl_rpc__unmount_segment_response__descriptor,
			     &resp, err, sizeof(err)) != RPC_OK) {
			log_line(LOG_WARN, "unmount %s: %s", s->name, err);
			left++;
			continue;
		}
		protobuf_c_message_free_unpacked(resp, NULL);
		s->mounted = s->unmount_pending = false;
	}
	rpc_client_close(c);
	return left;
}
