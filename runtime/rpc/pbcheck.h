/*
 * Checks protobuf-c cannot make: protobuf-c unpacks a `string` field into
 * a NUL-terminated char *, so a string holding a NUL byte ("nul\0suffix")
 * would silently read as its prefix ("nul") and alias another key or
 * tenant. pb_nul_string() walks the wire bytes of a message (already
 * unpacked successfully, so well formed) and finds such a field.
 *
 * Thread-safety: reentrant; no state.
 */
#ifndef MCREPL_DAEMON_PBCHECK_H
#define MCREPL_DAEMON_PBCHECK_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nested messages deeper than this are not walked (ours nest 3 deep). */
#define PB_CHECK_MAX_DEPTH 8

/* Longest string fields accepted, in bytes; 0 = no limit. Fields are told
 * apart by name: "key" and "keys", "tenant", any other. */
typedef struct pb_string_limits {
	size_t key, tenant, other;
} pb_string_limits;

/* The first string field of type d in buf[0, len) (nested messages
 * included) that holds a NUL byte or is longer than its limit in lim (NULL
 * = no length limits): false after writing why ("key is 4000 bytes, above
 * max_key_bytes=1024") into why; true when every string passes or the bytes
 * do not parse (unpack reports those). */
bool pb_check_strings(const ProtobufCMessageDescriptor *d, const uint8_t *buf,
		      size_t len, const pb_string_limits *lim, char *why,
		      size_t whylen);

/* The name of the first string field of type d in buf[0, len) (nested
 * messages included) whose bytes contain a NUL, or NULL when there is none
 * or the bytes do not parse (unpack reports those). */
const char *pb_nul_string(const ProtobufCMessageDescriptor *d,
			  const uint8_t *buf, size_t len);

#endif
