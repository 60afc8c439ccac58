/* Status and reason names, generated from the X-macros in error.h. */
#include "mcrepl/error.h"
#include "mcrepl/mcrepl.h"

#define STR2(x) #x
#define STR(x) STR2(x)

static const char *const status_text[] = {
#define TEXT(name, text) text,
    MCREPL_STATUS_MAP(TEXT)
#undef TEXT
};

static const char *const status_names[] = {
#define NAME(name, text) #name,
    MCREPL_STATUS_MAP(NAME)
#undef NAME
};

static const char *const reason_labels[] = {
#define LABEL(name, label) label,
    MCREPL_REASON_MAP(LABEL)
#undef LABEL
};

const char *mcrepl_strerror(mcrepl_status st)
{
	if ((unsigned)st >= MCREPL_STATUS_COUNT)
		return "unknown status";
	return status_text[st];
}

const char *mcrepl_status_name(mcrepl_status st)
{
	if ((unsigned)st >= MCREPL_STATUS_COUNT)
		return "UNKNOWN";
	return status_names[st];
}

const char *mcrepl_reason_name(mcrepl_reason r)
{
	if ((unsigned)r >= MCREPL_REASON_COUNT)
		return "unknown";
	return reason_labels[r];
}

const char *mcrepl_version(void)
{
	return STR(MCREPL_VERSION_MAJOR) "." STR(MCREPL_VERSION_MINOR) "." STR(
	    MCREPL_VERSION_PATCH);
}
