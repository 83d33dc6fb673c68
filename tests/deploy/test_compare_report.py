"""compare-hbase's reading of what its YCSB clients saw (deploy/local_hbase/compare_report.py):
SLO windows from status lines measured from the intended start, failures counted once and
placed in their phase, attainment as the worst tenant's, and the cost at the SLO against the
smallest static size meeting it in the same repetition."""
from __future__ import annotations

from deploy.local_hbase import compare_report as rep
from deploy.local_hbase import cluster as cluster_mod
from deploy.local_hbase.compare import POLICIES, HBASE_BALANCER_PERIOD_MS, cluster_for, parse, phases, policy_sections

# YCSB 0.17 with -s, status.interval=10, measurement.interval=both (a line every 10 s)
LINES = """\
2026-11-25 22:00:10:001 10 sec: 4000 operations; 400 current ops/sec; [READ: Count=2000, Max=9000, Min=400, Avg=1500.5, 90=3000, 99=8000, 99.9=9000, 99.99=9000] [Intended-READ: Count=2000, Max=90000, Min=400, Avg=2500.5, 90=5000, 99=60000, 99.9=90000, 99.99=90000]
2026-11-25 22:00:20:001 20 sec: 8000 operations; 400 current ops/sec; [READ: Count=2000, Max=9000, Min=400, Avg=1500.5, 90=3000, 99=8000, 99.9=9000, 99.99=9000] [Intended-READ: Count=2000, Max=30000, Min=400, Avg=2000.5, 90=4000, 99=20000, 99.9=30000, 99.99=30000] [UPDATE: Count=1990, Max=9000, Min=400, Avg=1500.5, 90=3000, 99=7000, 99.9=9000, 99.99=9000] [Intended-UPDATE: Count=1990, Max=9000, Min=400, Avg=1500.5, 90=3000, 99=41000, 99.9=9000, 99.99=9000]
2026-11-25 22:00:30:001 30 sec: 11000 operations; 300 current ops/sec; [READ: Count=2990, Max=9000, Min=400, Avg=1500.5, 90=3000, 99=8000, 99.9=9000, 99.99=9000] [Intended-READ: Count=2990, Max=9000, Min=400, Avg=1500.5, 90=3000, 99=9000, 99.9=9000, 99.99=9000] [READ-ERROR: Count=10, Max=61000000, Min=61000000, Avg=61000000, 90=61000000, 99=61000000, 99.9=61000000, 99.99=61000000] [Intended-READ-ERROR: Count=10, Max=61000000, Min=61000000, Avg=61000000, 90=61000000, 99=61000000, 99.9=61000000, 99.99=61000000]
2026-11-25 22:00:40:001 40 sec: 11000 operations; 0 current ops/sec; [READ: Count=0, Max=0, Min=9223372036854775807, Avg=NaN, 90=0, 99=0, 99.9=0, 99.99=0]
"""


def test_windows_take_the_intended_p99_and_count_each_failure_once():
    ws = rep.scored(rep.windows(LINES, start_s=100.0, warm_up=1))  # the first: the client's start
    assert [w["t"] for w in ws] == [120.0, 130.0, 140.0]
    assert [w["ops"] for w in ws] == [4000, 3000, 0]
    assert ws[0]["p99_ms"] == 41.0  # the larger of READ's and UPDATE's intended p99
    assert ws[1]["failed"] == 10 and ws[1]["failed_by"] == {"READ-ERROR": 10}
    assert ws[2]["p99_ms"] is None


# As a compare run's client writes them: YCSB's start line, the JVM's first interval (slow: its
# connections and region lookups), two intervals, and the line it prints as it exits 0.4 s later
CLIENT = """\
2026-11-26 15:29:59:779 0 sec: 0 operations; est completion in 0 second
2026-11-26 15:30:09:577 10 sec: 2206 operations; 220.6 current ops/sec; [READ: Count=2206, Max=2094079, Min=654, Avg=76363.5, 90=121151, 99=1849343, 99.9=2094079, 99.99=2094079] [Intended-READ: Count=2206, Max=2094079, Min=654, Avg=76363.5, 90=121151, 99=2017279, 99.9=2094079, 99.99=2094079]
2026-11-26 15:30:19:577 20 sec: 5180 operations; 297.4 current ops/sec; [READ: Count=2974, Max=169599, Min=491, Avg=10042.8, 90=19727, 99=81279, 99.9=162687, 99.99=169599] [Intended-READ: Count=2974, Max=169599, Min=491, Avg=10042.8, 90=19727, 99=91391, 99.9=162687, 99.99=169599]
2026-11-26 15:30:29:589 30 sec: 8156 operations; 297.5 current ops/sec; [READ: Count=2976, Max=62847, Min=630, Avg=9990.2, 90=21055, 99=34815, 99.9=58591, 99.99=62847] [Intended-READ: Count=2976, Max=62847, Min=630, Avg=9990.2, 90=21055, 99=45535, 99.9=58591, 99.99=62847]
2026-11-26 15:30:29:979 30 sec: 8230 operations; 187.8 current ops/sec; [READ: Count=73, Max=119999, Min=5260, Avg=42175.4, 90=91967, 99=119999, 99.9=119999, 99.99=119999] [CLEANUP: Count=38, Max=20575, Min=6, Avg=659.1, 90=80, 99=20575, 99.9=20575, 99.99=20575] [READ-ERROR: Count=1, Max=61000000, Min=61000000, Avg=61000000, 90=61000000, 99=61000000, 99.9=61000000, 99.99=61000000] [Intended-READ: Count=73, Max=119999, Min=5260, Avg=42175.4, 90=91967, 99=151551, 99.9=119999, 99.99=119999]
"""


def test_a_clients_start_line_jvm_warm_up_and_exit_line_cost_no_window():
    every = rep.windows(CLIENT, start_s=230.0, phase="p2", interval_s=10)
    # the 0-sec line is no window; the first interval (2 s p99: the client starting) is not
    # scored; the exit line's 74 operations and its failure join the last interval, whose p99
    # stands
    assert [w["t"] for w in every] == [240.0, 250.0, 260.0] and every[0]["warm_up"]
    ws = rep.scored(every)
    assert [w["t"] for w in ws] == [250.0, 260.0]
    assert [w["ops"] for w in ws] == [2974, 2976 + 74]
    assert [w["p99_ms"] for w in ws] == [91.391, 45.535]
    assert ws[-1]["failed"] == 1 and ws[-1]["failed_by"] == {"READ-ERROR": 1}
    slo = rep.slo_figures({"A": every}, slo_p99_ms=100)
    # the exit line's failure is not lost: the interval it joins misses the SLO
    assert slo["by_tenant"]["A"]["windows"] == 2 and slo["attainment"] == 0.5
    assert slo["by_tenant"]["A"]["ops"] == 8230 and slo["by_tenant"]["A"]["failed"] == 1  # all counted


def test_a_window_within_the_slo_needs_its_p99_no_failure_and_some_operation():
    ws = rep.windows(LINES, start_s=0.0, warm_up=0)
    slo = rep.slo_figures({"A": ws, "C": ws[:2]}, slo_p99_ms=50)
    # A: only the 20-s window (41 ms, no failure) is within; 10 s: 60 ms; 30 s: failed; 40 s: nothing done
    assert slo["by_tenant"]["A"]["within_slo"] == 1 and slo["by_tenant"]["A"]["windows"] == 4
    assert slo["by_tenant"]["C"]["attainment"] == 0.5
    assert slo["attainment"] == 0.25  # the worst tenant's


def test_failures_are_placed_in_their_phase():
    plan = phases("1x1,1x2", None, 100, ["A"])
    ws = rep.windows(LINES, start_s=40.0, warm_up=0)
    got = rep.failures_explained({"A": ws}, plan)
    assert got == [{"tenant": "A", "operation": "READ-ERROR", "phase": "p2", "count": 10}]


def test_phases_split_the_demand_over_tenants_with_threads_for_the_rate():
    plan = phases("4x0.8,6x3.2", 5.0, 500, ["A", "C"])
    assert [p["seconds"] for p in plan] == [120.0, 180.0]
    assert plan[1]["demand_ops_s"] == 1600 and [t["target"] for t in plan[1]["tenants"]] == [800, 800]
    assert plan[1]["tenants"][0]["threads"] == 8 + 80


def test_policies_that_leave_placement_to_hbase_run_with_its_balancer_at_its_default_period(tmp_path):
    # tiramola and target-tracking add nodes and let HBase's balancer give them regions: at the
    # local cluster's hour, their new RegionServers would serve nothing in a 20-minute run
    a = parse(["--no-quota"])
    period = {c: cluster_for(c, tmp_path / c, a).balancer_period_ms
              for c in ("tiramola", "target-tracking", "met", "met-paper", "static", "static-3")}
    assert period == {"tiramola": HBASE_BALANCER_PERIOD_MS, "target-tracking": HBASE_BALANCER_PERIOD_MS,
                      "met": cluster_mod.BALANCER_PERIOD_MS, "met-paper": cluster_mod.BALANCER_PERIOD_MS,
                      "static": cluster_mod.BALANCER_PERIOD_MS, "static-3": cluster_mod.BALANCER_PERIOD_MS}
    assert HBASE_BALANCER_PERIOD_MS < cluster_mod.BALANCER_PERIOD_MS


def test_every_policy_is_told_the_runs_objective_as_in_the_simulator(tmp_path):
    # the simulator's runs give the policy the scenario's objective (controller.harness); on the
    # real cluster the default ran without one, deciding on CPU alone
    from controller.config import load_config
    from deploy.local_hbase import chaos
    from tests.deploy.test_chaos_config import _Cluster

    a = parse(["--no-quota", "--slo-p99-ms", "200"])
    for policy in POLICIES:
        section, loop = policy_sections(policy, a)
        (tmp_path / policy).mkdir()
        config = load_config(chaos.write_config(_Cluster(), tmp_path / policy, a, policy=section, loop=loop))
        assert config.policy.latency_slo_ms == 200.0, policy
        assert (config.policy.min_nodes, config.policy.max_nodes) == (a.min_nodes, a.max_nodes)
        # the quota'd RegionServers' questions spaced by one CFS period, unless asked otherwise
        assert config.monitor.hbase_jmx_question_gap_ms == 100.0
    at_once = parse(["--no-quota", "--jmx-question-gap-ms", "0"])
    (tmp_path / "at-once").mkdir()
    config = load_config(chaos.write_config(_Cluster(), tmp_path / "at-once", at_once))
    assert config.monitor.hbase_jmx_question_gap_ms == 0.0


def _run(config, rep_no, nm, att, size=None):
    return {"config": config, "repetition": rep_no, "size": size, "node_minutes": nm, "attainment": att,
            "ycsb_ops": 1000, "ycsb_failed": 0, "max_nodes": size or 4, "p99_ms_max": 50,
            "slo": {"by_tenant": {"A": {"p99_ms_median": 10, "within_slo": 10}}}}


def test_the_cost_at_the_slo_is_against_the_smallest_static_meeting_it_in_the_same_repetition():
    runs = [_run("static-2", 1, 40, 0.80, 2), _run("static-3", 1, 60, 0.995, 3), _run("static-4", 1, 80, 1.0, 4),
            _run("static-2", 2, 40, 0.70, 2), _run("static-3", 2, 60, 0.95, 3), _run("static-4", 2, 80, 0.999, 4),
            _run("met", 1, 54, 0.992), _run("met", 2, 70, 0.98)]
    s = rep.summarize(runs, 0.99)
    assert s["smallest_static_meeting_slo"]["1"]["size"] == 3 and s["smallest_static_meeting_slo"]["2"]["size"] == 4
    cost = s["met"]["cost_at_slo"]
    assert cost["meets_slo"] == 1  # rep 2 missed the SLO: its node-minutes do not count
    assert cost["vs_smallest_static"] == {"min": 0.9, "median": 0.9, "max": 0.9, "n": 1}
    assert s["met"]["node_minutes"] == {"min": 54, "median": 62.0, "max": 70, "n": 2}
    table = rep.markdown(s, runs, "p99 <= 50 ms")
    assert "| met | 2 |" in table and "rep 1: 3, rep 2: 4" in table


def slo_at(ws, p99_ms):
    return rep.slo_figures({"A": ws}, p99_ms)


def test_a_report_scores_every_run_at_its_own_objective_from_the_windows_kept():
    ws = rep.windows(LINES, start_s=0.0, warm_up=0)  # p99 60, 41 ms; a failed window; an empty one
    run = {"config": "static-2", "repetition": 1, "windows": {"A": ws[:2]}, "attainment": 0.0,
           "windows_version": rep.WINDOWS_VERSION,
           "slo": slo_at(ws[:2], 10)}
    assert rep.rescored(run, slo_p99_ms=50, slo_target=0.5)["attainment"] == 0.5
    assert rep.rescored(run, slo_p99_ms=60, slo_target=0.5)["attainment"] == 1.0
    # a run that failed keeps what it recorded
    broken = {**run, "error": "RuntimeError: master did not start"}
    assert rep.rescored(broken, 60, 0.5) is broken


def test_the_promisable_p99_is_the_tightest_objective_met_in_the_target_share_of_windows():
    ws = [{"ops": 10, "failed": 0, "p99_ms": float(ms)} for ms in range(1, 101)]  # 1..100 ms
    assert rep.promisable_p99_ms({"A": ws}, 0.99) == 99.0
    at = rep.slo_figures({"A": ws}, 99.0)["attainment"]
    below = rep.slo_figures({"A": ws}, 98.9)["attainment"]
    assert at >= 0.99 > below
    # the worst tenant sets it; a failed window misses at any objective
    slow = [{**w, "p99_ms": w["p99_ms"] * 2} for w in ws]
    assert rep.promisable_p99_ms({"A": ws, "B": slow}, 0.99) == 198.0
    failing = [{**w, "failed": 1} for w in ws[:2]] + ws[2:]
    assert rep.promisable_p99_ms({"A": failing}, 0.99) is None
    assert rep.promisable_p99_ms({"A": failing}, 0.98) == 100.0


def test_windows_kept_by_an_older_run_are_read_as_a_new_run_reads_them():
    def w(t, phase, ops, p99, failed=0):
        return {"t": t, "phase": phase, "ops": ops, "failed": failed,
                "failed_by": {"READ-ERROR": failed} if failed else {}, "p99_ms": p99}
    # before version 2: each client's first interval scored, its exit line a window of its own
    old = [w(0.0, "p1", 1100, 2254.8), w(10.0, "p1", 1390, 41.0), w(10.0, "p1", 0, None),
           w(20.0, "p2", 2206, 2017.3), w(30.0, "p2", 2974, 91.4), w(30.0, "p2", 74, 151.6, failed=1)]
    run = {"config": "static-6", "repetition": 1, "windows": {"A": old}}
    new = rep.rescored(run, slo_p99_ms=100, slo_target=0.99)
    assert [(x["t"], x["ops"], bool(x.get("warm_up"))) for x in new["windows"]["A"]] == [
        (0.0, 1100, True), (10.0, 1390, False), (20.0, 2206, True), (30.0, 2974 + 74, False)]
    assert new["slo"]["by_tenant"]["A"]["windows"] == 2 and new["attainment"] == 0.5  # 30 s: the failure
    assert new["p99_ms_max"] == 91.4  # of the windows scored
    assert new["slo"]["by_tenant"]["A"]["ops"] == 1100 + 1390 + 2206 + 2974 + 74
    assert old[5]["ops"] == 74  # the run as read is left as it was
    assert rep.rescored(new, 100, 0.99)["windows"] == new["windows"]  # once only


# HBase 2.6's master, as a compare run's master.log holds it: a move's procedure starts (not
# timed), three finish (msec, sec, mins), an assignment that is not a move finishes
MASTER = """\
2026-11-27 00:04:18,666 INFO  [PEWorker-6] procedure.MasterProcedureScheduler: Took xlock for pid=59, state=RUNNABLE:REGION_STATE_TRANSITION_CLOSE; TransitRegionStateProcedure table=ycsb_c, region=f9e3e4cdfe7147f4601e80cd25268ddd, REOPEN/MOVE
2026-11-27 00:04:19,133 INFO  [PEWorker-15] procedure2.ProcedureExecutor: Finished pid=58, state=SUCCESS; TransitRegionStateProcedure table=ycsb_c, region=6bd76ca259d8a024136610ed84976184, REOPEN/MOVE in 522 msec
2026-11-27 00:04:23,133 INFO  [PEWorker-15] procedure2.ProcedureExecutor: Finished pid=59, state=SUCCESS; TransitRegionStateProcedure table=ycsb_c, region=f9e3e4cdfe7147f4601e80cd25268ddd, REOPEN/MOVE in 4.4670 sec
2026-11-27 00:05:30,001 INFO  [PEWorker-2] procedure2.ProcedureExecutor: Finished pid=61, state=SUCCESS; TransitRegionStateProcedure table=ycsb_c, region=234e36a2afa7a205a8b3bcb59c58a615, REOPEN/MOVE in 1 mins, 3.2 sec
2026-11-27 00:05:31,001 INFO  [PEWorker-2] procedure2.ProcedureExecutor: Finished pid=62, state=SUCCESS; TransitRegionStateProcedure table=ycsb_c, region=334e36a2afa7a205a8b3bcb59c58a615, ASSIGN in 2.1 sec
"""


def test_a_runs_region_moves_are_timed_from_the_masters_log():
    assert rep.move_seconds(MASTER) == [0.522, 4.467, 63.2]
    assert rep.move_figures(MASTER) == {"move_s_median": 4.467, "move_s_max": 63.2}
    assert rep.move_figures("") == {"move_s_median": None, "move_s_max": None}


def test_a_gap_outside_what_the_monitor_accepts_is_refused_before_any_run():
    import pytest

    from deploy.local_hbase.compare import BadInput

    with pytest.raises(BadInput, match="--jmx-question-gap-ms: expected 0 to 1000"):
        parse(["--no-quota", "--jmx-question-gap-ms", "1500"])


def test_a_variant_runs_its_config_files_policy_under_its_name(tmp_path):
    # sizing from demand on the quota'd cluster, beside the shipped policies, without editing
    # configs/: the variant's policy section, told the run's objective and bounds like theirs
    import pytest

    from deploy.local_hbase.compare import BadInput

    mine = tmp_path / "demand.yaml"
    mine.write_text("policy:\n  advanced:\n    size_from_demand: true\n")
    a = parse(["--no-quota", "--policies", "met", "--variant", f"demand={mine}", "--slo-p99-ms", "200"])
    assert a.policy_list == ["met", "demand"]
    section, _ = policy_sections("demand", a)
    assert section["advanced"] == {"size_from_demand": True}
    assert section["slo"] == {"latency_ms": 200.0}
    assert (section["min_nodes"], section["max_nodes"]) == (a.min_nodes, a.max_nodes)
    # a met variant places its own partitions: HBase's balancer keeps the local cluster's period
    assert cluster_for("demand", tmp_path / "c", a).balancer_period_ms == cluster_mod.BALANCER_PERIOD_MS
    tt = tmp_path / "tt.yaml"
    tt.write_text("policy:\n  preset: target-tracking\n")
    b = parse(["--no-quota", "--variant", f"mytt={tt}"])
    assert cluster_for("mytt", tmp_path / "d", b).balancer_period_ms == HBASE_BALANCER_PERIOD_MS
    (tmp_path / "none.yaml").write_text("cluster: x\n")
    for spec, says in ((f"met={mine}", "with a new name"), (f"static-9={mine}", "with a new name"),
                       (f"x={tmp_path / 'none.yaml'}", "expected a `policy:` section"),
                       (f"y={tmp_path / 'missing.yaml'}", "cannot read it")):
        with pytest.raises(BadInput, match=says):
            parse(["--no-quota", "--variant", spec])
