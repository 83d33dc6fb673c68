"""The default `met` (paper_faithful: false): MET's health rules, then act only where it pays.

    diagnose      overloaded nodes -> cpu / io_wait / hot_partition / transient / within_slo;
                  only cpu and io_wait overload (outside a warm-up, and over latency_slo_ms
                  when one is set) asks for capacity
    size          proportional: ceil(sum utilisation / target_utilisation), at least +1, at
                  most MET's step; verify after acting: a scale-out that did not raise the
                  requests served stops further ones while the load stays there
    split         a node one partition overloads gets that partition split in two (unless
                  the table's last resplit_tries splits each left one half with the load);
                  the halves can then move like any partition
    scale in      one node when none is overloaded, one is underloaded and the rest keep
                  headroom; only that node's partitions move
    place         scale-out and rebalance move partitions off overloaded nodes only (largest
                  first, never idle ones), each only when the load it takes off the hot node
                  over move_payback_s beats its warm-up and offline cost; no restarts, no
                  compactions
    safety        never shrink above max_nodes nor while overloaded; at most one node a decision
    predict       (opt-in, predict_cycle_s) before a time of the cycle that was short of nodes
                  the last cycle, add them, with the partitions that load woke; no scale-in then

Every switch lives in PolicyConfig; each hold or action carries its reason. Pure: state between
decisions is DecisionMemory.history (keys `met.*`), time is the snapshots' taken_at.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, replace

import numpy as np

from decision.arrays import SnapshotArrays, load_ratio
from decision.model import (
    GROUPS, Action, GroupPlan, ClusterSnapshot, DecisionMemory, Health, NodeAssignment, Plan, Sizing, Summary,
)
from decision.placement import classify
from decision.policy import PolicyConfig
from decision.prediction import (
    PREDICT_UNTIL, Prediction, expected_hot, predicted_need, record_hot, record_need,
)

# DecisionMemory.history keys this policy owns.
LAST_ACTION_AT = "met.last_action_at"     # taken_at (epoch s) of the last plan with actions
OUT_BEFORE = "met.out_requests_before"    # requests served just before the last scale-out
OUT_AT = "met.out_at"                     # taken_at of the last scale-out
OUT_ADDED = "met.out_added"               # nodes that scale-out planned to add / nodes before it
NO_GAIN_AT = "met.no_gain_requests"       # requests served when a scale-out did not pay
SPLIT_LOAD = "met.split_load:"            # + table: requests/s the table's last split partition served
SPLIT_AT = "met.split_at:"                # + table: taken_at of that split
SPLIT_STREAK = "met.split_streak:"        # + table: splits in a row that did not spread its load


@dataclass(frozen=True)
class Diagnosis:
    node: str
    bottleneck: str  # cpu | io_wait | hot_partition | transient | within_slo | none
    reason: str


def _settled_since(memory: DecisionMemory, acted_at: float) -> float:
    """When a plan decided at `acted_at` took effect: the end of that plan when the control
    loop recorded it (a scale-out's plan can outlast several warm-up windows), else acted_at."""
    ended = memory.plan_ended_at()
    return max(acted_at, ended) if ended is not None else acted_at


def _memo(memory: DecisionMemory) -> dict[str, float]:
    return {k: v for k, v in memory.history if k.startswith("met.")}


def _with_memo(memory: DecisionMemory, memo: dict[str, float], step: int) -> DecisionMemory:
    other = tuple((k, v) for k, v in memory.history if not k.startswith("met."))
    return replace(memory, step=step, first_decision_done=True,
                   history=other + tuple(sorted(memo.items())))


def utilisation(cpu: float, io_wait: float, policy: PolicyConfig) -> float:
    """How close a node is to overload: 1.0 at cpu_high or io_wait_high (the larger)."""
    return max(cpu / policy.cpu_high, io_wait / policy.io_wait_high)


def latency_slo(policy: PolicyConfig) -> float | None:
    """The latency objective the decision follows, or None (none set, or the gate is off)."""
    return policy.latency_slo_ms if policy.latency_gate else None


def scale_out_ceiling(current: int, step: int, policy: PolicyConfig) -> int:
    """The most nodes one proportional scale-out adds. MET's step grows 1, 2, 4 … because MET
    cannot tell how many nodes it needs; with a demand estimate the bound only guards against
    a wrong one, and Kubernetes' HPA default (the larger of +4 and doubling) is that guard."""
    if policy.scale_out_ceiling == "met_step":
        return step
    return max(4, current)


def diagnose(snapshot: ClusterSnapshot, arrays: SnapshotArrays, health: Health,
             policy: PolicyConfig, memory: DecisionMemory) -> list[Diagnosis]:
    """The bottleneck of each overloaded active node (others are `none`)."""
    now = snapshot.taken_at.timestamp()
    memo = _memo(memory)
    warming = (policy.diagnose and LAST_ACTION_AT in memo
               and now - _settled_since(memory, memo[LAST_ACTION_AT]) < policy.warmup_s)
    node_load = np.bincount(arrays.node_of[arrays.node_of >= 0],
                            weights=arrays.load[arrays.node_of >= 0],
                            minlength=len(arrays.active))
    top = np.zeros(len(arrays.active))
    on = arrays.node_of >= 0
    np.maximum.at(top, arrays.node_of[on], arrays.load[on])
    verdict = {v.node: v.verdict for v in health.nodes}
    slo = latency_slo(policy)
    out = []
    for i, node in enumerate(arrays.active):
        m = node.metrics
        if verdict.get(node.id) != "overloaded" or m is None:
            out.append(Diagnosis(node.id, "none", "not overloaded"))
            continue
        kind = "io_wait" if m.io_wait >= policy.io_wait_high and m.cpu < policy.cpu_high \
            else "cpu"
        if warming:
            out.append(Diagnosis(node.id, "transient", (
                f"{kind} overload within warmup_s {policy.warmup_s:.0f} s of the last plan: "
                "cold caches, not capacity")))
            continue
        if slo is not None and m.rpc_latency_ms is not None and m.rpc_latency_ms <= slo:
            out.append(Diagnosis(node.id, "within_slo", (
                f"{kind} overload, but its requests take {m.rpc_latency_ms:.1f} ms <= "
                f"latency_slo_ms {slo:g}: served in time, nothing to buy")))
            continue
        share = top[i] / node_load[i] if node_load[i] > 0 else 0.0
        # The hottest partition's own part of the node's utilisation, and the rest's.
        u = utilisation(m.cpu, m.io_wait, policy)
        if policy.diagnose and policy.data_placement == "metctl" \
                and share * u * policy.cpu_high >= policy.split_load_fraction \
                and (1 - share) * u < 1.0:
            out.append(Diagnosis(node.id, "hot_partition", (
                f"one partition carries {share:.0%} of its requests ({share * u * policy.cpu_high:.2f}"
                f" of a node >= split_load_fraction {policy.split_load_fraction:.2f}): "
                "more nodes would not help")))
            continue
        out.append(Diagnosis(node.id, kind, f"{kind} overload (utilisation {u:.2f})"))
    return out


def _hold(policy: PolicyConfig, snapshot: ClusterSnapshot, arrays: SnapshotArrays,
          health: Health, memory: DecisionMemory, cause: str, why: str) -> Plan:
    current = len(arrays.active)
    reason = f"hold ({cause}): {why}"
    loads = _node_loads(arrays)
    profile = {n.id: n.profile for n in arrays.active}
    members: dict[str, list[str]] = {n.id: [] for n in arrays.active}
    for pid, nid in zip(arrays.ids, arrays.current):
        members.setdefault(nid, []).append(pid)
    assignment = tuple(NodeAssignment(nid, profile.get(nid, "default"), tuple(ps),
                                      float(loads[i]) if i < len(loads) else 0.0)
                       for i, (nid, ps) in enumerate(members.items()))
    return Plan(policy="met", health=health,
                sizing=Sizing(current, current, 0, memory.step, reason),
                groups=_groups(arrays, policy, assignment),
                assignment=assignment, actions=(),
                summary=Summary(0, 0, 0, 0, load_ratio(loads)), memory=memory, reason=reason)


def _groups(arrays: SnapshotArrays, policy: PolicyConfig,
            assignment: tuple[NodeAssignment, ...]) -> tuple[GroupPlan, ...]:
    """MET's classes of the busy partitions (idle ones count in no group) and the nodes whose
    profile serves each class; informative here: this policy regroups nothing."""
    busy = arrays.load > 0
    codes = classify(arrays.reads[busy], arrays.writes[busy], arrays.scans[busy], policy)
    counts = np.bincount(codes, minlength=len(GROUPS))
    return tuple(GroupPlan(g, int(counts[i]), sum(a.profile == g for a in assignment))
                 for i, g in enumerate(GROUPS) if counts[i])


def verify_need(policy: PolicyConfig, added: float | None) -> float:
    """The rise in requests served that says a scale-out paid: verify_gain, but never more than
    half the capacity it added (`added`: new nodes / nodes before). One node more on twenty is
    5 % more capacity: asking it for a 5 % rise would call every such step a failure."""
    return policy.verify_gain if added is None else min(policy.verify_gain, 0.5 * added)


def _node_loads(arrays: SnapshotArrays) -> np.ndarray:
    on = arrays.node_of >= 0
    return np.bincount(arrays.node_of[on], weights=arrays.load[on],
                       minlength=len(arrays.active))


def decide_guarded(snapshot: ClusterSnapshot, policy: PolicyConfig, memory: DecisionMemory,
                   health: Health, full_plan) -> Plan:
    """The default met's plan. `full_plan(target, sizing, memory)` is MET's Stages C-D, used
    only when move_only_what_pays is off."""
    arrays = SnapshotArrays(snapshot)
    active = arrays.active
    current = len(active)
    now = snapshot.taken_at.timestamp()
    memo = _memo(memory)
    served = float(arrays.load.sum())
    diagnoses = diagnose(snapshot, arrays, health, policy, memory)
    needs = [d for d in diagnoses if d.bottleneck in ("cpu", "io_wait")]
    hot_partition = [d for d in diagnoses if d.bottleneck == "hot_partition"]
    overloaded = [d for d in diagnoses if d.bottleneck != "none"]
    step = max(1, memory.step)

    # Verify the last scale-out once its warm-up is over.
    if policy.verify_after_acting and OUT_AT in memo \
            and now - _settled_since(memory, memo[OUT_AT]) >= policy.warmup_s:
        before = memo.pop(OUT_BEFORE, served)
        memo.pop(OUT_AT)
        if served < before * (1 + verify_need(policy, memo.pop(OUT_ADDED, None))):
            memo[NO_GAIN_AT] = served
    if NO_GAIN_AT in memo and abs(served - memo[NO_GAIN_AT]) > \
            policy.verify_gain * max(memo[NO_GAIN_AT], 1e-9) * 2:
        del memo[NO_GAIN_AT]  # the load moved: capacity may pay again

    def hold(cause: str, why: str, next_step: int = step) -> Plan:
        return _hold(policy, snapshot, arrays, health, _with_memo(memory, memo, next_step),
                     cause, why)

    demand = sum(utilisation(n.metrics.cpu, n.metrics.io_wait, policy)
                 for n in active if n.metrics is not None)
    carried = memo.get(PREDICT_UNTIL, -math.inf) >= now  # inside a predicted peak
    if policy.predict_cycle_s is not None:
        # What this time of the cycle asks for, for the next cycle: short of capacity now, the
        # nodes the demand asks for; busy inside a predicted peak (warming, in time), all it
        # has; otherwise nothing (said, so an older cycle's peak stops predicting).
        record_need(memo, now, max(math.ceil(demand / policy.target_utilisation - 1e-9),
                                   current + 1) if needs else
                    current if overloaded and carried else 0, policy)
        if needs:
            # and which partitions carried it: the busiest, two per node at most
            _, cost = _costs(arrays, policy)
            top = np.argsort(-cost, kind="stable")[:2 * current]
            record_hot(memo, now, {arrays.ids[p]: float(cost[p]) for p in top.tolist()
                                   if cost[p] > 0}, policy)
    prediction = predicted_need(memo, now, policy) if policy.predict_cycle_s else None
    if prediction is not None:
        memo[PREDICT_UNTIL] = max(memo.get(PREDICT_UNTIL, now), now + prediction.until_s)

    if needs:
        stuck = current >= policy.max_nodes or (policy.verify_after_acting and NO_GAIN_AT in memo)
        if stuck:
            barred = (f"bounds: {current} active nodes >= max_nodes {policy.max_nodes}"
                      if current >= policy.max_nodes else
                      "no_gain: the last scale-out did not raise the requests served")
            plan = _rebalance(snapshot, arrays, policy, health, memory, memo, step,
                              needs + hot_partition, f"no node may be added ({barred})")
            if plan is not None:
                return plan
        if current >= policy.max_nodes:
            return hold("bounds", f"{len(needs)} node(s) overloaded but {current} active nodes "
                        f">= max_nodes {policy.max_nodes}")
        if policy.verify_after_acting and NO_GAIN_AT in memo:
            return hold("no_gain", f"{len(needs)} node(s) overloaded, but the last scale-out did "
                        f"not raise the requests served ({memo[NO_GAIN_AT]:.0f}/s): "
                        "client- or partition-bound, adding no more")
        if policy.proportional_sizing:
            total = demand
            want = math.ceil(total / policy.target_utilisation - 1e-9)
            ceiling = scale_out_ceiling(current, step, policy)
            target = min(max(want, current), current + ceiling, policy.max_nodes)
            why = (f"{len(needs)} node(s) overloaded ({', '.join(d.bottleneck for d in needs[:3])}"
                   f"); demand {total:.2f} node-loads / target_utilisation "
                   f"{policy.target_utilisation:.2f} -> {want} nodes (at most +{ceiling}: "
                   f"{policy.scale_out_ceiling})")
        else:
            target = min(current + step, policy.max_nodes)
            why = f"{len(needs)} node(s) overloaded: add {step} (MET's step)"
        if target == current:
            plan = _rebalance(snapshot, arrays, policy, health, memory, memo, step, needs, why)
            if plan is not None:
                return plan
            target = current + 1
            why += ("; add 1" if policy.data_placement == "store" else
                    "; moving off the overloaded nodes does not fit: add 1")
        next_step = min(step * 2, policy.max_nodes)
        memo[OUT_BEFORE], memo[OUT_AT], memo[LAST_ACTION_AT] = served, now, now
        memo[OUT_ADDED] = (target - current) / max(current, 1)
        new_memory = _with_memo(memory, memo, next_step)
        sizing = Sizing(current, target, target - current, next_step, "scale out: " + why)
        if not policy.move_only_what_pays:
            return full_plan(sizing, new_memory)
        plan = _scale_out(snapshot, arrays, policy, health, sizing, new_memory)
        if plan is not None:
            return plan
        for key in (OUT_BEFORE, OUT_AT, OUT_ADDED, LAST_ACTION_AT):
            memo.pop(key, None)
        if LAST_ACTION_AT in _memo(memory):
            memo[LAST_ACTION_AT] = _memo(memory)[LAST_ACTION_AT]
        return hold("nothing_moves", f"{why}; no busy partition can move off the overloaded "
                    "node(s) to a new one and lower it: new nodes would serve nothing")

    refused: list[str] = []  # tables left whole, said in the plan or the hold
    if hot_partition and (policy.split_hot_partitions or policy.move_only_what_pays):
        splits, refused = (_hot_splits(snapshot, arrays, policy, memo, hot_partition)
                           if policy.split_hot_partitions else ([], []))
        why = (f"{len(hot_partition)} node(s) overloaded by one hot partition "
               f"({hot_partition[0].node}: {hot_partition[0].reason})")
        if refused:
            why += "; " + "; ".join(refused)
        # More nodes would not help a node whose overload is one partition, but moving its other
        # partitions away lowers it toward that partition's own load (the floor); the hot one
        # stays (moving it only moves the overload) and, split, can leave half by half later.
        plan = (_rebalance(snapshot, arrays, policy, health, memory, memo, step, hot_partition, why,
                           stay=frozenset(a.partition for a in splits))
                if policy.move_only_what_pays else None)
        if splits:
            plan = _with_splits(plan, splits, why, snapshot, arrays, policy, health, memory,
                                memo, step)
        if plan is not None:
            return plan
    if prediction is not None and prediction.nodes > current and current < policy.max_nodes \
            and policy.move_only_what_pays:
        plan = _predicted_scale_out(snapshot, arrays, policy, health, memory, memo, step,
                                    prediction)
        if plan is not None:
            return plan
    if overloaded:
        kinds = sorted({d.bottleneck for d in overloaded})
        return hold("+".join(kinds), "; ".join([f"{d.node}: {d.reason}" for d in overloaded[:3]]
                                               + refused), next_step=step)

    # No node overloaded: scale in, or nothing.
    underloaded = sum(v.verdict == "underloaded" for v in health.nodes
                      if v.node in {n.id for n in active})
    cpu_total = sum(n.metrics.cpu for n in active if n.metrics is not None)
    spread = cpu_total / (current - 1) if current > 1 else math.inf
    if current > policy.max_nodes and spread < policy.cpu_high:
        # max_nodes lowered below the size (an operator's pin): one node at a time, and only
        # while one node fewer would not be overloaded on average
        may_remove = True
        rule = (f"{current} active nodes > max_nodes {policy.max_nodes}, mean cpu over "
                f"{current - 1} nodes {spread:.2f} < cpu_high {policy.cpu_high:.2f}")
    elif policy.scale_in_on_headroom:
        may_remove = (current > 1 and underloaded >= 1
                      and spread < policy.cpu_high * policy.scale_in_headroom)
        rule = (f"{underloaded} underloaded, mean cpu over {current - 1} nodes {spread:.2f} "
                f"< {policy.cpu_high * policy.scale_in_headroom:.2f}")
        slowest = max((n.metrics.rpc_latency_ms for n in active if n.metrics is not None
                       and n.metrics.rpc_latency_ms is not None), default=None)
        slo = latency_slo(policy)
        if may_remove and slo is not None and slowest is not None:
            bound = slo * policy.scale_in_latency_fraction
            may_remove = slowest <= bound
            rule += (f", slowest node {slowest:.1f} ms "
                     f"{'<=' if may_remove else '>'} {bound:g} ms (latency_slo_ms x "
                     "scale_in_latency_fraction)")
    else:
        may_remove = health.remove
        rule = "MET's rule: " + health.reason
    if policy.predict_cycle_s is not None and carried:
        # Carried by a predicted scale-out: what this slot needs is what it holds, one node
        # fewer when headroom says so (the next cycle then predicts one fewer).
        record_need(memo, now, current - 1 if may_remove else current, policy)
    if may_remove and prediction is not None and prediction.nodes >= current:
        may_remove = False
        rule += (f"; not scaling in: at this time of the last cycle (predict_cycle_s "
                 f"{policy.predict_cycle_s:g}) the load asked for {prediction.nodes} nodes "
                 f"{prediction.starts_in_s:.0f} s from now")
    if may_remove and current > policy.min_nodes:
        memo.pop(NO_GAIN_AT, None)
        memo[LAST_ACTION_AT] = now
        new_memory = _with_memo(memory, memo, 1)
        sizing = Sizing(current, current - 1, -1, 1, "scale in on headroom: " + rule)
        if not policy.move_only_what_pays:
            return full_plan(sizing, new_memory)
        return _scale_in(snapshot, arrays, policy, health, sizing, new_memory)
    if not policy.move_only_what_pays:
        sizing = Sizing(current, current, 0, 1, "no node overloaded: rebalance only")
        return full_plan(sizing, _with_memo(memory, memo, 1))
    return hold("nothing_pays", "size unchanged and no node overloaded"
                + ("" if may_remove else f" ({rule if policy.scale_in_on_headroom else 'no scale-in'})"),
                next_step=1)


def _costs(arrays: SnapshotArrays, policy: PolicyConfig) -> tuple[np.ndarray, np.ndarray]:
    """Each active node's utilisation and each partition's share of it (its requests' part of
    its node's utilisation): the bottleneck, CPU or disk, in one unit. A node with
    utilisation but no requests spreads it evenly over its partitions."""
    util = np.array([utilisation(n.metrics.cpu, n.metrics.io_wait, policy)
                     if n.metrics is not None else 0.0 for n in arrays.active])
    loads = _node_loads(arrays)
    on = arrays.node_of >= 0
    counts = np.bincount(arrays.node_of[on], minlength=len(arrays.active))
    cost = np.zeros(len(arrays.ids))
    src = arrays.node_of[on]
    # The partition's fraction of its node's requests times the node's utilisation, in this
    # order: util / load first overflows for a node whose load is a few requests per century.
    share = np.divide(arrays.load[on], loads[src], out=np.zeros(len(src)), where=loads[src] > 0)
    even = np.divide(util, counts, out=np.zeros_like(util), where=counts > 0)
    cost[on] = np.where(loads[src] > 0, share * util[src], even[src])
    return util, cost


def move_pays(policy: PolicyConfig, w: float, size_mb: float, source: float,
              dest: float, wait_s: float = 0.0) -> tuple[bool, float, float]:
    """Whether moving a partition with utilisation share `w` and `size_mb` of data from a node at
    `source` to one at `dest` pays: (pays, relief, cost), relief the load it takes off the
    hotter of the two (what the hot node sheds, less what the destination rises above it)
    over what is left of move_payback_s once the destination has taken in the `wait_s` seconds
    of data this plan already sends it, cost its share served cold while its data comes back
    plus its offline time, both in node-seconds."""
    relief = float(move_relief(policy, w, source, dest, wait_s))
    cost = w * (size_mb / policy.move_mb_s + policy.move_offline_s)
    return relief > 0 and relief > cost, relief, cost


def move_relief(policy: PolicyConfig, w: float, source: float, dest, wait_s):
    """move_pays' relief in node-seconds; `dest` and `wait_s` may be arrays (one per candidate
    destination)."""
    return (source - np.maximum(source - w, dest + w)) * np.maximum(policy.move_payback_s - wait_s,
                                                                    0.0)


def _greedy_moves(arrays: SnapshotArrays, loads: np.ndarray, sources: list[int],
                  dest: list[int], target_load: float, cap: float, policy: PolicyConfig,
                  cost: np.ndarray | None = None,
                  stay: frozenset[str] = frozenset(),
                  waking: np.ndarray | None = None) -> tuple[list[tuple[int, int, str]], np.ndarray]:
    """Move partitions off `sources` (heaviest node first; per node, its largest partitions
    that fit first; idle partitions and those in `stay` never) while the source stays above
    `target_load`, each onto the least loaded node of `dest` if it stays at or under `cap`,
    with move_gain_vs_cost only when that pays (move_pays), else onto the node where it takes
    most off the hot node soonest if that pays. Returns (partition, destination index, why) and the loads
    after."""
    loads = loads.copy()
    cost = arrays.load if cost is None else cost
    moves: list[tuple[int, int, str]] = []
    # Seconds of data each destination already takes in from this plan's earlier moves: one
    # node reads (or is streamed) its new partitions' data at move_mb_s in all, so the tenth
    # 3 GB region sent to a new node starts relieving its source 20 minutes later.
    intake_s = np.zeros(len(loads))
    # (`waking`: idle now, but expected to carry load: a predicted peak's partitions)
    busy = np.flatnonzero(((arrays.load > 0) if waking is None else (arrays.load > 0) | waking)
                          & (cost > 0))
    if stay:
        busy = busy[[arrays.ids[p] not in stay for p in busy.tolist()]]
    dest_ix = np.asarray(dest, dtype=np.int64)
    heap = [(float(loads[i]), i) for i in dest]  # the least loaded destination, cheaply
    heapq.heapify(heap)
    # Heaviest first; a saturated CPU reads 1.0 however far demand is over it, so among equal
    # utilisations the node asked for more requests goes first.
    requests = np.bincount(arrays.node_of[arrays.node_of >= 0],
                           weights=arrays.load[arrays.node_of >= 0], minlength=len(loads))
    for s in sorted(sources, key=lambda i: (-loads[i], -requests[i])):
        mine = busy[arrays.node_of[busy] == s]
        for p in mine[np.argsort(-cost[mine], kind="stable")].tolist():
            if loads[s] <= target_load:
                break
            w = float(cost[p])
            while heap and heap[0][0] != loads[heap[0][1]]:  # stale entry
                _, i = heapq.heappop(heap)
                heapq.heappush(heap, (float(loads[i]), i))
            least = heap[0][0]
            # A move pays only when it lowers the hotter of the two nodes...
            if least + w > cap or least + w >= loads[s]:
                continue  # not even the least loaded node has room
            d = heap[0][1]
            why = ""
            if policy.move_gain_vs_cost:
                # ...and, weighed, when what it takes off the hot node outweighs its warm-up.
                size = float(arrays.size_mb[p])
                pays, relief, spent = move_pays(policy, w, size, float(loads[s]), float(loads[d]),
                                                wait_s=float(intake_s[d]))
                if not pays and intake_s[d] > 0 and \
                        policy.move_payback_s > size / policy.move_mb_s + policy.move_offline_s:
                    # The least loaded node's intake queue is long (a few hundred small
                    # partitions would all go to it and queue for hours): the node where it
                    # relieves most soonest instead, if that pays and leaves that node under
                    # the overload mark (moving load onto a node overloaded itself only moves
                    # the overload).
                    d_load = loads[dest_ix]
                    fits = (d_load + w <= cap) & (d_load + w < loads[s]) & (d_load + w < 1.0)
                    if not fits.any():
                        continue
                    relief_at = np.where(fits, move_relief(policy, w, float(loads[s]), d_load,
                                                           intake_s[dest_ix]), -np.inf)
                    best = np.flatnonzero(relief_at >= relief_at.max() * (1 - 1e-9))
                    d = int(dest_ix[best[int(np.argmin(d_load[best]))]])  # ties: least loaded
                    pays, relief, spent = move_pays(policy, w, size, float(loads[s]),
                                                    float(loads[d]), wait_s=float(intake_s[d]))
                if not pays:
                    continue
                queued = (f", after {intake_s[d]:.0f} s of this plan's earlier data to its node"
                          if intake_s[d] >= 1 else "")
                why = (f"; takes {relief:.0f} node-s off the hot node over move_payback_s "
                       f"{policy.move_payback_s:g}{queued} > {spent:.0f} node-s of warm-up and "
                       f"offline time ({size:.0f} MiB)")
                intake_s[d] += size / policy.move_mb_s
            moves.append((p, d, why))
            loads[s] -= w
            loads[d] += w
            heapq.heappush(heap, (float(loads[d]), d))
    return moves, loads


def _plan(snapshot: ClusterSnapshot, arrays: SnapshotArrays, policy: PolicyConfig,
          health: Health, sizing: Sizing,
          memory: DecisionMemory, node_ids: list[str], profiles: list[str],
          moves: list[tuple[int, int, str]], cause: str, reason_word: str,
          launches: list[Action], removed: str | None) -> Plan:
    actions = list(launches)
    limit = policy.move_limit(len(arrays.ids))
    dropped = 0
    if limit is not None and len(moves) > limit:
        dropped = len(moves) - limit  # the least valuable are last: kept where they are
        moves = moves[:limit]
        removed = None  # a node that keeps partitions is not removed
    final = arrays.node_of.copy()
    for p, d, why in moves:
        actions.append(Action(op="move", partition=arrays.ids[p], source=arrays.current[p],
                              target=node_ids[d], cause=cause, reason=reason_word + why))
        final[p] = d
    terminations = 0
    if removed is not None:
        actions.append(Action(op="drain", node=removed, cause="scale_in",
                              reason="scale in: the least loaded node, its partitions moved off"))
        actions.append(Action(op="terminate", node=removed, cause="scale_in",
                              reason="scale in: drained, all partitions moved off"))
        terminations = 1
    placed = final >= 0
    loads = np.bincount(final[placed], weights=arrays.load[placed], minlength=len(node_ids))
    members: dict[str, list[str]] = {node_ids[i]: [] for i in range(len(node_ids))}
    extra_load: dict[str, float] = {}
    for p, d in enumerate(final.tolist()):
        if d >= 0:
            members[node_ids[d]].append(arrays.ids[p])
        else:  # on a node that is not active: it stays there (the executor drains those)
            nid = arrays.current[p]
            members.setdefault(nid, []).append(arrays.ids[p])
            extra_load[nid] = extra_load.get(nid, 0.0) + float(arrays.load[p])
    keep = [i for i, nid in enumerate(node_ids) if nid != removed]
    profile_of = {n.id: n.profile for n in snapshot.nodes}
    assignment = tuple(NodeAssignment(node_ids[i], profiles[i], tuple(members[node_ids[i]]),
                                      float(loads[i])) for i in keep) + tuple(
        NodeAssignment(nid, profile_of.get(nid, "default"), tuple(members[nid]), load)
        for nid, load in extra_load.items())
    summary = Summary(moves=len(moves), reconfigurations=0, launches=len(launches),
                      terminations=terminations, max_load_ratio=load_ratio(loads[keep]),
                      moves_dropped=dropped)
    return Plan(policy="met", health=health, sizing=sizing,
                groups=_groups(arrays, policy, assignment), assignment=assignment,
                actions=tuple(actions), summary=summary, memory=memory, reason=sizing.reason)


def _scale_out(snapshot: ClusterSnapshot, arrays: SnapshotArrays, policy: PolicyConfig,
               health: Health, sizing: Sizing, memory: DecisionMemory,
               spread: bool = False, expected: dict[int, float] | None = None) -> Plan | None:
    current = len(arrays.active)
    k = sizing.target - current
    loads = np.concatenate([_node_loads(arrays), np.zeros(k)])
    ids = [n.id for n in arrays.active] + [f"new-{j + 1}" for j in range(k)]
    # A new node takes the profile most of the cluster's load is served with.
    by_profile: dict[str, float] = {}
    for n, load in zip(arrays.active, loads.tolist()):
        by_profile[n.profile] = by_profile.get(n.profile, 0.0) + load
    profile = max(sorted(by_profile), key=lambda p: by_profile[p]) if by_profile else "default"
    profiles = [n.profile for n in arrays.active] + [profile] * k
    if policy.data_placement == "store":
        # the store streams each new node its share as it joins: nothing for metctl to move
        launches = [Action(op="launch", node=ids[current + j], profile=profile, cause="scale_out",
                           reason=f"scale out: new {profile} node {j + 1} of {k}; the data store "
                           "gives it its share of the data as it joins") for j in range(k)]
        return _plan(snapshot, arrays, policy, health, sizing, memory, ids, profiles, [],
                     "scale_out", "", launches, None)
    util, cost = _costs(arrays, policy)
    if expected:
        # Ahead of a predicted load: each partition the last cycle's peak woke weighs what it
        # weighed then, and its node carries that.
        at = np.fromiter(expected, np.int64, len(expected))
        then = np.maximum(np.fromiter(expected.values(), np.float64, len(expected)), cost[at])
        on = arrays.node_of[at] >= 0
        util = util + np.bincount(arrays.node_of[at][on], weights=(then - cost[at])[on],
                                  minlength=len(util))
        cost = cost.copy()
        cost[at] = then
    util = np.concatenate([util, np.zeros(k)])
    mean = float(util.sum()) / max(sizing.target, 1)
    if spread:  # ahead of a predicted load: off every node above the mean the new ones leave
        sources = [i for i in range(current) if util[i] > mean]
    else:
        sources = [i for i in range(current) if util[i] >= 1.0] or \
            ([int(np.argmax(util[:current]))] if current else [])
    waking = None
    if expected:
        waking = np.zeros(len(arrays.ids), dtype=bool)
        waking[list(expected)] = True
    moves, _ = _greedy_moves(arrays, util, sources, list(range(current + k)),
                             target_load=mean, cap=max(mean, policy.target_utilisation),
                             policy=policy, cost=cost, waking=waking)
    if spread:
        moves += _idle_by_count(arrays, cost, moves, current + k, range(current, current + k))
    # A new node that would receive nothing is not launched: it would cost without serving.
    used = sorted({d for _, d, _ in moves if d >= current})
    if not used:
        return None
    renumber = {d: current + j for j, d in enumerate(used)}
    moves = [(p, renumber.get(d, d), why) for p, d, why in moves]
    k = len(used)
    ids = ids[:current + k]
    profiles = profiles[:current + k]
    sizing = replace(sizing, target=current + k, delta=k,
                     reason=sizing.reason + (f"; {k} new node(s) receive partitions"
                                             if k < sizing.delta else ""))
    launches = [Action(op="launch", node=ids[current + j], profile=profile, cause="scale_out",
                       reason=f"scale out: new {profile} node {j + 1} of {k}") for j in range(k)]
    return _plan(snapshot, arrays, policy, health, sizing, memory, ids, profiles, moves, "scale_out",
                 "moves to a new node ahead of the load the last cycle brought now "
                 "(predicted scale out)" if spread else
                 "moves off an overloaded node (scale out)", launches, None)


def _idle_by_count(arrays: SnapshotArrays, cost: np.ndarray, moves: list[tuple[int, int, str]],
                   nodes: int, new: range) -> list[tuple[int, int, str]]:
    """Ahead of a predicted load, the idle partitions the last cycle did not see wake may wake
    too (they weigh nothing now): give each new node its share of the partition count in them,
    taken from the nodes holding most, as HBase's own balancer evens counts."""
    where = arrays.node_of.copy()
    for p, d, _ in moves:
        where[p] = d
    count = np.bincount(where[where >= 0], minlength=nodes)
    moved = {p for p, _, _ in moves}
    idle: dict[int, list[int]] = {}
    for p in np.flatnonzero((where >= 0) & (arrays.load <= 0) & (cost <= 0)).tolist():
        if p not in moved:
            idle.setdefault(int(where[p]), []).append(p)
    share = int(count.sum()) // max(nodes, 1)
    out = []
    for d in new:
        while count[d] < share:
            donors = [i for i in idle if idle[i] and count[i] > share]
            if not donors:
                return out
            s = max(donors, key=lambda i: (count[i], -i))
            out.append((idle[s].pop(), d, "; idle now, spread by count ahead of the predicted load"))
            count[s] -= 1
            count[d] += 1
    return out


def _predicted_scale_out(snapshot: ClusterSnapshot, arrays: SnapshotArrays, policy: PolicyConfig,
                         health: Health, memory: DecisionMemory, memo: dict[str, float],
                         step: int, prediction: Prediction) -> Plan | None:
    """Scale out ahead of a load the last cycle brought at this time: toward the nodes it asked
    for (at most doubling), the new nodes taking the partitions that load woke (weighed as they
    were then) off the nodes above the mean they leave. Not judged by verify_after_acting (the
    load has not come yet); None when no move pays."""
    current = len(arrays.active)
    # The size is one the load asked for before, not an estimate MET's step must feel its way
    # to; at most doubling the cluster in one decision all the same. The step is left as it
    # is: a reactive scale-out after this one starts small.
    target = min(prediction.nodes, 2 * current, policy.max_nodes)
    now = snapshot.taken_at.timestamp()
    earlier = memo.get(LAST_ACTION_AT)
    memo[LAST_ACTION_AT] = now
    sizing = Sizing(current, target, target - current, step, (
        f"predicted scale-out: at this time of the last cycle (predict_cycle_s "
        f"{policy.predict_cycle_s:g}) the load asked for {prediction.nodes} nodes from "
        f"{prediction.starts_in_s:.0f} s from now; adding {target - current} now (predict_lead_s "
        f"{policy.predict_lead_s:g}: boot and warm-up; at most doubling)"))
    woke = expected_hot(memo, now, policy)
    plan = _scale_out(snapshot, arrays, policy, health, sizing,
                      _with_memo(memory, memo, step), spread=True,
                      expected={i: woke[pid] for i, pid in enumerate(arrays.ids) if pid in woke})
    if plan is None:
        if earlier is None:
            memo.pop(LAST_ACTION_AT)
        else:
            memo[LAST_ACTION_AT] = earlier
    return plan


def _rebalance(snapshot: ClusterSnapshot, arrays: SnapshotArrays, policy: PolicyConfig,
               health: Health, memory: DecisionMemory, memo: dict[str, float], step: int,
               needs: list[Diagnosis], why: str, stay: frozenset[str] = frozenset()) -> Plan | None:
    """Size unchanged but a node overloaded: move its partitions (not those in `stay`: being
    split) to nodes with room, if that brings it under the mean-plus-headroom; None when nothing
    fits (or the store places data)."""
    if policy.data_placement == "store":
        return None
    util, cost = _costs(arrays, policy)
    if util.sum() <= 0:
        return None
    mean = float(util.mean())
    hot = {d.node for d in needs}
    sources = [i for i, n in enumerate(arrays.active) if n.id in hot]
    # Room: a destination stays under the overload mark's target_utilisation.
    moves, _ = _greedy_moves(arrays, util, sources, list(range(len(arrays.active))),
                             target_load=mean, cap=max(mean, policy.target_utilisation),
                             policy=policy, cost=cost, stay=stay)
    if not moves:
        return None
    now = snapshot.taken_at.timestamp()
    memo[LAST_ACTION_AT] = now
    new_memory = _with_memo(memory, memo, step)
    current = len(arrays.active)
    sizing = Sizing(current, current, 0, step, "rebalance: " + why + "; "
                    "moving partitions off the overloaded node(s) only")
    return _plan(snapshot, arrays, policy, health, sizing, new_memory, [n.id for n in arrays.active],
                 [n.profile for n in arrays.active], moves, "rebalance",
                 "moves off an overloaded node to one with room (rebalance)", [], None)


def _hot_splits(snapshot: ClusterSnapshot, arrays: SnapshotArrays, policy: PolicyConfig,
                memo: dict[str, float], hot: list[Diagnosis]) -> tuple[list[Action], list[str]]:
    """A split of the busiest partition of each node one partition overloads, and why a table
    is not split (its last split left one half with the load); records the splits in memo."""
    now = snapshot.taken_at.timestamp()
    index = {n.id: i for i, n in enumerate(arrays.active)}
    actions, refused = [], []
    for d in hot:
        mine = np.flatnonzero(arrays.node_of == index[d.node])
        if mine.size == 0:
            continue
        p = int(mine[np.argmax(arrays.load[mine])])
        table, load = arrays.partitions[p].table, float(arrays.load[p])
        last, at = memo.get(SPLIT_LOAD + table), memo.get(SPLIT_AT + table, -math.inf)
        kept = last is not None and load >= policy.resplit_load_fraction * last
        streak = memo.get(SPLIT_STREAK + table, 0.0) + 1 if kept else 0.0
        if streak >= policy.resplit_tries and now - at < policy.resplit_after_s:
            refused.append(f"{table} not split again: after {streak - 1:.0f} split(s) in a row "
                           f"its hottest partition still serves {load:.0f}/s of the {last:.0f}/s "
                           "the last split partition served (keys that do not spread, e.g. "
                           "ordered inserts)")
            continue
        if kept and now - at >= policy.resplit_after_s:
            streak = 0.0  # left alone long enough: its workload may have changed
        memo[SPLIT_LOAD + table], memo[SPLIT_AT + table] = load, now
        memo[SPLIT_STREAK + table] = streak
        actions.append(Action(op="split", node=d.node, partition=arrays.ids[p],
                              cause="hot_partition", reason=(
                                  f"split ({load:.0f} requests/s): {d.reason}; "
                                  "as two halves, one can move away")))
    return actions, refused


def _with_splits(plan: Plan | None, splits: list[Action], why: str, snapshot: ClusterSnapshot,
                 arrays: SnapshotArrays, policy: PolicyConfig, health: Health,
                 memory: DecisionMemory, memo: dict[str, float], step: int) -> Plan:
    """`plan` (or a hold) with the splits in front (the plan moves none of them: `stay`)."""
    memo[LAST_ACTION_AT] = snapshot.taken_at.timestamp()
    if plan is None:
        plan = _hold(policy, snapshot, arrays, health, _with_memo(memory, memo, step), "split", "")
        plan = replace(plan, sizing=replace(plan.sizing, reason="split: " + why))
    else:
        plan = replace(plan, memory=_with_memo(memory, memo, step))
    reason = f"{plan.sizing.reason}; split {len(splits)} hot partition(s)"
    return replace(plan, actions=tuple(splits) + plan.actions, reason=reason,
                   sizing=replace(plan.sizing, reason=reason),
                   summary=replace(plan.summary, splits=len(splits)))


def _scale_in(snapshot: ClusterSnapshot, arrays: SnapshotArrays, policy: PolicyConfig,
              health: Health, sizing: Sizing, memory: DecisionMemory) -> Plan:
    """Remove the least utilised node; its busy partitions go, largest first, to the least
    utilised of the rest (in the removed node's utilisation units), its idle ones each to the
    node holding fewest partitions (by utilisation they weigh nothing: all would land on one
    node, which takes all their load when they wake; HBase's own balancer evens counts)."""
    util, cost = _costs(arrays, policy)
    loads = _node_loads(arrays)
    current = len(arrays.active)
    gone = int(np.lexsort((np.arange(current), loads, util))[0])
    rest = [i for i in range(current) if i != gone]
    mine = np.flatnonzero(arrays.node_of == gone)
    mine = mine[np.lexsort((mine, -arrays.load[mine], -cost[mine]))]
    after = util.copy()
    moves = []
    heap = [(float(after[i]), i) for i in rest]
    heapq.heapify(heap)
    if policy.data_placement == "store":
        mine = mine[:0]  # a store that places its data streams the removed node's share itself
    idle = (arrays.load[mine] <= 0) & (cost[mine] <= 0)
    for p in mine[~idle].tolist():
        _, d = heapq.heappop(heap)
        moves.append((p, d, ""))
        after[d] += cost[p]
        heapq.heappush(heap, (float(after[d]), d))
    count = np.bincount(arrays.node_of[arrays.node_of >= 0], minlength=current)
    for _, d, _ in moves:
        count[d] += 1
    fewest = [(int(count[i]), float(after[i]), i) for i in rest]
    heapq.heapify(fewest)
    for p in mine[idle].tolist():
        n, u, d = heapq.heappop(fewest)
        moves.append((p, d, ""))
        heapq.heappush(fewest, (n + 1, u, d))
    ids = [n.id for n in arrays.active]
    return _plan(snapshot, arrays, policy, health, sizing, memory, ids,
                 [n.profile for n in arrays.active], moves, "scale_in",
                 "moves off the node being removed (scale in)", [], ids[gone])


__all__ = ["Diagnosis", "diagnose", "decide_guarded", "scale_out_ceiling", "utilisation"]
