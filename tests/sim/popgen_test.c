/*
 * Unit test of the popularity generator shared by mcrepl-sim and
 * mcrepl-bench (tools/common/popgen.c): one seed gives the same rankings
 * in two generators (as in the two tools, or two reader threads), another
 * seed other ones; a partial redraw moves at most its share of the ranks;
 * rehot alternates one ranking and one redraw; flash takes exactly
 * floor(k x share) of k reads in its window and only there; bad options
 * are refused. Prints TAP lines and "N passed, N failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../../tools/common/popgen.h"

static int n_pass, n_fail;

static void ok(int cond, const char *what)
{
	if (cond)
		n_pass++;
	else
		n_fail++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n_pass + n_fail, what);
}

static struct popgen_opts moving(enum popgen_kind kind, uint64_t n,
				 double fraction, uint64_t seed)
{
	return (struct popgen_opts){.kind = kind,
				    .n = n,
				    .period_ms = 1000,
				    .fraction = fraction,
				    .seed = seed};
}

static bool same_ranking(const struct popgen *a, const struct popgen *b)
{
	for (uint64_t r = 0; r < popgen_ranks(&a->o); r++)
		if (popgen_object(a, r) != popgen_object(b, r))
			return false;
	return true;
}

static void test_same_seed(void)
{
	struct popgen a, b, c;
	struct popgen_opts o = moving(POPGEN_SHIFTING, 1000, 1, 7);
	bool same = true, differ = false;

	ok(!popgen_init(&a, &o) && !popgen_init(&b, &o), "shifting: init");
	o.seed = 8;
	ok(!popgen_init(&c, &o), "shifting: init, another seed");
	for (int p = 0; p < 6; p++) {
		/* b and c reach each phase by other steps than a */
		popgen_advance(&a, p * 1000.0);
		popgen_advance(&b, p * 1000.0 + 999.0);
		popgen_advance(&c, p * 1000.0 + 500.0);
		same = same && same_ranking(&a, &b);
		differ = differ || !same_ranking(&a, &c);
	}
	ok(same, "shifting: the same seed gives the same six rankings");
	ok(differ, "shifting: another seed gives other rankings");
	ok(popgen_phases(&a) == 6, "shifting: six phases reached");
	popgen_free(&a);
	popgen_free(&b);
	popgen_free(&c);
}

/* The object of rank 0 in phases 0-3 of 3 objects, seed 7: the sequence
 * tests/mbench/run.sh sees on real daemons. */
static void test_pinned_hot(void)
{
	struct popgen g;
	struct popgen_opts o = moving(POPGEN_SHIFTING, 3, 1, 7);
	char got[16] = "";

	ok(!popgen_init(&g, &o), "pinned: init");
	for (int p = 0; p < 4; p++) {
		popgen_advance(&g, p * 1000.0);
		snprintf(got + strlen(got), sizeof(got) - strlen(got),
			 "%" PRIu64 " ", popgen_object(&g, 0));
	}
	ok(strcmp(got, "0 1 0 2 ") == 0, "pinned: 3 keys, seed 7: 0 1 0 2");
	popgen_free(&g);
}

static void test_fraction(void)
{
	struct popgen g;
	struct popgen_opts o = moving(POPGEN_SHIFTING, 1000, 0.25, 3);
	uint64_t moved = 0;

	ok(!popgen_init(&g, &o), "fraction: init");
	popgen_advance(&g, 1000.0);
	for (uint64_t r = 0; r < 1000; r++)
		moved += popgen_object(&g, r) != r;
	ok(moved > 0 && moved <= 250,
	   "fraction 0.25 of 1000: at most 250 ranks move");
	popgen_free(&g);
}

static void test_rehot(void)
{
	struct popgen g, odd;
	struct popgen_opts o = moving(POPGEN_REHOT, 1000, 1, 5);
	bool id0 = true, id2 = true, moved1 = false;

	ok(!popgen_init(&g, &o) && !popgen_init(&odd, &o), "rehot: init");
	popgen_advance(&odd, 1000.0);
	for (uint64_t r = 0; r < 1000; r++)
		id0 = id0 && popgen_object(&g, r) == r;
	popgen_advance(&g, 1500.0);
	for (uint64_t r = 0; r < 1000; r++)
		moved1 = moved1 || popgen_object(&g, r) != r;
	popgen_advance(&g, 2000.0);
	for (uint64_t r = 0; r < 1000; r++)
		id2 = id2 && popgen_object(&g, r) == r;
	ok(id0, "rehot: phase 0 reads the first ranking");
	ok(moved1, "rehot: phase 1 reads another ranking");
	ok(id2, "rehot: phase 2 reads the first ranking again");
	popgen_advance(&g, 3000.0);
	ok(same_ranking(&g, &odd), "rehot: phase 3 reads phase 1's ranking");
	ok(popgen_phases(&g) == 4, "rehot: four phases reached");
	popgen_free(&g);
	popgen_free(&odd);
}

/* Flash reads among k reads at t_ms with the given share. */
static uint64_t flash_reads(double share, double t_ms, uint64_t k)
{
	struct popgen_opts o = {.kind = POPGEN_FLASH,
				.n = 10,
				.flash_at_ms = 1000,
				.flash_ms = 1000,
				.flash_share = share};
	uint64_t seen = 0, n = 0;

	for (uint64_t i = 0; i < k; i++)
		n += popgen_flash(&o, t_ms, &seen);
	return n;
}

static void test_flash(void)
{
	struct popgen_opts o = {.kind = POPGEN_FLASH, .n = 10};

	ok(popgen_ranks(&o) == 9 && popgen_flash_object(&o) == 9,
	   "flash: 9 ranks drawn, the 10th object is the flash's");
	ok(flash_reads(0.5, 1000, 1000) == 500, "flash: 0.5 of 1000 = 500");
	ok(flash_reads(0.3, 1500, 1000) == 300, "flash: 0.3 of 1000 = 300");
	ok(flash_reads(0.5, 999, 1000) == 0, "flash: none before its window");
	ok(flash_reads(0.5, 2000, 1000) == 0, "flash: none after its window");
	ok(flash_reads(1, 1999, 7) == 7 && flash_reads(0, 1000, 7) == 0,
	   "flash: share 1 takes all, share 0 none");
}

static void test_refused(void)
{
	struct popgen g;
	struct popgen_opts o = {.kind = POPGEN_FLASH, .n = 1};

	ok(popgen_init(&g, &o) == -1, "refused: flash over one object");
	o = moving(POPGEN_SHIFTING, 10, 1, 1);
	o.period_ms = 0;
	ok(popgen_init(&g, &o) == -1, "refused: shifting with period 0");
	o = moving(POPGEN_REHOT, 10, 1.5, 1);
	ok(popgen_init(&g, &o) == -1, "refused: fraction 1.5");
	o = (struct popgen_opts){
	    .kind = POPGEN_FLASH, .n = 10, .flash_share = 2};
	ok(popgen_init(&g, &o) == -1, "refused: flash share 2");
	o.kind = POPGEN_STILL;
	o.n = 0;
	ok(popgen_init(&g, &o) == -1, "refused: no object");
}

static void test_below(void)
{
	uint64_t s = 42, hi = 0;
	bool in = true;

	for (int i = 0; i < 10000; i++) {
		uint64_t x = popgen_below(&s, 7);

		in = in && x < 7 && popgen_below(&s, 1) == 0;
		hi = x > hi ? x : hi;
	}
	ok(in && hi == 6, "below: [0, 7) reached, [0, 1) is 0");
}

int main(void)
{
	test_same_seed();
	test_pinned_hot();
	test_fraction();
	test_rehot();
	test_flash();
	test_refused();
	test_below();
	printf("1..%d\npopgen_test: %d passed, %d failed\n", n_pass + n_fail,
	       n_pass, n_fail);
	return n_fail ? 1 : 0;
}
