"""The demand view sizing from demand decides on, built once a decision (rules/measure.py):
each node's demand (decision/demand.py), the capacity of a node at the SLO (decision/capacity.py,
learned per profile), the demand's forecast over the scale-out lead time (decision/forecast.py,
decision/lead_time.py) and its recent peak, which nodes are short now and which answer slowly.

Units: node-loads, 1.0 = one node's CPU fully busy. A node may be planned at `u_max` of it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from decision.capacity import Capacity
from decision.demand import Demands
from decision.forecast import Forecast
from decision.lead_time import LeadTime


@dataclass(frozen=True)
class DemandView:
    demands: Demands
    profile: str                  # the profile new nodes take (and capacity is read for)
    capacity: Capacity | None     # that profile's, once learned
    u_max: float                  # node-loads a node may carry within the SLO, with headroom
    forecast: Forecast            # demand now and over the lead time
    lead: LeadTime
    peak: float                   # the most demand of the last scale_in_window_s
    peak_long: float              # ... of twice that
    rise: float                   # room a scale-in leaves: demand x this may come within a lead
    short: tuple[str, ...]        # nodes whose requests queue, are dropped or miss the SLO
    slow: tuple[str, ...]         # nodes slower than latency_slo_ms x scale_in_latency_fraction
    headroom: float = 0.0         # slo_headroom: the margin kept under the latency objective

    def nodes_for(self, demand: float, band: float = 0.0) -> int:
        """The fewest nodes that carry `demand` at u_max x (1 - band) each (at least 1)."""
        per = self.u_max * (1.0 - band)
        return max(1, math.ceil(demand / per - 1e-9)) if per > 0 else 1

    @property
    def out_demand(self) -> float:
        """What a scale-out sizes for: demand now or over the lead time, the larger."""
        return max(self.forecast.now, self.forecast.ahead)

    @property
    def in_demand(self) -> float:
        """What a scale-in must still fit: now, the forecast, the recent peak."""
        return max(self.forecast.now, self.forecast.ahead, self.peak)

    def room(self, peak: float) -> float:
        """What a scale-in must leave room for: the demand now risen by `rise` within a lead
        time, or `peak` and the forecast when more. A peak already seen is not risen again:
        `rise` is how far demand climbs from where it is, and a peak is where it got to."""
        return max(self.forecast.now * self.rise, self.forecast.ahead, peak)

    def words(self) -> str:
        d, f = self.demands, self.forecast
        asked = (f", {d.asked:,.0f} requests/s asked of {d.served:,.0f} served"
                 if d.asked > d.served * 1.001 else f", {d.served:,.0f} requests/s")
        cap = (self.capacity.words(self.profile) if self.capacity is not None else
               f"a {self.profile} node runs up to {self.u_max:.0%} CPU (capacity not learned yet)")
        margin = f" less {self.headroom:.0%} headroom" if self.headroom > 0 else ""
        if f.judged:
            record = (f"; its trend followed x{f.skill:.2f}, as far as the rises of its last "
                      f"{f.judged} forecasts came true")
        elif f.slope > 0 and f.stands_out < 1:
            record = (f"; its trend followed x{f.stands_out:.2f}, as far as it stands out of "
                      f"its samples' noise (no forecast judged yet)")
        else:
            record = ""
        cycle = ""
        if f.cycle is not None:
            c = f.cycle
            cycle = (f"; {c.words()} had {c.demand:.2f} node-loads over that stretch "
                     f"(x{c.level:.2f}, the demand now against the same time then)")
        return (f"demand {f.now:.2f} node-loads{asked}, {f.ahead:.2f} forecast in "
                f"{f.horizon_s:.0f} s ({self.lead.words()}{record}{cycle}), peak {self.peak:.2f} "
                f"over the scale-in window; {cap}{margin}")


__all__ = ["DemandView"]
