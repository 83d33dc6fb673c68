"""metctl's decision core: pure functions from a ClusterSnapshot and decision memory to a Plan.

Imports nothing from monitor/, actuator/, controller/ or simulator/. No I/O, no clock, no
unseeded randomness. The entry point is `decide(snapshot, policy, memory) -> Plan`; the plan's
`memory` is what to persist for the next decision.
"""
from decision.model import *  # noqa: F401,F403  (the model is the package's public surface)
from decision.model import __all__ as _model_names
from decision.core import decide  # noqa: E402
from decision.policy import PolicyConfig  # noqa: E402

__all__ = ["decide", "PolicyConfig", *_model_names]
