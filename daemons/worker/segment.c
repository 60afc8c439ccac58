/* Segment memory: anonymous mappings, huge pages when asked and available,
 * normal pages otherwise (the fallback is silent: huge pages are an
 * optimisation, not a requirement). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "worker.h"

#define HUGE_PAGE (2ull << 20)

static void *map_huge(uint64_t len)
{
	void *p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int segment_map(struct wseg *s, uint64_t len, bool hugepages, char *err,
		size_t errlen)
{
	void *p = NULL;

	s->huge = false;
	if (hugepages && len % HUGE_PAGE == 0) {
		p = map_huge(len);
		s->huge = p != NULL;
	}
	if (!p) {
		p = mmap(NULL, (size_t)len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			snprintf(err, errlen, "cannot map %llu bytes: %s",
				 (unsigned long long)len, strerror(errno));
			return -1;
		}
	}
	s->mem = p;
	s->len = len;
	return 0;
}

void segment_unmap(struct wseg *s)
{
	if (s->mem)
		munmap(s->mem, (size_t)s->len);
	s->mem = NULL;
}

size_t segment_resident(const struct wseg *s, uint64_t off, uint64_t len,
			unsigned char *vec, size_t cap)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n;

	if (page <= 0 || off % (uint64_t)page || off >= s->len)
		return 0;
	if (len > s->len - off)
		len = s->len - off;
	n = (size_t)((len + (uint64_t)page - 1) / (uint64_t)page);
	if (n > cap)
		n = cap;
	/* on failure every page counts as resident: scanned, never missed */
	if (mincore((uint8_t *)s->mem + off, n * (size_t)page, vec) != 0)
		memset(vec, 1, n);
	return n;
}
