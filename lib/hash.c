/* Mixing and small string helpers shared by the modules (the string hash
 * itself is inline in internal.h). */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint64_t mcrepl__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb3fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

char *mcrepl__strdup(const char *s)
{
	size_t n;
	char *d;

	s = mcrepl__nz(s);
	n = strlen(s);
	d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}
