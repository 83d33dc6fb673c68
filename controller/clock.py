"""Clocks for the control loop: the loop asks `now()` and `sleep(s)` and nothing else, so the
daemon on real time (RealClock) and a simulation (the simulator's clock, whose `sleep` advances
the simulated cluster) run the same code. Tests use FakeClock: time moves only when told."""
from __future__ import annotations

import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Seconds (epoch for real time, simulated seconds for a simulation)."""

    def sleep(self, seconds: float) -> None:
        """Let `seconds` pass."""


class RealClock:
    def now(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class FakeClock:
    """Time that only moves when slept on (unit tests; never waits)."""

    def __init__(self, start: float = 0.0):
        self.t = float(start)
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += max(0.0, seconds)
