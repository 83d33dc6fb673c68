"""Scale-out lead time: how long a node the policy asks for takes to serve, measured from the
cluster's own past scale-outs (the decision's taken_at to the end of its plan, which the
control loop records: launch, boot, join and the moves onto the new node).

Until a scale-out has been measured the policy uses `prior_s` (policy.scale_out_lead_s). Each
measured scale-out moves the estimate half-way towards what it took (the last few count most:
a cloud's boot time drifts, a larger plan streams more data), within [min_s, max_s] so one
plan that waited on a stuck launch does not make the policy plan an hour ahead.

Pure: values in, values out; the decision memory keeps the estimate.
"""
from __future__ import annotations

from dataclasses import dataclass

MIN_S = 30.0     # shorter is a plan that launched nothing (nothing to learn from)
MAX_S = 3600.0   # longer is a stuck launch, not the cloud's boot time


@dataclass(frozen=True)
class LeadTime:
    """The lead time estimate, seconds, and how many scale-outs it was measured on."""

    seconds: float
    measured: int = 0

    def learn(self, took_s: float, weight: float = 0.5) -> LeadTime:
        """After one more scale-out that took `took_s` from decision to serving. A duration
        outside [MIN_S, MAX_S] says nothing about the lead (nothing launched, or stuck)."""
        if not MIN_S <= took_s <= MAX_S:
            return self
        if self.measured == 0:
            return LeadTime(took_s, 1)
        return LeadTime(self.seconds + weight * (took_s - self.seconds), self.measured + 1)

    def words(self) -> str:
        how = (f"measured on {self.measured} scale-out(s)" if self.measured
               else "scale_out_lead_s, not measured yet")
        return f"lead time {self.seconds:.0f} s ({how})"


__all__ = ["LeadTime", "MIN_S", "MAX_S"]
