/*
 * One flag's value (flagparse.h): read from text into the program's flag
 * struct, checked against the flag's type and range, and described for
 * error messages. Internal to flagparse.c.
 */
#ifndef MCREPL_FLAGVALUE_H
#define MCREPL_FLAGVALUE_H

#include <stdbool.h>
#include <stddef.h>

#include "flagparse.h"

/* Sets fl's field in base from v; -1 when v is not allowed (the field
 * untouched). lasting: v outlives the program's use of it (argv, a
 * table's default); else a FLAG_STRP keeps a copy. */
int flag_value_set(void *base, const struct flag *fl, const char *v,
		   bool lasting);

/* What fl accepts, for error messages: "an integer in 1..100". */
void flag_value_allowed(const struct flag *fl, char *buf, size_t cap);

/* fl is a number and its range allows 0. */
bool flag_value_zero_allowed(const struct flag *fl);

#endif
