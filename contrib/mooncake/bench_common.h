// What the Mooncake drivers (inproc_bench.cpp, balance_bench.cpp) share.
// The key sequence: KEYS names bench-key-<i>, and kSequence indexes into
// them drawn before timing, uniform or Zipf 0.99. It is the sequence of
// libmcrepl's own balance bench (bench/master/bench_store_load.c,
// bench_zipf_sequence(), the same arithmetic), so Mooncake and our master
// read the same keys bit for bit: splitmix64 seeded 42; the ranks
// scattered over the key space by a Fisher-Yates shuffle (so hot keys
// share no shard); Zipf by inverse CDF (the first rank whose cumulative
// weight 1 / pow(rank, 0.99), summed in rank order, is >= u sum, u =
// (next >> 11) 2^-53). Uniform: next % KEYS. Every cell, mode, build and
// host reads the same keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace mcrepl_bench {

constexpr size_t kSequence = size_t{1} << 22;

struct Seq {
    std::vector<std::string> keys;
    std::vector<uint32_t> order; /* kSequence indexes into keys */
};

inline uint64_t SplitMix64(uint64_t& x) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

inline Seq MakeSequence(size_t n, bool zipf) {
    Seq s;
    s.keys.reserve(n);
    for (size_t i = 0; i < n; i++) {
        s.keys.push_back("bench-key-" + std::to_string(i));
    }
    uint64_t rng = 42;
    s.order.resize(kSequence);
    if (!zipf) {
        for (auto& x : s.order) x = uint32_t(SplitMix64(rng) % n);
        return s;
    }
    std::vector<double> cdf(n);
    std::vector<uint32_t> perm(n);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += 1.0 / std::pow(double(i + 1), 0.99);
        cdf[i] = sum;
        perm[i] = uint32_t(i);
    }
    for (size_t i = n - 1; i > 0; i--) {
        std::swap(perm[i], perm[SplitMix64(rng) % (i + 1)]);
    }
    for (auto& x : s.order) {
        const double u = double(SplitMix64(rng) >> 11) * 0x1p-53 * sum;
        const size_t r =
            std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
        x = perm[std::min(r, n - 1)];
    }
    return s;
}

// config.dynamic_replication_policy = p where the build has that field
// (a build without the patch ignores it).
template <typename C>
auto SetPolicy(C& c, const char* p, int)
    -> decltype(c.dynamic_replication_policy = p, void()) {
    c.dynamic_replication_policy = p;
}
template <typename C>
void SetPolicy(C&, const char*, long) {}

}  // namespace mcrepl_bench
