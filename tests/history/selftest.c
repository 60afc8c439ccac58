/*
 * The history checker on hand-made histories (hist.h): one linearizable
 * with concurrency and unknown outcomes, and one for each kind of
 * violation, with the exact culprit; a search over its budget. Prints a
 * line per case and "history selftest: N passed, M failed"; exit 1 on a
 * failure. Run by make check (mk/history.mk).
 */
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "payload.h"

#define MS 1000000LL
#define A hist_value_id(0, 1)
#define B hist_value_id(2, 1)
#define C hist_value_id(1, 7)
#define NF HCODE_NOT_FOUND

static int passed, failed;

#define EXPECT(cond)                                                           \
	do {                                                                   \
		if (!(cond)) {                                                 \
			printf("not ok - %s: %s (line %d)\n", name, #cond,     \
			       __LINE__);                                      \
			failed++;                                              \
			return;                                                \
		}                                                              \
	} while (0)

static struct hop op(uint32_t client, enum hop_kind k, int64_t inv, int64_t ret,
		     enum hop_out out, int code, uint64_t v)
{
	return (struct hop){.client = client,
			    .kind = k,
			    .out = out,
			    .code = code,
			    .value = v,
			    .read = HREAD_VALUE,
			    .t_inv = inv * MS,
			    .t_ret = ret * MS};
}

#define PUT(c, i, r, out, v) op(c, HOP_PUT, i, r, out, 0, v)
#define PUTX(c, i, r) op(c, HOP_PUT, i, r, HOUT_FAIL, HCODE_ALREADY_EXISTS, C)
#define GET(c, i, r, v) op(c, HOP_GET, i, r, HOUT_OK, 0, v)
#define GETNF(c, i, r) op(c, HOP_GET, i, r, HOUT_FAIL, NF, 0)
#define RM(c, i, r, out) op(c, HOP_REMOVE, i, r, out, 0, 0)
#define RMBUSY(c, i, r) op(c, HOP_REMOVE, i, r, HOUT_FAIL, HCODE_BUSY, 0)

static const struct hist_budget budget = {1000000, 100000};

static void check(const char *name, struct hop *ops, size_t n,
		  enum hist_verdict want, enum hist_class cls, int64_t bad_inv)
{
	struct hist_key_result r;

	EXPECT(hist_check_key(ops, n, &budget, &r) == 0);
	EXPECT(r.verdict == want);
	EXPECT(r.cls == cls);
	if (want == HIST_VIOLATION) {
		EXPECT(r.bad_op < n);
		EXPECT(ops[r.bad_op].t_inv == bad_inv * MS);
	}
	printf("ok - %s (%llu steps)\n", name, (unsigned long long)r.steps);
	passed++;
}

/* Overlapping ops, an unknown remove that took effect, an unknown put
 * that did not, a refused put, a busy remove: all explained. */
static void linearizable(void)
{
	struct hop h[] = {
	    GET(1, 5, 15, A),	    PUT(0, 0, 10, HOUT_OK, A),
	    GETNF(2, 1, 3),	    RM(1, 20, 30, HOUT_UNKNOWN),
	    GETNF(0, 25, 35),	    PUT(2, 40, 50, HOUT_OK, B),
	    PUTX(3, 45, 48),	    RMBUSY(4, 52, 54),
	    GET(0, 55, 60, B),	    PUT(1, 60, 70, HOUT_UNKNOWN, C),
	    RM(2, 80, 90, HOUT_OK), GETNF(0, 95, 100),
	    GETNF(3, 85, 87),	    GET(4, 79, 81, B),
	};

	check("linearizable with concurrency and unknowns", h,
	      sizeof(h) / sizeof(h[0]), HIST_LINEARIZABLE, HCLASS_NONE, 0);
}

/* An unknown put is seen long after it returned. */
static void late_unknown(void)
{
	struct hop h[] = {PUT(0, 0, 5, HOUT_UNKNOWN, A), GETNF(1, 10, 20),
			  GET(2, 100, 110, A)};

	check("unknown put taking effect late", h, 3, HIST_LINEARIZABLE,
	      HCLASS_NONE, 0);
}

static void stale(void)
{
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), RM(1, 20, 30, HOUT_OK),
			  GETNF(2, 31, 33), GET(2, 40, 50, A)};

	check("stale read after a remove", h, 4, HIST_VIOLATION, HCLASS_STALE,
	      40);
}

/* A second remove finds what the first removed: the value came back. */
static void removed_twice(void)
{
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), RM(1, 20, 30, HOUT_OK),
			  GETNF(2, 31, 33), RM(2, 40, 50, HOUT_OK)};

	check("removed value back: a second remove", h, 4, HIST_VIOLATION,
	      HCLASS_STALE, 40);
}

static void lost(void)
{
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), GET(1, 12, 14, A),
			  GETNF(1, 20, 30)};

	check("lost acknowledged put", h, 3, HIST_VIOLATION, HCLASS_LOST, 20);
}

/* Two acknowledged puts of one key, nothing removed between. */
static void double_put(void)
{
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), PUT(1, 2, 8, HOUT_OK, B)};

	check("two puts both acknowledged", h, 2, HIST_VIOLATION, HCLASS_LOST,
	      2);
}

static void phantom(void)
{
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), GET(1, 20, 30, C)};

	check("phantom value", h, 2, HIST_VIOLATION, HCLASS_PHANTOM, 20);
}

/* Read before its put was even invoked. */
static void from_future(void)
{
	struct hop h[] = {GET(1, 0, 5, A), PUT(0, 10, 20, HOUT_OK, A)};

	check("value read before its put", h, 2, HIST_VIOLATION, HCLASS_PHANTOM,
	      0);
}

static void corrupt(void)
{
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), GET(1, 20, 30, A)};

	h[1].read = HREAD_CORRUPT;
	check("corrupt bytes", h, 2, HIST_VIOLATION, HCLASS_CORRUPT, 20);
}

/* Many unknown puts and a budget of a few steps: undecided, not a hang. */
static void undecided(void)
{
	const char *name = "over budget: undecided";
	struct hop h[40];
	struct hist_budget tiny = {20, 100000};
	struct hist_key_result r;

	for (uint32_t i = 0; i < 40; i++)
		h[i] = i % 2
			   ? RM(i, i, 1000, HOUT_UNKNOWN)
			   : PUT(i, i, 1000, HOUT_UNKNOWN, hist_value_id(i, 1));
	h[39] = GETNF(39, 2000, 2001);
	EXPECT(hist_check_key(h, 40, &tiny, &r) == 0);
	EXPECT(r.verdict == HIST_UNDECIDED);
	EXPECT(r.steps == 20);
	printf("ok - %s\n", name);
	passed++;
}

/* The window names the culprit and what led to it. */
static void window(void)
{
	const char *name = "window around a stale read";
	struct hop h[] = {PUT(0, 0, 10, HOUT_OK, A), RM(1, 20, 30, HOUT_OK),
			  GET(2, 40, 50, A)};
	struct hist_key_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	EXPECT(f && hist_check_key(h, 3, &budget, &r) == 0);
	hist_print_window(f, h, 3, r.bad_op, 0, 10);
	fclose(f);
	EXPECT(strstr(buf, "=>     40.000..    50.000 ms c2 get    v=c0:1 ok"));
	EXPECT(strstr(buf, "c1 remove ok"));
	EXPECT(strstr(buf, "c0 put    v=c0:1 ok"));
	free(buf);
	printf("ok - %s\n", name);
	passed++;
}

/* A long op that began before the last four changes is shown too. */
static void window_long(void)
{
	const char *name = "window shows a long op still running";
	struct hop h[] = {
	    RM(3, 1, 95, HOUT_UNKNOWN), PUT(0, 10, 20, HOUT_OK, A),
	    RM(1, 30, 40, HOUT_OK),	PUT(0, 50, 60, HOUT_OK, B),
	    RM(1, 70, 80, HOUT_OK),	PUT(4, 85, 90, HOUT_OK, C),
	    GET(2, 300, 310, A)};
	struct hist_key_result r;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	EXPECT(f && hist_check_key(h, 7, &budget, &r) == 0);
	EXPECT(r.verdict == HIST_VIOLATION && r.cls == HCLASS_STALE);
	hist_print_window(f, h, 7, r.bad_op, 0, 10);
	fclose(f);
	EXPECT(strstr(buf, "=>    300.000..   310.000 ms c2 get"));
	EXPECT(strstr(buf, "1.000..    95.000 ms c3 remove unknown"));
	free(buf);
	printf("ok - %s\n", name);
	passed++;
}

/* Object bytes: attributed, and any change caught. */
static void payload(void)
{
	const char *name = "payload attribution and checks";
	static uint8_t buf[PAYLOAD_MAX];
	uint64_t v = hist_value_id(3, 41), got;
	size_t len = payload_len(v);

	EXPECT(len >= PAYLOAD_MIN && len <= PAYLOAD_MAX && len % 8 == 0);
	EXPECT(payload_len(hist_value_id(3, 42)) != len ||
	       payload_len(hist_value_id(3, 43)) != len);
	payload_fill(buf, 7, v);
	EXPECT(payload_judge(buf, len, 7, &got) == HREAD_VALUE && got == v);
	EXPECT(payload_judge(buf, len, 8, &got) == HREAD_PHANTOM && got == v);
	EXPECT(payload_judge(buf, len - 8, 7, &got) == HREAD_CORRUPT);
	buf[len - 1] ^= 1;
	EXPECT(payload_judge(buf, len, 7, &got) == HREAD_CORRUPT);
	buf[len - 1] ^= 1;
	buf[1] ^= 0x80;
	EXPECT(payload_judge(buf, len, 7, &got) == HREAD_CORRUPT && got == 0);
	printf("ok - %s\n", name);
	passed++;
}

int main(void)
{
	linearizable();
	late_unknown();
	stale();
	removed_twice();
	lost();
	double_put();
	phantom();
	from_future();
	corrupt();
	undecided();
	window();
	window_long();
	payload();
	printf("history selftest: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
