"""Click option types that refuse what the commands cannot use: non-finite or absurd numbers
fail as a usage error (exit 2) naming the option, instead of a traceback-free exit 1 later."""
from __future__ import annotations

import math

import click


class FiniteFloat(click.ParamType):
    """A finite float in [lo, hi] (nan, inf and 1e308 are refused)."""

    name = "float"

    def __init__(self, lo: float = 0.0, hi: float = 1e6):
        self.lo, self.hi = lo, hi

    def convert(self, value, param, ctx):
        if isinstance(value, float) and math.isfinite(value) and self.lo <= value <= self.hi:
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"a number, got {value!r}", param, ctx)
        if not math.isfinite(number) or not self.lo <= number <= self.hi:
            self.fail(f"a finite number from {self.lo:g} to {self.hi:g}, got {value!r}", param, ctx)
        return number


# Seeds feed numpy's Generator (non-negative) and are reported in summaries.
SEED = click.IntRange(0, 2**32 - 1)
