/*
 * mcrepl-tracegen: writes a synthetic request trace in Mooncake's JSONL
 * format to stdout, for mcrepl-sim and mcrepl-bench (the model: gen.h;
 * use: traces/README.md). The same flags give the same bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "flagparse.h"
#include "gen.h"

#define O(f) FLAG_AT(struct gen_params, f)
static const struct flag gen_flags[] = {
    {.name = "seed",
     .type = FLAG_U64,
     .off = O(seed),
     .def = "1",
     .help = "seed of every random stream"},
    {.name = "requests",
     .type = FLAG_U64,
     .off = O(requests),
     .def = "4000",
     .help = "requests to write; 0 = until --duration"},
    {.name = "duration",
     .type = FLAG_DOUBLE,
     .off = O(duration),
     .def = "0",
     .help = "seconds of arrivals; 0 = until --requests",
     .dmin = 0,
     .dmax = 1e9},
    {.name = "rate",
     .type = FLAG_DOUBLE,
     .off = O(rate),
     .def = "4",
     .help = "requests per second (Poisson arrivals)",
     .dmin = 1e-6,
     .dmax = 1e9},
    {.name = "conversations",
     .type = FLAG_U32,
     .off = O(conversations),
     .def = "64",
     .help = "conversations open at once; each request is a turn of one",
     .min = 1,
     .max = 1000000},
    {.name = "turns",
     .type = FLAG_DOUBLE,
     .off = O(turns),
     .def = "5",
     .help = "mean turns per conversation (geometric)",
     .dmin = 1,
     .dmax = 1e6},
    {.name = "first_blocks",
     .type = FLAG_U32,
     .off = O(first_blocks),
     .def = "6",
     .help = "mean new blocks of a conversation's first turn",
     .min = 1,
     .max = 100000},
    {.name = "turn_blocks",
     .type = FLAG_U32,
     .off = O(turn_blocks),
     .def = "2",
     .help = "mean new blocks of each later turn",
     .min = 1,
     .max = 100000},
    {.name = "prefixes",
     .type = FLAG_U32,
     .off = O(prefixes),
     .def = "16",
     .help = "shared prefixes (documents, system prompts)",
     .min = 1,
     .max = 1000000},
    {.name = "prefix_blocks",
     .type = FLAG_U32,
     .off = O(prefix_blocks),
     .def = "4",
     .help = "blocks per shared prefix",
     .max = 100000},
    {.name = "prefix_share",
     .type = FLAG_DOUBLE,
     .off = O(prefix_share),
     .def = "0.75",
     .help = "share of conversations that start with a shared prefix",
     .dmin = 0,
     .dmax = 1},
    {.name = "prefix_theta",
     .type = FLAG_DOUBLE,
     .off = O(prefix_theta),
     .def = "1",
     .help = "Zipf exponent of the prefixes' popularity (0 = uniform)",
     .dmin = 0,
     .dmax = 10},
    {.name = "common_blocks",
     .type = FLAG_U32,
     .off = O(common_blocks),
     .def = "1",
     .help = "blocks every request reads first (ids 0..N-1)",
     .max = 100000},
    {.name = "max_blocks",
     .type = FLAG_U32,
     .off = O(max_blocks),
     .def = "512",
     .help = "blocks per request at most; a longer conversation ends",
     .min = 1,
     .max = 1000000},
    {.name = "block_tokens",
     .type = FLAG_U32,
     .off = O(block_tokens),
     .def = "512",
     .help = "tokens per block (input_length)",
     .min = 1,
     .max = 1000000},
    {.name = "output_tokens",
     .type = FLAG_U32,
     .off = O(output_tokens),
     .def = "150",
     .help = "mean output_length, tokens",
     .min = 1,
     .max = 1000000},
    {.name = "annotate",
     .type = FLAG_BOOL,
     .off = O(annotate),
     .def = "false",
     .help = "add each request's \"conversation\" and \"turn\""},
};

static const struct flag_set gen_set = {
    .prog = "mcrepl-tracegen",
    .usage = "[--name value | --name=value]... > FILE",
    .intro = "Write a synthetic request trace (Mooncake JSONL: timestamp, "
	     "input_length, output_length, hash_ids) to stdout: Poisson "
	     "arrivals, a common block, popular shared prefixes, growing "
	     "conversations.",
    .title = "trace",
    .epilog = "example:\n  mcrepl-tracegen --seed 1 > synthetic.jsonl\n"
	      "  mcrepl-sim --nodes 16 --workload trace synthetic.jsonl",
    .width = 22,
    .flags = gen_flags,
    .n = sizeof(gen_flags) / sizeof(gen_flags[0]),
};

int main(int argc, char **argv)
{
	struct gen_params p;
	int rc;

	memset(&p, 0, sizeof(p));
	flags_defaults(&gen_set, &p);
	rc = flags_parse(&gen_set, &p, NULL, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 2;
	if (gen_check(&p, stderr))
		return 2;
	errno = 0;
	if (gen_write(&p, stdout) || fclose(stdout)) {
		fprintf(stderr, "mcrepl-tracegen: %s\n",
			errno ? strerror(errno) : "write failed");
		return 1;
	}
	return 0;
}
