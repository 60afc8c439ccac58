/* Checks over a program's flag table shared by the flag suites. */
#ifndef MCREPL_TESTS_FLAGCHECK_H
#define MCREPL_TESTS_FLAGCHECK_H

#include "flagparse.h"

/* Fails the running test, naming them, when flags of set (and the tables
 * chained to it) allow 0 without saying in --help what 0 means. */
void assert_zero_values_said(const struct flag_set *set);

#endif
