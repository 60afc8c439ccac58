/* Prometheus text helpers (see prom.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/prom.h"

void mcu_prom_fixed(struct mcu_prom *p, char *buf, size_t cap)
{
	*p = (struct mcu_prom){.buf = buf, .cap = buf ? cap : 0};
	if (p->cap > 0)
		buf[0] = '\0';
}

void mcu_prom_growing(struct mcu_prom *p)
{
	*p = (struct mcu_prom){.grow = true};
}

bool mcu_prom_reserve(struct mcu_prom *p, size_t need)
{
	size_t cap = p->cap ? p->cap : 4096;
	char *nb;

	if (p->oom || p->len + need < p->cap)
		return !p->oom;
	if (!p->grow)
		return false;
	while (cap <= p->len + need)
		cap *= 2;
	nb = realloc(p->buf, cap);
	if (!nb) {
		p->oom = true;
		return false;
	}
	p->buf = nb;
	p->cap = cap;
	return true;
}

__attribute__((format(printf, 2, 0))) static void
vput(struct mcu_prom *p, const char *fmt, va_list ap)
{
	size_t room = p->len < p->cap ? p->cap - p->len : 0;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(room ? p->buf + p->len : NULL, room, fmt, ap);
	if (n > 0 && p->grow && (size_t)n >= room &&
	    mcu_prom_reserve(p, (size_t)n))
		n = vsnprintf(p->buf + p->len, p->cap - p->len, fmt, again);
	va_end(again);
	if (n > 0 && !p->oom)
		p->len += (size_t)n;
}

void mcu_prom_printf(struct mcu_prom *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vput(p, fmt, ap);
	va_end(ap);
}

void mcu_prom_head(struct mcu_prom *p, const char *name, const char *type,
		   const char *help)
{
	if (help)
		mcu_prom_printf(p, "# HELP %s %s\n", name, help);
	mcu_prom_printf(p, "# TYPE %s %s\n", name, type);
}

/* A label value with \, " and newline escaped. */
static void put_escaped(struct mcu_prom *p, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			mcu_prom_printf(p, "\\%c", *s);
		else if (*s == '\n')
			mcu_prom_printf(p, "\\n");
		else
			mcu_prom_printf(p, "%c", *s);
	}
}

static void put_name(struct mcu_prom *p, const char *name,
		     const struct mcu_prom_label *l, size_t n)
{
	mcu_prom_printf(p, "%s", name);
	for (size_t i = 0; i < n; i++) {
		mcu_prom_printf(p, "%s%s=\"", i ? "," : "{", l[i].name);
		put_escaped(p, l[i].value);
		mcu_prom_printf(p, "\"");
	}
	if (n)
		mcu_prom_printf(p, "}");
}

void mcu_prom_u64(struct mcu_prom *p, const char *name,
		  const struct mcu_prom_label *l, size_t n, uint64_t v)
{
	put_name(p, name, l, n);
	mcu_prom_printf(p, " %llu\n", (unsigned long long)v);
}

void mcu_prom_i64(struct mcu_prom *p, const char *name,
		  const struct mcu_prom_label *l, size_t n, int64_t v)
{
	put_name(p, name, l, n);
	mcu_prom_printf(p, " %lld\n", (long long)v);
}

void mcu_prom_metric(struct mcu_prom *p, const char *name, const char *type,
		     const char *help, uint64_t v)
{
	mcu_prom_head(p, name, type, help);
	mcu_prom_u64(p, name, NULL, 0, v);
}

void mcu_prom_reasons(struct mcu_prom *p, const char *name, const char *help,
		      const char *(*reason)(int i), const uint64_t *v, int from,
		      int n)
{
	mcu_prom_head(p, name, "counter", help);
	for (int i = from; i < n; i++) {
		const struct mcu_prom_label l = {.name = "reason",
						 .value = reason(i)};

		mcu_prom_u64(p, name, &l, 1, v[i]);
	}
}
