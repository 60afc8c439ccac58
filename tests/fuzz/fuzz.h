/*
 * Shared by the fuzz targets in tests/fuzz/: each fuzz_<name>.c defines
 * LLVMFuzzerTestOneInput (libFuzzer's entry point). `make fuzz` links each
 * with clang's libFuzzer; `make check` links each with driver.c and replays
 * tests/fuzz/corpus/<name>/ (see mk/fuzz.mk).
 *
 * FUZZ_CHECK(cond): a property the code under test promises; a violation
 * aborts (libFuzzer and the driver report it as a crash), whatever NDEBUG.
 */
#ifndef MCREPL_FUZZ_H
#define MCREPL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                       \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: property failed: %s\n",        \
				__FILE__, __LINE__, #cond);                    \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
