"""Settings of the simulated cluster."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SimulatorSettings(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
