"""Build the configured infrastructure driver (infrastructure.driver: ec2 | openstack | local).
The simulator's driver (`sim`) lives inside the simulated cluster and is built by the
simulator harness, not here."""
from __future__ import annotations

from actuator.drivers import InfrastructureDriver
from actuator.settings import InfrastructureSettings


class UnsupportedDriver(ValueError):
    """The configured driver cannot be built here (e.g. `sim` outside a simulation)."""


def make_infrastructure(settings: InfrastructureSettings, cluster: str) -> InfrastructureDriver:
    if settings.driver == "ec2":
        from actuator.ec2 import Ec2Driver

        return Ec2Driver(settings.ec2, cluster, adopt=settings.adopt)
    if settings.driver == "openstack":
        from actuator.openstack import OpenStackDriver

        return OpenStackDriver(settings.openstack, cluster, adopt=settings.adopt)
    if settings.driver == "local":
        from actuator.local import LocalDriver

        return LocalDriver(settings.local, cluster, adopt=settings.adopt)
    raise UnsupportedDriver(f"driver {settings.driver!r} has no nodes outside a simulation; "
                            "expected ec2, openstack or local")
