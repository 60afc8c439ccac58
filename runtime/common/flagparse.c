/* Table-driven flags: argv, --config files and --help (see flagparse.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mcrepl/error.h>
#include <mcrepl/mcrepl.h>

#include "flagparse.h"
#include "flagvalue.h"

#define KNOB_PREFIX "dynamic_replication_"
#define MAX_CONFIG_DEPTH 8

struct ctx {
	const struct flag_set *set;
	void *base;
	mcrepl_config *cfg;
	int depth;		/* --config files being read */
	struct flag_args *args; /* NULL: no argument but flags */
};

static int bad_value(const struct ctx *c, const char *where,
		     const struct flag *fl, const char *v)
{
	char what[128];

	flag_value_allowed(fl, what, sizeof(what));
	fprintf(stderr,
		"%s: %s: invalid value '%s' for --%s (%s); allowed: %s\n",
		c->set->prog, where, v, fl->name, fl->help, what);
	return -1;
}

/* The table's values: its own base, else the program's. */
static void *set_base(const struct flag_set *set, void *base)
{
	return set->base ? set->base : base;
}

/* The flag called name[0, len) in set or a table chained to it; *where
 * gets the base its value lives in. */
static const struct flag *find_flag_in(const struct flag_set *set, void *base,
				       const char *name, size_t len,
				       void **where)
{
	for (; set; set = set->next)
		for (size_t i = 0; i < set->n; i++)
			if (strlen(set->flags[i].name) == len &&
			    strncmp(set->flags[i].name, name, len) == 0) {
				*where = set_base(set, base);
				return &set->flags[i];
			}
	return NULL;
}

static const struct flag *find_flag(const struct flag_set *set,
				    const char *name, size_t len)
{
	void *where;

	return find_flag_in(set, NULL, name, len, &where);
}

/* The library knob called name, with or without KNOB_PREFIX, or NULL. */
static const mcrepl_config_knob *find_knob(const char *name)
{
	size_t n, plen = strlen(KNOB_PREFIX);
	const mcrepl_config_knob *k = mcrepl_config_knobs(&n);

	for (size_t i = 0; i < n; i++)
		if (strcmp(k[i].name, name) == 0 ||
		    (strncmp(k[i].name, KNOB_PREFIX, plen) == 0 &&
		     strcmp(k[i].name + plen, name) == 0))
			return &k[i];
	return NULL;
}

/* A name for mcrepl_config_set(): a knob's, with or without the prefix
 * (an unknown name with the prefix is reported by the library). */
static bool is_knob(const struct ctx *c, const char *name)
{
	return c->cfg &&
	       (strncmp(name, KNOB_PREFIX, strlen(KNOB_PREFIX)) == 0 ||
		find_knob(name));
}

static int unknown(const struct ctx *c, const char *where, const char *name,
		   size_t len)
{
	fprintf(stderr, "%s: %s: unknown flag --%.*s (see --help)\n",
		c->set->prog, where, (int)len, name);
	return -1;
}

static int read_config(struct ctx *c, const char *path);

/* Applies name=value from where ("command line", "FILE:LINE"); lasting:
 * v outlives the parse (argv). */
static int apply(struct ctx *c, const char *name, const char *v,
		 const char *where, bool lasting)
{
	void *base = NULL;
	const struct flag *fl =
	    find_flag_in(c->set, c->base, name, strlen(name), &base);
	mcrepl_status st;

	if (strcmp(name, "config") == 0)
		return read_config(c, v);
	if (fl)
		return flag_value_set(base, fl, v, lasting)
			   ? bad_value(c, where, fl, v)
			   : 0;
	if (!is_knob(c, name))
		return unknown(c, where, name, strlen(name));
	st = mcrepl_config_set(c->cfg, name, v);
	if (st == MCREPL_OK)
		return 0;
	if (st == MCREPL_ENOENT)
		return unknown(c, where, name, strlen(name));
	fprintf(stderr,
		"%s: %s: invalid value '%s' for --%s (%s); allowed: %s\n",
		c->set->prog, where, v, name, mcrepl_strerror(st),
		find_knob(name) ? find_knob(name)->help : "see --help");
	return -1;
}

/* Cuts blanks from both ends of s in place. */
static char *trim(char *s)
{
	char *e;

	s += strspn(s, " \t");
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* One line of a config file: NULL-free, comment cut; 0 when blank. */
static int config_line(struct ctx *c, char *line, const char *where)
{
	char *s, *eq;

	line[strcspn(line, "#\r\n")] = '\0';
	s = trim(line);
	if (!*s)
		return 0;
	if (s[0] == '-' && s[1] == '-')
		s += 2;
	eq = strchr(s, '=');
	if (!eq) {
		fprintf(stderr, "%s: %s: expected name=value\n", c->set->prog,
			where);
		return -1;
	}
	*eq = '\0';
	return apply(c, trim(s), trim(eq + 1), where, false);
}

static int read_config(struct ctx *c, const char *path)
{
	char line[512], where[600];
	int lineno = 0, rc = 0;
	FILE *fp;

	if (c->depth >= MAX_CONFIG_DEPTH) {
		fprintf(stderr, "%s: --config %s: nested too deeply\n",
			c->set->prog, path);
		return -1;
	}
	fp = fopen(path, "r");
	if (!fp) {
		fprintf(stderr, "%s: --config %s: %s\n", c->set->prog, path,
			strerror(errno));
		return -1;
	}
	c->depth++;
	while (rc == 0 && fgets(line, sizeof(line), fp)) {
		snprintf(where, sizeof(where), "%s:%d", path, ++lineno);
		rc = config_line(c, line, where);
	}
	c->depth--;
	fclose(fp);
	return rc;
}

/* One flag line of --help: name, two spaces at least, help, default. */
static void usage_line(int width, const char *name, const char *help,
		       const char *def)
{
	printf("  --%-*s  %s", width, name, help);
	if (def && def[0])
		printf(" (default %s)", def);
	printf("\n");
}

static void usage(const struct ctx *c)
{
	const struct flag_set *s = c->set;
	const mcrepl_config_knob *k;
	size_t n;

	printf("usage: %s %s\n", s->prog,
	       s->usage ? s->usage
			: "[--flag value | --flag=value]... [--config FILE]");
	if (s->intro)
		printf("%s\n", s->intro);
	for (const struct flag_set *t = s; t; t = t->next) {
		printf("\n%s:\n", t->title);
		for (size_t i = 0; i < t->n; i++)
			usage_line(s->width, t->flags[i].name, t->flags[i].help,
				   t->flags[i].def);
	}
	if (c->cfg) {
		k = mcrepl_config_knobs(&n);
		printf("\ndynamic replication (libmcrepl) flags, also without "
		       "the " KNOB_PREFIX " prefix:\n");
		for (size_t i = 0; i < n; i++)
			usage_line(s->width, k[i].name, k[i].help,
				   k[i].default_text);
	}
	printf("\n  --config FILE   read name=value lines (# comments); the "
	       "command line wins\n"
	       "  --help, --version\n");
	if (s->epilog)
		printf("\n%s\n", s->epilog);
}

/* The value of the flag at argv[*i] (consuming the next argument when it
 * is not inline); NULL after printing an error. */
static const char *arg_value(const struct ctx *c, const struct flag *fl,
			     const char *name, int argc, char **argv, int *i)
{
	const char *eq = strchr(argv[*i], '=');

	if (eq)
		return eq + 1;
	if (fl && fl->type == FLAG_BOOL &&
	    (*i + 1 >= argc || strncmp(argv[*i + 1], "--", 2) == 0))
		return "true";
	if (*i + 1 < argc)
		return argv[++*i];
	fprintf(stderr, "%s: --%s needs a value\n", c->set->prog, name);
	return NULL;
}

/* Which arguments a pass over argv applies. */
enum pass { PASS_FLAGS, PASS_CONFIG };

/* One --flag at argv[*i], applied when the pass is its kind. */
static int parse_arg(struct ctx *c, enum pass pass, int argc, char **argv,
		     int *i)
{
	const char *a = argv[*i] + 2, *v;
	size_t len = strcspn(a, "=");
	const struct flag *fl = find_flag(c->set, a, len);
	char name[128];
	bool is_config;

	snprintf(name, sizeof(name), "%.*s", (int)len, a);
	is_config = strcmp(name, "config") == 0;
	if (!fl && !is_config && !is_knob(c, name))
		return unknown(c, "command line", a, len);
	v = arg_value(c, fl, name, argc, argv, i);
	if (!v)
		return -1;
	if (is_config != (pass == PASS_CONFIG))
		return 0;
	return apply(c, name, v, "command line", true);
}

/* An argument that is not a flag: into c->args, if the program takes
 * any and there is room. */
static int positional(const struct ctx *c, const char *arg)
{
	if (!c->args || c->args->n >= c->args->cap) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n",
			c->set->prog, arg);
		return -1;
	}
	c->args->v[c->args->n++] = arg;
	return 0;
}

/* Applies the arguments of one kind, in order; 1 after --help/--version. */
static int walk(struct ctx *c, enum pass pass, int argc, char **argv)
{
	bool flags = true; /* until a lone "--" */

	if (c->args)
		c->args->n = 0;
	for (int i = 1; i < argc; i++) {
		if (flags && c->args && !strcmp(argv[i], "--")) {
			flags = false;
			continue;
		}
		if (flags &&
		    (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))) {
			usage(c);
			return 1;
		}
		if (flags && !strcmp(argv[i], "--version")) {
			printf("%s (libmcrepl %s)\n", c->set->prog,
			       mcrepl_version());
			return 1;
		}
		if (!flags || strncmp(argv[i], "--", 2) != 0) {
			if (positional(c, argv[i]))
				return -1;
			continue;
		}
		if (parse_arg(c, pass, argc, argv, &i))
			return -1;
	}
	return 0;
}

void flags_defaults(const struct flag_set *set, void *base)
{
	for (; set; set = set->next)
		for (size_t i = 0; i < set->n; i++)
			if (set->flags[i].def)
				(void)flag_value_set(set_base(set, base),
						     &set->flags[i],
						     set->flags[i].def, true);
}

const struct flag *flags_find(const struct flag_set *set, const char *name)
{
	return find_flag(set, name, strlen(name));
}

/* help says "0 = ..." (not "10 = ..."). */
static bool says_zero(const char *help)
{
	for (const char *at = help; (at = strstr(at, "0 = ")) != NULL; at++)
		if (at == help ||
		    ((at[-1] < '0' || at[-1] > '9') && at[-1] != '.'))
			return true;
	return false;
}

size_t flags_zero_unsaid(const struct flag_set *set, const char **names,
			 size_t cap)
{
	size_t n = 0;

	for (; set; set = set->next)
		for (size_t i = 0; i < set->n; i++) {
			const struct flag *fl = &set->flags[i];

			if (!flag_value_zero_allowed(fl) || says_zero(fl->help))
				continue;
			if (n < cap)
				names[n] = fl->name;
			n++;
		}
	return n;
}

int flags_set(const struct flag_set *set, void *base, mcrepl_config *cfg,
	      const char *name, const char *value, const char *where)
{
	struct ctx c = {.set = set, .base = base, .cfg = cfg};

	return apply(&c, name, value, where, false);
}

static int validate_knobs(const struct ctx *c)
{
	const mcrepl_config_knob *k;
	const char *field = NULL;
	char val[64];

	if (!c->cfg || mcrepl_config_validate(c->cfg, &field) == MCREPL_OK)
		return 0;
	if (mcrepl_config_get(c->cfg, field, val, sizeof(val)) != MCREPL_OK)
		val[0] = '\0';
	k = find_knob(field);
	fprintf(stderr,
		"%s: invalid value '%s' for --%s (out of range, or "
		"inconsistent with another knob); allowed: %s\n",
		c->set->prog, val, field, k ? k->help : "see --help");
	return -1;
}

/*
 * The command line wins over --config wherever it stands: the flags are
 * checked and applied in order (so errors come in order), then the config
 * files are read, then the flags are applied again over them.
 */
int flags_parse_args(const struct flag_set *set, void *base, mcrepl_config *cfg,
		     int argc, char **argv, struct flag_args *args)
{
	struct ctx c = {.set = set, .base = base, .cfg = cfg, .args = args};
	int rc = walk(&c, PASS_FLAGS, argc, argv);

	if (rc == 0)
		rc = walk(&c, PASS_CONFIG, argc, argv);
	if (rc == 0)
		rc = walk(&c, PASS_FLAGS, argc, argv);
	if (rc == 0)
		rc = validate_knobs(&c);
	return rc;
}

int flags_parse(const struct flag_set *set, void *base, mcrepl_config *cfg,
		int argc, char **argv)
{
	return flags_parse_args(set, base, cfg, argc, argv, NULL);
}
