// The adapter's own checks: options and their errors by knob, wire ids
// and the incarnation, the outcome table, the read path, the metrics text,
// the sweep's and the retirement's callbacks, and the binding templates on
// Mooncake-shaped structs of our own.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <mcrepl/adapter_binding.hpp>

#include "harness.hpp"

namespace
{

bool Has(const std::string &text, const std::string &line)
{
	return text.find(line) != std::string::npos;
}

// An engine on a clock the check moves, with two segments.
struct Bench {
	uint64_t now = 5000000;
	std::unique_ptr<mcrepl::Engine> e;

	explicit Bench(mcrepl::Options o = Enforce())
	{
		std::string err;
		e = mcrepl::Engine::Create(o, &err, [this] { return now; });
		EXPECT_EQ(err, std::string());
		if (!e)
			return;
		for (const char *name : {"seg-a", "seg-b"}) {
			mcrepl::Segment s;
			s.name = name;
			s.host = std::string("host-") + name;
			s.client = mcrepl::WireId(7, name[4]);
			s.capacity = 1 << 30;
			EXPECT_EQ(e->SetSegment(s), MCREPL_OK);
		}
	}

	static mcrepl::Options Enforce()
	{
		mcrepl::Options o;
		o.mode = "enforce";
		return o;
	}

	// A granted lease of (t, key) from seg-a to seg-b, its task bound.
	mcrepl::Answer Grant(const std::string &key, uint64_t task_lo)
	{
		mcrepl::ObjectState st;
		mcrepl::Proposal p;
		for (int i = 0; i < 8; i++)
			e->OnRead(st, "t", key, nullptr, 0, i);
		p.id = mcrepl::WireId(1, task_lo);
		p.tenant = "t";
		p.key = key;
		p.object.exists = true;
		p.object.version = 3;
		p.object.size = 4096;
		p.object.readable_memory_replicas = 1;
		p.heat = e->HeatOf(st);
		p.replicas.push_back(mcrepl::NamedReplica{"seg-a"});
		p.preferred_target = "seg-b";
		mcrepl::Answer a = e->Propose(p);
		EXPECT_EQ(a.outcome, mcrepl::Outcome::Ok);
		EXPECT_EQ(e->BindTask(a.task.lease, mcrepl::WireId(9, task_lo)),
			  MCREPL_OK);
		a.task.task = mcrepl::WireId(9, task_lo);
		return a;
	}

	mcrepl::Fence FenceOf(const mcrepl::Answer &a, const std::string &key)
	{
		mcrepl::Fence f;
		f.tenant = "t";
		f.key = key;
		f.lease = a.task.lease;
		f.caller = mcrepl::WireId(7, 'a');
		f.version = a.task.version;
		f.source = a.task.source;
		f.targets = {a.task.target};
		f.object_version = 3;
		return f;
	}
};

} // namespace

ADAPTER(OptionsBuildDefaultsAndKnobs)
{
	mcrepl::Options o;
	const mcrepl::Built d = o.Build();
	ASSERT_TRUE(d.ok());
	EXPECT_EQ(d.Error(), std::string());
	EXPECT_EQ(d.config.mode, MCREPL_MODE_OFF);
	EXPECT_EQ(d.config.policy, MCREPL_POLICY_AUTO);
	EXPECT_EQ(mcrepl_config_threshold(&d.config), 8u);
	EXPECT_EQ(d.config.lease_ttl_ms, 30000u);

	o.mode = "enforce";
	o.policy = "rfc";
	o.heat_window_seconds = 2.5;
	o.admission_qps_threshold = 0.8;
	o.max_memory_replicas = 3;
	o.lease_ttl_seconds = 0.25;
	o.Set("dynamic_replication_hot_share", "0.02")
	    .Set("balance_tolerance", "0.1");
	const mcrepl::Built b = o.Build();
	ASSERT_TRUE(b.ok());
	EXPECT_EQ(b.config.mode, MCREPL_MODE_ENFORCE);
	EXPECT_EQ(b.config.policy, MCREPL_POLICY_RFC);
	EXPECT_EQ(b.config.heat_window_ms, 2500u);
	EXPECT_EQ(mcrepl_config_threshold(&b.config), 2u);
	EXPECT_EQ(b.config.max_memory_replicas, 3u);
	EXPECT_EQ(b.config.lease_ttl_ms, 250u);
	EXPECT_EQ(b.config.hot_share, 0.02);
	EXPECT_EQ(b.config.balance_tolerance, 0.1);
	EXPECT_EQ(mcrepl::Options::Text(0.8), std::string("0.8"));
	EXPECT_EQ(mcrepl::Options::Text(10), std::string("10"));
}

ADAPTER(OptionsBuildNamesTheBadKnob)
{
	struct Row {
		const char *name, *value;
		mcrepl_status status;
		const char *knob;
	} rows[] = {
	    {"mode", "sideways", MCREPL_EPARSE, "dynamic_replication_mode"},
	    {"policy", "best", MCREPL_EPARSE, "dynamic_replication_policy"},
	    {"window", "0", MCREPL_ERANGE,
	     "dynamic_replication_heat_window_seconds"},
	    {"qps", "-1", MCREPL_ERANGE,
	     "dynamic_replication_admission_qps_threshold"},
	    {"no_such_knob", "1", MCREPL_ENOENT, "no_such_knob"},
	    {"dynamic_replication_hot_share", "lots", MCREPL_EPARSE,
	     "dynamic_replication_hot_share"},
	};
	for (const Row &r : rows) {
		mcrepl::Options o;
		const std::string n = r.name;
		if (n == "mode")
			o.mode = r.value;
		else if (n == "policy")
			o.policy = r.value;
		else if (n == "window")
			o.heat_window_seconds = std::stod(r.value);
		else if (n == "qps")
			o.admission_qps_threshold = std::stod(r.value);
		else
			o.Set(r.name, r.value);
		const mcrepl::Built b = o.Build();
		EXPECT_EQ(b.status, r.status);
		EXPECT_EQ(b.knob, std::string(r.knob));
	}
	mcrepl::Options o;
	std::string err;
	o.mode = "sideways";
	EXPECT_TRUE(mcrepl::Engine::Create(o, &err) == nullptr);
	EXPECT_EQ(err, std::string("dynamic_replication_mode: cannot parse "
				   "value"));
}

ADAPTER(WireIdConvertsFromPairLikeTypes)
{
	const std::pair<uint64_t, uint64_t> p{1, 2};
	const std::array<uint64_t, 2> a{3, 4};
	const std::tuple<uint64_t, uint64_t> t{5, 6};
	const mcrepl::WireId wp = p, wa = a, wt = t;

	EXPECT_EQ(wp, mcrepl::WireId(1, 2));
	EXPECT_EQ(wa, mcrepl::WireId(3, 4));
	EXPECT_EQ(wt, mcrepl::WireId(5, 6));
	EXPECT_TRUE((wp.As<std::pair<uint64_t, uint64_t>>() == p));
	EXPECT_TRUE(mcrepl::WireId().empty());
	EXPECT_FALSE(wp.empty());
	const mcrepl_wire_id c = wa.c();
	EXPECT_EQ(mcrepl::WireId(c), wa);
	EXPECT_EQ(mcrepl::Engine::ClientId(mcrepl::WireId()).v, 0u);
	EXPECT_TRUE(mcrepl::Engine::ClientId(wp).v != 0);
}

ADAPTER(LeaseWireRoundTripAndIncarnationRefusal)
{
	mcrepl::Options o = Bench::Enforce();
	o.incarnation = 0xfeed;
	Bench b(o);
	ASSERT_TRUE(b.e != nullptr);
	EXPECT_EQ(b.e->Incarnation(), 0xfeedu);
	const mcrepl_lease_id id = {42};
	const mcrepl::WireId w = b.e->LeaseWire(id);
	EXPECT_EQ(w, mcrepl::WireId(0xfeed, 42));
	EXPECT_EQ(b.e->LeaseOf(w).v, 42u);
	EXPECT_EQ(b.e->LeaseOf(mcrepl::WireId(0xbeef, 42)).v, 0u);

	// two engines that draw their incarnation draw different ones
	Bench x, y;
	ASSERT_TRUE(x.e && y.e);
	EXPECT_TRUE(x.e->Incarnation() != 0);
	EXPECT_TRUE(x.e->Incarnation() != y.e->Incarnation());

	// a lease id of another incarnation is unknown to the fence
	const mcrepl::Answer a = b.Grant("k", 1);
	EXPECT_EQ(a.task.lease.hi, 0xfeedu);
	mcrepl::Fence f = b.FenceOf(a, "k");
	f.lease.hi = 0xbeef;
	const mcrepl::Answer stale = b.e->CopyStart(f);
	EXPECT_EQ(stale.status, MCREPL_EREJECTED);
	EXPECT_EQ(stale.outcome, mcrepl::Outcome::Stale);
	EXPECT_EQ(stale.reason, MCREPL_REASON_UNKNOWN_LEASE);
	f.lease.hi = 0xfeed;
	EXPECT_EQ(b.e->CopyStart(f).outcome, mcrepl::Outcome::Ok);
	// the task's payload: names, version, size
	EXPECT_EQ(a.task.source, std::string("seg-a"));
	EXPECT_EQ(a.task.target, std::string("seg-b"));
	EXPECT_EQ(a.task.version, 3u);
	EXPECT_EQ(a.task.size, 4096u);
	EXPECT_EQ(a.task.expires_at_ms, b.now + 30000);
}

ADAPTER(OutcomeTableMapsEveryClass)
{
	using mcrepl::Outcome;
	mcrepl::OutcomeTable<int> t;
	t.ok = 0;
	t.invalid = 1;
	t.not_found = 2;
	t.stale = 3;
	t.busy = 4;
	t.denied = 5;
	t.expired = 6;
	t.unavailable = 7;
	const Outcome all[] = {Outcome::Ok,	  Outcome::Invalid,
			       Outcome::NotFound, Outcome::Stale,
			       Outcome::Busy,	  Outcome::Denied,
			       Outcome::Expired,  Outcome::Unavailable};
	const char *names[] = {"ok",   "invalid", "not_found", "stale",
			       "busy", "denied",  "expired",   "unavailable"};
	for (int i = 0; i < 8; i++) {
		EXPECT_EQ(t(all[i]), i);
		EXPECT_EQ(std::string(mcrepl::OutcomeName(all[i])),
			  std::string(names[i]));
	}
	struct Row {
		mcrepl_reason r;
		bool fence;
		Outcome o;
	} rows[] = {
	    {MCREPL_REASON_NONE, false, Outcome::Ok},
	    {MCREPL_REASON_BELOW_THRESHOLD, false, Outcome::Invalid},
	    {MCREPL_REASON_PROPOSAL_CONFLICT, false, Outcome::Invalid},
	    {MCREPL_REASON_UNKNOWN_OBJECT, false, Outcome::NotFound},
	    {MCREPL_REASON_UNKNOWN_OBJECT, true, Outcome::Stale},
	    {MCREPL_REASON_VERSION_MISMATCH, true, Outcome::Stale},
	    {MCREPL_REASON_UNKNOWN_LEASE, true, Outcome::Stale},
	    {MCREPL_REASON_IN_FLIGHT, false, Outcome::Busy},
	    {MCREPL_REASON_WRONG_TARGET, true, Outcome::Busy},
	    {MCREPL_REASON_NOT_SOURCE, true, Outcome::Denied},
	    {MCREPL_REASON_LEASE_EXPIRED, true, Outcome::Expired},
	    {MCREPL_REASON_REPLICA_LIMIT, false, Outcome::Unavailable},
	    {MCREPL_REASON_RECREATE_COOLDOWN, false, Outcome::Unavailable},
	    {MCREPL_REASON_BALANCED, false, Outcome::Unavailable},
	};
	for (const Row &r : rows)
		EXPECT_EQ(
		    mcrepl::ToOutcome(mcrepl_reason_outcome(r.r, r.fence)),
		    r.o);
	// a status with no class of its own is no OK outcome
	mcrepl_host_result res = {};
	EXPECT_EQ(mcrepl::Answer::Of(MCREPL_EINVAL, res).outcome,
		  Outcome::Invalid);
	EXPECT_EQ(mcrepl::Answer::Of(MCREPL_ENOMEM, res).outcome,
		  Outcome::Unavailable);
	EXPECT_EQ(mcrepl::Answer::Of(MCREPL_EREJECTED, res).outcome,
		  Outcome::Ok);
}

ADAPTER(ReadPathOrdersCountsAndQueues)
{
	EXPECT_EQ(sizeof(mcrepl::ObjectState), sizeof(mcrepl_object_state));
	Bench b;
	ASSERT_TRUE(b.e != nullptr);
	mcrepl::ObjectState st;
	const std::vector<mcrepl::ReadReplica> reps = {{11, "seg-a"},
						       {12, "seg-b"}};
	size_t firsts[2] = {0, 0};
	for (uint32_t i = 1; i <= 8; i++) {
		const mcrepl::Read r = b.e->OnRead(st, "t", "k", reps, i);
		EXPECT_EQ(r.status, MCREPL_OK);
		EXPECT_EQ(r.count, i);
		EXPECT_EQ(r.crossed, i == 8);
		EXPECT_EQ(r.queued, i == 8);
		ASSERT_TRUE(r.first < 2);
		firsts[r.first]++;
	}
	// readers go by load: the two replicas take turns
	EXPECT_EQ(firsts[0], 4u);
	EXPECT_EQ(firsts[1], 4u);
	const mcrepl::Heat h = b.e->HeatOf(st);
	EXPECT_EQ(h.count, 8u);
	const std::vector<mcrepl::Trigger> t = b.e->TriggersPop();
	ASSERT_EQ(t.size(), 1u);
	EXPECT_EQ(t[0].tenant, std::string("t"));
	EXPECT_EQ(t[0].key, std::string("k"));
	EXPECT_EQ(t[0].domain, std::string());
	EXPECT_EQ(t[0].queued_at_ms, b.now);
	EXPECT_EQ(b.e->TriggersPop().size(), 0u);
	EXPECT_EQ(b.e->Stat(MCREPL_STAT_OBSERVED_HOT), 1);
	EXPECT_EQ(b.e->Stat(MCREPL_STAT_TRIGGERS_QUEUED), 1);
	st.Reset();
	EXPECT_EQ(b.e->HeatOf(st).count, 0u);

	mcrepl::Options off;
	Bench o(off);
	ASSERT_TRUE(o.e != nullptr);
	const mcrepl::Read r = o.e->OnRead(st, "t", "k", reps, 1);
	EXPECT_EQ(r.status, MCREPL_OK);
	EXPECT_EQ(r.count, 0u);
	EXPECT_EQ(r.first, 0u);
}

// dynamic_replication_admission_queue_limit bounds the read path's queue
// (the adapter passes it as the engine's trigger_limit).
ADAPTER(AdmissionQueueLimitBoundsTriggers)
{
	mcrepl::Options o = Bench::Enforce();
	o.Set("admission_queue_limit", "1");
	Bench b(o);
	ASSERT_TRUE(b.e != nullptr);
	mcrepl::ObjectState s1, s2;
	mcrepl::Read r1, r2;
	for (int i = 0; i < 8; i++) {
		r1 = b.e->OnRead(s1, "t", "k1", nullptr, 0, 0);
		r2 = b.e->OnRead(s2, "t", "k2", nullptr, 0, 0);
	}
	EXPECT_TRUE(r1.crossed && r1.queued);
	EXPECT_TRUE(r2.crossed);
	EXPECT_FALSE(r2.queued);
	EXPECT_EQ(b.e->Stat(MCREPL_STAT_TRIGGERS_QUEUED), 1);
	EXPECT_EQ(b.e->Stat(MCREPL_STAT_TRIGGERS_DROPPED), 1);
	EXPECT_EQ(b.e->TriggersPop().size(), 1u);
}

ADAPTER(MetricsTextHasTheCounters)
{
	Bench b;
	ASSERT_TRUE(b.e != nullptr);
	const mcrepl::Answer a = b.Grant("k", 1);
	mcrepl::Proposal cold;
	cold.id = mcrepl::WireId(1, 99);
	cold.tenant = "t";
	cold.key = "cold";
	cold.object.exists = true;
	cold.object.version = 1;
	cold.object.size = 10;
	cold.object.readable_memory_replicas = 1;
	cold.replicas.push_back(mcrepl::NamedReplica{"seg-a"});
	const mcrepl::Answer refused = b.e->Propose(cold);
	EXPECT_EQ(refused.outcome, mcrepl::Outcome::Invalid);
	EXPECT_EQ(refused.reason, MCREPL_REASON_BELOW_THRESHOLD);
	EXPECT_EQ(a.outcome, mcrepl::Outcome::Ok);

	const std::string m = b.e->Metrics();
	const char *lines[] = {
	    "mcrepl_dynamic_observed_hot_total 1\n",
	    "mcrepl_dynamic_triggers_queued_total 1\n",
	    "mcrepl_dynamic_admission_accepted_total 1\n",
	    "mcrepl_dynamic_copy_tasks_created_total 1\n",
	    "mcrepl_dynamic_copies_inflight 1\n",
	    "mcrepl_dynamic_admission_rejected_total{reason=\"below_threshold\"}"
	    " 1\n",
	    "# TYPE mcrepl_policy_segments gauge\nmcrepl_policy_segments 2\n",
	    "# TYPE mcrepl_policy_retired_total counter\n"
	    "mcrepl_policy_retired_total 0\n",
	    "mcrepl_policy_projections_total 1\n",
	};
	for (const char *l : lines)
		if (!Has(m, l))
			EXPECT_EQ(std::string("missing"), std::string(l));
	EXPECT_EQ(m.back(), '\n');
}

ADAPTER(SweepCallsBackPerExpiredLease)
{
	Bench b;
	ASSERT_TRUE(b.e != nullptr);
	const mcrepl::Answer pending = b.Grant("k", 1);
	const mcrepl::Answer started = b.Grant("k2", 2);
	const mcrepl::Fence f = b.FenceOf(started, "k2");
	ASSERT_EQ(b.e->CopyStart(f).outcome, mcrepl::Outcome::Ok);
	std::vector<mcrepl::CopyTask> seen;
	EXPECT_EQ(
	    b.e->Sweep([&](const mcrepl::CopyTask &t) { seen.push_back(t); }),
	    0u);
	b.now += 30000;
	EXPECT_EQ(
	    b.e->Sweep([&](const mcrepl::CopyTask &t) { seen.push_back(t); }),
	    2u);
	ASSERT_EQ(seen.size(), 2u);
	const mcrepl::CopyTask &x = seen[0].started ? seen[1] : seen[0];
	const mcrepl::CopyTask &y = seen[0].started ? seen[0] : seen[1];
	EXPECT_EQ(x.lease, pending.task.lease);
	EXPECT_EQ(x.task, mcrepl::WireId(9, 1));
	EXPECT_FALSE(x.started);
	EXPECT_EQ(y.lease, started.task.lease);
	EXPECT_EQ(y.task, mcrepl::WireId(9, 2));
	EXPECT_TRUE(y.started);
	EXPECT_EQ(y.source, std::string("seg-a"));
	EXPECT_EQ(y.target, std::string("seg-b"));
	EXPECT_FALSE(b.e->KeyPending("t", "k"));
	EXPECT_EQ(b.e->Stat(MCREPL_STAT_TASKS_FAILED), 2);

	// a callback's exception comes back out of the call
	b.Grant("k3", 3);
	b.now += 30000;
	bool thrown = false;
	try {
		b.e->Sweep([](const mcrepl::CopyTask &) {
			throw std::runtime_error("task table gone");
		});
	} catch (const std::runtime_error &) {
		thrown = true;
	}
	EXPECT_TRUE(thrown);
}

ADAPTER(RetireProbesAndDropsColdDynamicReplicas)
{
	Bench b;
	ASSERT_TRUE(b.e != nullptr);
	ASSERT_TRUE(b.e->IsAuto());
	EXPECT_EQ(b.e->ReplicaAdded("t", "k", "seg-b"), MCREPL_OK);
	std::vector<std::string> probed, dropped;
	auto probe = [&](const char *tenant, const char *key,
			 const char *domain) {
		probed.push_back(std::string(tenant) + "/" + key +
				 (domain ? "@" : ""));
		mcrepl_retire_probe p = {};
		p.readable = 2; // the original and the dynamic copy; no heat
		return p;
	};
	auto drop = [&](const mcrepl::Retirement &r) {
		dropped.push_back(r.tenant + "/" + r.key + "/" + r.segment);
		return b.e->ReplicaDropped(r.tenant, r.key, r.segment) ==
		       MCREPL_OK;
	};
	size_t passes = 0, retired = 0;
	for (int s = 0; s <= 10; s++, b.now += 1000)
		if (b.e->Tick().retire_due) {
			passes++;
			retired += b.e->Retire(probe, drop);
		}
	EXPECT_EQ(passes, 1u);
	EXPECT_EQ(retired, 1u);
	ASSERT_EQ(probed.size(), 1u);
	EXPECT_EQ(probed[0], std::string("t/k"));
	ASSERT_EQ(dropped.size(), 1u);
	EXPECT_EQ(dropped[0], std::string("t/k/seg-b"));
	mcrepl_engine_stats s = {};
	s.struct_size = sizeof(s);
	mcrepl_engine_get_stats(b.e->raw(), &s);
	EXPECT_EQ(s.dynamic_replicas, 0u);
	EXPECT_EQ(s.retired_total, 1u);
}

namespace
{

// Mooncake-shaped structs of our own: its member names, other types.
struct Uuid {
	uint64_t first = 0, second = 0;
	Uuid() = default;
	Uuid(uint64_t a, uint64_t b) : first(a), second(b)
	{
	}
	bool operator==(const Uuid &o) const
	{
		return first == o.first && second == o.second;
	}
};

struct SegmentA { // Mooncake's: name, size, host_id
	Uuid id;
	std::string name;
	uint64_t base = 0;
	size_t size = 0;
	std::string te_endpoint;
	std::string host_id;
};

struct SegmentB { // no host_id; a node the host derives
	const char *name;
	uint32_t size;
	std::string te_endpoint;
};

struct Proposal {
	Uuid proposal_id;
	std::string tenant_id;
	std::string key;
	std::string requester_domain;
	uint64_t observed_version_epoch = 0;
	uint64_t object_size_bytes = 0;
	std::string target_domain;
	std::optional<std::string> preferred_target_segment;
	int64_t expire_at_ms_epoch = 0;
};

struct Lease {
	Uuid proposal_id, lease_id, task_id;
	std::string tenant_id, key, source_segment, target_segment;
	std::optional<std::string> target_domain;
	uint64_t version_epoch = 0;
	int64_t expire_at_ms_epoch = 0;
};

struct Payload {
	std::string tenant_id, key, source;
	std::vector<std::string> targets;
	uint64_t dynamic_replication_lease_id_high = 0;
	uint64_t dynamic_replication_lease_id_low = 0;
	uint64_t dynamic_replication_version_epoch = 0;
};

struct Bare { // nothing the templates know
	int x = 0;
};

} // namespace

template <> struct mcrepl::binding::SegmentTraits<SegmentB> {
	static std::string Name(const SegmentB &s)
	{
		return s.name;
	}
	static uint64_t Capacity(const SegmentB &s)
	{
		return s.size;
	}
	static std::string Host(const SegmentB &)
	{
		return "";
	}
	static std::string Domain(const SegmentB &)
	{
		return "zone-1";
	}
	static std::string Node(const SegmentB &s)
	{
		return s.te_endpoint;
	}
};

ADAPTER(BindingReadsAndFillsByMemberName)
{
	namespace mb = mcrepl::binding;
	SegmentA sa;
	sa.name = "segment_0";
	sa.size = 1 << 20;
	sa.host_id = "host-a";
	const mcrepl::Segment va = mb::SegmentOf(sa, Uuid(1, 2), 512, false);
	EXPECT_EQ(va.name, std::string("segment_0"));
	EXPECT_EQ(va.host, std::string("host-a"));
	EXPECT_EQ(va.domain, std::string());
	EXPECT_EQ(va.node, std::string());
	EXPECT_EQ(va.client, mcrepl::WireId(1, 2));
	EXPECT_EQ(va.capacity, uint64_t(1 << 20));
	EXPECT_EQ(va.used, 512u);
	EXPECT_FALSE(va.allocatable);

	SegmentB sb{"segment_1", 4096, "10.0.0.1:7000"};
	const mcrepl::Segment vb = mb::SegmentOf(sb, Uuid(3, 4), 0);
	EXPECT_EQ(vb.name, std::string("segment_1"));
	EXPECT_EQ(vb.capacity, 4096u);
	EXPECT_EQ(vb.domain, std::string("zone-1"));
	EXPECT_EQ(vb.node, std::string("10.0.0.1:7000"));
	EXPECT_TRUE(vb.allocatable);

	Proposal p;
	p.proposal_id = Uuid(5, 6);
	p.tenant_id = "tenant";
	p.key = "key";
	p.observed_version_epoch = 7;
	p.object_size_bytes = 8;
	p.preferred_target_segment = "segment_1";
	p.expire_at_ms_epoch = 9;
	const mcrepl::Proposal mp = mb::ProposalOf(p);
	EXPECT_EQ(mp.id, mcrepl::WireId(5, 6));
	EXPECT_EQ(mp.tenant, std::string("tenant"));
	EXPECT_EQ(mp.key, std::string("key"));
	EXPECT_EQ(mp.requester_domain, std::string());
	EXPECT_EQ(mp.preferred_target, std::string("segment_1"));
	EXPECT_EQ(mp.observed_version, 7u);
	EXPECT_EQ(mp.expected_size, 8u);
	EXPECT_EQ(mp.expires_at_ms, 9u);
	p.preferred_target_segment.reset();
	p.expire_at_ms_epoch = -1; // no deadline
	EXPECT_EQ(mb::ProposalOf(p).preferred_target, std::string());
	EXPECT_EQ(mb::ProposalOf(p).expires_at_ms, 0u);
	const mcrepl::Proposal none = mb::ProposalOf(Bare{});
	EXPECT_TRUE(none.id.empty());
	EXPECT_EQ(none.key, std::string());

	mcrepl::Answer a;
	a.task.lease = mcrepl::WireId(10, 11);
	a.task.task = mcrepl::WireId(12, 13);
	a.task.source = "segment_0";
	a.task.target = "segment_1";
	a.task.target_domain = "zone-1";
	a.task.version = 14;
	a.task.expires_at_ms = 15;
	Lease l;
	mb::FillLease(l, mp, a);
	EXPECT_TRUE(l.proposal_id == Uuid(5, 6));
	EXPECT_TRUE(l.lease_id == Uuid(10, 11));
	EXPECT_TRUE(l.task_id == Uuid(12, 13));
	EXPECT_EQ(l.tenant_id, std::string("tenant"));
	EXPECT_EQ(l.key, std::string("key"));
	EXPECT_EQ(l.source_segment, std::string("segment_0"));
	EXPECT_EQ(l.target_segment, std::string("segment_1"));
	EXPECT_EQ(l.target_domain.value_or(""), std::string("zone-1"));
	EXPECT_EQ(l.version_epoch, 14u);
	EXPECT_EQ(l.expire_at_ms_epoch, 15);
	Bare bare;
	mb::FillLease(bare, mp, a); // compiles, fills nothing
	EXPECT_EQ(bare.x, 0);

	Payload pl;
	mb::FillCopyPayload(pl, a.task, "tenant", "key");
	EXPECT_EQ(pl.tenant_id, std::string("tenant"));
	EXPECT_EQ(pl.key, std::string("key"));
	EXPECT_EQ(pl.source, std::string("segment_0"));
	ASSERT_EQ(pl.targets.size(), 1u);
	EXPECT_EQ(pl.targets[0], std::string("segment_1"));
	EXPECT_EQ(pl.dynamic_replication_lease_id_high, 10u);
	EXPECT_EQ(pl.dynamic_replication_lease_id_low, 11u);
	EXPECT_EQ(pl.dynamic_replication_version_epoch, 14u);

	const mcrepl::Fence f = mb::FenceOf(pl, Uuid(1, 2), 14);
	EXPECT_EQ(f.tenant, std::string("tenant"));
	EXPECT_EQ(f.key, std::string("key"));
	EXPECT_EQ(f.lease, mcrepl::WireId(10, 11));
	EXPECT_EQ(f.caller, mcrepl::WireId(1, 2));
	EXPECT_EQ(f.version, 14u);
	EXPECT_EQ(f.source, std::string("segment_0"));
	ASSERT_EQ(f.targets.size(), 1u);
	EXPECT_EQ(f.targets[0], std::string("segment_1"));
	EXPECT_EQ(f.object_version, 14u);
}
