/* Per-test logs of the daemon tests (see testlog.h).
 *
 * Check runs each test in a process it forks. A fork hook in that process
 * makes it a directory of its own, $BASE/.runs/<n> for the runner's n-th
 * fork, and points $MCREPL_TEST_LOG_DIR there before the fixture starts
 * any daemon; testlog_begin() renames the directory after the test and
 * leaves a symbolic link in its place. The runner remembers which result
 * each fork gave, so after the run it finds a failed test's directory
 * through .runs/<n>, also when the test timed out or crashed. */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlog.h"

#define TAIL_LINES 20
#define TAIL_BYTES (64 << 10)

static struct {
	char base[PATH_MAX / 2]; /* $MCREPL_TEST_LOG_DIR/daemons, or "" */
	pid_t runner;
	SRunner *sr;
	unsigned forks; /* tests forked so far (the runner's count) */
	int *result_of; /* per fork: the index of its result */
	size_t cap;
	char run[PATH_MAX]; /* in a test process: $BASE/.runs/<n> */
} tl;

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

/* An earlier run's directory of the same test: its files, then itself. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || !strcmp(e->d_name, "..")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* In the runner, right after it forked a test: the result that test will
 * give is the next one. */
static void after_fork_parent(void)
{
	if (getpid() != tl.runner)
		return;
	if (tl.forks == tl.cap) {
		size_t cap = tl.cap ? 2 * tl.cap : 1024;
		int *p = realloc(tl.result_of, cap * sizeof(*p));

		if (!p)
			return;
		tl.result_of = p;
		tl.cap = cap;
	}
	tl.result_of[tl.forks++] = srunner_ntests_run(tl.sr);
}

/* In a test process Check just forked (not in the daemons it forks): its
 * own directory, for its stderr and its daemons'. */
static void after_fork_child(void)
{
	char path[PATH_MAX + 16];

	if (getppid() != tl.runner)
		return;
	snprintf(tl.run, sizeof(tl.run), "%s/.runs/%u", tl.base, tl.forks);
	remove_dir(tl.run);
	mkdir(tl.run, 0755);
	setenv("MCREPL_TEST_LOG_DIR", tl.run, 1);
	snprintf(path, sizeof(path), "%s/test.log", tl.run);
	if (!freopen(path, "a", stderr))
		tl.run[0] = '\0';
}

void testlog_init(SRunner *sr)
{
	const char *dir = getenv("MCREPL_TEST_LOG_DIR");
	char runs[PATH_MAX];

	if (!dir || !dir[0])
		return;
	snprintf(tl.base, sizeof(tl.base), "%s/daemons", dir);
	snprintf(runs, sizeof(runs), "%s/.runs", tl.base);
	mkdir_p(runs);
	tl.runner = getpid();
	tl.sr = sr;
	pthread_atfork(NULL, after_fork_parent, after_fork_child);
}

const char *testlog_dir(void)
{
	return tl.base[0] && tl.run[0] && getpid() != tl.runner ? tl.run : NULL;
}

void testlog_begin(const char *file, const char *test, int iter)
{
	const char *name = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	const char *env = getenv("MCREPL_TEST_LOG_DIR");
	char dir[PATH_MAX];
	size_t n;
	int len;

	/* CK_FORK=no: the body runs in the runner, no directory of its own */
	if (!tl.base[0] || !tl.run[0] || getpid() == tl.runner)
		return;
	if (strncmp(name, "check_", 6) == 0)
		name += 6;
	n = strcspn(name, ".");
	len = snprintf(dir, sizeof(dir), "%s/%.*s", tl.base, (int)n, name);
	mkdir(dir, 0755);
	snprintf(dir + len, sizeof(dir) - (size_t)len,
		 iter > 0 ? "/%s.%d" : "/%s", test, iter);
	remove_dir(dir);
	if (rename(tl.run, dir) != 0)
		return; /* logs stay in .runs/<n>, which the runner prints */
	if (symlink(dir, tl.run) != 0)
		perror(tl.run);
	/* unless the fixture pointed it elsewhere (it keeps that) */
	if (env && strcmp(env, tl.run) == 0)
		setenv("MCREPL_TEST_LOG_DIR", dir, 1);
}

/* The last TAIL_LINES lines of path, indented, on stdout. */
static void print_tail(const char *path)
{
	static char buf[TAIL_BYTES + 1];
	FILE *f = fopen(path, "r");
	const char *at;
	size_t n;
	long size;
	int lines = 0;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	fseek(f, size > TAIL_BYTES ? size - TAIL_BYTES : 0, SEEK_SET);
	n = fread(buf, 1, TAIL_BYTES, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	for (at = buf + n; at > buf; at--)
		if (at[-1] == '\n' && ++lines == TAIL_LINES)
			break;
	printf("  --- %s (last lines)%s\n", path, n ? "" : ": empty");
	for (const char *l = at; n && l;) {
		const char *nl = strchr(l, '\n');

		printf("  | %.*s\n", nl ? (int)(nl - l) : (int)strlen(l), l);
		l = nl ? nl + 1 : NULL;
	}
}

static void print_failure(TestResult *r, const char *dir)
{
	struct dirent **files;
	char path[PATH_MAX];
	const char *name = dir + strlen(dir);
	int n = scandir(dir, &files, NULL, alphasort), slashes = 0;

	/* "<suite>/<test>", or ".runs/<n>" when the body never began */
	while (name > dir && !(name[-1] == '/' && ++slashes == 2))
		name--;
	printf("\nFAILED %s (test case %s, %s:%d: %s)\n"
	       "  logs of this test: %s/\n",
	       name, tr_tcname(r), tr_lfile(r), tr_lno(r), tr_msg(r), dir);
	for (int i = 0; i < n; i++) {
		if (files[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir,
				 files[i]->d_name);
			print_tail(path);
		}
		free(files[i]);
	}
	if (n >= 0)
		free(files);
}

/* A passed test that started no daemon and printed nothing leaves no
 * directory: one holding only an empty test.log goes (dir: a path with
 * at least two components, <suite>/<test>). */
static void drop_if_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char log[PATH_MAX + 16];
	bool other = false;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL)
		other |= e->d_name[0] != '.' && strcmp(e->d_name, "test.log");
	closedir(d);
	snprintf(log, sizeof(log), "%s/test.log", dir);
	if (!other && (stat(log, &st) != 0 || st.st_size == 0)) {
		unlink(log);
		rmdir(dir);
		*strrchr(log, '/') = '\0';
		*strrchr(log, '/') = '\0';
		rmdir(log); /* its suite's, once empty */
	}
}

int testlog_report(SRunner *sr)
{
	TestResult **r;
	int n = srunner_ntests_run(sr), failed = 0;
	char run[PATH_MAX], dir[PATH_MAX];
	struct stat st;

	if (!tl.base[0])
		return 0;
	r = srunner_results(sr);
	for (unsigned i = 0; i < tl.forks; i++) {
		int k = tl.result_of[i];

		snprintf(run, sizeof(run), "%s/.runs/%u", tl.base, i);
		if (r && k < n && realpath(run, dir)) {
			if (tr_rtype(r[k]) != CK_PASS) {
				print_failure(r[k], dir);
				failed++;
			} else {
				drop_if_empty(dir);
			}
		}
		/* a test that never began keeps its logs in .runs/<n> */
		if (lstat(run, &st) == 0 && S_ISLNK(st.st_mode))
			unlink(run);
	}
	snprintf(run, sizeof(run), "%s/.runs", tl.base);
	rmdir(run);
	free(r);
	free(tl.result_of);
	tl.result_of = NULL;
	tl.cap = tl.forks = 0;
	return failed;
}
