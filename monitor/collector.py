"""The collector: polls every metrics source, turns cumulative request counters into per-second
rates, smooths node metrics and partition rates (Brown, see monitor/smoothing.py) and builds the
ClusterSnapshot the decision core reads, saying what is missing.

Rules (MET §4.1 and the design page):
- A counter that drops, or a partition that now sits on another server, is a reset (the region
  reopened): the interval gives no rate, the new value becomes the baseline. Never a negative rate.
- A non-finite (NaN/Infinity) or negative counter is missing, not a number.
- A node's metrics are fresh only when its latest host sample was complete and not stale;
  otherwise the snapshot has `metrics=None` and a line in `missing` — never an old or guessed value.
- A partition without a rate yet (seen once since `clear()`, or new after a split) is left out
  of the snapshot and named in `missing`; `complete_enough` says whether to decide anyway.
- `clear()` forgets all history (baselines, smoothing, known servers): after an actuation only
  observations of the new configuration count.

Nodes: when any source reports data-store servers (partitions or `Sample.servers`), the nodes are
those servers (id as the data store names it) and Ganglia hosts are matched to them by
`host_name_rule`/`host_name_map`; hosts that match no server (a master, ZooKeeper) are ignored.
With no data-store source, the nodes are the Ganglia hosts themselves.
"""
from __future__ import annotations

import logging
import math
from datetime import datetime, timezone
from typing import Sequence

from decision.model import PROFILES, ClusterSnapshot, Node, NodeMetrics, Partition
from monitor.settings import MonitorSettings
from monitor.smoothing import BrownSmoother
from monitor.source import HostSample, MetricsSource, PartitionSample, Sample

log = logging.getLogger(__name__)

NODE_METRICS = ("cpu", "io_wait", "memory")
RATES = ("reads", "writes", "scans")
# Requests per second no single partition can serve (HBase regions serve ~1e5/s at most): a
# larger computed rate comes from a broken counter or a near-zero interval and is not used.
MAX_RATE = 1e9
# Above this many entries of one kind, `missing` lists the first ones and counts the rest.
_MISSING_LIST_CAP = 25


def host_name_for(server_id: str, settings: MonitorSettings) -> str:
    """The Ganglia host name a data-store server id maps to (before case folding)."""
    if server_id in settings.host_name_map:
        return settings.host_name_map[server_id]
    if settings.host_name_rule == "identity":
        return server_id
    return server_id.split(",", 1)[0]


def _match_key(name: str, rule: str) -> str:
    name = name.strip().lower()
    if rule == "short_name":
        name = name.split(".", 1)[0]
    return name


def _with_process(host: HostSample, proc: HostSample | None) -> HostSample:
    """The machine's sample with the server process's own values where it has them (its CPU
    when RegionServers share the machine); a process sample saying its value is missing makes
    that metric missing — never the machine's figure, which would be every server's at once."""
    if proc is None:
        return host
    values = {m: getattr(host, m) for m in NODE_METRICS}
    reason = host.reason
    for m in NODE_METRICS:
        v = getattr(proc, m)
        if v is not None:
            values[m] = v
    if proc.cpu is None or not _finite(proc.cpu):
        values["cpu"] = None
        reason = reason or proc.reason or "process CPU missing"
    return HostSample(host=host.host, stale=host.stale, reason=reason, **values)


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


class _NodeTrack:
    __slots__ = ("smoothers", "seen_at", "fresh", "reason", "profile", "latency", "latency_at",
                 "queue", "queue_at", "dropped", "dropped_at", "dropped_counter")

    def __init__(self, alpha: float):
        self.smoothers = {m: BrownSmoother(alpha) for m in NODE_METRICS}
        self.latency = BrownSmoother(alpha)  # rpc_latency_ms, smoothed like the rest
        self.latency_at: float | None = None  # poll time of its latest value
        self.queue = BrownSmoother(alpha)  # rpc_queue_length, smoothed like the rest
        self.queue_at: float | None = None
        self.dropped = BrownSmoother(alpha)  # rpc_dropped_per_s, from a cumulative counter
        self.dropped_at: float | None = None
        self.dropped_counter: tuple[float, float] | None = None  # (value, source taken_at)
        self.seen_at: float | None = None  # poll time it was last reported (None: not yet)
        self.fresh = False  # its latest poll gave complete, fresh metrics
        self.reason = "no sample yet"
        self.profile: str | None = None

    def count_dropped(self, value: float, taken_at: float, now: float) -> None:
        """Fold one reading of the dropped-calls counter: a rate once there are two readings
        in order; a counter that went back (the server restarted) is a new baseline."""
        previous, self.dropped_counter = self.dropped_counter, (value, taken_at)
        if previous is None or value < previous[0] or taken_at <= previous[1]:
            return
        self.dropped.update((value - previous[0]) / (taken_at - previous[1]))
        self.dropped_at = now


class _PartitionTrack:
    __slots__ = ("table", "server", "taken_at", "counters", "smoothers", "seen_at", "size_mb",
                 "locality", "note")

    def __init__(self, p: PartitionSample, alpha: float):
        self.table = p.table
        self.server = p.server
        self.taken_at: float | None = None
        self.counters: tuple[float, float, float] | None = None  # the baseline
        self.smoothers = {r: BrownSmoother(alpha) for r in RATES}
        self.seen_at = -math.inf
        self.size_mb: float | None = None
        self.locality: float | None = None
        self.note = ""  # why the latest poll gave no rate

    @property
    def has_rate(self) -> bool:
        return self.smoothers["reads"].count > 0


class Collector:
    """Polls `sources`, keeps the smoothed history since the last `clear()`, builds snapshots."""

    def __init__(self, sources: Sequence[MetricsSource], settings: MonitorSettings):
        self.sources = tuple(sources)
        self.settings = settings
        self._nodes: dict[str, _NodeTrack] = {}
        self._parts: dict[str, _PartitionTrack] = {}
        self._datastore_mode = False  # sticky: once a source names data-store servers
        self._last_poll_at: float | None = None
        self._last_errors: tuple[str, ...] = ()
        self._last_seen_partitions = 0
        self.samples_since_clear = 0

    # -- history ------------------------------------------------------------------------------
    def clear(self) -> None:
        """Forget every observation (called by the control loop after each actuation, MET §4.1)."""
        self._nodes.clear()
        self._parts.clear()
        self._last_poll_at = None
        self._last_errors = ()
        self._last_seen_partitions = 0
        self.samples_since_clear = 0

    # -- polling ------------------------------------------------------------------------------
    def poll(self, now: float) -> None:
        """Take one Sample from every source and fold it into the history. Never raises for a
        bad source: its failure becomes a line in the next snapshot's `missing`."""
        samples: list[Sample] = []
        errors: list[str] = []
        for source in self.sources:
            try:
                sample = source.sample()
            except Exception as err:  # noqa: BLE001 — a source breaking its contract must not stop the loop
                msg = f"source {type(source).__name__} failed: {type(err).__name__}: {err}"
                log.warning(msg)
                errors.append(msg)
                continue
            samples.append(sample)
            errors.extend(sample.errors)

        hosts: list[HostSample] = [h for s in samples for h in s.hosts]
        servers: set[str] = set()
        profiles: dict[str, str] = {}
        for s in samples:
            servers.update(s.servers)
            servers.update(p.server for p in s.partitions)
            profiles.update(s.server_profiles)

        if servers and not self._datastore_mode:
            # Data-store servers name the nodes from now on; drop host-named nodes of before.
            self._datastore_mode = True
            self._nodes.clear()

        if self._datastore_mode:
            self._fold_hosts_into_servers(hosts, servers, now)
        else:
            self._fold_hosts_as_nodes(hosts, now)
        for server, profile in profiles.items():
            if server in self._nodes:
                self._nodes[server].profile = profile

        for s in samples:
            for server, ms in s.server_latency_ms.items():
                # optional and never guessed: a non-finite or negative value is not folded in
                if server in self._nodes and _finite(ms) and ms >= 0:
                    self._nodes[server].latency.update(float(ms))
                    self._nodes[server].latency_at = now
            for server, calls in s.server_queue_length.items():
                if server in self._nodes and _finite(calls) and calls >= 0:
                    self._nodes[server].queue.update(float(calls))
                    self._nodes[server].queue_at = now
            for server, total in s.server_dropped_calls.items():
                if server in self._nodes and _finite(total) and total >= 0:
                    self._nodes[server].count_dropped(float(total), s.taken_at, now)

        seen = 0
        for s in samples:
            for p in s.partitions:
                self._fold_partition(p, s.taken_at, now)
                seen += 1
        self._forget_old(now)
        self._last_poll_at = now
        self._last_errors = tuple(errors)
        self._last_seen_partitions = seen
        self.samples_since_clear += 1

    def _node(self, node_id: str) -> _NodeTrack:
        track = self._nodes.get(node_id)
        if track is None:
            track = self._nodes[node_id] = _NodeTrack(self.settings.smoothing_alpha)
        return track

    def _fold_hosts_into_servers(self, hosts: list[HostSample], servers: set[str],
                                 now: float) -> None:
        rule = self.settings.host_name_rule
        process = {h.host: h for h in hosts if h.scope == "process"}
        machines = [h for h in hosts if h.scope != "process"]
        exact = {h.host: h for h in machines}
        by_key: dict[str, HostSample] = {}
        for h in machines:
            by_key.setdefault(_match_key(h.host, rule), h)
        for server in servers:
            host = exact.get(server) or by_key.get(
                _match_key(host_name_for(server, self.settings), rule))
            track = self._node(server)
            track.seen_at = now
            if host is None:
                track.fresh = False
                track.reason = (f"no system metrics for host "
                                f"{host_name_for(server, self.settings)!r} in the latest sample")
            else:
                self._fold_host(track, _with_process(host, process.get(server)))

    def _fold_hosts_as_nodes(self, hosts: list[HostSample], now: float) -> None:
        for host in hosts:
            if host.scope == "process":
                continue  # a server's own process: meaningless without the server as a node
            track = self._node(host.host)
            track.seen_at = now
            self._fold_host(track, host)

    @staticmethod
    def _fold_host(track: _NodeTrack, host: HostSample) -> None:
        values = {m: getattr(host, m) for m in NODE_METRICS}
        if host.stale:
            track.fresh = False
            track.reason = host.reason or "host stale"
            return
        absent = [m for m, v in values.items() if not _finite(v)]
        if absent:
            track.fresh = False
            track.reason = host.reason or f"metrics missing: {', '.join(absent)}"
            return
        for m, v in values.items():
            track.smoothers[m].update(float(v))
        track.fresh = True
        track.reason = ""

    def _fold_partition(self, p: PartitionSample, taken_at: float, now: float) -> None:
        track = self._parts.get(p.id)
        if track is None:
            track = self._parts[p.id] = _PartitionTrack(p, self.settings.smoothing_alpha)
        track.seen_at = now
        track.table = p.table
        if _finite(p.size_mb):
            track.size_mb = float(p.size_mb)
        if _finite(p.locality):
            track.locality = min(1.0, max(0.0, float(p.locality)))
        counters = (p.reads, p.writes, p.scans)
        moved = p.server != track.server
        track.server = p.server
        if not all(_finite(c) and c >= 0 for c in counters):
            bad = [r for r, c in zip(RATES, counters) if not (_finite(c) and c >= 0)]
            track.note = f"counter {', '.join(bad)} is not a number"
            log.warning("partition %s: %s; no rate this interval", p.id, track.note)
            if moved:
                track.counters = None  # the old baseline belongs to the old server
            return
        current = (float(p.reads), float(p.writes), float(p.scans))
        previous, previous_at = track.counters, track.taken_at
        track.counters, track.taken_at = current, taken_at
        if previous is None or previous_at is None:
            track.note = "one sample so far (a rate needs two)"
            return
        if moved:
            track.note = "moved to another server: counters restarted, re-baselined"
            return
        if any(c < prev for c, prev in zip(current, previous)):
            track.note = "counter went backwards (region reopened): re-baselined"
            log.warning("partition %s: %s", p.id, track.note)
            return
        dt = taken_at - previous_at
        if dt <= 0:
            track.counters, track.taken_at = previous, previous_at
            track.note = "no time elapsed since the previous sample"
            return
        rates = [(c - prev) / dt for c, prev in zip(current, previous)]
        if not all(r <= MAX_RATE for r in rates):
            # an interval so short, or a jump so large, that no region could have served it
            # (or the division overflowed): a broken counter, not a measurement
            track.note = f"implausible rate over an interval of {dt:g} s (> {MAX_RATE:g}/s)"
            log.warning("partition %s: %s", p.id, track.note)
            return
        for r, rate in zip(RATES, rates):
            track.smoothers[r].update(rate)
        track.note = ""

    def _forget_old(self, now: float) -> None:
        horizon = now - self.settings.forget_server_after_s
        for node_id in [n for n, t in self._nodes.items()
                        if t.seen_at is not None and t.seen_at < horizon]:
            del self._nodes[node_id]
        for pid in [p for p, t in self._parts.items() if t.seen_at < horizon]:
            del self._parts[pid]

    # -- snapshots ------------------------------------------------------------------------------
    def snapshot(self, now: float) -> ClusterSnapshot:
        """The smoothed state as the decision core reads it; everything not known is in `missing`."""
        s = self.settings
        missing: list[str] = list(self._last_errors)
        last = self._last_poll_at
        too_old = last is None or now - last > s.max_sample_age_s
        if last is None:
            missing.append("no sample taken since the history was cleared")
        elif too_old:
            missing.append(f"latest sample is {now - last:.0f} s old "
                           f"(> max_sample_age_s {s.max_sample_age_s:g} s)")

        nodes: list[Node] = []
        for node_id in sorted(self._nodes):
            track = self._nodes[node_id]
            metrics = None
            if track.seen_at != last:
                missing.append(f"node {node_id}: not reported in the latest sample "
                               f"(last seen {last - track.seen_at:.0f} s before it)"
                               if last is not None and track.seen_at is not None
                               else f"node {node_id}: not reported")
            elif not track.fresh:
                missing.append(f"node {node_id}: {track.reason}")
            elif not too_old:
                latency = (track.latency.value(s.smoothing_output, 0.0)
                           if track.latency_at == last else None)  # only a current one
                queue = (track.queue.value(s.smoothing_output, 0.0)
                         if track.queue_at == last else None)
                dropped = (track.dropped.value(s.smoothing_output, 0.0)
                           if track.dropped_at == last else None)
                metrics = NodeMetrics(**{
                    m: track.smoothers[m].value(s.smoothing_output, 0.0, 1.0)
                    for m in NODE_METRICS}, rpc_latency_ms=latency, rpc_queue_length=queue,
                    rpc_dropped_per_s=dropped)
            profile = track.profile if track.profile in PROFILES else "default"
            nodes.append(Node(id=node_id, profile=profile, state="active", metrics=metrics))

        partitions: list[Partition] = []
        unrated: list[str] = []
        no_size = no_locality = 0
        for pid in sorted(self._parts):
            track = self._parts[pid]
            if track.seen_at != last:
                continue  # vanished (merged, or its server did not answer): not part of the cluster now
            if not track.has_rate or too_old:
                unrated.append(f"partition {pid} ({track.table} on {track.server}): "
                               f"no request rate: {track.note or 'no recent sample'}")
                continue
            no_size += track.size_mb is None
            no_locality += track.locality is None
            rates = {r: track.smoothers[r].value(s.smoothing_output, 0.0) for r in RATES}
            partitions.append(Partition(
                id=pid, table=track.table, node=track.server, **rates,
                size_mb=track.size_mb if track.size_mb is not None else 0.0,
                locality=track.locality if track.locality is not None else 1.0))
        missing.extend(unrated[:_MISSING_LIST_CAP])
        if len(unrated) > _MISSING_LIST_CAP:
            missing.append(f"… and {len(unrated) - _MISSING_LIST_CAP} more partitions "
                           "without a request rate")
        if no_size:
            missing.append(f"size unknown for {no_size} partitions (shown as 0 MB)")
        if no_locality:
            missing.append(f"locality unknown for {no_locality} partitions (shown as 1.0)")

        return ClusterSnapshot(
            taken_at=datetime.fromtimestamp(now, tz=timezone.utc),
            nodes=tuple(nodes), partitions=tuple(partitions), missing=tuple(missing))

    def complete_enough(self, snapshot: ClusterSnapshot) -> tuple[bool, str]:
        """Whether `snapshot` is complete enough to decide on: at least `min_fresh_fraction` of
        the nodes fresh and `min_rated_partition_fraction` of the latest poll's partitions with a
        rate. The reason says what is short (or what was counted)."""
        s = self.settings
        if not snapshot.nodes:
            return False, "no nodes in the snapshot: " + ("; ".join(snapshot.missing[:3])
                                                          or "no source reported any host")
        fresh = [n for n in snapshot.nodes if n.metrics is not None]
        stale = [n.id for n in snapshot.nodes if n.metrics is None]
        total = len(snapshot.nodes)
        if len(fresh) / total < s.min_fresh_fraction:
            shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
            return False, (f"only {len(fresh)} of {total} nodes have fresh metrics "
                           f"(need {s.min_fresh_fraction:.0%}); stale or missing: {shown}")
        seen = self._last_seen_partitions
        rated = len(snapshot.partitions)
        if seen and rated / seen < s.min_rated_partition_fraction:
            return False, (f"only {rated} of {seen} partitions have a request rate "
                           f"(need {s.min_rated_partition_fraction:.0%}; "
                           f"{self.samples_since_clear} samples since the last clear)")
        return True, f"{len(fresh)}/{total} nodes fresh, {rated}/{seen} partitions rated"
