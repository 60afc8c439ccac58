/* Raw loopback sockets for the daemon tests (see rawsock.h). */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "netutil.h"
#include "rawsock.h"
#include "wait.h"

int connect_from(const char *src, uint16_t port)
{
	struct sockaddr_in sa = {0}, me = {0};
	struct timeval tv = {5, 0};
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	if (src) {
		me.sin_family = AF_INET;
		inet_pton(AF_INET, src, &me.sin_addr);
		ck_assert_int_eq(bind(fd, (struct sockaddr *)&me, sizeof(me)),
				 0);
	}
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

int raw_connect(uint16_t port)
{
	return connect_from(NULL, port);
}

void raw_send(int fd, const void *buf, size_t len)
{
	ck_assert_int_eq(send(fd, buf, len, MSG_NOSIGNAL), (ssize_t)len);
}

bool closed_within(int fd, int timeout_ms)
{
	int64_t end = net_now_ms() + timeout_ms;
	char b[4096];

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};
		int left = (int)(end - net_now_ms());
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return false;
		n = recv(fd, b, sizeof(b), 0);
		if (n <= 0)
			return true;
	}
}

bool closed_soon(int fd)
{
	return closed_within(fd, test_hang_ms());
}

int fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

void set_send_timeout(int fd)
{
	struct timeval tv = {5, 0};

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

size_t send_some(int fd, const uint8_t *buf, size_t len)
{
	size_t sent = 0;

	while (sent < len) {
		ssize_t n = send(fd, buf + sent, len - sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n <= 0)
			break;
		sent += (size_t)n;
	}
	return sent;
}
