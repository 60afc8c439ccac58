/* Small string helpers (see str.h). */
#include <stdlib.h>
#include <string.h>

#include "util/str.h"

char *mcu_strdup(const char *s)
{
	size_t n;
	char *d;

	s = mcu_nz(s);
	n = strlen(s);
	d = malloc(n + 1);
	if (d)
		memcpy(d, s, n + 1);
	return d;
}
