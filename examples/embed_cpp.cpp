// The public headers compile as C++17 and the API is callable from C++,
// as in an existing Mooncake master.
#include <mcrepl/mcrepl.h>

#include <cstdio>
#include <memory>
#include <string>

namespace
{
struct HeatDeleter {
	void operator()(mcrepl_heat *h) const
	{
		mcrepl_heat_destroy(h);
	}
};
struct EngineDeleter {
	void operator()(mcrepl_engine *e) const
	{
		mcrepl_engine_destroy(e);
	}
};
} // namespace

int main()
{
	mcrepl_config cfg;
	mcrepl_config_init(&cfg);
	if (mcrepl_config_parse(&cfg, "dynamic_replication_mode=enforce") !=
	    MCREPL_OK)
		return 1;
	mcrepl_heat *raw = nullptr;
	cfg.heat_max_entries = 1024;
	if (mcrepl_heat_create(&cfg, &raw) != MCREPL_OK)
		return 1;
	std::unique_ptr<mcrepl_heat, HeatDeleter> heat(raw);
	mcrepl_engine *raw_engine = nullptr;
	if (mcrepl_engine_create(&cfg, nullptr, &raw_engine) != MCREPL_OK)
		return 1;
	std::unique_ptr<mcrepl_engine, EngineDeleter> engine(raw_engine);
	mcrepl_engine_segment seg = {};
	seg.id.v = 1;
	seg.host = "host-a";
	seg.capacity = 1 << 30;
	seg.allocatable = true;
	if (mcrepl_engine_segment_set(engine.get(), &seg) != MCREPL_OK)
		return 1;
	mcrepl_engine_read(engine.get(), seg.id);

	std::string key = "block-7";
	int crossed = 0;
	for (uint64_t now = 0; now < 10000; now += 500)
		crossed += mcrepl_heat_record(heat.get(), "tenant", key.c_str(),
					      nullptr, now,
					      nullptr) == MCREPL_HEAT_CROSSED;
	mcrepl_key_state ks;
	mcrepl_leases_key_state(mcrepl_engine_leases(engine.get()), "tenant",
				key.c_str(), nullptr, 0, &ks);
	std::printf("libmcrepl %s from C++: %d crossing(s), pending=%d\n",
		    mcrepl_version(), crossed, ks.pending ? 1 : 0);
	return crossed == 1 && !ks.pending ? 0 : 1;
}
