/* The master's store in-process, with the clock in the test's hands, for
 * the suites that drive it directly (check_stalls.c, check_room.c): mount,
 * put, read, propose and copy as the service would, each asserting OK. */
#ifndef MCREPL_TESTS_DAEMONS_STOREFX_H
#define MCREPL_TESTS_DAEMONS_STOREFX_H

#include <stdint.h>

#include "store.h"

/* A store made with opts (locked, as the service holds it). */
struct store *storefx_create(const struct master_opts *opts);
/* Its indexes audited, then unlocked and destroyed. */
void storefx_destroy(struct store *s);

/* A segment of `capacity` bytes for client, on host and segment `name`,
 * in `domain` ("" outside domain-aware mode). */
uint64_t storefx_mount(struct store *s, uint64_t client, const char *name,
		       const char *domain, uint64_t capacity, uint64_t now);
/* Tenant "t"'s key, `size` bytes on `replicas` replicas, put whole. */
struct object *storefx_put(struct store *s, const char *key, uint64_t size,
			   uint32_t replicas, uint64_t now);
/* n reads of tenant "t"'s key from `domain`. */
void storefx_read(struct store *s, const char *key, const char *domain, int n,
		  uint64_t now);
struct store_figures storefx_figures(struct store *s);

/* The hot-copy proposal of o (id names it), as the admission worker
 * makes it. */
mcrepl_status storefx_propose(struct store *s, const struct object *o,
			      const char *id, uint64_t now,
			      mcrepl_propose_result *res);
/* A dynamic replica of key: `reads` reads from `domain`, its proposal
 * (target in that domain) accepted, the copy started and ended; the
 * object then has 2 replicas. */
void storefx_dynamic_copy(struct store *s, const char *key, const char *domain,
			  int reads, uint64_t now);

#endif
