"""Build the configured infrastructure driver (infrastructure.driver: ec2 | openstack | local)
and the Cassandra data-store driver (datastore.driver: cassandra; the HBase one needs its py4j
gateway and is opened by `metctl run` itself). The simulator's drivers (`sim`) live inside the
simulated cluster and are built by the simulator harness, not here."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from actuator.drivers import InfrastructureDriver
from actuator.settings import CassandraStoreSettings, InfrastructureSettings


class UnsupportedDriver(ValueError):
    """The configured driver cannot be built here (e.g. `sim` outside a simulation)."""


def make_infrastructure(settings: InfrastructureSettings, cluster: str, *,
                        profile_settings: Callable[[str], Mapping[str, Any]] | None = None
                        ) -> InfrastructureDriver:
    """profile_settings(profile): the fields of the profile a local node starts with (the
    clouds' nodes get theirs in the user data the executor renders)."""
    if settings.driver == "ec2":
        from actuator.ec2 import Ec2Driver

        return Ec2Driver(settings.ec2, cluster, adopt=settings.adopt)
    if settings.driver == "openstack":
        from actuator.openstack import OpenStackDriver

        return OpenStackDriver(settings.openstack, cluster, adopt=settings.adopt)
    if settings.driver == "local":
        from actuator.local import LocalDriver

        return LocalDriver(settings.local, cluster, adopt=settings.adopt,
                           profile_settings=profile_settings)
    raise UnsupportedDriver(f"driver {settings.driver!r} has no nodes outside a simulation; "
                            "expected ec2, openstack or local")


def make_cassandra_driver(settings: CassandraStoreSettings, state_dir: str | Path,
                          restart_timeout_s: float = 300) -> Any:
    """The Cassandra data-store driver (datastore.driver: cassandra): a CQL connection to the
    contact points and NodeTool through the configured commands; NodeTool logs and the nodes'
    profiles kept in `state_dir`. Imported here so metctl runs without the cassandra extra
    until a config asks for it. Unreachable cluster or no client: DriverError."""
    from actuator.cassandra import open_cassandra_driver

    return open_cassandra_driver(settings, state_dir, restart_timeout_s=restart_timeout_s)
