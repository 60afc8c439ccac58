/*
 * Defaults that more than one binary needs, each written once here: a
 * flag table takes the text form (FLAG_DEFAULT), a check the number.
 */
#ifndef MCREPL_DEFAULTS_H
#define MCREPL_DEFAULTS_H

/* The worker's --copy_timeout_ms; the master warns when its lease TTL is
 * shorter (master_flags_warn). */
#define COPY_TIMEOUT_MS_DEFAULT 20000

/* A default's number as the flag table's text. */
#define FLAG_DEFAULT_(x) #x
#define FLAG_DEFAULT(x) FLAG_DEFAULT_(x)

#endif
