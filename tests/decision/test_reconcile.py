"""Stage D: the optimal matching against brute force and against MET's greedy matching."""
import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from decision.reconcile import match_greedy, match_optimal, retained


@st.composite
def matching_problems(draw, max_nodes=5, max_slots=5, max_parts=25):
    nodes = draw(st.integers(0, max_nodes))
    slots = draw(st.integers(1, max_slots))
    parts = draw(st.integers(0, max_parts))
    node_of = np.array([draw(st.integers(-1, nodes - 1)) for _ in range(parts)], dtype=np.int64)
    slot_of = np.array([draw(st.integers(0, slots - 1)) for _ in range(parts)], dtype=np.int64)
    node_profile = np.array([draw(st.integers(0, 4)) for _ in range(nodes)], dtype=np.int64)
    slot_profile = np.array([draw(st.integers(0, 3)) for _ in range(slots)], dtype=np.int64)
    return node_of, slot_of, node_profile, slot_profile


def value(node_of, slot_of, node_profile, slot_profile, node_for_slot):
    """(partitions kept in place, node profiles kept) — compared lexicographically."""
    keeps = sum(1 for t, i in enumerate(node_for_slot) if i >= 0
                and node_profile[i] == slot_profile[t])
    return retained(node_of, slot_of, node_for_slot), keeps


def brute_force(node_of, slot_of, node_profile, slot_profile):
    nodes, slots = len(node_profile), len(slot_profile)
    best = None
    # Every injective map of slots to nodes-or-new that uses min(nodes, slots) nodes.
    choices = list(range(nodes)) + [-1] * slots
    for perm in set(itertools.permutations(choices, slots)):
        if sum(i >= 0 for i in perm) != min(nodes, slots):
            continue
        v = value(node_of, slot_of, node_profile, slot_profile, np.array(perm))
        best = v if best is None or v > best else best
    return best


def check_matching(node_for_slot, nodes, slots):
    used = node_for_slot[node_for_slot >= 0]
    assert len(set(used.tolist())) == len(used)            # a node takes at most one slot
    assert len(used) == min(nodes, slots)                   # no node idles while a slot is new
    assert node_for_slot.shape == (slots,)


@settings(max_examples=150, deadline=None)
@given(matching_problems(max_nodes=4, max_slots=4, max_parts=16))
def test_optimal_against_brute_force(problem):
    node_of, slot_of, node_profile, slot_profile = problem
    got = match_optimal(*problem)
    check_matching(got, len(node_profile), len(slot_profile))
    assert value(*problem, got) == brute_force(*problem)


@settings(max_examples=150, deadline=None)
@given(matching_problems(max_nodes=4, max_slots=4, max_parts=16))
def test_sparse_solver_is_optimal_in_moves(problem):
    node_of, slot_of, node_profile, slot_profile = problem
    got = match_optimal(*problem, dense_limit=0)
    check_matching(got, len(node_profile), len(slot_profile))
    assert value(*problem, got)[0] == brute_force(*problem)[0]


@settings(max_examples=200, deadline=None)
@given(matching_problems(max_nodes=12, max_slots=12, max_parts=80))
def test_never_worse_than_greedy(problem):
    node_of, slot_of, node_profile, slot_profile = problem
    greedy = match_greedy(*problem)
    check_matching(greedy, len(node_profile), len(slot_profile))
    for dense_limit in (10**9, 0):
        best = match_optimal(*problem, dense_limit=dense_limit)
        check_matching(best, len(node_profile), len(slot_profile))
        assert retained(node_of, slot_of, best) >= retained(node_of, slot_of, greedy)
    assert value(*problem, match_optimal(*problem)) >= value(*problem, greedy)


def test_greedy_is_beaten_when_order_matters():
    # Node 0 holds a, b (slot 0) and c (slot 1); node 1 holds d, e (slot 0). Greedy lets node 0
    # take slot 0 (2 shared) and leaves node 1 with nothing in common: 2 kept. The optimum gives
    # slot 0 to node 1 and slot 1 to node 0: 3 kept.
    node_of = np.array([0, 0, 0, 1, 1])
    slot_of = np.array([0, 0, 1, 0, 0])
    profiles = np.zeros(2, dtype=np.int64)
    greedy = match_greedy(node_of, slot_of, profiles, profiles)
    best = match_optimal(node_of, slot_of, profiles, profiles)
    assert retained(node_of, slot_of, greedy) == 2
    assert retained(node_of, slot_of, best) == 3
