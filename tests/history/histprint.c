/* A window of one key's history around a violation (hist.h). */
#include <stdlib.h>

#include "hist.h"

static const char *kind_name(enum hop_kind k)
{
	return k == HOP_PUT ? "put" : k == HOP_GET ? "get" : "remove";
}

static void print_value(FILE *f, uint64_t v)
{
	fprintf(f, " v=c%u:%u", (unsigned)(v >> 32) - 1,
		(unsigned)(v & 0xffffffffu));
}

static void print_op(FILE *f, const struct hop *o, int64_t t0, bool culprit)
{
	static const char *const reads[] = {"", " CORRUPT", " PHANTOM"};

	fprintf(f, "  %s %10.3f..%10.3f ms c%u %-6s", culprit ? "=>" : "  ",
		(double)(o->t_inv - t0) / 1e6, (double)(o->t_ret - t0) / 1e6,
		o->client, kind_name(o->kind));
	if (o->kind == HOP_PUT || (o->kind == HOP_GET && o->out == HOUT_OK))
		print_value(f, o->value);
	if (o->out == HOUT_OK)
		fprintf(f, " ok%s\n", o->kind == HOP_GET ? reads[o->read] : "");
	else
		fprintf(f, " %s code=%d\n",
			o->out == HOUT_FAIL ? "fail" : "unknown", o->code);
}

/* Whether o may have changed the key. */
static bool effective(const struct hop *o)
{
	return o->kind != HOP_GET && o->out != HOUT_FAIL;
}

void hist_print_window(FILE *f, const struct hop *ops, size_t n, size_t bad,
		       int64_t t0, size_t max)
{
	bool *mark;
	const struct hop *b;
	size_t back = 0, shown = 0;
	int64_t lo;

	if (bad >= n || !(mark = calloc(n, sizeof(*mark))))
		return;
	b = &ops[bad];
	lo = b->t_inv;
	for (size_t i = 0; i < n; i++) {
		const struct hop *o = &ops[i];

		/* overlapping it, or the put of the value it read */
		mark[i] = (o->t_inv <= b->t_ret && o->t_ret >= b->t_inv) ||
			  (o->kind == HOP_PUT && b->kind == HOP_GET &&
			   b->out == HOUT_OK && o->value == b->value);
	}
	for (size_t i = bad; i-- > 0 && back < 4;)
		if (effective(&ops[i]) && ops[i].t_ret < b->t_inv) {
			mark[i] = true;
			back++;
			lo = ops[i].t_inv;
		}
	/* and the long ones still running since the earliest of those */
	for (size_t i = 0; i < bad; i++)
		if (effective(&ops[i]) && ops[i].t_ret >= lo)
			mark[i] = true;
	for (size_t i = 0; i < n && shown < max; i++)
		if (mark[i]) {
			print_op(f, &ops[i], t0, i == bad);
			shown++;
		}
	free(mark);
}
