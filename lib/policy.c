/* The self-tuning policy (see lib/policy.h). Pure: no allocation, no
 * globals, no clock. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "mcrepl/admit.h"
#include "policy.h"

uint32_t mcr_policy_replica_cap(const mcrepl_config *cfg,
				const mcrepl_cluster_view *cl)
{
	if (!mcr_policy_is_auto(cfg, cl))
		return cfg->max_memory_replicas;
	return cfg->auto_max_replicas ? cfg->auto_max_replicas : cl->nodes;
}

uint32_t mcr_policy_want_replicas(const mcrepl_config *cfg,
				  const mcrepl_cluster_view *cl, uint32_t count)
{
	uint32_t cap = mcr_policy_replica_cap(cfg, cl), share;
	double k0;
	uint64_t k;

	if (count < mcr_threshold(cfg, NULL, 1) || cap <= 1)
		return 1;
	if (!mcr_policy_is_auto(cfg, cl))
		return cap;
	/* the largest k = r - 1 with mcr_threshold(k) <= count */
	share = mcr_policy_share_count(cfg, cl);
	k0 = sqrt((double)count) - 1.0;
	k0 = (k0 * k0 - 1.0) / share;
	k = k0 > 0 ? (uint64_t)k0 : 0;
	if (k > cap)
		k = cap;
	while (k + 1 < cap && mcr_threshold(cfg, cl, (uint32_t)k + 1) <= count)
		k++;
	while (k >= 1 && mcr_threshold(cfg, cl, (uint32_t)k) > count)
		k--;
	return k + 1 > cap ? cap : (uint32_t)k + 1;
}

static const mcrepl_segment_view *find_segment(const mcrepl_segment_view *s,
					       size_t n, mcrepl_segment_id id)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].id.v == id.v)
			return &s[i];
	return NULL;
}

void mcr_policy_balance(const mcrepl_segment_view *segments, size_t n_segments,
			const mcrepl_replica_view *replicas, size_t n_replicas,
			mcrepl_balance *out)
{
	bool found = false;

	if (!out)
		return;
	out->key_load = out->load_sum = 0;
	out->segments = 0;
	out->held = out->settled = false;
	if (!segments)
		n_segments = 0;
	for (size_t i = 0; i < n_segments; i++) {
		if (!segments[i].id.v || !segments[i].capacity)
			continue;
		out->load_sum += segments[i].read_load;
		out->segments++;
	}
	for (size_t i = 0; replicas && i < n_replicas; i++) {
		const mcrepl_segment_view *s;

		if (!replicas[i].readable)
			continue;
		s = find_segment(segments, n_segments, replicas[i].segment);
		if (s && (!found || s->read_load < out->key_load))
			out->key_load = s->read_load;
		found |= s != NULL;
	}
}

double mcr_policy_recent_low(uint32_t recent, uint32_t recent_buckets,
			     double span, double z)
{
	double f, est, low;

	if (!recent_buckets || !(span >= (double)recent_buckets))
		return 0;
	f = span / (double)recent_buckets;
	est = (double)recent * f;
	low = est - z * sqrt(est * f);
	return low > 0 ? low : 0;
}

uint32_t mcr_policy_rising(uint32_t count, uint32_t recent,
			   uint32_t recent_buckets, double span, double z)
{
	double low = mcr_policy_recent_low(recent, recent_buckets, span, z);

	if (low <= (double)count)
		return count;
	return low >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)low;
}

double mcr_policy_noise_z(uint32_t segments)
{
	/* exp(-z^2 / 2) = 1 / (100 n): the chance that the largest of n
	 * normal counts passes z deviations is below n phi(z) / z, under
	 * 0.1 % (z = 3.46 at 4 segments, 3.66 at 8, 4.80 at 1,024) */
	return sqrt(2.0 * log(100.0 * (double)(segments ? segments : 1)));
}

/* The excess over the mean that sampling noise and the tolerance allow:
 * max(t mean, z sqrt(mean)). */
/* max(t x, z sqrt(x)): the band of a load summed to x (t 0 without cfg). */
static double band_z(const mcrepl_config *cfg, double x, double z)
{
	double a = (cfg ? cfg->balance_tolerance : 0) * x, b = z * sqrt(x);

	return a > b ? a : b;
}

static double band(const mcrepl_config *cfg, double mean, uint32_t segments)
{
	return band_z(cfg, mean, mcr_policy_noise_z(segments));
}

/* The mean segment load of b; 0 when unknown. */
static double balance_mean(const mcrepl_balance *b)
{
	if (!b || !b->segments || !b->load_sum)
		return 0;
	return (double)b->load_sum / (double)b->segments;
}

bool mcr_policy_overloaded(const mcrepl_config *cfg, const mcrepl_balance *b)
{
	double mean;

	mean = balance_mean(b);
	if (!(mean > 0))
		return false;
	/* refused within the window: the band plus the noise of one
	 * segment's count beyond it (hysteresis), twice that once the key's
	 * refusals have settled */
	return (double)b->key_load - mean >
	       band(cfg, mean, b->segments) +
		   (b->held ? (b->settled ? 2.0 : 1.0) *
				  mcr_policy_noise_z(b->segments) * sqrt(mean)
			    : 0.0);
}

bool mcr_policy_worth(const mcrepl_config *cfg, const mcrepl_balance *b,
		      uint32_t count, uint32_t readable)
{
	double mean;

	mean = balance_mean(b);
	if (!(mean > 0))
		return false;
	/* the reads the copy takes over, count / (r + 1) with count less two
	 * standard deviations, against half the band: a copy that cannot
	 * move half of what the gate tolerates is one of many small steps
	 * where the oracle makes one large one, and a key that reaches it
	 * only by a chance burst is not hot enough */
	return 2.0 * ((double)count - 2.0 * sqrt((double)count)) >=
	       (double)((readable ? readable : 1) + 1) *
		   band(cfg, mean, b->segments);
}

double mcr_policy_share_excess(const mcrepl_cluster_view *cl, uint32_t count,
			       uint32_t readable)
{
	double c = count, w, q, d, rest, var;

	if (!cl || !cl->nodes)
		return 0;
	/* the key's excess over r shares, d = c - q W with q = r / N, and
	 * Var d = c (1 - q)^2 + (W - c) q^2 (the key's count and the rest
	 * of the cluster's, Poisson) */
	w = (double)cl->window_reads;
	q = (double)(readable ? readable : 1) / (double)cl->nodes;
	rest = w > c ? w - c : 0;
	d = c - q * (c + rest);
	var = c * (1 - q) * (1 - q) + rest * q * q;
	if (!(d > 0))
		return 0;
	return var > 0 ? d / sqrt(var) : HUGE_VAL;
}

double mcr_policy_share_z(uint32_t nodes)
{
	double z = nodes > 1 ? sqrt(2.0 * log((double)nodes)) : 0;

	return z > 2.0 ? z : 2.0;
}

mcrepl_balance mcr_policy_capped_mean(const mcrepl_cluster_view *cl,
				      const mcrepl_balance *b)
{
	mcrepl_balance g = {0};
	double cap;

	if (!b)
		return g;
	g = *b;
	if (!cl || !cl->nodes)
		return g;
	cap = (double)cl->window_reads * g.segments / cl->nodes;
	/* over the reads served, but within MCREPL_POLICY_MEAN_SLACK of
	 * them: loads farther off are in another unit (a host's load
	 * period other than the heat window), and its own mean stands */
	if (cap >= 1.0 && (double)g.load_sum > cap &&
	    (double)g.load_sum <= MCREPL_POLICY_MEAN_SLACK * cap)
		g.load_sum = (uint64_t)cap;
	return g;
}

bool mcr_policy_helps(const mcrepl_config *cfg, const mcrepl_cluster_view *cl,
		      const mcrepl_balance *b, uint32_t count,
		      uint32_t readable)
{
	mcrepl_balance g;
	double s;

	if (!cfg || !(cfg->balance_tolerance > 0) || !cl || !cl->nodes)
		return true;
	/* the mean capped only for a key that carries half a fair share on
	 * each replica: its holders' load is mostly its own, so the rise that
	 * lifted the loads' sum is its own too; for the other keys the
	 * lifted loads stand (capped, every node a flash crowd's key lifted
	 * looked overloaded to every key on it: 2.8 x the copies at 64 nodes) */
	if (b && 2.0 * count * cl->nodes >=
		     (double)(readable ? readable : 1) * cl->window_reads) {
		g = mcr_policy_capped_mean(cl, b);
		b = &g;
	}
	if (mcr_policy_overloaded(cfg, b) &&
	    mcr_policy_worth(cfg, b, count, readable))
		return true;
	/* the key alone fills a node's fair share per replica: by two
	 * deviations, or by the noise of the cluster's keys once its run of
	 * refusals has settled */
	s = mcr_policy_share_excess(cl, count, readable);
	return s >= (b && b->settled ? mcr_policy_share_z(cl->nodes) : 2.0);
}

void mcr_policy_evidence_add(mcrepl_evidence *ev, const mcrepl_balance *b,
			     uint32_t count, uint64_t now_ms,
			     uint64_t window_ms)
{
	const double w = MCREPL_POLICY_EVIDENCE_WINDOWS;
	double mean, keep;

	mean = balance_mean(b);
	if (!ev || !(mean > 0))
		return;
	if (ev->at_ms && now_ms < ev->at_ms + window_ms)
		return;
	if (ev->at_ms && now_ms >= ev->at_ms + 2 * window_ms)
		memset(ev, 0, sizeof(*ev)); /* a window without a refusal */
	keep = ev->n + 1 > w ? (w - 1) / w : 1.0;
	ev->low = ev->low * keep + ((double)b->key_load - mean);
	ev->mean = ev->mean * keep + mean;
	ev->count = ev->count * keep + (double)count;
	ev->n = ev->n * keep + 1;
	ev->at_ms = now_ms ? now_ms : 1;
}

void mcr_policy_evidence_granted(mcrepl_evidence *ev, uint32_t readable)
{
	double r = readable ? readable : 1;

	if (ev && ev->n > 0)
		ev->low -= ev->count / (r * (r + 1));
}

bool mcr_policy_evidence_helps(const mcrepl_config *cfg,
			       const mcrepl_evidence *ev, uint32_t segments,
			       uint32_t readable)
{
	double r = readable ? readable : 1, m, z, hold;

	if (!cfg || !ev || ev->n < 2 || !segments || !(ev->mean > 0))
		return false;
	m = ev->mean / ev->n;
	if (band(cfg, m, segments) <=
	    MCREPL_POLICY_EVIDENCE_NOISE * cfg->balance_tolerance * m)
		return false; /* one window's gate sees enough */
	/* every look at the sums is a test: z for segments x windows */
	z = mcr_policy_noise_z(segments * MCREPL_POLICY_EVIDENCE_WINDOWS);
	/* a full horizon of refusals: the key sits near the line, and
	 * asks for half as much again (hysteresis) */
	hold = ev->n >= MCREPL_POLICY_EVIDENCE_WINDOWS
		   ? MCREPL_POLICY_EVIDENCE_HOLD
		   : 1.0;
	return ev->low >= hold * MCREPL_POLICY_EVIDENCE_EXCESS * ev->mean &&
	       r * ev->low > hold * band_z(cfg, r * ev->mean, z) &&
	       2.0 * (ev->count - 2.0 * sqrt(ev->count)) >=
		   (r + 1) * hold * band_z(cfg, ev->mean, z);
}

bool mcr_policy_should_retire(const mcrepl_config *cfg,
			      const mcrepl_cluster_view *cl, uint32_t count,
			      uint32_t readable)
{
	double c = count;

	if (!mcr_policy_is_auto(cfg, cl) || readable < 2)
		return false;
	/* under half the heat the replicas but one stand for, with two
	 * standard deviations of a Poisson count to spare */
	return 2.0 * (c + 2.0 * sqrt(c)) <
	       mcr_threshold_keep(cfg, cl, readable);
}

bool mcr_policy_should_retire_in_domain(const mcrepl_config *cfg,
					const mcrepl_cluster_view *cl,
					uint32_t count, uint32_t readable)
{
	double c = count;

	if (!mcr_policy_is_auto(cfg, cl) || !cfg->domain_aware || readable == 0)
		return false;
	if (readable >= 2)
		return mcr_policy_should_retire(cfg, cl, count, readable);
	/* the domain's only copy: under half the cross-domain count that
	 * admitted it, with two standard deviations to spare */
	return 2.0 * (c + 2.0 * sqrt(c)) < mcr_threshold_keep(cfg, cl, 1);
}

mcrepl_status mcr_policy_retire_pick(const char *tenant, const char *key,
				     const mcrepl_replica_view *replicas,
				     const uint64_t *load, size_t n,
				     size_t *pick)
{
	bool found = false;
	uint64_t best_load = 0, best_score = 0;

	if (!pick || (n && !replicas))
		return MCREPL_EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint64_t l = load ? load[i] : 0, sc;

		if (!replicas[i].readable || !replicas[i].dynamic)
			continue;
		sc = mcrepl_rendezvous(tenant, key, replicas[i].segment.v, 0);
		if (!found || l > best_load ||
		    (l == best_load && sc < best_score)) {
			found = true;
			best_load = l;
			best_score = sc;
			*pick = i;
		}
	}
	return found ? MCREPL_OK : MCREPL_ENOENT;
}

void mcr_policy_project(uint64_t key_load, uint32_t readable,
			mcrepl_projection *out)
{
	uint64_t r = readable ? readable : 1;

	if (!out)
		return;
	out->to_target = key_load / (r + 1);
	out->from_each = key_load / (r * (r + 1));
}

void mcr_policy_project_level(uint64_t key_load, uint32_t readable,
			      uint64_t level, uint64_t target_load,
			      mcrepl_projection *out)
{
	uint64_t r = readable ? readable : 1, gap, to;

	if (!out)
		return;
	gap = level > target_load ? level - target_load : 0;
	/* r gap / (r + 1) without overflow */
	to = gap / (r + 1) * r + gap % (r + 1) * r / (r + 1);
	if (to > key_load)
		to = key_load;
	out->to_target = to;
	/* rounded up: the engine caps the target's gain at what the r
	 * replicas give up, and at r in the hundreds (a flash crowd's key)
	 * to / r rounded down lost up to r - 1 reads of every copy's
	 * projection, so the newest replica looked light and closed the gate */
	out->from_each = to / r + (to % r != 0);
}
