"""Measure (decision/rules/measure.py): what sizing from demand learns from each snapshot. Here:
the time a request takes on an idle node, from which the utilisation a node may run at
(u_max) follows."""
from __future__ import annotations

import numpy as np
import pytest

from decision.rules.measure import Measure
from decision.rules.memory import with_rules_memory
from tests.fixtures.rules import DONE, SIZED, context, watched
from tests.fixtures.snapshots import later, queued_snapshot


def test_a_node_over_the_slo_teaches_no_request_time():
    # daily-peaks at 930 s (seed 1): a read tenant arrives and the node holding its regions
    # answers in 1,140 ms at 45 % CPU with no call queue (every read misses a cold cache and
    # waits for the disk), the other in 0.6 ms at 40 %. Read as a CPU queue's service time,
    # the cold node's latency said a request takes 600 ms idle and every node may run at no
    # more than min_utilisation: the plans bought 20 nodes for a peak of 5.9 node-loads.
    snap = queued_snapshot([0.40, 0.45], latency_ms=[0.6, 1140.0])
    view = context(snap, SIZED, DONE, observers=(Measure(),)).view
    assert view is not None and view.capacity is not None
    assert view.capacity.service_ms == pytest.approx(0.6 * (1 - 0.40))
    assert view.u_max == SIZED.max_utilisation
    # the cold node is still short: the scale-out rules see it
    assert view.short == ("rs2",)


def test_what_warm_nodes_taught_outlasts_a_cold_start():
    cold = queued_snapshot([0.45, 0.45], latency_ms=[900.0, 1140.0])
    warm = later(queued_snapshot([0.40, 0.40], latency_ms=[0.6, 0.6]), -30.0)
    view = context(cold, SIZED, watched(warm, SIZED, seconds=30.0), observers=(Measure(),)).view
    assert view is not None and view.capacity is not None
    assert view.capacity.service_ms == pytest.approx(0.6 * (1 - 0.40))
    assert view.short == ("rs1", "rs2")


def test_a_node_slower_than_the_slo_allows_but_within_it_still_teaches():
    # 30 ms at 50 % CPU: within the 50-ms objective, so a request's time (15 ms) is learned;
    # its M/M/1 bound, 1 - ln(100) x 15 / 40 < 0, leaves a node min_utilisation
    snap = queued_snapshot([0.50, 0.50], latency_ms=[30.0, 30.0])
    view = context(snap, SIZED, DONE, observers=(Measure(),)).view
    assert view is not None and view.capacity is not None
    assert view.capacity.service_ms == pytest.approx(15.0)
    assert view.u_max == SIZED.min_utilisation


def _steady_then(policy, last_cpu: float):
    """Measure's view after 30 minutes of a steady load whose CPU wanders 5 % in draws held for
    a minute (decided every 30 s), then a sample at `last_cpu`."""
    draws = 0.6 * np.random.default_rng(7).lognormal(0.0, 0.05, 31)
    memory = DONE
    for i in range(60):
        snap = later(queued_snapshot([float(draws[i // 2])] * 4), 30.0 * i - 1800.0)
        memory = with_rules_memory(memory, context(snap, policy, memory,
                                                   observers=(Measure(),)).memory, memory.step)
    return context(queued_snapshot([last_cpu] * 4), policy, memory, observers=(Measure(),)).view


def test_a_steady_loads_noise_rise_is_not_followed_once_its_forecasts_were_judged():
    # two draws up at the end draw a slope; followed over a lead time it is a node or more
    whole = _steady_then(SIZED.model_copy(update={"forecast_skill": False}), 0.68)
    judged = _steady_then(SIZED, 0.68)
    assert whole is not None and judged is not None
    assert whole.forecast.ahead > whole.forecast.now * 1.05
    assert judged.forecast.judged > 10 and judged.forecast.skill < 0.5
    assert judged.forecast.ahead - judged.forecast.now < (whole.forecast.ahead - whole.forecast.now) / 2
    assert "its trend followed x" in judged.words() and "trend followed" not in whole.words()
