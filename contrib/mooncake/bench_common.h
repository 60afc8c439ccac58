// What the Mooncake drivers (inproc_bench.cpp, balance_bench.cpp) share.
// The key sequence: KEYS names bench-key-<i>, and kSequence indexes into
// them drawn before timing, uniform or Zipf 0.99 by inverse CDF, seeded
// (42), the ranks scattered over the key space so hot keys share no shard.
// Every cell, mode and build reads the same keys.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mcrepl_bench {

constexpr size_t kSequence = size_t{1} << 22;

struct Seq {
    std::vector<std::string> keys;
    std::vector<uint32_t> order; /* kSequence indexes into keys */
};

inline Seq MakeSequence(size_t n, bool zipf) {
    Seq s;
    s.keys.reserve(n);
    for (size_t i = 0; i < n; i++) {
        s.keys.push_back("bench-key-" + std::to_string(i));
    }
    std::mt19937_64 rng(42);
    s.order.resize(kSequence);
    if (!zipf) {
        std::uniform_int_distribution<uint32_t> u(0, n - 1);
        for (auto& x : s.order) x = u(rng);
        return s;
    }
    std::vector<double> cdf(n);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        sum += 1.0 / std::pow(double(i + 1), 0.99);
        cdf[i] = sum;
    }
    std::uniform_real_distribution<double> u(0, sum);
    std::vector<uint32_t> perm(n);
    for (size_t i = 0; i < n; i++) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    for (auto& x : s.order) {
        size_t r = std::lower_bound(cdf.begin(), cdf.end(), u(rng)) -
                   cdf.begin();
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
