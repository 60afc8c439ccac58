/* Warmup selection: a bounded min-heap of the hottest eligible objects,
 * kept in the caller's out[] array, then a byte budget. */
#include "mcrepl/warmup.h"

/* true when a is colder than b (heap order: coldest on top). */
static bool colder(const mcrepl_warmup_candidate *c, size_t a, size_t b)
{
	return c[a].heat < c[b].heat || (c[a].heat == c[b].heat && a > b);
}

static void sift_down(const mcrepl_warmup_candidate *c, size_t *h, size_t n,
		      size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i, t;

		if (l < n && colder(c, h[l], h[m]))
			m = l;
		if (r < n && colder(c, h[r], h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void sift_up(const mcrepl_warmup_candidate *c, size_t *h, size_t i)
{
	while (i > 0 && colder(c, h[i], h[(i - 1) / 2])) {
		size_t p = (i - 1) / 2, t = h[i];

		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

/* Heap-sort the kept indexes hottest first (pops the coldest to the end). */
static void sort_hottest_first(const mcrepl_warmup_candidate *c, size_t *h,
			       size_t n)
{
	for (size_t end = n; end > 1; end--) {
		size_t t = h[0];

		h[0] = h[end - 1];
		h[end - 1] = t;
		sift_down(c, h, end - 1, 0);
	}
}

size_t mcrepl_warmup_select(const mcrepl_warmup_candidate *c, size_t n,
			    size_t max_copies, uint64_t max_bytes, size_t *out)
{
	size_t kept = 0, chosen = 0;
	uint64_t bytes = 0;

	if (!c || !out || max_copies == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i].heat == 0 || c[i].in_domain)
			continue;
		if (kept < max_copies) {
			out[kept] = i;
			sift_up(c, out, kept++);
		} else if (colder(c, out[0], i)) {
			out[0] = i;
			sift_down(c, out, kept, 0);
		}
	}
	sort_hottest_first(c, out, kept);
	for (size_t i = 0; i < kept; i++) {
		if (c[out[i]].size > max_bytes - bytes)
			continue;
		bytes += c[out[i]].size;
		out[chosen++] = out[i];
	}
	return chosen;
}
