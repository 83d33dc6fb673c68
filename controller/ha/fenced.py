"""The fenced wrappers: drivers whose cluster-changing calls ask the leadership fence first,
and the executor as the control loop sees it behind the fence. The fenced drivers are given to
the executor when it is built (`fence_drivers`); `FencedExecutor` refuses an executor whose
drivers are not fenced, instead of swapping them in behind its back."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controller.ha.fence import NotLeader
from controller.ha.leadership import Leadership
from decision.model import Plan


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


def fence_drivers(infra: Any, datastore: Any, leadership: Leadership) -> tuple[FencedDriver, FencedDriver]:
    """The infrastructure and data-store drivers behind the fence, to build the executor with."""
    def wrap(driver: Any) -> FencedDriver:
        return driver if isinstance(driver, FencedDriver) else FencedDriver(driver, leadership)
    return wrap(infra), wrap(datastore)


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
        # fence again, so leadership lost in the middle of a tick stops the next call. The
        # executor must have been built with fenced drivers (fence_drivers).
        for attr in ("infra", "ds"):
            driver = getattr(executor, attr, None)
            if driver is not None and not isinstance(driver, FencedDriver):
                raise TypeError(f"executor.{attr} is not fenced: build the executor with "
                                "fence_drivers(infra, datastore, leadership)")

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

    def submit(self, plan: Plan, plan_id: str) -> None:
        with self.leadership.acting():
            self._ensure_synced()
            self.executor.submit(plan, plan_id)

    def extend(self, plan: Any) -> int:
        if not self.leadership.may_act():
            return 0
        with self.leadership.acting():
            self._ensure_synced()
            return int(self.executor.extend(plan))

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
