/*
 * The library's text configuration (lib/include/mcrepl/config.h): each
 * line of the input is one mcrepl_config_parse("name=value") on the same
 * config, then mcrepl_config_validate judges the result.
 *
 * Properties: parse answers OK, EPARSE, ERANGE or ENOENT and leaves the
 * config unchanged unless OK; after a change every knob prints
 * (mcrepl_config_get) to text that mcrepl_config_set accepts. A config that
 * validates keeps every knob in its documented range, and the derived
 * values keep theirs: mcrepl_config_threshold() and
 * mcrepl_config_cross_domain_threshold() in 1..MCREPL_HEAT_MAX_THRESHOLD,
 * heat params with bucket_ms >= 1 covering the window and the lower of the
 * two thresholds (heat.h).
 */
#include <math.h>
#include <string.h>

#include "fuzz.h"
#include "mcrepl/mcrepl.h"

/* Every knob of cfg prints to text that mcrepl_config_set accepts. */
static void check_printable(const mcrepl_config *cfg)
{
	size_t n = 0;
	const mcrepl_config_knob *k = mcrepl_config_knobs(&n);
	char text[64];

	for (size_t i = 0; i < n; i++) {
		mcrepl_config again = *cfg;

		FUZZ_CHECK(mcrepl_config_get(cfg, k[i].name, text,
					     sizeof(text)) == MCREPL_OK);
		FUZZ_CHECK(mcrepl_config_set(&again, k[i].name, text) ==
			   MCREPL_OK);
	}
}

static void check_line(mcrepl_config *cfg, const char *line)
{
	mcrepl_config before = *cfg;
	mcrepl_status st = mcrepl_config_parse(cfg, line);

	FUZZ_CHECK(st == MCREPL_OK || st == MCREPL_EPARSE ||
		   st == MCREPL_ERANGE || st == MCREPL_ENOENT);
	if (st != MCREPL_OK)
		FUZZ_CHECK(memcmp(&before, cfg, sizeof(before)) == 0);
	else
		check_printable(cfg);
}

static void check_valid(const mcrepl_config *c)
{
	uint32_t t = mcrepl_config_threshold(c);
	uint32_t x = mcrepl_config_cross_domain_threshold(c);
	mcrepl_heat_params p;

	FUZZ_CHECK(c->mode <= MCREPL_MODE_ENFORCE);
	FUZZ_CHECK(c->heat_window_ms >= 1 && c->heat_window_ms <= 86400000);
	FUZZ_CHECK(c->lease_ttl_ms >= 1 && c->lease_ttl_ms <= 86400000);
	FUZZ_CHECK(c->action_cooldown_ms <= 86400000);
	FUZZ_CHECK(c->recreate_cooldown_ms <= 86400000);
	FUZZ_CHECK(isfinite(c->admission_qps_threshold) &&
		   c->admission_qps_threshold >= 0);
	FUZZ_CHECK(isfinite(c->cross_domain_qps_threshold) &&
		   c->cross_domain_qps_threshold >= 0);
	FUZZ_CHECK(c->max_memory_replicas >= 1 &&
		   c->max_memory_replicas <= 1024);
	FUZZ_CHECK(c->heat_max_entries >= 8 &&
		   c->heat_max_entries <= UINT32_MAX);
	FUZZ_CHECK(c->admission_queue_limit >= 1);
	FUZZ_CHECK(c->proposal_retention_limit >= 1);
	FUZZ_CHECK(c->target_high_watermark > 0 &&
		   c->target_high_watermark <= 1);
	FUZZ_CHECK(t >= 1 && t <= MCREPL_HEAT_MAX_THRESHOLD);
	FUZZ_CHECK(x >= 1 && x <= MCREPL_HEAT_MAX_THRESHOLD);
	mcrepl_heat_params_init(&p, c);
	FUZZ_CHECK(p.bucket_ms >= 1);
	FUZZ_CHECK(p.bucket_ms * MCREPL_HEAT_BUCKETS >= c->heat_window_ms);
	FUZZ_CHECK(p.threshold == (x < t ? x : t));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *line, *next;
	const char *field = NULL;
	mcrepl_config cfg;

	FUZZ_CHECK(text);
	memcpy(text, data, size);
	text[size] = '\0';
	mcrepl_config_init(&cfg);
	FUZZ_CHECK(mcrepl_config_validate(&cfg, NULL) == MCREPL_OK);
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		check_line(&cfg, line);
	}
	if (mcrepl_config_validate(&cfg, &field) == MCREPL_OK)
		check_valid(&cfg);
	else
		FUZZ_CHECK(field &&
			   strncmp(field, "dynamic_replication_", 20) == 0);
	free(text);
	return 0;
}
