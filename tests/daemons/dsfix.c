/* A data server in-process (see dsfix.h). */
#include "dsfix.h"

#include <check.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "grant.h"
#include "harness.h"
#include "netutil.h"

void dsfix_create(struct dsfix *d)
{
	struct data_server_config dc;
	char err[256];

	d->base = event_base_new();
	ck_assert_ptr_nonnull(d->base);
	data_server_config_init(&dc);
	dc.port = 0;
	d->ds = data_server_create(d->base, &dc, err, sizeof(err));
	ck_assert_msg(d->ds != NULL, "%s", err);
	snprintf(d->ep, sizeof(d->ep), "127.0.0.1:%u", data_server_port(d->ds));
}

static void *loop(void *arg)
{
	struct dsfix *d = arg;

	event_base_loop(d->base, EVLOOP_NO_EXIT_ON_EMPTY);
	return NULL;
}

void dsfix_run(struct dsfix *d)
{
	ck_assert_int_eq(pthread_create(&d->th, NULL, loop, d), 0);
}

void dsfix_pause(struct dsfix *d)
{
	char err[128];
	int fd;

	event_base_loopbreak(d->base);
	fd = net_connect("127.0.0.1", data_server_port(d->ds), 2000, err,
			 sizeof(err));
	pthread_join(d->th, NULL);
	if (fd >= 0)
		close(fd);
}

void dsfix_destroy(struct dsfix *d)
{
	dsfix_pause(d);
	data_server_destroy(d->ds);
	event_base_free(d->base);
}

uint64_t dsfix_mount(struct dsfix *d, uint16_t port, uint64_t client_id,
		     const char *host, const char *name, uint8_t *seg,
		     uint64_t bytes)
{
	McreplRpc__MountSegmentRequest req;
	McreplRpc__MountSegmentResponse *resp;
	rpc_client *rc = harness_client(port);
	int64_t sent = net_now_ms();
	uint64_t id;
	int slot;

	ck_assert_ptr_nonnull(rc);
	mcrepl_rpc__mount_segment_request__init(&req);
	req.client_id = client_id;
	req.host_id = (char *)(uintptr_t)host;
	req.domain = (char *)(uintptr_t) "";
	req.name = (char *)(uintptr_t)name;
	req.capacity = bytes;
	req.endpoint = d->ep;
	req.protocol_version = 1;
	resp = (McreplRpc__MountSegmentResponse *)harness_call(
	    rc, "MountSegment", &req.base, NULL);
	ck_assert_ptr_nonnull(resp);
	ck_assert_int_eq(resp->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(resp->grant_secret.len, GRANT_SECRET_BYTES);
	slot = data_server_add_segment(d->ds, seg, bytes);
	data_server_set_grant_key(d->ds, slot, resp->grant_secret.data,
				  resp->incarnation);
	data_server_set_master_clock(d->ds, resp->master_time_ms, sent);
	data_server_bind(d->ds, slot, resp->segment_id);
	id = resp->segment_id;
	protobuf_c_message_free_unpacked(&resp->base, NULL);
	rpc_client_close(rc);
	return id;
}
