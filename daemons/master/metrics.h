/* mcrepl-master's /metrics page, rendered in one place (metrics.c: the
 * store's figures and libmcrepl's; metrics_net.c: the RPC and HTTP ports',
 * authentication's and HA's). The store's figures and libmcrepl's
 * counters are copied once per scrape under one store lock hold
 * (store_snapshot, store_copy_stats) and rendered after it is released. */
#ifndef MCREPL_MASTER_METRICS_H
#define MCREPL_MASTER_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/prom.h"
#include "store.h"

struct ha;
struct httpcap;
struct rpc_server;

/* What the page is made from; everything borrowed for the call. */
struct metrics_sources {
	struct store *store;		  /* NULL: no store (HA standby) */
	const struct rpc_server *rpc;	  /* NULL: its families left out */
	const struct httpcap *http_cap;	  /* the HTTP port's bounds */
	bool auth, tls;			  /* --auth_file, --tls_cert given */
	const uint64_t *auth_refused;	  /* SVC_REFUSAL_COUNT, by reason */
	const struct ha *ha;		  /* NULL: no --etcd_endpoints */
	uint64_t ha_refused, ha_deferred; /* the HA gate's (ha_gate.h) */
};

/* The whole page as Prometheus text (malloc'd, *len_out its length; the
 * caller frees); NULL when out of memory. */
char *metrics_page(const struct metrics_sources *src, size_t *len_out);

/* metrics_net.c: the RPC port's, HTTP port's and authentication's
 * families (src->rpc given); then HA's (src->ha given), r the store's HA
 * figures from its snapshot (zero without a store). */
void metrics_net(const struct metrics_sources *src, struct mcu_prom *t);
void metrics_ha(const struct metrics_sources *src,
		const struct store_ha_figures *r, struct mcu_prom *t);

#endif
