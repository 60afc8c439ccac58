/*
 * The data address a worker advertises to the master: the address other
 * hosts and clients connect to for its segments' bytes.
 *
 *   --advertise_address given        that address (not a wildcard)
 *   --data_address a specific one    that address
 *   --data_address a wildcard        the host's first non-loopback IPv4
 *   (0.0.0.0, ::, "")                address that is up, else refused
 *
 * advertise_choose() is pure (the interface list is an argument);
 * advertise_host_addrs() reads it with getifaddrs(). Thread-safe.
 */
#ifndef MCREPL_ADVERTISE_H
#define MCREPL_ADVERTISE_H

#include <stdbool.h>
#include <stddef.h>

/* One IPv4 address of an interface that is up. */
struct host_addr {
	char ifname[32];
	char addr[16]; /* dotted quad */
};

/* True for "", "0.0.0.0", "::" and "[::]". */
bool advertise_is_wildcard(const char *addr);

/* True for 127.0.0.0/8, ::1 and localhost, with or without ":port". */
bool advertise_is_loopback(const char *addr);

/*
 * Chooses by the rules above from given (--advertise_address, "" = auto),
 * bind (--data_address) and the host's addresses (n of them, in interface
 * order). Writes the address into out (cap bytes); returns 0, or -1 with
 * one line in err saying which flag to set.
 */
int advertise_choose(const char *given, const char *bind,
		     const struct host_addr *addrs, size_t n, char *out,
		     size_t cap, char *err, size_t errlen);

/* Up to cap IPv4 addresses of interfaces that are up (getifaddrs order);
 * returns how many, 0 when none or on error. */
size_t advertise_host_addrs(struct host_addr *addrs, size_t cap);

#endif
