"""Measure (decision/rules/measure.py): what sizing from demand learns from each snapshot. Here:
the time a request takes on an idle node, from which the utilisation a node may run at
(u_max) follows."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from decision.rules.demand_memory import ScaleIn
from decision.rules.measure import Measure
from decision.rules.memory import read_memory, with_rules_memory
from decision.model import Plan
from decision.rules.size import SizeToDemand
from tests.fixtures.rules import DONE, SIZED, context, sized, watched
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
    whole = _steady_then(SIZED.model_copy(update={"forecast_skill": False,
                                                  "trend_significance": False}), 0.68)
    judged = _steady_then(SIZED, 0.68)
    assert whole is not None and judged is not None
    assert whole.forecast.ahead > whole.forecast.now * 1.05
    assert judged.forecast.judged > 10 and judged.forecast.skill < 0.5
    assert judged.forecast.ahead - judged.forecast.now < (whole.forecast.ahead - whole.forecast.now) / 2
    assert "its trend followed x" in judged.words() and "trend followed" not in whole.words()


def _cold_start(policy):
    """Measure's view at a controller's third decision, 55 s after its first, on two nodes
    whose CPU read 1.30, 0.83 and 1.45 node-loads in all at a steady load (what metctl saw
    beside a freshly started quota'd HBase, docs/evaluation.md)."""
    memory = DONE
    for at, total in ((-55.0, 1.30), (-30.0, 0.83)):
        snap = later(queued_snapshot([total / 2] * 2), at)
        memory = with_rules_memory(memory, context(snap, policy, memory,
                                                   observers=(Measure(),)).memory, memory.step)
    return context(queued_snapshot([1.45 / 2] * 2), policy, memory, observers=(Measure(),)).view


def test_a_controller_just_started_does_not_follow_a_line_through_its_first_noisy_samples():
    whole = _cold_start(SIZED.model_copy(update={"trend_significance": False}))
    kept = _cold_start(SIZED)
    assert whole is not None and kept is not None
    assert whole.forecast.judged == 0 and whole.forecast.ahead > 1.45 * 1.5
    assert kept.forecast.ahead == pytest.approx(kept.forecast.now)
    assert "as far as it stands out of its samples' noise" in kept.words()
    assert "stands out" not in whole.words()


def _scale_in_then_ramp(policy, *, remembered: bool):
    """Measure's view on a ramp that began as a scale-in ended: a steady half hour at 60 % CPU,
    the scale-in's plan (its moves held requests back: the CPU measured dipped to 50 %), then
    the demand rising 15 % a decision. `remembered`: the memory still holds that scale-in
    (DemandMemory.shrunk, as rules/shrink.py leaves it until the scale-in is proved safe)."""
    base = queued_snapshot([0.6] * 4)
    t0 = base.taken_at.timestamp()
    memory = DONE

    def decide(cpu: float, at: float):
        nonlocal memory
        ctx = context(later(queued_snapshot([cpu] * 4), at), policy, memory, observers=(Measure(),))
        memory = with_rules_memory(memory, ctx.memory, memory.step)
        return ctx.view

    for i in range(60):
        decide(0.6, 30.0 * i - 1800.0)
    if remembered:
        rules = read_memory(memory.history)
        rules = replace(rules, demand=replace(rules.demand, shrunk=ScaleIn(5, t0, 2.4)))
        memory = with_rules_memory(memory, rules, memory.step)
    for i, cpu in enumerate((0.6, 0.5, 0.55)):  # the scale-in's plan: decided at 0, 30 s each
        decide(cpu, 30.0 * i)
    memory = memory.with_plan_ended(t0 + 90.0)
    view = None
    for i, cpu in enumerate((0.62, 0.71, 0.82, 0.94, 1.0)):
        view = decide(cpu, 90.0 + 30.0 * i)
    return view


def test_a_ramp_right_after_a_scale_in_is_followed_though_the_plan_dipped_the_demand():
    after = _scale_in_then_ramp(SIZED, remembered=True)
    forgotten = _scale_in_then_ramp(SIZED, remembered=False)
    assert after is not None and forgotten is not None
    # the dip's falls, judged against the ramp that came, would silence the ramp's slope
    assert forgotten.forecast.skill < 0.5
    assert after.forecast.skill > 0.8
    assert after.forecast.ahead > forgotten.forecast.ahead


PERIOD_S = 1200.0  # a 20-minute cycle: 300 s of peak (85 % CPU) in 900 s of trough (20 %)


def _cycling(policy, cycles: float):
    """The memory after `cycles` of that cycle on four nodes, decided every 30 s (only Measure
    observes: the cluster stays at four), and the snapshot 30 s after: 300 s before a peak."""
    memory = DONE
    steps = int(cycles * PERIOD_S / 30.0)
    for i in range(steps):
        t = 30.0 * i
        cpu = 0.85 if 600.0 <= t % PERIOD_S < 900.0 else 0.2
        snap = later(queued_snapshot([cpu] * 4), t - 30.0 * steps)
        memory = with_rules_memory(memory, context(snap, policy, memory,
                                                   observers=(Measure(),)).memory, memory.step)
    return memory, queued_snapshot([0.2] * 4)


def test_a_cycle_seen_twice_raises_the_forecast_before_its_peak_comes_again():
    # 2,700 s in: two cycles and a quarter seen, the third peak 300 s ahead, the trend flat
    memory, now = _cycling(SIZED, 2.25)
    view = context(now, SIZED, memory, observers=(Measure(),)).view
    assert view is not None and view.forecast.cycle is not None
    assert view.forecast.cycle.found
    assert view.forecast.cycle.period_s == pytest.approx(PERIOD_S, abs=30.0)
    # the last peak's demand, four nodes at 85 %, against 0.8 node-loads now
    assert view.forecast.now == pytest.approx(0.8, rel=0.05)
    assert view.forecast.ahead == pytest.approx(3.4, rel=0.1)
    assert "the last cycle (1,200 s, found in the demand)" in view.words()


def test_its_nodes_are_bought_a_lead_time_before_the_peak_and_not_on_the_first_cycle():
    # the same moment with cycle detection off, and 1,200 s earlier (one cycle seen): no
    # node is short, the trend is flat, so nothing but the cycle asks for nodes
    def scale_out(policy, cycles):
        memory, now = _cycling(policy, cycles)
        return sized(SizeToDemand(), now, policy, memory)

    found = scale_out(SIZED, 2.25)
    blind = scale_out(SIZED.model_copy(update={"detect_cycle": False}), 2.25)
    first = scale_out(SIZED, 1.25)
    assert isinstance(found, Plan) and found.sizing.target >= 4 + 1
    assert "the last cycle" in found.sizing.reason
    assert blind is None and first is None


def test_a_cycle_the_operator_gives_is_followed_from_its_second_cycle():
    given = SIZED.model_copy(update={"predict_cycle_s": PERIOD_S, "detect_cycle": False})
    memory, now = _cycling(given, 1.25)  # one cycle and a quarter: too soon to find one
    view = context(now, given, memory, observers=(Measure(),)).view
    assert view is not None and view.forecast.cycle is not None
    assert not view.forecast.cycle.found and view.forecast.ahead == pytest.approx(3.4, rel=0.1)
    assert "prediction.cycle_s" in view.words()
