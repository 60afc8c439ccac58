// A Mooncake-shaped master for the adapter's tests and bench: segments by
// name (mount / unmount, capacity and used bytes), objects with a version
// epoch and PROCESSING / COMPLETE replicas, GetReplicaList and
// BatchGetReplicaList, replica action proposals answered with leases, one
// task queue per client (FetchTasks), CopyStart / CopyEnd / CopyRevoke with
// the host's own checks, eviction, the expiry of processing replicas,
// Remove, and the background loops (admission, cleanup) run when the
// caller says, on a clock the caller moves.
//
// It calls the adapter (mcrepl/adapter.hpp) where a Mooncake master would:
// each call site carries a `// hook: <name>` comment (docs/MOONCAKE.md
// points at them). Its structs have the shapes of Mooncake's (Segment,
// ReplicaActionProposal, ReplicaActionLease, ReplicaCopyPayload) and are
// read and filled through mcrepl/adapter_binding.hpp.
//
// Single-threaded: no locks; where a real master holds its object's lock
// the comments say so.
#ifndef MINIMASTER_HPP
#define MINIMASTER_HPP

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <mcrepl/adapter.hpp>

namespace mini
{

using UUID = std::pair<uint64_t, uint64_t>;

#define MINI_ERROR_CODES(X)                                                    \
	X(OK)                                                                  \
	X(INVALID_PARAMS)                                                      \
	X(OBJECT_NOT_FOUND)                                                    \
	X(OBJECT_ALREADY_EXISTS)                                               \
	X(OBJECT_HAS_REPLICATION_TASK)                                         \
	X(NO_REPLICATION_TASK)                                                 \
	X(REPLICA_NOT_FOUND)                                                   \
	X(REPLICA_IS_GONE)                                                     \
	X(SEGMENT_NOT_FOUND)                                                   \
	X(SEGMENT_ALREADY_EXISTS)                                              \
	X(NO_AVAILABLE_HANDLE)                                                 \
	X(INVALID_VERSION)                                                     \
	X(ILLEGAL_CLIENT)                                                      \
	X(LEASE_EXPIRED)                                                       \
	X(TASK_NOT_FOUND)                                                      \
	X(UNAVAILABLE_IN_CURRENT_STATUS)

enum class ErrorCode {
#define MINI_ENUM(name) name,
	MINI_ERROR_CODES(MINI_ENUM)
#undef MINI_ENUM
};
const char *ErrorName(ErrorCode c);

// The host's whole mapping of the engine's answers to its error codes.
extern const mcrepl::OutcomeTable<ErrorCode> kOutcomeCodes;

struct Unexpected {
	ErrorCode code;
};
inline Unexpected MakeUnexpected(ErrorCode c)
{
	return Unexpected{c};
}

// A value or an error code (Mooncake's tl::expected, reduced).
template <typename T> class Expected
{
      public:
	Expected(T v) : v_(std::move(v)), err_(ErrorCode::OK)
	{
	}
	Expected(Unexpected u) : err_(u.code)
	{
	}
	bool has_value() const
	{
		return err_ == ErrorCode::OK;
	}
	ErrorCode error() const
	{
		return err_;
	}
	const T &value() const
	{
		return *v_;
	}
	const T *operator->() const
	{
		return &*v_;
	}
	const T &operator*() const
	{
		return *v_;
	}

      private:
	std::optional<T> v_;
	ErrorCode err_;
};

template <> class Expected<void>
{
      public:
	Expected() : err_(ErrorCode::OK)
	{
	}
	Expected(Unexpected u) : err_(u.code)
	{
	}
	bool has_value() const
	{
		return err_ == ErrorCode::OK;
	}
	ErrorCode error() const
	{
		return err_;
	}

      private:
	ErrorCode err_;
};

// Mooncake's flags for dynamic replication (and the driver's own).
struct MasterConfig {
	std::string dynamic_replication_mode = "off";
	std::string dynamic_replication_policy = "auto";
	uint64_t dynamic_replication_heat_window_seconds = 10;
	double dynamic_replication_admission_qps_threshold = 0.8;
	uint32_t dynamic_replication_max_memory_replicas = 2;
	// any other libmcrepl knob, passed through
	std::vector<std::pair<std::string, std::string>> knobs;
	uint64_t incarnation = 0;	       // 0: drawn at random
	uint64_t admission_tick_ms = 100;      // the admission loop's period
	uint64_t processing_timeout_ms = 1000; // a copy's PROCESSING replicas
	size_t max_pending_tasks = 10000;      // per client
};

struct Segment {
	UUID id{0, 0};
	std::string name;
	uint64_t base = 0;
	uint64_t size = 0;
	std::string te_endpoint;
	std::string host_id;
};

enum class ReplicaStatus { PROCESSING, COMPLETE };

struct ReplicaDescriptor {
	uint64_t id = 0;
	std::string segment; // the segment it lives in (its endpoint)
	ReplicaStatus status = ReplicaStatus::COMPLETE;
};

struct GetReplicaListResponse {
	std::vector<ReplicaDescriptor> replicas; // readers take [0]
};

struct ReplicaActionProposal {
	UUID proposal_id{0, 0};
	std::string tenant_id = "default";
	std::string key;
	std::string requester_domain;
	uint64_t observed_version_epoch = 0;
	uint64_t object_size_bytes = 0;
	std::string target_domain;
	std::optional<std::string> preferred_target_segment;
	int64_t expire_at_ms_epoch = 0;
};

struct ReplicaActionLease {
	UUID proposal_id{0, 0};
	UUID lease_id{0, 0};
	std::string tenant_id = "default";
	std::string key;
	std::string source_segment;
	std::string target_segment;
	std::string target_domain;
	uint64_t version_epoch = 0;
	int64_t expire_at_ms_epoch = 0;
	UUID task_id{0, 0};
};

enum class TaskType { REPLICA_COPY };

struct ReplicaCopyPayload {
	std::string tenant_id = "default";
	std::string key;
	std::string source;
	std::vector<std::string> targets;
	uint64_t dynamic_replication_lease_id_high = 0;
	uint64_t dynamic_replication_lease_id_low = 0;
	uint64_t dynamic_replication_version_epoch = 0;
};

struct TaskAssignment {
	UUID id{0, 0};
	TaskType type = TaskType::REPLICA_COPY;
	ReplicaCopyPayload payload;
};

class MiniMaster
{
      public:
	// clock: the master's milliseconds (also the engine's, and the
	// proposals' deadlines). error(): why the engine was not made.
	MiniMaster(const MasterConfig &cfg, mcrepl::Clock clock);
	bool ok() const
	{
		return engine_ != nullptr;
	}
	const std::string &error() const
	{
		return error_;
	}
	mcrepl::Engine &engine()
	{
		return *engine_;
	}

	// segments
	Expected<void> MountSegment(const Segment &seg, const UUID &client);
	Expected<void> UnmountSegment(const UUID &segment_id,
				      const UUID &client);

	// objects
	Expected<void> PutStart(const UUID &client, const std::string &key,
				const std::string &tenant, uint64_t size,
				const std::string &preferred_segment);
	Expected<void> PutEnd(const UUID &client, const std::string &key,
			      const std::string &tenant);
	Expected<GetReplicaListResponse>
	GetReplicaList(const std::string &key, const std::string &tenant);
	std::vector<Expected<GetReplicaListResponse>>
	BatchGetReplicaList(const std::vector<std::string> &keys,
			    const std::string &tenant);
	Expected<void> Remove(const std::string &key,
			      const std::string &tenant);

	// dynamic replication: proposals, tasks, copies
	Expected<ReplicaActionLease>
	SubmitReplicaActionProposal(const ReplicaActionProposal &p);
	Expected<std::vector<TaskAssignment>> FetchTasks(const UUID &client,
							 size_t max);
	Expected<void> MarkTaskToComplete(const UUID &client, const UUID &task,
					  bool success);
	// lease {0, 0}: an ordinary copy
	Expected<void> CopyStart(const UUID &client, const std::string &key,
				 const std::string &tenant,
				 const std::string &source,
				 const std::vector<std::string> &targets,
				 const UUID &lease = {0, 0},
				 uint64_t version = 0);
	Expected<void> CopyEnd(const UUID &client, const std::string &key,
			       const std::string &tenant,
			       const UUID &lease = {0, 0},
			       uint64_t version = 0);
	Expected<void> CopyRevoke(const UUID &client, const std::string &key,
				  const std::string &tenant,
				  const UUID &lease = {0, 0},
				  uint64_t version = 0);

	// The background loops, one turn each. AdmissionStep: the triggers
	// the read path queued, proposed (and Tick() first when there were
	// any or admission_tick_ms passed); returns the leases granted.
	// Tick: segments, the engine's tick, the retirement pass when due.
	// Cleanup: expired leases, then copies whose PROCESSING replicas
	// outlived processing_timeout_ms.
	size_t AdmissionStep();
	mcrepl::TickResult Tick();
	size_t Cleanup();
	size_t SweepLeases();
	size_t DiscardExpiredProcessingReplicas();

	// Eviction of key's MEMORY replicas on segment; how many went.
	size_t EvictOnSegment(const std::string &key, const std::string &tenant,
			      const std::string &segment);
	// The heat part of a read (no replica routed): true on a crossing.
	bool ObserveAccess(const std::string &key, const std::string &tenant);

	std::string Metrics();
	uint32_t AdmissionMinHits() const;
	// The reason of the engine's last answer (what a master logs).
	mcrepl_reason last_reason() const
	{
		return last_reason_;
	}

	// inspection, for tests
	bool Exists(const std::string &key, const std::string &tenant) const;
	uint64_t VersionEpoch(const std::string &key,
			      const std::string &tenant) const;
	uint64_t ObjectSize(const std::string &key,
			    const std::string &tenant) const;
	size_t DynamicReplicaCount(const std::string &key,
				   const std::string &tenant) const;
	bool HasDynamicReplica(const std::string &key,
			       const std::string &tenant,
			       const std::string &segment,
			       ReplicaStatus status) const;
	void RewriteObject(const std::string &key, const std::string &tenant);
	bool HasLeaseState(const std::string &key, const std::string &tenant);
	void ClearDynamicReplicationState(const std::string &key,
					  const std::string &tenant);
	uint64_t SegmentUsed(const std::string &segment) const;
	size_t PendingTasks(const UUID &client) const;

      private:
	struct Replica {
		uint64_t id;
		std::string segment;
		ReplicaStatus status;
		bool dynamic;
	};
	struct Copy {
		UUID client;
		std::string source;
		std::vector<uint64_t> targets; // replica ids
		UUID lease;		       // {0, 0}: ordinary
		uint64_t version;
		uint64_t started_ms;
	};
	struct Object {
		std::string tenant, key;
		uint64_t size = 0;
		uint64_t version = 0; // 0 until PutEnd
		UUID owner{0, 0};
		std::vector<Replica> replicas;
		// beside the object's lock in a real master
		mcrepl::ObjectState state;
		uint64_t reads = 0;
		std::optional<Copy> copy;
	};
	struct MountedSegment {
		Segment seg;
		UUID client;
		uint64_t used = 0;
	};
	struct Task {
		UUID id;
		UUID client;
		TaskAssignment assignment;
		bool fetched = false;
	};
	// Who reports a dynamic replica that goes, and how.
	enum class Report { Cooldown, NoCooldown, None };

	Object *Find(const std::string &tenant, const std::string &key);
	const Object *Find(const std::string &tenant,
			   const std::string &key) const;
	std::string Read(Object &o, GetReplicaListResponse &out);
	Expected<ReplicaActionLease> Propose(Object &o, mcrepl::Proposal p);
	Expected<ReplicaActionLease>
	MakeTask(const Object &o, const mcrepl::Proposal &p, mcrepl::Answer &a);
	mcrepl::Proposal Describe(Object &o);
	mcrepl_retire_probe Probe(const char *tenant, const char *key);
	bool Drop(const mcrepl::Retirement &r);
	void Expired(const mcrepl::CopyTask &t);
	size_t Erase(Object &o, Report how,
		     const std::function<bool(const Replica &)> &which);
	bool Allocate(const std::string &segment, uint64_t size);
	void Release(const std::string &segment, uint64_t size);
	mcrepl::Fence FenceFor(const Object &o, const UUID &client,
			       const UUID &lease, uint64_t version) const;
	ErrorCode Refused(const mcrepl::Answer &a);
	Expected<void> EndCopy(const UUID &client, const std::string &key,
			       const std::string &tenant, const UUID &lease,
			       uint64_t version, bool commit);
	void FailTask(const UUID &task);
	void EraseIfEmpty(const std::string &tenant, const std::string &key);
	UUID NewId(uint64_t kind);
	uint64_t Now() const
	{
		return clock_();
	}

	MasterConfig cfg_;
	mcrepl::Clock clock_;
	std::unique_ptr<mcrepl::Engine> engine_;
	std::string error_;
	std::map<std::string, MountedSegment> segments_;  // by name
	std::unordered_map<std::string, Object> objects_; // tenant \0 key
	std::map<UUID, std::deque<UUID>> queues_;	  // client -> tasks
	std::map<UUID, Task> tasks_;
	uint64_t next_id_ = 1, next_replica_ = 1, next_version_ = 1;
	uint64_t last_tick_ms_ = 0;
	bool ticked_ = false;
	mcrepl_reason last_reason_ = MCREPL_REASON_NONE;
};

} // namespace mini

#endif
