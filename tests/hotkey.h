/* A hot key's proposal for the engine's unit tests: one key on segment 1
 * (host "h1"), 1 MiB at version 7, read 64 times (hot on a 4-node
 * cluster), proposed at HOTKEY_NOW. */
#ifndef MCREPL_TESTS_HOTKEY_H
#define MCREPL_TESTS_HOTKEY_H

#include "mcrepl/engine.h"

#define HOTKEY_NOW 1000000ULL

struct hot {
	char id[16], key[16];
	mcrepl_proposal p;
	mcrepl_object_view o;
	mcrepl_replica_view r;
	mcrepl_propose_input in;
};

/* h filled for proposal `id` of key `key` (both copied, up to 15 bytes). */
void hot_key(struct hot *h, const char *id, const char *key);

#endif
