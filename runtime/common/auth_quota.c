/* The auth file's bounds on puts: a client's quota= and reserve=, and the
 * "tenant" lines (see auth.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "flagparse.h"

#define AUTH_MAX_TENANT_LINES 4096

uint64_t auth_tenant_quota(const struct auth_table *t, const char *tenant)
{
	uint64_t any = 0;

	for (size_t i = 0; t && i < t->n_t; i++) {
		if (strcmp(t->t[i].name, tenant) == 0 && t->t[i].quota)
			return t->t[i].quota;
		if (strcmp(t->t[i].name, "*") == 0)
			any = t->t[i].quota;
	}
	return any;
}

bool auth_tenant_integrity(const struct auth_table *t, const char *tenant,
			   bool dflt)
{
	enum auth_integrity any = AUTH_INTEGRITY_UNSET;

	for (size_t i = 0; t && i < t->n_t; i++) {
		if (strcmp(t->t[i].name, tenant) == 0 && t->t[i].integrity)
			return t->t[i].integrity == AUTH_INTEGRITY_ON;
		if (strcmp(t->t[i].name, "*") == 0)
			any = t->t[i].integrity;
	}
	return any ? any == AUTH_INTEGRITY_ON : dflt;
}

uint64_t auth_reserve_bound(const struct auth_principal *p, uint64_t capacity)
{
	unsigned pct =
	    p->reserve_pct ? p->reserve_pct : AUTH_RESERVE_PCT_DEFAULT;

	if (p->reserve)
		return p->reserve;
	return (uint64_t)((unsigned __int128)capacity * pct / 100);
}

/* A size > 0 into *out; -1 with why naming key and value. */
static int size_of(const char *k, const char *v, uint64_t *out, char *why,
		   size_t len)
{
	if (flags_parse_size(v, out) == 0 && *out > 0)
		return 0;
	snprintf(why, len, "%s '%.40s' is not a size > 0 (K, M, G, T suffixes)",
		 k, v);
	return -1;
}

/* reserve=N% (1..100) or reserve=SIZE. */
static int reserve_of(struct auth_principal *p, const char *v, char *why,
		      size_t len)
{
	size_t n = strlen(v);
	char *end;
	unsigned long pct;

	if (n == 0 || v[n - 1] != '%')
		return size_of("reserve", v, &p->reserve, why, len);
	pct = strtoul(v, &end, 10);
	if (v[0] < '0' || v[0] > '9' || end != v + n - 1 || pct < 1 ||
	    pct > 100) {
		snprintf(why, len,
			 "reserve '%.40s' is not a percentage of 1..100%% "
			 "(or a size)",
			 v);
		return -1;
	}
	p->reserve_pct = (unsigned)pct;
	return 0;
}

int auth__client_bound(struct auth_principal *p, const char *k, const char *v,
		       char *why, size_t len)
{
	if (strcmp(k, "quota") == 0) {
		if (p->quota) {
			snprintf(why, len, "quota given twice");
			return -1;
		}
		return size_of(k, v, &p->quota, why, len);
	}
	if (strcmp(k, "reserve") == 0) {
		if (p->reserve || p->reserve_pct) {
			snprintf(why, len, "reserve given twice");
			return -1;
		}
		return reserve_of(p, v, why, len);
	}
	return 1;
}

/* A tenant line's name: as a tenants= item (1..255 printable characters,
 * no spaces, no '*') or "*" alone. */
static bool tenant_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (strcmp(s, "*") == 0)
		return true;
	if (n == 0 || n > AUTH_TENANT_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '*' || *s == ',')
			return false;
	return true;
}

static struct auth_tenant *tenant_add(struct auth_table *t)
{
	struct auth_tenant *grown;

	if (t->n_t % 16 == 0) {
		grown = realloc(t->t, (t->n_t + 16) * sizeof(*t->t));
		if (!grown)
			return NULL;
		t->t = grown;
	}
	memset(&t->t[t->n_t], 0, sizeof(*t->t));
	return &t->t[t->n_t++];
}

/* One key=value of a tenant line: quota=SIZE or integrity=on|off. */
static int tenant_key(const char *w, uint64_t *quota,
		      enum auth_integrity *integrity, char *why, size_t len)
{
	if (strncmp(w, "quota=", 6) == 0) {
		if (*quota) {
			snprintf(why, len, "quota given twice");
			return -1;
		}
		return size_of("quota", w + 6, quota, why, len);
	}
	if (strncmp(w, "integrity=", 10) != 0) {
		snprintf(why, len,
			 "unknown key '%.40s' for a tenant (quota, integrity)",
			 w);
		return -1;
	}
	if (*integrity) {
		snprintf(why, len, "integrity given twice");
		return -1;
	}
	if (strcmp(w + 10, "on") == 0)
		*integrity = AUTH_INTEGRITY_ON;
	else if (strcmp(w + 10, "off") == 0)
		*integrity = AUTH_INTEGRITY_OFF;
	else {
		snprintf(why, len, "integrity '%.40s' is not on or off",
			 w + 10);
		return -1;
	}
	return 0;
}

int auth__tenant_line(struct auth_table *t, char **w, size_t n, char *why,
		      size_t len)
{
	struct auth_tenant *e;
	uint64_t quota = 0;
	enum auth_integrity integrity = AUTH_INTEGRITY_UNSET;

	if (n < 2 || !tenant_name_ok(w[1])) {
		snprintf(why, len,
			 "a tenant of 1..%d printable characters (no spaces, "
			 "commas or '*'), or '*' alone, must follow 'tenant'",
			 AUTH_TENANT_MAX);
		return -1;
	}
	for (size_t i = 0; i < t->n_t; i++)
		if (strcmp(t->t[i].name, w[1]) == 0) {
			snprintf(why, len, "tenant '%s' given twice", w[1]);
			return -1;
		}
	for (size_t i = 2; i < n; i++)
		if (tenant_key(w[i], &quota, &integrity, why, len))
			return -1;
	if (!quota && !integrity) {
		snprintf(why, len,
			 "tenant '%s' needs quota= or integrity=", w[1]);
		return -1;
	}
	if (t->n_t == AUTH_MAX_TENANT_LINES) {
		snprintf(why, len, "more than %d tenant lines",
			 AUTH_MAX_TENANT_LINES);
		return -1;
	}
	e = tenant_add(t);
	if (!e) {
		snprintf(why, len, "out of memory");
		return -1;
	}
	snprintf(e->name, sizeof(e->name), "%s", w[1]);
	e->quota = quota;
	e->integrity = integrity;
	return 0;
}
