"""The store's operations on a simulated cluster and the events that end them: a region opens,
closes for a move, is copied (transfer modes), compacted or split; a server restarts with a
profile, is decommissioned or dies; a VM is launched or terminated. Each operation only starts
(what a data-store driver call does); `fire_events` completes what is due at the cluster's time.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from actuator.drivers import TAG_MANAGED
from simulator import balancer
from simulator.background import Transfer
from simulator.nodes import SimNode, advance_lifecycle

if TYPE_CHECKING:  # the facade whose state these functions change
    from simulator.cluster import SimCluster


def open_region(cl: "SimCluster", r: int, node: int, *, locality: float) -> None:
    reg = cl.regions
    reg.server[r] = node
    reg.assigned[r] = node
    reg.open_target[r] = -1
    reg.locality[r] = locality
    if locality >= 1.0:
        reg.home[r] = node
    # HBase counters restart at 0 when a region opens on a server (REAL).
    reg.reads[r] = reg.writes[r] = reg.scans[r] = 0.0
    cl.invalidate_cache()  # placement changed: recompute cache shares now
    if reg.refs[r] and cl.compactions.get(r, (-1, 0.0))[0] != node:
        # A region opened with reference files (a split daughter, here or after a move) is
        # compacted at once: HRegionServer.postOpenDeployTasks requests a compaction of
        # every store that hasReferences(). The rewrite reads and writes its data.
        cl.compactions[r] = (node, float(reg.size[r]))


def opened_cold(cl: "SimCluster", r: int, node: int) -> None:
    """Region r opens on `node` with nothing of it in the block cache (a move, a reopen after a
    restart or a failover, a split's daughter). A node whose profile prefetches on open reads
    the region's files into its cache now (HFileReaderImpl's prefetch on open)."""
    reg = cl.regions
    reg.opened_at[r] = cl.t
    reg.prefetched[r] = 0.0
    if cl.settings.profiles[cl.nodes[node].profile].prefetch_on_open:
        cl.background.start_prefetch(r, node, float(reg.size[r]))


def close_for_move(cl: "SimCluster", r: int, target: int, delay: float) -> None:
    reg = cl.regions
    reg.server[r] = -1
    reg.assigned[r] = -1
    reg.open_target[r] = target
    reg.open_at[r] = cl.t + delay


def locality_on(cl: "SimCluster", r: int, node: int) -> float:
    """Share of region r's blocks on `node`'s disk when it opens there without a copy: all
    at its home; none on a node that joined after the data was written (it was loaded before
    the run; a compaction rewrites it and moves its home); else the other replicas spread
    over the nodes that were up when it was written."""
    if cl.regions.home[r] == node:
        return 1.0
    target = cl.nodes[node]
    if target.joined > 0:
        return 0.0  # joined after the data was written (before the run): holds none of it
    others = max(1, cl.regions.written_at_nodes[r] - 1)
    return min(1.0, (cl.settings.hardware.replication - 1) / others)


def move(cl: "SimCluster", r: int, target: int) -> None:
    """Start moving region r to node index `target` (already validated)."""
    a = cl.settings.actions
    reg = cl.regions
    if reg.assigned[r] == target or reg.open_target[r] == target:
        return
    if cl.background.moving(r) or r in cl.splits:
        return
    src = reg.server[r]
    if cl.transfer_mode == "none" or src < 0:
        close_for_move(cl, r, target, a.move_s)
        cl.log("move", f"{reg.ids[r][:8]} -> {cl.nodes[target].host}")
        return
    batch = cl.transfer_mode == "parallel"
    cl.background.transfers.append(Transfer(r, int(src), target, float(reg.size[r]), batch))
    if batch:
        reg.assigned[r] = target  # ownership announced at once (pending ranges)
    else:
        reg.assigned[r] = -1  # in transition until its copy arrives
    cl.log("transfer", f"{reg.ids[r][:8]} {cl.nodes[src].host} -> {cl.nodes[target].host} "
           f"({reg.size[r]:.0f} MiB)")


def finish_transfer(cl: "SimCluster", tr: Transfer) -> None:
    """A copy arrived: the region closes on its source and opens on the target, local there;
    a target that is gone leaves it where it was."""
    r = tr.region
    reg = cl.regions
    if cl.nodes[tr.target].rs_state != "active":
        reg.assigned[r] = reg.server[r]
        return
    reg.locality[r] = 1.0
    reg.home[r] = tr.target
    close_for_move(cl, r, tr.target, cl.settings.actions.move_s)
    cl.log("move", f"{reg.ids[r][:8]} -> {cl.nodes[tr.target].host} (copied)")


def restart(cl: "SimCluster", node: SimNode, profile: str) -> None:
    a = cl.settings.actions
    node.rs_state = "restarting"
    node.dropped = 0.0  # a restarted server's counters start again from 0
    node.pending_profile = profile
    node.rs_ready_at = cl.t + a.restart_stop_s + a.restart_start_s
    for r in np.where(cl.regions.server == node.index)[0]:
        close_for_move(cl, int(r), node.index, a.restart_stop_s + a.restart_start_s)
    cl.log("restart", f"{node.host} -> {profile}")


def compact(cl: "SimCluster", r: int) -> None:
    reg = cl.regions
    if r in cl.compactions or reg.server[r] < 0:
        return
    cl.compactions[r] = (int(reg.server[r]), float(reg.size[r]))
    cl.log("compact", f"{reg.ids[r][:8]} on {cl.nodes[reg.server[r]].host}")


def split(cl: "SimCluster", r: int) -> None:
    """Start splitting region r in two on its server (validated by the caller: served, no
    reference files, not moving). HBase reference guide, "RegionServer Splitting
    Implementation": the parent goes offline, its memstore is flushed, the daughters get
    reference files to the parent's store files and open on the same server; requests wait
    meanwhile (`split_offline_s`). The split takes effect then (finish_split)."""
    node = int(cl.regions.server[r])
    if r in cl.splits or node < 0 or cl.background.moving(r):
        return
    cl.splits[r] = node
    close_for_move(cl, r, node, cl.settings.actions.split_offline_s)
    cl.log("split", f"{cl.regions.ids[r][:8]} on {cl.nodes[node].host}")


def finish_split(cl: "SimCluster", r: int, node: int) -> None:
    """Replace region r by its two daughters, both on `node` (Regions.split: r becomes the left
    one, the right one is appended)."""
    reg = cl.regions
    parent = reg.ids[r]
    total = float(reg.size[r])
    b = reg.split(r, cl.scenario.workloads[int(reg.cls[r])], cl.rng)
    # Same server, same HDFS files (reference files point at the parent's): locality stays.
    # Block cache: the daughters start cold. HBase keys cached blocks by file name and
    # offset; reads through a reference file were cached under the reference's path, and
    # since HBASE-27474 the parent's blocks are evicted when it splits (both described in
    # HBASE-28596) — assumption: no block the parent had cached serves a daughter. The
    # page cache holds file pages, and the daughters read the parent's files on the same
    # machine: it stays as warm as it was (page_since is the parent's, copied).
    loc = float(reg.locality[r])
    for d in (r, b):
        reg.refs[d] = True  # open_region starts the compaction that rewrites them
        opened_cold(cl, d, node)
        open_region(cl, d, node, locality=loc)  # counters start at 0, as for any region opening
    cl.split_parents[parent] = (reg.ids[r], reg.ids[b])
    cl.log("split_done", f"{parent[:8]} -> {reg.ids[r][:8]} + {reg.ids[b][:8]} "
           f"on {cl.nodes[node].host} ({total:.0f} MiB)")


def decommission(cl: "SimCluster", node: SimNode) -> None:
    if node.rs_state in ("stopping", "stopped", "absent"):
        return
    a = cl.settings.actions
    reg = cl.regions
    node.rs_state = "stopping"
    node.stop_at = cl.t + a.decommission_s
    others = [n.index for n in cl.serving_nodes() if n.index != node.index]
    for r in np.where((reg.server == node.index) | (reg.open_target == node.index))[0]:
        if not others:
            break
        close_for_move(cl, int(r), balancer.fewest_regions(reg.assigned, others), a.move_s)
    cl.log("decommission", node.host)


def launch(cl: "SimCluster", profile: str, tags: dict[str, str]) -> SimNode:
    node = cl.add_node(profile, managed=tags.get(TAG_MANAGED) == "true", boot=True, tags=tags)
    cl.log("launch", f"{node.instance_id} ({profile})")
    return node


def terminate(cl: "SimCluster", node: SimNode) -> None:
    if node.vm_state in ("stopping", "terminated"):
        return
    node.vm_state = "stopping"
    node.terminate_at = cl.t + cl.settings.actions.terminate_s
    if node.rs_state in ("active", "restarting"):
        # Died with regions: they reopen elsewhere after the ZooKeeper session timeout.
        node.rs_state = "stopped"
        reg = cl.regions
        for r in np.where((reg.server == node.index) | (reg.open_target == node.index))[0]:
            close_for_move(cl, int(r), -2, cl.settings.actions.failover_s)
    node.rs_state = "stopped" if node.rs_state != "absent" else "absent"
    cl.log("terminate", node.instance_id)


def fire_events(cl: "SimCluster") -> bool:
    """Complete what is due at the cluster's time: node transitions, splits whose offline time
    is over, regions whose move or reopen is due. Returns whether a RegionServer joined."""
    joined_now = advance_lifecycle(cl.nodes, cl.t, cl.log)
    # Splits whose parent's offline time is over (finish_split). A split whose parent was
    # sent elsewhere meanwhile (its server died or was decommissioned) is dropped: the
    # parent reopens whole, as a move.
    reg = cl.regions
    for r, node in list(cl.splits.items()):
        if reg.server[r] >= 0 or reg.open_target[r] != node:
            del cl.splits[r]
            cl.log("split_abandoned", reg.ids[r][:8])
        elif cl.t >= reg.open_at[r] and cl.nodes[node].rs_state == "active":
            del cl.splits[r]
            finish_split(cl, r, node)
    # Regions whose move or reopen is due.
    due = np.where((reg.server < 0) & (reg.open_at <= cl.t) & (reg.open_target != -1))[0]
    for r in due:
        tgt = int(reg.open_target[r])
        if tgt >= 0 and cl.nodes[tgt].rs_state == "active":
            loc = locality_on(cl, int(r), tgt) if cl.transfer_mode == "none" else reg.locality[r]
            reg.page_since[r] = cl.t
            opened_cold(cl, int(r), tgt)
            open_region(cl, int(r), tgt, locality=loc)
        elif tgt >= 0 and cl.nodes[tgt].rs_state == "restarting":
            continue  # opens when the restart ends
        else:
            live = [n.index for n in cl.serving_nodes()]
            if not live:
                continue
            node = balancer.fewest_regions(reg.assigned, live)
            reg.page_since[r] = cl.t
            opened_cold(cl, int(r), node)
            open_region(cl, int(r), node, locality=locality_on(cl, int(r), node))
    return joined_now
