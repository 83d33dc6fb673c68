"""Stage B: MET Algorithm 1 as the design page makes it explicit, through decide()."""
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from decision import DecisionMemory, PolicyConfig, decide
from decision.sizing import size_cluster
from decision.health import assess_health
from tests.fixtures.snapshots import make_snapshot, node

P = PolicyConfig(paper_faithful=True)  # MET as the paper writes it
ALL_OVER = make_snapshot([0.8, 0.8, 0.8, 0.8])          # suboptimal 1.0 > 0.5
ONE_OVER = make_snapshot([0.8, 0.3, 0.3, 0.3])          # suboptimal 0.25
UNDER = make_snapshot([0.05, 0.05, 0.05, 0.3])          # remove: 0.45 / 3 = 0.15 < 0.48
HEALTHY = make_snapshot([0.3, 0.3, 0.3, 0.3])


def run(snapshots, memory=DecisionMemory(), policy=P):
    deltas = []
    for snap in snapshots:
        plan = decide(snap, policy, memory)
        deltas.append(plan.sizing.delta)
        memory = plan.memory
    return deltas, memory


def test_doubling_while_suboptimal_even_on_first_decision():
    deltas, memory = run([ALL_OVER] * 5)
    assert deltas == [1, 2, 4, 8, 16]
    assert memory.step == 32 and memory.first_decision_done


def test_first_decision_under_threshold_is_reconfiguration_only():
    deltas, memory = run([ONE_OVER, ONE_OVER, ONE_OVER])
    assert deltas == [0, 1, 2] and memory.step == 4


def test_remove_one_and_reset_step():
    deltas, memory = run([ALL_OVER, ALL_OVER, ALL_OVER, UNDER, ONE_OVER])
    assert deltas == [1, 2, 4, -1, 1]
    assert memory.step == 2


def test_underloaded_on_first_decision_only_reconfigures():
    deltas, _ = run([UNDER, UNDER])
    assert deltas == [0, -1]


def test_healthy_resets_step_and_does_nothing():
    memory = DecisionMemory(step=8, first_decision_done=True)
    plan = decide(HEALTHY, P, memory)
    assert plan.is_empty and plan.sizing.delta == 0
    assert plan.memory == replace(memory, step=1)
    # Healthy before any Stage B keeps the first decision pending.
    assert not decide(HEALTHY, P, DecisionMemory(step=4)).memory.first_decision_done


def test_rebalance_only_when_some_underloaded_but_not_enough_to_remove():
    snap = make_snapshot([0.3, 0.3, 0.3, 0.05])  # unhealthy (one underloaded), no remove
    deltas, memory = run([snap], DecisionMemory(step=4, first_decision_done=True))
    assert deltas == [0] and memory.step == 4


def test_bounds():
    policy = PolicyConfig(paper_faithful=True, max_nodes=6, min_nodes=4)
    deltas, memory = run([ALL_OVER] * 3, policy=policy)
    assert deltas == [1, 2, 2]  # 4 + 1 = 5, 4 + 2 = 6, 4 + 4 capped at 6
    assert memory.step <= policy.max_nodes
    deltas, _ = run([UNDER], DecisionMemory(first_decision_done=True), policy)
    assert deltas == [0]  # 4 - 1 < min_nodes


@given(st.integers(1, 30), st.integers(1, 64), st.booleans(),
       st.lists(st.sampled_from([0.8, 0.3, 0.05]), min_size=1, max_size=8))
def test_target_always_within_bounds(lo, step, first, cpus):
    policy = PolicyConfig(paper_faithful=True, min_nodes=lo, max_nodes=lo + 10)
    health = assess_health([node(f"n{i}", c) for i, c in enumerate(cpus)], policy)
    sizing, memory = size_cluster(health, len(cpus), policy,
                                  DecisionMemory(step=step, first_decision_done=first))
    assert policy.min_nodes <= sizing.target <= policy.max_nodes
    assert sizing.delta == sizing.target - len(cpus)
    assert memory.first_decision_done and 1 <= memory.step <= policy.max_nodes
    assert sizing.step == memory.step
