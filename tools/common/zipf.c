/*
 * Zipf ranks by rejection-inversion (see zipf.h), written from W. Hormann
 * and G. Derflinger, "Rejection-inversion to generate variates from
 * monotone discrete distributions", ACM TOMACS 6(3), 1996.
 *
 * Rank k weighs f(k) = k^-theta. f is decreasing and convex, so the area
 * under f over the strip [k - 1/2, k + 1/2] is at least f(k): the curve
 * is a hat over the ranks. With F(x) the area under f from 1 to x, a
 * draw takes v uniform in [F(3/2) - f(1), F(n + 1/2)] (rank 1's strip
 * cut to exactly f(1), so rank 1 is never refused), inverts x = F^-1(v),
 * rounds x to the nearest rank k, and keeps k when v lies in the last
 * f(k) of k's strip, F(k + 1/2) - f(k) <= v; else it draws again. The
 * paper's squeeze keeps k at once when k - x is at most
 * 2 - F^-1(F(5/2) - f(2)), which spares computing F for most draws.
 *
 * With a = 1 - theta, F and its inverse are computed as
 *   F(x)    = (x^a - 1) / a      = log(x) * E(a log(x)),  E(y) = expm1(y) / y
 *   F^-1(v) = (1 + a v)^(1 / a)  = exp(v * L(a v)),       L(y) = log1p(y) / y
 * which stay exact as theta nears 1, where F becomes log; E and L take
 * their Taylor series where y is too small to divide by.
 */
#include <math.h>

#include "zipf.h"

#define SERIES_BELOW 1e-8

/* expm1(y) / y; 1 + y/2 + y^2/6 + y^3/24 near 0. */
static double expm1_over(double y)
{
	if (fabs(y) > SERIES_BELOW)
		return expm1(y) / y;
	return 1 + y / 2 * (1 + y / 3 * (1 + y / 4));
}

/* log1p(y) / y; 1 - y/2 + y^2/3 - y^3/4 near 0. */
static double log1p_over(double y)
{
	if (fabs(y) > SERIES_BELOW)
		return log1p(y) / y;
	return 1 - y * (1.0 / 2 - y * (1.0 / 3 - y / 4));
}

/* f(x) = x^-theta. */
static double weight(const struct zipf *z, double x)
{
	return exp(-z->theta * log(x));
}

/* F(x), the area under f from 1 to x. */
static double area(const struct zipf *z, double x)
{
	const double lx = log(x);

	return lx * expm1_over((1 - z->theta) * lx);
}

/* F^-1(v), for v in F's range. */
static double area_inverse(const struct zipf *z, double v)
{
	double y = (1 - z->theta) * v;

	if (y < -1) /* rounding below F(0) */
		y = -1;
	return exp(v * log1p_over(y));
}

/* The rank whose strip holds x. */
static double nearest_rank(const struct zipf *z, double x)
{
	const double k = floor(x + 0.5);

	if (k < 1)
		return 1;
	return k > (double)z->n ? (double)z->n : k;
}

int zipf_init(struct zipf *z, uint64_t n, double theta)
{
	if (n < 1 || !(theta >= 0) || theta > 100)
		return -1;
	z->n = n;
	z->theta = theta;
	z->area_first = area(z, 1.5) - weight(z, 1);
	z->area_last = area(z, (double)n + 0.5);
	z->squeeze = 2 - area_inverse(z, area(z, 2.5) - weight(z, 2));
	return 0;
}

uint64_t zipf_sample(const struct zipf *z, zipf_uniform_fn *uniform, void *rng)
{
	const double span = z->area_first - z->area_last;

	for (;;) {
		const double v = z->area_last + uniform(rng) * span;
		const double x = area_inverse(z, v);
		const double k = nearest_rank(z, x);

		if (k - x <= z->squeeze || v >= area(z, k + 0.5) - weight(z, k))
			return (uint64_t)k;
	}
}
