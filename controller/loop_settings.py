"""Settings of the control loop: intervals, holds, cooldowns."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class LoopSettings(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
