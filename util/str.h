/*
 * Small string helpers shared by libmcrepl and the daemons (util/).
 * Not installed; not part of libmcrepl's API.
 */
#ifndef MCU_STR_H
#define MCU_STR_H

/* malloc-backed strdup (so test allocators see every allocation); NULL in
 * -> "" copy. Returns NULL when allocation fails; the caller frees. */
char *mcu_strdup(const char *s);

/* s, or "" when s is NULL. */
static inline const char *mcu_nz(const char *s)
{
	return s ? s : "";
}

#endif
