"""Report scores: SLO violations as the incremental-elasticity paper counts them, Dory et al.'s
elasticity score, the CSV and the plots."""
from __future__ import annotations

import csv
import json

import numpy as np
from hypothesis import assume, given, strategies as st

from controller.report import Series, elasticity_scores, slo_scores, tenant_slo_windows, write_report


def series(latency, throughput, busy=None, dt=1.0, vms=None):
    n = len(latency)
    return Series(t=np.arange(n) * dt, ops=np.asarray(throughput, float).reshape(n, 1) * dt,
                  latency_ms=np.asarray(latency, float), latency_wl_ms=np.asarray(latency, float).reshape(n, 1), vms=np.asarray(vms if vms is not None else [3] * n, float),
                  servers=np.full(n, 3.0), busy=np.asarray(busy if busy is not None else [False] * n),
                  dt=dt, workloads=["A"])


@given(lat=st.lists(st.floats(0, 200), min_size=2, max_size=60),
       thr=st.floats(1, 1e4), slo=st.floats(1, 150), width=st.integers(1, 5))
def test_slo_score_counts_windows_over_the_target(lat, thr, slo, width):
    s = series(lat, [thr] * len(lat))
    got = slo_scores(s, slo, width)
    # brute force: windows of `width` seconds, mean latency (equal throughput) against the SLO
    count, magnitude = 0, 0.0
    for i in range(len(lat) // width):
        m = sum(lat[i * width:(i + 1) * width]) / width
        assume(abs(m - slo) > 1e-9)  # exactly on the line: rounding decides, not the rule
        if m > slo:
            count += 1
            magnitude += m - slo
    assert got["intervals"] == count
    assert abs(got["magnitude_ms"] - magnitude) < 1e-6 * max(1.0, magnitude)


def test_slo_during_actions_only_counts_busy_windows():
    lat = [100] * 10
    busy = [False] * 4 + [True] * 2 + [False] * 4
    got = slo_scores(series(lat, [10] * 10, busy), 50, 2)
    assert got["intervals"] == 5 and got["intervals_during_actions"] == 1


def _bump_run(height, width_s, pre=600, post=1200):
    n = pre + post
    thr = np.full(n, 1000.0)
    thr[pre: pre + width_s] = 1000.0 / height  # request sets take `height` times longer
    lat = 50.0 * 1000.0 / thr
    busy = np.zeros(n, bool)
    busy[pre: pre + width_s] = True
    return series(lat, thr, busy)


def test_elasticity_score_is_lower_for_a_smaller_disturbance():
    small = elasticity_scores(_bump_run(1.5, 60), [(600.0, 3, 4)], [660.0], [])
    big = elasticity_scores(_bump_run(3.0, 300), [(600.0, 3, 4)], [900.0], [])
    assert small[0]["score"] is not None and big[0]["score"] is not None
    assert 0 <= small[0]["score"] < big[0]["score"]
    assert small[0]["stabilized_after_s"] < big[0]["stabilized_after_s"]


def test_elasticity_score_is_zero_for_no_disturbance():
    flat = elasticity_scores(_bump_run(1.0, 60), [(600.0, 3, 4)], [660.0], [])
    assert flat[0]["score"] == 0.0


def test_no_stabilisation_gives_no_score():
    rng = np.random.default_rng(0)
    n = 1200
    thr = np.full(n, 1000.0)
    thr[600:] = rng.uniform(100, 2000, 600)  # never settles
    s = series(50.0 * 1000.0 / thr, thr)
    got = elasticity_scores(s, [(600.0, 3, 4)], [610.0], [])
    assert got[0]["score"] is None


def test_write_report_files(sim_stack, tmp_path):
    run = sim_stack("tiramola")
    run.run(until=300)
    summary = write_report(run, tmp_path, "tiramola")
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    for key in ("total_ops", "mean_throughput", "node_minutes", "max_nodes", "actions",
                "slo_violation_intervals", "slo_violation_magnitude", "elasticity", "wall_time_s"):
        assert key in on_disk
    assert on_disk["total_ops"] == summary["total_ops"] > 0
    rows = list(csv.DictReader((tmp_path / "timeseries.csv").open()))
    assert len(rows) == 300
    assert abs(sum(float(r["throughput_ops_s"]) for r in rows) - summary["total_ops"]) < 1e-3 * summary["total_ops"]
    for png in ("throughput.png", "cumulative.png", "latency.png"):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_the_report_keeps_the_decision_log_behind_its_figures(sim_stack, tmp_path):
    """decisions.jsonl: every decision round and hold in time order, each with its reason, and
    each plan's submission after the decision that made it, so summary.json's counts can be
    traced to the decisions behind them."""
    run = sim_stack("met")
    run.run(until=600)
    summary = write_report(run, tmp_path, "met")
    log = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert [r["t_s"] for r in log] == sorted(r["t_s"] for r in log)
    decided = [r for r in log if r["event"] == "decision"]
    held = [r for r in log if r["event"] == "hold"]
    assert len(decided) == len(run.recorder.decisions) and decided
    assert len(held) == sum(summary["holds"].values())
    assert all(r["reason"] for r in decided + held)
    submitted = [r for r in log if r["event"] == "plan_submitted"]
    assert len(submitted) == summary["plans"]["submitted"] >= 1
    for s in submitted:
        made = [r for r in decided if r["plan_id"] == s["plan_id"]]
        assert made and made[0]["t_s"] <= s["t_s"] and sum(made[0]["actions"].values()) > 0
    planned: dict[str, int] = {}
    for r in decided:
        if r["plan_id"] is not None:
            for k, v in r["actions"].items():
                planned[k] = planned.get(k, 0) + v
    assert planned == summary["planned_actions"]


def test_a_slow_tenant_counts_although_fast_writes_pull_the_mean_under_the_slo():
    # two tenants: W does 10,000 ops/s at 2 ms, C 100 ops/s at 120 ms: the mean over all
    # operations is ~3 ms (no aggregate violation) but C is over 50 ms in every window
    n = 10
    ops = np.array([[10_000.0, 100.0]] * n)
    lat = np.array([[2.0, 120.0]] * n)
    mean = (ops * lat).sum(axis=1) / ops.sum(axis=1)
    s = Series(t=np.arange(n, dtype=float), ops=ops, latency_ms=mean, latency_wl_ms=lat,
               vms=np.full(n, 3.0), servers=np.full(n, 3.0), busy=np.zeros(n, dtype=bool), dt=1.0,
               workloads=["W", "C"])
    assert slo_scores(s, 50.0, 2.0)["intervals"] == 0
    assert tenant_slo_windows(s, 50.0, 2.0) == {"W": 0, "C": 5}


@given(lat=st.lists(st.tuples(st.floats(0, 200), st.floats(0, 200)), min_size=2, max_size=40),
       slo=st.floats(1, 150), width=st.integers(1, 4))
def test_tenant_windows_are_each_tenants_own_windows(lat, slo, width):
    n = len(lat)
    lat_a = np.asarray(lat, float)
    ops = np.ones((n, 2))
    s = Series(t=np.arange(n, dtype=float), ops=ops, latency_ms=lat_a.mean(axis=1), latency_wl_ms=lat_a,
               vms=np.full(n, 3.0), servers=np.full(n, 3.0), busy=np.zeros(n, dtype=bool), dt=1.0,
               workloads=["A", "B"])
    got = tenant_slo_windows(s, slo, float(width))
    k = n // width
    for i, w in enumerate(("A", "B")):
        windows = lat_a[: k * width, i].reshape(k, width).mean(axis=1) if k else np.zeros(0)
        assert got[w] == int((windows > slo).sum())


def test_a_stretch_that_served_nothing_scores_without_a_warning():
    """A cluster that served nothing for a while (every node down, say) still gets its score,
    and scoring it raises no RuntimeWarning (CI's log showed an all-NaN slice warning)."""
    import warnings

    base = _bump_run(1.0, 60)
    thr = np.asarray(base.ops[:, 0], float).copy()
    thr[1000:1120] = 0.0  # two minutes with no operation served, after the scale-out settled
    s = series(np.where(thr > 0, 50.0, 0.0), thr)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = elasticity_scores(s, [(600.0, 3, 4)], [660.0], [])
    assert got[0]["score"] == 0.0


def test_compare_png_shows_every_policy_even_where_their_lines_coincide(tmp_path, sim_stack):
    """Issue 24 item 1: in compare.png the MET line lay hidden under static's (a policy that
    never acts draws the same line). Every policy's colour stays visible where the lines
    coincide, in both panels."""
    import matplotlib.image as mpimg
    import numpy as np
    from matplotlib import colors

    from controller.report import plot_compare

    run = sim_stack("static")
    run.run(until=600)
    # the same run under three names: three identical lines in each panel
    (path,) = plot_compare({"met": run, "tiramola": run, "static": run}, tmp_path)
    image = mpimg.imread(path)[..., :3]
    height = image.shape[0]
    for i, name in enumerate(("met", "tiramola", "static")):
        rgb = np.array(colors.to_rgb(f"C{i}"))
        near = np.abs(image - rgb).sum(axis=2) < 0.12
        top, bottom = near[: height // 2].sum(), near[height // 2:].sum()
        assert top > 300 and bottom > 300, (name, top, bottom)


def test_a_run_stopped_before_its_first_second_still_gets_its_report(sim_stack, tmp_path):
    # stopped at once (Ctrl-C as it starts): a summary and an empty series, no plots to draw
    run = sim_stack("tiramola")
    summary = write_report(run, tmp_path, "tiramola")
    assert summary["total_ops"] == 0 and "plots" not in summary
    assert list(csv.DictReader((tmp_path / "timeseries.csv").open())) == []
    assert not list(tmp_path.glob("*.png"))
