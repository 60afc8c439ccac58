/* Protected mode (see protect.h). */
#include <arpa/inet.h>
#include <string.h>

#include "protect.h"

bool net_is_loopback(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;
	char buf[64];
	size_t n = strlen(host);

	if (strcmp(host, "localhost") == 0)
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (n >= 2 && n < sizeof(buf) && host[0] == '[' && host[n - 1] == ']') {
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		host = buf;
	}
	return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

int net_protected_bind(const char *prog, const char *flag, char *host,
		       size_t cap, const char *any_default, bool authed,
		       bool insecure, const char *what, FILE *log, char *err,
		       size_t errlen)
{
	if (!host[0]) {
		snprintf(host, cap, "%s", authed ? any_default : "127.0.0.1");
		if (!authed && !insecure)
			fprintf(log,
				"%s: protected mode: no %s, so --%s is "
				"127.0.0.1 (loopback only); give %s to "
				"serve the network\n",
				prog, what, flag, what);
		if (authed || !insecure)
			return 0;
		snprintf(host, cap, "%s", any_default);
	}
	if (authed || net_is_loopback(host))
		return 0;
	if (!insecure) {
		snprintf(err, errlen,
			 "protected mode: --%s %s is not a loopback address "
			 "and there is no %s, so anyone who reaches it could "
			 "use it unauthenticated; give %s (docs/SECURITY.md), "
			 "or --insecure to serve it without authentication",
			 flag, host, what, what);
		return -1;
	}
	fprintf(log,
		"%s: WARNING: --insecure: serving %s on %s without "
		"authentication; anyone who reaches it can use it\n",
		prog, flag, host);
	return 0;
}
