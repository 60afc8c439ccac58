// Upstream Mooncake's dynamic replication scenarios (its
// dynamic_replication_test, by test name) replayed on the mini master:
// the same situations and expectations, in our own words, each assertion
// exact. Where the libmcrepl behaviour differs on purpose the scenario says
// so. A scenario that sets a literal hit threshold pins policy rfc (one
// line, "literal threshold"): under auto the count a key needs follows the
// cluster's reads and is never under 6 (docs/POLICY.md).
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "minimaster.hpp"

namespace mini
{
std::ostream &operator<<(std::ostream &os, ErrorCode c)
{
	return os << ErrorName(c);
}
} // namespace mini

namespace
{

using namespace mini;

const std::string kTenant = "default";
constexpr uint64_t kSegmentSize = 16ull << 20;
constexpr uint64_t kObjectSize = 1024;

struct Mounted {
	UUID client;
	UUID segment_id;
	std::string segment_name;
};

// One master on a clock the scenario moves.
struct Fixture {
	uint64_t now = 1000000;
	uint64_t next_uuid = 1;
	MiniMaster m;

	explicit Fixture(const MasterConfig &cfg)
	    : m(cfg, [this] { return now; })
	{
	}

	UUID NewUuid()
	{
		return UUID{0xc11e47ULL, next_uuid++};
	}

	// A segment of kSegmentSize named `name`, mounted by a new client.
	Mounted MountNamed(const std::string &name,
			   const std::string &host_id = "")
	{
		Mounted at{NewUuid(), NewUuid(), name};
		Segment seg;

		seg.name = name;
		seg.host_id = host_id;
		seg.id = at.segment_id;
		seg.te_endpoint = name;
		seg.size = kSegmentSize;
		EXPECT_TRUE(m.MountSegment(seg, at.client).has_value());
		return at;
	}

	void PutOn(const UUID &client, const std::string &key,
		   const std::string &segment)
	{
		EXPECT_TRUE(
		    m.PutStart(client, key, kTenant, kObjectSize, segment)
			.has_value());
		EXPECT_TRUE(m.PutEnd(client, key, kTenant).has_value());
	}

	// The key read as often as the configured hit count asks.
	void Admit(const std::string &key)
	{
		for (uint32_t i = 0; i < m.AdmissionMinHits(); i++)
			m.ObserveAccess(key, kTenant);
	}

	ReplicaActionProposal
	ProposalFor(const std::string &key,
		    const std::optional<std::string> &preferred = {},
		    bool admit = true)
	{
		ReplicaActionProposal p;
		p.proposal_id = NewUuid();
		p.tenant_id = kTenant;
		p.key = key;
		p.expire_at_ms_epoch = static_cast<int64_t>(now + 30000);
		p.preferred_target_segment = preferred;
		EXPECT_TRUE(m.Exists(key, kTenant));
		p.observed_version_epoch = m.VersionEpoch(key, kTenant);
		p.object_size_bytes = m.ObjectSize(key, kTenant);
		if (admit)
			Admit(key);
		return p;
	}

	// The shape of most copy scenarios: segment_0 and segment_1 mounted,
	// key put on segment_0, a copy to segment_1 leased and, when `start`,
	// started by the source. lease is empty when a step failed (the
	// failure is recorded).
	struct Copy {
		Mounted source, target;
		std::optional<ReplicaActionLease> lease;
	};
	Copy LeasedCopy(const std::string &key, bool start)
	{
		Copy c{MountNamed("segment_0"), MountNamed("segment_1"), {}};

		PutOn(c.source.client, key, c.source.segment_name);
		auto l = m.SubmitReplicaActionProposal(
		    ProposalFor(key, c.target.segment_name));
		if (!EXPECT_TRUE(l.has_value()))
			return c;
		if (start &&
		    !EXPECT_TRUE(m.CopyStart(c.source.client, key, kTenant,
					     l->source_segment,
					     {l->target_segment}, l->lease_id,
					     l->version_epoch)
				     .has_value()))
			return c;
		c.lease = *l;
		return c;
	}

	// What the source's client finds after the admission loop's turn.
	std::vector<TaskAssignment> Tasks(const UUID &client)
	{
		m.AdmissionStep();
		auto t = m.FetchTasks(client, 16);
		EXPECT_TRUE(t.has_value());
		return t.has_value() ? *t : std::vector<TaskAssignment>{};
	}

	bool Complete(const std::string &key, const std::string &segment)
	{
		return m.HasDynamicReplica(key, kTenant, segment,
					   ReplicaStatus::COMPLETE);
	}
	bool Incomplete(const std::string &key, const std::string &segment)
	{
		return m.HasDynamicReplica(key, kTenant, segment,
					   ReplicaStatus::PROCESSING);
	}
};

MasterConfig Enforce()
{
	MasterConfig c;
	c.dynamic_replication_mode = "enforce";
	return c;
}

UUID LeaseOf(const ReplicaCopyPayload &p)
{
	return UUID{p.dynamic_replication_lease_id_high,
		    p.dynamic_replication_lease_id_low};
}

// The one task a copy needs: REPLICA_COPY of key from source to target.
void ExpectCopyTask(const std::vector<TaskAssignment> &tasks,
		    const std::string &key, const Mounted &source,
		    const Mounted &target)
{
	ASSERT_EQ(tasks.size(), 1u);
	EXPECT_EQ(tasks[0].type == TaskType::REPLICA_COPY, true);
	const ReplicaCopyPayload &p = tasks[0].payload;
	EXPECT_EQ(p.key, key);
	EXPECT_EQ(p.tenant_id, kTenant);
	EXPECT_EQ(p.source, source.segment_name);
	ASSERT_EQ(p.targets.size(), 1u);
	EXPECT_EQ(p.targets[0], target.segment_name);
}

} // namespace

UPSTREAM(EnforceQueuesCopyFromProposalAboveFrequencyThreshold)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.2;
	c.dynamic_replication_max_memory_replicas = 2;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	f.PutOn(source.client, "hot-key", source.segment_name);

	EXPECT_EQ(f.m.FetchTasks(source.client, 16)->size(), 0u);
	auto lease = f.m.SubmitReplicaActionProposal(f.ProposalFor("hot-key"));
	ASSERT_TRUE(lease.has_value());
	EXPECT_EQ(lease->source_segment, source.segment_name);
	EXPECT_EQ(lease->target_segment, target.segment_name);
	ExpectCopyTask(f.Tasks(source.client), "hot-key", source, target);
}

UPSTREAM(EnforceGetPathQueuesCopyAfterHeatThreshold)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.2;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	f.PutOn(source.client, "auto-hot-key", source.segment_name);

	ASSERT_TRUE(f.m.GetReplicaList("auto-hot-key", kTenant).has_value());
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TRIGGERS_QUEUED), 0);
	ASSERT_TRUE(f.m.GetReplicaList("auto-hot-key", kTenant).has_value());
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TRIGGERS_QUEUED), 1);
	ExpectCopyTask(f.Tasks(source.client), "auto-hot-key", source, target);
}

UPSTREAM(EnforceBatchGetPathQueuesCopyAfterHeatThreshold)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.2;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	f.PutOn(source.client, "batch-auto-hot-key", source.segment_name);

	for (int i = 0; i < 2; i++) {
		auto batch =
		    f.m.BatchGetReplicaList({"batch-auto-hot-key"}, kTenant);
		ASSERT_EQ(batch.size(), 1u);
		ASSERT_TRUE(batch[0].has_value());
	}
	ExpectCopyTask(f.Tasks(source.client), "batch-auto-hot-key", source,
		       target);
}

UPSTREAM(ObserveModeDoesNotQueueCopy)
{
	MasterConfig c;
	c.dynamic_replication_mode = "observe";
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.1;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.MountNamed("segment_1");
	f.PutOn(source.client, "observe-key", source.segment_name);

	for (int i = 0; i < 3; i++)
		ASSERT_TRUE(
		    f.m.GetReplicaList("observe-key", kTenant).has_value());
	// one crossing in the window: one would-propose, no trigger
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_WOULD_PROPOSE), 1);
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TRIGGERS_QUEUED), 0);
	EXPECT_EQ(f.Tasks(source.client).size(), 0u);
}

UPSTREAM(MaxReplicaLimitSuppressesFanout)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold, fixed cap
	c.dynamic_replication_admission_qps_threshold = 0.1;
	c.dynamic_replication_max_memory_replicas = 1;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.MountNamed("segment_1");
	f.PutOn(source.client, "max-key", source.segment_name);

	auto lease = f.m.SubmitReplicaActionProposal(f.ProposalFor("max-key"));
	ASSERT_FALSE(lease.has_value());
	EXPECT_EQ(lease.error(), ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_REPLICA_LIMIT);
	EXPECT_EQ(f.Tasks(source.client).size(), 0u);
}

UPSTREAM(BelowFrequencyThresholdDoesNotQueueCopy)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.3;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.MountNamed("segment_1");
	f.PutOn(source.client, "warm-key", source.segment_name);

	auto lease = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("warm-key", std::nullopt, false));
	ASSERT_FALSE(lease.has_value());
	EXPECT_EQ(lease.error(), ErrorCode::INVALID_PARAMS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_BELOW_THRESHOLD);
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_ACCEPTED), 0);
	EXPECT_EQ(f.Tasks(source.client).size(), 0u);
}

UPSTREAM(RejectDomainHintsBeforeDomainAwarePlacement)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.2;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.MountNamed("segment_1");
	f.PutOn(source.client, "domain-hint-key", source.segment_name);

	auto p = f.ProposalFor("domain-hint-key");
	p.target_domain = "domain-a";
	auto lease = f.m.SubmitReplicaActionProposal(p);
	ASSERT_FALSE(lease.has_value());
	EXPECT_EQ(lease.error(), ErrorCode::INVALID_PARAMS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_DOMAIN_HINT_UNSUPPORTED);
}

UPSTREAM(LeaseDeadlineDoesNotExceedProposalDeadline)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.2;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.MountNamed("segment_1");
	f.PutOn(source.client, "short-deadline-key", source.segment_name);

	auto p = f.ProposalFor("short-deadline-key");
	p.expire_at_ms_epoch = static_cast<int64_t>(f.now + 1000);
	auto lease = f.m.SubmitReplicaActionProposal(p);
	ASSERT_TRUE(lease.has_value());
	// the lease TTL (30 s) is clamped to the proposal's deadline
	EXPECT_EQ(lease->expire_at_ms_epoch, p.expire_at_ms_epoch);
}

UPSTREAM(ProposalIdempotencyReturnsSameLease)
{
	Fixture f(Enforce());
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	f.PutOn(source.client, "proposal-key", source.segment_name);
	auto p = f.ProposalFor("proposal-key", target.segment_name);

	auto first = f.m.SubmitReplicaActionProposal(p);
	ASSERT_TRUE(first.has_value());
	auto second = f.m.SubmitReplicaActionProposal(p);
	ASSERT_TRUE(second.has_value());
	EXPECT_EQ(second->proposal_id, first->proposal_id);
	EXPECT_EQ(second->lease_id, first->lease_id);
	EXPECT_EQ(second->task_id, first->task_id);
	EXPECT_EQ(second->source_segment, source.segment_name);
	EXPECT_EQ(second->target_segment, target.segment_name);
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_ACCEPTED), 1);

	auto tasks = f.m.FetchTasks(source.client, 16);
	ASSERT_EQ(tasks->size(), 1u);
	EXPECT_EQ((*tasks)[0].id, first->task_id);
}

UPSTREAM(ProposalIdempotencyRejectsConflictingRequest)
{
	Fixture f(Enforce());
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	auto other = f.MountNamed("segment_2");
	f.PutOn(source.client, "proposal-key", source.segment_name);
	auto p = f.ProposalFor("proposal-key", target.segment_name);

	ASSERT_TRUE(f.m.SubmitReplicaActionProposal(p).has_value());
	auto conflicting = p;
	conflicting.preferred_target_segment = other.segment_name;
	auto second = f.m.SubmitReplicaActionProposal(conflicting);
	ASSERT_FALSE(second.has_value());
	EXPECT_EQ(second.error(), ErrorCode::INVALID_PARAMS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_PROPOSAL_CONFLICT);
}

UPSTREAM(CopyLifecycleMarksDynamicReplicaComplete)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("copy-key", true);
	ASSERT_TRUE(lease.has_value());
	EXPECT_EQ(f.m.DynamicReplicaCount("copy-key", kTenant), 1u);
	EXPECT_FALSE(f.Complete("copy-key", lease->target_segment));
	EXPECT_TRUE(f.Incomplete("copy-key", lease->target_segment));

	const int64_t completed =
	    f.m.engine().Stat(MCREPL_STAT_TASKS_COMPLETED);
	ASSERT_TRUE(f.m.CopyEnd(source.client, "copy-key", kTenant,
				lease->lease_id, lease->version_epoch)
			.has_value());
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TASKS_COMPLETED),
		  completed + 1);
	EXPECT_TRUE(f.m.Metrics().find(
			"mcrepl_dynamic_copy_tasks_completed_total 1\n") !=
		    std::string::npos);
	EXPECT_EQ(f.m.DynamicReplicaCount("copy-key", kTenant), 1u);
	EXPECT_TRUE(f.Complete("copy-key", lease->target_segment));
	EXPECT_FALSE(f.m.HasLeaseState("copy-key", kTenant));
}

UPSTREAM(CopyEndForInvalidTargetClearsIncompleteDynamicReplica)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("invalid-target-key", true);
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.Incomplete("invalid-target-key", target.segment_name));
	ASSERT_TRUE(
	    f.m.UnmountSegment(target.segment_id, target.client).has_value());

	auto end = f.m.CopyEnd(source.client, "invalid-target-key", kTenant,
			       lease->lease_id, lease->version_epoch);
	ASSERT_FALSE(end.has_value());
	EXPECT_EQ(end.error(), ErrorCode::REPLICA_IS_GONE);
	EXPECT_FALSE(f.Incomplete("invalid-target-key", target.segment_name));
	EXPECT_FALSE(f.m.HasLeaseState("invalid-target-key", kTenant));
	// the copy ended with nothing readable: failed, not completed
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TASKS_FAILED), 1);
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TASKS_COMPLETED), 0);
}

UPSTREAM(DynamicCopyStartRejectsStaleLeaseWithoutPending)
{
	Fixture f(Enforce());
	auto [source, target, lease] =
	    f.LeasedCopy("stale-dynamic-task-key", false);
	ASSERT_TRUE(lease.has_value());
	auto tasks = f.m.FetchTasks(source.client, 16);
	ASSERT_EQ(tasks->size(), 1u);
	const ReplicaCopyPayload p = (*tasks)[0].payload;
	EXPECT_EQ(LeaseOf(p), lease->lease_id);
	EXPECT_EQ(p.dynamic_replication_version_epoch, lease->version_epoch);

	f.m.ClearDynamicReplicationState("stale-dynamic-task-key", kTenant);
	auto start = f.m.CopyStart(source.client, "stale-dynamic-task-key",
				   kTenant, p.source, p.targets, LeaseOf(p),
				   p.dynamic_replication_version_epoch);
	ASSERT_FALSE(start.has_value());
	EXPECT_EQ(start.error(), ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_UNKNOWN_LEASE);
	EXPECT_EQ(f.m.DynamicReplicaCount("stale-dynamic-task-key", kTenant),
		  0u);
}

UPSTREAM(DynamicCopyStartRejectsNonSourceClient)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.1;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	auto other = f.MountNamed("segment_2");
	f.PutOn(source.client, "source-client-key", source.segment_name);

	auto lease = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("source-client-key", target.segment_name));
	ASSERT_TRUE(lease.has_value());
	auto rejected = f.m.CopyStart(
	    other.client, "source-client-key", kTenant, source.segment_name,
	    {target.segment_name}, lease->lease_id, lease->version_epoch);
	ASSERT_FALSE(rejected.has_value());
	EXPECT_EQ(rejected.error(), ErrorCode::ILLEGAL_CLIENT);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_NOT_SOURCE);

	ASSERT_TRUE(f.m.CopyStart(source.client, "source-client-key", kTenant,
				  source.segment_name, {target.segment_name},
				  lease->lease_id, lease->version_epoch)
			.has_value());
	ASSERT_TRUE(f.m.CopyRevoke(source.client, "source-client-key", kTenant,
				   lease->lease_id, lease->version_epoch)
			.has_value());
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TASKS_REVOKED), 1);
}

UPSTREAM(DynamicCopyStartFailureClearsPending)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.1;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	auto fallback = f.MountNamed("segment_2");
	f.PutOn(source.client, "copy-start-fail-key", source.segment_name);

	auto lease = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("copy-start-fail-key", target.segment_name));
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(
	    f.m.UnmountSegment(target.segment_id, target.client).has_value());
	auto failed = f.m.CopyStart(
	    source.client, "copy-start-fail-key", kTenant, source.segment_name,
	    {target.segment_name}, lease->lease_id, lease->version_epoch);
	ASSERT_FALSE(failed.has_value());
	EXPECT_EQ(failed.error(), ErrorCode::SEGMENT_NOT_FOUND);
	EXPECT_FALSE(f.m.HasLeaseState("copy-start-fail-key", kTenant));

	ASSERT_TRUE(f.m.CopyStart(source.client, "copy-start-fail-key", kTenant,
				  source.segment_name, {fallback.segment_name})
			.has_value());
	ASSERT_TRUE(
	    f.m.CopyRevoke(source.client, "copy-start-fail-key", kTenant)
		.has_value());
}

UPSTREAM(StaleDynamicCopyStartDoesNotClearCurrentPending)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_max_memory_replicas = 3;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto stale_target = f.MountNamed("segment_1");
	auto current_target = f.MountNamed("segment_2");
	f.PutOn(source.client, "stale-vs-current-key", source.segment_name);

	auto stale = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("stale-vs-current-key", stale_target.segment_name));
	ASSERT_TRUE(stale.has_value());
	auto tasks = f.m.FetchTasks(source.client, 16);
	ASSERT_EQ(tasks->size(), 1u);
	const ReplicaCopyPayload sp = (*tasks)[0].payload;

	f.m.ClearDynamicReplicationState("stale-vs-current-key", kTenant);
	auto current = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("stale-vs-current-key", current_target.segment_name));
	ASSERT_TRUE(current.has_value());
	EXPECT_EQ(current->target_segment, current_target.segment_name);

	auto stale_start = f.m.CopyStart(
	    source.client, "stale-vs-current-key", kTenant, sp.source,
	    sp.targets, LeaseOf(sp), sp.dynamic_replication_version_epoch);
	ASSERT_FALSE(stale_start.has_value());
	EXPECT_EQ(stale_start.error(), ErrorCode::INVALID_VERSION);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_UNKNOWN_LEASE);
	EXPECT_TRUE(f.m.HasLeaseState("stale-vs-current-key", kTenant));

	ASSERT_TRUE(f.m.CopyStart(source.client, "stale-vs-current-key",
				  kTenant, current->source_segment,
				  {current->target_segment}, current->lease_id,
				  current->version_epoch)
			.has_value());
	EXPECT_TRUE(
	    f.Incomplete("stale-vs-current-key", current->target_segment));
}

UPSTREAM(ExpiredDynamicCopyTaskClearsDynamicState)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // the recreate cooldown
	c.processing_timeout_ms = 0;
	Fixture f(c);
	auto [source, target, lease] =
	    f.LeasedCopy("expired-copy-task-key", false);
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.CopyStart(source.client, "expired-copy-task-key",
				  kTenant, lease->source_segment,
				  {lease->target_segment}, lease->lease_id,
				  lease->version_epoch)
			.has_value());
	ASSERT_TRUE(f.Incomplete("expired-copy-task-key", target.segment_name));

	EXPECT_EQ(f.m.DiscardExpiredProcessingReplicas(), 1u);
	EXPECT_EQ(f.m.DynamicReplicaCount("expired-copy-task-key", kTenant),
		  0u);
	EXPECT_FALSE(f.m.HasLeaseState("expired-copy-task-key", kTenant));

	auto retry = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("expired-copy-task-key", target.segment_name));
	ASSERT_FALSE(retry.has_value());
	EXPECT_EQ(retry.error(), ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_RECREATE_COOLDOWN);
}

UPSTREAM(DynamicCopyEndRejectsMismatchedLease)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("copy-end-fence-key", true);
	ASSERT_TRUE(lease.has_value());
	auto stale = f.m.CopyEnd(source.client, "copy-end-fence-key", kTenant,
				 f.NewUuid(), lease->version_epoch);
	ASSERT_FALSE(stale.has_value());
	EXPECT_EQ(stale.error(), ErrorCode::INVALID_VERSION);
	EXPECT_TRUE(f.Incomplete("copy-end-fence-key", target.segment_name));

	ASSERT_TRUE(f.m.CopyEnd(source.client, "copy-end-fence-key", kTenant,
				lease->lease_id, lease->version_epoch)
			.has_value());
	EXPECT_TRUE(f.Complete("copy-end-fence-key", target.segment_name));
}

UPSTREAM(DynamicCopyRevokeRejectsMismatchedLease)
{
	Fixture f(Enforce());
	auto [source, target, lease] =
	    f.LeasedCopy("copy-revoke-fence-key", false);
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.CopyStart(source.client, "copy-revoke-fence-key",
				  kTenant, lease->source_segment,
				  {lease->target_segment}, lease->lease_id,
				  lease->version_epoch)
			.has_value());
	auto stale = f.m.CopyRevoke(source.client, "copy-revoke-fence-key",
				    kTenant, f.NewUuid(), lease->version_epoch);
	ASSERT_FALSE(stale.has_value());
	EXPECT_EQ(stale.error(), ErrorCode::INVALID_VERSION);
	EXPECT_TRUE(f.Incomplete("copy-revoke-fence-key", target.segment_name));

	ASSERT_TRUE(f.m.CopyRevoke(source.client, "copy-revoke-fence-key",
				   kTenant, lease->lease_id,
				   lease->version_epoch)
			.has_value());
	EXPECT_EQ(f.m.DynamicReplicaCount("copy-revoke-fence-key", kTenant),
		  0u);
	EXPECT_FALSE(f.m.HasLeaseState("copy-revoke-fence-key", kTenant));
	EXPECT_EQ(f.m.SegmentUsed(target.segment_name), 0u);
}

UPSTREAM(CopyStartRejectsVersionMismatch)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("version-key", false);
	ASSERT_TRUE(lease.has_value());
	f.m.RewriteObject("version-key", kTenant);
	auto start = f.m.CopyStart(
	    source.client, "version-key", kTenant, lease->source_segment,
	    {lease->target_segment}, lease->lease_id, lease->version_epoch);
	ASSERT_FALSE(start.has_value());
	EXPECT_EQ(start.error(), ErrorCode::INVALID_VERSION);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_VERSION_MISMATCH);
	EXPECT_FALSE(f.m.HasLeaseState("version-key", kTenant));
}

UPSTREAM(ExpiredDynamicPendingDoesNotBlockRegularCopy)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_max_memory_replicas = 3;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto expired_target = f.MountNamed("segment_1");
	auto regular_target = f.MountNamed("segment_2");
	const std::string key = "expired-pending-regular-copy-key";
	f.PutOn(source.client, key, source.segment_name);

	auto lease = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor(key, expired_target.segment_name));
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.HasLeaseState(key, kTenant));
	f.now = static_cast<uint64_t>(lease->expire_at_ms_epoch); // expired

	ASSERT_TRUE(f.m.CopyStart(source.client, key, kTenant,
				  source.segment_name,
				  {regular_target.segment_name})
			.has_value());
	ASSERT_TRUE(f.m.CopyRevoke(source.client, key, kTenant).has_value());
	EXPECT_FALSE(f.m.HasLeaseState(key, kTenant));
}

UPSTREAM(ExpiredLeaseRejectsCopyStart)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("expired-key", false);
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.HasLeaseState("expired-key", kTenant));
	f.now = static_cast<uint64_t>(lease->expire_at_ms_epoch); // expired

	auto start = f.m.CopyStart(
	    source.client, "expired-key", kTenant, lease->source_segment,
	    {lease->target_segment}, lease->lease_id, lease->version_epoch);
	ASSERT_FALSE(start.has_value());
	EXPECT_EQ(start.error(), ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_LEASE_EXPIRED);
	EXPECT_EQ(f.m.DynamicReplicaCount("expired-key", kTenant), 0u);
	EXPECT_FALSE(f.m.HasLeaseState("expired-key", kTenant));
}

UPSTREAM(EvictedDynamicReplicaBlocksImmediateRecreate)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.1;
	c.dynamic_replication_max_memory_replicas = 3;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	auto target = f.MountNamed("segment_1");
	auto next_target = f.MountNamed("segment_2");
	f.PutOn(source.client, "evicted-dynamic-key", source.segment_name);

	auto lease = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("evicted-dynamic-key", target.segment_name));
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.CopyStart(source.client, "evicted-dynamic-key", kTenant,
				  lease->source_segment,
				  {lease->target_segment}, lease->lease_id,
				  lease->version_epoch)
			.has_value());
	ASSERT_TRUE(f.m.CopyEnd(source.client, "evicted-dynamic-key", kTenant,
				lease->lease_id, lease->version_epoch)
			.has_value());
	ASSERT_EQ(f.m.DynamicReplicaCount("evicted-dynamic-key", kTenant), 1u);

	EXPECT_EQ(f.m.EvictOnSegment("evicted-dynamic-key", kTenant,
				     target.segment_name),
		  1u);
	EXPECT_EQ(f.m.DynamicReplicaCount("evicted-dynamic-key", kTenant), 0u);
	mcrepl_key_state ks;
	mcrepl_leases_key_state(mcrepl_engine_leases(f.m.engine().raw()),
				kTenant.c_str(), "evicted-dynamic-key", nullptr,
				f.now, &ks);
	EXPECT_EQ(ks.recreate_after_ms, f.now + 60000);

	// At once the RFC's action cooldown after a copy (30 s; upstream
	// kept none) refuses first; past it, the recreate cooldown (60 s)
	// the eviction set refuses alone.
	auto immediate = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("evicted-dynamic-key", next_target.segment_name));
	ASSERT_FALSE(immediate.has_value());
	EXPECT_EQ(immediate.error(), ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_ACTION_COOLDOWN);
	f.now += 30000;
	auto rejected = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("evicted-dynamic-key", next_target.segment_name));
	ASSERT_FALSE(rejected.has_value());
	EXPECT_EQ(rejected.error(), ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
	EXPECT_EQ(f.m.last_reason(), MCREPL_REASON_RECREATE_COOLDOWN);
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_RECREATE_COOLDOWN_HITS), 1);
}

// Ours on purpose: two equal sources are told apart by libmcrepl's
// rendezvous score of (tenant, key, segment id), the highest wins (the
// tie-break of every placement choice, mcrepl/place.h), where upstream
// took the lowest FNV-1a score of (key, segment name).
UPSTREAM(SourceSelectionUsesStableTieBreak)
{
	MasterConfig c = Enforce();
	c.dynamic_replication_max_memory_replicas = 4;
	Fixture f(c);
	auto source0 = f.MountNamed("segment_0");
	auto source1 = f.MountNamed("segment_1");
	auto target = f.MountNamed("segment_2");
	f.PutOn(source0.client, "source-fanout-key", source0.segment_name);

	ASSERT_TRUE(f.m.CopyStart(source0.client, "source-fanout-key", kTenant,
				  source0.segment_name, {source1.segment_name})
			.has_value());
	ASSERT_TRUE(f.m.CopyEnd(source0.client, "source-fanout-key", kTenant)
			.has_value());

	auto lease = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("source-fanout-key", target.segment_name));
	ASSERT_TRUE(lease.has_value());
	auto score = [](const std::string &segment) {
		return mcrepl_rendezvous(kTenant.c_str(), "source-fanout-key",
					 mcrepl::Engine::SegmentId(segment).v,
					 0);
	};
	const uint64_t s0 = score(source0.segment_name);
	const uint64_t s1 = score(source1.segment_name);
	ASSERT_TRUE(s0 != s1);
	EXPECT_EQ(lease->source_segment,
		  s0 > s1 ? source0.segment_name : source1.segment_name);
}

UPSTREAM(TargetSelectionPrefersDifferentHost)
{
	Fixture f(Enforce());
	auto source = f.MountNamed("source_segment", "host-a");
	f.MountNamed("same_host_target", "host-a");
	f.MountNamed("other_host_target", "host-b");
	f.PutOn(source.client, "target-host-key", source.segment_name);

	auto lease =
	    f.m.SubmitReplicaActionProposal(f.ProposalFor("target-host-key"));
	ASSERT_TRUE(lease.has_value());
	EXPECT_EQ(lease->target_segment, std::string("other_host_target"));
}

// Upstream's ObserveWindowDropsNewKeysAtEntryLimit asserts that its window
// map (50,000 keys) drops new keys when full. Heat lives in each object's
// mcrepl::ObjectState here: reads of keys that are no object keep nothing,
// and an object read after more of them than that map held still crosses
// at exactly the hit count.
REPLACED(HeatCellIgnoresUnknownKeysAndKeepsTracking)
{
	MasterConfig c;
	c.dynamic_replication_mode = "observe";
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.PutOn(source.client, "tracked-key", source.segment_name);

	for (size_t i = 0; i <= 50000; i++)
		if (f.m.ObserveAccess("window-key-" + std::to_string(i),
				      kTenant))
			EXPECT_TRUE(false);
	const uint32_t hits = f.m.AdmissionMinHits();
	ASSERT_EQ(hits, 8u);
	for (uint32_t i = 1; i < hits; i++)
		EXPECT_FALSE(f.m.ObserveAccess("tracked-key", kTenant));
	EXPECT_TRUE(f.m.ObserveAccess("tracked-key", kTenant));
	EXPECT_FALSE(f.m.ObserveAccess("tracked-key", kTenant));
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_OBSERVED_HOT), 1);
}

// Upstream's ObserveWindowCleanupIsBoundedAtLimit bounds the scan that
// cleans its window map, which outlives objects. The heat state dies with
// its object: a removed hot key written again starts cold.
REPLACED(HeatCellDiesWithTheObject)
{
	MasterConfig c;
	c.dynamic_replication_mode = "observe";
	c.dynamic_replication_policy = "rfc"; // literal threshold
	c.dynamic_replication_admission_qps_threshold = 0.2;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.PutOn(source.client, "reborn-key", source.segment_name);

	EXPECT_FALSE(f.m.ObserveAccess("reborn-key", kTenant));
	EXPECT_TRUE(f.m.ObserveAccess("reborn-key", kTenant));
	ASSERT_TRUE(f.m.Remove("reborn-key", kTenant).has_value());
	EXPECT_FALSE(f.m.ObserveAccess("reborn-key", kTenant));
	f.PutOn(source.client, "reborn-key", source.segment_name);
	EXPECT_FALSE(f.m.ObserveAccess("reborn-key", kTenant));
	EXPECT_TRUE(f.m.ObserveAccess("reborn-key", kTenant));
}

// Under auto (the default) the read path's hit count follows the
// cluster's reads: after the first tick the floor of 6 on an idle cluster
// (where rfc would cross at 1 read); after 100,000 reads routed to one of
// two nodes within the window, ceil((1 + sqrt(1 + 500))^2) = 547, and a
// key read 100 times does not cross.
EXTRA(AutoPolicyThresholdFollowsClusterReads)
{
	MasterConfig c;
	c.dynamic_replication_mode = "observe";
	c.dynamic_replication_heat_window_seconds = 1;
	Fixture f(c);
	auto source = f.MountNamed("segment_0");
	f.MountNamed("segment_1");
	f.PutOn(source.client, "auto-key", source.segment_name);
	f.PutOn(source.client, "auto-key-2", source.segment_name);
	f.PutOn(source.client, "routed-key", source.segment_name);

	ASSERT_EQ(f.m.AdmissionMinHits(), 1u);
	ASSERT_EQ(f.m.Tick().threshold, 6u);
	for (int i = 1; i < 6; i++)
		EXPECT_FALSE(f.m.ObserveAccess("auto-key", kTenant));
	EXPECT_TRUE(f.m.ObserveAccess("auto-key", kTenant));

	for (int i = 0; i < 100000; i++)
		f.m.GetReplicaList("routed-key", kTenant);
	EXPECT_EQ(f.m.Tick().threshold, 547u);
	for (int i = 0; i < 100; i++)
		EXPECT_FALSE(f.m.ObserveAccess("auto-key-2", kTenant));
}

// The cleanup loop: a lease that expired before its copy started fails
// its task (gone from the client's queue); one whose copy started frees
// its target, and the copy's end finds nothing to end.
EXTRA(SweepFailsUnstartedTaskAndFreesStartedTarget)
{
	Fixture f(Enforce());
	auto source = f.MountNamed("segment_0");
	auto t1 = f.MountNamed("segment_1");
	auto t2 = f.MountNamed("segment_2");
	f.PutOn(source.client, "a", source.segment_name);
	f.PutOn(source.client, "b", source.segment_name);
	auto la = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("a", t1.segment_name));
	auto lb = f.m.SubmitReplicaActionProposal(
	    f.ProposalFor("b", t2.segment_name));
	ASSERT_TRUE(la.has_value() && lb.has_value());
	ASSERT_EQ(f.m.PendingTasks(source.client), 2u);
	ASSERT_TRUE(f.m.CopyStart(source.client, "b", kTenant,
				  lb->source_segment, {lb->target_segment},
				  lb->lease_id, lb->version_epoch)
			.has_value());
	EXPECT_EQ(f.m.SegmentUsed(t2.segment_name), kObjectSize);

	f.now += 29999;
	EXPECT_EQ(f.m.SweepLeases(), 0u);
	f.now += 1;
	EXPECT_EQ(f.m.SweepLeases(), 2u);
	EXPECT_EQ(f.m.PendingTasks(source.client), 1u);
	EXPECT_FALSE(f.Incomplete("b", t2.segment_name));
	EXPECT_EQ(f.m.SegmentUsed(t2.segment_name), 0u);
	EXPECT_FALSE(f.m.HasLeaseState("a", kTenant));
	EXPECT_FALSE(f.m.HasLeaseState("b", kTenant));
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TASKS_FAILED), 2);
	auto end = f.m.CopyEnd(source.client, "b", kTenant, lb->lease_id,
			       lb->version_epoch);
	ASSERT_FALSE(end.has_value());
	EXPECT_EQ(end.error(), ErrorCode::NO_REPLICATION_TASK);
}

// The admission loop's retirement (auto): once the key's reads left the
// heat window, the pass names its dynamic replica and the host drops it as
// eviction does.
EXTRA(RetirementDropsColdDynamicReplica)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("cooling-key", true);
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.CopyEnd(source.client, "cooling-key", kTenant,
				lease->lease_id, lease->version_epoch)
			.has_value());
	ASSERT_EQ(f.m.DynamicReplicaCount("cooling-key", kTenant), 1u);

	// a pass opens each window; it is due while it has keys to visit
	size_t passes = 0;
	for (int s = 0; s < 25; s++, f.now += 1000)
		passes += f.m.Tick().retire_due;
	EXPECT_EQ(passes, 1u);
	EXPECT_EQ(f.m.DynamicReplicaCount("cooling-key", kTenant), 0u);
	EXPECT_FALSE(f.Complete("cooling-key", target.segment_name));
	EXPECT_EQ(f.m.SegmentUsed(target.segment_name), 0u);
	ASSERT_TRUE(f.m.GetReplicaList("cooling-key", kTenant).has_value());
	EXPECT_TRUE(f.m.Metrics().find("mcrepl_policy_retired_total 1\n") !=
		    std::string::npos);
}

// Remove while a lease has not started: the lease goes with the object,
// and its task, still queued, fails on the object's absence.
EXTRA(RemoveClearsUnstartedLease)
{
	Fixture f(Enforce());
	auto [source, target, lease] = f.LeasedCopy("gone-key", false);
	ASSERT_TRUE(lease.has_value());
	ASSERT_TRUE(f.m.Remove("gone-key", kTenant).has_value());
	EXPECT_FALSE(f.m.HasLeaseState("gone-key", kTenant));
	EXPECT_EQ(f.m.engine().Stat(MCREPL_STAT_TASKS_FAILED), 1);
	auto start = f.m.CopyStart(
	    source.client, "gone-key", kTenant, lease->source_segment,
	    {lease->target_segment}, lease->lease_id, lease->version_epoch);
	ASSERT_FALSE(start.has_value());
	EXPECT_EQ(start.error(), ErrorCode::OBJECT_NOT_FOUND);
}
