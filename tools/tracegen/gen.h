/*
 * mcrepl-tracegen's model: a synthetic request trace in Mooncake's JSONL
 * format (one request a line: "timestamp" in ms, "input_length" and
 * "output_length" in tokens, "hash_ids" = the KV-cache blocks of the
 * input, one per block_tokens tokens; equal ids are the same block).
 *
 * Shape, each part seeded from one seed (a pure function of the params):
 *   - arrivals: a Poisson process of `rate` requests/s, the first at 0;
 *   - common blocks: the first `common_blocks` ids of every request (a
 *     system prompt every request reads);
 *   - conversations: `conversations` open at once; each request is the
 *     next turn of one of them, chosen uniformly. A turn reads the whole
 *     conversation so far (its earlier turns' blocks, in order) plus new
 *     blocks (about `first_blocks` on the first turn, `turn_blocks`
 *     later), so a turn's hash_ids are a prefix of every later turn's. A
 *     conversation lasts a geometric number of turns (mean `turns`), or
 *     until it would pass `max_blocks`; then a new one takes its place;
 *   - shared prefixes: a new conversation starts with probability
 *     `prefix_share` with one of `prefixes` shared prefixes of
 *     `prefix_blocks` blocks each (after the common blocks), prefix k
 *     chosen with probability ~ k^-prefix_theta: prefix 1 is read by
 *     many conversations.
 * Block ids are numbered 0, 1, ... in order of first appearance.
 *
 * Independent random streams (tools/sim/rng.h) for the arrival times, the
 * choice of conversation and the shapes: changing `rate` moves only the
 * timestamps.
 */
#ifndef MCREPL_TRACEGEN_GEN_H
#define MCREPL_TRACEGEN_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct gen_params {
	uint64_t seed;
	uint64_t requests; /* stop after this many; 0 = no limit */
	double duration;   /* seconds: stop at the first arrival at or past
			      it; 0 = no limit (one of the two is set) */
	double rate;	   /* requests per second, > 0 */
	uint32_t conversations;
	double turns; /* mean turns per conversation, >= 1 */
	uint32_t first_blocks, turn_blocks; /* mean new blocks, >= 1 */
	uint32_t prefixes, prefix_blocks;
	double prefix_share, prefix_theta;
	uint32_t common_blocks;
	uint32_t max_blocks; /* per request, >= common + prefix + 1 */
	uint32_t block_tokens, output_tokens;
	bool annotate; /* add "conversation" and "turn" members */
};

/* Checks what the flag table cannot (cross-flag rules); prints one line
 * naming the rule on err and returns -1, or 0. */
int gen_check(const struct gen_params *p, FILE *err);

/*
 * Writes the trace to out. 0, or -1 when out of memory or a write failed
 * (the caller reports errno's cause). Not thread-safe with respect to
 * out; otherwise no shared state.
 */
int gen_write(const struct gen_params *p, FILE *out);

#endif
