/* The auth file and credentials (see auth.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth.h"
#include "flagparse.h"

#define AUTH_FILE_MAX (1u << 20)
#define AUTH_MAX_PRINCIPALS 4096

bool auth_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > AUTH_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

/* 16..256 printable characters, no spaces. */
static bool secret_ok(const char *s, size_t n)
{
	if (n < AUTH_SECRET_MIN || n > AUTH_SECRET_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] <= ' ' || s[i] > '~')
			return false;
	return true;
}

/* A comma-separated list has tok as one of its items. */
static bool in_list(const char *list, const char *tok)
{
	size_t n = strlen(tok);

	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && memcmp(p, tok, n) == 0)
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

bool auth_tenant_ok(const struct auth_principal *p, const char *tenant)
{
	return p->any_tenant || in_list(p->tenants, tenant);
}

bool auth_host_ok(const struct auth_principal *p, const char *host)
{
	return p->any_host || in_list(p->hosts, host);
}

bool auth_domain_ok(const struct auth_principal *p, const char *domain)
{
	return p->any_domain || in_list(p->domains, domain);
}

static const char *const right_names[] = {"read", "write", "remove", "admin"};

const char *auth_right_name(unsigned right)
{
	for (unsigned i = 0; i < 4; i++)
		if (right == 1u << i)
			return right_names[i];
	return "?";
}

const struct auth_principal *auth_find(const struct auth_table *t,
				       const char *name)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (strcmp(t->p[i].name, name) == 0)
			return &t->p[i];
	return NULL;
}

void auth_table_free(struct auth_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->p[i].hosts);
		free(t->p[i].domains);
		free(t->p[i].tenants);
	}
	free(t->p);
	free(t->t);
	free(t);
}

/* ---- parsing ---- */

struct parse {
	const char *file;
	unsigned line;
	char *err;
	size_t errlen;
};

static int perr(struct parse *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static int perr(struct parse *ps, const char *fmt, ...)
{
	char text[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "auth file %s line %u: %s", ps->file,
		 ps->line, text);
	return -1;
}

/* A list value: items of 1..255 characters of the name alphabet and also
 * those allowed in hosts and tenants, or "*" alone. */
static int set_list(struct parse *ps, const char *key, const char *v,
		    char **out, bool *any)
{
	if (*out || *any)
		return perr(ps, "%s given twice", key);
	if (strcmp(v, "*") == 0) {
		*any = true;
		return 0;
	}
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");

		if (len == 0 || len > 255)
			return perr(ps, "%s: empty or over-long item in '%s'",
				    key, v);
		for (size_t i = 0; i < len; i++)
			if (p[i] <= ' ' || p[i] > '~' || p[i] == '*')
				return perr(ps,
					    "%s: item '%.*s' has a character "
					    "not allowed (printable, no "
					    "spaces, no '*' but alone)",
					    key, (int)len, p);
		p += len + (p[len] == ',');
		if (p[-1] == ',' && !*p)
			return perr(ps, "%s: trailing comma in '%s'", key, v);
	}
	if (!*v)
		return perr(ps, "%s is empty (use * for any)", key);
	*out = strdup(v);
	return *out ? 0 : perr(ps, "out of memory");
}

static int set_rights(struct parse *ps, const char *v, unsigned *out,
		      bool *seen)
{
	if (*seen)
		return perr(ps, "rights given twice");
	*seen = true;
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		unsigned i = 0;

		while (i < 4 && !(strlen(right_names[i]) == len &&
				  !strncmp(right_names[i], p, len)))
			i++;
		if (i == 4)
			return perr(ps,
				    "rights: unknown right '%.*s' (read, "
				    "write, remove, admin)",
				    (int)len, p);
		*out |= 1u << i;
		p += len + (p[len] == ',');
	}
	if (!*out)
		return perr(ps, "rights is empty");
	return 0;
}

/* A client's quota= or reserve= (auth_quota.c), or an unknown key. */
static int client_bound(struct parse *ps, struct auth_principal *p,
			const char *k, const char *v)
{
	char why[200];
	int rc = auth__client_bound(p, k, v, why, sizeof(why));

	if (rc < 0)
		return perr(ps, "%s", why);
	if (rc > 0)
		return perr(ps,
			    "unknown key '%.40s' for a client (secret or "
			    "auth=cert, tenants, rights, quota, reserve)",
			    k);
	return 0;
}

/* One key=value of principal p. */
static int set_key(struct parse *ps, struct auth_principal *p, char *kv,
		   bool *seen_secret, bool *seen_cap, bool *seen_rights)
{
	char *eq = strchr(kv, '=');
	const char *k = kv, *v;
	bool w = p->kind == AUTH_WORKER;

	if (!eq)
		return perr(ps, "'%.40s' is not key=value", kv);
	*eq = '\0';
	v = eq + 1;
	if (strcmp(k, "auth") == 0) {
		if (strcmp(v, "cert") != 0)
			return perr(ps, "auth= takes 'cert' only (or give "
					"secret=)");
		if (*seen_secret)
			return perr(ps, "give secret= or auth=cert, not both");
		p->cert = true;
		*seen_secret = true;
		return 0;
	}
	if (strcmp(k, "secret") == 0) {
		size_t n = strlen(v);

		if (*seen_secret)
			return perr(ps, p->cert ? "give secret= or auth=cert, "
						  "not both"
						: "secret given twice");
		if (!secret_ok(v, n))
			return perr(ps,
				    "secret must be %d..%d printable "
				    "characters without spaces",
				    AUTH_SECRET_MIN, AUTH_SECRET_MAX);
		memcpy(p->secret, v, n);
		p->secret_len = n;
		*seen_secret = true;
		return 0;
	}
	if (w && strcmp(k, "hosts") == 0)
		return set_list(ps, k, v, &p->hosts, &p->any_host);
	if (w && strcmp(k, "domains") == 0)
		return set_list(ps, k, v, &p->domains, &p->any_domain);
	if (w && strcmp(k, "max_capacity") == 0) {
		if (*seen_cap)
			return perr(ps, "max_capacity given twice");
		*seen_cap = true;
		if (flags_parse_size(v, &p->max_capacity) || !p->max_capacity)
			return perr(ps,
				    "max_capacity '%.40s' is not a size > 0 "
				    "(K, M, G, T suffixes)",
				    v);
		return 0;
	}
	if (!w && strcmp(k, "tenants") == 0)
		return set_list(ps, k, v, &p->tenants, &p->any_tenant);
	if (!w && strcmp(k, "rights") == 0)
		return set_rights(ps, v, &p->rights, seen_rights);
	if (!w)
		return client_bound(ps, p, k, v);
	return perr(ps,
		    "unknown key '%.40s' for a worker (secret or auth=cert, "
		    "hosts, domains, max_capacity)",
		    k);
}

/* Splits line (modified) into whitespace-separated words. */
static size_t split(char *line, char **words, size_t max)
{
	size_t n = 0;

	for (char *p = strtok(line, " \t\r"); p; p = strtok(NULL, " \t\r"))
		if (n < max)
			words[n++] = p;
		else
			return max + 1;
	return n;
}

/* Two workers whose client-id spaces are one would own each other's ids
 * (auth_id_tag): one of them must be renamed. */
static int unique_id_space(struct parse *ps, const struct auth_table *t,
			   const struct auth_principal *p)
{
	for (size_t i = 0; i + 1 < t->n; i++)
		if (t->p[i].kind == AUTH_WORKER && t->p[i].id_tag == p->id_tag)
			return perr(ps,
				    "workers '%s' and '%s' share a client-id "
				    "space (auth_id_tag): rename one",
				    t->p[i].name, p->name);
	return 0;
}

static int tenant_line(struct parse *ps, struct auth_table *t, char **w,
		       size_t n)
{
	char why[200];

	return auth__tenant_line(t, w, n, why, sizeof(why))
		   ? perr(ps, "%s", why)
		   : 0;
}

static int parse_line(struct parse *ps, struct auth_table *t, char *line)
{
	char *w[16];
	size_t n = split(line, w, 16);
	struct auth_principal *p;
	bool sec = false, cap = false, rights = false;

	if (n == 0 || w[0][0] == '#')
		return 0;
	if (n > 16)
		return perr(ps, "too many words");
	if (strcmp(w[0], "tenant") == 0)
		return tenant_line(ps, t, w, n);
	if (strcmp(w[0], "worker") && strcmp(w[0], "client"))
		return perr(ps,
			    "unknown kind '%.40s' (worker, client or tenant)",
			    w[0]);
	if (n < 2 || !auth_name_ok(w[1]))
		return perr(ps,
			    "a name of 1..%d characters of A-Z a-z 0-9 . _ - "
			    "must follow '%s'",
			    AUTH_NAME_MAX, w[0]);
	if (auth_find(t, w[1]))
		return perr(ps, "principal '%s' defined twice", w[1]);
	if (t->n == AUTH_MAX_PRINCIPALS)
		return perr(ps, "more than %d principals", AUTH_MAX_PRINCIPALS);
	p = &t->p[t->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", w[1]);
	p->id_tag = auth_id_tag(p->name);
	p->kind = w[0][0] == 'w' ? AUTH_WORKER : AUTH_CLIENT;
	for (size_t i = 2; i < n; i++)
		if (set_key(ps, p, w[i], &sec, &cap, &rights))
			return -1;
	if (!sec)
		return perr(ps,
			    "%s '%s' has no secret= (nor auth=cert: a "
			    "client certificate under mutual TLS)",
			    w[0], p->name);
	if (p->kind == AUTH_WORKER && (!cap || !(p->hosts || p->any_host) ||
				       !(p->domains || p->any_domain)))
		return perr(ps,
			    "worker '%s' needs hosts=, domains= and "
			    "max_capacity=",
			    p->name);
	if (p->kind == AUTH_CLIENT &&
	    (!rights || !(p->tenants || p->any_tenant)))
		return perr(ps,
			    "client '%s' needs tenants= and rights=", p->name);
	return p->kind == AUTH_WORKER ? unique_id_space(ps, t, p) : 0;
}

int auth_table_parse(const char *text, const char *name,
		     struct auth_table **out, char *err, size_t errlen)
{
	struct parse ps = {.file = name, .err = err, .errlen = errlen};
	struct auth_table *t = calloc(1, sizeof(*t));
	char *copy = strdup(text), *line, *next;
	size_t lines = 1;

	*out = NULL;
	for (const char *c = text; *c; c++)
		lines += *c == '\n';
	if (t)
		t->p = calloc(lines < AUTH_MAX_PRINCIPALS ? lines
							  : AUTH_MAX_PRINCIPALS,
			      sizeof(*t->p));
	if (!t || !t->p || !copy) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (line = copy; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ps.line++;
		if (parse_line(&ps, t, line))
			goto fail;
	}
	if (t->n == 0) {
		snprintf(err, errlen, "auth file %s names no principal", name);
		goto fail;
	}
	free(copy);
	*out = t;
	return 0;
fail:
	free(copy);
	auth_table_free(t);
	return -1;
}

int auth_file_private(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_mode & 007) {
		snprintf(err, errlen,
			 "%s holds secrets but others may access it (mode "
			 "%04o): chmod 600 %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		return -1;
	}
	return 0;
}

/* A NUL byte in text[0, n): where, as "<prefix>PATH line N: ..." in err. */
static bool nul_found(const char *text, size_t n, const char *prefix,
		      const char *path, char *err, size_t errlen)
{
	const char *nul = memchr(text, '\0', n);
	size_t line = 1;

	if (!nul)
		return false;
	for (const char *c = text; c < nul; c++)
		line += *c == '\n';
	snprintf(err, errlen,
		 "%s%s line %zu: a NUL byte (names and settings are text)",
		 prefix, path, line);
	return true;
}

/* The whole of a private file, NUL-terminated (malloc'd), or NULL. prefix
 * starts an error about its contents ("auth file " or ""). */
static char *read_private(const char *path, const char *prefix, char *err,
			  size_t errlen)
{
	FILE *f;
	char *buf;
	size_t n;

	if (auth_file_private(path, err, errlen))
		return NULL;
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	buf = malloc(AUTH_FILE_MAX + 1);
	n = buf ? fread(buf, 1, AUTH_FILE_MAX + 1, f) : 0;
	fclose(f);
	if (!buf || n > AUTH_FILE_MAX) {
		snprintf(err, errlen, "%s: %s", path,
			 buf ? "larger than 1 MiB" : "out of memory");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (nul_found(buf, n, prefix, path, err, errlen)) {
		memset(buf, 0, n);
		free(buf);
		return NULL;
	}
	return buf;
}

int auth_table_load(const char *path, struct auth_table **out, char *err,
		    size_t errlen)
{
	char *text = read_private(path, "auth file ", err, errlen);
	int rc;

	*out = NULL;
	if (!text)
		return -1;
	rc = auth_table_parse(text, path, out, err, errlen);
	free(text);
	return rc;
}

int auth_cred_load(const char *name, const char *secret_file,
		   struct auth_cred *out, char *err, size_t errlen)
{
	char *text;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!auth_name_ok(name)) {
		snprintf(err, errlen,
			 "--principal '%.64s': 1..%d characters of A-Z a-z "
			 "0-9 . _ -",
			 name, AUTH_NAME_MAX);
		return -1;
	}
	if (!secret_file || !*secret_file) {
		snprintf(err, errlen, "--principal %s needs --secret_file",
			 name);
		return -1;
	}
	text = read_private(secret_file, "", err, errlen);
	if (!text)
		return -1;
	n = strcspn(text, "\r\n");
	if (!secret_ok(text, n)) {
		snprintf(err, errlen,
			 "%s: the first line must be the secret, %d..%d "
			 "printable characters without spaces",
			 secret_file, AUTH_SECRET_MIN, AUTH_SECRET_MAX);
		free(text);
		return -1;
	}
	snprintf(out->name, sizeof(out->name), "%s", name);
	memcpy(out->secret, text, n);
	out->secret_len = n;
	memset(text, 0, n);
	free(text);
	return 0;
}
