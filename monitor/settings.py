"""Settings of the monitor: metric sources, sampling, smoothing."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class MonitorSettings(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
