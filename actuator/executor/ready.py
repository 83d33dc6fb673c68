"""Whether a plan step may start now: the dependencies `states.WAITS_FOR` names for its op,
each checked here under the same name. The work phases overlap (`states.ALONGSIDE`), so a
step of a later phase may start while an earlier phase still runs — a move between two
existing nodes while the new VMs boot — but never before what it depends on is done.

Every check reads only the journaled step states and this tick's observations, so a resumed
controller judges exactly as the one that died did. Steps the executor derives (evacuate,
refill, drain and rollback moves) are driven by their parent step and are not checked here.
"""
from __future__ import annotations

from typing import Callable

from actuator.executor.context import Context
from actuator.executor.states import WAITS_FOR
from actuator.executor.step import Step


def _unready_placeholders(ctx: Context) -> set[str]:
    """Plan nodes ("new-1"…) whose launch is not done: no server to send anything to yet."""
    return {s.node for s in ctx.launch_steps() if s.state != "done" and s.node}


def _reconfiguring(ctx: Context) -> set[str]:
    return {s.node for s in ctx.of("reconfigure") if not s.finished and s.node}


def _earlier_reconfigure(ctx: Context, step: Step) -> bool:
    return all(s.finished for s in ctx.of("reconfigure") if s.idx < step.idx)


def _new_nodes_its_partitions_go_to(ctx: Context, step: Step) -> bool:
    # An evacuation sends each partition straight to its final node when that node can take
    # it; started before that node is registered, it would send it elsewhere and the plan
    # would move it a second time. So such a reconfigure waits for the launch.
    waiting = _unready_placeholders(ctx)
    if not waiting or step.node is None:
        return True
    heading: dict[str, str] = {}
    for node, parts in ctx.assignment.items():
        for p in parts:
            heading[p] = node
    for m in ctx.of("move"):
        if m.partition and m.target and not m.finished:
            heading[m.partition] = m.target
    return not any(heading.get(p) in waiting for p in ctx.obs.on(step.node))


def _reconfigures_finished(ctx: Context, step: Step) -> bool:
    return not _reconfiguring(ctx)


def _target_launched(ctx: Context, step: Step) -> bool:
    return step.target not in _unready_placeholders(ctx)


def _ends_not_reconfiguring(ctx: Context, step: Step) -> bool:
    busy = _reconfiguring(ctx)
    return not busy or (step.source not in busy and ctx.resolve(step.target) not in busy
                        and step.target not in busy)


def _partition_not_splitting(ctx: Context, step: Step) -> bool:
    return not any(sp.partition == step.partition and not sp.finished for sp in ctx.of("split"))


CHECKS: dict[str, Callable[[Context, Step], bool]] = {
    "earlier reconfigure": _earlier_reconfigure,
    "new nodes its partitions go to": _new_nodes_its_partitions_go_to,
    "reconfigures finished": _reconfigures_finished,
    "target launched": _target_launched,
    "ends not reconfiguring": _ends_not_reconfiguring,
    "partition not splitting": _partition_not_splitting,
}


def ready(ctx: Context, step: Step) -> bool:
    """True when every dependency of `step` (a plan step) is done."""
    return all(CHECKS[name](ctx, step) for name in WAITS_FOR.get(step.op, ()))
