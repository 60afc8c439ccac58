/* The engine over libibverbs and librdmacm themselves: the production
 * entry point, in a file of its own so that the test build of the worker
 * (mk/worker.mk: mcrepl-worker-fakerdma) can link the same engine with
 * the fake fabric's copy_engine_rdma_create instead
 * (tests/rdma/fabric/fabric_verbs.c). */
#include "copy_engine_rdma.h"

struct copy_engine *
copy_engine_rdma_create(struct event_base *base,
			const struct copy_engine_config *cfg, char *err,
			size_t errlen)
{
	return copy_engine_rdma_create_with(base, cfg, &rdma_verbs_real, NULL,
					    err, errlen);
}
