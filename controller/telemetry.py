"""Telemetry: Prometheus endpoint and logging."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TelemetrySettings(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
