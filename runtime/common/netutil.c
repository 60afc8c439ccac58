/* Socket helpers: address parsing, resolution, fd flags. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "netutil.h"

static int parse_port(const char *s, uint16_t *port)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 65535)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static int copy_host(const char *s, size_t n, char *host, size_t hostlen)
{
	if (n >= hostlen)
		return -1;
	memcpy(host, s, n);
	host[n] = '\0';
	return 0;
}

int net_split_hostport(const char *addr, char *host, size_t hostlen,
		       uint16_t *port)
{
	const char *colon;

	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':')
			return -1;
		if (copy_host(addr + 1, (size_t)(close - addr - 1), host,
			      hostlen))
			return -1;
		return parse_port(close + 2, port);
	}
	colon = strrchr(addr, ':');
	if (!colon || strchr(addr, ':') != colon)
		return -1;
	if (copy_host(addr, (size_t)(colon - addr), host, hostlen))
		return -1;
	return parse_port(colon + 1, port);
}

int net_resolve(const char *host, uint16_t port, int passive,
		struct sockaddr_storage *ss, socklen_t *sslen, char *err,
		size_t errlen)
{
	struct addrinfo hints, *res;
	char service[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	if (host && !*host)
		host = NULL;
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "resolve %s: %s", host ? host : "*",
			 gai_strerror(rc));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*sslen = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

void net_format_addr(const struct sockaddr *sa, socklen_t salen, char *out,
		     size_t outlen)
{
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	int rc;

	rc = getnameinfo(sa, salen, host, sizeof(host), serv, sizeof(serv),
			 NI_NUMERICHOST | NI_NUMERICSERV);
	if (rc) {
		snprintf(out, outlen, "?");
		return;
	}
	if (sa->sa_family == AF_INET6)
		snprintf(out, outlen, "[%s]:%s", host, serv);
	else
		snprintf(out, outlen, "%s:%s", host, serv);
}

int net_set_nonblock(int fd, int on)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	flags = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	return fcntl(fd, F_SETFL, flags);
}

void net_set_nodelay(int fd)
{
	int one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* See netutil.h. */
int net_remaining_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - net_now_ms();
	return left < 0 ? 0 : (int)left;
}

static int connect_one(const struct addrinfo *ai, int64_t deadline)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, rc, soerr = 0;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC,
		    ai->ai_protocol);
	if (fd < 0)
		return -1;
	if (net_set_nonblock(fd, 1))
		goto out_close;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return fd;
	if (errno != EINPROGRESS)
		goto out_close;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	do {
		rc = poll(&pfd, 1, net_remaining_ms(deadline));
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		errno = ETIMEDOUT;
	if (rc <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
		goto out_close;
	if (soerr == 0)
		return fd;
	errno = soerr;
out_close:
	rc = errno;
	close(fd);
	errno = rc;
	return -1;
}

int net_connect(const char *host, uint16_t port, int timeout_ms, char *err,
		size_t errlen)
{
	int64_t deadline = timeout_ms < 0 ? -1 : net_now_ms() + timeout_ms;
	struct addrinfo hints, *res, *ai;
	char service[8];
	int fd = -1, rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	if (host && !*host)
		host = NULL; /* loopback */
	rc = getaddrinfo(host, service, &hints, &res);
	if (rc) {
		snprintf(err, errlen, "resolve %s: %s", host ? host : "",
			 gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next)
		fd = connect_one(ai, deadline);
	if (fd < 0)
		snprintf(err, errlen, "connect %s:%u: %s", host ? host : "",
			 (unsigned)port, strerror(errno));
	else
		net_set_nodelay(fd);
	freeaddrinfo(res);
	return fd;
}

int net_wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	int rc;

	do {
		rc = poll(&pfd, 1, net_remaining_ms(deadline));
	} while (rc < 0 && errno == EINTR);
	if (rc == 0)
		return -ETIMEDOUT;
	return rc < 0 ? -errno : 0;
}
