"""Settings of the actuator: executor, infrastructure driver, data-store driver."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ExecutorSettings(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)


class InfrastructureSettings(BaseModel):
    """(placeholder)"""

    model_config = ConfigDict(extra="forbid", frozen=True)


class DataStoreSettings(BaseModel):
    """(placeholder)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
