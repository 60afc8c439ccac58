/* Blocking store client (see store_client.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "data_client.h"
#include "etcd.h"
#include "mcrepl.pb-c.h"
#include "payload.h"
#include "rpc_client.h"
#include "span.h"
#include "stamp.h"
#include "mcrepl/domain.h"
#include "store_client.h"

#define TENANT_MAX 256

struct store_client {
	rpc_client *rpc;
	struct data_pool *pool; /* data-plane connections, by endpoint */
	struct store_client_config cfg;
	char local_host[256];
	char domain[128];
	char tenant[TENANT_MAX];
	char *key;	  /* mutable copy of the current call's key */
	bool no_stat_rpc; /* the master predates Stat: use GetReplicaList */
	/* the last call may have been applied by a leader that never
	 * confirmed it (lost in transport, or "unconfirmed"); once: such a
	 * call is not sent again (a Remove) */
	bool unconfirmed, once;
	uint64_t stale_reads;	    /* replicas refused by their stamp */
	uint64_t digest_mismatches; /* ... by their payload digest */
	/* hedged reads: counters, and the read latency learnt (us) */
	uint64_t hedged, cancelled, hedge_wins;
	double lat_mean_us, lat_dev_us;
	uint32_t lat_n;
	char err[512];
	/* HA ("etcd://..." as the master address): the leader followed */
	char etcd[1024];
	char master[ETCD_VALUE_MAX];
	uint64_t term;		 /* create_revision of the leader key */
	uint64_t leader_changes; /* times the client moved to a new leader */
	rpc_client_config rc;
};

#define ETCD_PREFIX "etcd://"
#define HA_KEY "/mcrepl/master/leader"
#define HA_WAIT_MS 15000 /* longest a call waits for a new leader */
#define HA_POLL_MS 50

void store_client_config_init(struct store_client_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->replicas = 1;
	cfg->rpc_timeout_ms = 5000;
	cfg->data_timeout_ms = 30000;
}

static int fail(store_client *c, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(store_client *c, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return status;
}

const char *store_client_error(const store_client *c)
{
	return c->err;
}

/* The leader in etcd whose term is not `old` (0: any), waiting up to
 * wait_ms; connects to it. 0, or -1 with the reason in c->err. */
static int find_leader(store_client *c, uint64_t old, int wait_ms)
{
	int64_t deadline = net_now_ms() + wait_ms;
	struct etcd_result r;
	rpc_client *rpc = NULL;

	for (;;) {
		int left = (int)(deadline - net_now_ms());

		if (etcd_get_sync(c->etcd, HA_KEY, left > 1000 ? 1000 : 100,
				  &r) == 0 &&
		    r.found && r.value[0] &&
		    (r.create_revision != old || left <= 0) &&
		    rpc_client_open(&rpc, r.value, &c->rc, c->err,
				    sizeof(c->err)) == RPC_OK)
			break;
		if (net_now_ms() >= deadline) {
			fail(c, -EAGAIN, "no master leader in etcd %s%s%s",
			     c->etcd, r.err[0] ? ": " : "", r.err);
			return -1;
		}
		nanosleep(&(struct timespec){0, HA_POLL_MS * 1000000L}, NULL);
	}
	rpc_client_close(c->rpc);
	c->rpc = rpc;
	if (c->term && r.create_revision != c->term)
		c->leader_changes++;
	c->term = r.create_revision;
	snprintf(c->master, sizeof(c->master), "%s", r.value);
	return 0;
}

uint64_t store_client_leader_changes(const store_client *c)
{
	return c->leader_changes;
}

static int open_master(store_client *c, const char *addr)
{
	if (strncmp(addr, ETCD_PREFIX, strlen(ETCD_PREFIX)) != 0)
		return rpc_client_open(&c->rpc, addr, &c->rc, c->err,
				       sizeof(c->err));
	snprintf(c->etcd, sizeof(c->etcd), "%s", addr + strlen(ETCD_PREFIX));
	if (!etcd_endpoints_valid(c->etcd)) {
		fail(c, -EINVAL, "bad etcd endpoints '%s'", c->etcd);
		return RPC_E_INVALID;
	}
	return find_leader(c, 0, HA_WAIT_MS) == 0 ? RPC_OK : RPC_E_UNAVAILABLE;
}

int store_client_open(store_client **out, const char *master_addr,
		      const char *tenant, const struct store_client_config *cfg,
		      char *err, size_t errlen)
{
	rpc_client_config rc;
	store_client *c;
	int st;

	*out = NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (cfg)
		c->cfg = *cfg;
	else
		store_client_config_init(&c->cfg);
	snprintf(c->local_host, sizeof(c->local_host), "%s",
		 c->cfg.local_host ? c->cfg.local_host : "");
	c->cfg.local_host = c->local_host[0] ? c->local_host : NULL;
	if (!c->cfg.domain)
		c->cfg.domain = getenv("MOONCAKE_STORE_DOMAIN");
	snprintf(c->domain, sizeof(c->domain), "%s",
		 c->cfg.domain ? c->cfg.domain : "");
	c->cfg.domain = c->domain;
	snprintf(c->tenant, sizeof(c->tenant), "%s",
		 tenant ? tenant : "default");
	rpc_client_config_init(&rc);
	rc.cred = c->cfg.cred;
	rc.tls = c->cfg.tls;
	if (c->cfg.rpc_timeout_ms)
		rc.call_timeout_ms = c->cfg.rpc_timeout_ms;
	c->pool =
	    c->cfg.one_shot_data ? NULL : data_pool_create(c->cfg.data_conns);
	if (!c->pool && !c->cfg.one_shot_data) {
		snprintf(err, errlen, "out of memory");
		free(c);
		return -ENOMEM;
	}
	c->rc = rc;
	st = open_master(c, master_addr);
	if (st) {
		snprintf(err, errlen, "cannot reach master %s: %s", master_addr,
			 c->err);
		data_pool_destroy(c->pool);
		free(c);
		return st;
	}
	*out = c;
	return 0;
}

void store_client_close(store_client *c)
{
	if (!c)
		return;
	rpc_client_close(c->rpc);
	data_pool_destroy(c->pool);
	free(c->key);
	free(c);
}

/* ---- master calls ---------------------------------------------------------- */

static int begin(store_client *c, const char *key)
{
	c->err[0] = '\0';
	if (!key || !key[0])
		return fail(c, -EINVAL, "empty key");
	free(c->key);
	c->key = strdup(key);
	return c->key ? 0 : fail(c, -ENOMEM, "out of memory");
}

/* not_leader: not applied, ask the leader; recovering: ask again;
 * unconfirmed: applied, but the leader stepped down before it could
 * confirm that a next one will know (a PutEnd). */
enum ha_refusal { HA_NONE, HA_NOT_LEADER, HA_RECOVERING, HA_UNCONFIRMED };

/* HA: a reply whose Result says this master does not lead, or that it
 * leads since so short a time its workers may still be re-registering. */
static enum ha_refusal refusal(const ProtobufCMessage *m)
{
	const ProtobufCFieldDescriptor *f =
	    m ? protobuf_c_message_descriptor_get_field_by_name(m->descriptor,
								"result")
	      : NULL;
	const McreplRpc__Result *r;

	if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE)
		return HA_NONE;
	r = *(const McreplRpc__Result *const *)(const void *)((const char *)m +
							      f->offset);
	if (!r || r->code != MCREPL_RPC__CODE__UNAVAILABLE || !r->reason)
		return HA_NONE;
	if (strcmp(r->reason, "not_leader") == 0)
		return HA_NOT_LEADER;
	if (strcmp(r->reason, "unconfirmed") == 0)
		return HA_UNCONFIRMED;
	return strcmp(r->reason, "recovering") == 0 ? HA_RECOVERING : HA_NONE;
}

/* Calls Master method `name`; *resp_out is the reply (caller frees). With
 * etcd, a call that fails in transport or is refused as not_leader waits
 * for the next leader (a new term, HA_WAIT_MS at most) and is sent there:
 * the new leader holds nothing of the old one's unfinished work, so a
 * call applied by the old one is never applied twice. */
static int call(store_client *c, const char *name, const ProtobufCMessage *req,
		const ProtobufCMessageDescriptor *desc,
		ProtobufCMessage **resp_out)
{
	int m = rpc_method_index(&mcrepl_rpc__master__descriptor, name);
	int64_t deadline = net_now_ms() + HA_WAIT_MS;
	char why[256];
	int st, moves = 0;

	c->unconfirmed = false;
	for (;;) {
		enum ha_refusal ref;

		*resp_out = NULL;
		st = rpc_call(c->rpc, (uint32_t)m, req, desc, resp_out, why,
			      sizeof(why));
		ref = st == 0 ? refusal(*resp_out) : HA_NOT_LEADER;
		if ((st != 0 && rpc_call_sent(c->rpc)) || ref == HA_UNCONFIRMED)
			c->unconfirmed = true;
		if (c->unconfirmed && c->once && c->etcd[0]) {
			if (st == 0)
				protobuf_c_message_free_unpacked(*resp_out,
								 NULL);
			*resp_out = NULL;
			return fail(c, -EAGAIN,
				    "%s: the leader went away before it "
				    "answered: whether it took effect is "
				    "unknown (look, then ask again)",
				    name);
		}
		if (!c->etcd[0] || ref == HA_NONE || moves >= 3 ||
		    net_now_ms() >= deadline)
			break;
		if (st == 0) {
			protobuf_c_message_free_unpacked(*resp_out, NULL);
			*resp_out = NULL;
		}
		if (ref == HA_RECOVERING) { /* the leader is new: ask again */
			nanosleep(&(struct timespec){0, HA_POLL_MS * 1000000L},
				  NULL);
			continue;
		}
		moves++;
		if (find_leader(c, c->term, HA_WAIT_MS) != 0)
			return -EAGAIN;
	}
	if (!st)
		return 0;
	/* the status after the reason, unless it is the reason */
	if (!why[0] || strcmp(why, rpc_status_str(st)) == 0)
		return fail(c, st, "master %s failed: %s", name,
			    rpc_status_str(st));
	return fail(c, st, "master %s failed: %s (%s)", name, why,
		    rpc_status_str(st));
}

static const char *code_name(int code)
{
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
	    &mcrepl_rpc__code__descriptor, code);

	return v ? v->name : "UNKNOWN";
}

/* The Result of a reply: 0, or its code with the reason in c->err. */
static int result(store_client *c, const McreplRpc__Result *r, const char *what)
{
	const char *msg;

	if (!r || r->code == MCREPL_RPC__CODE__OK)
		return 0;
	if (r->code == MCREPL_RPC__CODE__NOT_FOUND && c->key)
		return fail(c, r->code, "%s: key '%s' not found", what, c->key);
	if (r->code == MCREPL_RPC__CODE__ALREADY_EXISTS && c->key)
		return fail(c, r->code,
			    "%s: key '%s' already exists (objects are "
			    "immutable: remove it first, or use another key)",
			    what, c->key);
	msg = r->message && strcmp(r->message, code_name(r->code)) ? r->message
								   : "";
	return fail(c, r->code, "%s: %s%s%s%s%s", what, code_name(r->code),
		    msg[0] ? ": " : "", msg,
		    r->reason && r->reason[0] ? " reason=" : "",
		    r->reason ? r->reason : "");
}

#define CALL(c, name, req, type, resp)                                         \
	call(c, name, &(req).base, &type##__descriptor,                        \
	     (ProtobufCMessage **)(void *)&(resp))

static void free_msg(void *m)
{
	if (m)
		protobuf_c_message_free_unpacked(m, NULL);
}

/* ---- raw data plane ---------------------------------------------------------- */

struct data_grant store_replica_grant(const McreplRpc__Replica *r)
{
	return (struct data_grant){.object_id = r->grant_object_id,
				   .expires_ms = r->grant_expires_ms,
				   .tag = r->grant_tag};
}

int store_data_write(const char *endpoint, uint64_t segment_id, uint64_t offset,
		     const void *buf, uint64_t len,
		     const struct data_grant *grant, int timeout_ms, char *err,
		     size_t errlen)
{
	return data_write(NULL, endpoint, segment_id, offset, buf, len, grant,
			  timeout_ms, err, errlen);
}

int store_data_read(const char *endpoint, uint64_t segment_id, uint64_t offset,
		    void *buf, uint64_t len, const struct data_grant *grant,
		    int timeout_ms, char *err, size_t errlen)
{
	return data_read(NULL, endpoint, segment_id, offset, buf, len, grant,
			 timeout_ms, err, errlen);
}

static uint32_t hedge_delay_ms(const store_client *c);

void store_client_data_stats(const store_client *c,
			     struct store_data_stats *out)
{
	struct data_pool_stats st;

	data_pool_get_stats(c->pool, &st);
	out->connects = st.connects;
	out->reuses = st.reuses;
	out->retries = st.retries;
	out->evicted = st.evicted;
	out->open = st.open;
	out->hedged = c->hedged;
	out->cancelled = c->cancelled;
	out->hedge_wins = c->hedge_wins;
	out->hedge_delay_ms = hedge_delay_ms(c);
}

/* ---- object operations -------------------------------------------------------- */

static int put_revoke(store_client *c, uint64_t version)
{
	McreplRpc__PutRevokeRequest req;
	McreplRpc__PutRevokeResponse *resp = NULL;
	int st;

	mcrepl_rpc__put_revoke_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	req.version = version;
	st = CALL(c, "PutRevoke", req, mcrepl_rpc__put_revoke_response, resp);
	free_msg(resp);
	return st;
}

/* PutEnd, with the payload's digest when digest is not NULL. */
static int put_end(store_client *c, uint64_t version, const uint8_t *digest)
{
	McreplRpc__PutEndRequest req;
	McreplRpc__PutEndResponse *resp = NULL;
	int st;

	mcrepl_rpc__put_end_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	req.version = version;
	if (digest) {
		req.digest.data = (uint8_t *)(uintptr_t)digest;
		req.digest.len = PAYLOAD_DIGEST_BYTES;
	}
	st = CALL(c, "PutEnd", req, mcrepl_rpc__put_end_response, resp);
	if (!st)
		st = result(c, resp->result, "PutEnd");
	free_msg(resp);
	return st;
}

/* The stamp key of c's tenant must carry under (incarnation, version). */
static struct stamp_id key_stamp(const store_client *c, const char *key,
				 uint64_t incarnation, uint64_t version,
				 uint64_t size, uint64_t tag)
{
	return (struct stamp_id){
	    .incarnation = incarnation,
	    .object_id = version,
	    .key_hash =
		stamp_key_hash(c->tenant, strlen(c->tenant), key, strlen(key)),
	    .length = size,
	    .tag = tag,
	};
}

/* The stamp of a put (all its replicas are alike), written before the
 * object in the same WRITE; *stamp_len 0 when the master places unstamped
 * regions. -EPROTO for a stamp size this client does not know. */
static int put_stamp(store_client *c, const McreplRpc__PutStartResponse *r,
		     const void *obj, uint64_t len, uint8_t stamp[STAMP_BYTES],
		     uint64_t *stamp_len)
{
	struct stamp_id id;

	*stamp_len = r->replicas[0]->stamp_bytes;
	if (*stamp_len == 0)
		return 0;
	if (*stamp_len != STAMP_BYTES)
		return fail(c, -EPROTO, "put: unknown stamp size %llu",
			    (unsigned long long)*stamp_len);
	if (!r->stamp_tag && !c->cfg.stamp_tags_off) /* readers would refuse */
		return fail(c, -EPROTO, "put: the master gave no stamp tag");
	id =
	    key_stamp(c, c->key, r->incarnation, r->version, len, r->stamp_tag);
	stamp_write(stamp, &id, obj);
	return 0;
}

static int write_replicas(store_client *c, const McreplRpc__PutStartResponse *r,
			  const void *obj, uint64_t len)
{
	uint8_t stamp[STAMP_BYTES];
	uint64_t stamp_len;
	char why[400];
	int st = put_stamp(c, r, obj, len, stamp, &stamp_len);

	for (size_t i = 0; i < r->n_replicas && !st; i++) {
		const McreplRpc__Replica *rep = r->replicas[i];
		struct data_grant g = store_replica_grant(rep);

		st = data_write_parts(c->pool, rep->endpoint, rep->segment_id,
				      rep->offset, stamp, stamp_len, obj, len,
				      &g, c->cfg.data_timeout_ms, why,
				      sizeof(why));
		if (st)
			st = fail(c, st,
				  "put: writing replica %zu of %zu failed: %s",
				  i + 1, r->n_replicas, why);
	}
	return st;
}

/* NO_SPACE from PutStart: most often fewer segments than replicas, which
 * the master's "no segment has N free bytes" does not say. */
static int explain_no_space(store_client *c, uint32_t replicas, int st)
{
	struct store_segment_info *segs = NULL;
	char was[sizeof(c->err)];
	size_t n = 0;

	memcpy(was, c->err, sizeof(was));
	if (store_client_stats(c, &segs, &n, NULL) != 0) {
		memcpy(c->err, was, sizeof(was));
		return st;
	}
	free(segs);
	if (n < replicas)
		return fail(c, st,
			    "put: %u replicas need %u segments, the master has "
			    "%zu: start more workers (or give them more "
			    "--segments), or put fewer replicas",
			    replicas, replicas, n);
	return fail(c, st,
		    "%s (%zu segments, none with room left after eviction: "
		    "give the workers larger --segment_size)",
		    was, n);
}

/* Who a put's object is: what its PutStart said; unconfirmed: its PutEnd
 * may have been applied by a leader that then went away. */
struct put_id {
	uint64_t version, incarnation;
	bool unconfirmed;
};

static int put_once(store_client *c, const char *key, const void *buf,
		    uint64_t len, struct put_id *id);
static int stat_list(store_client *c, const char *key,
		     McreplRpc__GetReplicaListResponse **out);

/* Whether key names the object of the put `first` (a put whose PutEnd the
 * old leader took, or whose bytes the new one adopted from the workers'
 * stamps, has the version and incarnation its PutStart gave). */
static bool put_was_ours(store_client *c, const char *key,
			 const struct put_id *first)
{
	McreplRpc__GetReplicaListResponse *r = NULL;
	bool ours = first->version && stat_list(c, key, &r) == 0 &&
		    r->version == first->version &&
		    r->incarnation == first->incarnation;

	free_msg(r);
	return ours;
}

/* HA: a put the leader changed under (its PutEnd refused as of an old
 * term, its writes refused by workers that moved to the new leader) is
 * started once more with the new leader; found there already, it is
 * this put's own object when the key names the first try's identity. */
int store_client_put(store_client *c, const char *key, const void *buf,
		     uint64_t len)
{
	uint64_t term = c->term;
	struct put_id first = {0};
	int st = put_once(c, key, buf, len, &first);

	if (st && c->etcd[0] && c->term != term) {
		char err[sizeof(c->err)];

		if (put_was_ours(c, key, &first)) {
			c->err[0] = '\0';
			return 0;
		}
		/* applied, perhaps, and removed since: not put again, which
		 * would bring back what a remove took away */
		if (first.unconfirmed)
			return fail(c, -EAGAIN,
				    "put: the leader changed while key '%s' "
				    "was being committed: whether the put "
				    "took effect is unknown (the key does not "
				    "hold it now)",
				    key);
		st = put_once(c, key, buf, len, NULL);
		snprintf(err, sizeof(err), "%s", c->err);
		if (st == MCREPL_RPC__CODE__ALREADY_EXISTS &&
		    put_was_ours(c, key, &first)) {
			c->err[0] = '\0';
			return 0;
		}
		snprintf(c->err, sizeof(c->err), "%s", err);
	}
	return st;
}

/* Whether a put sends its payload's digest: its tenant requires one, or
 * the client was asked to (store_client_config.integrity). */
static bool want_digest(const store_client *c,
			const McreplRpc__PutStartResponse *r)
{
	return r->digest_required || c->cfg.integrity;
}

static int put_once(store_client *c, const char *key, const void *buf,
		    uint64_t len, struct put_id *id)
{
	McreplRpc__PutStartRequest req;
	McreplRpc__PutStartResponse *resp = NULL;
	uint8_t digest[PAYLOAD_DIGEST_BYTES];
	int st = begin(c, key);

	if (st)
		return st;
	if (len == 0 || !buf)
		return fail(c, -EINVAL, "put: empty object (0 bytes)");
	mcrepl_rpc__put_start_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	req.size = len;
	req.replica_num = c->cfg.replicas ? c->cfg.replicas : 1;
	st = CALL(c, "PutStart", req, mcrepl_rpc__put_start_response, resp);
	if (!st)
		st = result(c, resp->result, "put");
	if (st == MCREPL_RPC__CODE__NO_SPACE)
		st = explain_no_space(c, req.replica_num, st);
	if (!st && resp->n_replicas == 0)
		st = fail(c, -EPROTO, "PutStart: master granted no replica");
	if (!st && id)
		*id = (struct put_id){.version = resp->version,
				      .incarnation = resp->incarnation};
	if (!st) {
		st = write_replicas(c, resp, buf, len);
		if (!st && want_digest(c, resp))
			st = payload_digest(buf, len, digest)
				 ? fail(c, -EIO, "put: SHA-256 failed")
				 : 0;
		if (st) {
			put_revoke(c, resp->version);
		} else {
			st = put_end(c, resp->version,
				     want_digest(c, resp) ? digest : NULL);
			if (st && id)
				id->unconfirmed = c->unconfirmed;
		}
	}
	free_msg(resp);
	return st;
}

int store_client_get_list(store_client *c, const char *key,
			  McreplRpc__GetReplicaListResponse **out)
{
	McreplRpc__GetReplicaListRequest req;
	int st = begin(c, key);

	*out = NULL;
	if (st)
		return st;
	mcrepl_rpc__get_replica_list_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	req.requester_host = c->local_host;
	req.requester_domain = c->domain;
	st = CALL(c, "GetReplicaList", req,
		  mcrepl_rpc__get_replica_list_response, *out);
	if (!st)
		st = result(c, (*out)->result, "get");
	if (!st && (*out)->n_replicas == 0)
		st = fail(c, MCREPL_RPC__CODE__NOT_FOUND,
			  "get: key '%s' has no readable replica", key);
	return st;
}

/* 0: on local_host, 1: in the reader's domain, 2: elsewhere. */
static int nearness(const store_client *c, const McreplRpc__Replica *r)
{
	if (c->local_host[0] && strcmp(r->host_id, c->local_host) == 0)
		return 0;
	if (c->domain[0] && mcrepl_domain_equal(r->domain, c->domain))
		return 1;
	return 2;
}

/* Order to try: local host, then own domain, each in the master's order. */
static size_t read_order(const store_client *c,
			 const McreplRpc__GetReplicaListResponse *r,
			 size_t *idx)
{
	size_t n = 0;

	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < r->n_replicas && n < 64; i++)
			if (nearness(c, r->replicas[i]) == pass)
				idx[n++] = i;
	return n;
}

static void fill_read_info(struct store_read_info *info,
			   const McreplRpc__GetReplicaListResponse *r,
			   const McreplRpc__Replica *rep, uint32_t tried)
{
	if (!info)
		return;
	memset(info, 0, sizeof(*info));
	info->segment_id = rep->segment_id;
	info->version = r->version;
	info->dynamic = rep->dynamic;
	info->tried = tried;
	snprintf(info->host_id, sizeof(info->host_id), "%s", rep->host_id);
	snprintf(info->endpoint, sizeof(info->endpoint), "%s", rep->endpoint);
}

/* The bytes read hash to the digest the master gave with the list (its
 * writer's): 0 (or no digest given), or -ESTALE (counted) with the
 * reason in why. A worker can keep a valid stamp over other bytes, never
 * make them hash to this. A digest of another length is refused. */
static int check_digest(store_client *c,
			const McreplRpc__GetReplicaListResponse *r,
			const McreplRpc__Replica *rep, const uint8_t *buf,
			char *why, size_t whylen)
{
	if (r->digest.len == 0 ||
	    (r->digest.len == PAYLOAD_DIGEST_BYTES &&
	     payload_digest_matches(buf, r->size, r->digest.data)))
		return 0;
	c->digest_mismatches++;
	snprintf(why, whylen, "segment %llu offset %llu: %s",
		 (unsigned long long)rep->segment_id,
		 (unsigned long long)rep->offset,
		 r->digest.len == PAYLOAD_DIGEST_BYTES
		     ? "payload digest mismatch (bytes not the ones written)"
		     : "payload digest of an unknown size");
	return -ESTALE;
}

/* The stamp read with a replica's bytes names the object the list names,
 * whole, and its bytes hash to the list's digest: 0, or -ESTALE (counted)
 * with the reason in why. */
static int check_stamp(store_client *c,
		       const McreplRpc__GetReplicaListResponse *r,
		       const McreplRpc__Replica *rep, const uint8_t *stamp,
		       const uint8_t *buf, char *why, size_t whylen)
{
	struct stamp_id want;
	enum stamp_result sr;

	if (rep->stamp_bytes == 0)
		return check_digest(c, r, rep, buf, why, whylen);
	want = key_stamp(c,
			 r->key && r->key[0] ? r->key
			 : c->key	     ? c->key
					     : "",
			 r->incarnation, r->version, r->size, rep->stamp_tag);
	/* a descriptor without a tag cannot vouch for any stamp */
	sr = !want.tag && !c->cfg.stamp_tags_off
		 ? STAMP_E_TAG
		 : stamp_check(stamp, buf, r->size, &want);
	if (sr == STAMP_OK)
		return check_digest(c, r, rep, buf, why, whylen);
	c->stale_reads++;
	snprintf(why, whylen, "segment %llu offset %llu: %s",
		 (unsigned long long)rep->segment_id,
		 (unsigned long long)rep->offset, stamp_result_text(sr));
	return -ESTALE;
}

static int stamp_size_ok(const McreplRpc__Replica *rep, char *why,
			 size_t whylen)
{
	if (rep->stamp_bytes == 0 || rep->stamp_bytes == STAMP_BYTES)
		return 0;
	snprintf(why, whylen, "unknown stamp size %u", rep->stamp_bytes);
	return -EPROTO;
}

/* Read one replica into buf (r->size bytes), its stamp apart, and check
 * the stamp: the bytes are the object the list names, whole, or -ESTALE. */
static int read_one(store_client *c, const McreplRpc__GetReplicaListResponse *r,
		    const McreplRpc__Replica *rep, uint8_t *buf, char *why,
		    size_t whylen)
{
	uint8_t stamp[STAMP_BYTES];
	struct data_grant g = store_replica_grant(rep);
	int st = stamp_size_ok(rep, why, whylen);

	if (st)
		return st;
	st = data_read_parts(c->pool, rep->endpoint, rep->segment_id,
			     rep->offset, stamp, rep->stamp_bytes, buf, r->size,
			     &g, c->cfg.data_timeout_ms, why, whylen);
	return st ? st : check_stamp(c, r, rep, stamp, buf, why, whylen);
}

/* ---- hedged reads ------------------------------------------------------ */

#define HEDGE_MIN_MS 20	  /* never sooner: a loaded host's jitter */
#define HEDGE_FIRST_MS 50 /* before any latency was learnt */
#define LAT_GAIN 0.125	  /* of each new sample in the running means */

/* How long the first replica has before the next one is read too. */
static uint32_t hedge_delay_ms(const store_client *c)
{
	double ms;

	if (c->cfg.hedge_ms > 0)
		return (uint32_t)c->cfg.hedge_ms;
	if (c->lat_n == 0)
		return HEDGE_FIRST_MS;
	ms = (c->lat_mean_us + 4 * c->lat_dev_us) / 1000;
	if (ms > c->cfg.data_timeout_ms)
		ms = c->cfg.data_timeout_ms;
	return ms < HEDGE_MIN_MS ? HEDGE_MIN_MS : (uint32_t)ms;
}

/* A successful read took us: into the running mean and mean deviation. */
static void learn_latency(store_client *c, double us)
{
	double err = us - c->lat_mean_us;

	if (c->lat_n++ == 0) {
		c->lat_mean_us = us;
		c->lat_dev_us = us / 2;
		return;
	}
	c->lat_mean_us += LAT_GAIN * err;
	c->lat_dev_us += LAT_GAIN * ((err < 0 ? -err : err) - c->lat_dev_us);
}

/* One hedged read: the first replica in buf, the hedge in a buffer of
 * its own, each with its stamp. */
struct hedge {
	struct data_race race;
	const McreplRpc__Replica *rep[2];
	uint8_t stamp[2][STAMP_BYTES];
	uint8_t *buf[2];
	double t0[2];
	int pending; /* slots in flight */
};

static int hedge_start(struct hedge *h, int slot, const McreplRpc__Replica *rep,
		       uint64_t size, char *why, size_t whylen)
{
	struct data_read_req q = {.ep = rep->endpoint,
				  .segment_id = rep->segment_id,
				  .offset = rep->offset,
				  .head = h->stamp[slot],
				  .head_len = rep->stamp_bytes,
				  .buf = h->buf[slot],
				  .len = size,
				  .grant = store_replica_grant(rep)};
	int st = stamp_size_ok(rep, why, whylen);

	h->rep[slot] = rep;
	h->t0[slot] = net_now_s();
	if (!st)
		st = data_race_start(&h->race, slot, &q, why, whylen);
	h->pending += st == 0;
	return st;
}

/* Waits for the next answer until `until`: 0 (*slot's bytes check), 1
 * when until passed, or the failed slot's status (*slot). */
static int hedge_next(store_client *c,
		      const McreplRpc__GetReplicaListResponse *r,
		      struct hedge *h, int64_t until, int *slot, char *why,
		      size_t whylen)
{
	int st, k = data_race_wait(&h->race, until, &st, why, whylen);

	if (k < 0)
		return 1;
	h->pending--;
	*slot = k;
	if (st == 0)
		st = check_stamp(c, r, h->rep[k], h->stamp[k], h->buf[k], why,
				 whylen);
	if (st == 0)
		learn_latency(c, (net_now_s() - h->t0[k]) * 1e6);
	return st;
}

/* The first two replicas in order idx[0], idx[1], the second read too
 * once the first is late. 0 (buf holds the object from replica idx[*won];
 * *tried how many were read), or the last failure with *tried the
 * replicas used up. */
static int read_hedged(store_client *c,
		       const McreplRpc__GetReplicaListResponse *r,
		       const size_t *idx, uint8_t *buf, uint32_t *tried,
		       int *won, char *why, size_t whylen)
{
	struct hedge h = {.buf = {buf, NULL}};
	int64_t until = net_now_ms() + hedge_delay_ms(c);
	int st, k = 0;

	data_race_init(&h.race, c->pool, c->cfg.data_timeout_ms);
	*tried = 1;
	*won = 0;
	st = hedge_start(&h, 0, r->replicas[idx[0]], r->size, why, whylen);
	if (st)
		return st;
	st = hedge_next(c, r, &h, until, &k, why, whylen);
	if (st != 1)
		goto out; /* answered in time: no hedge */
	h.buf[1] = malloc(r->size ? (size_t)r->size : 1);
	if (h.buf[1] && hedge_start(&h, 1, r->replicas[idx[1]], r->size, why,
				    whylen) == 0) {
		c->hedged++;
		*tried = 2;
	}
	do /* the first good answer; a bad one never ends the wait */
		st = hedge_next(c, r, &h, -1, &k, why, whylen);
	while (st != 0 && h.pending > 0);
out:
	for (int i = 0; i < 2; i++)
		if (data_race_busy(&h.race, i)) {
			data_race_cancel(&h.race, i);
			c->cancelled++;
		}
	if (st == 0 && k == 1) {
		memcpy(buf, h.buf[1], r->size);
		c->hedge_wins++;
	}
	*won = k;
	free(h.buf[1]);
	return st;
}

/* The first two replicas can be raced: two endpoints, hedging on. */
static bool can_hedge(const store_client *c,
		      const McreplRpc__GetReplicaListResponse *r,
		      const size_t *idx, size_t n)
{
	return n >= 2 && c->cfg.hedge_ms >= 0 &&
	       strcmp(r->replicas[idx[0]]->endpoint,
		      r->replicas[idx[1]]->endpoint) != 0;
}

int store_client_read_list(store_client *c,
			   const McreplRpc__GetReplicaListResponse *r,
			   uint8_t *buf, struct store_read_info *info)
{
	size_t idx[64], n = read_order(c, r, idx), k = 0;
	char why[400] = "";
	int st = -EIO;

	if (can_hedge(c, r, idx, n)) {
		uint32_t tried;
		int won;

		st =
		    read_hedged(c, r, idx, buf, &tried, &won, why, sizeof(why));
		if (st == 0) {
			fill_read_info(info, r, r->replicas[idx[won]], tried);
			if (info)
				info->hedged = tried == 2;
			return 0;
		}
		k = tried;
	}
	for (; k < n; k++) {
		const McreplRpc__Replica *rep = r->replicas[idx[k]];

		st = read_one(c, r, rep, buf, why, sizeof(why));
		if (st == 0) {
			fill_read_info(info, r, rep, (uint32_t)k + 1);
			return 0;
		}
	}
	return fail(c, st, "get: all %zu replicas failed; last: %s", n, why);
}

int store_client_get(store_client *c, const char *key, void **buf_out,
		     uint64_t *len_out, struct store_read_info *info)
{
	McreplRpc__GetReplicaListResponse *r = NULL;
	uint8_t *buf = NULL;
	uint64_t region;
	int st;

	*buf_out = NULL;
	*len_out = 0;
	/* Every replica stale, or the grants expired or refused (a region
	 * reused while a grant ran is refused as a forged grant would be):
	 * the list itself was stale; ask once more. */
	for (int attempt = 0; attempt < 2; attempt++) {
		free_msg(r);
		free(buf);
		buf = NULL;
		st = store_client_get_list(c, key, &r);
		if (!st && !span_add(r->size, STAMP_BYTES, &region))
			st = fail(c, -EPROTO,
				  "get: the master names size %llu, which no "
				  "region can hold",
				  (unsigned long long)r->size);
		else if (!st) {
			buf = malloc(r->size ? (size_t)r->size : 1);
			st = buf ? store_client_read_list(c, r, buf, info)
				 : fail(c, -ENOMEM, "get: out of memory");
		}
		if (st != -ESTALE && st != -EKEYEXPIRED && st != -EACCES)
			break;
	}
	if (!st) {
		*buf_out = buf;
		*len_out = r->size;
	} else {
		free(buf);
	}
	free_msg(r);
	return st;
}

uint64_t store_client_stale_reads(const store_client *c)
{
	return c->stale_reads;
}

uint64_t store_client_digest_mismatches(const store_client *c)
{
	return c->digest_mismatches;
}

/* A request's id, random (the same on each of its tries). */
static uint64_t request_id(void)
{
	static _Atomic uint64_t fallback;
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id =
		    (uint64_t)net_now_ms() * 0x9e3779b97f4a7c15ULL ^ ++fallback;
	return id ? id : 1;
}

int store_client_remove(store_client *c, const char *key)
{
	McreplRpc__RemoveRequest req;
	McreplRpc__RemoveResponse *resp = NULL;
	int st = begin(c, key);

	if (st)
		return st;
	mcrepl_rpc__remove_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	/* every try of this remove names it: an HA leader that made it
	 * already answers from its record instead of removing again */
	req.request_id = request_id();
	/* a try a leader may have applied is not sent to the next: it
	 * would remove what was put since */
	c->once = true;
	st = CALL(c, "Remove", req, mcrepl_rpc__remove_response, resp);
	c->once = false;
	if (!st)
		st = result(c, resp->result, "remove");
	free_msg(resp);
	return st;
}

int store_client_exist(store_client *c, const char *key, bool *exists)
{
	McreplRpc__ExistRequest req;
	McreplRpc__ExistResponse *resp = NULL;
	int st = begin(c, key);

	*exists = false;
	if (st)
		return st;
	mcrepl_rpc__exist_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	st = CALL(c, "Exist", req, mcrepl_rpc__exist_response, resp);
	if (!st)
		st = result(c, resp->result, "exist");
	if (!st)
		*exists = resp->exists;
	free_msg(resp);
	return st;
}

int store_client_warmup(store_client *c, const char *domain,
			uint32_t max_copies, uint64_t max_bytes,
			uint32_t *queued)
{
	McreplRpc__WarmupRequest req;
	McreplRpc__WarmupResponse *resp = NULL;
	char d[128];
	int st;

	*queued = 0;
	snprintf(d, sizeof(d), "%s", domain ? domain : "");
	mcrepl_rpc__warmup_request__init(&req);
	req.domain = d;
	req.max_copies = max_copies;
	req.max_bytes = max_bytes;
	st = CALL(c, "Warmup", req, mcrepl_rpc__warmup_response, resp);
	if (!st)
		st = result(c, resp->result, "warmup");
	if (!st)
		*queued = resp->queued;
	free_msg(resp);
	return st;
}

int store_client_drain(store_client *c, const char *host,
		       struct store_drain_info *out)
{
	McreplRpc__DrainRequest req;
	McreplRpc__DrainResponse *resp = NULL;
	char h[256];
	int st;

	memset(out, 0, sizeof(*out));
	snprintf(h, sizeof(h), "%s", host ? host : "");
	mcrepl_rpc__drain_request__init(&req);
	req.host_id = h;
	st = CALL(c, "Drain", req, mcrepl_rpc__drain_response, resp);
	if (!st)
		st = result(c, resp->result, "drain");
	if (!st)
		*out = (struct store_drain_info){
		    .segments = resp->segments,
		    .objects_left = resp->objects_left,
		    .copies_queued = resp->copies_queued,
		    .copies_pending = resp->copies_pending,
		    .no_target = resp->no_target};
	free_msg(resp);
	return st;
}

static void fill_replica_info(struct store_replica_info *o,
			      const McreplRpc__Replica *r)
{
	memset(o, 0, sizeof(*o));
	o->segment_id = r->segment_id;
	o->client_id = r->client_id;
	o->offset = r->offset;
	o->size = r->size;
	o->complete = r->status == MCREPL_RPC__REPLICA_STATUS__COMPLETE;
	o->dynamic = r->dynamic;
	snprintf(o->host_id, sizeof(o->host_id), "%s", r->host_id);
	snprintf(o->domain, sizeof(o->domain), "%s", r->domain);
	snprintf(o->endpoint, sizeof(o->endpoint), "%s", r->endpoint);
}

/* Stat, or GetReplicaList against a master that answers UNKNOWN_METHOD. */
static int stat_list(store_client *c, const char *key,
		     McreplRpc__GetReplicaListResponse **out)
{
	McreplRpc__StatRequest req;
	int st;

	*out = NULL;
	if (c->no_stat_rpc)
		return store_client_get_list(c, key, out);
	st = begin(c, key);
	if (st)
		return st;
	mcrepl_rpc__stat_request__init(&req);
	req.tenant = c->tenant;
	req.key = c->key;
	st = CALL(c, "Stat", req, mcrepl_rpc__get_replica_list_response, *out);
	if (st == MCREPL_RPC__CODE__UNKNOWN_METHOD ||
	    st == MCREPL_RPC__CODE__UNIMPLEMENTED) {
		c->no_stat_rpc = true;
		return store_client_get_list(c, key, out);
	}
	if (!st)
		st = result(c, (*out)->result, "stat");
	return st;
}

int store_client_stat(store_client *c, const char *key,
		      struct store_object_info *out)
{
	McreplRpc__GetReplicaListResponse *r = NULL;
	int st = stat_list(c, key, &r);

	memset(out, 0, sizeof(*out));
	if (!st) {
		out->version = r->version;
		out->size = r->size;
		for (size_t i = 0; i < r->n_replicas && i < 64; i++)
			fill_replica_info(&out->replicas[i], r->replicas[i]);
		out->n_replicas = r->n_replicas < 64 ? r->n_replicas : 64;
	}
	free_msg(r);
	return st;
}

static void fill_segment_info(struct store_segment_info *o,
			      const McreplRpc__Segment *s)
{
	memset(o, 0, sizeof(*o));
	o->segment_id = s->segment_id;
	o->client_id = s->client_id;
	o->capacity = s->capacity;
	o->used = s->used;
	o->reads = s->reads;
	o->dynamic_copy = s->dynamic_copy;
	snprintf(o->name, sizeof(o->name), "%s", s->name);
	snprintf(o->host_id, sizeof(o->host_id), "%s", s->host_id);
	snprintf(o->domain, sizeof(o->domain), "%s", s->domain);
	snprintf(o->endpoint, sizeof(o->endpoint), "%s", s->endpoint);
}

static int copy_stats(store_client *c, const McreplRpc__StatsResponse *r,
		      struct store_segment_info **segs, size_t *n_segs,
		      char **text_out)
{
	if (segs) {
		*segs = calloc(r->n_segments + 1, sizeof(**segs));
		if (!*segs)
			return fail(c, -ENOMEM, "stats: out of memory");
		for (size_t i = 0; i < r->n_segments; i++)
			fill_segment_info(&(*segs)[i], r->segments[i]);
		*n_segs = r->n_segments;
	}
	if (text_out) {
		*text_out = strdup(r->metrics_text ? r->metrics_text : "");
		if (!*text_out) {
			if (segs) {
				free(*segs);
				*segs = NULL;
			}
			return fail(c, -ENOMEM, "stats: out of memory");
		}
	}
	return 0;
}

int store_client_stats(store_client *c, struct store_segment_info **segs,
		       size_t *n_segs, char **text_out)
{
	McreplRpc__StatsRequest req;
	McreplRpc__StatsResponse *resp = NULL;
	int st;

	c->err[0] = '\0';
	if (segs)
		*segs = NULL;
	if (n_segs)
		*n_segs = 0;
	if (text_out)
		*text_out = NULL;
	mcrepl_rpc__stats_request__init(&req);
	st = CALL(c, "Stats", req, mcrepl_rpc__stats_response, resp);
	if (!st)
		st = result(c, resp->result, "stats");
	if (!st)
		st = copy_stats(c, resp, segs, n_segs, text_out);
	free_msg(resp);
	return st;
}
