// The Mooncake-shaped master (minimaster.hpp). Each call into the adapter
// is marked `// hook: <name>`: where a Mooncake master makes that call.
#include "minimaster.hpp"

#include <algorithm>

#include <mcrepl/adapter_binding.hpp>

namespace mini
{

const char *ErrorName(ErrorCode c)
{
	switch (c) {
#define MINI_NAME(name)                                                        \
	case ErrorCode::name:                                                  \
		return #name;
		MINI_ERROR_CODES(MINI_NAME)
#undef MINI_NAME
	}
	return "unknown";
}

// The host's one table from the engine's outcome classes to its codes.
const mcrepl::OutcomeTable<ErrorCode> kOutcomeCodes = [] {
	mcrepl::OutcomeTable<ErrorCode> t;
	t.ok = ErrorCode::OK;
	t.invalid = ErrorCode::INVALID_PARAMS;
	t.not_found = ErrorCode::OBJECT_NOT_FOUND;
	t.stale = ErrorCode::INVALID_VERSION;
	t.busy = ErrorCode::OBJECT_HAS_REPLICATION_TASK;
	t.denied = ErrorCode::ILLEGAL_CLIENT;
	t.expired = ErrorCode::LEASE_EXPIRED;
	t.unavailable = ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS;
	return t;
}();

namespace
{
std::string ObjectKey(const std::string &tenant, const std::string &key)
{
	return tenant + '\0' + key;
}
} // namespace

MiniMaster::MiniMaster(const MasterConfig &cfg, mcrepl::Clock clock)
    : cfg_(cfg), clock_(std::move(clock))
{
	mcrepl::Options o;

	o.mode = cfg.dynamic_replication_mode;
	o.policy = cfg.dynamic_replication_policy;
	o.heat_window_seconds =
	    static_cast<double>(cfg.dynamic_replication_heat_window_seconds);
	o.admission_qps_threshold =
	    cfg.dynamic_replication_admission_qps_threshold;
	o.max_memory_replicas = cfg.dynamic_replication_max_memory_replicas;
	o.knobs = cfg.knobs;
	o.incarnation = cfg.incarnation;
	// hook: Create
	engine_ = mcrepl::Engine::Create(o, &error_, clock_);
}

MiniMaster::Object *MiniMaster::Find(const std::string &tenant,
				     const std::string &key)
{
	auto it = objects_.find(ObjectKey(tenant, key));
	return it == objects_.end() ? nullptr : &it->second;
}

const MiniMaster::Object *MiniMaster::Find(const std::string &tenant,
					   const std::string &key) const
{
	auto it = objects_.find(ObjectKey(tenant, key));
	return it == objects_.end() ? nullptr : &it->second;
}

UUID MiniMaster::NewId(uint64_t kind)
{
	return UUID{kind, next_id_++};
}

// ---- segments ----------------------------------------------------------------

Expected<void> MiniMaster::MountSegment(const Segment &seg, const UUID &client)
{
	if (seg.name.empty() || seg.size == 0)
		return MakeUnexpected(ErrorCode::INVALID_PARAMS);
	if (segments_.count(seg.name))
		return MakeUnexpected(ErrorCode::SEGMENT_ALREADY_EXISTS);
	segments_[seg.name] = MountedSegment{seg, client, 0};
	// hook: SetSegment
	engine_->SetSegment(mcrepl::binding::SegmentOf(seg, client, 0));
	return {};
}

Expected<void> MiniMaster::UnmountSegment(const UUID &segment_id,
					  const UUID &client)
{
	auto it = std::find_if(
	    segments_.begin(), segments_.end(),
	    [&](const auto &kv) { return kv.second.seg.id == segment_id; });
	if (it == segments_.end())
		return MakeUnexpected(ErrorCode::SEGMENT_NOT_FOUND);
	if (it->second.client != client)
		return MakeUnexpected(ErrorCode::ILLEGAL_CLIENT);
	const std::string name = it->first;
	std::vector<std::pair<std::string, std::string>> emptied;

	// its replicas are lost: a dynamic one enters the recreate cooldown
	for (auto &kv : objects_) {
		Object &o = kv.second;
		Erase(o, Report::Cooldown,
		      [&](const Replica &r) { return r.segment == name; });
		if (o.replicas.empty() && !o.copy)
			emptied.emplace_back(o.tenant, o.key);
	}
	for (const auto &tk : emptied)
		EraseIfEmpty(tk.first, tk.second);
	segments_.erase(it);
	// hook: RemoveSegment
	engine_->RemoveSegment(name);
	return {};
}

bool MiniMaster::Allocate(const std::string &segment, uint64_t size)
{
	auto it = segments_.find(segment);
	if (it == segments_.end() ||
	    it->second.used + size > it->second.seg.size)
		return false;
	it->second.used += size;
	// hook: SegmentUsed
	engine_->SegmentUsed(segment, it->second.used);
	return true;
}

void MiniMaster::Release(const std::string &segment, uint64_t size)
{
	auto it = segments_.find(segment);
	if (it == segments_.end())
		return;
	it->second.used -= std::min(size, it->second.used);
	// hook: SegmentUsed
	engine_->SegmentUsed(segment, it->second.used);
}

uint64_t MiniMaster::SegmentUsed(const std::string &segment) const
{
	auto it = segments_.find(segment);
	return it == segments_.end() ? 0 : it->second.used;
}

// ---- objects -----------------------------------------------------------------

Expected<void> MiniMaster::PutStart(const UUID &client, const std::string &key,
				    const std::string &tenant, uint64_t size,
				    const std::string &preferred_segment)
{
	if (key.empty() || size == 0)
		return MakeUnexpected(ErrorCode::INVALID_PARAMS);
	if (Find(tenant, key))
		return MakeUnexpected(ErrorCode::OBJECT_ALREADY_EXISTS);
	std::string seg = preferred_segment;
	if (!segments_.count(seg)) { // the least used, the first on ties
		uint64_t best = UINT64_MAX;
		for (const auto &kv : segments_)
			if (kv.second.used < best) {
				best = kv.second.used;
				seg = kv.first;
			}
	}
	if (!Allocate(seg, size))
		return MakeUnexpected(ErrorCode::NO_AVAILABLE_HANDLE);
	Object &o = objects_[ObjectKey(tenant, key)];
	o.tenant = tenant;
	o.key = key;
	o.size = size;
	o.owner = client;
	// a new object: its mcrepl::ObjectState is cold
	o.replicas.push_back(
	    Replica{next_replica_++, seg, ReplicaStatus::PROCESSING, false});
	return {};
}

Expected<void> MiniMaster::PutEnd(const UUID &client, const std::string &key,
				  const std::string &tenant)
{
	Object *o = Find(tenant, key);
	if (!o)
		return MakeUnexpected(ErrorCode::OBJECT_NOT_FOUND);
	if (o->owner != client)
		return MakeUnexpected(ErrorCode::ILLEGAL_CLIENT);
	for (Replica &r : o->replicas)
		r.status = ReplicaStatus::COMPLETE;
	o->version = next_version_++;
	return {};
}

// The readable replicas of o into out, the one readers take first at [0];
// the read counted. "" or why not.
std::string MiniMaster::Read(Object &o, GetReplicaListResponse &out)
{
	std::vector<mcrepl::ReadReplica> heat;

	for (const Replica &r : o.replicas) {
		if (r.status != ReplicaStatus::COMPLETE)
			continue;
		out.replicas.push_back(
		    ReplicaDescriptor{r.id, r.segment, r.status});
	}
	if (out.replicas.empty())
		return "no complete replica";
	for (const ReplicaDescriptor &d : out.replicas)
		heat.push_back(mcrepl::ReadReplica{d.id, d.segment.c_str()});
	// under the object's lock, once the readable replicas are listed
	// hook: OnRead
	const mcrepl::Read r =
	    engine_->OnRead(o.state, o.tenant, o.key, heat, o.reads++);
	if (r.first != 0 && r.first < out.replicas.size())
		std::swap(out.replicas[0], out.replicas[r.first]);
	return "";
}

Expected<GetReplicaListResponse>
MiniMaster::GetReplicaList(const std::string &key, const std::string &tenant)
{
	Object *o = Find(tenant, key);
	GetReplicaListResponse out;

	if (!o)
		return MakeUnexpected(ErrorCode::OBJECT_NOT_FOUND);
	if (!Read(*o, out).empty())
		return MakeUnexpected(ErrorCode::REPLICA_IS_GONE);
	return out;
}

std::vector<Expected<GetReplicaListResponse>>
MiniMaster::BatchGetReplicaList(const std::vector<std::string> &keys,
				const std::string &tenant)
{
	std::vector<Expected<GetReplicaListResponse>> out;

	for (const std::string &key : keys) {
		Object *o = Find(tenant, key);
		GetReplicaListResponse r;

		if (!o)
			out.push_back(
			    MakeUnexpected(ErrorCode::OBJECT_NOT_FOUND));
		else if (!Read(*o, r).empty())
			out.push_back(
			    MakeUnexpected(ErrorCode::REPLICA_IS_GONE));
		else
			out.push_back(std::move(r));
	}
	return out;
}

bool MiniMaster::ObserveAccess(const std::string &key,
			       const std::string &tenant)
{
	Object *o = Find(tenant, key);
	if (!o) // a key that is no object: nothing is kept for it
		return false;
	// hook: OnRead
	return engine_
	    ->OnRead(o->state, o->tenant, o->key, nullptr, 0, o->reads++)
	    .crossed;
}

size_t MiniMaster::Erase(Object &o, Report how,
			 const std::function<bool(const Replica &)> &which)
{
	size_t n = 0;

	for (auto it = o.replicas.begin(); it != o.replicas.end();) {
		if (!which(*it)) {
			++it;
			continue;
		}
		Release(it->segment, o.size);
		if (it->dynamic && how != Report::None)
			// every dynamic replica that goes: eviction,
			// retirement, loss, expiry, Remove
			// hook: ReplicaDropped
			engine_->ReplicaDropped(o.tenant, o.key, it->segment,
						how == Report::Cooldown);
		it = o.replicas.erase(it);
		n++;
	}
	return n;
}

void MiniMaster::EraseIfEmpty(const std::string &tenant, const std::string &key)
{
	Object *o = Find(tenant, key);
	if (o && o->replicas.empty() && !o->copy)
		objects_.erase(ObjectKey(tenant, key));
}

Expected<void> MiniMaster::Remove(const std::string &key,
				  const std::string &tenant)
{
	Object *o = Find(tenant, key);
	if (!o)
		return MakeUnexpected(ErrorCode::OBJECT_NOT_FOUND);
	if (o->copy)
		return MakeUnexpected(ErrorCode::OBJECT_HAS_REPLICATION_TASK);
	// hook: ObjectRemoved
	if (engine_->ObjectRemoved(tenant, key) == MCREPL_EBUSY)
		return MakeUnexpected(ErrorCode::OBJECT_HAS_REPLICATION_TASK);
	// the key written again is another object: no recreate cooldown
	Erase(*o, Report::NoCooldown, [](const Replica &) { return true; });
	objects_.erase(ObjectKey(tenant, key));
	return {};
}

size_t MiniMaster::EvictOnSegment(const std::string &key,
				  const std::string &tenant,
				  const std::string &segment)
{
	Object *o = Find(tenant, key);
	if (!o)
		return 0;
	const size_t n = Erase(*o, Report::Cooldown, [&](const Replica &r) {
		return r.segment == segment;
	});
	EraseIfEmpty(tenant, key);
	return n;
}

// ---- proposals and tasks -------------------------------------------------------

ErrorCode MiniMaster::Refused(const mcrepl::Answer &a)
{
	last_reason_ = a.reason;
	return kOutcomeCodes(a.outcome);
}

// The engine's view of o: its version, size, replicas, heat.
mcrepl::Proposal MiniMaster::Describe(Object &o)
{
	mcrepl::Proposal p;

	p.tenant = o.tenant;
	p.key = o.key;
	p.object.exists = o.version != 0;
	p.object.version = o.version;
	p.object.size = o.size;
	p.object.busy = o.copy && o.copy->lease == UUID{0, 0};
	for (const Replica &r : o.replicas) {
		const bool readable = r.status == ReplicaStatus::COMPLETE;
		p.object.readable_memory_replicas += readable;
		p.replicas.push_back(
		    mcrepl::NamedReplica{r.segment, readable, true, r.dynamic});
	}
	// hook: HeatOf
	p.heat = engine_->HeatOf(o.state);
	return p;
}

Expected<ReplicaActionLease> MiniMaster::Propose(Object &o, mcrepl::Proposal p)
{
	const mcrepl::Proposal view = Describe(o);

	p.object = view.object;
	p.heat = view.heat;
	p.replicas = view.replicas;
	// hook: Propose
	mcrepl::Answer a = engine_->Propose(p);
	last_reason_ = a.reason;
	if (!a.ok())
		return MakeUnexpected(Refused(a));
	return MakeTask(o, p, a);
}

// A lease granted (or a repeated proposal): its REPLICA_COPY task on the
// source segment's client, bound to the lease.
Expected<ReplicaActionLease> MiniMaster::MakeTask(const Object &o,
						  const mcrepl::Proposal &p,
						  mcrepl::Answer &a)
{
	ReplicaActionLease lease;

	if (!a.repeated) {
		auto src = segments_.find(a.task.source);
		if (src == segments_.end() ||
		    queues_[src->second.client].size() >=
			cfg_.max_pending_tasks) {
			// hook: Abort
			engine_->Abort(a.task.lease);
			return MakeUnexpected(
			    ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
		}
		Task t;
		t.id = NewId(0x7461736bULL); // "task"
		t.client = src->second.client;
		t.assignment.id = t.id;
		mcrepl::binding::FillCopyPayload(t.assignment.payload, a.task,
						 o.tenant, o.key);
		// hook: BindTask
		if (engine_->BindTask(a.task.lease, t.id) != MCREPL_OK)
			return MakeUnexpected(
			    ErrorCode::UNAVAILABLE_IN_CURRENT_STATUS);
		a.task.task = t.id;
		queues_[t.client].push_back(t.id);
		tasks_[t.id] = std::move(t);
	}
	mcrepl::binding::FillLease(lease, p, a);
	return lease;
}

Expected<ReplicaActionLease>
MiniMaster::SubmitReplicaActionProposal(const ReplicaActionProposal &rp)
{
	mcrepl::Proposal p = mcrepl::binding::ProposalOf(rp);
	Object *o = Find(rp.tenant_id, rp.key);

	if (!o) {
		// the engine judges a missing object too (counted)
		Object gone;
		gone.tenant = rp.tenant_id;
		gone.key = rp.key;
		return Propose(gone, p);
	}
	return Propose(*o, p);
}

Expected<std::vector<TaskAssignment>> MiniMaster::FetchTasks(const UUID &client,
							     size_t max)
{
	std::vector<TaskAssignment> out;
	auto q = queues_.find(client);

	if (q == queues_.end())
		return out;
	for (const UUID &id : q->second) {
		if (out.size() == max)
			break;
		Task &t = tasks_[id];
		if (t.fetched)
			continue;
		t.fetched = true;
		out.push_back(t.assignment);
	}
	return out;
}

Expected<void> MiniMaster::MarkTaskToComplete(const UUID &client,
					      const UUID &task, bool success)
{
	(void)success; // a failed dynamic task's lease expires by the sweep
	auto it = tasks_.find(task);
	if (it == tasks_.end())
		return MakeUnexpected(ErrorCode::TASK_NOT_FOUND);
	if (it->second.client != client)
		return MakeUnexpected(ErrorCode::ILLEGAL_CLIENT);
	FailTask(task);
	return {};
}

// The task goes from its client's queue and the task table.
void MiniMaster::FailTask(const UUID &task)
{
	auto it = tasks_.find(task);
	if (it == tasks_.end())
		return;
	auto &q = queues_[it->second.client];
	q.erase(std::remove(q.begin(), q.end(), task), q.end());
	tasks_.erase(it);
}

size_t MiniMaster::PendingTasks(const UUID &client) const
{
	auto q = queues_.find(client);
	return q == queues_.end() ? 0 : q->second.size();
}

// ---- copies ------------------------------------------------------------------------

mcrepl::Fence MiniMaster::FenceFor(const Object &o, const UUID &client,
				   const UUID &lease, uint64_t version) const
{
	mcrepl::Fence f;

	f.tenant = o.tenant;
	f.key = o.key;
	f.lease = lease;
	f.caller = client;
	f.version = version;
	f.object_version = o.version;
	return f;
}

Expected<void> MiniMaster::CopyStart(const UUID &client, const std::string &key,
				     const std::string &tenant,
				     const std::string &source,
				     const std::vector<std::string> &targets,
				     const UUID &lease, uint64_t version)
{
	Object *o = Find(tenant, key);
	const bool dynamic = lease != UUID{0, 0};

	if (!o)
		return MakeUnexpected(ErrorCode::OBJECT_NOT_FOUND);
	if (dynamic) {
		mcrepl::Fence f = FenceFor(*o, client, lease, version);
		f.source = source;
		f.targets = targets;
		// hook: CopyStart
		const mcrepl::Answer a = engine_->CopyStart(f);
		if (!a.ok())
			return MakeUnexpected(Refused(a));
	} else {
		// hook: KeyPending
		if (engine_->KeyPending(tenant, key))
			return MakeUnexpected(
			    ErrorCode::OBJECT_HAS_REPLICATION_TASK);
	}
	// the host's own checks; a dynamic copy that fails them ends its
	// lease at once
	auto fail = [&](ErrorCode c) {
		if (dynamic)
			// hook: CopyFailed
			engine_->CopyFailed(lease);
		return MakeUnexpected(c);
	};
	if (o->copy)
		return fail(ErrorCode::OBJECT_HAS_REPLICATION_TASK);
	for (const std::string &t : targets)
		if (!segments_.count(t))
			return fail(ErrorCode::SEGMENT_NOT_FOUND);
	const bool has_source = std::any_of(
	    o->replicas.begin(), o->replicas.end(), [&](const Replica &r) {
		    return r.segment == source &&
			   r.status == ReplicaStatus::COMPLETE;
	    });
	if (!has_source)
		return fail(ErrorCode::REPLICA_NOT_FOUND);
	std::vector<std::string> fresh;
	for (const std::string &t : targets)
		if (std::none_of(
			o->replicas.begin(), o->replicas.end(),
			[&](const Replica &r) { return r.segment == t; }))
			fresh.push_back(t);
	if (fresh.empty())
		return fail(ErrorCode::OBJECT_ALREADY_EXISTS);
	for (size_t i = 0; i < fresh.size(); i++)
		if (!Allocate(fresh[i], o->size)) {
			for (size_t k = 0; k < i; k++)
				Release(fresh[k], o->size);
			return fail(ErrorCode::NO_AVAILABLE_HANDLE);
		}
	Copy c{client, source, {}, lease, version, Now()};
	for (const std::string &t : fresh) {
		o->replicas.push_back(Replica{
		    next_replica_, t, ReplicaStatus::PROCESSING, dynamic});
		c.targets.push_back(next_replica_++);
	}
	o->copy = c;
	return {};
}

Expected<void> MiniMaster::EndCopy(const UUID &client, const std::string &key,
				   const std::string &tenant, const UUID &lease,
				   uint64_t version, bool commit)
{
	Object *o = Find(tenant, key);

	if (!o)
		return MakeUnexpected(ErrorCode::OBJECT_NOT_FOUND);
	if (!o->copy)
		return MakeUnexpected(ErrorCode::NO_REPLICATION_TASK);
	const Copy c = *o->copy;
	if (c.client != client)
		return MakeUnexpected(ErrorCode::ILLEGAL_CLIENT);
	// the task's binding: the lease and version its copy started with
	if (c.lease != lease || c.version != version)
		return MakeUnexpected(ErrorCode::INVALID_VERSION);
	auto targets = [&](const Replica &r) {
		return std::find(c.targets.begin(), c.targets.end(), r.id) !=
		       c.targets.end();
	};
	mcrepl::Answer a;
	if (lease != UUID{0, 0}) {
		const mcrepl::Fence f = FenceFor(*o, client, lease, version);
		if (commit) {
			// hook: CopyEnd
			a = engine_->CopyEnd(f);
		} else {
			// hook: CopyRevoke
			a = engine_->CopyRevoke(f);
		}
		if (!a.ok()) {
			if (a.outcome == mcrepl::Outcome::Expired) {
				// the lease retired here, not by the sweep
				Erase(*o, Report::None, targets);
				o->copy.reset();
			}
			return MakeUnexpected(Refused(a));
		}
	}
	size_t committed = 0;
	if (commit)
		for (Replica &r : o->replicas)
			if (targets(r)) {
				r.status = ReplicaStatus::COMPLETE;
				committed++;
			}
	if (!commit) // the revoked copy's targets were never readable
		Erase(*o, Report::None, targets);
	o->copy.reset();
	if (commit && lease != UUID{0, 0})
		// hook: CopyCommitted
		engine_->CopyCommitted(a.task, tenant, key, committed > 0);
	if (commit && committed == 0)
		return MakeUnexpected(ErrorCode::REPLICA_IS_GONE);
	return {};
}

Expected<void> MiniMaster::CopyEnd(const UUID &client, const std::string &key,
				   const std::string &tenant, const UUID &lease,
				   uint64_t version)
{
	return EndCopy(client, key, tenant, lease, version, true);
}

Expected<void> MiniMaster::CopyRevoke(const UUID &client,
				      const std::string &key,
				      const std::string &tenant,
				      const UUID &lease, uint64_t version)
{
	return EndCopy(client, key, tenant, lease, version, false);
}

// ---- the background loops ----------------------------------------------------------

mcrepl::TickResult MiniMaster::Tick()
{
	std::vector<mcrepl::Segment> segs;

	for (const auto &kv : segments_)
		segs.push_back(mcrepl::binding::SegmentOf(
		    kv.second.seg, kv.second.client, kv.second.used));
	// hook: SyncSegments
	engine_->SyncSegments(segs);
	// hook: Tick
	const mcrepl::TickResult t = engine_->Tick();
	last_tick_ms_ = Now();
	ticked_ = true;
	if (t.retire_due)
		// hook: Retire
		engine_->Retire(
		    [this](const char *tenant, const char *key, const char *) {
			    return Probe(tenant, key);
		    },
		    [this](const mcrepl::Retirement &r) { return Drop(r); });
	return t;
}

// What the retirement pass asks of an object (under the engine's mutex:
// no engine call but HeatOf).
mcrepl_retire_probe MiniMaster::Probe(const char *tenant, const char *key)
{
	mcrepl_retire_probe p = {};
	Object *o = Find(tenant, key);

	if (!o) {
		p.gone = true;
		return p;
	}
	p.busy = o->copy.has_value();
	// hook: HeatOf
	p.count = engine_->HeatOf(o->state).count;
	for (const Replica &r : o->replicas)
		p.readable += r.status == ReplicaStatus::COMPLETE;
	return p;
}

// A retirement: the dynamic replica goes as eviction drops one.
bool MiniMaster::Drop(const mcrepl::Retirement &r)
{
	Object *o = Find(r.tenant, r.key);
	if (!o || o->copy)
		return false;
	const size_t readable = std::count_if(
	    o->replicas.begin(), o->replicas.end(), [](const Replica &x) {
		    return x.status == ReplicaStatus::COMPLETE;
	    });
	if (readable < 2)
		return false;
	return Erase(*o, Report::Cooldown, [&](const Replica &x) {
		       return x.dynamic && x.segment == r.segment &&
			      x.status == ReplicaStatus::COMPLETE;
	       }) > 0;
}

size_t MiniMaster::AdmissionStep()
{
	// hook: TriggersPop
	const std::vector<mcrepl::Trigger> triggers = engine_->TriggersPop(256);
	size_t granted = 0;

	if (!triggers.empty() || !ticked_ ||
	    Now() - last_tick_ms_ >= cfg_.admission_tick_ms)
		Tick();
	for (const mcrepl::Trigger &t : triggers) {
		Object *o = Find(t.tenant, t.key);
		if (!o)
			continue;
		mcrepl::Proposal p;
		p.id = NewId(0x70726f70ULL); // "prop"
		p.tenant = t.tenant;
		p.key = t.key;
		granted += Propose(*o, p).has_value();
	}
	return granted;
}

// An expired lease: its task fails when it had not started; a started
// copy's target is freed.
void MiniMaster::Expired(const mcrepl::CopyTask &t)
{
	const UUID task = t.task.As<UUID>();
	auto it = tasks_.find(task);

	if (!t.started) {
		FailTask(task);
		return;
	}
	if (it == tasks_.end())
		return;
	// the copy task does not name its object: the payload does
	const ReplicaCopyPayload &pl = it->second.assignment.payload;
	Object *o = Find(pl.tenant_id, pl.key);
	if (!o || !o->copy || o->copy->lease != t.lease.As<UUID>())
		return;
	const std::vector<uint64_t> ids = o->copy->targets;
	Erase(*o, Report::None, [&](const Replica &r) {
		return std::find(ids.begin(), ids.end(), r.id) != ids.end();
	});
	o->copy.reset();
}

size_t MiniMaster::SweepLeases()
{
	// hook: Sweep
	return engine_->Sweep(
	    [this](const mcrepl::CopyTask &t) { Expired(t); });
}

size_t MiniMaster::DiscardExpiredProcessingReplicas()
{
	size_t n = 0;

	for (auto &kv : objects_) {
		Object &o = kv.second;
		if (!o.copy ||
		    Now() - o.copy->started_ms < cfg_.processing_timeout_ms)
			continue;
		const Copy c = *o.copy;
		Erase(o, Report::Cooldown, [&](const Replica &r) {
			return std::find(c.targets.begin(), c.targets.end(),
					 r.id) != c.targets.end();
		});
		o.copy.reset();
		if (c.lease != UUID{0, 0})
			// hook: CopyFailed
			engine_->CopyFailed(c.lease);
		n++;
	}
	return n;
}

size_t MiniMaster::Cleanup()
{
	return SweepLeases() + DiscardExpiredProcessingReplicas();
}

std::string MiniMaster::Metrics()
{
	// hook: Metrics
	return engine_->Metrics();
}

uint32_t MiniMaster::AdmissionMinHits() const
{
	return mcrepl_config_threshold(&engine_->Config());
}

// ---- inspection ------------------------------------------------------------------------

bool MiniMaster::Exists(const std::string &key, const std::string &tenant) const
{
	return Find(tenant, key) != nullptr;
}

uint64_t MiniMaster::VersionEpoch(const std::string &key,
				  const std::string &tenant) const
{
	const Object *o = Find(tenant, key);
	return o ? o->version : 0;
}

uint64_t MiniMaster::ObjectSize(const std::string &key,
				const std::string &tenant) const
{
	const Object *o = Find(tenant, key);
	return o ? o->size : 0;
}

size_t MiniMaster::DynamicReplicaCount(const std::string &key,
				       const std::string &tenant) const
{
	const Object *o = Find(tenant, key);
	if (!o)
		return 0;
	return std::count_if(o->replicas.begin(), o->replicas.end(),
			     [](const Replica &r) { return r.dynamic; });
}

bool MiniMaster::HasDynamicReplica(const std::string &key,
				   const std::string &tenant,
				   const std::string &segment,
				   ReplicaStatus status) const
{
	const Object *o = Find(tenant, key);
	return o && std::any_of(o->replicas.begin(), o->replicas.end(),
				[&](const Replica &r) {
					return r.dynamic &&
					       r.segment == segment &&
					       r.status == status;
				});
}

void MiniMaster::RewriteObject(const std::string &key,
			       const std::string &tenant)
{
	Object *o = Find(tenant, key);
	if (o)
		o->version = next_version_++;
}

bool MiniMaster::HasLeaseState(const std::string &key,
			       const std::string &tenant)
{
	return engine_->KeyPending(tenant, key);
}

void MiniMaster::ClearDynamicReplicationState(const std::string &key,
					      const std::string &tenant)
{
	// the leases of the key that did not start go (their tasks stay
	// queued and fail their fence)
	engine_->ObjectRemoved(tenant, key);
}

} // namespace mini
