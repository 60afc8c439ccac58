/* The HA fixture of check_ha.c (a throw-away etcd, masters, two workers,
 * a store client on etcd://), for the suites that share it. */
#ifndef MCREPL_TESTS_DAEMONS_HAFX_H
#define MCREPL_TESTS_DAEMONS_HAFX_H

#include <stdbool.h>
#include <stdint.h>

#include "harness.h"
#include "store_client.h"

/* No etcd binary: true, with a line saying so (the test returns). */
bool hafx_skip(void);
/* masters masters (the first leads), two workers, and a store client
 * putting `replicas` replicas; recovery_ms: --ha_recovery_ms (0: 1000). */
store_client *hafx_start_clients(int masters, uint32_t replicas,
				 uint32_t recovery_ms);
void hafx_stop(void);
/* The master other than `not` that leads (waiting for one), or -1. */
int hafx_wait_leader(int not );
long long hafx_metric(int master, const char *name);
long long hafx_worker_metric(int worker, const char *name);
/* Puts "gone", "kept" (its bytes into kept, 5000) and, n 3, "cli-gone",
 * and waits until both workers' indexes hold them. */
void hafx_put_keys(store_client *sc, uint8_t *kept, int n);
/* key reads NOT_FOUND and does not exist; and "kept" reads back. */
void hafx_assert_gone(store_client *sc, const char *key);
void hafx_assert_gone_kept(store_client *sc, const uint8_t *kept);
struct proc *hafx_master(int i);
struct proc *hafx_worker(int i);
const char *hafx_etcd_endpoints(void);

#endif
