# make stress: bench/daemons/bench_stress against a real master
# with 1 M objects under idle, slowloris, partial-frame, connection-storm,
# HTTP-header and long-key attacks while workers mount, in rounds (the
# probe alone, then under attack; the median of the rounds' p99 ratios);
# prints a line per attacker and per resource-bound target; about 4 minutes, not
# part of make check. Figures in BENCHMARKS.md. STRESS_ARGS passes
# --keys N --idle N --seconds S --rounds R --only idle,slow,storm,http,keys.
STRESS_ARGS ?=
stress: $(BUILD)/bench/bench_stress $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_stress $(STRESS_ARGS)

.PHONY: stress
