/* A fixture of tests/budgets/run.sh: two positional initializers, the
 * known-file list's case (copied into a scratch tree as lib/known.c). */
struct p {
	int a, b;
};
struct p x = {1, 2};
struct p w = {5, 6};
