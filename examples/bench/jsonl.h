/*
 * A small tolerant JSON-lines field extractor for trace replay: one pass
 * over a line checks that it is one well-formed JSON object and notes
 * where the wanted top-level members' values start; other members are
 * skipped whatever their type. No allocation except for id arrays.
 */
#ifndef MBENCH_JSONL_H
#define MBENCH_JSONL_H

#include <stddef.h>
#include <stdint.h>

struct jsonl_field {
	const char *name;  /* in: member name */
	const char *value; /* out: start of its value, NULL when absent */
};

/* Scan line (NUL-terminated; a trailing newline is fine). Returns NULL
 * when it is one object, else a static reason ("not a JSON object",
 * "unterminated string", ...). Each f[i].value is set (NULL if absent). */
const char *jsonl_scan(const char *line, struct jsonl_field *f, size_t n);

/* The number at v (a value found by jsonl_scan). NULL or a reason. */
const char *jsonl_number(const char *v, double *out);

/* The array of non-negative integers at v into *ids (grown with realloc,
 * *cap elements; the caller frees), *n of them. NULL or a reason. */
const char *jsonl_ids(const char *v, uint64_t **ids, size_t *n, size_t *cap);

#endif
