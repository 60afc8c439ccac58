/* mcrepl-rdma-bench: the RDMA copy engine's throughput on real hardware,
 * for tests/rdma/hardware-test.sh. Two engines in one process on one
 * device (the NIC loops back): the target listens on --port and
 * registers --objects buffers of --size bytes, the source (on --port + 1)
 * copies into them round-robin with --window copies in flight for
 * --seconds, exactly as the worker posts them (one post_write per object,
 * the engine splitting at max_msg_sz). Then every object is compared
 * byte for byte with its source. Prints one line, ending in
 * "engine_gbits=X" for the script. Exit 0, or 1 with the reason. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "copy_engine.h"

struct bench {
	struct event_base *base;
	struct copy_engine *src_e, *dst_e;
	char *src, *dst;
	size_t size;
	uint32_t objects, window, inflight;
	uint64_t dst_addr, started, done, bytes;
	uint32_t rkey;
	char rdma_endpoint[96];
	double deadline;
	int failed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void post_next(struct bench *b);

static void on_done(int status, const char *error, void *arg)
{
	struct bench *b = arg;

	b->inflight--;
	if (status) {
		fprintf(stderr, "mcrepl-rdma-bench: copy failed: %s\n",
			error ? error : strerror(-status));
		b->failed = 1;
		event_base_loopbreak(b->base);
		return;
	}
	b->done++;
	b->bytes += b->size;
	post_next(b);
	if (!b->inflight)
		event_base_loopbreak(b->base);
}

/* Keeps window copies in flight until the deadline (and until every
 * object was written at least once). */
static void post_next(struct bench *b)
{
	while (!b->failed && b->inflight < b->window &&
	       (b->started < b->objects || now_s() < b->deadline)) {
		uint64_t off = (b->started % b->objects) * b->size;
		struct copy_target t = {.endpoint = b->rdma_endpoint,
					.length = b->size,
					.remote_addr = b->dst_addr + off,
					.rkey = b->rkey,
					.rdma_endpoint = b->rdma_endpoint};
		int rc = b->src_e->ops->post_write(b->src_e, b->src + off,
						   b->size, &t, on_done, b);

		if (rc) {
			fprintf(stderr, "mcrepl-rdma-bench: post_write: %s\n",
				strerror(-rc));
			b->failed = 1;
			return;
		}
		b->started++;
		b->inflight++;
	}
}

static struct copy_engine *engine(struct bench *b, const char *dev,
				  unsigned port)
{
	struct copy_engine_config cfg;
	struct copy_engine *e;
	char err[512];

	copy_engine_config_init(&cfg);
	cfg.rdma_device = dev;
	cfg.rdma_port = (uint16_t)port;
	e = copy_engine_rdma_create(b->base, &cfg, err, sizeof(err));
	if (!e)
		fprintf(stderr, "mcrepl-rdma-bench: %s\n", err);
	return e;
}

static int setup(struct bench *b, const char *dev, const char *addr,
		 unsigned port)
{
	size_t total = b->size * b->objects, i;
	int rc;

	b->src = malloc(total);
	b->dst = calloc(1, total);
	if (!b->src || !b->dst) {
		fprintf(stderr, "mcrepl-rdma-bench: out of memory\n");
		return -1;
	}
	for (i = 0; i < total; i++)
		b->src[i] = (char)(i * 2654435761u >> 13);
	b->dst_e = engine(b, dev, port);
	b->src_e = b->dst_e ? engine(b, dev, port + 1) : NULL;
	if (!b->src_e)
		return -1;
	rc = b->dst_e->ops->register_memory(b->dst_e, b->dst, total,
					    &b->dst_addr, &b->rkey);
	if (!rc)
		rc = b->src_e->ops->register_memory(b->src_e, b->src, total,
						    NULL, NULL);
	if (rc) {
		fprintf(
		    stderr,
		    "mcrepl-rdma-bench: registering 2 x %zu bytes: %s (is ulimit -l high enough?)\n",
		    total, strerror(-rc));
		return -1;
	}
	snprintf(b->rdma_endpoint, sizeof(b->rdma_endpoint),
		 strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, port);
	return 0;
}

static int usage(void)
{
	fprintf(
	    stderr,
	    "usage: mcrepl-rdma-bench ADDR [DEVICE [PORT [SIZE [OBJECTS [SECONDS [WINDOW]]]]]]\n"
	    "  ADDR     the device's IP address (rdma_cm loops back to it)\n"
	    "  DEVICE   as ibv_devices lists it, or - for the first active\n"
	    "  defaults: - 20886 4194304 64 10 8\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct bench b = {.size = 4194304, .objects = 64, .window = 8};
	const char *dev = argc > 2 && strcmp(argv[2], "-") ? argv[2] : NULL;
	unsigned port = argc > 3 ? (unsigned)atoi(argv[3]) : 20886;
	double seconds = argc > 6 ? atof(argv[6]) : 10, t0, t;
	uint32_t bad = 0, i;

	if (argc < 2 || argc > 8)
		return usage();
	if (argc > 4)
		b.size = (size_t)strtoull(argv[4], NULL, 10);
	if (argc > 5)
		b.objects = (uint32_t)atoi(argv[5]);
	if (argc > 7)
		b.window = (uint32_t)atoi(argv[7]);
	if (!port || port > 65534 || !b.size || !b.objects || !b.window ||
	    seconds <= 0)
		return usage();
	b.base = event_base_new();
	if (!b.base || setup(&b, dev, argv[1], port))
		goto out;
	t0 = now_s();
	b.deadline = t0 + seconds;
	post_next(&b);
	if (b.inflight)
		event_base_dispatch(b.base);
	t = now_s() - t0;
	if (b.failed)
		goto out;
	for (i = 0; i < b.objects; i++)
		bad += memcmp(b.src + (size_t)i * b.size,
			      b.dst + (size_t)i * b.size, b.size) != 0;
	printf(
	    "mcrepl-rdma-bench: %llu copies of %zu bytes in %.3f s, %u/%u objects verified, engine_gbits=%.3f\n",
	    (unsigned long long)b.done, b.size, t, b.objects - bad, b.objects,
	    (double)b.bytes * 8 / t / 1e9);
	b.failed = bad != 0;
out:
	copy_engine_destroy(b.src_e);
	copy_engine_destroy(b.dst_e);
	if (b.base)
		event_base_free(b.base);
	free(b.src);
	free(b.dst);
	return b.failed || !b.done ? 1 : 0;
}
