/*
 * Private helpers shared by libmcrepl's modules. Not installed; not API.
 * Internal symbols use the mcrepl__ prefix and are hidden from the .so.
 */
#ifndef MCREPL_INTERNAL_H
#define MCREPL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit hash of a byte string (wyhash-style mixing, 8 bytes a step). */
uint64_t mcrepl__hash64(const void *data, size_t len, uint64_t seed);

/* Hash of a NUL-terminated string (NULL hashes like ""). */
uint64_t mcrepl__hash_str(const char *s, uint64_t seed);

/* Final avalanche mix of one 64-bit value. */
uint64_t mcrepl__mix64(uint64_t x);

/* malloc-backed strdup/strndup (so test allocators see every allocation);
 * NULL in -> "" copy. Return NULL when allocation fails. */
char *mcrepl__strdup(const char *s);

/* s, or "" when s is NULL. */
static inline const char *mcrepl__nz(const char *s)
{
	return s ? s : "";
}

#endif
