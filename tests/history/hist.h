/*
 * The history test's record of operations and its linearizability
 * checker (lincheck.c): pure code, no clock, no I/O but the report it
 * prints when asked.
 *
 * A history is every operation the clients ran on a small key set, each
 * with its invoke and complete times (one monotonic clock, ns) and its
 * outcome. The model, per key: the key is absent or holds one value (a
 * 64-bit id naming the (client, seq) that put it); a put succeeds only on
 * an absent key (the master refuses a key that exists with
 * ALREADY_EXISTS: objects are immutable); a remove makes the key absent;
 * a get returns the value or not-found. An operation of unknown outcome
 * (a transport failure, a timeout, a call the client sent again to a new
 * leader) may have taken effect at any instant after its invoke, or never.
 *
 * The search is Wing and Gong's, with Lowe's just-in-time ordering and
 * memoization on (set of operations linearized, state): operations are
 * tried in invoke order, an operation must be linearized before the
 * earliest complete of those not yet linearized, and a (set, state) pair
 * seen before is not explored again. Bounded: a key whose search exceeds
 * the budget is "undecided", never a hang.
 */
#ifndef MCREPL_HISTORY_HIST_H
#define MCREPL_HISTORY_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum hop_kind { HOP_PUT, HOP_GET, HOP_REMOVE };

/* OK; FAIL: definitely without effect (code says which); UNKNOWN: may or
 * may not have taken effect. */
enum hop_out { HOUT_OK, HOUT_FAIL, HOUT_UNKNOWN };

/* What a successful get read, decided from its bytes before the search:
 * a value some put wrote (HREAD_VALUE), bytes that are not what their
 * header names (HREAD_CORRUPT), or a value no put of this key wrote
 * before the get completed (HREAD_PHANTOM). */
enum hop_read { HREAD_VALUE, HREAD_CORRUPT, HREAD_PHANTOM };

/* The master's codes the model reads (proto/mcrepl.proto). */
#define HCODE_NOT_FOUND 2
#define HCODE_ALREADY_EXISTS 3
#define HCODE_BUSY 6

struct hop {
	uint32_t key, client;
	enum hop_kind kind;
	enum hop_out out;
	int code;	/* the client's status (0 for OK) */
	uint64_t value; /* put: the value written; get OK: the value read */
	enum hop_read read;
	int64_t t_inv, t_ret; /* ns, one monotonic clock */
};

/* Value ids: (client + 1) << 32 | seq, never 0. */
static inline uint64_t hist_value_id(uint32_t client, uint32_t seq)
{
	return ((uint64_t)(client + 1) << 32) | seq;
}

enum hist_verdict { HIST_LINEARIZABLE, HIST_VIOLATION, HIST_UNDECIDED };

enum hist_class {
	HCLASS_NONE,
	HCLASS_STALE,	/* read a value overwritten or removed (or removed
			   one that was gone) */
	HCLASS_LOST,	/* an acknowledged put not readable when it should */
	HCLASS_PHANTOM, /* read a value never written to the key */
	HCLASS_CORRUPT, /* bytes not those of the value they name */
};

struct hist_key_result {
	enum hist_verdict verdict;
	enum hist_class cls; /* of the first violation */
	size_t stale, lost, phantom, corrupt;
	size_t ops;	/* of the key, as given */
	size_t bad_op;	/* index in the key's ops of the culprit */
	uint64_t steps; /* search steps taken */
};

/* Search budget per key: steps and memoized configurations. */
struct hist_budget {
	uint64_t max_steps;
	size_t max_cache;
};

/* Checks the ops of one key (n of them, any order; the array is reordered
 * by invoke time). The gets' read field must be set. *res filled. 0, or
 * -1 when out of memory. */
int hist_check_key(struct hop *ops, size_t n, const struct hist_budget *b,
		   struct hist_key_result *res);

/* Prints to f a window of the key's history (sorted by hist_check_key)
 * around op bad: the operations overlapping it, the last four that
 * changed the key before it and any that may have changed it since the
 * earliest of those, at most max lines, times in ms from t0. */
void hist_print_window(FILE *f, const struct hop *ops, size_t n, size_t bad,
		       int64_t t0, size_t max);

const char *hist_class_name(enum hist_class c);

#endif
