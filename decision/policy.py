"""Policy parameters (MET's defaults), selected by name: met | tiramola | static."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class PolicyConfig(BaseModel):
    """(placeholder: fields arrive with the issue that owns this section)"""

    model_config = ConfigDict(extra="forbid", frozen=True)
