/* Rejection-inversion Zipf sampling (see zipf.h). */
#include <math.h>

#include "zipf.h"

/* log1p(x) / x, continuous at 0. */
static double helper1(double x)
{
	if (fabs(x) > 1e-8)
		return log1p(x) / x;
	return 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

/* expm1(x) / x, continuous at 0. */
static double helper2(double x)
{
	if (fabs(x) > 1e-8)
		return expm1(x) / x;
	return 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

/* H(x) = integral of h, with h(x) = x^-theta. */
static double h_integral(const struct zipf *z, double x)
{
	double lx = log(x);

	return helper2((1 - z->theta) * lx) * lx;
}

static double h(const struct zipf *z, double x)
{
	return exp(-z->theta * log(x));
}

static double h_integral_inv(const struct zipf *z, double x)
{
	double t = x * (1 - z->theta);

	if (t < -1)
		t = -1;
	return exp(helper1(t) * x);
}

int zipf_init(struct zipf *z, uint64_t n, double theta)
{
	if (n < 1 || !(theta >= 0) || theta > 100)
		return -1;
	z->n = n;
	z->theta = theta;
	z->h_x1 = h_integral(z, 1.5) - 1;
	z->h_n = h_integral(z, (double)n + 0.5);
	z->s = 2 - h_integral_inv(z, h_integral(z, 2.5) - h(z, 2));
	return 0;
}

uint64_t zipf_sample(const struct zipf *z, zipf_uniform_fn *uniform, void *rng)
{
	for (;;) {
		double u = z->h_n + uniform(rng) * (z->h_x1 - z->h_n);
		double x = h_integral_inv(z, u);
		double kd = floor(x + 0.5);
		uint64_t k;

		if (kd < 1)
			kd = 1;
		else if (kd > (double)z->n)
			kd = (double)z->n;
		k = (uint64_t)kd;
		if (kd - x <= z->s || u >= h_integral(z, kd + 0.5) - h(z, kd))
			return k;
	}
}
