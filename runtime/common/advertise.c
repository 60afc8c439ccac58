/* The advertised data address (see advertise.h). */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "advertise.h"

bool advertise_is_wildcard(const char *addr)
{
	return !addr[0] || !strcmp(addr, "0.0.0.0") || !strcmp(addr, "::") ||
	       !strcmp(addr, "[::]");
}

bool advertise_is_loopback(const char *addr)
{
	return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1") ||
	       !strncmp(addr, "[::1]", 5) ||
	       (!strncmp(addr, "localhost", 9) &&
		(addr[9] == '\0' || addr[9] == ':'));
}

int advertise_choose(const char *given, const char *bind,
		     const struct host_addr *addrs, size_t n, char *out,
		     size_t cap, char *err, size_t errlen)
{
	if (given[0] && advertise_is_wildcard(given)) {
		snprintf(err, errlen,
			 "--advertise_address %s is a wildcard; give the "
			 "address other hosts reach this worker at",
			 given);
		return -1;
	}
	if (given[0] || !advertise_is_wildcard(bind)) {
		snprintf(out, cap, "%s", given[0] ? given : bind);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!advertise_is_loopback(addrs[i].addr)) {
			snprintf(out, cap, "%s", addrs[i].addr);
			return 0;
		}
	}
	snprintf(err, errlen,
		 "--data_address %s binds every address but this host has no "
		 "non-loopback IPv4 address to advertise; set "
		 "--advertise_address to the address other hosts reach this "
		 "worker at",
		 bind[0] ? bind : "''");
	return -1;
}

size_t advertise_host_addrs(struct host_addr *addrs, size_t cap)
{
	struct ifaddrs *all, *ifa;
	size_t n = 0;

	if (getifaddrs(&all) != 0)
		return 0;
	for (ifa = all; ifa && n < cap; ifa = ifa->ifa_next) {
		const struct sockaddr_in *sin =
		    (const struct sockaddr_in *)(const void *)ifa->ifa_addr;

		if (!sin || sin->sin_family != AF_INET ||
		    !(ifa->ifa_flags & IFF_UP))
			continue;
		snprintf(addrs[n].ifname, sizeof(addrs[n].ifname), "%s",
			 ifa->ifa_name);
		if (inet_ntop(AF_INET, &sin->sin_addr, addrs[n].addr,
			      sizeof(addrs[n].addr)))
			n++;
	}
	freeifaddrs(all);
	return n;
}
