"""How the rules decide: build the typed context once, let every rule observe (passive: what
it learns, in list order), then ask each rule that is switched on, in order, for a plan. The
first plan wins; a rule that acts asks the rules before it (`Context.veto`) first, and what a
rule found without acting is carried to the rules after it. The last rule always decides."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from decision.arrays import SnapshotArrays
from decision.model import ClusterSnapshot, DecisionMemory, Health, Plan
from decision.policy import PolicyConfig
from decision.rules.diagnose import diagnose, utilisation
from decision.rules.memory import read_memory, warming_up
from decision.rules.rule import Context, Rule


def start(snapshot: ClusterSnapshot, policy: PolicyConfig, memory: DecisionMemory,
          health: Health) -> Context:
    """The context every rule reads, before any rule observed: the snapshot as arrays, the
    diagnoses, the requests served and the demand, and the rules' memory read from `memory`."""
    arrays = SnapshotArrays(snapshot)
    remembered = read_memory(memory.history)
    last = remembered.last_action_at
    warming = warming_up(memory, last, snapshot.taken_at.timestamp(), policy.warmup_s)
    demand = sum(utilisation(n.metrics.cpu, n.metrics.io_wait, policy)
                 for n in arrays.active if n.metrics is not None)
    return Context(snapshot=snapshot, policy=policy, health=health, arrays=arrays, base=memory,
                   memory=remembered, diagnoses=diagnose(arrays, health, policy, warming),
                   served=float(arrays.load.sum()), demand=demand)


def observed(rules: Sequence[Rule], ctx: Context) -> Context:
    """`ctx` after every rule observed it, in order."""
    for rule in rules:
        ctx = rule.observe(ctx)
    return ctx


def run(rules: Sequence[Rule], ctx: Context) -> Plan:
    """The plan of the first rule (switched on, in order) that makes one."""
    ctx = observed(rules, ctx)
    for i, rule in enumerate(rules):
        if not rule.enabled(ctx.policy):
            continue
        out = rule.propose(replace(ctx, judges=tuple(rules[:i])))
        if isinstance(out, Plan):
            return out
        if out is not None:
            ctx = ctx.carrying(out)
    raise ValueError("the rule list ended without a plan: its last rule must always decide")


__all__ = ["start", "observed", "run"]
