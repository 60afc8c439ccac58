/*
 * The benches' flags, parsed as the daemons' are (flagparse.h): each
 * bench declares a table over its options struct and calls
 * bench_flags() first thing in main().
 */
#ifndef MCREPL_BENCH_FLAGS_H
#define MCREPL_BENCH_FLAGS_H

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

#endif
