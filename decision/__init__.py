"""metctl's decision core: pure functions from a ClusterSnapshot and decision memory to a Plan.

Imports nothing from monitor/, actuator/, controller/ or simulator/. No I/O, no clock, no
unseeded randomness.
"""
from decision.model import *  # noqa: F401,F403  (the model is the package's public surface)
