/* Domain names and the two-level domain cost (RFC "Domain Model"). */
#include <string.h>

#include "mcrepl/domain.h"
#include "mcrepl/types.h"

const char *mcrepl_domain_name(const char *d)
{
	return d && d[0] ? d : MCREPL_DEFAULT_DOMAIN;
}

bool mcrepl_domain_equal(const char *a, const char *b)
{
	return strcmp(mcrepl_domain_name(a), mcrepl_domain_name(b)) == 0;
}

unsigned mcrepl_domain_cost(const char *requester, const char *candidate)
{
	return mcrepl_domain_equal(requester, candidate) ? 0u : 1u;
}

/* [A-Za-z0-9._-] spelled out: no locale, no sign-extension surprise. */
static bool domain_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

bool mcrepl_domain_is_valid(const char *d)
{
	size_t i;

	if (!d)
		return true;
	for (i = 0; d[i]; i++) {
		if (i >= MCREPL_DOMAIN_MAX ||
		    !domain_char_ok((unsigned char)d[i]))
			return false;
	}
	return true;
}
