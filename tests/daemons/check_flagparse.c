/* The daemons' shared flag parser: types, ranges, spellings, --config and
 * library knobs, over a small table of its own. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mcrepl/mcrepl.h>

#include "capture.h"
#include "flagparse.h"
#include "harness.h"

Suite *make_flagparse_suite(void);

struct tflags {
	char name[8];
	char mode[8];
	uint32_t count;
	int32_t port;
	uint64_t bytes;
	uint64_t ttl_ms;
	double ratio;
	bool on;
	double load, scale, floor;
	const char *path;
	int color; /* an enum */
	mcrepl_config cfg;
};

#define O(f) FLAG_AT(struct tflags, f)
#define S(f) FLAG_STR_AT(struct tflags, f)
static const struct flag tflags[] = {
    {.name = "name",
     .type = FLAG_STR,
     S(name),
     .def = "ab",
     .help = "a name",
     .min = 1},
    {.name = "mode",
     .type = FLAG_STR,
     S(mode),
     .def = "x",
     .help = "a mode",
     .choices = "x|yy"},
    {.name = "count",
     .type = FLAG_U32,
     .off = O(count),
     .def = "7",
     .help = "a count",
     .min = 1,
     .max = 100},
    {.name = "port",
     .type = FLAG_I32,
     .off = O(port),
     .def = "-1",
     .help = "a port",
     .min = -1,
     .max = 10},
    {.name = "bytes",
     .type = FLAG_SIZE,
     .off = O(bytes),
     .def = "1K",
     .help = "a size",
     .min = 1024},
    {.name = "ttl",
     .type = FLAG_MS,
     .off = O(ttl_ms),
     .def = "0.25",
     .help = "seconds"},
    {.name = "ratio",
     .type = FLAG_RATIO,
     .off = O(ratio),
     .def = "0.5",
     .help = "a ratio"},
    {.name = "on",
     .type = FLAG_BOOL,
     .off = O(on),
     .def = "false",
     .help = "a switch"},
    {.name = "load",
     .type = FLAG_DOUBLE,
     .off = O(load),
     .def = "0.5",
     .help = "a load",
     .dmin = 0,
     .dmax = 2},
    {.name = "scale",
     .type = FLAG_DOUBLE,
     .off = O(scale),
     .def = "-3",
     .help = "a scale"},
    {.name = "floor",
     .type = FLAG_DOUBLE,
     .off = O(floor),
     .def = "1",
     .help = "a floor",
     .dmin = 1,
     .dmax = INFINITY},
    {.name = "path", .type = FLAG_STRP, .off = O(path), .help = "a path"},
    {.name = "color",
     .type = FLAG_ENUM,
     .off = O(color),
     .def = "green",
     .help = "a color",
     .choices = "red|green|blue"},
};

static const struct flag_set tset = {
    .prog = "check_flagparse",
    .title = "test flags",
    .width = 10,
    .flags = tflags,
    .n = sizeof(tflags) / sizeof(tflags[0]),
};

/* Parses up to three arguments after argv[0] into *f (defaults first). */
static int parse(struct tflags *f, const char *a, const char *b, const char *c)
{
	char *argv[] = {(char *)(uintptr_t) "prog", (char *)(uintptr_t)a,
			(char *)(uintptr_t)b, (char *)(uintptr_t)c, NULL};
	int argc = 1;

	while (argc < 4 && argv[argc])
		argc++;
	memset(f, 0, sizeof(*f));
	mcrepl_config_init(&f->cfg);
	flags_defaults(&tset, f);
	return flags_parse(&tset, f, &f->cfg, argc, argv);
}

START_TEST(test_defaults)
{
	struct tflags f;

	ck_assert_int_eq(parse(&f, NULL, NULL, NULL), 0);
	ck_assert_str_eq(f.name, "ab");
	ck_assert_str_eq(f.mode, "x");
	ck_assert_uint_eq(f.count, 7);
	ck_assert_int_eq(f.port, -1);
	ck_assert_uint_eq(f.bytes, 1024);
	ck_assert_uint_eq(f.ttl_ms, 250);
	ck_assert_double_eq(f.ratio, 0.5);
	ck_assert(!f.on);
	ck_assert_double_eq(f.load, 0.5);
	ck_assert_double_eq(f.scale, -3);
	ck_assert_double_eq(f.floor, 1);
	ck_assert_ptr_null(f.path); /* no default */
	ck_assert_int_eq(f.color, 1);
}
END_TEST

START_TEST(test_new_types)
{
	struct tflags f;

	ck_assert_int_eq(parse(&f, "--load=2", "--scale", "-1e3"), 0);
	ck_assert_double_eq(f.load, 2);
	ck_assert_double_eq(f.scale, -1000);
	ck_assert_int_eq(parse(&f, "--load", "0", "--floor=1e9"), 0);
	ck_assert_double_eq(f.load, 0);
	ck_assert_double_eq(f.floor, 1e9);
	ck_assert_int_eq(parse(&f, "--path", "a/b", "--color=blue"), 0);
	ck_assert_str_eq(f.path, "a/b");
	ck_assert_int_eq(f.color, 2);
	ck_assert_int_eq(parse(&f, "--color", "red", NULL), 0);
	ck_assert_int_eq(f.color, 0);
}
END_TEST

START_TEST(test_spellings)
{
	struct tflags f;

	ck_assert_int_eq(parse(&f, "--count", "9", "--on"), 0);
	ck_assert_uint_eq(f.count, 9);
	ck_assert(f.on);
	ck_assert_int_eq(parse(&f, "--count=10", "--on", "false"), 0);
	ck_assert_uint_eq(f.count, 10);
	ck_assert(!f.on);
	ck_assert_int_eq(parse(&f, "--on", "--bytes=2MiB", NULL), 0);
	ck_assert(f.on);
	ck_assert_uint_eq(f.bytes, 2u << 20);
	ck_assert_int_eq(parse(&f, "--port=-1", "--mode", "yy"), 0);
	ck_assert_int_eq(f.port, -1);
	ck_assert_str_eq(f.mode, "yy");
	ck_assert_int_eq(
	    parse(&f, "--dynamic_replication_mode=enforce", NULL, NULL), 0);
	ck_assert_int_eq(f.cfg.mode, MCREPL_MODE_ENFORCE);
}
END_TEST

/* Each is refused with -1. */
static const char *const bad[][2] = {
    {"--count=0", NULL},
    {"--count=101", NULL},
    {"--count=+5", NULL},
    {"--count= 5", NULL},
    {"--count=5x", NULL},
    {"--count", NULL},
    {"--port=-2", NULL},
    {"--port=11", NULL},
    {"--bytes=1023", NULL},
    {"--bytes=12Q", NULL},
    {"--bytes=-1K", NULL},
    {"--ttl=-1", NULL},
    {"--ratio=0", NULL},
    {"--ratio=1.5", NULL},
    {"--on=yes", NULL},
    {"--name=", NULL},
    {"--name=toolongname", NULL},
    {"--mode=xy", NULL},
    {"--bogus", NULL},
    {"--bogus=1", NULL},
    {"stray", NULL},
    {"--dynamic_replication_mode=no", NULL},
    {"--dynamic_replication_nope=1", NULL},
    {"--load=2.5", NULL},
    {"--load=-0.1", NULL},
    {"--load=1x", NULL},
    {"--load=", NULL},
    {"--scale=nan", NULL},
    {"--scale=inf", NULL},
    {"--floor=0.99", NULL},
    {"--color=pink", NULL},
    {"--color=", NULL},
    {"--path", NULL},
};

START_TEST(test_refused)
{
	struct tflags f;

	ck_assert_int_eq(parse(&f, bad[_i][0], bad[_i][1], NULL), -1);
}
END_TEST

START_TEST(test_help_and_version)
{
	static char out[8192];
	char want[64];
	struct tflags f;
	int rc;

	capture_begin(STDERR_FILENO);
	rc = parse(&f, "--count=0", "--help", NULL);
	capture_end(out, sizeof(out));
	ck_assert_int_eq(rc, -1);
	capture_begin(STDOUT_FILENO);
	ck_assert_int_eq(parse(&f, "--help", "--count=0", NULL), 1);
	ck_assert_int_eq(parse(&f, "-h", NULL, NULL), 1);
	capture_end(out, sizeof(out));
	ck_assert_ptr_nonnull(
	    strstr(out, "\n  --count       a count (default 7)\n"));
	ck_assert_ptr_nonnull(strstr(out, "flags, also without the "
					  "dynamic_replication_ prefix:\n"));
	ck_assert_ptr_nonnull(strstr(out, "the command line wins"));
	capture_begin(STDOUT_FILENO);
	ck_assert_int_eq(parse(&f, "--version", NULL, NULL), 1);
	capture_end(out, sizeof(out));
	snprintf(want, sizeof(want), "check_flagparse (libmcrepl %s)",
		 mcrepl_version());
	ck_assert_str_eq(out, want);
}
END_TEST

START_TEST(test_config_file)
{
	static const char text[] = "# a comment\n"
				   "\n"
				   "  count = 42  # trailing comment\n"
				   "--on=true\n"
				   "dynamic_replication_mode = observe\n";
	char path[] = "/tmp/mcrepl-flagparse-XXXXXX", flag[64];
	int fd = mkstemp(path);
	struct tflags f;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, sizeof(text) - 1),
			 (ssize_t)sizeof(text) - 1);
	close(fd);
	snprintf(flag, sizeof(flag), "--config=%s", path);
	ck_assert_int_eq(parse(&f, flag, "--count", "3"), 0);
	ck_assert_uint_eq(f.count, 3); /* later flags win */
	ck_assert(f.on);
	ck_assert_int_eq(f.cfg.mode, MCREPL_MODE_OBSERVE);
	fd = open(path, O_WRONLY | O_TRUNC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "count\n", 6), 6);
	close(fd);
	ck_assert_int_eq(parse(&f, flag, NULL, NULL), -1);
	unlink(path);
	ck_assert_int_eq(parse(&f, flag, NULL, NULL), -1);
}
END_TEST

/* Writes text to a new temporary file; its --config=PATH flag in flag. */
static void temp_config(const char *text, char *path, char *flag, size_t cap)
{
	int fd;

	strcpy(path, "/tmp/mcrepl-flagparse-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(flag, cap, "--config=%s", path);
}

/* README: "the dynamic_replication_ prefix may be omitted", in flags and
 * in config files; the table's own names come first. */
START_TEST(test_knob_prefix_omitted)
{
	char path[64], flag[96];
	struct tflags f;

	ck_assert_int_eq(parse(&f, "--mode", "yy", NULL), 0);
	ck_assert_str_eq(f.mode, "yy"); /* the table's --mode */
	ck_assert_int_eq(f.cfg.mode, MCREPL_MODE_OFF);
	ck_assert_int_eq(
	    parse(&f, "--heat_window_seconds=5", "--max_memory_replicas", "3"),
	    0);
	ck_assert_uint_eq(f.cfg.heat_window_ms, 5000);
	ck_assert_uint_eq(f.cfg.max_memory_replicas, 3);
	temp_config("lease_ttl_seconds = 2\ndomain_aware=true\n", path, flag,
		    sizeof(flag));
	ck_assert_int_eq(parse(&f, flag, NULL, NULL), 0);
	ck_assert_uint_eq(f.cfg.lease_ttl_ms, 2000);
	ck_assert(f.cfg.domain_aware);
	unlink(path);
}
END_TEST

/* The command line wins over --config wherever --config stands. */
START_TEST(test_command_line_wins)
{
	char path[64], flag[96];
	struct tflags f;

	temp_config("count = 42\nheat_window_seconds = 9\non = true\n", path,
		    flag, sizeof(flag));
	ck_assert_int_eq(parse(&f, "--count=3", flag, NULL), 0);
	ck_assert_uint_eq(f.count, 3);
	ck_assert(f.on);
	ck_assert_int_eq(parse(&f,
			       "--dynamic_replication_heat_window_seconds=4",
			       flag, NULL),
			 0);
	ck_assert_uint_eq(f.cfg.heat_window_ms, 4000);
	ck_assert_int_eq(parse(&f, flag, "--count", "5"), 0);
	ck_assert_uint_eq(f.count, 5);
	ck_assert_uint_eq(f.cfg.heat_window_ms, 9000);
	unlink(path);
}
END_TEST

/* Every refusal names the flag, the value and what is allowed, exactly. */
static const char *const messages[][3] = {
    {"--count=101", NULL,
     "check_flagparse: command line: invalid value '101' for --count (a "
     "count); allowed: an integer in 1..100"},
    {"--mode=xy", NULL,
     "check_flagparse: command line: invalid value 'xy' for --mode (a mode); "
     "allowed: one of x|yy"},
    {"--dynamic_replication_mode=no", NULL,
     "check_flagparse: command line: invalid value 'no' for "
     "--dynamic_replication_mode (cannot parse value); allowed: off | "
     "observe | enforce"},
    {"--heat_window_seconds=0", NULL,
     "check_flagparse: command line: invalid value '0' for "
     "--heat_window_seconds (value out of range); allowed: sliding heat "
     "window length (seconds, > 0, <= 86400)"},
    {"--proposal_retention_limit=0", NULL,
     "check_flagparse: command line: invalid value '0' for "
     "--proposal_retention_limit (value out of range); allowed: most "
     "proposal ids remembered for idempotency (>= 1)"},
    {"--target_high_watermark", "2",
     "check_flagparse: command line: invalid value '2' for "
     "--target_high_watermark (value out of range); allowed: a target's "
     "used/capacity after the copy must stay at or below this, in (0, 1]"},
    {"--bogus", NULL,
     "check_flagparse: command line: unknown flag --bogus (see --help)"},
    {"--count", NULL, "check_flagparse: --count needs a value"},
    {"--load=3", NULL,
     "check_flagparse: command line: invalid value '3' for --load (a load); "
     "allowed: a number in 0..2"},
    {"--load", "-0.5",
     "check_flagparse: command line: invalid value '-0.5' for --load (a "
     "load); allowed: a number in 0..2"},
    {"--scale=x", NULL,
     "check_flagparse: command line: invalid value 'x' for --scale (a "
     "scale); allowed: a number"},
    {"--floor=0", NULL,
     "check_flagparse: command line: invalid value '0' for --floor (a "
     "floor); allowed: a number >= 1"},
    {"--color=pink", NULL,
     "check_flagparse: command line: invalid value 'pink' for --color (a "
     "color); allowed: one of red|green|blue"},
    {"stray", NULL,
     "check_flagparse: unexpected argument 'stray' (see --help)"},
};

START_TEST(test_messages_exact)
{
	struct tflags f;
	char err[512];
	int rc;

	capture_begin(STDERR_FILENO);
	rc = parse(&f, messages[_i][0], messages[_i][1], NULL);
	capture_end(err, sizeof(err));
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(err, messages[_i][2]);
}
END_TEST

/* Parses argv[1..] (NULL-terminated) with room for two positionals. */
static int parse_args(struct tflags *f, struct flag_args *args,
		      const char *const *av)
{
	static const char *v[2];
	char *argv[8] = {(char *)(uintptr_t) "prog"};
	int argc = 1;

	while (av[argc - 1])
		argv[argc] = (char *)(uintptr_t)av[argc - 1], argc++;
	memset(f, 0, sizeof(*f));
	mcrepl_config_init(&f->cfg);
	flags_defaults(&tset, f);
	*args = (struct flag_args){.v = v, .cap = 2};
	return flags_parse_args(&tset, f, &f->cfg, argc, argv, args);
}

/* Arguments that are not flags come back in order, wherever they stand;
 * a lone "--" ends the flags; one too many is an error naming it. */
START_TEST(test_positionals)
{
	static const char *const mixed[] = {"cmd", "--count", "3",
					    "-",   "--on",    NULL};
	static const char *const dashes[] = {"--count=4", "--", "--count", "-h",
					     NULL};
	static const char *const many[] = {"a", "--count=2", "b", "c", NULL};
	static const char *const none[] = {"--load", "1", NULL};
	static const char *const help[] = {"a", "b", "c", "--help", NULL};
	struct flag_args args;
	struct tflags f;
	char err[256];
	int rc;

	ck_assert_int_eq(parse_args(&f, &args, mixed), 0);
	ck_assert_int_eq(args.n, 2);
	ck_assert_str_eq(args.v[0], "cmd");
	ck_assert_str_eq(args.v[1], "-");
	ck_assert_uint_eq(f.count, 3);
	ck_assert(f.on);
	ck_assert_int_eq(parse_args(&f, &args, dashes), 0);
	ck_assert_int_eq(args.n, 2);
	ck_assert_str_eq(args.v[0], "--count");
	ck_assert_str_eq(args.v[1], "-h");
	ck_assert_uint_eq(f.count, 4);
	ck_assert_int_eq(parse_args(&f, &args, none), 0);
	ck_assert_int_eq(args.n, 0);
	capture_begin(STDERR_FILENO);
	rc = parse_args(&f, &args, many);
	capture_end(err, sizeof(err));
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(
	    err, "check_flagparse: unexpected argument 'c' (see --help)");
	capture_begin(STDERR_FILENO);
	rc = parse_args(&f, &args, help);
	capture_end(err, sizeof(err));
	ck_assert_int_eq(rc, -1); /* in order: the third argument first */
}
END_TEST

/* One flag set by name (mcrepl-sim's --compare), and a FLAG_STRP read
 * from a --config file outlives the file's line buffer. */
START_TEST(test_set_by_name)
{
	char path[64], flag[96], err[256];
	struct tflags f;
	int rc;

	ck_assert_int_eq(parse(&f, NULL, NULL, NULL), 0);
	ck_assert_ptr_eq(flags_find(&tset, "load"), &tflags[8]);
	ck_assert_ptr_null(flags_find(&tset, "lo"));
	ck_assert_int_eq(flags_set(&tset, &f, &f.cfg, "load", "1.5", "x"), 0);
	ck_assert_double_eq(f.load, 1.5);
	ck_assert_int_eq(flags_set(&tset, &f, &f.cfg, "mode", "yy", "x"), 0);
	ck_assert_str_eq(f.mode, "yy");
	ck_assert_int_eq(
	    flags_set(&tset, &f, &f.cfg, "max_memory_replicas", "5", "x"), 0);
	ck_assert_uint_eq(f.cfg.max_memory_replicas, 5);
	capture_begin(STDERR_FILENO);
	rc = flags_set(&tset, &f, &f.cfg, "count", "0", "--compare");
	capture_end(err, sizeof(err));
	ck_assert_int_eq(rc, -1);
	ck_assert_str_eq(err, "check_flagparse: --compare: invalid value '0' "
			      "for --count (a count); allowed: an integer in "
			      "1..100");
	temp_config("path = some/where\n", path, flag, sizeof(flag));
	ck_assert_int_eq(parse(&f, flag, NULL, NULL), 0);
	ck_assert_str_eq(f.path, "some/where");
	unlink(path);
}
END_TEST

START_TEST(test_parse_size)
{
	uint64_t v = 0;

	ck_assert_int_eq(flags_parse_size("64M", &v), 0);
	ck_assert_uint_eq(v, 64u << 20);
	ck_assert_int_eq(flags_parse_size("3gib", &v), 0);
	ck_assert_uint_eq(v, 3ull << 30);
	ck_assert_int_eq(flags_parse_size("17", &v), 0);
	ck_assert_uint_eq(v, 17);
	ck_assert_int_eq(flags_parse_size("16777216T", &v), -1);
	ck_assert_int_eq(flags_parse_size("1KB2", &v), -1);
	ck_assert_int_eq(flags_parse_size("", &v), -1);
	ck_assert_int_eq(flags_parse_size(NULL, &v), -1);
}
END_TEST

/* The tools take both spellings too (flagparse's tables): mcrepl-cli
 * with --flag=value reaches the (absent) master, exit 1, not a usage
 * error (2); mcrepl-demo refuses an unknown flag. */
static int run(const char *bin_name, const char *args)
{
	char bin[512], cmd[1400];
	int rc;

	snprintf(cmd, sizeof(cmd), "%s %s 2>/dev/null",
		 harness_bin(bin_name, bin, sizeof(bin)), args);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

START_TEST(test_tools_take_both_spellings)
{
	ck_assert_int_eq(run("mcrepl-cli", "--master=127.0.0.1:1 --tenant=t "
					   "--replicas=2 exist k"),
			 1);
	ck_assert_int_eq(
	    run("mcrepl-cli", "--master 127.0.0.1:1 --tenant t exist k"), 1);
	ck_assert_int_eq(run("mcrepl-cli", "--replicas=0 exist k"), 2);
	ck_assert_int_eq(run("mcrepl-demo", "--nonsense=1"), 2);
}
END_TEST

Suite *make_flagparse_suite(void)
{
	Suite *s = suite_create("flagparse");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_tools_take_both_spellings);
	tcase_add_test(tc, test_spellings);
	tcase_add_test(tc, test_new_types);
	tcase_add_test(tc, test_positionals);
	tcase_add_test(tc, test_set_by_name);
	tcase_add_loop_test(tc, test_refused, 0,
			    (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, test_help_and_version);
	tcase_add_test(tc, test_config_file);
	tcase_add_test(tc, test_parse_size);
	tcase_add_test(tc, test_knob_prefix_omitted);
	tcase_add_test(tc, test_command_line_wins);
	tcase_add_loop_test(tc, test_messages_exact, 0,
			    (int)(sizeof(messages) / sizeof(messages[0])));
	suite_add_tcase(s, tc);
	return s;
}
