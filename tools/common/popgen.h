/*
 * The popularity generator shared by mcrepl-sim and mcrepl-bench: which
 * object a Zipf rank names at a time t, for the workloads whose hot set
 * moves, so one --seed gives both tools the same phases:
 *   shifting  the ranking is redrawn every period (shift.h): all of it, or
 *             a share `fraction` of it;
 *   rehot     two rankings alternate every period: the identity in even
 *             phases, one redraw (of `fraction`) in odd phases, so the keys
 *             hot in phase 0 go cold in phase 1 and are hot again in 2;
 *   flash     the background reads draw ranks 1..n-1; the object of rank
 *             n, read by nobody before, takes `flash_share` of the reads in
 *             [flash_at, flash_at + flash_len).
 * Objects are rank indices 0..n-1 (0: the hottest of phase 0); each tool
 * maps them to its keys through its seeded permutation (the same one in
 * both). The redraws take their random numbers from the generator's own
 * stream (splitmix64 from the seed), never from the tool's, so the same
 * seed redraws alike in both tools and in every reader thread; the tool
 * brings the per-read numbers (zipf.h). Memory: two uint32_t per object
 * (shifting, rehot); none otherwise.
 */
#ifndef MCREPL_TOOLS_POPGEN_H
#define MCREPL_TOOLS_POPGEN_H

#include <stdbool.h>
#include <stdint.h>

#include "shift.h"

enum popgen_kind { POPGEN_STILL, POPGEN_SHIFTING, POPGEN_REHOT, POPGEN_FLASH };

struct popgen_opts {
	enum popgen_kind kind;
	uint64_t n;	    /* objects; >= 2 for flash */
	double period_ms;   /* shifting, rehot: one phase, > 0 */
	double fraction;    /* shifting, rehot: share of the ranking moved */
	double flash_at_ms; /* flash: when it starts */
	double flash_ms;    /* flash: how long it lasts */
	double flash_share; /* flash: share of the reads it takes, [0, 1] */
	uint64_t seed;
};

struct popgen {
	struct popgen_opts o;
	struct shift shift; /* shifting: the ranking; rehot: the odd one */
	uint64_t rng;	    /* the redraw stream */
	uint64_t phase;	    /* shifting, rehot: the phase reached */
};

/* 0, or -1 on a bad option or when memory is short (g is then freed). */
int popgen_init(struct popgen *g, const struct popgen_opts *o);
void popgen_free(struct popgen *g);

/* How many ranks the background reads draw from: n, or n - 1 (flash). */
uint64_t popgen_ranks(const struct popgen_opts *o);

/* Bring the ranking to time t_ms (times only move forward). */
void popgen_advance(struct popgen *g, double t_ms);

/* The phases reached so far (phase + 1): shifting and rehot; else 0. */
uint64_t popgen_phases(const struct popgen *g);

/* The object of rank index r (0-based, < popgen_ranks) now. */
uint64_t popgen_object(const struct popgen *g, uint64_t r);

/* The flash object: n - 1, never drawn by the background reads. */
uint64_t popgen_flash_object(const struct popgen_opts *o);

/* Flash: whether the read at t_ms goes to the flash object. *seen is the
 * reader's own count of its reads in the window (0 at the start): the
 * j-th is the flash's when floor(j x flash_share) grows, so k reads in
 * the window give floor(k x flash_share) flash reads, evenly spread. */
bool popgen_flash(const struct popgen_opts *o, double t_ms, uint64_t *seen);

/* A digest of the ranking now: FNV-1a over the keys key_of[object] of
 * ranks 0..top-1 (fewer when there are fewer ranks), so two tools that
 * map objects to keys alike can tell they read the same ranking. */
uint64_t popgen_digest(const struct popgen *g, const uint32_t *key_of,
		       uint64_t top);

/* The redraw stream's uniform integer in [0, n), n >= 1 (a splitmix64
 * state as shift_below_fn). */
uint64_t popgen_below(void *state, uint64_t n);

#endif
