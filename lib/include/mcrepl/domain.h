/*
 * libmcrepl domains (RFC "Domain Model"): two topology levels only,
 * same domain (cost 0) < cross domain (cost 1). Empty or unset domains map
 * to "default". Host is not a level; it is an anti-affinity hint only.
 *
 * This header is the contract: what is not declared here is private.
 * All functions are pure and thread-safe.
 */
#ifndef MCREPL_DOMAIN_H
#define MCREPL_DOMAIN_H

#include <stdbool.h>

#include "mcrepl/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MCREPL_DEFAULT_DOMAIN "default"

/* d itself, or "default" when d is NULL or "". Never NULL. */
MCREPL_API const char *mcrepl_domain_name(const char *d);

/* True when both name the same domain after mapping empty to default
 * (byte-exact, case-sensitive). */
MCREPL_API bool mcrepl_domain_equal(const char *a, const char *b);

/* 0 for the same domain, 1 across domains. */
MCREPL_API unsigned mcrepl_domain_cost(const char *requester,
				       const char *candidate);

/* True when d is a usable domain name: at most MCREPL_DOMAIN_MAX bytes of
 * [A-Za-z0-9._-] (NULL and "" are valid: they mean default). */
MCREPL_API bool mcrepl_domain_is_valid(const char *d);

#ifdef __cplusplus
}
#endif
#endif
