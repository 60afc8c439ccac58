/*
 * The benches' flags, parsed as the daemons' are (flagparse.h): each
 * bench declares a table over its options struct and calls
 * bench_flags() first thing in main().
 */
#ifndef MCREPL_BENCH_FLAGS_H
#define MCREPL_BENCH_FLAGS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flagparse.h"

/*
 * Sets opt (zeroed by the caller) to the table's defaults, then parses
 * argv into it. Returns -1 to run the bench, else main()'s exit status: 0
 * after --help or --version, 2 after an error (one line on stderr naming
 * the flag).
 */
static inline int bench_flags(const struct flag_set *set, void *opt, int argc,
			      char **argv)
{
	int rc;

	flags_defaults(set, opt);
	rc = flags_parse(set, opt, NULL, argc, argv);
	return rc == 0 ? -1 : rc == 1 ? 0 : 2;
}

/*
 * bench_flags() for a bench whose one flag is --quick (help: what it
 * leaves out; intro: the line under the usage in --help) into *quick;
 * MCREPL_BENCH_QUICK set and not "0" in the environment also sets it.
 */
static inline int bench_quick_flags(const char *prog, const char *intro,
				    const char *help, bool *quick, int argc,
				    char **argv)
{
	char title[96];
	const struct flag quick_flag = {
	    .name = "quick",
	    .type = FLAG_BOOL,
	    .off = 0,
	    .def = "false",
	    .help = help,
	};
	const struct flag_set set = {
	    .prog = prog,
	    .intro = intro,
	    .title = title,
	    .width = 6,
	    .flags = &quick_flag,
	    .n = 1,
	};

	const char *env = getenv("MCREPL_BENCH_QUICK");
	int st;

	snprintf(title, sizeof(title), "%s flags", prog);
	st = bench_flags(&set, quick, argc, argv);
	*quick |= env && *env && strcmp(env, "0") != 0;
	return st;
}

#endif
