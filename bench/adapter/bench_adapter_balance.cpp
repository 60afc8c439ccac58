// bench_adapter_balance: read balance of the adapter's Mooncake-shaped
// master (tests/adapter/minimaster.cpp), the workload of our master's
// bench/master/bench_store_balance.c and of the balance driver that ran
// inside Mooncake, so the hosts compare on one workload: SEGMENTS
// segments, each its own client and node, KEYS 1 KiB objects, one replica,
// key i on segment i % SEGMENTS, Zipf 0.99 reads at RATE reads/s for
// SECONDS from the one read sequence (bench_zipf_sequence()'s arithmetic,
// seed 42: the same keys in the same order), on a simulated clock (read i
// at i * 1000 / RATE ms; nothing sleeps, no threads).
//
//   bench_adapter_balance [--segments N] [--keys K] [--rate R]
//                         [--seconds S] [--tick_ms T] [--modes off,auto]
//
// Per read: GetReplicaList; the reader takes the first replica of the list
// (Mooncake's client does) and the read is counted on its segment in the
// interval of its place in the schedule (one second: RATE reads). Every
// millisecond the admission loop's turn (AdmissionStep: triggers proposed,
// the engine ticked when there were any or T ms passed, default 100, the
// period of Mooncake's admission loop); every 10 ms each client fetches
// its tasks and runs each REPLICA_COPY at once (CopyStart, CopyEnd,
// MarkTaskToComplete); every 100 ms the cleanup loop's sweep. Modes: off;
// rfc (enforce, policy rfc); auto (enforce, the defaults).
// One line per mode:
//   balance mode=<m> segments=<n> keys=<k> rate=<r> seconds=<s>
//   steady_max_mean=<x> copies=<c> copy_failures=<f>
// steady_max_mean: the median over the last half of the intervals of the
// busiest segment's reads over the mean (as mcrepl-sim reports it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "minimaster.hpp"

namespace
{

using namespace mini;

const std::string kTenant = "default";

struct Shape {
	size_t segments = 8, keys = 100000, seconds = 30;
	uint64_t rate = 100000, tick_ms = 100;
	std::string modes = "off,auto";
};

uint64_t SplitMix(uint64_t &x)
{
	uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

// m Zipf(theta) draws of n keys: the arithmetic of bench_zipf_sequence()
// (bench/master/bench_store_load.c), so both hosts read the same keys.
std::vector<uint32_t> ZipfSequence(size_t m, size_t n, double theta,
				   uint64_t seed)
{
	std::vector<double> cdf(n);
	std::vector<uint32_t> perm(n), seq(m);
	double sum = 0;

	for (size_t i = 0; i < n; i++) {
		sum += 1.0 / std::pow(double(i + 1), theta);
		cdf[i] = sum;
		perm[i] = uint32_t(i);
	}
	for (size_t i = n - 1; i > 0; i--)
		std::swap(perm[i], perm[SplitMix(seed) % (i + 1)]);
	for (size_t k = 0; k < m; k++) {
		const double u = double(SplitMix(seed) >> 11) * 0x1p-53 * sum;
		const size_t r =
		    std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
		seq[k] = perm[std::min(r, n - 1)];
	}
	return seq;
}

// Median over the last half of the intervals of max/mean per segment.
double Steady(const std::vector<uint64_t> &counts, size_t segs,
	      size_t intervals)
{
	std::vector<double> v;

	for (size_t i = intervals / 2; i < intervals; i++) {
		uint64_t sum = 0, max = 0;
		for (size_t k = 0; k < segs; k++) {
			sum += counts[i * segs + k];
			max = std::max(max, counts[i * segs + k]);
		}
		if (sum)
			v.push_back(double(max) * double(segs) / double(sum));
	}
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	const size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Run {
	uint64_t now = 1000000;
	std::vector<UUID> clients;
	uint64_t copies = 0, copy_failures = 0;
};

// Each client's tasks, run as Mooncake's task executor runs them.
void RunCopies(MiniMaster &m, Run &r)
{
	for (const UUID &client : r.clients) {
		auto tasks = m.FetchTasks(client, 64);
		if (!tasks.has_value())
			continue;
		for (const TaskAssignment &t : *tasks) {
			const ReplicaCopyPayload &p = t.payload;
			const UUID lease{p.dynamic_replication_lease_id_high,
					 p.dynamic_replication_lease_id_low};
			const bool ok =
			    m.CopyStart(client, p.key, p.tenant_id, p.source,
					p.targets, lease,
					p.dynamic_replication_version_epoch)
				.has_value() &&
			    m.CopyEnd(client, p.key, p.tenant_id, lease,
				      p.dynamic_replication_version_epoch)
				.has_value();
			(ok ? r.copies : r.copy_failures)++;
			(void)m.MarkTaskToComplete(client, t.id, ok);
		}
	}
}

bool Load(MiniMaster &m, Run &r, const Shape &a,
	  const std::vector<std::string> &keys)
{
	for (size_t i = 0; i < a.segments; i++) {
		Segment seg;
		seg.id = UUID{0x5e6ULL, i + 1};
		seg.name = "seg-" + std::to_string(i);
		seg.size = 256ull << 20;
		seg.te_endpoint = seg.name;
		r.clients.push_back(UUID{0xc11eULL, i + 1});
		if (!m.MountSegment(seg, r.clients.back()).has_value())
			return false;
	}
	for (size_t i = 0; i < keys.size(); i++) {
		const UUID &client = r.clients[i % a.segments];
		const std::string seg = "seg-" + std::to_string(i % a.segments);
		if (!m.PutStart(client, keys[i], kTenant, 1024, seg)
			 .has_value() ||
		    !m.PutEnd(client, keys[i], kTenant).has_value())
			return false;
	}
	return true;
}

int RunMode(const std::string &mode, const Shape &a,
	    const std::vector<std::string> &keys,
	    const std::vector<uint32_t> &seq)
{
	const uint64_t total = uint64_t(a.seconds) * a.rate;
	std::vector<uint64_t> counts(a.seconds * a.segments, 0);
	MasterConfig cfg;
	Run r;
	uint64_t misses = 0;

	cfg.dynamic_replication_mode = mode == "off" ? "off" : "enforce";
	if (mode != "off")
		cfg.dynamic_replication_policy = mode;
	cfg.admission_tick_ms = a.tick_ms;
	MiniMaster m(cfg, [&r] { return r.now; });
	if (!m.ok() || !Load(m, r, a, keys)) {
		std::fprintf(stderr, "bench_adapter_balance: load failed: %s\n",
			     m.error().c_str());
		return 1;
	}
	const uint64_t t0 = r.now;
	uint64_t last_ms = t0;
	for (uint64_t i = 0; i < total; i++) {
		const uint64_t now = t0 + i * 1000 / a.rate;
		for (; last_ms < now; last_ms++) { // each ms passed
			r.now = last_ms + 1;
			m.AdmissionStep();
			if (r.now % 10 == 0)
				RunCopies(m, r);
			if (r.now % 100 == 0)
				m.SweepLeases();
		}
		auto got = m.GetReplicaList(keys[seq[i % seq.size()]], kTenant);
		if (!got.has_value() || got->replicas.empty()) {
			misses++;
			continue;
		}
		const std::string &seg = got->replicas[0].segment;
		const size_t k = std::strtoull(seg.c_str() + 4, nullptr, 10);
		counts[(i / a.rate) * a.segments + k]++;
	}
	if (misses) {
		std::fprintf(stderr,
			     "bench_adapter_balance: %llu reads missed\n",
			     (unsigned long long)misses);
		return 1;
	}
	std::printf(
	    "balance mode=%s segments=%zu keys=%zu rate=%llu "
	    "seconds=%zu steady_max_mean=%.4f copies=%llu "
	    "copy_failures=%llu\n",
	    mode.c_str(), a.segments, a.keys, (unsigned long long)a.rate,
	    a.seconds, Steady(counts, a.segments, a.seconds),
	    (unsigned long long)r.copies, (unsigned long long)r.copy_failures);
	std::fflush(stdout);
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	Shape a;

	for (int i = 1; i + 1 < argc; i += 2) {
		const std::string f = argv[i], v = argv[i + 1];
		if (f == "--segments")
			a.segments = std::strtoull(v.c_str(), nullptr, 10);
		else if (f == "--keys")
			a.keys = std::strtoull(v.c_str(), nullptr, 10);
		else if (f == "--rate")
			a.rate = std::strtoull(v.c_str(), nullptr, 10);
		else if (f == "--seconds")
			a.seconds = std::strtoull(v.c_str(), nullptr, 10);
		else if (f == "--tick_ms")
			a.tick_ms = std::strtoull(v.c_str(), nullptr, 10);
		else if (f == "--modes")
			a.modes = v;
	}
	if (!a.segments || a.segments > 1024 || a.keys < a.segments ||
	    !a.rate || a.seconds < 2 || a.seconds > 3600 || !a.tick_ms) {
		std::fprintf(
		    stderr, "usage: bench_adapter_balance [--segments 1..1024] "
			    "[--keys K] [--rate R] [--seconds 2..3600] "
			    "[--tick_ms T] [--modes off,rfc,auto]\n");
		return 2;
	}
	std::vector<std::string> keys;
	for (size_t i = 0; i < a.keys; i++)
		keys.push_back("bench-key-" + std::to_string(i));
	const std::vector<uint32_t> seq =
	    ZipfSequence(size_t(1) << 22, a.keys, 0.99, 42);
	int rc = 0;
	for (size_t at = 0; at <= a.modes.size() && !rc;) {
		const size_t comma =
		    std::min(a.modes.find(',', at), a.modes.size());
		const std::string mode = a.modes.substr(at, comma - at);
		at = comma + 1;
		if (mode != "off" && mode != "rfc" && mode != "auto") {
			std::fprintf(stderr, "--modes: unknown mode '%s'\n",
				     mode.c_str());
			return 2;
		}
		rc = RunMode(mode, a, keys, seq);
	}
	return rc;
}
