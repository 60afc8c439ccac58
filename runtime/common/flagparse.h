/*
 * Table-driven flags for every program: the daemons (mcrepl-master,
 * mcrepl-worker) and the tools (mcrepl-sim, mcrepl-bench, mcrepl-cli,
 * mcrepl-demo). Each flag is declared once, in a table, with its type,
 * default, range and help.
 *
 * Accepted spellings: `--name value`, `--name=value`, a boolean alone
 * (`--hugepages` = true), and `name=value` lines in `--config FILE` (blank
 * lines and # comments skipped, a leading "--" allowed). `--help` / `-h`
 * prints a usage generated from the table (and from libmcrepl's knob table
 * when the program has a library config); `--version` prints the version.
 * When the program has a library config, a name that is not in the table
 * and is a libmcrepl knob, with or without its "dynamic_replication_"
 * prefix (`--mode enforce` = `--dynamic_replication_mode enforce`), is
 * passed to mcrepl_config_set(); the table's own names come first.
 *
 * A program that takes arguments that are not flags (a subcommand, a
 * key, a file) parses with flags_parse_args(): they are handed back in
 * order, wherever they stand among the flags; a lone "--" ends the flags.
 *
 * The command line wins over --config FILE whatever their order: the files
 * are read first, then the other flags are applied over them. Within a
 * file, and among files, the later line wins.
 *
 * Every value is checked when it is read, against its type and the entry's
 * range; an error names where it came from, the flag, the value and what
 * is allowed, on one line of stderr.
 *
 * Not thread-safe; call from main() before anything else runs.
 */
#ifndef MCREPL_FLAGPARSE_H
#define MCREPL_FLAGPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <mcrepl/config.h>

enum flag_type {
	FLAG_STR,    /* char[cap]; min = shortest length; choices optional */
	FLAG_U32,    /* uint32_t */
	FLAG_I32,    /* int32_t */
	FLAG_U64,    /* uint64_t */
	FLAG_SIZE,   /* uint64_t bytes, K/M/G/T suffixes (powers of 1024) */
	FLAG_MS,     /* uint64_t milliseconds, given in seconds ("0.25") */
	FLAG_RATIO,  /* double in (0, 1] */
	FLAG_BOOL,   /* bool: true, false, 1 or 0 */
	FLAG_DOUBLE, /* double in [dmin, dmax]; both 0 = any finite number */
	FLAG_STRP,   /* const char *: NULL until given or defaulted; points
			into argv, or at a copy kept for the process's life;
			min, choices and valid as FLAG_STR */
	FLAG_ENUM,   /* an int-sized enum: the index of the value in choices */
};

/* One flag: its value lives at `off` in the program's flag struct. */
struct flag {
	const char *name;
	enum flag_type type;
	size_t off;
	size_t cap;	     /* FLAG_STR: buffer size */
	const char *def;     /* default, as text (parsed like a flag); NULL:
				none, the field keeps what the caller set */
	const char *help;    /* one line */
	int64_t min, max;    /* integers: allowed range; max 0 = type's max;
				FLAG_MS: min in milliseconds */
	const char *choices; /* FLAG_STR: "auto|tcp|rdma", or NULL;
				FLAG_ENUM: the names, in the enum's order */
	bool (*valid)(const char *v); /* FLAG_STR: a further check, or NULL */
	const char *rule;  /* FLAG_STR: what valid() accepts, for errors */
	double dmin, dmax; /* FLAG_DOUBLE: allowed range, inclusive; dmax
			      INFINITY = no upper bound */
};

/* Initialiser helpers for a table over struct T. */
#define FLAG_AT(T, field) offsetof(T, field)
#define FLAG_STR_AT(T, field)                                                  \
	.off = offsetof(T, field), .cap = sizeof(((T *)0)->field)

/* A program's flags. */
struct flag_set {
	const char *prog; /* "mcrepl-master": prefixes every message */
	/* --help: the synopsis after "usage: PROG " (NULL = flags only), and
	 * lines printed under it (NULL = none). */
	const char *usage, *intro;
	const char *title;  /* heading of the table in --help */
	const char *epilog; /* printed last by --help, or NULL */
	int width;	    /* --help name column */
	const struct flag *flags;
	size_t n;
	/* More flags in a table of their own (shared by several programs,
	 * netlimits.h), parsed and listed after these; NULL = none. */
	const struct flag_set *next;
	/* Where this table's values live; NULL = the base given to
	 * flags_defaults() / flags_parse(). Set by shared tables. */
	void *base;
};

/* Sets every flag of base (and of the chained tables) to its default. The caller zeroes base first
 * and fills what the table does not hold (cfg, environment defaults). */
void flags_defaults(const struct flag_set *set, void *base);

/*
 * Parses argv into base (defaults are not applied here). cfg receives the
 * library knobs and is validated at the end; NULL when the program has
 * none. Returns 0 to run, 1 when --help or --version was printed, -1 after
 * printing one error line.
 */
int flags_parse(const struct flag_set *set, void *base, mcrepl_config *cfg,
		int argc, char **argv);

/* The arguments that are not flags, in order. */
struct flag_args {
	const char **v; /* the caller's array of cap */
	int cap;
	int n; /* how many were given */
};

/*
 * flags_parse() for a program that takes arguments besides its flags:
 * they go to args (more than args->cap is an error, as any argument is
 * for flags_parse()). The caller checks their number and meaning.
 */
int flags_parse_args(const struct flag_set *set, void *base, mcrepl_config *cfg,
		     int argc, char **argv, struct flag_args *args);

/* The flag called name in set (or a chained table), or NULL. */
const struct flag *flags_find(const struct flag_set *set, const char *name);

/* Sets one flag (or library knob, when cfg) by name, as a name=value
 * line would; where ("--compare") names the source in errors. 0, or -1
 * after printing one error line. A FLAG_STRP value is copied. */
int flags_set(const struct flag_set *set, void *base, mcrepl_config *cfg,
	      const char *name, const char *value, const char *where);

/* A table's rule: every number flag whose range allows 0 says in its help
 * what 0 means ("(0 = never)"). The flags of set and its chained tables
 * that do not (at most cap names into names); how many. Tests run it over
 * every program's table. */
size_t flags_zero_unsaid(const struct flag_set *set, const char **names,
			 size_t cap);

/* "64M" -> 67108864; K, M, G, T (powers of 1024), optional "iB"/"B".
 * Returns 0, or -1 when malformed or overflowing (*out untouched). */
int flags_parse_size(const char *s, uint64_t *out);

#endif
