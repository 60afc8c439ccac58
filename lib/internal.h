/*
 * Private helpers shared by libmcrepl's modules. Not installed; not API.
 * Internal symbols use the mcr_ prefix (util: mcu_) and are hidden from the .so: only the API carries mcrepl_.
 * The generic helpers (hashing, strings, the hash map) live in util/
 * under the mcu_ prefix, shared with the daemons.
 */
#ifndef MCREPL_INTERNAL_H
#define MCREPL_INTERNAL_H

#include "mcrepl/lease.h"
#include "mcrepl/stats.h"
#include "util/hash.h"
#include "util/str.h"

/* lease.c: the table counts its leases' lifecycle into s (NULL: not
 * counted; the engine's table gets mcrepl_engine_opts.stats). */
void mcr_leases_set_stats(mcrepl_leases *t, mcrepl_stats *s);

#endif
