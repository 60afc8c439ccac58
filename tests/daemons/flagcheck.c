#include <check.h>
#include <string.h>

#include "flagcheck.h"

void assert_zero_values_said(const struct flag_set *set)
{
	const char *names[64];
	char list[1024] = "";
	size_t n = flags_zero_unsaid(set, names, 64);

	for (size_t i = 0; i < n && i < 64; i++) {
		strncat(list, " --", sizeof(list) - strlen(list) - 1);
		strncat(list, names[i], sizeof(list) - strlen(list) - 1);
	}
	ck_assert_msg(n == 0, "0 allowed, its meaning unsaid:%s", list);
}
