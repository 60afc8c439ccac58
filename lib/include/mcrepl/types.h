/*
 * libmcrepl value types shared by all modules.
 *
 * Ids are one-member structs so that swapped arguments do not compile.
 * The value 0 means "none" for every id type.
 */
#ifndef MCREPL_TYPES_H
#define MCREPL_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mcrepl/export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mcrepl_lease_id {
	uint64_t v;
} mcrepl_lease_id;
typedef struct mcrepl_segment_id {
	uint64_t v;
} mcrepl_segment_id;
typedef struct mcrepl_client_id {
	uint64_t v;
} mcrepl_client_id;
typedef struct mcrepl_task_id {
	uint64_t v;
} mcrepl_task_id;

/* Longest domain name kept by the library (bytes, without the NUL). */
#define MCREPL_DOMAIN_MAX 63
/* Longest proposal id accepted (bytes, without the NUL). */
#define MCREPL_PROPOSAL_ID_MAX 127
/* Longest tenant and key accepted by the lease table (bytes, no NUL). */
#define MCREPL_TENANT_MAX 255
#define MCREPL_KEY_MAX 4095

/* What the host knows of the whole cluster's reads (the auto policy's
 * cluster view; the engine keeps it, mcrepl/engine.h). */
typedef struct mcrepl_cluster_view {
	uint64_t window_reads; /* reads served over the last heat window */
	uint32_t nodes;	       /* nodes (NICs) serving reads; 0 = unknown */
} mcrepl_cluster_view;

/* The one replica action of the first stage. */
typedef enum mcrepl_action { MCREPL_ACTION_ADD = 1 } mcrepl_action;

#ifdef __cplusplus
}
#endif
#endif
