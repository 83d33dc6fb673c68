"""The control loop on the simulator, end to end: decisions the default met makes on a whole
scenario and what the tenants get from them."""
from __future__ import annotations

import numpy as np

from controller.harness import build_run
from simulator.scenario import load_scenario
from tests.fixtures.simcluster import quiet_config


def _run(split: bool):
    run = build_run(quiet_config(policy={"split_hot_partitions": split}), load_scenario("hot-region"),
                    policy="met")
    run.run()
    return run.cluster


def test_a_hot_key_range_split_into_halves_spreads_and_its_tenant_gets_more_done():
    split, whole = _run(True), _run(False)
    ops = {c: dict(zip(c.wl_names, np.sum(np.array(c.rec_ops), axis=0))) for c in (split, whole)}
    # the hot range sat in one region: split until its halves part (more than one split), then
    # they spread over the nodes
    assert sum(e.kind == "split_done" for e in split.events) >= 2
    assert not any(e.kind.startswith("split") for e in whole.events)
    hot = [r for r, t in enumerate(split.region_tables) if t == "usertable_hot"]
    busiest = sorted(hot, key=lambda r: -split.reg_share[r])[:2]
    assert len({int(split.reg_server[r]) for r in busiest}) == 2, "the two busiest halves share a node"
    # the hot tenant gets more done; the other tenant loses nothing
    assert ops[split]["hot"] > 1.15 * ops[whole]["hot"]
    assert ops[split]["spread"] >= 0.98 * ops[whole]["spread"]
