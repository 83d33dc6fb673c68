"""High availability: ZooKeeper leader election."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class HASettings(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
