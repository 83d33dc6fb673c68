# The two commands the README opens with: `make run` and `make test`.
# Both build their own virtualenv; `make test` also installs the real components the
# integration tests start (Ganglia, ZooKeeper, a JDK and Maven for HBase) through deploy/.

PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# cassandra-driver: pure Python (no C extensions to compile on CI's 2 cores; docs/cassandra.md)
export CASS_DRIVER_NO_EXTENSIONS := 1

.PHONY: run test lint venv system-deps bench evaluate clean demo-hbase chaos-hbase compare-hbase scale-hbase demo-cassandra calibrate-hbase cpu-curve-hbase measure-split-hbase measure-move-hbase jmx-cost-hbase

# The core (what `make run` needs): numpy, scipy, pydantic, rich, matplotlib, … — no drivers,
# no test tools; pip's own progress is shown (a first install takes about a minute).
$(BIN)/.core: pyproject.toml
	bash deploy/bootstrap-python.sh $(PYTHON) $(VENV)
	@echo "metctl: installing the core into $(VENV)/ (no test extras; pip's progress follows)"
	$(BIN)/pip install --progress-bar on -e .
	touch $@

# `make test` (and `make venv`) add every driver extra and the test tools to the same venv.
$(BIN)/.installed: $(BIN)/.core
	@echo "metctl: installing the drivers and test tools into $(VENV)/"
	$(BIN)/pip install -q -e '.[test]'
	touch $@

venv: $(BIN)/.installed

system-deps:
	bash deploy/install-test-deps.sh

run: $(BIN)/.core
	$(BIN)/metctl run

# Before the tests: ruff (rules and why in pyproject.toml) on decision/, actuator/executor/ and
# controller/, mypy (pyproject.toml's [tool.mypy]) on decision/, actuator/executor/ and controller/. Seconds; main stays clean.
lint: venv
	$(BIN)/ruff check decision actuator/executor controller
	$(BIN)/mypy

test: venv system-deps lint
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: venv
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

# The evaluation grid (issue 25): the open-loop scenarios x policies x static sizes x 3 seeds,
# judged on cost at the SLO; rewrites the generated table in docs/evaluation.md. Runs on every
# core at low priority; runs already computed by the same code are taken from out/evaluate-cache.
EVALUATE_ARGS ?=
evaluate: venv
	nice -n 10 $(BIN)/python bench/evaluate.py --docs docs/evaluation.md $(EVALUATE_ARGS)

# metctl on a real local HBase cluster: start it, load MET's six YCSB tenants, measure, let
# metctl act for a few rounds, measure again, report with plots (out/demo-hbase/), stop it.
demo-hbase: venv system-deps
	$(BIN)/python deploy/local_hbase/demo.py $(DEMO_ARGS)

# metctl run as a daemon on a real local HBase (3 RegionServers) under seeded random faults,
# YCSB tenants on a schedule, a linked-rows integrity check (out/chaos-hbase/report.json, plot)
CHAOS_ARGS ?= --minutes 24 --seed 7 --fault-every-s 120
chaos-hbase: venv system-deps
	$(BIN)/python deploy/local_hbase/chaos.py $(CHAOS_ARGS)

# Does a node add capacity? YCSB at saturation against static quota'd local HBase clusters of
# 1, 2, 3, 4 and 6 RegionServers, 3 repetitions (out/scale-hbase/report.json; docs/local-hbase.md)
SCALE_ARGS ?=
scale-hbase: venv system-deps
	$(BIN)/python bench/scale_hbase.py $(SCALE_ARGS)

# The policies (met, met-paper, tiramola, target-tracking) and static clusters of 2..6 quota'd
# RegionServers under the same low -> peak -> low YCSB demand, 3 repetitions of 20 minutes each:
# ops, failed ops, per-tenant p99 and SLO windows, node-minutes, cost at the SLO, the spread
# (out/compare-hbase/report.json, table.md; docs/evaluation.md). Needs make scale-hbase's report
# (one RegionServer's capacity sizes the demand) or --rs-capacity. ~9 h on 2 cores; a cut run
# resumes where it stopped.
COMPARE_ARGS ?=
compare-hbase: venv system-deps
	$(BIN)/python deploy/local_hbase/compare.py $(COMPARE_ARGS)

# The simulator's per-operation costs measured on a real local HBase (one RegionServer, YCSB
# C/B/E): CPU per get, put and scanned row, latency floors (docs/simulator.md, Calibration).
CALIBRATE_ARGS ?=
calibrate-hbase: venv system-deps
	$(BIN)/python bench/calibrate_hbase.py $(CALIBRATE_ARGS)

# How a quota'd RegionServer's CPU follows its load: YCSB C at 0.1 .. 1 of its saturated rate
# (out/cpu-curve-hbase/report.json; docs/simulator.md); ~5 minutes.
cpu-curve-hbase: venv system-deps
	$(BIN)/python bench/cpu_curve_hbase.py

# How long a region split keeps its rows unavailable on a real local HBase (one RegionServer):
# the figure behind simulator.actions.split_offline_s (docs/simulator.md, Region splits).
measure-split-hbase: venv system-deps
	$(BIN)/python bench/measure_split_hbase.py $(SPLIT_ARGS)

# What a region move costs a client on two quota'd RegionServers (request to open, longest get):
# the figure behind simulator.actions.move_s (docs/simulator.md, Region moves); ~3 minutes.
measure-move-hbase: venv system-deps
	$(BIN)/python bench/measure_move_hbase.py $(MOVE_ARGS)

# What the monitor's /jmx questions cost a quota'd RegionServer, per question and per sample
# (docs/evaluation.md, "What a sample costs a RegionServer"); ~5 minutes.
jmx-cost-hbase: venv system-deps
	$(BIN)/python bench/jmx_cost_hbase.py

# metctl's CassandraDriver on a real local Cassandra 5.0 cluster: 2 nodes, replication 2, a
# QUORUM load; add a node, later decommission it; report + plot in out/demo-cassandra/.
demo-cassandra: venv system-deps
	$(BIN)/python deploy/local_cassandra/demo.py $(DEMO_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis out
