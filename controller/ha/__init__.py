"""High availability: one acting controller among several, elected through ZooKeeper
(leadership.py says how). Split along its seams: settings, the pure fence, kazoo leadership,
the fenced wrappers. kazoo is imported only when ZooKeeper is configured."""
from controller.ha.fence import Fence, NotLeader
from controller.ha.fenced import FencedDriver, FencedExecutor, fence_drivers
from controller.ha.leadership import Leadership, LeadershipListener, install_sigterm, read_leader
from controller.ha.settings import HASettings

__all__ = ["Fence", "FencedDriver", "FencedExecutor", "HASettings", "Leadership", "LeadershipListener",
           "NotLeader", "fence_drivers", "install_sigterm", "read_leader"]
