// check_adapter: every registered case, one TAP line each, then the counts
// by kind; the last line is upstream_scenarios=<n> passed=<p>. Exit status
// 1 when any check failed.
#include <cstdio>
#include <string>

#include "harness.hpp"

namespace harness
{

std::vector<Case> &Cases()
{
	static std::vector<Case> cases;
	return cases;
}

namespace
{
std::vector<std::string> failures;
} // namespace

void Fail(const char *file, int line, const std::string &what)
{
	failures.push_back(std::string(file) + ":" + std::to_string(line) +
			   ": " + what);
}

} // namespace harness

int main()
{
	using harness::Kind;
	const Kind kinds[] = {Kind::Adapter, Kind::Extra, Kind::Replaced,
			      Kind::Upstream};
	const char *labels[] = {"adapter_checks", "extra_scenarios",
				"replaced_scenarios", "upstream_scenarios"};
	size_t total[4] = {0}, passed[4] = {0}, n = 0;

	std::printf("1..%zu\n", harness::Cases().size());
	for (size_t k = 0; k < 4; k++) {
		for (const harness::Case &c : harness::Cases()) {
			if (c.kind != kinds[k])
				continue;
			harness::failures.clear();
			c.fn();
			total[k]++;
			n++;
			if (harness::failures.empty()) {
				passed[k]++;
				std::printf("ok %zu %s\n", n, c.name);
				continue;
			}
			std::printf("not ok %zu %s\n", n, c.name);
			for (const std::string &f : harness::failures)
				std::printf("# %s\n", f.c_str());
		}
	}
	for (size_t k = 0; k < 4; k++)
		std::printf("%s=%zu passed=%zu\n", labels[k], total[k],
			    passed[k]);
	bool ok = true;
	for (size_t k = 0; k < 4; k++)
		ok = ok && passed[k] == total[k];
	return ok ? 0 : 1;
}
