/* Domain names and costs (RFC "Domain Model"). */
#include <stdbool.h>
#include <string.h>

#include "mcrepl/domain.h"
#include "mcrepl/types.h"

#include "testutil.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- mcrepl_domain_name -------------------------------------------------- */

static const struct name_case {
	const char *in;
	const char *want;
} name_cases[] = {
    {NULL, "default"},
    {"", "default"},
    {"default", "default"},
    {"domain-a", "domain-a"},
    {"Zone_1.rack-2", "Zone_1.rack-2"},
    {" ", " "},
};

/* covers: R-DOM-3 */
START_TEST(test_name_maps_empty_to_default)
{
	const struct name_case *c = &name_cases[_i];
	const char *got = mcrepl_domain_name(c->in);

	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, c->want);
	/* A non-empty name is returned as is, not copied. */
	if (c->in && c->in[0])
		ck_assert_ptr_eq(got, c->in);
}
END_TEST

/* covers: R-DOM-3 */
START_TEST(test_default_domain_macro)
{
	ck_assert_str_eq(MCREPL_DEFAULT_DOMAIN, "default");
	ck_assert_ptr_eq(mcrepl_domain_name(NULL), mcrepl_domain_name(""));
}
END_TEST

/* ---- mcrepl_domain_equal / mcrepl_domain_cost ---------------------------- */

static const struct pair_case {
	const char *a, *b;
	bool equal;
} pair_cases[] = {
    {NULL, NULL, true},
    {NULL, "", true},
    {"", NULL, true},
    {NULL, "default", true},
    {"default", "", true},
    {"domain-a", "domain-a", true},
    {"domain-a", "domain-b", false},
    {"domain-a", NULL, false},
    {"", "domain-a", false},
    {"domain-a", "Domain-A", false},
    {"domain-a", "domain-a ", false},
    {"domain", "domain-a", false},
    {"defaults", NULL, false},
};

/* covers: R-DOM-1 */
START_TEST(test_equal_table)
{
	const struct pair_case *c = &pair_cases[_i];

	ck_assert_msg(mcrepl_domain_equal(c->a, c->b) == c->equal,
		      "equal(%s, %s) != %d", c->a ? c->a : "(null)",
		      c->b ? c->b : "(null)", c->equal);
	/* Symmetric. */
	ck_assert(mcrepl_domain_equal(c->b, c->a) == c->equal);
}
END_TEST

/* covers: R-DOM-1 R-DOM-5 */
START_TEST(test_cost_table)
{
	const struct pair_case *c = &pair_cases[_i];
	unsigned want = c->equal ? 0u : 1u;

	ck_assert_uint_eq(mcrepl_domain_cost(c->a, c->b), want);
	ck_assert_uint_eq(mcrepl_domain_cost(c->b, c->a), want);
}
END_TEST

/* ---- mcrepl_domain_is_valid ---------------------------------------------- */

static const struct valid_case {
	const char *d;
	bool valid;
} valid_cases[] = {
    {NULL, true},
    {"", true},
    {"default", true},
    {"domain-a", true},
    {"Zone_1.rack-2", true},
    {"0123456789", true},
    {"._-", true},
    {"a b", false},
    {" a", false},
    {"a/b", false},
    {"a:b", false},
    {"a\n", false},
    {"dom\xc3\xa9", false},
    {"\x80", false},
    {"a*", false},
};

START_TEST(test_is_valid_table)
{
	const struct valid_case *c = &valid_cases[_i];

	ck_assert_msg(mcrepl_domain_is_valid(c->d) == c->valid,
		      "is_valid(%s) != %d", c->d ? c->d : "(null)", c->valid);
}
END_TEST

START_TEST(test_is_valid_length_limit)
{
	char name[MCREPL_DOMAIN_MAX + 2];

	memset(name, 'a', sizeof(name) - 1);
	name[MCREPL_DOMAIN_MAX] = '\0';
	ck_assert_uint_eq(strlen(name), 63);
	ck_assert(mcrepl_domain_is_valid(name));
	name[MCREPL_DOMAIN_MAX] = 'a';
	name[MCREPL_DOMAIN_MAX + 1] = '\0';
	ck_assert_uint_eq(strlen(name), 64);
	ck_assert(!mcrepl_domain_is_valid(name));
	/* A bad byte past the limit still fails on length. */
	name[MCREPL_DOMAIN_MAX] = ' ';
	ck_assert(!mcrepl_domain_is_valid(name));
}
END_TEST

Suite *make_domain_suite(void)
{
	Suite *s = suite_create("domain");
	TCase *tc = tcase_create("domain");

	tcase_add_loop_test(tc, test_name_maps_empty_to_default, 0,
			    NELEM(name_cases));
	tcase_add_test(tc, test_default_domain_macro);
	tcase_add_loop_test(tc, test_equal_table, 0, NELEM(pair_cases));
	tcase_add_loop_test(tc, test_cost_table, 0, NELEM(pair_cases));
	tcase_add_loop_test(tc, test_is_valid_table, 0, NELEM(valid_cases));
	tcase_add_test(tc, test_is_valid_length_limit);
	suite_add_tcase(s, tc);
	return s;
}
