"""The default policy (`met`, paper_faithful: false): MET's health verdicts, a diagnosis of each
overloaded node (rules/diagnose.py), then these rules in order; the first that plans decides,
and a rule may refuse a later rule's change, with its reason. docs/policy.md says what each
does, what switches it and what it says; rules/rule.py what a rule is; rules/engine.py how
they run. To add one: a module here, a line below.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from decision.holds import health_or_hold
from decision.model import ClusterSnapshot, DecisionMemory, Plan
from decision.policy import PolicyConfig
from decision.rules.bounds import Bounds
from decision.rules.engine import run, start
from decision.rules.even import EvenOut
from decision.rules.extend import during_plan
from decision.rules.hold import HoldOverloaded, Settle
from decision.rules.measure import Measure
from decision.rules.prediction import PredictedScaleOut
from decision.rules.rule import Rule
from decision.rules.scale_in import ScaleIn
from decision.rules.scale_out import ScaleOut
from decision.rules.shrink import ShrinkToDemand
from decision.rules.size import SizeToDemand
from decision.rules.split_fit import SplitToFit
from decision.rules.splits import SplitHot
from decision.rules.verify import Verify

DEFAULT_RULES: tuple[Rule, ...] = (
    # rule                  switch               what it does (what it refuses)
    Bounds(),             # always               (adds at max_nodes, removals while overloaded)
    Verify(),             # verify_after_acting  judges the last scale-out (the next, if no gain)
    Measure(),            # size_from_demand     demand, capacity, forecast (observes only)
    ScaleOut(),           # (not size_from_demand) short of CPU/disk by MET's marks: more nodes
    SplitHot(),           # split_hot_partitions one partition overloads a node: split, move rest
    SplitToFit(),         # split_hot_partitions (size_from_demand) the same, by demand
    SizeToDemand(),       # size_from_demand     the nodes the demand over the lead time asks for
    PredictedScaleOut(),  # predict_cycle_s      before the last cycle's peak: its nodes (scale-in)
    ShrinkToDemand(),     # scale_in_on_forecast the demand fits fewer nodes with room: fewer
    EvenOut(),            # even_out             a node near capacity over the mean: move off it
    ScaleIn(),            # scale_in_on_headroom nothing overloaded (but in time), room on the rest: one less
    HoldOverloaded(),     # always               an overload nothing above helps: hold, say why
    Settle(),             # move_only_what_pays  nothing to do: hold (off: MET's re-placement)
)


def decide_met(snapshot: ClusterSnapshot, policy: PolicyConfig, memory: DecisionMemory,
               rules: Sequence[Rule] = DEFAULT_RULES) -> Plan:
    """The default met's plan, by `rules`: a hold while an active node has no metrics."""
    health, held = health_or_hold(snapshot, policy, memory)
    if held is not None:
        return held
    ctx = start(snapshot, policy, memory, health)
    in_flight = memory.plan_in_flight()
    if in_flight is not None:
        return during_plan(rules, ctx, in_flight)
    if ctx.memory.demand.queued or ctx.memory.demand.plan_nodes:  # that plan has ended
        ctx = replace(ctx, memory=replace(ctx.memory, demand=replace(
            ctx.memory.demand, queued=frozenset(), plan_nodes=frozenset())))
    return run(rules, ctx)


__all__ = ["DEFAULT_RULES", "decide_met", "Rule"]
