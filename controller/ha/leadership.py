"""Leadership (kazoo): high availability: one acting controller among several, elected through ZooKeeper.

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
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from controller.ha.fence import Fence, NotLeader
from controller.ha.settings import HASettings

log = logging.getLogger("metctl.ha")


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
        from kazoo.client import KazooClient  # noqa: PLC0415 — optional dependency: metctl[ha]

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
        from kazoo.exceptions import CancelledError, KazooException  # noqa: PLC0415 — optional extra: metctl[ha]

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
        from kazoo.exceptions import KazooException  # noqa: PLC0415 — optional extra: metctl[ha]

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


def install_sigterm(leadership: Leadership, then: Callable[[int], None] | None = None) -> None:
    """On SIGTERM: fence at once and hand leadership over after the action in flight; then
    call `then(signum)` (a loop that stops by itself), or leave the process with SystemExit(143) as
    soon as no action is in flight (never in the middle of one).

    SIGHUP (a closed terminal, `kill -HUP`) stops the same clean way, exit 129: metctl does not
    reload its config in place (the loop, the drivers and the API are built from it); a
    restart applies a new one, and the shipped systemd unit restarts it (Restart=on-failure).
    Its default action killed the process at once, with no clean-up (HBase's balancer stayed
    off)."""

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGHUP:
            log.warning("SIGHUP: stopping cleanly (metctl does not reload its config in place: "
                        "restart it to apply a new one; under systemd it restarts by itself)",
                        extra={"event": "run.sighup"})
        log.info("%s: releasing leadership", signal.Signals(signum).name,
                 extra={"event": "ha.sigterm"})
        leadership.request_release()
        if then is not None:
            then(signum)
        else:
            leadership.exit_when_idle(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)


def read_leader(settings: HASettings, cluster: str, timeout_s: float = 5.0) -> str | None:
    """Who leads now (its identity), asked from ZooKeeper; None when nobody holds the lock."""
    if not settings.enabled:
        return None
    from kazoo.client import KazooClient  # noqa: PLC0415 — optional extra: metctl[ha]

    client = KazooClient(hosts=settings.zookeeper_hosts, timeout=settings.session_timeout_s)
    client.start(timeout=timeout_s)
    try:
        contenders = client.Lock(settings.election_path(cluster)).contenders()
        return contenders[0] if contenders else None
    finally:
        client.stop()
        client.close()
