/*
 * A stand-in for libFuzzer's main(): feeds each file named on the command
 * line, or each regular file in a directory named there (in name order),
 * to LLVMFuzzerTestOneInput once. Lets `make check` replay the seed corpora
 * of tests/fuzz/ with any compiler, under the normal and sanitizer builds.
 * A failed property aborts; exit status 2 when an input cannot be read.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static size_t n_run;

/* One input, in a buffer of its exact size (ASan sees reads past it). */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;
	size_t len;

	if (!f || fstat(fileno(f), &st) != 0) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	len = (size_t)st.st_size;
	buf = malloc(len ? len : 1);
	if (!buf || fread(buf, 1, len, f) != len) {
		fprintf(stderr, "%s: cannot read\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	n_run++;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name), rc = 0;

	if (n < 0) {
		perror(dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (rc == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode))
			rc = run_file(path);
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int rc;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 2;
		}
		rc = S_ISDIR(st.st_mode) ? run_dir(argv[i]) : run_file(argv[i]);
		if (rc != 0)
			return 2;
	}
	printf("%s: %zu inputs replayed\n", argc > 0 ? argv[0] : "driver",
	       n_run);
	return 0;
}
