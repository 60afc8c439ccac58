/*
 * Prometheus text exposition (format 0.0.4) helpers shared by libmcrepl
 * and the daemons (util/). Not installed; not part of libmcrepl's API.
 *
 * A struct mcu_prom is the text being written, either into the caller's
 * buffer (mcu_prom_fixed: like snprintf, len counts the whole text even
 * when it did not fit, so the caller can retry with len + 1 bytes) or into
 * a buffer that grows with realloc (mcu_prom_growing: the caller frees
 * buf; oom is set when growing failed and the text is incomplete).
 * Pure: no I/O, no locks; one writer per struct.
 */
#ifndef MCU_PROM_H
#define MCU_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mcu_prom {
	char *buf;
	size_t cap, len;
	bool grow; /* realloc when full (else count and truncate) */
	bool oom;  /* growing failed */
};

/* One label of a sample: name="value" (value escaped as the format says). */
struct mcu_prom_label {
	const char *name, *value;
};

/* Writes into buf[cap] (buf may be NULL when cap is 0); NUL terminated
 * whenever cap > 0. Fits when len < cap. */
void mcu_prom_fixed(struct mcu_prom *p, char *buf, size_t cap);

/* Writes into a buffer of its own, grown as needed; free(p->buf) after. */
void mcu_prom_growing(struct mcu_prom *p);

/* Room for need more bytes and a NUL at buf + len, growing if it may:
 * for text rendered by someone else (mcrepl_stats_render) straight into
 * buf + len, after which the caller adds its length to len. False when
 * the text is fixed and short, or growing failed (oom is set). */
bool mcu_prom_reserve(struct mcu_prom *p, size_t need);

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void mcu_prom_printf(struct mcu_prom *p, const char *fmt, ...);

/* "# HELP name help" (skipped when help is NULL) and "# TYPE name type";
 * type is "counter" or "gauge". */
void mcu_prom_head(struct mcu_prom *p, const char *name, const char *type,
		   const char *help);

/* One sample line: name{l[0],...,l[n-1]} v (no braces when n is 0). */
void mcu_prom_u64(struct mcu_prom *p, const char *name,
		  const struct mcu_prom_label *l, size_t n, uint64_t v);
void mcu_prom_i64(struct mcu_prom *p, const char *name,
		  const struct mcu_prom_label *l, size_t n, int64_t v);

/* A whole unlabelled metric: head, then one sample. */
void mcu_prom_metric(struct mcu_prom *p, const char *name, const char *type,
		     const char *help, uint64_t v);

/* A whole counter family labelled by reason: head, then for each i in
 * [from, n) one sample name{reason="reason(i)"} v[i] (v indexed from 0,
 * as the caller's array of counts by reason is). */
void mcu_prom_reasons(struct mcu_prom *p, const char *name, const char *help,
		      const char *(*reason)(int i), const uint64_t *v, int from,
		      int n);

#endif
