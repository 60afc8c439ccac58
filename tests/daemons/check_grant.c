/* The sealed data plane (and the stale writer): every READ and
 * WRITE on a worker's data port needs the master's grant for exactly that
 * op, region and object, not expired, under the running master's secret.
 * First the grant itself and the data server in-process (exact statuses),
 * then the attacks against real daemons on loopback: each refused with its
 * status and reason, and no byte of any object changed. */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "data_client.h"
#include "dsfix.h"
#include "grant.h"
#include "grantfix.h"
#include "harness.h"
#include "mwfix.h"
#include "netutil.h"
#include "rawsock.h"
#include "revoke.h"
#include "stamp.h"
#include "store_client.h"
#include "wait.h"

Suite *make_grant_suite(void);

/* ---- the MAC ----------------------------------------------------------- */

static struct data_req req_of(uint8_t op, uint64_t seg, uint64_t off,
			      uint64_t len, struct data_grant g)
{
	return (struct data_req){op, seg, off, len, g};
}

/* One field of the request or the key changed per row: DENIED; the
 * untouched request passes; past its expiry it is EXPIRED. */
START_TEST(test_grant_binds_every_field)
{
	struct grant_key k, other;
	const uint64_t exp = 5000;
	struct data_grant g;
	struct data_req r;
	uint8_t secret2[GRANT_SECRET_BYTES];

	grant_key_init(&k, gf_secret, GF_INCARNATION);
	g = grant_sign(&k, DATA_OP_READ, 3, 4096, 1000, 9, exp);
	ck_assert_uint_ne(g.tag, 0);
	ck_assert_uint_eq(g.object_id, 9);
	ck_assert_uint_eq(g.expires_ms, exp);
	r = req_of(DATA_OP_READ, 3, 4096, 1000, g);
	ck_assert_int_eq(grant_check(&k, &r, 4999), DATA_OK);
	ck_assert_int_eq(grant_check(&k, &r, 5000), DATA_E_EXPIRED);
	ck_assert_int_eq(grant_check(&k, &r, -1), DATA_E_EXPIRED);
	for (int row = 0; row < 10; row++) {
		struct data_req x = r;
		const struct grant_key *kk = &k;

		switch (row) {
		case 0:
			x.op = DATA_OP_WRITE;
			break;
		case 1:
			x.segment_id = 4;
			break;
		case 2:
			x.offset += STAMP_BYTES;
			break;
		case 3:
			x.length -= 1;
			break;
		case 4:
			x.grant.object_id = 10;
			break;
		case 5:
			x.grant.expires_ms += 60000;
			break; /* extended */
		case 6:
			x.grant.tag ^= 1ULL << 63;
			break;
		case 7:
			x.grant.tag = 0;
			break;
		case 8: /* another incarnation, same secret */
			grant_key_init(&other, gf_secret, GF_INCARNATION + 1);
			kk = &other;
			break;
		default: /* another secret (a restarted master) */
			memcpy(secret2, gf_secret, sizeof(secret2));
			secret2[15] ^= 1;
			grant_key_init(&other, secret2, GF_INCARNATION);
			kk = &other;
			break;
		}
		ck_assert_msg(grant_check(kk, &x, 0) == DATA_E_DENIED, "row %d",
			      row);
	}
	memset(&other, 0, sizeof(other)); /* no secret yet: refuse all */
	ck_assert_int_eq(grant_check(&other, &r, 0), DATA_E_DENIED);
}
END_TEST

/* Each segment's key is derived from the root, the incarnation and the
 * segment id: a grant signed with one segment's key (a worker's own)
 * fails under every other segment's, and under the root itself. */
START_TEST(test_grant_segment_keys_are_separate)
{
	uint8_t k1[GRANT_SECRET_BYTES], k1b[GRANT_SECRET_BYTES],
	    k2[GRANT_SECRET_BYTES], k1i[GRANT_SECRET_BYTES];
	struct grant_key a, b, root, seg1;
	struct data_grant g;
	struct data_req r;

	grant_key_derive(gf_secret, GF_INCARNATION, 1, k1);
	grant_key_derive(gf_secret, GF_INCARNATION, 1, k1b);
	grant_key_derive(gf_secret, GF_INCARNATION, 2, k2);
	grant_key_derive(gf_secret, GF_INCARNATION + 1, 1, k1i);
	ck_assert_mem_eq(k1, k1b, GRANT_SECRET_BYTES);
	ck_assert(memcmp(k1, k2, GRANT_SECRET_BYTES) != 0);
	ck_assert(memcmp(k1, k1i, GRANT_SECRET_BYTES) != 0);
	ck_assert(memcmp(k1, gf_secret, GRANT_SECRET_BYTES) != 0);
	ck_assert(memcmp(k1, k1 + 8, 8) != 0); /* two distinct halves */
	grant_key_init(&a, k1, GF_INCARNATION);
	grant_key_init(&b, k2, GF_INCARNATION);
	grant_key_init(&root, gf_secret, GF_INCARNATION);
	grant_segment_key(&seg1, gf_secret, GF_INCARNATION, 1);
	/* segment 1's key signs for segment 2: refused there */
	g = grant_sign(&a, DATA_OP_WRITE, 2, 0, 4096, 5, 9000);
	r = req_of(DATA_OP_WRITE, 2, 0, 4096, g);
	ck_assert_int_eq(grant_check(&b, &r, 0), DATA_E_DENIED);
	ck_assert_int_eq(grant_check(&root, &r, 0), DATA_E_DENIED);
	/* and for itself: accepted by the master's derivation alike */
	g = grant_sign(&a, DATA_OP_READ, 1, 0, 4096, 5, 9000);
	r = req_of(DATA_OP_READ, 1, 0, 4096, g);
	ck_assert_int_eq(grant_check(&seg1, &r, 0), DATA_OK);
	ck_assert_int_eq(grant_check(&b, &r, 0), DATA_E_DENIED);
}
END_TEST

/* A segment's revocations: an entry refuses the revoked grant and any
 * other of that object at that offset expiring no later, never another
 * object's; it is dropped once its grant's expiry has passed; the set
 * holds at most max entries, and frees room by dropping expired ones. */
START_TEST(test_revoke_set_bounded_and_pruned)
{
	struct revoke_set rs;

	ck_assert_int_eq(revoke_set_init(&rs, 2), 0);
	ck_assert_int_eq(revoke_set_add(&rs, 0, 100, 9, 5000, 1000), 0);
	ck_assert(revoke_set_covers(&rs, 0, 100, 9, 5000));
	ck_assert(revoke_set_covers(&rs, 0, 100, 9, 4000));
	ck_assert(!revoke_set_covers(&rs, 0, 100, 9, 5001));  /* newer */
	ck_assert(!revoke_set_covers(&rs, 0, 100, 10, 5000)); /* next obj */
	ck_assert(!revoke_set_covers(&rs, 100, 100, 9, 5000));
	ck_assert_int_eq(revoke_set_add(&rs, 0, 100, 9, 5000, 1000), 0);
	ck_assert_uint_eq(revoke_set_size(&rs), 1); /* a repeat: kept once */
	ck_assert_int_eq(revoke_set_add(&rs, 100, 100, 10, 9000, 1000), 0);
	ck_assert_int_eq(revoke_set_add(&rs, 200, 100, 11, 9000, 1000), -1);
	ck_assert_uint_eq(revoke_set_size(&rs), 2); /* full */
	/* at 5000 the first grant has expired: its entry goes, room again */
	ck_assert_int_eq(revoke_set_add(&rs, 200, 100, 11, 9000, 5000), 0);
	ck_assert_uint_eq(revoke_set_size(&rs), 2);
	ck_assert(!revoke_set_covers(&rs, 0, 100, 9, 5000));
	ck_assert(revoke_set_covers(&rs, 100, 100, 10, 9000));
	ck_assert(revoke_set_covers(&rs, 200, 100, 11, 9000));
	/* pruning out of insertion order when full: the sweep finds it */
	ck_assert_int_eq(revoke_set_add(&rs, 300, 100, 12, 9500, 9000), 0);
	ck_assert_uint_eq(revoke_set_size(&rs), 1);
	revoke_set_prune(&rs, 9500);
	ck_assert_uint_eq(revoke_set_size(&rs), 0);
	ck_assert_int_eq(revoke_set_add(&rs, 0, 100, 9, 20000, 9500), 0);
	revoke_set_clear(&rs);
	ck_assert_uint_eq(revoke_set_size(&rs), 0);
	ck_assert(!revoke_set_covers(&rs, 0, 100, 9, 20000));
	revoke_set_fini(&rs);
}
END_TEST

/* ---- the data server, in-process ---------------------------------------- */

#define SEG_ID 7
#define SEG_BYTES (1u << 20)

static struct {
	struct dsfix d;
	uint8_t *seg;
} ip;

static void ip_setup(void)
{
	dsfix_create(&ip.d);
	ip.seg = calloc(1, SEG_BYTES);
	ck_assert_ptr_nonnull(ip.seg);
	data_server_bind(ip.d.ds,
			 data_server_add_segment(ip.d.ds, ip.seg, SEG_BYTES),
			 SEG_ID);
	gf_arm(ip.d.ds, 0);
	dsfix_run(&ip.d);
}

static void ip_teardown(void)
{
	dsfix_destroy(&ip.d);
	free(ip.seg);
}

/* A READ of the region at off (stamp + 100 bytes) with grant g. */
static int ip_read(uint64_t off, uint64_t len, const struct data_grant *g,
		   uint8_t *buf, char *err, size_t errlen)
{
	return data_read(NULL, ip.d.ep, SEG_ID, off, buf, len, g, 2000, err,
			 errlen);
}

/* A granted READ expires; a READ whose region was reused by another
 * object (its stamp names another) is refused though its grant still
 * runs: a grant that outlives the read lease never reads someone else's
 * bytes. */
START_TEST(test_read_refused_after_expiry_or_reuse)
{
	const uint64_t len = STAMP_BYTES + 100;
	uint8_t buf[STAMP_BYTES + 100];
	struct data_grant g;
	char err[256];

	memset(ip.seg + STAMP_BYTES, 'a', 100);
	gf_stamp(ip.seg, GF_OBJECT, 100);
	g = gf_grant(DATA_OP_READ, SEG_ID, 0, len, GF_OBJECT);
	ck_assert_int_eq(ip_read(0, len, &g, buf, err, sizeof(err)), 0);
	ck_assert_uint_eq(buf[STAMP_BYTES], 'a');
	g = gf_grant_until(DATA_OP_READ, SEG_ID, 0, len, GF_OBJECT,
			   (uint64_t)net_now_ms() - 1);
	memset(buf, 0, sizeof(buf));
	ck_assert_int_eq(ip_read(0, len, &g, buf, err, sizeof(err)),
			 -EKEYEXPIRED);
	ck_assert_msg(strstr(err, "expired") && strstr(err, "ask the master"),
		      "%s", err);
	ck_assert_uint_eq(buf[STAMP_BYTES], 0);
	/* the region now holds object 78 (another tenant's) */
	memset(ip.seg + STAMP_BYTES, 'b', 100);
	gf_stamp(ip.seg, GF_OBJECT + 1, 100);
	g = gf_grant(DATA_OP_READ, SEG_ID, 0, len, GF_OBJECT);
	/* refused as a forged grant is: nothing tells which object is there */
	ck_assert_int_eq(ip_read(0, len, &g, buf, err, sizeof(err)), -EACCES);
	ck_assert_msg(strstr(err, "read grant refused for segment 7 [0, +164)"),
		      "%s", err);
	ck_assert_uint_eq(buf[STAMP_BYTES], 0);
}
END_TEST

/* The whole reply (header and reason) to one READ of [0, +len) with g,
 * spoken on the data protocol itself; its length. */
static size_t raw_reply(uint64_t len, const struct data_grant *g, uint8_t *out,
			size_t cap)
{
	struct data_req r = req_of(DATA_OP_READ, SEG_ID, 0, len, *g);
	uint8_t hdr[DATA_REQ_BYTES];
	struct data_resp resp;
	size_t got = 0;
	int fd = raw_connect(data_server_port(ip.d.ds));

	data_req_encode(&r, hdr);
	raw_send(fd, hdr, sizeof(hdr));
	while (got < DATA_RESP_BYTES || (data_resp_decode(out, &resp) == 0 &&
					 got < DATA_RESP_BYTES + resp.length)) {
		ssize_t n = recv(fd, out + got, cap - got, 0);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
		ck_assert_uint_lt(got, cap);
	}
	close(fd);
	return got;
}

/* Guessing which object a region holds gets no oracle: a READ grant
 * correctly tagged but naming another object than the region's stamp, one
 * naming the right object with a wrong tag, and one with the object id
 * changed after signing get the very same reply, byte for byte (DENIED,
 * one reason); only the true grant reads. */
START_TEST(test_attack_object_id_guess_no_oracle)
{
	const uint64_t len = STAMP_BYTES + 100;
	uint8_t want[512], got[512];
	struct data_resp resp;
	struct data_grant g;
	size_t n, m;

	memset(ip.seg + STAMP_BYTES, 'a', 100);
	gf_stamp(ip.seg, GF_OBJECT, 100);
	/* a wrong tag */
	g = gf_grant(DATA_OP_READ, SEG_ID, 0, len, GF_OBJECT);
	g.tag ^= 1;
	n = raw_reply(len, &g, want, sizeof(want));
	ck_assert_int_eq(data_resp_decode(want, &resp), 0);
	ck_assert_uint_eq(resp.status, DATA_E_DENIED);
	ck_assert_uint_eq(n, DATA_RESP_BYTES + resp.length);
	ck_assert_int_eq(memcmp(want + DATA_RESP_BYTES,
				"read grant refused for segment 7 [0, +164)",
				resp.length),
			 0);
	/* correctly tagged guesses of the object id: every wrong one is
	 * refused alike */
	for (uint64_t guess = GF_OBJECT - 3; guess <= GF_OBJECT + 3; guess++) {
		if (guess == GF_OBJECT)
			continue;
		g = gf_grant(DATA_OP_READ, SEG_ID, 0, len, guess);
		m = raw_reply(len, &g, got, sizeof(got));
		ck_assert_uint_eq(m, n);
		ck_assert_msg(memcmp(got, want, n) == 0, "guess %llu",
			      (unsigned long long)guess);
	}
	/* the object id changed after signing */
	g = gf_grant(DATA_OP_READ, SEG_ID, 0, len, GF_OBJECT + 1);
	g.object_id = GF_OBJECT;
	m = raw_reply(len, &g, got, sizeof(got));
	ck_assert_uint_eq(m, n);
	ck_assert_int_eq(memcmp(got, want, n), 0);
	/* the true grant reads */
	g = gf_grant(DATA_OP_READ, SEG_ID, 0, len, GF_OBJECT);
	m = raw_reply(len, &g, got, sizeof(got));
	ck_assert_int_eq(data_resp_decode(got, &resp), 0);
	ck_assert_uint_eq(resp.status, DATA_OK);
	ck_assert_uint_eq(m, DATA_RESP_BYTES + len);
	ck_assert_uint_eq(got[DATA_RESP_BYTES + STAMP_BYTES], 'a');
}
END_TEST

/* A WRITE whose grant expires while its payload still streams is cut at
 * the expiry: the bytes sent after it never land. */
/* A WRITE of len bytes under r's grant, its header and first 4 KiB sent:
 * the connection. */
#define CUT_PART 4096
static int stream_start(const struct data_req *r)
{
	uint8_t hdr[DATA_REQ_BYTES], part[CUT_PART];
	char err[128];
	int fd = net_connect("127.0.0.1", data_server_port(ip.d.ds), 2000, err,
			     sizeof(err));

	ck_assert_int_ge(fd, 0);
	data_req_encode(r, hdr);
	memset(part, 'w', sizeof(part));
	ck_assert_int_eq(send(fd, hdr, sizeof(hdr), 0), sizeof(hdr));
	ck_assert_int_eq(send(fd, part, sizeof(part), 0), sizeof(part));
	return fd;
}

/* The stream's first 4 KiB have landed. */
static bool first_part_landed(void)
{
	return ip.seg[CUT_PART - 1] == 'w';
}

static uint64_t cut_writes(struct data_server_counters *c)
{
	data_server_counters(ip.d.ds, c);
	return c->cut_writes;
}

/* The rest of fd's stream sent after its grant died: the first 4 KiB
 * landed, nothing after them, one write cut. */
static void assert_cut(int fd, uint64_t len, struct data_server_counters *c)
{
	uint8_t part[CUT_PART];

	memset(part, 'w', sizeof(part));
	send(fd, part, sizeof(part), MSG_NOSIGNAL);
	WAIT_UNTIL(cut_writes(c) == 1);
	for (size_t i = 0; i < sizeof(part); i++)
		ck_assert_uint_eq(ip.seg[i], 'w'); /* before: landed */
	for (size_t i = sizeof(part); i < len; i++)
		ck_assert_uint_eq(ip.seg[i], 0); /* after: never */
	data_server_counters(ip.d.ds, c);
	ck_assert_uint_eq(c->cut_writes, 1);
	close(fd);
}

START_TEST(test_write_cut_when_its_grant_expires_mid_stream)
{
	const uint64_t len = 64u << 10, until = (uint64_t)net_now_ms() + 1000;
	struct data_grant g =
	    gf_grant_until(DATA_OP_WRITE, SEG_ID, 0, len, 1, until);
	struct data_req r = req_of(DATA_OP_WRITE, SEG_ID, 0, len, g);
	struct data_server_counters c;
	int fd = stream_start(&r);

	WAIT_UNTIL(first_part_landed()); /* before the expiry (1 s) */
	ck_assert(first_part_landed());
	while ((uint64_t)net_now_ms() < until + 200) /* past the expiry */
		harness_sleep_ms(50);
	assert_cut(fd, len, &c);
}
END_TEST

static int ip_write(uint64_t off, const void *buf, uint64_t len,
		    const struct data_grant *g, char *err, size_t errlen)
{
	return data_write(NULL, ip.d.ep, SEG_ID, off, buf, len, g, 2000, err,
			  errlen);
}

/* A revoked WRITE grant is refused at once, long before its expiry, with
 * the very answer a forged one gets (DENIED, one reason); the next
 * object's grant on the same region still writes; the revocation of an
 * unbound segment fails (the worker must not acknowledge it). */
START_TEST(test_revoked_write_grant_refused_next_object_writes)
{
	const uint64_t len = 4096;
	uint8_t buf[4096];
	struct data_grant old, forged, next;
	struct data_server_counters c;
	char err[256], err2[256];

	memset(buf, 'e', sizeof(buf));
	old = gf_grant(DATA_OP_WRITE, SEG_ID, 0, len, GF_OBJECT);
	ck_assert_int_eq(ip_write(0, buf, len, &old, err, sizeof(err)), 0);
	ck_assert_uint_eq(ip.seg[100], 'e');
	dsfix_pause(&ip.d);
	ck_assert_int_eq(data_server_revoke_write(ip.d.ds, SEG_ID, 0, len,
						  GF_OBJECT, old.expires_ms),
			 0);
	ck_assert_int_eq(data_server_revoke_write(ip.d.ds, SEG_ID + 1, 0, len,
						  GF_OBJECT, old.expires_ms),
			 -1);
	dsfix_run(&ip.d);
	memset(ip.seg, 0, len);
	ck_assert_int_eq(ip_write(0, buf, len, &old, err, sizeof(err)),
			 -EACCES);
	ck_assert_msg(strstr(err, "refused: write grant refused for segment 7 "
				  "[0, +4096) (grant refused)"),
		      "%s", err);
	forged = old;
	forged.tag ^= 1;
	ck_assert_int_eq(ip_write(0, buf, len, &forged, err2, sizeof(err2)),
			 -EACCES);
	ck_assert_str_eq(err2, err);
	ck_assert_uint_eq(ip.seg[100], 0);
	/* the region's next object */
	memset(buf, 'n', sizeof(buf));
	next = gf_grant(DATA_OP_WRITE, SEG_ID, 0, len, GF_OBJECT + 1);
	ck_assert_int_eq(ip_write(0, buf, len, &next, err, sizeof(err)), 0);
	ck_assert_uint_eq(ip.seg[100], 'n');
	data_server_counters(ip.d.ds, &c);
	ck_assert_uint_eq(c.refused_revoked, 1);
	ck_assert_uint_eq(c.refused_grant, 2);
}
END_TEST

/* A WRITE streaming under a grant when it is revoked is cut there: the
 * bytes sent after the revocation never land. */
START_TEST(test_write_cut_when_its_grant_is_revoked_mid_stream)
{
	const uint64_t len = 64u << 10;
	struct data_grant g = gf_grant(DATA_OP_WRITE, SEG_ID, 0, len, 1);
	struct data_req r = req_of(DATA_OP_WRITE, SEG_ID, 0, len, g);
	struct data_server_counters c;
	int fd = stream_start(&r);

	WAIT_UNTIL(first_part_landed());
	dsfix_pause(&ip.d);
	ck_assert_int_eq(
	    data_server_revoke_write(ip.d.ds, SEG_ID, 0, len, 1, g.expires_ms),
	    0);
	dsfix_run(&ip.d);
	assert_cut(fd, len, &c);
	ck_assert_uint_eq(c.refused_revoked, 1);
}
END_TEST

/* ---- against real daemons ------------------------------------------------ */

#define OBJ_BYTES (64u << 10)

static struct {
	struct mwfix m;
	uint8_t obj[OBJ_BYTES];
} fx;

/* put_start_*: 1 s, so a put's WRITE grant expires after 1 s and an
 * abandoned put is reclaimed then. */
static void setup(void)
{
	static const char *const flags[] = {"--dynamic_replication_mode=off",
					    "--put_start_discard_timeout_sec=1",
					    "--put_start_release_timeout_sec=1",
					    NULL};
	const struct mwfix_opts o = {
	    .master_flags = flags,
	    .master_flag = "--rpc_port=0",
	    .segment_size = "16M",
	};

	memset(&fx, 0, sizeof(fx));
	for (size_t i = 0; i < OBJ_BYTES; i++)
		fx.obj[i] = (uint8_t)(i * 131 + 7);
	mwfix_start(&fx.m, &o);
}

static void teardown(void)
{
	mwfix_stop(&fx.m);
}

static long long master_metric(const char *name)
{
	return mwfix_metric(&fx.m, name);
}

static store_client *client(const char *tenant)
{
	return mwfix_client(&fx.m, tenant, NULL);
}

static void put(store_client *c, const char *key, const uint8_t *obj)
{
	ck_assert_msg(store_client_put(c, key, obj, OBJ_BYTES) == 0, "put: %s",
		      store_client_error(c));
}

/* key reads back as exactly obj. */
static void assert_intact(store_client *c, const char *key, const uint8_t *obj)
{
	mwfix_assert_reads(c, key, obj, OBJ_BYTES);
}

static McreplRpc__GetReplicaListResponse *list(store_client *c, const char *key)
{
	McreplRpc__GetReplicaListResponse *r = NULL;

	ck_assert_msg(store_client_get_list(c, key, &r) == 0, "%s",
		      store_client_error(c));
	ck_assert_uint_eq(r->n_replicas, 1);
	return r;
}

/* A PutStart never followed by a write or PutEnd (caller frees). */
static McreplRpc__PutStartResponse *
put_start(rpc_client *rc, const char *tenant, const char *key)
{
	McreplRpc__PutStartRequest req;
	McreplRpc__PutStartResponse *r;

	mcrepl_rpc__put_start_request__init(&req);
	req.tenant = (char *)(uintptr_t)tenant;
	req.key = (char *)(uintptr_t)key;
	req.size = OBJ_BYTES;
	req.replica_num = 1;
	r = (McreplRpc__PutStartResponse *)harness_call(rc, "PutStart",
							&req.base, NULL);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->result->code, MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(r->n_replicas, 1);
	return r;
}

/* A whole-region WRITE of junk at rep's region (or at offset off of its
 * segment) with grant g; its status, the reason in err. */
static int write_junk(const McreplRpc__Replica *rep, uint64_t off,
		      const struct data_grant *g, char *err, size_t errlen)
{
	static uint8_t junk[STAMP_BYTES + OBJ_BYTES];

	memset(junk, 0xee, sizeof(junk));
	return store_data_write(rep->endpoint, rep->segment_id, off, junk,
				sizeof(junk), g, 2000, err, errlen);
}

/* READ straight off the worker's data port, no grant: refused, nothing
 * sent back. */
START_TEST(test_read_without_grant_refused)
{
	store_client *c = client("victim");
	McreplRpc__GetReplicaListResponse *r;
	uint8_t *buf = calloc(1, STAMP_BYTES + OBJ_BYTES);
	const struct data_grant none = {0};
	char err[256];

	put(c, "secret", fx.obj);
	r = list(c, "secret");
	ck_assert_uint_ne(r->replicas[0]->grant_tag, 0);
	ck_assert_uint_eq(r->replicas[0]->grant_object_id, r->version);
	/* no RDMA key either: an rkey writes the whole segment */
	ck_assert_uint_eq(r->replicas[0]->rkey, 0);
	ck_assert_uint_eq(r->replicas[0]->remote_addr, 0);
	ck_assert_int_eq(store_data_read(r->replicas[0]->endpoint,
					 r->replicas[0]->segment_id,
					 r->replicas[0]->offset, buf,
					 STAMP_BYTES + OBJ_BYTES, &none, 2000,
					 err, sizeof(err)),
			 -EACCES);
	ck_assert_msg(strstr(err, "read grant refused"), "%s", err);
	for (size_t i = 0; i < STAMP_BYTES + OBJ_BYTES; i++)
		ck_assert_uint_eq(buf[i], 0);
	protobuf_c_message_free_unpacked(&r->base, NULL);
	free(buf);
	store_client_close(c);
}
END_TEST

/* An attacker with its own put's WRITE grant (and a forged one) tries to
 * overwrite another tenant's object: refused, the victim reads its own
 * bytes. */
START_TEST(test_forged_grant_cannot_overwrite_another_tenant)
{
	store_client *victim = client("victim"), *attacker = client("evil");
	McreplRpc__GetReplicaListResponse *vl;
	McreplRpc__PutStartResponse *mine;
	rpc_client *rc = harness_client(fx.m.port);
	struct data_grant g;
	const McreplRpc__Replica *vr;
	char err[256];

	put(victim, "v", fx.obj);
	vl = list(victim, "v"); /* where the victim lives (the attacker may
				 * learn it from a Stat or a guess) */
	vr = vl->replicas[0];
	mine = put_start(rc, "evil", "mine");
	ck_assert_uint_eq(mine->write_token, 0); /* no key-derived token */
	ck_assert_uint_eq(mine->replicas[0]->write_token, 0);
	/* its own grant, transplanted onto the victim's region */
	g = store_replica_grant(mine->replicas[0]);
	ck_assert_int_eq(write_junk(vr, vr->offset, &g, err, sizeof(err)),
			 -EACCES);
	ck_assert_msg(strstr(err, "write grant refused"), "%s", err);
	/* with the victim's object id (its version is public) */
	g.object_id = vl->version;
	ck_assert_int_eq(write_junk(vr, vr->offset, &g, err, sizeof(err)),
			 -EACCES);
	/* the victim's READ grant used to write */
	g = store_replica_grant(vr);
	ck_assert_int_eq(write_junk(vr, vr->offset, &g, err, sizeof(err)),
			 -EACCES);
	/* made up */
	g = (struct data_grant){vl->version, UINT64_MAX, 0x0123456789abcdef};
	ck_assert_int_eq(write_junk(vr, vr->offset, &g, err, sizeof(err)),
			 -EACCES);
	assert_intact(victim, "v", fx.obj);
	protobuf_c_message_free_unpacked(&vl->base, NULL);
	protobuf_c_message_free_unpacked(&mine->base, NULL);
	rpc_client_close(rc);
	store_client_close(victim);
	store_client_close(attacker);
}
END_TEST

/* A genuine READ grant works only for its own range, object and op. */
START_TEST(test_read_grant_cannot_be_reused)
{
	store_client *c = client("t");
	McreplRpc__GetReplicaListResponse *a, *b;
	uint8_t *buf = malloc(STAMP_BYTES + OBJ_BYTES);
	const uint64_t len = STAMP_BYTES + OBJ_BYTES;
	const McreplRpc__Replica *ra, *rb;
	struct data_grant g;
	char err[256];

	put(c, "a", fx.obj);
	put(c, "b", fx.obj);
	a = list(c, "a");
	b = list(c, "b");
	ra = a->replicas[0];
	rb = b->replicas[0];
	g = store_replica_grant(ra);
	ck_assert_int_eq(store_data_read(ra->endpoint, ra->segment_id,
					 ra->offset, buf, len, &g, 2000, err,
					 sizeof(err)),
			 0); /* its own: fine */
	/* b's region (another object) with a's grant */
	ck_assert_int_eq(store_data_read(rb->endpoint, rb->segment_id,
					 rb->offset, buf, len, &g, 2000, err,
					 sizeof(err)),
			 -EACCES);
	/* another range of a's region */
	ck_assert_int_eq(store_data_read(ra->endpoint, ra->segment_id,
					 ra->offset + STAMP_BYTES, buf,
					 OBJ_BYTES, &g, 2000, err, sizeof(err)),
			 -EACCES);
	/* naming b's object */
	g.object_id = b->version;
	ck_assert_int_eq(store_data_read(ra->endpoint, ra->segment_id,
					 ra->offset, buf, len, &g, 2000, err,
					 sizeof(err)),
			 -EACCES);
	/* living longer */
	g = store_replica_grant(ra);
	g.expires_ms += 3600000;
	ck_assert_int_eq(store_data_read(ra->endpoint, ra->segment_id,
					 ra->offset, buf, len, &g, 2000, err,
					 sizeof(err)),
			 -EACCES);
	/* as a WRITE of a's own region */
	g = store_replica_grant(ra);
	ck_assert_int_eq(write_junk(ra, ra->offset, &g, err, sizeof(err)),
			 -EACCES);
	assert_intact(c, "a", fx.obj);
	assert_intact(c, "b", fx.obj);
	protobuf_c_message_free_unpacked(&a->base, NULL);
	protobuf_c_message_free_unpacked(&b->base, NULL);
	free(buf);
	store_client_close(c);
}
END_TEST

/* The old attack: one PutStart's token gave away the key. A WRITE grant
 * for region A is worth nothing for region B on the same segment, even
 * naming B's object. */
START_TEST(test_write_grant_for_one_region_useless_for_another)
{
	store_client *victim = client("victim");
	rpc_client *rc = harness_client(fx.m.port);
	McreplRpc__PutStartResponse *a = put_start(rc, "evil", "a");
	McreplRpc__GetReplicaListResponse *vl;
	const McreplRpc__Replica *ra = a->replicas[0], *vr;
	struct data_grant g = store_replica_grant(ra);
	char err[256];

	put(victim, "v", fx.obj); /* placed right after a's region */
	vl = list(victim, "v");
	vr = vl->replicas[0];
	ck_assert_uint_eq(vr->segment_id, ra->segment_id);
	ck_assert_uint_ne(vr->offset, ra->offset);
	ck_assert_int_eq(write_junk(vr, vr->offset, &g, err, sizeof(err)),
			 -EACCES);
	g.object_id = vl->version;
	ck_assert_int_eq(write_junk(vr, vr->offset, &g, err, sizeof(err)),
			 -EACCES);
	g = store_replica_grant(ra); /* its own region: allowed */
	ck_assert_int_eq(write_junk(ra, ra->offset, &g, err, sizeof(err)), 0);
	assert_intact(victim, "v", fx.obj);
	protobuf_c_message_free_unpacked(&vl->base, NULL);
	protobuf_c_message_free_unpacked(&a->base, NULL);
	rpc_client_close(rc);
	store_client_close(victim);
}
END_TEST

/* A writer stopped past its put's deadline (SIGSTOP, a long GC
 * pause) wakes up after the master reclaimed its region and gave it to
 * another tenant's object: its old grant has expired, the write is
 * refused and the new object keeps its bytes. */
START_TEST(test_stale_writer_after_reclaim_refused)
{
	store_client *other = client("other");
	rpc_client *rc = harness_client(fx.m.port);
	McreplRpc__PutStartResponse *stale = put_start(rc, "slow", "s");
	const McreplRpc__Replica *sr = stale->replicas[0];
	McreplRpc__GetReplicaListResponse *ol;
	struct data_grant g = store_replica_grant(sr);
	uint8_t *obj2 = malloc(OBJ_BYTES);
	char err[256];

	for (size_t i = 0; i < OBJ_BYTES; i++)
		obj2[i] = (uint8_t)(i * 7 + 1);
	/* past its 1 s deadline: reclaimed */
	WAIT_UNTIL(master_metric("mcrepl_master_reservations_reclaimed_total"
				 "{kind=\"put\",reason=\"deadline\"}") == 1);
	put(other, "n", obj2);
	ol = list(other, "n");
	/* the new object took the stale writer's very region */
	ck_assert_uint_eq(ol->replicas[0]->segment_id, sr->segment_id);
	ck_assert_uint_eq(ol->replicas[0]->offset, sr->offset);
	ck_assert_int_eq(write_junk(sr, sr->offset, &g, err, sizeof(err)),
			 -EKEYEXPIRED);
	ck_assert_msg(strstr(err, "expired") && strstr(err, "ask the master"),
		      "%s", err);
	assert_intact(other, "n", obj2);
	protobuf_c_message_free_unpacked(&ol->base, NULL);
	protobuf_c_message_free_unpacked(&stale->base, NULL);
	free(obj2);
	rpc_client_close(rc);
	store_client_close(other);
}
END_TEST

/* A master restarted (new secret, new incarnation) invalidates every
 * grant of the old one: a WRITE grant kept from before the restart is
 * refused on the region the new master gave to another object. */
START_TEST(test_restarted_master_invalidates_old_grants)
{
	rpc_client *rc = harness_client(fx.m.port);
	McreplRpc__PutStartResponse *old = put_start(rc, "t", "old");
	const McreplRpc__Replica *r = old->replicas[0];
	struct data_grant g = store_replica_grant(r);
	McreplRpc__GetReplicaListResponse *nl;
	store_client *c;
	char port_flag[32], err[256];

	rpc_client_close(rc);
	snprintf(port_flag, sizeof(port_flag), "--rpc_port=%u", fx.m.port);
	proc_kill9(&fx.m.master);
	mwfix_master(&fx.m, port_flag);
	c = client("t2");
	/* the worker re-mounts */
	WAIT_UNTIL(store_client_put(c, "new", fx.obj, OBJ_BYTES) == 0);
	nl = list(c, "new");
	ck_assert_uint_eq(nl->replicas[0]->offset, r->offset);
	ck_assert_int_eq(write_junk(r, r->offset, &g, err, sizeof(err)),
			 -EACCES);
	assert_intact(c, "new", fx.obj);
	protobuf_c_message_free_unpacked(&nl->base, NULL);
	protobuf_c_message_free_unpacked(&old->base, NULL);
	store_client_close(c);
}
END_TEST

Suite *make_grant_suite(void)
{
	Suite *s = suite_create("grant");
	TCase *mac = tcase_create("mac");
	TCase *srv = tcase_create("server");
	TCase *d = tcase_create("daemons");

	tcase_add_test(mac, test_grant_binds_every_field);
	tcase_add_test(mac, test_grant_segment_keys_are_separate);
	tcase_add_test(mac, test_revoke_set_bounded_and_pruned);
	suite_add_tcase(s, mac);
	tcase_add_checked_fixture(srv, ip_setup, ip_teardown);
	tcase_add_test(srv, test_read_refused_after_expiry_or_reuse);
	tcase_add_test(srv, test_write_cut_when_its_grant_expires_mid_stream);
	tcase_add_test(srv,
		       test_revoked_write_grant_refused_next_object_writes);
	tcase_add_test(srv,
		       test_write_cut_when_its_grant_is_revoked_mid_stream);
	tcase_add_test(srv, test_attack_object_id_guess_no_oracle);
	suite_add_tcase(s, srv);
	tcase_add_checked_fixture(d, setup, teardown);
	tcase_set_timeout(d, 60);
	tcase_add_test(d, test_read_without_grant_refused);
	tcase_add_test(d, test_forged_grant_cannot_overwrite_another_tenant);
	tcase_add_test(d, test_read_grant_cannot_be_reused);
	tcase_add_test(d, test_write_grant_for_one_region_useless_for_another);
	tcase_add_test(d, test_stale_writer_after_reclaim_refused);
	tcase_add_test(d, test_restarted_master_invalidates_old_grants);
	suite_add_tcase(s, d);
	return s;
}
