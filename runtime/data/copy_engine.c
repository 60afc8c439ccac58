/* Copy engine defaults and the --transport choice (see copy_engine.h). */
#include <stdio.h>
#include <string.h>

#include "copy_engine.h"

void copy_engine_config_init(struct copy_engine_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->max_inflight = 8;
	cfg->max_inflight_bytes = 256ull << 20;
	cfg->timeout_ms = 30000;
}

/* The explanation handed out by copy_engine_select (one per thread). */
static _Thread_local char why_buf[320];

static struct copy_engine *select_auto(struct event_base *base,
				       const struct copy_engine_config *cfg,
				       const char **why_out, char *err,
				       size_t errlen)
{
	char rdma_err[256] = "", *cut;
	struct copy_engine *e;

	e = copy_engine_rdma_create(base, cfg, rdma_err, sizeof(rdma_err));
	if (e) {
		snprintf(why_buf, sizeof(why_buf),
			 "auto: RDMA device %s is usable",
			 cfg->rdma_device ? cfg->rdma_device
					  : "(first active port)");
		*why_out = why_buf;
		return e;
	}
	/* The engine's reason ends with advice to pass --transport=tcp:
	 * auto has just done that, so only the reason is kept. */
	cut = strstr(rdma_err, "; use --transport");
	if (cut)
		*cut = '\0';
	snprintf(why_buf, sizeof(why_buf), "auto: no usable RDMA: %s",
		 rdma_err[0]
		     ? rdma_err + (strncmp(rdma_err, "rdma: ", 6) ? 0 : 6)
		     : "no reason given");
	*why_out = why_buf;
	return copy_engine_tcp_create(base, cfg, err, errlen);
}

struct copy_engine *copy_engine_select(struct event_base *base,
				       const char *transport,
				       const struct copy_engine_config *cfg,
				       const char **why_out, char *err,
				       size_t errlen)
{
	const char *dummy;

	if (!why_out)
		why_out = &dummy;
	*why_out = "";
	if (!transport || strcmp(transport, "auto") == 0)
		return select_auto(base, cfg, why_out, err, errlen);
	if (strcmp(transport, "tcp") == 0) {
		*why_out = "--transport=tcp";
		return copy_engine_tcp_create(base, cfg, err, errlen);
	}
	if (strcmp(transport, "rdma") == 0) {
		struct copy_engine *e;

		*why_out = "--transport=rdma";
		if (errlen)
			err[0] = '\0';
		e = copy_engine_rdma_create(base, cfg, err, errlen);
		if (!e && errlen && !err[0])
			snprintf(err, errlen, "rdma engine unavailable");
		return e;
	}
	snprintf(err, errlen, "unknown transport '%s' (want auto, tcp or rdma)",
		 transport);
	return NULL;
}
