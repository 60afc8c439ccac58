// The adapter tests' runner: cases registered by kind, exact checks that
// print both sides, TAP lines ("ok N name" / "not ok N name" and "# why").
#ifndef HARNESS_HPP
#define HARNESS_HPP

#include <ostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mcrepl/adapter.hpp>

// How the checks print libmcrepl's values.
inline std::ostream &operator<<(std::ostream &os, mcrepl_status s)
{
	return os << mcrepl_status_name(s);
}
inline std::ostream &operator<<(std::ostream &os, mcrepl_reason r)
{
	return os << mcrepl_reason_name(r);
}
namespace mcrepl
{
inline std::ostream &operator<<(std::ostream &os, Outcome o)
{
	return os << OutcomeName(o);
}
inline std::ostream &operator<<(std::ostream &os, const WireId &w)
{
	return os << w.hi << ":" << w.lo;
}
} // namespace mcrepl

namespace harness
{

enum class Kind {
	Upstream, // an upstream dynamic_replication_test scenario, its name
	Replaced, // stands for an upstream scenario that tests upstream's map
	Extra,	  // a scenario of ours on the same host
	Adapter,  // the adapter's own checks
};

struct Case {
	const char *name;
	void (*fn)();
	Kind kind;
};

std::vector<Case> &Cases();

struct Reg {
	Reg(const char *name, void (*fn)(), Kind kind)
	{
		Cases().push_back(Case{name, fn, kind});
	}
};

// Record one failed check of the running case.
void Fail(const char *file, int line, const std::string &what);

template <typename T, typename = void> struct streamable : std::false_type {
};
template <typename T>
struct streamable<T, std::void_t<decltype(std::declval<std::ostream &>()
					  << std::declval<const T &>())>>
    : std::true_type {
};

template <typename T, typename = void> struct is_pair : std::false_type {
};
template <typename A, typename B>
struct is_pair<std::pair<A, B>> : std::true_type {
};

template <typename T> std::string Show(const T &v)
{
	std::ostringstream s;
	if constexpr (is_pair<T>::value)
		s << Show(v.first) << ":" << Show(v.second);
	else if constexpr (std::is_same<T, bool>::value)
		s << (v ? "true" : "false");
	else if constexpr (std::is_enum<T>::value && !streamable<T>::value)
		s << static_cast<long long>(v);
	else if constexpr (streamable<T>::value)
		s << v;
	else
		s << "<value>";
	return s.str();
}

template <typename A, typename B>
bool Eq(const A &a, const B &b, const char *ea, const char *eb,
	const char *file, int line)
{
	if (a == b)
		return true;
	Fail(file, line,
	     std::string(ea) + " == " + eb + ": " + Show(a) + " vs " + Show(b));
	return false;
}

} // namespace harness

#define CASE(name, kind)                                                       \
	static void name();                                                    \
	static const harness::Reg reg_##name(#name, &name, kind);              \
	static void name()
#define UPSTREAM(name) CASE(name, harness::Kind::Upstream)
#define REPLACED(name) CASE(name, harness::Kind::Replaced)
#define EXTRA(name) CASE(name, harness::Kind::Extra)
#define ADAPTER(name) CASE(name, harness::Kind::Adapter)

#define EXPECT_EQ(a, b) harness::Eq((a), (b), #a, #b, __FILE__, __LINE__)
#define EXPECT_TRUE(c) EXPECT_EQ(static_cast<bool>(c), true)
#define EXPECT_FALSE(c) EXPECT_EQ(static_cast<bool>(c), false)
// The case cannot go on without it.
#define ASSERT_EQ(a, b)                                                        \
	do {                                                                   \
		if (!EXPECT_EQ(a, b))                                          \
			return;                                                \
	} while (0)
#define ASSERT_TRUE(c) ASSERT_EQ(static_cast<bool>(c), true)
#define ASSERT_FALSE(c) ASSERT_EQ(static_cast<bool>(c), false)

#endif
