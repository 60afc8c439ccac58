// libmcrepl for C++17 hosts: reading and filling a host's own structs by
// member name (optional; on top of mcrepl/adapter.hpp).
//
// This header is the contract: what is not declared here is private (the
// namespace mcrepl::binding::detail included).
//
// A Mooncake-shaped master has a Segment (.name, .size, .host_id), a
// ReplicaActionProposal (.proposal_id, .tenant_id, .key,
// .preferred_target_segment, .expire_at_ms_epoch, ...), a
// ReplicaActionLease and a ReplicaCopyPayload. These templates read and
// fill such structs by their member names, found at compile time; a member
// a struct does not have is skipped (read as empty / 0), so they compile
// with no Mooncake header. Where a host names a member otherwise, or
// derives a value (e.g. a segment's node from its endpoint), it
// specializes SegmentTraits<its Segment>.
//
// Member types: text members may be std::string, const char * or
// std::optional<std::string> (absent = ""); ids any pair-like type
// (mcrepl::WireId); numbers any arithmetic type (a negative deadline reads
// as 0: none).
//
// Pure templates: no state, no locks, no engine calls.
#ifndef MCREPL_ADAPTER_BINDING_HPP
#define MCREPL_ADAPTER_BINDING_HPP

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mcrepl/adapter.hpp"

namespace mcrepl
{
namespace binding
{
namespace detail
{

// has_<member><T>: T has a data member of that name.
#define MCREPL_BINDING_HAS_MEMBER_(m)                                          \
	template <typename T, typename = void>                                 \
	struct has_##m : std::false_type {                                     \
	};                                                                     \
	template <typename T>                                                  \
	struct has_##m<T, std::void_t<decltype(std::declval<T &>().m)>>        \
	    : std::true_type {                                                 \
	};

MCREPL_BINDING_HAS_MEMBER_(name)
MCREPL_BINDING_HAS_MEMBER_(size)
MCREPL_BINDING_HAS_MEMBER_(host_id)
MCREPL_BINDING_HAS_MEMBER_(domain)
MCREPL_BINDING_HAS_MEMBER_(node)
MCREPL_BINDING_HAS_MEMBER_(proposal_id)
MCREPL_BINDING_HAS_MEMBER_(tenant_id)
MCREPL_BINDING_HAS_MEMBER_(key)
MCREPL_BINDING_HAS_MEMBER_(requester_domain)
MCREPL_BINDING_HAS_MEMBER_(target_domain)
MCREPL_BINDING_HAS_MEMBER_(preferred_target_segment)
MCREPL_BINDING_HAS_MEMBER_(observed_version_epoch)
MCREPL_BINDING_HAS_MEMBER_(object_size_bytes)
MCREPL_BINDING_HAS_MEMBER_(expire_at_ms_epoch)
MCREPL_BINDING_HAS_MEMBER_(lease_id)
MCREPL_BINDING_HAS_MEMBER_(task_id)
MCREPL_BINDING_HAS_MEMBER_(source_segment)
MCREPL_BINDING_HAS_MEMBER_(target_segment)
MCREPL_BINDING_HAS_MEMBER_(version_epoch)
MCREPL_BINDING_HAS_MEMBER_(source)
MCREPL_BINDING_HAS_MEMBER_(targets)
MCREPL_BINDING_HAS_MEMBER_(dynamic_replication_lease_id_high)
MCREPL_BINDING_HAS_MEMBER_(dynamic_replication_lease_id_low)
MCREPL_BINDING_HAS_MEMBER_(dynamic_replication_version_epoch)

#undef MCREPL_BINDING_HAS_MEMBER_

inline std::string Text(const std::string &s)
{
	return s;
}
inline std::string Text(const char *s)
{
	return s ? s : "";
}
inline std::string Text(const std::optional<std::string> &s)
{
	return s ? *s : std::string();
}

template <typename N> uint64_t Number(N v)
{
	static_assert(std::is_arithmetic<N>::value, "a number member");
	return v > N(0) ? static_cast<uint64_t>(v) : 0;
}

// dst = text, for a std::string or std::optional<std::string> member.
template <typename D> void SetText(D &dst, const std::string &text)
{
	dst = text;
}

} // namespace detail

// How a host's segment type reads (specialize for another shape).
// Defaults: name .name, capacity .size, host .host_id, domain .domain,
// node .node; absent members read "".
template <typename S> struct SegmentTraits {
	static std::string Name(const S &s)
	{
		return detail::Text(s.name);
	}
	static uint64_t Capacity(const S &s)
	{
		return detail::Number(s.size);
	}
	static std::string Host(const S &s)
	{
		if constexpr (detail::has_host_id<const S>::value)
			return detail::Text(s.host_id);
		else
			return std::string();
	}
	static std::string Domain(const S &s)
	{
		if constexpr (detail::has_domain<const S>::value)
			return detail::Text(s.domain);
		else
			return std::string();
	}
	static std::string Node(const S &s)
	{
		if constexpr (detail::has_node<const S>::value)
			return detail::Text(s.node);
		else
			return std::string();
	}
};

// The engine's view of a host segment mounted by client, with used bytes
// and whether it takes allocations (what the segment manager knows).
template <typename S>
Segment SegmentOf(const S &s, WireId client, uint64_t used,
		  bool allocatable = true)
{
	Segment v;
	v.name = SegmentTraits<S>::Name(s);
	v.host = SegmentTraits<S>::Host(s);
	v.domain = SegmentTraits<S>::Domain(s);
	v.node = SegmentTraits<S>::Node(s);
	v.client = client;
	v.capacity = SegmentTraits<S>::Capacity(s);
	v.used = used;
	v.allocatable = allocatable;
	return v;
}

// A Proposal from a host's proposal struct (.proposal_id, .tenant_id,
// .key, .requester_domain, .target_domain, .preferred_target_segment,
// .observed_version_epoch, .object_size_bytes, .expire_at_ms_epoch). The
// object view, heat and replicas are the host's to add.
template <typename P> Proposal ProposalOf(const P &p)
{
	Proposal out;
	if constexpr (detail::has_proposal_id<const P>::value)
		out.id = WireId(p.proposal_id);
	if constexpr (detail::has_tenant_id<const P>::value)
		out.tenant = detail::Text(p.tenant_id);
	if constexpr (detail::has_key<const P>::value)
		out.key = detail::Text(p.key);
	if constexpr (detail::has_requester_domain<const P>::value)
		out.requester_domain = detail::Text(p.requester_domain);
	if constexpr (detail::has_target_domain<const P>::value)
		out.target_domain = detail::Text(p.target_domain);
	if constexpr (detail::has_preferred_target_segment<const P>::value)
		out.preferred_target = detail::Text(p.preferred_target_segment);
	if constexpr (detail::has_observed_version_epoch<const P>::value)
		out.observed_version = detail::Number(p.observed_version_epoch);
	if constexpr (detail::has_object_size_bytes<const P>::value)
		out.expected_size = detail::Number(p.object_size_bytes);
	if constexpr (detail::has_expire_at_ms_epoch<const P>::value)
		out.expires_at_ms = detail::Number(p.expire_at_ms_epoch);
	return out;
}

// Fill a host's lease answer (.proposal_id, .lease_id, .tenant_id, .key,
// .source_segment, .target_segment, .target_domain, .version_epoch,
// .expire_at_ms_epoch, .task_id) from a proposal and its answer.
template <typename L> void FillLease(L &l, const Proposal &p, const Answer &a)
{
	const CopyTask &t = a.task;
	if constexpr (detail::has_proposal_id<L>::value)
		l.proposal_id = p.id.As<decltype(l.proposal_id)>();
	if constexpr (detail::has_lease_id<L>::value)
		l.lease_id = t.lease.As<decltype(l.lease_id)>();
	if constexpr (detail::has_task_id<L>::value)
		l.task_id = t.task.As<decltype(l.task_id)>();
	if constexpr (detail::has_tenant_id<L>::value)
		detail::SetText(l.tenant_id, p.tenant);
	if constexpr (detail::has_key<L>::value)
		detail::SetText(l.key, p.key);
	if constexpr (detail::has_source_segment<L>::value)
		detail::SetText(l.source_segment, t.source);
	if constexpr (detail::has_target_segment<L>::value)
		detail::SetText(l.target_segment, t.target);
	if constexpr (detail::has_target_domain<L>::value)
		detail::SetText(l.target_domain, t.target_domain);
	if constexpr (detail::has_version_epoch<L>::value)
		l.version_epoch =
		    static_cast<decltype(l.version_epoch)>(t.version);
	if constexpr (detail::has_expire_at_ms_epoch<L>::value)
		l.expire_at_ms_epoch =
		    static_cast<decltype(l.expire_at_ms_epoch)>(
			t.expires_at_ms);
}

// Fill a host's copy payload (.tenant_id, .key, .source, .targets: one,
// the lease's, .dynamic_replication_lease_id_high / _low,
// .dynamic_replication_version_epoch) from a lease's copy task.
template <typename C>
void FillCopyPayload(C &c, const CopyTask &t, const std::string &tenant,
		     const std::string &key)
{
	if constexpr (detail::has_tenant_id<C>::value)
		detail::SetText(c.tenant_id, tenant);
	if constexpr (detail::has_key<C>::value)
		detail::SetText(c.key, key);
	if constexpr (detail::has_source<C>::value)
		detail::SetText(c.source, t.source);
	if constexpr (detail::has_targets<C>::value)
		c.targets = {t.target};
	if constexpr (detail::has_dynamic_replication_lease_id_high<C>::value)
		c.dynamic_replication_lease_id_high = t.lease.hi;
	if constexpr (detail::has_dynamic_replication_lease_id_low<C>::value)
		c.dynamic_replication_lease_id_low = t.lease.lo;
	if constexpr (detail::has_dynamic_replication_version_epoch<C>::value)
		c.dynamic_replication_version_epoch = t.version;
}

// The fence a copy RPC presents, from the payload its task carried (see
// FillCopyPayload: .tenant_id, .key, the lease, version, source and
// targets), the calling client and the object's version now (0: gone).
template <typename C>
Fence FenceOf(const C &c, WireId caller, uint64_t object_version)
{
	Fence f;
	if constexpr (detail::has_tenant_id<const C>::value)
		f.tenant = detail::Text(c.tenant_id);
	if constexpr (detail::has_key<const C>::value)
		f.key = detail::Text(c.key);
	f.caller = caller;
	f.object_version = object_version;
	if constexpr (detail::has_dynamic_replication_lease_id_high<
			  const C>::value &&
		      detail::has_dynamic_replication_lease_id_low<
			  const C>::value)
		f.lease = WireId(c.dynamic_replication_lease_id_high,
				 c.dynamic_replication_lease_id_low);
	if constexpr (detail::has_dynamic_replication_version_epoch<
			  const C>::value)
		f.version = c.dynamic_replication_version_epoch;
	if constexpr (detail::has_source<const C>::value)
		f.source = detail::Text(c.source);
	if constexpr (detail::has_targets<const C>::value)
		for (const auto &t : c.targets)
			f.targets.push_back(detail::Text(t));
	return f;
}

} // namespace binding
} // namespace mcrepl

#endif
