"""What a rule of the default policy is and what it sees.

A `Rule` is one concern (verify the last action, scale out, split, scale in, ...) with up to
three pure methods, each of a typed `Context`:

    observe(ctx) -> ctx            what it learns every decision, before anything is proposed
                                   (always run, on or off: a rule switched off may still have
                                   to forget what it knew)
    propose(ctx) -> Plan | Carry | None
                                   its plan (the decision is made), or what it found without
                                   acting (`Carry`: memory to keep, words for a later hold), or
                                   nothing
    veto(ctx, change) -> Veto | None
                                   asked by every later rule before it acts: refuse that change,
                                   with a reason (Cruise Control's goals accept or refuse the
                                   actions of the goals after them in the same way)

A rule switched off (`switch`, a PolicyConfig field) neither proposes nor vetoes.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from decision.arrays import SnapshotArrays
from decision.model import ClusterSnapshot, DecisionMemory, Health, Plan
from decision.policy import PolicyConfig
from decision.rules.cycle import Prediction
from decision.rules.diagnose import CAPACITY, Diagnosis
from decision.rules.view import DemandView
from decision.rules.memory import RulesMemory, with_rules_memory


@dataclass(frozen=True)
class Change:
    """A change a rule is about to plan, put to the rules before it."""

    kind: Literal["add", "remove"]  # nodes added / removed
    nodes: int = 1
    predicted: bool = False  # ahead of a load that has not come yet (predictive scale-out)


@dataclass(frozen=True)
class Veto:
    """A rule's refusal of a later rule's change."""

    cause: str   # one word, the hold's cause: bounds, no_gain, predicted
    reason: str  # why, in the operator's words
    held: str = ""  # how a hold it causes ends "<n> node(s) overloaded…", when it says more


@dataclass(frozen=True)
class Carry:
    """What a rule found without planning: memory to keep and words a later hold says."""

    memory: RulesMemory | None = None
    note: str | None = None


@dataclass(frozen=True)
class Context:
    """Everything a rule reads: the snapshot, the policy, the health verdicts and diagnoses,
    the rules' memory as the rules before it left it, and what they said without acting."""

    snapshot: ClusterSnapshot
    policy: PolicyConfig
    health: Health
    arrays: SnapshotArrays
    base: DecisionMemory            # the memory the decision started from
    memory: RulesMemory             # the rules' memory so far
    diagnoses: tuple[Diagnosis, ...]
    served: float                   # requests/s the cluster serves now
    demand: float                   # sum of the active nodes' utilisation (node-loads)
    prediction: Prediction | None = None  # what the last cycle asks for just ahead
    carried: bool = False           # inside a peak a predicted scale-out prepared for
    notes: tuple[str, ...] = ()     # what earlier rules found without acting
    judges: tuple[Rule, ...] = ()   # the rules before this one, asked before it acts
    view: DemandView | None = None  # demand, capacity and forecast (size_from_demand)

    @property
    def now(self) -> float:
        return self.snapshot.taken_at.timestamp()

    @property
    def current(self) -> int:
        return len(self.arrays.active)

    @property
    def step(self) -> int:
        """MET's step: how many nodes a scale-out may add (at least 1)."""
        return max(1, self.base.step)

    @property
    def needs(self) -> list[Diagnosis]:
        """Overloaded nodes short of capacity (cpu, io_wait)."""
        return [d for d in self.diagnoses if d.bottleneck in CAPACITY]

    @property
    def hot(self) -> list[Diagnosis]:
        """Nodes one partition overloads."""
        return [d for d in self.diagnoses if d.bottleneck == "hot_partition"]

    @property
    def overloaded(self) -> list[Diagnosis]:
        """Every overloaded node, whatever its bottleneck."""
        return [d for d in self.diagnoses if d.bottleneck != "none"]

    @property
    def short_of_capacity(self) -> str:
        """`2 node(s) overloaded`, or `1 of 7 overloaded node(s) short of capacity (others:
        within_slo 6)` when the other overloaded nodes ask for nothing: counted against every
        overloaded node, so a reason matches the verdicts shown beside it ("1 node(s)
        overloaded" stood above a table of 7 overloaded nodes)."""
        needs, overloaded = self.needs, self.overloaded
        # a node in time by its mean but with calls waiting: named, with its queue
        waits = "".join(f" ({d.node}: {d.waits})" for d in needs if d.waits)
        if len(needs) == len(overloaded):
            return f"{len(needs)} node(s) overloaded{waits}"
        others: dict[str, int] = {}
        for d in overloaded:
            if d not in needs:
                others[d.bottleneck] = others.get(d.bottleneck, 0) + 1
        said = ", ".join(f"{k} {n}" for k, n in sorted(others.items()))
        return (f"{len(needs)} of {len(overloaded)} overloaded node(s) short of capacity "
                f"(others: {said}){waits}")

    def veto(self, change: Change) -> Veto | None:
        """The first refusal of `change` by a rule before this one that is switched on."""
        for judge in self.judges:
            if judge.enabled(self.policy):
                found = judge.veto(self, change)
                if found is not None:
                    return found
        return None

    def remember(self, memory: RulesMemory, step: int) -> DecisionMemory:
        """The DecisionMemory a plan of this decision carries: `memory` and MET's `step`."""
        return with_rules_memory(self.base, memory, step)

    def carrying(self, carry: Carry) -> Context:
        """This context after a rule found something without planning."""
        return replace(self, memory=carry.memory if carry.memory is not None else self.memory,
                       notes=self.notes + ((carry.note,) if carry.note else ()))


class Rule:
    """One concern of the default policy. Override what it needs; the defaults do nothing."""

    name: str = ""
    switch: str | None = None  # the PolicyConfig field that turns it on; None: always on

    def enabled(self, policy: PolicyConfig) -> bool:
        return self.switch is None or bool(getattr(policy, self.switch))

    def observe(self, ctx: Context) -> Context:
        return ctx

    def propose(self, ctx: Context) -> Plan | Carry | None:
        return None

    def veto(self, ctx: Context, change: Change) -> Veto | None:
        return None


__all__ = ["Rule", "Context", "Change", "Veto", "Carry"]
