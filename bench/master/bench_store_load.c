/* The benches' store: bench_store_load.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_store_load.h"
#include "flags.h"
#include "util/hash.h"

static const uint8_t test_secret[GRANT_SECRET_BYTES] = "not-a-real-key!";

struct store *bench_store_load(const struct bench_load *l, char **keys,
			       size_t n, uint64_t *seg_ids)
{
	struct master_opts o;
	struct store *s;
	char err[128] = "", name[32];
	struct object *obj;
	uint64_t id;

	master_opts_defaults(&o);
	o.cfg.mode = l->mode;
	if ((l->policy &&
	     mcrepl_config_set(&o.cfg, "policy", l->policy) != MCREPL_OK) ||
	    store_create(&o, test_secret, 7, &s) != 0) {
		fprintf(stderr, "bench: no store (policy %s)\n",
			l->policy ? l->policy : "default");
		return NULL;
	}
	store_lock(s);
	for (size_t h = 0; h < l->hosts; h++) {
		struct mount_args a = {
		    .client_id = BENCH_CLIENT0 + h,
		    .host = name,
		    .domain = "",
		    .name = name,
		    .endpoint = "127.0.0.1:1",
		    .capacity = l->capacity,
		    .dynamic_copy = true,
		};
		snprintf(name, sizeof(name), "host-%zu", h);
		if (store_mount(s, &a, l->now_ms, &id, err, sizeof(err)) !=
		    MCREPL_RPC__CODE__OK)
			goto fail;
		if (seg_ids)
			seg_ids[h] = id;
	}
	for (size_t i = 0; i < n; i++) {
		if (store_put_start(s, "t", keys[i], l->object_size, 1,
				    l->now_ms, &obj, err,
				    sizeof(err)) != MCREPL_RPC__CODE__OK ||
		    store_put_end(s, "t", keys[i], obj->version) !=
			MCREPL_RPC__CODE__OK)
			goto fail;
	}
	store_unlock(s);
	return s;
fail:
	fprintf(stderr, "bench: load: %s\n", err);
	store_unlock(s);
	store_destroy(s);
	return NULL;
}

int bench_zipf_sequence(uint32_t *seq, size_t m, size_t n, double theta,
			uint64_t seed)
{
	uint32_t *perm = malloc(n * sizeof(*perm));
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;

	if (!perm || !cdf || !n) {
		free(perm);
		free(cdf);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		sum += 1.0 / pow((double)(i + 1), theta);
		cdf[i] = sum;
		perm[i] = (uint32_t)i;
	}
	for (size_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
		size_t j = (size_t)(mcu_splitmix64(&seed) % (i + 1));
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t k = 0; k < m; k++) {
		double u =
		    (double)(mcu_splitmix64(&seed) >> 11) * 0x1p-53 * sum;
		size_t lo = 0, hi = n - 1; /* the first cdf[i] >= u */

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		seq[k] = perm[lo];
	}
	free(perm);
	free(cdf);
	return 0;
}

char **bench_key_names(size_t n)
{
	char **keys = calloc(n, sizeof(*keys));

	for (size_t i = 0; keys && i < n; i++) {
		keys[i] = malloc(32);
		if (!keys[i]) {
			bench_key_names_free(keys, i);
			return NULL;
		}
		snprintf(keys[i], 32, "bench-key-%zu", i);
	}
	return keys;
}

void bench_key_names_free(char **keys, size_t n)
{
	for (size_t i = 0; keys && i < n; i++)
		free(keys[i]);
	free(keys);
}
