// libmcrepl for C++17 hosts: the host calls of mcrepl/host.h in C++ types,
// header-only, needing only libmcrepl's C headers and the standard library.
//
// This header is the contract: what is not declared here is private (the
// namespace mcrepl::detail included).
//
// A master written in C++ (Mooncake's, or tests/adapter/minimaster.cpp in
// libmcrepl) builds an Options from its own flags, creates one Engine and
// calls it where the calls table below says; mcrepl/adapter_binding.hpp
// adds templates that read and fill the host's own structs by member name.
//
//   the host's event                      the call
//   the master starts                     Engine::Create() (Options from
//                                         its flags; a bad one is named)
//   an object is created                  its ObjectState, cold
//   a segment mounted / changed           Engine::SetSegment()
//   a segment unmounted                   Engine::RemoveSegment()
//   bytes allocated or freed on one       Engine::SegmentUsed()
//   or its whole list, periodically       Engine::SyncSegments()
//   a read returns replicas               Engine::OnRead() (under the
//                                         object's lock; reorders nothing
//                                         itself: Read::first is the one
//                                         readers should take first)
//   the admission loop's turn             Engine::Tick(), Engine::Retire()
//                                         when retire_due, then
//                                         Engine::TriggersPop() and for each
//                                         Engine::Propose() with the
//                                         object's Engine::HeatOf()
//   a proposal RPC                        Engine::Propose()
//   a proposal answered OK, new lease     make the copy task, then
//                                         Engine::BindTask() (Abort() when
//                                         it could not be made)
//   a dynamic copy's RPCs                 Engine::CopyStart(), CopyEnd() +
//                                         CopyCommitted(), CopyRevoke();
//                                         CopyFailed() when the host's own
//                                         checks fail after a start
//   an ordinary copy of the object        Engine::KeyPending(): wait
//   a dynamic replica goes                Engine::ReplicaDropped()
//   the object is removed                 Engine::ObjectRemoved()
//   the cleanup loop's turn               Engine::Sweep()
//   /metrics                              Engine::Metrics()
//
// ANSWERS. Every host call answers an Answer whose Outcome (one of eight
// classes, mapped from mcrepl_outcome) a host maps to its own error codes
// with one OutcomeTable; Answer::reason says why (a metric label).
//
// TIME. The engine's clock is a Clock (a std::function returning
// milliseconds), read by each call that needs the time. Default: the
// steady clock. Proposal deadlines and lease expiries are on that clock: a
// host whose RPCs carry wall-clock deadlines (Mooncake's
// expire_at_ms_epoch) creates the Engine with SystemClock(). Tests pass a
// clock they move.
//
// THREAD-SAFETY. As mcrepl/host.h: OnRead() and HeatOf() are lock-free in
// the engine and run under the host's lock of the object whose
// ObjectState they touch; every other method may be called from any
// thread. The Clock is called from every thread that calls the engine.
// Callbacks (the sweep's, the retirement's) run on the calling thread with
// no engine lock held, except the retirement probe, which runs under the
// engine's mutex and must not call the Engine (HeatOf() excepted, which
// takes no engine lock). An exception thrown by a callback is caught at
// the C boundary and rethrown when the call returns.
#ifndef MCREPL_ADAPTER_HPP
#define MCREPL_ADAPTER_HPP

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "mcrepl/host.h"
#include "mcrepl/mcrepl.h"

namespace mcrepl
{

// ---- ids -----------------------------------------------------------------

namespace detail
{
template <typename T, typename = void>
struct has_first_second : std::false_type {
};
template <typename T>
struct has_first_second<T,
			std::void_t<decltype(std::declval<const T &>().first),
				    decltype(std::declval<const T &>().second)>>
    : std::true_type {
};
template <typename T, typename = void> struct is_tuple2 : std::false_type {
};
template <typename T>
struct is_tuple2<T, std::void_t<decltype(std::tuple_size<T>::value)>>
    : std::bool_constant<std::tuple_size<T>::value == 2> {
};
template <typename T>
struct is_pair_like
    : std::bool_constant<has_first_second<T>::value || is_tuple2<T>::value> {
};
} // namespace detail

// A 128-bit id as a host's RPC carries it (a UUID's two halves): leases,
// tasks, clients, proposals. Converts from any pair-like type (.first and
// .second, or a 2-tuple such as std::array<uint64_t, 2>) and back with
// As<T>(). {0, 0} is "none".
struct WireId {
	uint64_t hi = 0, lo = 0;

	constexpr WireId() = default;
	constexpr WireId(uint64_t h, uint64_t l) : hi(h), lo(l)
	{
	}
	constexpr WireId(mcrepl_wire_id w) : hi(w.hi), lo(w.lo)
	{
	}
	template <typename P,
		  std::enable_if_t<detail::is_pair_like<P>::value, int> = 0>
	constexpr WireId(const P &p) : hi(First(p)), lo(Second(p))
	{
	}

	// The id as the host's type, built from {hi, lo}.
	template <typename P> P As() const
	{
		return P{hi, lo};
	}
	constexpr mcrepl_wire_id c() const
	{
		return mcrepl_wire_id{hi, lo};
	}
	constexpr bool empty() const
	{
		return hi == 0 && lo == 0;
	}
	friend constexpr bool operator==(const WireId &a, const WireId &b)
	{
		return a.hi == b.hi && a.lo == b.lo;
	}
	friend constexpr bool operator!=(const WireId &a, const WireId &b)
	{
		return !(a == b);
	}

      private:
	template <typename P> static constexpr uint64_t First(const P &p)
	{
		if constexpr (detail::has_first_second<P>::value)
			return static_cast<uint64_t>(p.first);
		else
			return static_cast<uint64_t>(std::get<0>(p));
	}
	template <typename P> static constexpr uint64_t Second(const P &p)
	{
		if constexpr (detail::has_first_second<P>::value)
			return static_cast<uint64_t>(p.second);
		else
			return static_cast<uint64_t>(std::get<1>(p));
	}
};

// ---- outcomes --------------------------------------------------------------

// mcrepl_outcome as a C++ enum: what a refusal means to the caller.
enum class Outcome {
	Ok,	     // accepted
	Invalid,     // the request is wrong and will stay so
	NotFound,    // no such object (a proposal)
	Stale,	     // a version or lease that is not the current one
	Busy,	     // another copy of the key is in flight
	Denied,	     // the caller may not
	Expired,     // the lease expired
	Unavailable, // not now: ask again later
};

inline Outcome ToOutcome(mcrepl_outcome o)
{
	switch (o) {
	case MCREPL_OUTCOME_OK:
		return Outcome::Ok;
	case MCREPL_OUTCOME_INVALID:
		return Outcome::Invalid;
	case MCREPL_OUTCOME_NOT_FOUND:
		return Outcome::NotFound;
	case MCREPL_OUTCOME_STALE:
		return Outcome::Stale;
	case MCREPL_OUTCOME_BUSY:
		return Outcome::Busy;
	case MCREPL_OUTCOME_DENIED:
		return Outcome::Denied;
	case MCREPL_OUTCOME_EXPIRED:
		return Outcome::Expired;
	case MCREPL_OUTCOME_UNAVAILABLE:
		return Outcome::Unavailable;
	}
	return Outcome::Unavailable;
}

inline const char *OutcomeName(Outcome o)
{
	switch (o) {
	case Outcome::Ok:
		return "ok";
	case Outcome::Invalid:
		return "invalid";
	case Outcome::NotFound:
		return "not_found";
	case Outcome::Stale:
		return "stale";
	case Outcome::Busy:
		return "busy";
	case Outcome::Denied:
		return "denied";
	case Outcome::Expired:
		return "expired";
	case Outcome::Unavailable:
		return "unavailable";
	}
	return "unknown";
}

// A host's error code for each outcome: its whole error mapping, one row
// per class, set by name (e.g. table.stale = ErrorCode::INVALID_VERSION).
template <typename Code> struct OutcomeTable {
	Code ok, invalid, not_found, stale, busy, denied, expired, unavailable;

	Code operator()(Outcome o) const
	{
		switch (o) {
		case Outcome::Ok:
			return ok;
		case Outcome::Invalid:
			return invalid;
		case Outcome::NotFound:
			return not_found;
		case Outcome::Stale:
			return stale;
		case Outcome::Busy:
			return busy;
		case Outcome::Denied:
			return denied;
		case Outcome::Expired:
			return expired;
		case Outcome::Unavailable:
			return unavailable;
		}
		return unavailable;
	}
};

// ---- options -----------------------------------------------------------------

// A config built from Options: config is valid when ok(); otherwise knob
// names the knob at fault (its full text name) and status says why
// (MCREPL_ENOENT unknown knob, MCREPL_EPARSE, MCREPL_ERANGE, MCREPL_EINVAL).
struct Built {
	mcrepl_status status = MCREPL_OK;
	std::string knob;
	mcrepl_config config{};

	bool ok() const
	{
		return status == MCREPL_OK;
	}
	// "<knob>: <why>", or "" when ok.
	std::string Error() const
	{
		return ok() ? std::string()
			    : knob + ": " + mcrepl_strerror(status);
	}
};

// The knobs in Mooncake's spelling (its gflags), defaults the library's.
// Any other knob of mcrepl/config.h goes through Set(name, value), applied
// after the named fields (so it wins over them), in the order given.
struct Options {
	std::string mode = "off";    // off | observe | enforce
	std::string policy = "auto"; // auto | rfc
	double heat_window_seconds = 10;
	double admission_qps_threshold = 0.8;
	uint32_t max_memory_replicas = 2;
	double lease_ttl_seconds = 30;
	std::vector<std::pair<std::string, std::string>> knobs;

	// Not knobs: the engine's creation options. incarnation 0: one drawn
	// from std::random_device (the high half of every lease wire id: a
	// lease id from another engine is refused as unknown).
	uint64_t incarnation = 0;
	uint32_t max_segments = 0;     // 0: the library's (4096)
	uint32_t max_dynamic_keys = 0; // 0: the library's

	Options &Set(std::string name, std::string value)
	{
		knobs.emplace_back(std::move(name), std::move(value));
		return *this;
	}

	// The shortest text that reads back as the same double.
	static std::string Text(double v)
	{
		char buf[40];
		double whole = 0;

		if (std::fabs(v) < 1e15 && std::modf(v, &whole) == 0.0) {
			std::snprintf(buf, sizeof(buf), "%.0f", v);
			return buf;
		}
		for (int prec = 1; prec <= 17; prec++) {
			std::snprintf(buf, sizeof(buf), "%.*g", prec, v);
			if (std::strtod(buf, nullptr) == v)
				break;
		}
		return buf;
	}

	Built Build() const
	{
		Built b;
		const std::pair<const char *, std::string> named[] = {
		    {"dynamic_replication_mode", mode},
		    {"dynamic_replication_policy", policy},
		    {"dynamic_replication_heat_window_seconds",
		     Text(heat_window_seconds)},
		    {"dynamic_replication_admission_qps_threshold",
		     Text(admission_qps_threshold)},
		    {"dynamic_replication_max_memory_replicas",
		     std::to_string(max_memory_replicas)},
		    {"dynamic_replication_lease_ttl_seconds",
		     Text(lease_ttl_seconds)},
		};
		const char *field = nullptr;

		mcrepl_config_init(&b.config);
		for (const auto &kv : named)
			if (!Apply(b, kv.first, kv.second))
				return b;
		for (const auto &kv : knobs)
			if (!Apply(b, kv.first.c_str(), kv.second))
				return b;
		b.status = mcrepl_config_validate(&b.config, &field);
		if (b.status != MCREPL_OK)
			b.knob = field ? field : "";
		return b;
	}

      private:
	static bool Apply(Built &b, const char *name, const std::string &v)
	{
		b.status = mcrepl_config_set(&b.config, name, v.c_str());
		if (b.status == MCREPL_OK)
			return true;
		b.knob = name;
		return false;
	}
};

// ---- clocks --------------------------------------------------------------------

// Milliseconds on the engine's clock.
using Clock = std::function<uint64_t()>;

inline uint64_t SteadyNowMs()
{
	using namespace std::chrono;
	return static_cast<uint64_t>(
	    duration_cast<milliseconds>(steady_clock::now().time_since_epoch())
		.count());
}
inline uint64_t SystemNowMs()
{
	using namespace std::chrono;
	return static_cast<uint64_t>(
	    duration_cast<milliseconds>(system_clock::now().time_since_epoch())
		.count());
}
inline Clock SteadyClock()
{
	return &SteadyNowMs;
}
inline Clock SystemClock()
{
	return &SystemNowMs;
}

// ---- values ------------------------------------------------------------------------

// What a host keeps per object beside its lock (mcrepl_object_state: the
// heat cell and the routed-replica cache). A new object is cold; the state
// dies with the object, so a key written again starts cold.
class ObjectState
{
      public:
	ObjectState() : s_()
	{
	}
	void Reset()
	{
		s_ = mcrepl_object_state();
	}
	mcrepl_object_state *get()
	{
		return &s_;
	}
	const mcrepl_object_state *get() const
	{
		return &s_;
	}

      private:
	mcrepl_object_state s_;
};

// A segment by the host's name for it (the engine's id is
// mcrepl_segment_id_of(name)). Strings are copied by the engine.
struct Segment {
	std::string name;
	std::string host;   // "": unknown (the segment is its own node)
	std::string domain; // "": the default domain
	std::string node;   // its NIC; "": its host
	WireId client;	    // the client that mounted it
	uint64_t capacity = 0, used = 0;
	bool allocatable = true;
	bool can_copy = true; // its client runs dynamic REPLICA_COPY tasks
};

// One replica a read returns (mcrepl_read_replica): the host's replica id
// (0: not cached) and its segment's name, borrowed for the call.
using ReadReplica = mcrepl_read_replica;

struct Read {
	mcrepl_status status = MCREPL_OK;
	size_t first = 0;   // the replica readers should take first
	uint32_t count = 0; // the key's heat, this read included
	bool crossed = false;
	bool queued = false;
};

struct Heat {
	uint32_t count = 0;  // over the window
	uint32_t recent = 0; // in the last complete bucket
};

struct TickResult {
	uint32_t threshold = 0;
	bool retire_due = false;
};

// A queued admission trigger, popped.
struct Trigger {
	std::string tenant, key, domain;
	uint64_t queued_at_ms = 0;
};

// One replica of a proposed object, by segment name.
struct NamedReplica {
	std::string segment;
	bool readable = true, memory = true, dynamic = false;
};

// A replica action proposal (mcrepl_named_proposal).
struct Proposal {
	WireId id; // idempotency
	std::string tenant, key;
	std::string requester_domain, target_domain; // "": none
	std::string preferred_target;		     // a segment name
	uint64_t observed_version = 0; // 0: the object's (unchecked)
	uint64_t expected_size = 0;    // 0: the object's (unchecked)
	uint64_t expires_at_ms = 0;    // 0: now + the lease TTL
	mcrepl_object_view object{};
	Heat heat; // Engine::HeatOf() of the object
	std::vector<NamedReplica> replicas;
};

// What a copy task carries (mcrepl_copy_task).
struct CopyTask {
	WireId lease, task;
	std::string source, target, target_domain;
	uint64_t version = 0, size = 0, expires_at_ms = 0;
	bool started = false;

	static CopyTask From(const mcrepl_copy_task &t)
	{
		CopyTask c;
		c.lease = t.lease;
		c.task = t.task;
		c.source = t.source;
		c.target = t.target;
		c.target_domain = t.target_domain;
		c.version = t.version;
		c.size = t.size;
		c.expires_at_ms = t.expires_at_ms;
		c.started = t.started;
		return c;
	}
	mcrepl_copy_task ToC() const
	{
		mcrepl_copy_task t = {};
		t.lease = lease.c();
		t.task = task.c();
		Copy(t.source, sizeof(t.source), source);
		Copy(t.target, sizeof(t.target), target);
		Copy(t.target_domain, sizeof(t.target_domain), target_domain);
		t.version = version;
		t.size = size;
		t.expires_at_ms = expires_at_ms;
		t.started = started;
		return t;
	}

      private:
	static void Copy(char *dst, size_t cap, const std::string &s)
	{
		std::snprintf(dst, cap, "%s", s.c_str());
	}
};

// Every host call's answer.
struct Answer {
	mcrepl_status status = MCREPL_OK;
	Outcome outcome = Outcome::Ok;
	mcrepl_reason reason = MCREPL_REASON_NONE;
	bool repeated = false; // propose: the same proposal again
	CopyTask task;	       // when the call names or makes a lease

	bool ok() const
	{
		return outcome == Outcome::Ok;
	}
	const char *ReasonName() const
	{
		return mcrepl_reason_name(reason);
	}

	// A status the library returned without a class of its own
	// (MCREPL_EINVAL, MCREPL_ENOMEM, ...) is not an OK outcome.
	static Answer Of(mcrepl_status st, const mcrepl_host_result &r)
	{
		Answer a;
		a.status = st;
		a.outcome = ToOutcome(r.outcome);
		a.reason = r.reason;
		a.repeated = r.repeated;
		a.task = CopyTask::From(r.task);
		if (a.outcome == Outcome::Ok && st != MCREPL_OK &&
		    st != MCREPL_EREJECTED)
			a.outcome = st == MCREPL_EINVAL ? Outcome::Invalid
							: Outcome::Unavailable;
		return a;
	}
};

// What a copy RPC presents (mcrepl_named_fence).
struct Fence {
	std::string tenant, key; // the object the copy is of
	WireId lease, caller;
	uint64_t version = 0;		  // carried by the task
	std::string source;		  // "": unchecked
	std::vector<std::string> targets; // empty: unchecked
	uint64_t object_version = 0;	  // the object's now; 0: it is gone
};

// One dynamic replica the retirement pass names.
struct Retirement {
	std::string tenant, key, segment;
};

// The host's answer for (tenant, key) in domain (NULL: the whole cluster).
using RetireProbe = std::function<mcrepl_retire_probe(
    const char *tenant, const char *key, const char *domain)>;
// Drop the replica as eviction does (the host's removal path reports it
// with ReplicaDropped(cooldown = true)); true when it went.
using RetireDrop = std::function<bool(const Retirement &)>;
// An expired lease: fail its task when not started, free its target when
// started.
using ExpiredFn = std::function<void(const CopyTask &)>;

// ---- the engine ------------------------------------------------------------------------

class Engine
{
      public:
	// An engine for opts on clock (nullptr and *error "<knob>: <why>"
	// for a bad knob, or the status of mcrepl_engine_create()).
	static std::unique_ptr<Engine> Create(const Options &opts,
					      std::string *error = nullptr,
					      Clock clock = SteadyClock())
	{
		const Built b = opts.Build();

		if (!b.ok()) {
			if (error)
				*error = b.Error();
			return nullptr;
		}
		std::unique_ptr<Engine> e(new Engine(std::move(clock)));
		mcrepl_status st = mcrepl_stats_create(&e->stats_);
		mcrepl_engine_opts eo = {};

		e->cfg_ = b.config;
		e->incarnation_ =
		    opts.incarnation ? opts.incarnation : DrawIncarnation();
		eo.struct_size = sizeof(eo);
		eo.max_segments = opts.max_segments;
		eo.max_dynamic_keys = opts.max_dynamic_keys;
		eo.stats = e->stats_;
		eo.incarnation = e->incarnation_;
		// the trigger queue's bound is the config's knob
		eo.trigger_limit = e->cfg_.admission_queue_limit;
		if (st == MCREPL_OK)
			st = mcrepl_engine_create(&e->cfg_, &eo, &e->e_);
		if (st != MCREPL_OK) {
			if (error)
				*error = std::string("engine: ") +
					 mcrepl_strerror(st);
			return nullptr;
		}
		return e;
	}

	~Engine()
	{
		mcrepl_engine_destroy(e_);
		mcrepl_stats_destroy(stats_);
	}
	Engine(const Engine &) = delete;
	Engine &operator=(const Engine &) = delete;

	uint64_t Now() const
	{
		return clock_();
	}
	const mcrepl_config &Config() const
	{
		return cfg_;
	}
	uint64_t Incarnation() const
	{
		return incarnation_;
	}
	bool IsAuto() const
	{
		return mcrepl_engine_is_auto(e_);
	}
	// The C handles, for what this class does not wrap (owned here).
	mcrepl_engine *raw()
	{
		return e_;
	}
	mcrepl_stats *stats()
	{
		return stats_;
	}
	int64_t Stat(mcrepl_stat which) const
	{
		return mcrepl_stats_get(stats_, which);
	}

	// ---- ids ----
	static mcrepl_segment_id SegmentId(const std::string &name)
	{
		return mcrepl_segment_id_of(name.c_str());
	}
	static mcrepl_client_id ClientId(WireId w)
	{
		return mcrepl_client_of_wire(w.c());
	}
	WireId LeaseWire(mcrepl_lease_id id) const
	{
		return mcrepl_engine_lease_wire(e_, id);
	}
	mcrepl_lease_id LeaseOf(WireId w) const
	{
		return mcrepl_engine_lease_of_wire(e_, w.c());
	}

	// ---- segments ----
	mcrepl_status SetSegment(const Segment &s)
	{
		const mcrepl_engine_segment v = View(s);
		return mcrepl_engine_segment_set(e_, &v);
	}
	mcrepl_status RemoveSegment(const std::string &name)
	{
		return mcrepl_engine_segment_remove(e_, SegmentId(name));
	}
	mcrepl_status SegmentUsed(const std::string &name, uint64_t used,
				  bool allocatable = true)
	{
		return mcrepl_engine_segment_used(e_, SegmentId(name), used,
						  allocatable);
	}
	// The whole list: those it does not name leave the engine.
	mcrepl_status SyncSegments(const std::vector<Segment> &segs,
				   size_t *removed = nullptr)
	{
		std::vector<mcrepl_engine_segment> v;

		v.reserve(segs.size());
		for (const Segment &s : segs)
			v.push_back(View(s));
		return mcrepl_engine_segments_sync(e_, v.data(), v.size(),
						   removed);
	}

	// ---- the read path ----
	Read OnRead(ObjectState &st, const std::string &tenant,
		    const std::string &key, const ReadReplica *replicas,
		    size_t n, uint64_t salt)
	{
		mcrepl_read_result r = {};
		Read out;

		out.status = mcrepl_engine_on_read(e_, st.get(), tenant.c_str(),
						   key.c_str(), replicas, n,
						   salt, Now(), &r);
		out.first = r.first;
		out.count = r.count;
		out.crossed = r.crossed;
		out.queued = r.queued;
		return out;
	}
	Read OnRead(ObjectState &st, const std::string &tenant,
		    const std::string &key,
		    const std::vector<ReadReplica> &replicas, uint64_t salt)
	{
		return OnRead(st, tenant, key, replicas.data(), replicas.size(),
			      salt);
	}
	Heat HeatOf(const ObjectState &st)
	{
		Heat h;
		h.count =
		    mcrepl_engine_object_heat(e_, st.get(), Now(), &h.recent);
		return h;
	}
	std::vector<Trigger> TriggersPop(size_t cap = 64)
	{
		std::vector<mcrepl_trigger> raw(cap);
		std::vector<Trigger> out;
		const size_t n =
		    mcrepl_engine_triggers_pop(e_, raw.data(), raw.size());

		out.reserve(n);
		for (size_t i = 0; i < n; i++) {
			Trigger t;
			t.tenant = raw[i].tenant ? raw[i].tenant : "";
			t.key = raw[i].key ? raw[i].key : "";
			t.domain = raw[i].domain ? raw[i].domain : "";
			t.queued_at_ms = raw[i].queued_at_ms;
			mcrepl_trigger_release(&raw[i]);
			out.push_back(std::move(t));
		}
		return out;
	}

	// ---- the admission loop ----
	TickResult Tick()
	{
		mcrepl_engine_tick_result r = {};
		TickResult t;

		mcrepl_engine_tick(e_, Now(), &r);
		t.threshold = r.threshold;
		t.retire_due = r.retire_due;
		return t;
	}

	// The whole retirement pass the last retire_due tick opened, in
	// batches: returns how many replicas drop reported gone.
	size_t Retire(const RetireProbe &probe, const RetireDrop &drop,
		      size_t batch = 64)
	{
		std::vector<mcrepl_retirement> out(batch ? batch : 1);
		ProbeCtx ctx{&probe, nullptr};
		size_t dropped = 0, n = 0;

		while (mcrepl_engine_retire(e_, Now(), &Engine::ProbeTramp,
					    &ctx, out.data(), out.size(),
					    &n) > 0) {
			if (ctx.error)
				std::rethrow_exception(ctx.error);
			// copied first: the names point into the engine
			std::vector<Retirement> rs(n);
			for (size_t i = 0; i < n; i++) {
				rs[i].tenant = out[i].tenant;
				rs[i].key = out[i].key;
				rs[i].segment = SegmentName(out[i].segment);
			}
			for (const Retirement &r : rs)
				dropped += drop(r) ? 1u : 0u;
		}
		if (ctx.error)
			std::rethrow_exception(ctx.error);
		return dropped;
	}

	Answer Propose(const Proposal &p)
	{
		std::vector<mcrepl_named_replica> reps(p.replicas.size());
		mcrepl_named_proposal np = {};
		mcrepl_host_result r = {};

		for (size_t i = 0; i < reps.size(); i++) {
			reps[i].segment = p.replicas[i].segment.c_str();
			reps[i].readable = p.replicas[i].readable;
			reps[i].memory = p.replicas[i].memory;
			reps[i].dynamic = p.replicas[i].dynamic;
		}
		np.id = p.id.c();
		np.tenant = p.tenant.c_str();
		np.key = p.key.c_str();
		np.requester_domain = p.requester_domain.c_str();
		np.target_domain = p.target_domain.c_str();
		np.preferred_target = p.preferred_target.c_str();
		np.observed_version = p.observed_version;
		np.expected_size = p.expected_size;
		np.expires_at_ms = p.expires_at_ms;
		np.object = p.object;
		np.heat_count = p.heat.count;
		np.heat_recent = p.heat.recent;
		np.replicas = reps.data();
		np.n_replicas = reps.size();
		np.now_ms = Now();
		const mcrepl_status st =
		    mcrepl_engine_propose_named(e_, &np, &r);
		return Answer::Of(st, r);
	}
	mcrepl_status BindTask(WireId lease, WireId task)
	{
		return mcrepl_engine_bind_task(e_, lease.c(), task.c());
	}
	mcrepl_status Abort(WireId lease)
	{
		return mcrepl_engine_abort(e_, lease.c());
	}

	// ---- copies ----
	Answer CopyStart(const Fence &f)
	{
		return Fenced(f, &mcrepl_engine_copy_start);
	}
	Answer CopyEnd(const Fence &f)
	{
		return Fenced(f, &mcrepl_engine_copy_end);
	}
	Answer CopyRevoke(const Fence &f)
	{
		return Fenced(f, &mcrepl_engine_copy_revoke);
	}
	// After CopyEnd: the copy's target became readable (committed) or not.
	mcrepl_status CopyCommitted(const CopyTask &t,
				    const std::string &tenant,
				    const std::string &key, bool committed)
	{
		const mcrepl_copy_task c = t.ToC();
		return mcrepl_engine_copy_committed(e_, &c, tenant.c_str(),
						    key.c_str(), committed);
	}
	mcrepl_status CopyFailed(WireId lease)
	{
		return mcrepl_engine_copy_failed(e_, lease.c(), Now());
	}
	bool KeyPending(const std::string &tenant, const std::string &key)
	{
		return mcrepl_engine_key_pending(e_, tenant.c_str(),
						 key.c_str(), Now());
	}

	// ---- objects and replicas ----
	mcrepl_status ObjectRemoved(const std::string &tenant,
				    const std::string &key)
	{
		return mcrepl_engine_object_removed(e_, tenant.c_str(),
						    key.c_str());
	}
	mcrepl_status ReplicaAdded(const std::string &tenant,
				   const std::string &key,
				   const std::string &segment)
	{
		return mcrepl_engine_replica_added_named(
		    e_, tenant.c_str(), key.c_str(), segment.c_str());
	}
	mcrepl_status ReplicaRecovered(const std::string &tenant,
				       const std::string &key,
				       const std::string &segment)
	{
		return mcrepl_engine_replica_recovered_named(
		    e_, tenant.c_str(), key.c_str(), segment.c_str());
	}
	mcrepl_status ReplicaDropped(const std::string &tenant,
				     const std::string &key,
				     const std::string &segment,
				     bool cooldown = true)
	{
		return mcrepl_engine_replica_dropped_named(
		    e_, tenant.c_str(), key.c_str(), segment.c_str(), cooldown,
		    Now());
	}

	// ---- the cleanup loop ----
	// Retire every expired lease; fn once per lease (no engine lock
	// held). Returns how many were retired.
	size_t Sweep(const ExpiredFn &fn)
	{
		SweepCtx ctx{&fn, nullptr};
		const size_t n =
		    mcrepl_engine_sweep(e_, Now(), &Engine::SweepTramp, &ctx);

		if (ctx.error)
			std::rethrow_exception(ctx.error);
		return n;
	}

	// ---- metrics ----
	// Prometheus text: the RFC counters (mcrepl_stats_render()) and the
	// engine's figures as mcrepl_policy_* (mcrepl_engine_get_stats()).
	std::string Metrics()
	{
		std::string text;
		size_t len = 0;

		mcrepl_stats_render(stats_, nullptr, 0, &len);
		text.resize(len + 1);
		if (mcrepl_stats_render(stats_, &text[0], text.size(), &len) !=
		    MCREPL_OK)
			len = 0;
		text.resize(len);
		AppendEngineStats(text);
		return text;
	}

      private:
	explicit Engine(Clock clock) : clock_(std::move(clock))
	{
		if (!clock_)
			clock_ = SteadyClock();
	}

	static uint64_t DrawIncarnation()
	{
		std::random_device rd;
		uint64_t v = 0;

		while (v == 0)
			v = (uint64_t(rd()) << 32) ^ uint64_t(rd());
		return v;
	}

	static mcrepl_engine_segment View(const Segment &s)
	{
		mcrepl_engine_segment v = {};
		v.id = SegmentId(s.name);
		v.client = ClientId(s.client);
		v.host = s.host.c_str();
		v.domain = s.domain.c_str();
		v.node = s.node.c_str();
		v.capacity = s.capacity;
		v.used = s.used;
		v.allocatable = s.allocatable;
		v.can_copy = s.can_copy;
		v.name = s.name.c_str();
		return v;
	}

	std::string SegmentName(mcrepl_segment_id id)
	{
		char buf[MCREPL_SEGMENT_NAME_MAX + 1];
		mcrepl_engine_segment_name(e_, id, buf, sizeof(buf));
		return buf;
	}

	using FenceFn = mcrepl_status (*)(mcrepl_engine *,
					  const mcrepl_named_fence *, uint64_t,
					  mcrepl_host_result *);
	Answer Fenced(const Fence &f, FenceFn fn)
	{
		std::vector<const char *> targets;
		mcrepl_named_fence nf = {};
		mcrepl_host_result r = {};

		for (const std::string &t : f.targets)
			targets.push_back(t.c_str());
		nf.tenant = f.tenant.c_str();
		nf.key = f.key.c_str();
		nf.lease = f.lease.c();
		nf.caller = f.caller.c();
		nf.version = f.version;
		nf.source = f.source.empty() ? nullptr : f.source.c_str();
		nf.targets = targets.data();
		nf.n_targets = targets.size();
		nf.object_version = f.object_version;
		const mcrepl_status st = fn(e_, &nf, Now(), &r);
		return Answer::Of(st, r);
	}

	struct ProbeCtx {
		const RetireProbe *fn;
		std::exception_ptr error;
	};
	static void ProbeTramp(void *ctx, const char *tenant, const char *key,
			       const char *domain, mcrepl_retire_probe *out)
	{
		ProbeCtx *c = static_cast<ProbeCtx *>(ctx);

		if (c->error) {
			out->busy = true;
			return;
		}
		try {
			*out = (*c->fn)(tenant, key, domain);
		} catch (...) {
			c->error = std::current_exception();
			out->busy = true;
		}
	}

	struct SweepCtx {
		const ExpiredFn *fn;
		std::exception_ptr error;
	};
	static void SweepTramp(void *ctx, const mcrepl_copy_task *task)
	{
		SweepCtx *c = static_cast<SweepCtx *>(ctx);

		if (c->error)
			return;
		try {
			(*c->fn)(CopyTask::From(*task));
		} catch (...) {
			c->error = std::current_exception();
		}
	}

	void AppendEngineStats(std::string &text)
	{
		mcrepl_engine_stats s = {};
		s.struct_size = sizeof(s);
		mcrepl_engine_get_stats(e_, &s);
		const struct {
			const char *name, *type, *help;
			uint64_t value;
		} rows[] = {
		    {"mcrepl_policy_segments", "gauge",
		     "Segments the policy engine knows", s.segments},
		    {"mcrepl_policy_nodes", "gauge",
		     "Nodes serving reads in the engine's cluster view",
		     s.nodes},
		    {"mcrepl_policy_window_reads", "gauge",
		     "Reads routed over the last heat window", s.window_reads},
		    {"mcrepl_policy_trigger_threshold", "gauge",
		     "Hits over the heat window at which a key is proposed",
		     s.threshold},
		    {"mcrepl_policy_projections_total", "counter",
		     "Granted copies whose read load the engine projected",
		     s.projections},
		    {"mcrepl_policy_dynamic_keys", "gauge",
		     "Keys with dynamic replicas tracked for retirement",
		     s.dynamic_keys},
		    {"mcrepl_policy_dynamic_replicas", "gauge",
		     "Dynamic replicas tracked for retirement",
		     s.dynamic_replicas},
		    {"mcrepl_policy_untracked_total", "counter",
		     "Dynamic replicas not tracked (engine bound)",
		     s.untracked_total},
		    {"mcrepl_policy_retire_passes_total", "counter",
		     "Retirement passes opened", s.retire_passes},
		    {"mcrepl_policy_retire_visits_total", "counter",
		     "Keys the retirement passes probed", s.retire_visits},
		    {"mcrepl_policy_retired_total", "counter",
		     "Dynamic replicas the retirement passes named",
		     s.retired_total},
		    {"mcrepl_policy_room_total", "counter",
		     "Hot copies for which eviction was asked to make room",
		     s.room_total},
		    {"mcrepl_policy_room_bytes_total", "counter",
		     "Bytes eviction was asked to free for hot copies",
		     s.room_bytes_total},
		    {"mcrepl_policy_room_refused_budget_total", "counter",
		     "Room for a hot copy refused: the window's budget was "
		     "spent",
		     s.room_budget_total},
		    {"mcrepl_policy_room_refused_none_total", "counter",
		     "Room for a hot copy refused: no segment could take it, "
		     "or headroom would not lower the busiest node",
		     s.room_none_total},
		};
		for (const auto &r : rows) {
			text += std::string("# HELP ") + r.name + " " + r.help +
				"\n# TYPE " + r.name + " " + r.type + "\n" +
				r.name + " " + std::to_string(r.value) + "\n";
		}
	}

	mcrepl_engine *e_ = nullptr;
	mcrepl_stats *stats_ = nullptr;
	mcrepl_config cfg_{};
	uint64_t incarnation_ = 0;
	Clock clock_;
};

} // namespace mcrepl

#endif
