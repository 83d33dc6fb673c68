"""High availability: one acting controller among several, elected through ZooKeeper.

Several `metctl run` instances may watch the same cluster; exactly one acts. Each contends for
a kazoo Lock at `<root_znode>/<cluster>/leader` (an ephemeral sequential znode per contender;
the lowest holds leadership). Leadership is *fenced*: `Leadership.is_leader()` turns false

- the moment kazoo reports the session SUSPENDED or LOST (connection-state listener),
- when our lock znode is found gone,
- when the last round trip that proved our session alive is older than the lease
  (`lease_fraction` x session timeout) — this covers a process that was paused (SIGSTOP, a VM
  freeze, a long GC) past its session timeout: when it wakes, its clock tells it that its
  proof is stale before kazoo's own thread has even noticed the expired session,
- after SIGTERM (`request_release`): no new action starts, and the lock is handed over as soon
  as the action in flight (if any) has finished — without waiting for a session timeout.

A fresh round trip after a reconnect (our znode still exists) restores leadership; a LOST
session means contending again from the back of the queue.

Without `ha.zookeeper_hosts`, `Leadership.alone()` always leads and says so: metctl runs alone.

kazoo is imported only when ZooKeeper is configured, so the core install does not need it.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

log = logging.getLogger("metctl.ha")


class HASettings(BaseModel):
    """Leader election among several metctl instances watching the same cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    zookeeper_hosts: str = Field(
        "",
        description="ZooKeeper connection string `host:port[,host:port…]` (the HBase quorum "
        "works). Empty: no leader election, this instance runs alone and acts.",
    )
    root_znode: str = Field(
        "/metctl",
        description="Znode under which metctl keeps its election: `<root_znode>/<cluster>/leader`.",
    )
    session_timeout_s: float = Field(
        10.0,
        gt=0,
        description="ZooKeeper session timeout requested, in seconds. A leader that loses its "
        "session stops acting; a dead leader is replaced after about this long. Must lie within "
        "the server's bounds (2 to 20 x tickTime) so the server grants at least this much.",
    )
    lease_fraction: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="Share of the session timeout for which one successful round trip to "
        "ZooKeeper proves leadership; past it the leader stops starting actions until a new "
        "round trip succeeds (fraction, 0..1).",
    )
    connect_timeout_s: float = Field(
        15.0,
        gt=0,
        description="How long startup waits for the first ZooKeeper connection, in seconds.",
    )
    identity: str = Field(
        "",
        description="This instance's name in the election and in logs. Empty: `<hostname>:<pid>`.",
    )

    @field_validator("root_znode")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/") or value.endswith("/") and value != "/":
            raise ValueError("an absolute znode path such as /metctl (no trailing slash)")
        return value

    @property
    def enabled(self) -> bool:
        return bool(self.zookeeper_hosts.strip())

    def resolved_identity(self) -> str:
        return self.identity or f"{socket.gethostname()}:{os.getpid()}"

    def election_path(self, cluster: str) -> str:
        root = "" if self.root_znode == "/" else self.root_znode
        return f"{root}/{cluster}/leader"


class NotLeader(RuntimeError):
    """Raised by `Leadership.acting()` when this instance may not start an action."""


class Fence:
    """The leadership state, thread-safe, with time passed in (no clock of its own).

    `holding`: we own the lock znode. `suspended`: kazoo said SUSPENDED/LOST since the last
    proof. `confirmed_at`: monotonic time at which the last successful round trip was *sent*
    (the server heard from us no earlier, so our session lives at least a session timeout
    beyond it). `released`: SIGTERM — never lead again in this process.
    """

    def __init__(self, lease_s: float):
        self.lease_s = lease_s
        self._mu = threading.Lock()
        self._holding = False
        self._suspended = False
        self._released = False
        self._confirmed_at: float | None = None
        self._epoch = 0  # bumped on every SUSPENDED/LOST: a proof sent before it is worthless

    def epoch(self) -> int:
        with self._mu:
            return self._epoch

    def acquired(self, sent_at: float) -> None:
        with self._mu:
            self._holding = True
            self._suspended = False
            self._confirmed_at = sent_at

    def confirmed(self, sent_at: float, epoch: int) -> bool:
        """A round trip sent at `sent_at` (during `epoch`) found our lock znode alive."""
        with self._mu:
            if epoch != self._epoch or not self._holding:
                return False
            self._suspended = False
            if self._confirmed_at is None or sent_at > self._confirmed_at:
                self._confirmed_at = sent_at
            return True

    def suspended(self) -> None:
        with self._mu:
            self._suspended = True
            self._epoch += 1

    def lost(self) -> None:
        with self._mu:
            self._holding = False
            self._suspended = True
            self._confirmed_at = None
            self._epoch += 1

    def released(self) -> None:
        with self._mu:
            self._released = True
            self._holding = False
            self._epoch += 1

    @property
    def is_released(self) -> bool:
        with self._mu:
            return self._released

    @property
    def holding(self) -> bool:
        with self._mu:
            return self._holding

    def is_leader(self, now: float) -> bool:
        with self._mu:
            return (
                self._holding
                and not self._suspended
                and not self._released
                and self._confirmed_at is not None
                and now - self._confirmed_at < self.lease_s
            )

    def why_not(self, now: float) -> str:
        """One phrase for logs and status: why this instance does not lead (or 'leader')."""
        with self._mu:
            if self._released:
                return "released (shutting down)"
            if not self._holding:
                return "following"
            if self._suspended:
                return "ZooKeeper session suspended"
            if self._confirmed_at is None or now - self._confirmed_at >= self.lease_s:
                return "leadership lease expired (no recent ZooKeeper round trip)"
            return "leader"


LeadershipListener = Callable[[bool, str], None]


class Leadership:
    """This instance's right to act. `is_leader()` / `may_act()` are cheap and thread-safe.

    With ZooKeeper: `start()` connects, contends in a background thread and keeps the lease
    fresh; `request_release()` (SIGTERM) fences at once and hands over after the action in
    flight; `close()` releases and disconnects. Alone: always the leader.
    """

    def __init__(
        self,
        settings: HASettings,
        cluster: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.settings = settings
        self.cluster = cluster
        self.identity = settings.resolved_identity()
        self.path = settings.election_path(cluster)
        self.alone = not settings.enabled
        self._clock = clock
        self.fence = Fence(settings.session_timeout_s * settings.lease_fraction)
        self._listeners: list[LeadershipListener] = []
        self._stop = threading.Event()
        self._mu = threading.Lock()
        self._in_action = 0
        self._release_pending = False
        self._exit_code: int | None = None  # SIGTERM during an action: exit once it ends
        self._handed_over = threading.Event()
        self._client: Any = None
        self._lock: Any = None
        self._thread: threading.Thread | None = None
        self._was_leader = False
        self._notify_mu = threading.RLock()

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def alone_for(cls, cluster: str, identity: str = "") -> Leadership:
        return cls(HASettings(identity=identity), cluster)

    def describe(self) -> str:
        if self.alone:
            return "running alone: no ZooKeeper configured (ha.zookeeper_hosts), this instance acts"
        return (
            f"leader election at {self.settings.zookeeper_hosts}{self.path} as {self.identity}, "
            f"session timeout {self.settings.session_timeout_s:g} s"
        )

    def add_listener(self, listener: LeadershipListener) -> None:
        """`listener(is_leader, why)` on every change of leadership (from kazoo's threads)."""
        self._listeners.append(listener)

    # ---- the questions the loop asks ------------------------------------------------------
    def is_leader(self) -> bool:
        if self.alone:
            return not self.fence.is_released
        return self.fence.is_leader(self._clock())

    def may_act(self) -> bool:
        """The loop's hook, asked before any new action starts."""
        return self.is_leader()

    def status(self) -> str:
        if self.alone:
            return "released (shutting down)" if self.fence.is_released else "alone"
        return self.fence.why_not(self._clock())

    @contextmanager
    def acting(self) -> Iterator[None]:
        """Wrap one action: refuses to start unless leader; a SIGTERM during the action hands
        leadership over only once the action has finished (so no two act at once)."""
        with self._mu:
            if not self.is_leader():
                raise NotLeader(self.status())
            self._in_action += 1
        try:
            yield
        finally:
            with self._mu:
                self._in_action -= 1
                hand_over = self._release_pending and self._in_action == 0
            if hand_over:
                self._hand_over()
                self._exit_if_asked()

    def action_started(self) -> None:
        """For loops that report actions through an observer instead of `acting()`."""
        with self._mu:
            self._in_action += 1

    def action_finished(self) -> None:
        with self._mu:
            self._in_action = max(0, self._in_action - 1)
            hand_over = self._release_pending and self._in_action == 0
        if hand_over:
            self._hand_over()
            self._exit_if_asked()

    def exit_when_idle(self, code: int) -> None:
        """Leave the process (SystemExit) now if no action is in flight, else right after it."""
        with self._mu:
            busy = self._in_action > 0
            if busy:
                self._exit_code = code
        if not busy:
            raise SystemExit(code)

    def _exit_if_asked(self) -> None:
        code, self._exit_code = self._exit_code, None
        if code is not None:
            raise SystemExit(code)

    # ---- lifecycle ----------------------------------------------------------------------
    def start(self) -> None:
        """Connect and contend (returns at once; leadership arrives in the background).
        Alone: become leader now. Raises ConnectionError if ZooKeeper is unreachable."""
        if self.alone:
            log.info(self.describe(), extra={"event": "ha.alone", "identity": self.identity})
            self._notify(True, "alone")
            return
        from kazoo.client import KazooClient  # optional dependency: metctl[ha]

        self._client = KazooClient(
            hosts=self.settings.zookeeper_hosts,
            timeout=self.settings.session_timeout_s,
            # reconnect for ever: a follower stays warm through a ZooKeeper restart
            connection_retry={"max_tries": -1, "delay": 0.1, "max_delay": 1.0},
            logger=logging.getLogger("metctl.ha.kazoo"),
        )
        self._client.add_listener(self._on_state)
        try:
            self._client.start(timeout=self.settings.connect_timeout_s)
        except Exception as err:  # kazoo raises its own timeout type
            self._client.stop()
            self._client.close()
            raise ConnectionError(
                f"cannot reach ZooKeeper at {self.settings.zookeeper_hosts}: {err}"
            ) from err
        log.info(self.describe(), extra={"event": "ha.contending", "identity": self.identity})
        self._thread = threading.Thread(target=self._contend, name="metctl-ha", daemon=True)
        self._thread.start()

    def wait_until_leader(self, timeout_s: float | None = None) -> bool:
        """Block until leader (or released/timeout). For daemons and drivers, not the loop."""
        deadline = None if timeout_s is None else self._clock() + timeout_s
        while not self.is_leader():
            if self.fence.is_released or (deadline is not None and self._clock() >= deadline):
                return False
            self._stop.wait(0.02)
        return True

    def request_release(self) -> None:
        """SIGTERM: stop acting now; hand leadership over once no action is in flight."""
        self.fence.released()
        self._notify_change()
        with self._mu:
            self._release_pending = True
            idle = self._in_action == 0
        if idle:
            self._hand_over()

    def close(self) -> None:
        """Release leadership and disconnect (idempotent)."""
        self.fence.released()
        self._notify_change()
        self._hand_over()

    # ---- internals ----------------------------------------------------------------------
    def _hand_over(self) -> None:
        if self._handed_over.is_set():
            return
        self._handed_over.set()
        self._stop.set()
        if self.alone or self._client is None:
            return
        lock, client = self._lock, self._client
        t0 = time.monotonic()

        def release() -> None:
            # Closing the session deletes our ephemeral znode at once: the next contender's
            # watch fires and it leads within milliseconds, without a session timeout.
            try:
                if lock is not None:
                    lock.cancel()
                client.stop()
                client.close()
            except Exception as err:  # noqa: BLE001 — shutting down; the session expires anyway
                log.warning("releasing leadership: %s", err, extra={"event": "ha.release_error"})

        worker = threading.Thread(target=release, name="metctl-ha-release", daemon=True)
        worker.start()
        worker.join(timeout=max(2.0, self.settings.session_timeout_s))
        log.info(
            "leadership released",
            extra={"event": "ha.released", "identity": self.identity,
                   "duration_s": round(time.monotonic() - t0, 4)},
        )
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=1.0)

    def _on_state(self, state: str) -> None:
        # Runs on kazoo's connection thread: must not block. Only ever fences; a round trip
        # from the contender thread restores leadership after a reconnect.
        if state == "SUSPENDED":
            self.fence.suspended()
        elif state == "LOST":
            self.fence.lost()
        log.info("ZooKeeper session %s", state.lower(),
                 extra={"event": "ha.session", "state": state, "identity": self.identity})
        self._notify_change()

    def _notify(self, leader: bool, why: str) -> None:
        for listener in self._listeners:
            try:
                listener(leader, why)
            except Exception:  # noqa: BLE001 — a listener must not break the election
                log.exception("leadership listener failed")

    def _notify_change(self) -> None:
        # called from kazoo's thread, the election thread and the main thread (SIGTERM)
        with self._notify_mu:
            leader = self.is_leader()
            if leader == self._was_leader:
                return
            self._was_leader = leader
            why = self.status()
            log.info(
                "this instance %s" % ("leads: it acts" if leader else f"does not lead ({why})"),
                extra={"event": "ha.leader" if leader else "ha.follower",
                       "identity": self.identity, "reason": why},
            )
            self._notify(leader, why)

    def _heartbeat_s(self) -> float:
        return self.fence.lease_s / 4

    def _contend(self) -> None:
        from kazoo.exceptions import CancelledError, KazooException

        client = self._client
        while not self._stop.is_set():
            if not client.connected:
                self._stop.wait(0.05)
                continue
            self._lock = lock = client.Lock(self.path, identifier=self.identity)
            try:
                sent_at = self._clock()
                epoch = self.fence.epoch()
                if not lock.acquire(blocking=True):
                    continue
                if self._stop.is_set():
                    break
                # The proof of a fresh lock is the round trip that created it; re-prove now so
                # the lease starts from a request sent after acquiring.
                sent_at, epoch = self._clock(), self.fence.epoch()
                if client.exists(f"{self.path}/{lock.node}") is None:
                    continue
                self.fence.acquired(sent_at)
                self.fence.confirmed(sent_at, epoch)
                self._notify_change()
                self._keep_lease(lock)
            except CancelledError:
                break
            except KazooException as err:
                log.info("contending again: %s", type(err).__name__,
                         extra={"event": "ha.recontend", "identity": self.identity})
            except Exception:  # noqa: BLE001 — the election thread must survive
                log.exception("election thread error")
                self._stop.wait(0.5)
            finally:
                if not self._stop.is_set():
                    self.fence.lost()
                    self._notify_change()
                    try:  # best effort: a znode left behind would block the others
                        lock.release()
                    except Exception:  # noqa: BLE001
                        pass

    def _keep_lease(self, lock: Any) -> None:
        """While we hold the lock: prove the session alive every lease/4; return on loss."""
        from kazoo.exceptions import KazooException

        client = self._client
        node = f"{self.path}/{lock.node}"
        while not self._stop.wait(self._heartbeat_s()):
            epoch, sent_at = self.fence.epoch(), self._clock()
            try:
                alive = client.exists(node) is not None
            except KazooException:
                alive = None  # connection trouble: the listener has fenced; retry next beat
            if alive is False:
                return  # our znode is gone: the session expired, someone else may lead
            if alive:
                self.fence.confirmed(sent_at, epoch)
            self._notify_change()  # also reports a lease that ran out between beats
            if client.state == "LOST":
                return


def install_sigterm(leadership: Leadership, then: Callable[[], None] | None = None) -> None:
    """On SIGTERM: fence at once and hand leadership over after the action in flight; then
    call `then` (a loop that stops by itself), or leave the process with SystemExit(143) as
    soon as no action is in flight (never in the middle of one)."""

    def on_sigterm(signum: int, frame: Any) -> None:
        log.info("SIGTERM: releasing leadership", extra={"event": "ha.sigterm"})
        leadership.request_release()
        if then is not None:
            then()
        else:
            leadership.exit_when_idle(128 + signum)

    signal.signal(signal.SIGTERM, on_sigterm)


def read_leader(settings: HASettings, cluster: str, timeout_s: float = 5.0) -> str | None:
    """Who leads now (its identity), asked from ZooKeeper; None when nobody holds the lock."""
    if not settings.enabled:
        return None
    from kazoo.client import KazooClient

    client = KazooClient(hosts=settings.zookeeper_hosts, timeout=settings.session_timeout_s)
    client.start(timeout=timeout_s)
    try:
        contenders = client.Lock(settings.election_path(cluster)).contenders()
        return contenders[0] if contenders else None
    finally:
        client.stop()
        client.close()


class FencedDriver:
    """An infrastructure or data-store driver whose calls that change the cluster (launch,
    terminate, move_partition, restart_server, compact, decommission, set_balancer) raise
    NotLeader unless this instance may act; reads (nodes, servers, partitions,
    compaction_running) pass. The journal already holds the step's intent, so an interrupted
    step is resumed by the next leader from observation, like a crash between two writes."""

    READS = frozenset({"nodes", "servers", "partitions", "compaction_running"})

    def __init__(self, driver: Any, leadership: Leadership):
        self._driver, self._leadership = driver, leadership

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._driver, name)
        if name in self.READS or name.startswith("_") or not callable(attr):
            return attr

        def fenced(*args: Any, **kwargs: Any) -> Any:
            if not self._leadership.may_act():
                raise NotLeader(f"{name} refused: {self._leadership.status()}")
            return attr(*args, **kwargs)

        return fenced


class FencedExecutor:
    """The executor as the control loop sees it, behind the leadership fence.

    The loop asks `may_act()` before submitting a plan; a plan in flight, though, advances on
    every `tick()`, and each tick may start driver calls. This wrapper asks again before every
    tick, `submit()` and `resume()`: a fenced instance does not touch the cluster, it only
    reports the status it last knew. When leadership comes (back), the journal is re-read
    (`resume()`) first, since another instance may have moved the plan on meanwhile. Each
    tick runs inside `Leadership.acting()`, so a SIGTERM hands over only between ticks.
    `after_tick(status)` (e.g. telemetry.StepWatcher) sees every status a tick returns.
    """

    def __init__(self, executor: Any, leadership: Leadership,
                 after_tick: Callable[[Any], None] | None = None):
        self.executor, self.leadership = executor, leadership
        self.after_tick = after_tick
        self._synced = False  # True while we lead and have re-read the journal since
        # A tick may start several driver calls: each one that changes the cluster asks the
        # fence again, so leadership lost in the middle of a tick stops the next call.
        for attr in ("infra", "ds"):
            driver = getattr(executor, attr, None)
            if driver is not None and not isinstance(driver, FencedDriver):
                setattr(executor, attr, FencedDriver(driver, leadership))

    def __getattr__(self, name: str) -> Any:  # status(), plan_id, journal, … pass through
        return getattr(self.executor, name)

    @property
    def busy(self) -> bool:
        # A new leader first learns from the journal whether a plan is in flight, so the loop
        # finishes the dead leader's plan before deciding anything new.
        if not self._synced and self.leadership.may_act():
            try:
                with self.leadership.acting():
                    self._ensure_synced()
            except NotLeader:
                pass
        return self.executor.busy

    def _ensure_synced(self) -> None:
        if not self._synced:
            self.executor.resume()
            self._synced = True

    def submit(self, plan: Any, plan_id: str) -> None:
        with self.leadership.acting():
            self._ensure_synced()
            self.executor.submit(plan, plan_id)

    def resume(self) -> Any:
        if not self.leadership.may_act():
            self._synced = False
            return self.executor.status()
        with self.leadership.acting():
            status = self.executor.resume()
            self._synced = True
        return status

    def tick(self) -> Any:
        if not self.leadership.may_act():
            self._synced = False
            return self.executor.status()
        try:
            with self.leadership.acting():
                self._ensure_synced()
                status = self.executor.tick()
        except NotLeader:  # fenced between the check and the start: nothing was done
            self._synced = False
            return self.executor.status()
        if self.after_tick is not None:
            self.after_tick(status)
        return status
