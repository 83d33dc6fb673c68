"""The default policy's plans: a Plan from chosen moves, launches and a removal; a hold; a
rebalance off overloaded nodes at the same size; and MET's full re-placement when
move_only_what_pays is off. Every plan carries the memory the rules leave (Context.remember)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from decision.arrays import SnapshotArrays, load_ratio
from decision.model import (
    GROUPS, Action, DecisionMemory, GroupPlan, NodeAssignment, Plan, Sizing, Summary,
)
from decision.placement import classify
from decision.policy import PolicyConfig
from decision.rules.diagnose import Diagnosis
from decision.rules.memory import RulesMemory, read_memory, with_rules_memory
from decision.rules.moves import Move, costs, greedy_moves, node_loads
from decision.rules.rule import Context
from decision.stages import met_plan


def groups(arrays: SnapshotArrays, policy: PolicyConfig,
           assignment: tuple[NodeAssignment, ...]) -> tuple[GroupPlan, ...]:
    """MET's classes of the busy partitions (idle ones count in no group) and the nodes whose
    profile serves each class; informative here: this policy regroups nothing."""
    busy = arrays.load > 0
    codes = classify(arrays.reads[busy], arrays.writes[busy], arrays.scans[busy], policy)
    counts = np.bincount(codes, minlength=len(GROUPS))
    return tuple(GroupPlan(g, int(counts[i]), sum(a.profile == g for a in assignment))
                 for i, g in enumerate(GROUPS) if counts[i])


def hold(ctx: Context, cause: str, why: str, memory: RulesMemory | None = None,
         step: int | None = None) -> Plan:
    """No action, `hold (<cause>): <why>`, keeping `memory` (default: the context's) and `step`
    (default: MET's step as it is)."""
    arrays, current = ctx.arrays, ctx.current
    step = ctx.step if step is None else step
    reason = f"hold ({cause}): {why}"
    loads = node_loads(arrays)
    profile = {n.id: n.profile for n in arrays.active}
    members: dict[str, list[str]] = {n.id: [] for n in arrays.active}
    for pid, nid in zip(arrays.ids, arrays.current):
        members.setdefault(nid, []).append(pid)
    assignment = tuple(NodeAssignment(nid, profile.get(nid, "default"), tuple(ps),
                                      float(loads[i]) if i < len(loads) else 0.0)
                       for i, (nid, ps) in enumerate(members.items()))
    return Plan(policy="met", health=ctx.health,
                sizing=Sizing(current, current, 0, step, reason),
                groups=groups(arrays, ctx.policy, assignment), assignment=assignment, actions=(),
                summary=Summary(0, 0, 0, 0, load_ratio(loads)),
                memory=ctx.remember(ctx.memory if memory is None else memory, step),
                reason=reason)


def build(ctx: Context, sizing: Sizing, memory: DecisionMemory, node_ids: list[str],
          profiles: list[str], moves: list[Move], cause: str, reason_word: str,
          launches: list[Action], removed: str | tuple[str, ...] | None) -> Plan:
    """The plan that launches `launches`, makes `moves` (capped by max_moves: the last, least
    valuable, stay) and drains and terminates `removed` (one node or several; none when a
    partition would stay on them)."""
    arrays = ctx.arrays
    actions = list(launches)
    limit = ctx.policy.move_limit(len(arrays.ids))
    dropped = 0
    gone = (removed,) if isinstance(removed, str) else tuple(removed or ())
    if limit is not None and len(moves) > limit:
        dropped = len(moves) - limit  # the least valuable are last: kept where they are
        moves = moves[:limit]
        gone = ()  # a node that keeps partitions is not removed
    final = arrays.node_of.copy()
    for p, d, why in moves:
        actions.append(Action(op="move", partition=arrays.ids[p], source=arrays.current[p],
                              target=node_ids[d], cause=cause, reason=reason_word + why))
        final[p] = d
    memory = _queued(ctx, memory, moves)
    for node in gone:
        actions.append(Action(op="drain", node=node, cause="scale_in",
                              reason="scale in: the least loaded node, its partitions moved off"))
    for node in gone:
        actions.append(Action(op="terminate", node=node, cause="scale_in",
                              reason="scale in: drained, all partitions moved off"))
    assignment, kept_loads = _assignment(ctx, final, node_ids, profiles, gone)
    summary = Summary(moves=len(moves), reconfigurations=0, launches=len(launches),
                      terminations=len(gone),
                      max_load_ratio=load_ratio(kept_loads), moves_dropped=dropped)
    return Plan(policy="met", health=ctx.health, sizing=sizing,
                groups=groups(arrays, ctx.policy, assignment), assignment=assignment,
                actions=tuple(actions), summary=summary, memory=memory, reason=sizing.reason)


def _queued(ctx: Context, memory: DecisionMemory, moves: list[Move]) -> DecisionMemory:
    """`memory` knowing the partitions this plan moves onto its new nodes (with
    size_from_demand), besides those of the plan in flight it extends: an extension plans on
    the placement they lead to. A move onto a node already serving is not queued: it starts
    at once, and once landed its load is that node's (counted as gone from where it sits, it
    made the node read cool, and every extension sent it more)."""
    if not ctx.policy.size_from_demand or not moves:
        return memory
    extending = ctx.base.plan_in_flight() is not None
    before = ctx.memory.demand.queued if extending else frozenset()
    nodes = (ctx.memory.demand.plan_nodes if extending
             else frozenset(n.id for n in ctx.arrays.active))
    rules = read_memory(memory.history)
    serving = len(ctx.arrays.active)  # node indices past these are the plan's new nodes
    # a queued partition that landed and moves on to a serving node is no longer the plan's
    queued = ((before - {ctx.arrays.ids[p] for p, d, _ in moves if d < serving})
              | {ctx.arrays.ids[p] for p, d, _ in moves if d >= serving})
    return with_rules_memory(memory, replace(rules, demand=replace(
        rules.demand, queued=queued, plan_nodes=nodes)), memory.step)


def _assignment(ctx: Context, final: np.ndarray, node_ids: list[str], profiles: list[str],
                removed: tuple[str, ...]) -> tuple[tuple[NodeAssignment, ...], np.ndarray]:
    """Each kept node with its partitions and load after the plan, then any inactive node that
    still holds partitions (they stay there: the executor drains those); and the kept nodes'
    loads."""
    arrays = ctx.arrays
    placed = final >= 0
    loads = np.bincount(final[placed], weights=arrays.load[placed], minlength=len(node_ids))
    members: dict[str, list[str]] = {node_ids[i]: [] for i in range(len(node_ids))}
    extra_load: dict[str, float] = {}
    for p, d in enumerate(final.tolist()):
        if d >= 0:
            members[node_ids[d]].append(arrays.ids[p])
        else:
            nid = arrays.current[p]
            members.setdefault(nid, []).append(arrays.ids[p])
            extra_load[nid] = extra_load.get(nid, 0.0) + float(arrays.load[p])
    keep = [i for i, nid in enumerate(node_ids) if nid not in removed]
    profile_of = {n.id: n.profile for n in ctx.snapshot.nodes}
    assignment = tuple(NodeAssignment(node_ids[i], profiles[i], tuple(members[node_ids[i]]),
                                      float(loads[i])) for i in keep) + tuple(
        NodeAssignment(nid, profile_of.get(nid, "default"), tuple(members[nid]), load)
        for nid, load in extra_load.items())
    return assignment, loads[keep]


def rebalance(ctx: Context, nodes: list[Diagnosis], why: str,
              stay: frozenset[str] = frozenset()) -> Plan | None:
    """Size unchanged but `nodes` overloaded: move their partitions (not those in `stay`: being
    split) to nodes with room, if that brings them under the mean-plus-headroom; None when
    nothing fits (or the store places data)."""
    arrays, policy = ctx.arrays, ctx.policy
    if policy.data_placement == "store":
        return None
    util, cost = costs(arrays, policy)
    if util.sum() <= 0:
        return None
    mean = float(util.mean())
    hot = {d.node for d in nodes}
    sources = [i for i, n in enumerate(arrays.active) if n.id in hot]
    # Room: a destination stays under the overload mark's target_utilisation.
    moves, _ = greedy_moves(arrays, util, sources, list(range(len(arrays.active))),
                            target_load=mean, cap=max(mean, policy.target_utilisation),
                            policy=policy, cost=cost, stay=stay)
    if not moves:
        return None
    memory = ctx.remember(ctx.memory.acted(ctx.now), ctx.step)
    sizing = Sizing(ctx.current, ctx.current, 0, ctx.step, "rebalance: " + why + "; "
                    "moving partitions off the overloaded node(s) only")
    return build(ctx, sizing, memory, [n.id for n in arrays.active],
                 [n.profile for n in arrays.active], moves, "rebalance",
                 "moves off an overloaded node to one with room (rebalance)", [], None)


def full_replacement(ctx: Context, sizing: Sizing, memory: DecisionMemory) -> Plan:
    """MET's Stages C-D for `sizing` (move_only_what_pays: false): LPT re-placement, profiles,
    compactions."""
    return met_plan(ctx.snapshot, ctx.policy, ctx.health, sizing, memory,
                    first=not ctx.base.first_decision_done)


__all__ = ["hold", "build", "groups", "rebalance", "full_replacement"]
