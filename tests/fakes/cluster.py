"""An in-memory infrastructure + data-store pair for unit tests and dry runs of the executor.

`FakeCluster` holds both sides and its own clock (seconds; advanced by the test, never slept).
Every operation takes time the way a cloud and HBase do — a node is `requested`, then
`booting`, then `running`, then registers its server; a move puts the partition in transition;
a restart stops the server for a while; a compaction runs — with delays you choose, and
failures you inject: launch errors, quota errors, nodes that never boot or never join, moves
that fail N times, partitions the store moves back once after they arrived.

`effects` records every call that changed something (launch, move, split, restart, compact,
decommission, terminate, balancer) so tests can check that each happened exactly once.
With `state_file` the whole state is saved as JSON after every change and loaded at start, so a
process SIGKILLed mid-plan and a fresh one see the same cluster (the kill-point tests).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from actuator import adoption
from actuator.drivers import (
    TAG_CLUSTER, TAG_MANAGED, TAG_PROFILE, DriverError, ManagedNode, NotOwnedError,
    PartitionLocation, ServerInfo,
)
from actuator.settings import AdoptEntry


@dataclass(frozen=True)
class FakeDelays:
    """How long things take, in (fake) seconds."""

    request_s: float = 5.0  # requested -> booting
    boot_s: float = 30.0  # booting -> running
    join_s: float = 10.0  # running -> its server registered with the data store
    move_s: float = 2.0  # a partition in transition
    restart_s: float = 20.0  # a server restarting with a new profile
    compaction_s: float = 60.0
    split_s: float = 3.0  # a splitting partition is offline, then its two daughters open
    decommission_s: float = 5.0
    terminate_s: float = 5.0  # stopping -> terminated
    # A store that copies data on a move reports each partition's size (MiB); None: like HBase.
    copy_mb: float | None = None


class FakeCluster:
    def __init__(self, cluster: str = "demo", *, delays: FakeDelays = FakeDelays(),
                 state_file: str | Path | None = None, server_port: int = 16020):
        self.cluster, self.delays, self.server_port = cluster, delays, server_port
        self.state_file = Path(state_file) if state_file else None
        if self.state_file and self.state_file.exists():
            self.s = json.loads(self.state_file.read_text())
        else:
            self.s = {
                "now": 0.0, "seq": 0, "balancer": True,
                "instances": {}, "servers": {}, "partitions": {}, "compactions": {},
                "effects": [],
                # failure injection
                "launch_faults": [],  # consumed one per launch: error | quota | never_ready | never_join
                "move_faults": {},  # partition -> how many more move calls fail
                "move_back": {},  # partition -> how many more times the store moves it back after arrival
                "restart_faults": {},  # server -> how many more restart calls fail
            }
            self._save()
        self.infra = FakeInfrastructure(self)
        self.datastore = FakeDataStore(self)

    # ---------------------------------------------------------------- time and persistence
    def clock(self) -> float:
        return float(self.s["now"])

    def advance(self, dt: float) -> None:
        self.s["now"] = float(self.s["now"]) + dt
        self._save()

    def _save(self) -> None:
        if self.state_file is None:
            return
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.s))
        os.replace(tmp, self.state_file)

    def _effect(self, *what: Any) -> None:
        self.s["effects"].append(list(what))

    @property
    def effects(self) -> list[tuple[Any, ...]]:
        return [tuple(e) for e in self.s["effects"]]

    # ---------------------------------------------------------------- set-up
    def add_server(self, server_id: str, *, profile: str = "default", owned: bool = True,
                   partitions: tuple[str, ...] = (), table: str = "usertable") -> str:
        """An existing node: an instance (tagged as metctl's when `owned`) running a server."""
        host = server_id.split(",")[0]
        iid = self._new_id("i-old")
        tags = {TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile} if owned else {}
        self.s["instances"][iid] = {"profile": profile, "address": host, "tags": tags, "launched_at": -1e9,
                                    "terminated_at": None, "fault": None, "user_data": ""}
        self.s["servers"][server_id] = {"host": host, "profile": profile, "state": "active",
                                        "until": None, "next_profile": None, "instance": iid}
        for p in partitions:
            self.s["partitions"][p] = {"table": table, "server": server_id, "moving_to": None, "arrive_at": None,
                                       "prev": None}
        self._save()
        return iid

    def inject(self, *, launch: tuple[str, ...] = (), move_failures: Mapping[str, int] = {},
               move_back: Mapping[str, int] = {}, restart_failures: Mapping[str, int] = {}) -> None:
        self.s["launch_faults"].extend(launch)
        self.s["move_faults"].update(move_failures)
        self.s["move_back"].update(move_back)
        self.s["restart_faults"].update(restart_failures)
        self._save()

    def _new_id(self, prefix: str) -> str:
        self.s["seq"] += 1
        return f"{prefix}-{self.s['seq']:04d}"

    # ---------------------------------------------------------------- the world moves on
    def _instance_state(self, inst: dict[str, Any]) -> str:
        now, d = self.clock(), self.delays
        if inst["terminated_at"] is not None:
            return "terminated" if now >= inst["terminated_at"] else "stopping"
        age = now - inst["launched_at"]
        if age < d.request_s:
            return "requested"
        if inst["fault"] == "never_ready" or age < d.request_s + d.boot_s:
            return "booting"
        return "running"

    def sync(self) -> None:
        now, d, changed = self.clock(), self.delays, False
        for iid, inst in self.s["instances"].items():
            state = self._instance_state(inst)
            sid = f"{inst['address']},{self.server_port}"
            if (state == "running" and inst["fault"] != "never_join" and inst["launched_at"] > -1e9
                    and sid not in self.s["servers"] and not inst.get("joined")
                    and now - inst["launched_at"] >= d.request_s + d.boot_s + d.join_s):
                self.s["servers"][sid] = {"host": inst["address"], "profile": inst["profile"], "state": "active",
                                          "until": None, "next_profile": None, "instance": iid}
                inst["joined"] = True
                changed = True
            if state == "terminated":
                for sid2, sv in list(self.s["servers"].items()):
                    if sv["instance"] == iid:
                        lost = [p for p, part in self.s["partitions"].items() if part["server"] == sid2]
                        if lost:
                            self._effect("LOST", sid2, sorted(lost))
                        del self.s["servers"][sid2]
                        changed = True
        for sid, sv in list(self.s["servers"].items()):
            if sv["until"] is not None and now >= sv["until"]:
                if sv["state"] == "restarting":
                    sv.update(state="active", profile=sv["next_profile"], until=None, next_profile=None)
                elif sv["state"] == "draining":
                    del self.s["servers"][sid]
                changed = True
        for pid, part in list(self.s["partitions"].items()):
            if part.get("split_at") is not None and now >= part["split_at"]:
                del self.s["partitions"][pid]
                for half in ("a", "b"):
                    self.s["partitions"][f"{pid}.{half}"] = {
                        "table": part["table"], "server": part["server"], "moving_to": None,
                        "arrive_at": None, "prev": part["server"]}
                changed = True
                continue
            if part["moving_to"] is not None and now >= part["arrive_at"]:
                if part["moving_to"] not in self.s["servers"]:  # its target died meanwhile
                    self._effect("LOST", part["moving_to"], [pid])
                    part["moving_to"] = None
                    changed = True
                    continue
                part["server"], part["moving_to"] = part["moving_to"], None
                changed = True
                if self.s["move_back"].get(pid, 0) > 0 and part["prev"] in self.s["servers"]:
                    self.s["move_back"][pid] -= 1
                    part["server"] = part["prev"]  # the store's own balancer undid the move
        if changed:
            self._save()


class FakeInfrastructure:
    """InfrastructureDriver over a FakeCluster."""

    def __init__(self, world: FakeCluster):
        self.w = world
        self.adopt: tuple[AdoptEntry, ...] = ()  # infrastructure.adopt, as a test sets it

    def _owned(self, iid: str, inst: Mapping[str, Any]) -> bool:
        return adoption.owned(self.adopt, self.w.cluster, instance_id=iid, address=inst["address"],
                              tags=inst["tags"])

    def launch(self, profile: str, user_data: str, tags: Mapping[str, str]) -> str:
        w = self.w
        w.sync()
        fault = w.s["launch_faults"].pop(0) if w.s["launch_faults"] else None
        if fault == "error":
            w._save()
            raise DriverError("InsufficientInstanceCapacity: try again later")
        if fault == "quota":
            w._save()
            raise DriverError("quota exceeded for instances", retryable=False)
        iid = w._new_id("i-new")
        address = f"10.0.0.{w.s['seq']}"
        w.s["instances"][iid] = {"profile": profile, "address": address, "tags": dict(tags),
                                 "launched_at": w.clock(), "terminated_at": None, "fault": fault,
                                 "user_data": user_data}
        w._effect("launch", iid, dict(tags).get("metctl:launch"))
        w._save()
        return iid

    def nodes(self) -> list[ManagedNode]:
        w = self.w
        w.sync()
        out = []
        for iid, inst in w.s["instances"].items():
            tags = inst["tags"]
            if not self._owned(iid, inst):
                continue
            state = w._instance_state(inst)
            if state == "terminated":
                continue
            out.append(ManagedNode(instance_id=iid, state=state, profile=inst["profile"],
                                   address=inst["address"] if state in ("running", "stopping") else None,
                                   launched_at=inst["launched_at"], tags=dict(tags),
                                   adopted=not adoption.launched_here(tags, w.cluster)))
        return out

    def terminate(self, instance_id: str) -> None:
        w = self.w
        w.sync()
        inst = w.s["instances"].get(instance_id)
        if inst is None:
            raise DriverError(f"no instance {instance_id}", retryable=False)
        if not self._owned(instance_id, inst):
            raise NotOwnedError(adoption.not_owned(f"instance {instance_id}", w.cluster))
        if inst["terminated_at"] is None:
            inst["terminated_at"] = w.clock() + w.delays.terminate_s
            w._effect("terminate", instance_id)
            w._save()

    def user_data(self, instance_id: str) -> str:
        return self.w.s["instances"][instance_id]["user_data"]


class FakeDataStore:
    """DataStoreDriver over a FakeCluster."""

    def __init__(self, world: FakeCluster):
        self.w = world

    def servers(self) -> list[ServerInfo]:
        self.w.sync()
        return [ServerInfo(id=sid, host=sv["host"], profile=sv["profile"],
                           state={"restarting": "stopped"}.get(sv["state"], sv["state"]))
                for sid, sv in self.w.s["servers"].items()]

    def partitions(self) -> list[PartitionLocation]:
        self.w.sync()
        return [PartitionLocation(id=pid, table=p["table"],
                                  server=p["server"] if p["moving_to"] is None and p.get("split_at") is None else None,
                                  size_mb=self.w.delays.copy_mb)
                for pid, p in self.w.s["partitions"].items()]

    def move_partition(self, partition_id: str, target_server: str) -> None:
        w = self.w
        w.sync()
        part = w.s["partitions"].get(partition_id)
        if part is None:
            raise DriverError(f"unknown partition {partition_id}", retryable=False)
        if w.s["move_faults"].get(partition_id, 0) > 0:
            w.s["move_faults"][partition_id] -= 1
            w._save()
            raise DriverError(f"move of {partition_id} failed (region in transition)")
        if part["moving_to"] == target_server or (part["moving_to"] is None and part["server"] == target_server):
            return
        if part["moving_to"] is not None:
            raise DriverError(f"{partition_id} is already in transition")
        sv = w.s["servers"].get(target_server)
        if sv is None or sv["state"] != "active":
            raise DriverError(f"server {target_server} is not online")
        w._effect("move", partition_id, part["server"], target_server)
        part["prev"] = part["server"]
        if w.delays.move_s <= 0:
            part["server"] = target_server
        else:
            part["server"], part["moving_to"], part["arrive_at"] = None, target_server, w.clock() + w.delays.move_s
        w._save()
        w.sync()

    def _serving(self, server_id: str) -> list[str]:
        return [p for p, part in self.w.s["partitions"].items()
                if part["server"] == server_id or part["moving_to"] == server_id]

    def restart_server(self, server_id: str, profile: str) -> None:
        w = self.w
        w.sync()
        sv = w.s["servers"].get(server_id)
        if sv is None:
            raise DriverError(f"no server {server_id}", retryable=False)
        if w.s["restart_faults"].get(server_id, 0) > 0:
            w.s["restart_faults"][server_id] -= 1
            w._save()
            raise DriverError(f"restart of {server_id} failed")
        if self._serving(server_id):
            w._effect("restart-with-partitions", server_id)
        w._effect("restart", server_id, profile)
        sv.update(state="restarting", until=w.clock() + w.delays.restart_s, next_profile=profile)
        w._save()

    def compact(self, partition_id: str) -> None:
        w = self.w
        w.sync()
        w._effect("compact", partition_id)
        w.s["compactions"][partition_id] = w.clock() + w.delays.compaction_s
        w._save()

    def compaction_running(self, partition_id: str) -> bool:
        done_at = self.w.s["compactions"].get(partition_id)
        return done_at is not None and self.w.clock() < done_at

    def split_partition(self, partition_id: str) -> None:
        """Its daughters `<id>.a` and `<id>.b` open on its server after `split_s`."""
        w = self.w
        w.sync()
        part = w.s["partitions"].get(partition_id)
        if part is None or part.get("split_at") is not None:
            return  # split already (or splitting)
        if part["moving_to"] is not None or part["server"] is None:
            raise DriverError(f"{partition_id} is in transition")
        w._effect("split", partition_id)
        part["split_at"] = w.clock() + w.delays.split_s
        w._save()

    def decommission(self, server_id: str) -> None:
        w = self.w
        w.sync()
        sv = w.s["servers"].get(server_id)
        if sv is None or sv["state"] == "draining":
            return
        if self._serving(server_id):
            raise DriverError(f"{server_id} still serves partitions", retryable=False)
        w._effect("decommission", server_id)
        sv.update(state="draining", until=w.clock() + w.delays.decommission_s)
        w._save()

    def set_balancer(self, enabled: bool) -> bool:
        w = self.w
        was = bool(w.s["balancer"])
        if was != enabled:
            w._effect("balancer", enabled)
        w.s["balancer"] = enabled
        w._save()
        return was


class MirrorDataStore:
    """A data store for driving a REAL infrastructure driver (EC2 on moto, OpenStack, local
    processes) through the executor without a real database: every running node the driver
    lists with an address registers at once as server "<address>,<port>"; `static` servers
    exist from the start. Moves are instant, restarts take effect at once, compactions finish
    at once. Only the data store is faked — the infrastructure calls are real."""

    def __init__(self, infra: Any, *, static: Mapping[str, tuple[str, ...]] = {}, port: int = 16020):
        self.infra, self.port = infra, port
        self.static = {sid: sid.split(",")[0] for sid in static}
        self.profiles: dict[str, str] = {}
        self.gone: set[str] = set()
        self.layout = {p: sid for sid, parts in static.items() for p in parts}
        self.balancer = True
        self.calls: list[tuple[Any, ...]] = []

    def servers(self) -> list[ServerInfo]:
        out = {sid: ServerInfo(id=sid, host=host, profile=self.profiles.get(sid, "default"))
               for sid, host in self.static.items()}
        for n in self.infra.nodes():
            if n.state == "running" and n.address:
                sid = f"{n.address},{self.port}"
                out[sid] = ServerInfo(id=sid, host=n.address, profile=self.profiles.get(sid, n.profile))
        return [s for sid, s in sorted(out.items()) if sid not in self.gone]

    def partitions(self) -> list[PartitionLocation]:
        return [PartitionLocation(id=p, table="usertable", server=s) for p, s in sorted(self.layout.items())]

    def move_partition(self, partition_id: str, target_server: str) -> None:
        if target_server not in {s.id for s in self.servers()}:
            raise DriverError(f"server {target_server} is not online")
        if self.layout.get(partition_id) != target_server:
            self.calls.append(("move", partition_id, target_server))
            self.layout[partition_id] = target_server

    def restart_server(self, server_id: str, profile: str) -> None:
        self.calls.append(("restart", server_id, profile))
        self.profiles[server_id] = profile

    def compact(self, partition_id: str) -> None:
        self.calls.append(("compact", partition_id))

    def compaction_running(self, partition_id: str) -> bool:
        return False

    def split_partition(self, partition_id: str) -> None:
        server = self.layout.pop(partition_id, None)
        if server is None:
            return
        self.calls.append(("split", partition_id))
        self.layout[f"{partition_id}.a"] = self.layout[f"{partition_id}.b"] = server

    def decommission(self, server_id: str) -> None:
        self.calls.append(("decommission", server_id))
        self.gone.add(server_id)

    def set_balancer(self, enabled: bool) -> bool:
        was, self.balancer = self.balancer, enabled
        return was
