"""The held-out scenarios (bench/heldout/: loads the default policy was not shaped on) are valid
scenario files, and the open-loop ones ask for a cluster that changes size: at steady state the
oracle's busiest minute needs at least twice its quietest; but open-steady, the load that does
not change (issue 27's "steady load: no action after the first 20 minutes"), whose every
minute needs the same cluster within a node, smaller than the one it starts with."""
from __future__ import annotations

from pathlib import Path

import pytest

from simulator.scenario import load_scenario
from simulator.steady import scenario_load, smallest_nodes

HELDOUT = Path(__file__).resolve().parents[2] / "bench" / "heldout"


@pytest.mark.parametrize("path", sorted(HELDOUT.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_held_out_scenario_loads(path):
    sc = load_scenario(str(path))
    assert sc.workloads and sc.duration_s > 0


def test_the_open_loop_held_out_scenarios_change_size_or_placement():
    for path in sorted(HELDOUT.glob("open-*.yaml")):
        sc = load_scenario(str(path))
        timeout = min(w.timeout_ms for w in sc.workloads)
        per = [smallest_nodes(scenario_load(sc, 60.0 * m, 60.0 * (m + 1)), sc.slo_latency_ms,
                              slo_max_failed=sc.slo_max_failed, timeout_ms=timeout)
               for m in range(0, int(sc.duration_s // 60), 3)]  # every third minute
        assert None not in per, path.stem
        assert max(per) >= 5, path.stem  # the busiest minute needs a real cluster
        if path.stem == "open-steady":
            assert max(per) - min(per) <= 1 and max(per) <= sc.initial_nodes, per
        elif path.stem != "open-hot-shift":  # placement, not size, moves there
            assert max(per) >= 2 * min(per), path.stem
