/* stderr capture (see capture.h). */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

static FILE *tmp;
static int saved = -1, target = -1;

void capture_begin(int fd)
{
	fflush(stdout);
	fflush(stderr);
	tmp = tmpfile();
	ck_assert_ptr_nonnull(tmp);
	target = fd;
	saved = dup(fd);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fileno(tmp), fd), 0);
}

void capture_end(char *buf, size_t cap)
{
	size_t n;

	fflush(stdout);
	fflush(stderr);
	dup2(saved, target);
	close(saved);
	rewind(tmp);
	n = fread(buf, 1, cap - 1, tmp);
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	fclose(tmp);
}
