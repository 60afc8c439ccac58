/* The daemons' log (see log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static const char *const names[] = {"error", "warn", "info", "debug"};
static enum log_level level = LOG_INFO;
static const char *program = "mcrepl";

void log_init(const char *prog, const char *lv)
{
	program = prog;
	for (int i = 0; lv && i <= LOG_DEBUG; i++)
		if (strcmp(lv, names[i]) == 0)
			level = (enum log_level)i;
}

bool log_on(enum log_level lv)
{
	return lv <= level;
}

void log_line(enum log_level lv, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	if (!log_on(lv))
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", program, names[lv], text);
}
