"""The fence, pure: from the events kazoo reports (acquired, round trip confirmed, suspended,
lost, released) and the time passed in, whether this instance may act now and why not. No
I/O, no clock of its own."""
from __future__ import annotations

import threading

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
