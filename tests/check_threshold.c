/* Thresholds: the one function every threshold of the policy comes from
 * (lib/threshold.c) gives, on a table of configs and cluster views, the
 * exact values the four paths it replaced gave (admission's RFC rule,
 * auto admission, the read path's trigger, the heat params' default), and
 * admission, the replica count and retirement judge by it. */
#include <stdint.h>
#include <stdio.h>

#include "mcrepl/mcrepl.h"
#include "policy.h"
#include "testutil.h"

#define NOW 1000000ULL
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const struct thr_cfg {
	const char *name;
	mcrepl_policy policy;
	double qps;
	uint64_t window_ms;
	bool scale, domain_aware;
	double cross_qps;
} cfgs[] = {
    {.name = "auto",
     .policy = MCREPL_POLICY_AUTO,
     .qps = 0.8,
     .window_ms = 10000},
    {.name = "auto scaled",
     .policy = MCREPL_POLICY_AUTO,
     .qps = 0.8,
     .window_ms = 10000,
     .scale = true},
    {.name = "auto cross-domain 0.3/s",
     .policy = MCREPL_POLICY_AUTO,
     .qps = 0.8,
     .window_ms = 10000,
     .domain_aware = true,
     .cross_qps = 0.3},
    {.name = "auto scaled, cross-domain 5/s",
     .policy = MCREPL_POLICY_AUTO,
     .qps = 0.8,
     .window_ms = 10000,
     .scale = true,
     .domain_aware = true,
     .cross_qps = 5},
    {.name = "auto 50/s over 1 s",
     .policy = MCREPL_POLICY_AUTO,
     .qps = 50,
     .window_ms = 1000},
    {.name = "rfc",
     .policy = MCREPL_POLICY_RFC,
     .qps = 0.8,
     .window_ms = 10000},
    {.name = "rfc scaled",
     .policy = MCREPL_POLICY_RFC,
     .qps = 0.8,
     .window_ms = 10000,
     .scale = true},
    {.name = "rfc scaled, cross-domain 0.2/s",
     .policy = MCREPL_POLICY_RFC,
     .qps = 0.8,
     .window_ms = 10000,
     .scale = true,
     .domain_aware = true,
     .cross_qps = 0.2},
    {.name = "rfc cross-domain 5/s",
     .policy = MCREPL_POLICY_RFC,
     .qps = 0.8,
     .window_ms = 10000,
     .domain_aware = true,
     .cross_qps = 5},
    {.name = "rfc scaled, saturated count",
     .policy = MCREPL_POLICY_RFC,
     .qps = 1e9,
     .window_ms = 10000,
     .scale = true},
    {.name = "auto scaled, count 1, cross-domain 0.01/s",
     .policy = MCREPL_POLICY_AUTO,
     .qps = 0.05,
     .window_ms = 10000,
     .scale = true,
     .domain_aware = true,
     .cross_qps = 0.01},
};

/* has 0: no cluster view (NULL) */
static const struct thr_view {
	bool has;
	mcrepl_cluster_view v;
} views[] = {
    {.has = false},
    {.has = true, .v = {.window_reads = 10000000, .nodes = 0}},
    {.has = true, .v = {.window_reads = 8, .nodes = 2}},
    {.has = true, .v = {.window_reads = 50000, .nodes = 8}},
    {.has = true, .v = {.window_reads = 10000000, .nodes = 64}},
    {.has = true, .v = {.window_reads = 10000000, .nodes = 1024}},
    {.has = true, .v = {.window_reads = UINT64_MAX / 2, .nodes = 1}},
};

/* The readable replica counts the table's admit and rfc columns are for. */
static const uint32_t readables[] = {0, 1, 2, 3, 16, 600000000u};

/* Every value below is what the library gave before the thresholds were
 * derived in one place: admit: auto admission's threshold at each of
 * readables (the RFC's rule without a view); rfc: mcrepl_admit_threshold();
 * trigger: the engine's tick threshold for the view; params:
 * mcrepl_heat_params_init(); want: mcr_policy_want_replicas() at 7, 1645
 * and 600000 hits; retire_last: the most hits at which a dynamic replica
 * still retires, the domain's only one (readable 1, domain-aware) and at
 * readable 2 and 3 (-1: none). */
static const struct thr_row {
	size_t cfg, view;
	uint32_t admit[NELEM(readables)], rfc[NELEM(readables)];
	long long retire_last[3];
	uint32_t trigger, params, want[3];
} rows[] = {
    /* clang-format off */
    {.cfg = 0, .view = 0, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 0, .view = 1, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 0, .view = 2, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 9, 27, 524280},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, 1, 1}},
    {.cfg = 0, .view = 3, .trigger = 81, .params = 8,
     .admit = {8, 81, 151, 219, 1074, 524280},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 8, 8}, .retire_last = {-1, 22, 48}},
    {.cfg = 0, .view = 4, .trigger = 1645, .params = 8,
     .admit = {8, 1645, 3240, 4828, 25327, 524280},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 64}, .retire_last = {-1, 727, 1485}},
    {.cfg = 0, .view = 5, .trigger = 120, .params = 8,
     .admit = {8, 120, 227, 331, 1650, 524280},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 16, 1024}, .retire_last = {-1, 36, 80}},
    {.cfg = 0, .view = 6, .trigger = 524280, .params = 8,
     .admit = {8, 524280, 524280, 524280, 524280, 524280},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 1, 1}, .retire_last = {-1, 261118, 522833}},
    {.cfg = 1, .view = 0, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 1, .view = 1, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 1, .view = 2, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 9, 27, 524280},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, 1, 1}},
    {.cfg = 1, .view = 3, .trigger = 81, .params = 8,
     .admit = {8, 81, 151, 219, 1074, 524280},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 8, 8}, .retire_last = {-1, 22, 48}},
    {.cfg = 1, .view = 4, .trigger = 1645, .params = 8,
     .admit = {8, 1645, 3240, 4828, 25327, 524280},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 64}, .retire_last = {-1, 727, 1485}},
    {.cfg = 1, .view = 5, .trigger = 120, .params = 8,
     .admit = {8, 120, 227, 331, 1650, 524280},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 16, 1024}, .retire_last = {-1, 36, 80}},
    {.cfg = 1, .view = 6, .trigger = 524280, .params = 8,
     .admit = {8, 524280, 524280, 524280, 524280, 524280},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 1, 1}, .retire_last = {-1, 261118, 522833}},
    {.cfg = 2, .view = 0, .trigger = 3, .params = 3,
     .admit = {3, 8, 8, 8, 8, 8},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 2, .view = 1, .trigger = 3, .params = 3,
     .admit = {3, 8, 8, 8, 8, 8},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 2, .view = 2, .trigger = 3, .params = 3,
     .admit = {3, 8, 8, 9, 27, 524280},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {0, 1, 1}},
    {.cfg = 2, .view = 3, .trigger = 3, .params = 3,
     .admit = {3, 81, 151, 219, 1074, 524280},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 8, 8}, .retire_last = {0, 22, 48}},
    {.cfg = 2, .view = 4, .trigger = 3, .params = 3,
     .admit = {3, 1645, 3240, 4828, 25327, 524280},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 2, 64}, .retire_last = {0, 727, 1485}},
    {.cfg = 2, .view = 5, .trigger = 3, .params = 3,
     .admit = {3, 120, 227, 331, 1650, 524280},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 16, 1024}, .retire_last = {0, 36, 80}},
    {.cfg = 2, .view = 6, .trigger = 3, .params = 3,
     .admit = {3, 524280, 524280, 524280, 524280, 524280},
     .rfc = {3, 8, 8, 8, 8, 8},
     .want = {1, 1, 1}, .retire_last = {0, 261118, 522833}},
    {.cfg = 3, .view = 0, .trigger = 8, .params = 8,
     .admit = {50, 8, 16, 24, 128, 4294967295},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 3, .view = 1, .trigger = 8, .params = 8,
     .admit = {50, 8, 16, 24, 128, 4294967295},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 3, .view = 2, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 9, 27, 524280},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {16, 1, 1}},
    {.cfg = 3, .view = 3, .trigger = 50, .params = 8,
     .admit = {50, 81, 151, 219, 1074, 524280},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 8, 8}, .retire_last = {16, 22, 48}},
    {.cfg = 3, .view = 4, .trigger = 50, .params = 8,
     .admit = {50, 1645, 3240, 4828, 25327, 524280},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 64}, .retire_last = {16, 727, 1485}},
    {.cfg = 3, .view = 5, .trigger = 50, .params = 8,
     .admit = {50, 120, 227, 331, 1650, 524280},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 16, 1024}, .retire_last = {16, 36, 80}},
    {.cfg = 3, .view = 6, .trigger = 50, .params = 8,
     .admit = {50, 524280, 524280, 524280, 524280, 524280},
     .rfc = {50, 8, 16, 24, 128, 4294967295},
     .want = {1, 1, 1}, .retire_last = {16, 261118, 522833}},
    {.cfg = 4, .view = 0, .trigger = 50, .params = 50,
     .admit = {50, 50, 50, 50, 50, 50},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 4, .view = 1, .trigger = 50, .params = 50,
     .admit = {50, 50, 50, 50, 50, 50},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 4, .view = 2, .trigger = 50, .params = 50,
     .admit = {50, 50, 50, 50, 50, 524280},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 2, 2}, .retire_last = {-1, 16, 16}},
    {.cfg = 4, .view = 3, .trigger = 81, .params = 50,
     .admit = {50, 81, 151, 219, 1074, 524280},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 8, 8}, .retire_last = {-1, 22, 48}},
    {.cfg = 4, .view = 4, .trigger = 1645, .params = 50,
     .admit = {50, 1645, 3240, 4828, 25327, 524280},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 2, 64}, .retire_last = {-1, 727, 1485}},
    {.cfg = 4, .view = 5, .trigger = 120, .params = 50,
     .admit = {50, 120, 227, 331, 1650, 524280},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 16, 1024}, .retire_last = {-1, 36, 80}},
    {.cfg = 4, .view = 6, .trigger = 524280, .params = 50,
     .admit = {50, 524280, 524280, 524280, 524280, 524280},
     .rfc = {50, 50, 50, 50, 50, 50},
     .want = {1, 1, 1}, .retire_last = {-1, 261118, 522833}},
    {.cfg = 5, .view = 0, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 5, .view = 1, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 5, .view = 2, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 5, .view = 3, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 5, .view = 4, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 5, .view = 5, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 5, .view = 6, .trigger = 8, .params = 8,
     .admit = {8, 8, 8, 8, 8, 8},
     .rfc = {8, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 0, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 1, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 2, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 3, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 4, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 5, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 6, .view = 6, .trigger = 8, .params = 8,
     .admit = {8, 8, 16, 24, 128, 4294967295},
     .rfc = {8, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 0, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 1, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 2, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 3, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 4, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 5, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 7, .view = 6, .trigger = 2, .params = 2,
     .admit = {2, 8, 16, 24, 128, 4294967295},
     .rfc = {2, 8, 16, 24, 128, 4294967295},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 0, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 1, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 2, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 3, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 4, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 5, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 8, .view = 6, .trigger = 8, .params = 8,
     .admit = {50, 8, 8, 8, 8, 8},
     .rfc = {50, 8, 8, 8, 8, 8},
     .want = {1, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 0, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 1, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 2, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 3, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 4, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 5, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 9, .view = 6, .trigger = 524280, .params = 524280,
     .admit = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .rfc = {524280, 524280, 1048560, 1572840, 8388480, 4294967295},
     .want = {1, 1, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 10, .view = 0, .trigger = 1, .params = 1,
     .admit = {1, 1, 2, 3, 16, 600000000},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {2, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 10, .view = 1, .trigger = 1, .params = 1,
     .admit = {1, 1, 2, 3, 16, 600000000},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {2, 2, 2}, .retire_last = {-1, -1, -1}},
    {.cfg = 10, .view = 2, .trigger = 1, .params = 1,
     .admit = {1, 6, 8, 9, 27, 524280},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {2, 2, 2}, .retire_last = {0, 0, 0}},
    {.cfg = 10, .view = 3, .trigger = 1, .params = 1,
     .admit = {1, 81, 151, 219, 1074, 524280},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {1, 8, 8}, .retire_last = {0, 22, 48}},
    {.cfg = 10, .view = 4, .trigger = 1, .params = 1,
     .admit = {1, 1645, 3240, 4828, 25327, 524280},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {1, 2, 64}, .retire_last = {0, 727, 1485}},
    {.cfg = 10, .view = 5, .trigger = 1, .params = 1,
     .admit = {1, 120, 227, 331, 1650, 524280},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {1, 16, 1024}, .retire_last = {0, 36, 80}},
    {.cfg = 10, .view = 6, .trigger = 1, .params = 1,
     .admit = {1, 524280, 524280, 524280, 524280, 524280},
     .rfc = {1, 1, 2, 3, 16, 600000000},
     .want = {1, 1, 1}, .retire_last = {0, 261118, 522833}},
    /* clang-format on */
};

static mcrepl_config make_cfg(const struct thr_cfg *k)
{
	mcrepl_config c;

	mcrepl_config_init(&c);
	c.mode = MCREPL_MODE_ENFORCE;
	c.policy = k->policy;
	c.admission_qps_threshold = k->qps;
	c.heat_window_ms = k->window_ms;
	c.scale_threshold_by_replicas = k->scale;
	c.domain_aware = k->domain_aware;
	c.cross_domain_qps_threshold = k->cross_qps;
	return c;
}

/* retire(count) is true up to last and false past it (-1: never). */
static void check_retire(const char *name, int which, long long last,
			 bool (*retire)(uint32_t count, void *ctx), void *ctx)
{
	if (last >= 0)
		ck_assert_msg(retire((uint32_t)last, ctx),
			      "%s: retire %d at %lld", name, which, last);
	ck_assert_msg(!retire((uint32_t)(last + 1), ctx),
		      "%s: retire %d at %lld + 1", name, which, last);
}

struct retire_ctx {
	const mcrepl_config *c;
	const mcrepl_cluster_view *v;
	uint32_t readable;
};

static bool retire_at(uint32_t count, void *ctx)
{
	const struct retire_ctx *r = ctx;

	if (r->readable == 1)
		return mcr_policy_should_retire_in_domain(r->c, r->v, count, 1);
	return mcr_policy_should_retire(r->c, r->v, count, r->readable);
}

START_TEST(test_threshold_table)
{
	const struct thr_row *row = &rows[_i];
	mcrepl_config c = make_cfg(&cfgs[row->cfg]);
	const mcrepl_cluster_view *v =
	    views[row->view].has ? &views[row->view].v : NULL;
	static const uint32_t counts[] = {7, 1645, 600000};
	mcrepl_heat_params hp;
	char name[96];

	snprintf(name, sizeof(name), "%s, view %zu", cfgs[row->cfg].name,
		 row->view);
	ck_assert_uint_eq(row->cfg * NELEM(views) + row->view, (size_t)_i);
	for (size_t k = 0; k < NELEM(readables); k++) {
		ck_assert_msg(mcr_threshold(&c, v, readables[k]) ==
				  row->admit[k],
			      "%s: threshold at %u readable: %u, want %u", name,
			      readables[k], mcr_threshold(&c, v, readables[k]),
			      row->admit[k]);
		ck_assert_msg(
		    mcrepl_admit_threshold(&c, readables[k]) == row->rfc[k],
		    "%s: mcrepl_admit_threshold(%u): %u, want %u", name,
		    readables[k], mcrepl_admit_threshold(&c, readables[k]),
		    row->rfc[k]);
		ck_assert_uint_eq(mcr_threshold(&c, NULL, readables[k]),
				  row->rfc[k]);
	}
	ck_assert_msg(mcr_threshold_trigger(&c, v) == row->trigger,
		      "%s: trigger %u, want %u", name,
		      mcr_threshold_trigger(&c, v), row->trigger);
	mcrepl_heat_params_init(&hp, &c);
	ck_assert_msg(hp.threshold == row->params, "%s: params %u, want %u",
		      name, hp.threshold, row->params);
	ck_assert_uint_eq(mcr_threshold_trigger(&c, NULL), row->params);
	for (size_t k = 0; k < NELEM(counts); k++)
		ck_assert_msg(
		    mcr_policy_want_replicas(&c, v, counts[k]) == row->want[k],
		    "%s: want at %u: %u, want %u", name, counts[k],
		    mcr_policy_want_replicas(&c, v, counts[k]), row->want[k]);
	for (uint32_t r = 1; r <= 3; r++) {
		struct retire_ctx rc = {.c = &c, .v = v, .readable = r};

		check_retire(name, (int)r, row->retire_last[r - 1], retire_at,
			     &rc);
	}
}
END_TEST

/* Admission refuses one hit under mcr_threshold() and passes at it. */
static void admit_boundary(const mcrepl_config *c, const mcrepl_cluster_view *v,
			   uint32_t readable)
{
	mcrepl_proposal p = {.action = MCREPL_ACTION_ADD,
			     .proposal_id = "p",
			     .key = "k",
			     .observed_version = 1,
			     .expected_size = 64,
			     .expires_at_ms = NOW + 5000};
	mcrepl_object_view o = {.exists = true,
				.version = 1,
				.size = 64,
				.readable_memory_replicas = readable};
	mcrepl_admit_input in = {.cfg = c,
				 .proposal = &p,
				 .object = &o,
				 .now_ms = NOW,
				 .cluster = v};
	uint32_t t = mcr_threshold(c, v, readable);

	in.heat_count = t - 1;
	ck_assert_int_eq(mcrepl_admit(&in), MCREPL_REASON_BELOW_THRESHOLD);
	in.heat_count = t;
	ck_assert_int_eq(mcrepl_admit(&in), MCREPL_REASON_NONE);
}

START_TEST(test_threshold_admission_judges_by_it)
{
	mcrepl_config c = make_cfg(&cfgs[0]);
	mcrepl_cluster_view v = {.window_reads = 10000000, .nodes = 64};

	c.balance_tolerance = 0; /* no balance gate: the threshold alone */
	c.action_cooldown_ms = 0;
	ck_assert_uint_eq(mcr_threshold(&c, &v, 2), 3240);
	admit_boundary(&c, &v, 2);
	admit_boundary(&c, &v, 1);
	admit_boundary(&c, NULL, 1);
	c = make_cfg(&cfgs[7]); /* rfc scaled, cross-domain */
	c.max_memory_replicas = 4;
	ck_assert_uint_eq(mcr_threshold(&c, &v, 3), 24);
	admit_boundary(&c, &v, 3);
	ck_assert_uint_eq(mcr_threshold(&c, &v, 0), 2);
	admit_boundary(&c, &v, 0);
}
END_TEST

/* The heat retirement weighs a key against: max(T, S (r - 1)); the
 * domain's only copy: the cross-domain count. */
START_TEST(test_threshold_keep)
{
	mcrepl_config c = make_cfg(&cfgs[2]);
	mcrepl_cluster_view v = {.window_reads = 10000000, .nodes = 64};

	ck_assert_double_eq(mcr_threshold_keep(&c, &v, 1), 3.0);
	ck_assert_double_eq(mcr_threshold_keep(&c, &v, 0), 3.0);
	ck_assert_double_eq(mcr_threshold_keep(&c, &v, 2), 1563.0);
	ck_assert_double_eq(mcr_threshold_keep(&c, &v, 4), 3.0 * 1563);
	v.window_reads = 8; /* share 1: the RFC count floors it */
	v.nodes = 2;
	ck_assert_double_eq(mcr_threshold_keep(&c, &v, 3), 8.0);
	ck_assert_double_eq(mcr_threshold_keep(&c, NULL, 3), 8.0);
}
END_TEST

/* The engine owns the threshold: the params it hands out carry the tick's,
 * derived from its cluster view (auto) or the config (rfc), and nothing
 * else of them changes. */
static void engine_params(mcrepl_policy policy, uint32_t want)
{
	mcrepl_config c = make_cfg(&cfgs[0]);
	mcrepl_engine_opts o = {.struct_size = sizeof(o)};
	mcrepl_engine *e = NULL;
	mcrepl_engine_segment s = {.id = {.v = 1}, .capacity = 1 << 20};
	mcrepl_engine_tick_result t;
	mcrepl_engine_stats st = {.struct_size = sizeof(st)};
	mcrepl_heat_params hp, init;

	c.policy = policy;
	ck_assert_int_eq(mcrepl_engine_create(&c, &o, &e), MCREPL_OK);
	mcrepl_heat_params_init(&init, &c);
	ck_assert_int_eq(mcrepl_engine_segment_set(e, &s), MCREPL_OK);
	mcrepl_engine_tick(e, NOW, &t);
	for (uint32_t i = 0; i < 50000; i++)
		mcrepl_engine_read(e, s.id);
	mcrepl_engine_tick(e, NOW + 1, &t);
	ck_assert_uint_eq(t.threshold, want);
	mcrepl_engine_heat_params(e, &hp);
	ck_assert_uint_eq(hp.threshold, want);
	ck_assert_uint_eq(hp.bucket_ms, init.bucket_ms);
	ck_assert_uint_eq(hp.refire_buckets, policy == MCREPL_POLICY_AUTO
						 ? 1
						 : init.refire_buckets);
	mcrepl_engine_get_stats(e, &st);
	ck_assert_uint_eq(st.threshold, want);
	mcrepl_engine_heat_params(NULL, &hp); /* ignored */
	mcrepl_engine_heat_params(e, NULL);
	mcrepl_engine_destroy(e);
}

START_TEST(test_threshold_engine_owns_it)
{
	mcrepl_config c = make_cfg(&cfgs[0]);
	mcrepl_cluster_view v = {.window_reads = 50000, .nodes = 1};

	/* share 500: (1 + sqrt(501))^2 = 546.8 */
	ck_assert_uint_eq(mcr_threshold_trigger(&c, &v), 547);
	engine_params(MCREPL_POLICY_AUTO, 547);
	engine_params(MCREPL_POLICY_RFC, 8);
}
END_TEST

Suite *make_threshold_suite(void)
{
	Suite *s = suite_create("threshold");
	TCase *tc = tcase_create("threshold");

	tcase_add_loop_test(tc, test_threshold_table, 0, NELEM(rows));
	tcase_add_test(tc, test_threshold_admission_judges_by_it);
	tcase_add_test(tc, test_threshold_keep);
	tcase_add_test(tc, test_threshold_engine_owns_it);
	suite_add_tcase(s, tc);
	return s;
}
