# make stress (issue 17): bench/daemons/bench_stress against a real master
# with 1 M objects under idle, slowloris, partial-frame, connection-storm,
# HTTP-header and long-key attacks while workers mount; a few minutes, not
# part of make check. Figures in BENCHMARKS.md. STRESS_ARGS passes
# --keys N --idle N --seconds S.
STRESS_ARGS ?=
stress: $(BUILD)/bench/bench_stress $(MASTER_BIN) $(WORKER_BIN)
	$(BUILD)/bench/bench_stress $(STRESS_ARGS)

.PHONY: stress
