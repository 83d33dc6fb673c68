"""demo-hbase's verdict on its repeated before/after runs (deploy/local_hbase/demo.py): it says
helped or hurt only when the runs do not overlap, and keeps each workload's spread."""
from __future__ import annotations

from deploy.local_hbase.demo import measured, verdict
from deploy.localproc.ycsb import Result


def test_helped_or_hurt_only_beyond_the_spread() -> None:
    assert verdict([400, 420, 450], [460, 470, 500]) == "helped"
    assert verdict([400, 420, 450], [300, 333, 399]) == "hurt"
    # one run after below one before: within the spread, whatever the medians say
    assert verdict([400, 420, 450], [410, 600, 610]) == "no difference beyond the spread"


def test_each_workload_keeps_its_median_its_runs_and_the_worst_success() -> None:
    def rep(a: float, c: float, ok_a: int = 10) -> dict[str, Result]:
        return {"A": Result("A", "run", 40, 10, ok_a, a), "C": Result("C", "run", 40, 10, 10, c)}

    got = measured([rep(472, 300), rep(333, 310, ok_a=9), rep(400, 290)])
    assert got["A"] == {"throughput": 400, "runs": [472, 333, 400], "min": 333, "max": 472, "ok": 0.9}
    assert got["C"]["throughput"] == 300 and got["C"]["ok"] == 1.0
