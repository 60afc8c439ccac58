/*
 * bench_store_mem: the master's heap per object, in-process. One store
 * (defaults), one segment of 1 TiB, then N objects put and ended as
 * bench_stress loads a real master (tools/common/preload.c: tenant "",
 * keys "key-<i>", 1 KiB, one replica). The heap in use (glibc mallinfo2:
 * small blocks and mmapped ones) is read before and after the objects;
 * the keys are made before the first reading.
 *
 *   bench_store_mem [--keys N]    (1,000,000)
 *
 * Last line: bytes_per_object=<x> sizeof_object=<y> sizeof_replica=<z>
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_flags.h"
#include "flags.h"
#include "store.h"

static const uint8_t test_secret[GRANT_SECRET_BYTES] = "not-a-real-key!";

static size_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static const struct flag mem_flags[] = {
    {.name = "keys",
     .type = FLAG_U64,
     .off = 0,
     .def = "1000000",
     .help = "objects put, 1 KiB and one replica each",
     .min = 1,
     .max = 100000000},
};

static const struct flag_set mem_set = {
    .prog = "bench_store_mem",
    .intro = "the master's heap per object",
    .title = "bench_store_mem flags",
    .width = 6,
    .flags = mem_flags,
    .n = sizeof(mem_flags) / sizeof(mem_flags[0]),
};

int main(int argc, char **argv)
{
	struct mount_args a = {
	    .client_id = 1,
	    .host = "bench-host",
	    .domain = "",
	    .name = "bench-seg",
	    .endpoint = "127.0.0.1:1",
	    .capacity = 1ull << 40,
	};
	uint64_t n = 0;
	size_t before, after;
	struct master_opts o;
	struct store *s;
	struct object *obj;
	char err[160], **keys;
	uint64_t id;
	int st = bench_flags(&mem_set, &n, argc, argv);

	if (st >= 0)
		return st;
	keys = calloc(n, sizeof(*keys));
	for (size_t i = 0; keys && i < n; i++) {
		keys[i] = malloc(32);
		if (!keys[i])
			return 1;
		snprintf(keys[i], 32, "key-%zu", i);
	}
	master_opts_defaults(&o);
	if (!keys || store_create(&o, test_secret, 7, &s) != 0)
		return 1;
	store_lock(s);
	if (store_mount(s, &a, 1000, &id, err, sizeof(err)) !=
	    MCREPL_RPC__CODE__OK) {
		fprintf(stderr, "bench_store_mem: mount: %s\n", err);
		return 1;
	}
	before = heap_bytes();
	for (size_t i = 0; i < n; i++) {
		if (store_put_start(s, "", keys[i], 1024, 1, 1000, &obj, err,
				    sizeof(err)) != MCREPL_RPC__CODE__OK ||
		    store_put_end(s, "", keys[i], obj->version) !=
			MCREPL_RPC__CODE__OK) {
			fprintf(stderr, "bench_store_mem: put %zu: %s\n", i,
				err);
			return 1;
		}
	}
	after = heap_bytes();
	store_unlock(s);
	printf("objects %zu, heap %.1f MiB more\n", n,
	       (double)(after - before) / 1048576.0);
	printf("bytes_per_object=%.0f sizeof_object=%zu sizeof_replica=%zu\n",
	       (double)(after - before) / (double)n, sizeof(struct object),
	       sizeof(struct replica));
	store_destroy(s);
	for (size_t i = 0; i < n; i++)
		free(keys[i]);
	free(keys);
	return 0;
}
