/*
 * A strict JSON-lines field scanner for the example tools' trace readers
 * (mcrepl-sim, mcrepl-bench). One pass over a line checks that it is one
 * well-formed JSON object (RFC 8259 grammar: strings with valid escapes
 * and no control characters, numbers without leading zeros or hex, the
 * literals true/false/null, nesting at most JSONL_MAX_DEPTH deep) and
 * notes where the wanted top-level members' values start; other members
 * are checked and skipped whatever their type. No allocation except for
 * id arrays.
 */
#ifndef MCREPL_TOOLS_JSONL_H
#define MCREPL_TOOLS_JSONL_H

#include <stddef.h>
#include <stdint.h>

#define JSONL_MAX_DEPTH 64

struct jsonl_field {
	const char *name;  /* in: member name (raw bytes between the quotes) */
	const char *value; /* out: start of its value, NULL when absent */
};

/*
 * Scan line (NUL-terminated; a trailing newline is fine). Returns NULL
 * when it is one object, else a static reason ("not a JSON object",
 * "truncated line", "bad number", ...). Each f[i].value is set (NULL if
 * absent); a wanted member given twice is an error ("duplicate member").
 */
const char *jsonl_scan(const char *line, struct jsonl_field *f, size_t n);

/* The number at v (a value found by jsonl_scan). NULL or a reason. */
const char *jsonl_number(const char *v, double *out);

/* What jsonl_ids returns when realloc fails (not a fault of the line). */
extern const char jsonl_oom[];

/*
 * The array of integers in 0 .. 2^64-1 at v (a value found by jsonl_scan;
 * exact, no rounding through double; no fraction or exponent) into *ids
 * (grown with realloc, *cap elements; the caller frees), *n of them. NULL
 * or a reason.
 */
const char *jsonl_ids(const char *v, uint64_t **ids, size_t *n, size_t *cap);

#endif
