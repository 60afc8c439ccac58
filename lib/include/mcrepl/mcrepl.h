/*
 * libmcrepl: dynamic hot replication and heat-aware scheduling for
 * Mooncake Store. The umbrella header; include this one.
 *
 * This header (and the ones it includes) is the contract: what is not
 * declared here is private. The library reads no clock, opens no socket and
 * starts no thread: time (now_ms) and every input are arguments.
 */
#ifndef MCREPL_H
#define MCREPL_H

#include "mcrepl/version.h"
#include "mcrepl/export.h"
#include "mcrepl/error.h"
#include "mcrepl/types.h"
#include "mcrepl/config.h"
#include "mcrepl/domain.h"
#include "mcrepl/heat.h"
#include "mcrepl/admit.h"
#include "mcrepl/place.h"
#include "mcrepl/lease.h"
#include "mcrepl/queue.h"
#include "mcrepl/stats.h"
#include "mcrepl/warmup.h"
#include "mcrepl/engine.h"
#include "mcrepl/host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "MAJOR.MINOR.PATCH" of the library actually linked. */
MCREPL_API const char *mcrepl_version(void);

#ifdef __cplusplus
}
#endif
#endif
