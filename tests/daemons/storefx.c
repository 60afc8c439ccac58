/* The master's store in-process for the suites that drive it (storefx.h). */
#include <check.h>
#include <string.h>

#include "storefx.h"

static const uint8_t storefx_secret[GRANT_SECRET_BYTES] = "not-a-real-key!";

struct store *storefx_create(const struct master_opts *opts)
{
	struct store *s = NULL;

	ck_assert_int_eq(store_create(opts, storefx_secret, 7, &s), 0);
	store_lock(s);
	return s;
}

void storefx_destroy(struct store *s)
{
	ck_assert(store_indexes_consistent(s));
	store_unlock(s);
	store_destroy(s);
}

uint64_t storefx_mount(struct store *s, uint64_t client, const char *name,
		       const char *domain, uint64_t capacity, uint64_t now)
{
	struct mount_args m = {
	    .client_id = client,
	    .host = name,
	    .domain = domain,
	    .name = name,
	    .endpoint = "127.0.0.1:1",
	    .capacity = capacity,
	    .dynamic_copy = true,
	};
	char err[128];
	uint64_t id = 0;

	ck_assert_int_eq(store_mount(s, &m, now, &id, err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	return id;
}

struct object *storefx_put(struct store *s, const char *key, uint64_t size,
			   uint32_t replicas, uint64_t now)
{
	struct object *o = NULL;
	char err[128];

	ck_assert_int_eq(store_put_start(s, "t", key, size, replicas, now, &o,
					 err, sizeof(err)),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(store_put_end(s, "t", key, o->version),
			 MCREPL_RPC__CODE__OK);
	return o;
}

void storefx_read(struct store *s, const char *key, const char *domain, int n,
		  uint64_t now)
{
	for (int i = 0; i < n; i++) {
		struct object *o;
		size_t order[8], k;

		ck_assert_int_eq(
		    store_get(s, "t", key, domain, now, &o, order, 8, &k),
		    MCREPL_RPC__CODE__OK);
	}
}

struct store_figures storefx_figures(struct store *s)
{
	struct store_figures f;

	store_figures(s, &f);
	return f;
}

static mcrepl_status propose_in(struct store *s, const struct object *o,
				const char *id, const char *domain,
				uint64_t now, mcrepl_propose_result *res)
{
	mcrepl_proposal p = {
	    .action = MCREPL_ACTION_ADD,
	    .proposal_id = id,
	    .tenant = "t",
	    .key = o->key,
	    .requester_domain = domain,
	    .target_domain = domain,
	    .observed_version = o->version,
	    .expected_size = o->size,
	    .expires_at_ms = now + 5000,
	};

	return dyn_propose(s, &p, now, res);
}

mcrepl_status storefx_propose(struct store *s, const struct object *o,
			      const char *id, uint64_t now,
			      mcrepl_propose_result *res)
{
	return propose_in(s, o, id, NULL, now, res);
}

void storefx_dynamic_copy(struct store *s, const char *key, const char *domain,
			  int reads, uint64_t now)
{
	mcrepl_propose_result res;
	struct object *o = store_find(s, "t", key);
	struct replica src, dst;
	const char *reason = NULL;
	mcrepl_fence f;

	ck_assert_ptr_nonnull(o);
	for (int i = 0; i < reads; i++) {
		size_t order[8], n;

		store_get(s, "t", key, domain, now, &o, order, 8, &n);
	}
	ck_assert_str_eq(propose_in(s, o, key, domain, now, &res) == MCREPL_OK
			     ? "ok"
			     : mcrepl_reason_name(res.reason),
			 "ok");
	f = (mcrepl_fence){
	    .lease = res.lease.id,
	    .version = res.lease.version,
	    .caller = res.lease.source_client,
	    .source = res.lease.source,
	    .target = res.lease.target,
	};
	ck_assert_int_eq(dyn_copy_start(s, &f, "t", key, res.lease.task.v, now,
					&src, &dst, &reason),
			 MCREPL_RPC__CODE__OK);
	ck_assert_int_eq(dyn_copy_end(s, &f, "t", key, now, &reason),
			 MCREPL_RPC__CODE__OK);
	ck_assert_uint_eq(o->n_replicas, 2);
}
