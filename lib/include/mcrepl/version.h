/*
 * libmcrepl version. The Makefile reads the soname and the pkg-config
 * Version from these three lines; change them nowhere else.
 *
 * ABI RULE. The soname is libmcrepl.so.MAJOR from 1.0 on, and
 * libmcrepl.so.0.MINOR before it. A release that breaks the ABI bumps it
 * (MAJOR, or MINOR while MAJOR is 0); one that only adds bumps MINOR
 * (from 1.0 on) or PATCH (before 1.0). Breaking means: a function
 * removed, made private or given another signature; an enum value
 * renumbered; a public struct that changes size or layout, unless it
 * carries its own size (struct_size: mcrepl_config, mcrepl_engine_opts,
 * mcrepl_engine_stats), may only grow at its end and every reader of it
 * honours the size. Only what a header under lib/include/mcrepl/ declares
 * with MCREPL_API is exported (lib/libmcrepl.map, -fvisibility=hidden);
 * everything else is private and may change in any release.
 *
 * 0.4.0: the policy engine (mcrepl/engine.h); the rule functions of the
 * former mcrepl/policy.h are private (hosts get them through the engine);
 * mcrepl_cluster_view moved to mcrepl/types.h and mcrepl_balance to
 * mcrepl/admit.h.
 *
 * 0.5.0: mcrepl_propose_input grows heat_recent at its end (a break by the
 * rule above: the soname moves to libmcrepl.so.0.5);
 * mcrepl_heat_cell_recent().
 */
#ifndef MCREPL_VERSION_H
#define MCREPL_VERSION_H

#define MCREPL_VERSION_MAJOR 0
#define MCREPL_VERSION_MINOR 5
#define MCREPL_VERSION_PATCH 0

#endif
