// In-process read path of Mooncake's master: MasterService::GetReplicaList in
// a loop, no RPC. Built by contrib/mooncake/bench.sh against an upstream and
// a patched build (same source, same flags), so the two are compared in one
// run.
//
//   inproc_bench KEYS DIST SECONDS THREADS...   (DIST: uniform | zipf)
//
// For each mode (off, observe, enforce; MODES=<m,m,...> in the environment
// picks which, in that order) one MasterService is built with two 4 GiB
// segments and KEYS 1 KiB objects, then each THREADS count reads for
// SECONDS.
// ROUNDS=<n> in the environment: all the modes' MasterServices are built
// first, then they take turns reading for SECONDS / n, n times, the order
// rotating each round (a paired design: on a small VM a whole process
// runs at one of two throughput levels 1.5x apart, whatever its mode; in
// one process the modes share the level, and slow spells fall on each).
// Without ROUNDS, one mode is built, warmed and measured after the other.
// One line per cell:
//   mode=<m> keys=<n> dist=<d> threads=<t> ops_per_s=<x> errors=<e>
//   read_cpu_ns=<c> other_cpu=<o>
// read_cpu_ns: CPU time of the reader threads per read (what the read path
// costs, whatever else runs); other_cpu: CPU the rest of the process took
// meanwhile (the admission thread, Mooncake's background threads), in
// cores.
// WARMUP=<s> in the environment: each mode first reads for that long with
// the most threads, unmeasured (under uniform load at ~1 M reads/s every
// key crosses the default 0.8 reads/s threshold within the first second, and
// the admission thread then judges them all at once; the warm-up lets the
// cells measure the steady state after that burst).
// POLICY=<auto|rfc> in the environment sets the patched master's
// dynamic_replication_policy (a build without that option ignores it).
// The key sequence: bench_common.h.
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include "bench_common.h"
#include "master_service.h"

namespace {

constexpr size_t kSegmentSize = size_t{4} << 30;
constexpr size_t kObjectSize = 1024;
using mcrepl_bench::kSequence;
using mcrepl_bench::MakeSequence;
using mcrepl_bench::Seq;

bool Load(mooncake::MasterService& svc, const Seq& s) {
    using namespace mooncake;
    UUID client = generate_uuid();
    for (int i = 0; i < 2; i++) {
        Segment seg;
        seg.id = generate_uuid();
        seg.name = "bench_segment_" + std::to_string(i);
        seg.base = 0x100000000000ULL + i * kSegmentSize;
        seg.size = kSegmentSize;
        seg.te_endpoint = seg.name;
        if (!svc.MountSegment(seg, client).has_value()) return false;
    }
    ReplicateConfig rc;
    rc.replica_num = 1;
    for (size_t i = 0; i < s.keys.size(); i++) {
        rc.preferred_segment = "bench_segment_" + std::to_string(i % 2);
        if (!svc.PutStart(client, s.keys[i], TenantId::Default(), kObjectSize,
                          rc)
                 .has_value() ||
            !svc.PutEnd(client, s.keys[i], TenantId::Default(),
                        ReplicaType::MEMORY)
                 .has_value())
            return false;
    }
    return true;
}

double CpuSeconds(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct Cell {
    double ops_per_s, read_cpu_ns, other_cpu;
    uint64_t errors;
};

Cell Run(mooncake::MasterService& svc, const Seq& s, int threads,
         double seconds) {
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> total{0}, errs{0};
    std::atomic<double> reader_cpu{0};
    std::vector<std::thread> ts;
    const double p0 = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID);
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; t++) {
        ts.emplace_back([&, t] {
            const double c0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
            uint64_t n = 0, e = 0;
            size_t i = (kSequence / threads) * t;
            while (!stop.load(std::memory_order_relaxed)) {
                for (int k = 0; k < 256; k++) {
                    const auto& key = s.keys[s.order[i++ & (kSequence - 1)]];
                    auto r = svc.GetReplicaList(key,
                                                mooncake::TenantId::Default());
                    e += !r.has_value();
                }
                n += 256;
            }
            total += n;
            errs += e;
            double c = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - c0, cur = 0;
            while (!reader_cpu.compare_exchange_weak(cur, cur + c)) {
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& th : ts) th.join();
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                              t0)
                    .count();
    const double proc = CpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - p0;
    return Cell{total / el, reader_cpu * 1e9 / total,
                (proc - reader_cpu) / el, errs};
}


uint64_t failed_reads = 0;

void Print(const std::string& mode, size_t keys, const char* dist,
           int threads, const Cell& c) {
    failed_reads += c.errors;
    printf("mode=%s keys=%zu dist=%s threads=%d ops_per_s=%.0f "
           "errors=%llu read_cpu_ns=%.0f other_cpu=%.2f\n",
           mode.c_str(), keys, dist, threads, c.ops_per_s,
           (unsigned long long)c.errors, c.read_cpu_ns, c.other_cpu);
    fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s KEYS uniform|zipf SECONDS THREADS...\n",
                argv[0]);
        return 2;
    }
    google::InitGoogleLogging(argv[0]);
    FLAGS_minloglevel = 3; // the task limit logs per refused task
    const size_t keys = strtoull(argv[1], nullptr, 10);
    const bool zipf = strcmp(argv[2], "zipf") == 0;
    const double seconds = atof(argv[3]);
    std::vector<std::string> modes;
    {
        const char* env = getenv("MODES");
        std::string list = env ? env : "off,observe,enforce";
        for (size_t at = 0; at <= list.size();) {
            size_t comma = std::min(list.find(',', at), list.size());
            std::string m = list.substr(at, comma - at);
            if (m != "off" && m != "observe" && m != "enforce") {
                fprintf(stderr, "MODES: unknown mode '%s'\n", m.c_str());
                return 2;
            }
            modes.push_back(m);
            at = comma + 1;
        }
    }
    Seq s = MakeSequence(keys, zipf);
    const double warmup = getenv("WARMUP") ? atof(getenv("WARMUP")) : 0;
    const int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 0;
    int most = 1;
    for (int a = 4; a < argc; a++) most = std::max(most, atoi(argv[a]));
    // Every mode's MasterService lives for the whole run when ROUNDS > 0.
    std::vector<std::unique_ptr<mooncake::MasterService>> svcs;
    for (const std::string& m : modes) {
        mooncake::MasterServiceConfig config;
        config.dynamic_replication_mode = m;
        // The driver never pings: its client must outlive every round.
        config.client_live_ttl_sec = 3600;
        if (const char* policy = getenv("POLICY")) {
            mcrepl_bench::SetPolicy(config, policy, 0);
        }
        auto svc = std::make_unique<mooncake::MasterService>(config);
        if (!Load(*svc, s)) {
            fprintf(stderr, "load failed (mode %s)\n", m.c_str());
            return 1;
        }
        if (warmup > 0) (void)Run(*svc, s, most, warmup);
        if (rounds <= 0) { // one mode after the other, each on its own
            for (int a = 4; a < argc; a++) {
                const int threads = atoi(argv[a]);
                Print(m, keys, argv[2], threads,
                      Run(*svc, s, threads, seconds));
            }
            continue;
        }
        svcs.push_back(std::move(svc));
    }
    // ROUNDS > 0: the modes take turns in slices of SECONDS / ROUNDS, the
    // order rotating each round, so a slow spell of the machine falls on
    // every mode alike; the cell is the mean of its slices.
    for (int a = 4; rounds > 0 && a < argc; a++) {
        const int threads = atoi(argv[a]);
        std::vector<Cell> sum(svcs.size(), Cell{0, 0, 0, 0});
        for (int r = 0; r < rounds; r++) {
            for (size_t j = 0; j < svcs.size(); j++) {
                const size_t i = (j + r) % svcs.size();
                const Cell c = Run(*svcs[i], s, threads, seconds / rounds);
                sum[i].ops_per_s += c.ops_per_s / rounds;
                sum[i].read_cpu_ns += c.read_cpu_ns / rounds;
                sum[i].other_cpu += c.other_cpu / rounds;
                sum[i].errors += c.errors;
            }
        }
        for (size_t i = 0; i < svcs.size(); i++) {
            Print(modes[i], keys, argv[2], threads, sum[i]);
        }
    }
    if (failed_reads) { // a lost object makes the figures meaningless
        fprintf(stderr, "%llu reads failed\n",
                (unsigned long long)failed_reads);
        return 1;
    }
    return 0;
}
