/*
 * mcrepl-sim JSON line scanner: just enough JSON to read one flat trace
 * object ({"timestamp": 12, "hash_ids": [1, 2], ...}) strictly. Other
 * members are skipped whatever their type.
 */
#ifndef SIM_JSON_H
#define SIM_JSON_H

#include <stddef.h>
#include <stdint.h>

struct sim_json_req {
	double timestamp;
	uint64_t *ids; /* grown with realloc; the caller frees */
	size_t n_ids, cap_ids;
	int has_ts, has_ids;
};

/*
 * Parse one line into r (n_ids reset; ids reused). Returns NULL when the
 * line is a valid object with a non-negative numeric "timestamp" and a
 * "hash_ids" array of non-negative integers, else a static text saying
 * what is wrong.
 */
const char *sim_json_parse_req(const char *line, struct sim_json_req *r);

#endif
