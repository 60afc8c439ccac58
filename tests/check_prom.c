/* util/prom: Prometheus text into a fixed or a growing buffer. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util/prom.h"
#include "testutil.h"

Suite *make_prom_suite(void);

static const char golden[] = "# HELP m_total Things done\n"
			     "# TYPE m_total counter\n"
			     "m_total 7\n"
			     "# TYPE g gauge\n"
			     "g{a=\"x\",b=\"q\\\"\\\\\\n\"} -3\n";

static void render(struct mcu_prom *p)
{
	const struct mcu_prom_label l[] = {{"a", "x"}, {"b", "q\"\\\n"}};

	mcu_prom_metric(p, "m_total", "counter", "Things done", 7);
	mcu_prom_head(p, "g", "gauge", NULL);
	mcu_prom_i64(p, "g", l, 2, -3);
}

START_TEST(test_fixed_fits)
{
	char buf[256];
	struct mcu_prom p;

	mcu_prom_fixed(&p, buf, sizeof(buf));
	render(&p);
	ck_assert_str_eq(buf, golden);
	ck_assert_uint_eq(p.len, strlen(golden));
}
END_TEST

/* Short buffers: truncated, NUL terminated, full length counted. */
START_TEST(test_fixed_short)
{
	char buf[sizeof(golden)];
	size_t cap = (size_t)_i;
	struct mcu_prom p;

	memset(buf, 'z', sizeof(buf));
	mcu_prom_fixed(&p, cap ? buf : NULL, cap);
	render(&p);
	ck_assert_uint_eq(p.len, strlen(golden));
	ck_assert(!mcu_prom_reserve(&p, 1));
	if (cap > 0) {
		ck_assert_uint_eq(strlen(buf), cap - 1);
		ck_assert_int_eq(memcmp(buf, golden, cap - 1), 0);
	}
}
END_TEST

START_TEST(test_growing)
{
	struct mcu_prom p;
	size_t n = 0;

	mcu_prom_growing(&p);
	for (int i = 0; i < 500; i++) {
		render(&p);
		n += strlen(golden);
	}
	ck_assert(!p.oom);
	ck_assert_uint_eq(p.len, n);
	ck_assert_uint_eq(strlen(p.buf), n);
	ck_assert_int_eq(
	    memcmp(p.buf + n - strlen(golden), golden, strlen(golden)), 0);
	ck_assert(mcu_prom_reserve(&p, 100000));
	ck_assert_uint_gt(p.cap, p.len + 100000);
	free(p.buf);
}
END_TEST

static const char *fruit(int i)
{
	static const char *const names[] = {"none", "apple", "pear"};

	return names[i];
}

/* A family by reason: one head, one sample per reason from `from` on. */
START_TEST(test_reasons)
{
	const uint64_t v[] = {9, 4, 0};
	char buf[256];
	struct mcu_prom p;

	mcu_prom_fixed(&p, buf, sizeof(buf));
	mcu_prom_reasons(&p, "f_total", "Fruit, by reason", fruit, v, 1, 3);
	ck_assert_str_eq(buf, "# HELP f_total Fruit, by reason\n"
			      "# TYPE f_total counter\n"
			      "f_total{reason=\"apple\"} 4\n"
			      "f_total{reason=\"pear\"} 0\n");
}
END_TEST

Suite *make_prom_suite(void)
{
	Suite *s = suite_create("prom");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_fixed_fits);
	tcase_add_loop_test(tc, test_fixed_short, 0, (int)sizeof(golden));
	tcase_add_test(tc, test_growing);
	tcase_add_test(tc, test_reasons);
	suite_add_tcase(s, tc);
	return s;
}
