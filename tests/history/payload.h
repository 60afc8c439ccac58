/* The history test's object bytes: every value's content follows from
 * its (key, value id), so any read can be attributed and checked byte by
 * byte without keeping what was written. A 24-byte header (magic, key,
 * value id, length), then bytes of a hash of (value id, offset). */
#ifndef MCREPL_HISTORY_PAYLOAD_H
#define MCREPL_HISTORY_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"

#define PAYLOAD_MIN (4 * 1024)
#define PAYLOAD_MAX (64 * 1024)

/* The length of value id v: PAYLOAD_MIN..PAYLOAD_MAX, a multiple of 8. */
size_t payload_len(uint64_t v);
/* Fills buf (payload_len(v) bytes) with value v of key. */
void payload_fill(uint8_t *buf, uint32_t key, uint64_t v);
/* What len bytes read from key are: *v the value they name (0 when no
 * header names one); HREAD_CORRUPT when the bytes are not exactly that
 * value's, HREAD_PHANTOM when it is another key's value. */
enum hop_read payload_judge(const uint8_t *buf, size_t len, uint32_t key,
			    uint64_t *v);

#endif
