/* Built instead of runtime/rdma/ when libibverbs/librdmacm were missing at
 * build time (see mk/rdma.mk): selecting rdma says so. */
#include <stdio.h>

#include "copy_engine.h"

struct copy_engine *
copy_engine_rdma_create(struct event_base *base,
			const struct copy_engine_config *cfg, char *err,
			size_t errlen)
{
	(void)base;
	(void)cfg;
	snprintf(
	    err, errlen,
	    "rdma: engine not built (libibverbs/librdmacm missing at build time)");
	return NULL;
}
