// Read balance inside Mooncake's master: the patched MasterService
// in-process with N segments (each its own client and node), Zipf 0.99
// reads routed as Mooncake's client routes them, and the copies the
// master asks for executed by this driver. Built by contrib/mooncake/
// bench.sh like inproc_bench.cpp (master_bench's command lines).
//
//   balance_bench SEGMENTS KEYS RATE SECONDS
//
// Modes (MODES=<m,m,...> in the environment, default off,rfc,auto):
//   off   dynamic_replication_mode=off
//   rfc   enforce, dynamic_replication_policy=rfc (the absolute threshold)
//   auto  enforce, the default policy
// Each mode has its own MasterService, loaded alike (KEYS 1 KiB objects,
// key i on segment i % SEGMENTS, one replica), and they run side by side
// in this process for SECONDS. The load and the read sequence
// (bench_common.h) are those of libmcrepl's bench/master/
// bench_store_balance.c, so mode off gives our master the same figure:
//   - a reader thread per mode reads RATE keys a second from the Zipf
//     sequence (bench_common.h), paced by the clock, with GetReplicaList; a
//     read goes to the first COMPLETE replica of the list (Mooncake's
//     client, Client::GetPreferredReplica with no local segment, takes
//     replica_list[0]) and is counted on that replica's segment, in the
//     interval of its place in the schedule (interval i: reads i*RATE ..
//     (i+1)*RATE - 1, one second of schedule each);
//   - a copier thread per mode polls FetchTasks of every segment's client
//     every 10 ms and runs each REPLICA_COPY task as the client's task
//     executor does (CopyStart, CopyEnd, MarkTaskToComplete; the copy of
//     the bytes is instant here).
// One line per mode:
//   balance mode=<m> segments=<n> keys=<k> rate=<r> seconds=<s>
//   steady_max_mean=<x> copies=<c> copy_failures=<f> behind_s=<b>
// steady_max_mean: the median over the last half of the intervals of
// (reads of the busiest segment) / (mean reads per segment), as mcrepl-sim
// reports it; behind_s: how far the reader ended behind its schedule
// (a loaded machine; the intervals are still RATE reads each).
#include <glog/logging.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "master_service.h"

namespace {

using namespace mooncake;

constexpr size_t kSegmentSize = size_t{256} << 20;
constexpr size_t kObjectSize = 1024;

struct Mode {
    std::string name;
    std::unique_ptr<MasterService> svc;
    std::vector<UUID> clients; /* segment i's client */
    std::vector<uint64_t> counts; /* [interval * segments + segment] */
    std::atomic<uint64_t> copies{0}, copy_failures{0}, read_errors{0};
    double behind_s = 0;
};

std::string SegmentName(size_t i) { return "seg-" + std::to_string(i); }

bool Load(Mode& m, size_t segments, const mcrepl_bench::Seq& s) {
    for (size_t i = 0; i < segments; i++) {
        Segment seg;
        seg.id = generate_uuid();
        seg.name = SegmentName(i);
        seg.base = 0x100000000000ULL + i * kSegmentSize;
        seg.size = kSegmentSize;
        seg.te_endpoint = seg.name;
        m.clients.push_back(generate_uuid());
        if (!m.svc->MountSegment(seg, m.clients.back()).has_value()) {
            return false;
        }
    }
    ReplicateConfig rc;
    rc.replica_num = 1;
    for (size_t i = 0; i < s.keys.size(); i++) {
        const UUID& client = m.clients[i % segments];
        rc.preferred_segment = SegmentName(i % segments);
        if (!m.svc->PutStart(client, s.keys[i], TenantId::Default(),
                             kObjectSize, rc)
                 .has_value() ||
            !m.svc->PutEnd(client, s.keys[i], TenantId::Default(),
                           ReplicaType::MEMORY)
                 .has_value()) {
            return false;
        }
    }
    return true;
}

// The segment a reader of `key` reads from: the first COMPLETE replica's
// (a MEMORY replica's endpoint is its segment's name, seg-<i>); -1 if none.
long RoutedSegment(MasterService& svc, const std::string& key) {
    auto r = svc.GetReplicaList(key, TenantId::Default());
    if (!r.has_value()) return -1;
    for (const auto& d : r->replicas) {
        if (d.status != ReplicaStatus::COMPLETE) continue;
        const auto* mem = std::get_if<MemoryDescriptor>(&d.descriptor_variant);
        if (!mem) return -1;
        const std::string& ep = mem->buffer_descriptor.transport_endpoint_;
        return ep.rfind("seg-", 0) == 0 ? atol(ep.c_str() + 4) : -1;
    }
    return -1;
}

void Reader(Mode& m, const mcrepl_bench::Seq& s, size_t segments,
            uint64_t rate, uint64_t total, std::atomic<bool>& stop) {
    const auto t0 = std::chrono::steady_clock::now();
    uint64_t done = 0;
    while (done < total && !stop.load(std::memory_order_relaxed)) {
        const double el = std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count();
        const uint64_t due = std::min<uint64_t>(total, el * rate);
        if (done >= due) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        for (; done < due; done++) {
            const std::string& key =
                s.keys[s.order[done & (mcrepl_bench::kSequence - 1)]];
            const long seg = RoutedSegment(*m.svc, key);
            if (seg < 0 || size_t(seg) >= segments) {
                m.read_errors++;
                continue;
            }
            m.counts[(done / rate) * segments + seg]++;
        }
    }
    m.behind_s = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                     .count() -
                 double(total) / rate;
}

// One REPLICA_COPY task run as Client::ExecuteTask runs it.
void RunCopy(Mode& m, const UUID& client, const TaskAssignment& task) {
    TaskCompleteRequest done;
    done.id = task.id;
    done.status = TaskStatus::FAILED;
    if (task.type == TaskType::REPLICA_COPY) {
        ReplicaCopyPayload p;
        struct_json::from_json(p, task.payload);
        const UUID lease{p.dynamic_replication_lease_id_high,
                         p.dynamic_replication_lease_id_low};
        const TenantId tenant(p.tenant_id);
        auto start = m.svc->CopyStart(client, p.key, tenant, p.source,
                                      p.targets, lease,
                                      p.dynamic_replication_version_epoch);
        if (start.has_value() &&
            m.svc->CopyEnd(client, p.key, tenant, lease,
                           p.dynamic_replication_version_epoch)
                .has_value()) {
            done.status = TaskStatus::SUCCESS;
        }
    }
    (done.status == TaskStatus::SUCCESS ? m.copies : m.copy_failures)++;
    (void)m.svc->MarkTaskToComplete(client, done);
}

void Copier(Mode& m, std::atomic<bool>& stop) {
    while (!stop.load(std::memory_order_relaxed)) {
        for (const UUID& client : m.clients) {
            auto tasks = m.svc->FetchTasks(client, 64);
            if (!tasks.has_value()) continue;
            for (const auto& t : *tasks) RunCopy(m, client, t);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// Median over the last half of the intervals of max/mean per segment.
double SteadyMaxMean(const Mode& m, size_t segments, size_t intervals) {
    std::vector<double> v;
    for (size_t i = intervals / 2; i < intervals; i++) {
        const uint64_t* c = &m.counts[i * segments];
        uint64_t sum = 0, max = 0;
        for (size_t k = 0; k < segments; k++) {
            sum += c[k];
            max = std::max(max, c[k]);
        }
        if (sum) v.push_back(double(max) * segments / sum);
    }
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}


}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SEGMENTS KEYS RATE SECONDS\n", argv[0]);
        return 2;
    }
    google::InitGoogleLogging(argv[0]);
    FLAGS_minloglevel = 3;
    const size_t segments = strtoull(argv[1], nullptr, 10);
    const size_t keys = strtoull(argv[2], nullptr, 10);
    const uint64_t rate = strtoull(argv[3], nullptr, 10);
    const size_t seconds = strtoull(argv[4], nullptr, 10);
    if (segments < 1 || segments > 1024 || keys < segments || rate < 1 ||
        seconds < 2) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    std::vector<std::unique_ptr<Mode>> modes;
    const char* env = getenv("MODES");
    const std::string list = env ? env : "off,rfc,auto";
    for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        auto m = std::make_unique<Mode>();
        m->name = list.substr(at, comma - at);
        at = comma + 1;
        MasterServiceConfig config;
        if (m->name == "off") {
            config.dynamic_replication_mode = "off";
        } else if (m->name == "rfc" || m->name == "auto") {
            config.dynamic_replication_mode = "enforce";
            mcrepl_bench::SetPolicy(config, m->name.c_str(), 0);
        } else {
            fprintf(stderr, "MODES: unknown mode '%s'\n", m->name.c_str());
            return 2;
        }
        config.client_live_ttl_sec = 3600;  // the driver never pings
        m->svc = std::make_unique<MasterService>(config);
        modes.push_back(std::move(m));
    }
    const mcrepl_bench::Seq s = mcrepl_bench::MakeSequence(keys, true);
    for (auto& m : modes) {
        m->counts.assign(seconds * segments, 0);
        if (!Load(*m, segments, s)) {
            fprintf(stderr, "load failed (mode %s)\n", m->name.c_str());
            return 1;
        }
    }
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (auto& m : modes) {
        threads.emplace_back(Reader, std::ref(*m), std::cref(s), segments,
                             rate, uint64_t(seconds) * rate, std::ref(stop));
    }
    std::vector<std::thread> copiers;
    for (auto& m : modes) {
        copiers.emplace_back(Copier, std::ref(*m), std::ref(stop));
    }
    for (auto& t : threads) t.join();
    stop = true;
    for (auto& t : copiers) t.join();
    int rc = 0;
    for (auto& m : modes) {
        printf("balance mode=%s segments=%zu keys=%zu rate=%llu seconds=%zu "
               "steady_max_mean=%.4f copies=%llu copy_failures=%llu "
               "behind_s=%.1f\n",
               m->name.c_str(), segments, keys, (unsigned long long)rate,
               seconds, SteadyMaxMean(*m, segments, seconds),
               (unsigned long long)m->copies.load(),
               (unsigned long long)m->copy_failures.load(), m->behind_s);
        if (m->read_errors) {
            fprintf(stderr, "mode %s: %llu reads failed\n", m->name.c_str(),
                    (unsigned long long)m->read_errors.load());
            rc = 1;
        }
    }
    fflush(stdout);
    return rc;
}
