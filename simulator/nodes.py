"""The simulated machines: one VM per node with (once it joined) a RegionServer, their
lifecycle states and the timed transitions between them (boot, join, restart, stop,
terminate), and the log of what happened (`Event`)."""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Callable

RS_PORT = 16020


@dataclass
class SimNode:
    """One VM with (once it joined) a RegionServer."""

    index: int
    instance_id: str
    host: str
    profile: str
    managed: bool
    tags: dict[str, str]
    launched_at: float
    running_at: float  # VM running from this time
    join_at: float  # RegionServer counted by the master from this time
    vm_state: str = "booting"  # booting | running | stopping | terminated
    rs_state: str = "absent"  # absent | active | restarting | stopping | stopped
    rs_ready_at: float = math.inf  # when a restart ends
    pending_profile: str | None = None
    terminate_at: float = math.inf
    stop_at: float = math.inf
    joined: float = math.inf  # when the RegionServer first served
    cpu_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    io_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    mem_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    # mean time a request spends in this RegionServer (queues, service, remote reads), ms
    lat_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    # open requests waiting for it (HBase's call queue), one entry per step
    queue_hist: deque = field(default_factory=lambda: deque(maxlen=15))
    # calls that timed out waiting for it since its RegionServer started (HBase's
    # exceptions.callTimedOut counter; 0 again after a restart)
    dropped: float = 0.0

    @property
    def server_id(self) -> str:
        return f"{self.host},{RS_PORT}"


@dataclass
class Event:
    """Something the simulation records (for the report and the live view)."""

    t: float
    kind: str
    detail: str


def new_node(index: int, counter: int, profile: str, *, managed: bool, tags: dict[str, str],
             t: float, boot_s: float, join_s: float, window: int) -> SimNode:
    """A node launched at t: running after boot_s, its RegionServer counted join_s later; its
    host metrics are averaged over `window` steps (gmond's window)."""
    running = t + boot_s
    node = SimNode(index=index, instance_id=f"sim-i-{counter:04d}", host=f"rs{counter}.sim",
                   profile=profile, managed=managed, tags=tags, launched_at=t, running_at=running,
                   join_at=running + join_s)
    node.cpu_hist, node.io_hist, node.mem_hist = deque(maxlen=window), deque(maxlen=window), deque(maxlen=window)
    node.lat_hist = deque(maxlen=window)
    node.queue_hist = deque(maxlen=window)
    return node


def advance_lifecycle(nodes: list[SimNode], t: float, log: Callable[[str, str], None]) -> bool:
    """Fire the transitions due at t; return whether a RegionServer joined."""
    joined_now = False
    for n in nodes:
        if n.vm_state == "booting" and t >= n.running_at:
            n.vm_state = "running"
            log("vm_running", n.instance_id)
        if n.vm_state == "running" and n.rs_state == "absent" and t >= n.join_at:
            n.rs_state, n.joined = "active", t
            joined_now = True
            log("joined", n.server_id)
        if n.rs_state == "restarting" and t >= n.rs_ready_at:
            n.rs_state = "active"
            n.profile = n.pending_profile or n.profile
            n.pending_profile = None
            log("restarted", f"{n.host} as {n.profile}")
        if n.rs_state == "stopping" and t >= n.stop_at:
            n.rs_state = "stopped"
        if n.vm_state == "stopping" and t >= n.terminate_at:
            n.vm_state = "terminated"
            log("terminated", n.instance_id)
    return joined_now
