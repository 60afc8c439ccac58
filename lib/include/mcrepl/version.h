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
 * What each release changed: NEWS, at the top of the source tree.
 */
#ifndef MCREPL_VERSION_H
#define MCREPL_VERSION_H

#define MCREPL_VERSION_MAJOR 0
#define MCREPL_VERSION_MINOR 6
#define MCREPL_VERSION_PATCH 6

#endif
