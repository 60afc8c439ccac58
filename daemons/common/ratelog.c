/* Rate-limited log lines (see ratelog.h). */
#include <stdarg.h>

#include "clock.h"
#include "ratelog.h"

static bool vlog(struct ratelog *rl, int64_t now, FILE *out, const char *fmt,
		 va_list ap)
{
	rl->total++;
	if (rl->next_ms && now < rl->next_ms) {
		rl->suppressed++;
		return false;
	}
	vfprintf(out, fmt, ap);
	if (rl->suppressed)
		fprintf(out, " (+%llu suppressed)",
			(unsigned long long)rl->suppressed);
	fputc('\n', out);
	rl->suppressed = 0;
	rl->next_ms = now + RATELOG_PERIOD_MS;
	return true;
}

bool ratelog(struct ratelog *rl, const char *fmt, ...)
{
	va_list ap;
	bool printed;

	va_start(ap, fmt);
	printed = vlog(rl, net_now_ms(), stderr, fmt, ap);
	va_end(ap);
	return printed;
}

bool ratelog_at(struct ratelog *rl, int64_t now_ms, FILE *out, const char *fmt,
		...)
{
	va_list ap;
	bool printed;

	va_start(ap, fmt);
	printed = vlog(rl, now_ms, out, fmt, ap);
	va_end(ap);
	return printed;
}
