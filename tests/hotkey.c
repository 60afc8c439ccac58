#include "hotkey.h"

#include <stdio.h>
#include <string.h>

void hot_key(struct hot *h, const char *id, const char *key)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->id, sizeof(h->id), "%s", id);
	snprintf(h->key, sizeof(h->key), "%s", key);
	h->p = (mcrepl_proposal){.action = MCREPL_ACTION_ADD,
				 .proposal_id = h->id,
				 .tenant = "t",
				 .key = h->key,
				 .observed_version = 7,
				 .expected_size = 1024 * 1024,
				 .expires_at_ms = HOTKEY_NOW + 5000};
	h->o = (mcrepl_object_view){.exists = true,
				    .version = 7,
				    .size = 1024 * 1024,
				    .readable_memory_replicas = 1};
	h->r = (mcrepl_replica_view){.segment = {1},
				     .client = {1},
				     .host = "h1",
				     .domain = "",
				     .readable = true,
				     .memory = true,
				     .can_copy = true};
	h->in = (mcrepl_propose_input){.proposal = &h->p,
				       .object = &h->o,
				       .heat_count = 64,
				       .replicas = &h->r,
				       .n_replicas = 1,
				       .now_ms = HOTKEY_NOW};
}
