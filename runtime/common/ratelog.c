/* Rate-limited log lines (see ratelog.h). */
#include <stdarg.h>

#include "clock.h"
#include "ratelog.h"

/* The line into out, or into the log at lv when out is NULL. */
__attribute__((format(printf, 5, 0))) static bool
vlog(struct ratelog *rl, int64_t now, FILE *out, enum log_level lv,
     const char *fmt, va_list ap)
{
	char text[1024], more[48] = "";

	rl->total++;
	if (rl->next_ms && now < rl->next_ms) {
		rl->suppressed++;
		return false;
	}
	vsnprintf(text, sizeof(text), fmt, ap);
	if (rl->suppressed)
		snprintf(more, sizeof(more), " (+%llu suppressed)",
			 (unsigned long long)rl->suppressed);
	if (out)
		fprintf(out, "%s%s\n", text, more);
	else
		log_line(lv, "%s%s", text, more);
	rl->suppressed = 0;
	rl->next_ms = now + RATELOG_PERIOD_MS;
	return true;
}

bool ratelog(struct ratelog *rl, enum log_level lv, const char *fmt, ...)
{
	va_list ap;
	bool printed;

	if (!log_on(lv))
		return false;
	va_start(ap, fmt);
	printed = vlog(rl, net_now_ms(), NULL, lv, fmt, ap);
	va_end(ap);
	return printed;
}

bool ratelog_at(struct ratelog *rl, int64_t now_ms, FILE *out, const char *fmt,
		...)
{
	va_list ap;
	bool printed;

	va_start(ap, fmt);
	printed = vlog(rl, now_ms, out, LOG_WARN, fmt, ap);
	va_end(ap);
	return printed;
}
