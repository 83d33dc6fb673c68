"""OpenStack infrastructure driver (openstacksdk).

Connects with `openstack.connect(cloud=…)` (clouds.yaml) or, without a cloud name, from the
OS_* environment variables — openstacksdk's own mechanisms; this module never sees or logs a
password or token. New servers are created through the SDK's cloud layer (image and flavor by
name or id, key pair, security groups, optional network), with metctl's tags as server
metadata (`metctl:managed=true`, `metctl:cluster`, `metctl:profile`, `metctl:launch`) and the
profile's user data; the launch does not wait (the executor observes BUILD -> ACTIVE).
Ownership is the metadata: only servers carrying both metctl keys for this cluster — or matched
by an `infrastructure.adopt` entry (ids, metadata, address; actuator/adoption.py) — are listed
or deleted. `auto_ip` (default off) asks the SDK for a floating IP once a server is ACTIVE (it
needs Neutron); `wait_interval_s` is the poll interval of the blocking waits used by the CLI.
"""
from __future__ import annotations

import logging
from typing import Any, Mapping

from actuator import adoption
from actuator.drivers import (
    TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DriverError, ManagedNode, NotOwnedError,
)
from actuator.settings import AdoptEntry, OpenStackSettings

log = logging.getLogger("metctl.actuator.openstack")

_STATES = {"BUILD": "booting", "ACTIVE": "running", "REBOOT": "booting", "HARD_REBOOT": "booting",
           "REBUILD": "booting", "ERROR": "failed", "SHUTOFF": "failed", "STOPPED": "failed",
           "SUSPENDED": "failed", "PAUSED": "failed", "DELETED": "terminated", "SOFT_DELETED": "terminated",
           "SHELVED": "failed", "SHELVED_OFFLOADED": "failed"}


def _fatal_http(status: int | None, message: str) -> bool:
    if status in (400, 401, 403, 404):
        return True  # bad request, bad credentials, quota/permission, no such image/flavor
    return "quota" in message.lower()


class OpenStackDriver:
    """InfrastructureDriver on OpenStack Nova."""

    def __init__(self, settings: OpenStackSettings, cluster: str, *, connection: Any | None = None,
                 adopt: tuple[AdoptEntry, ...] = ()):
        self.settings, self.cluster, self.adopt = settings, cluster, adopt
        self._conn = connection
        self._floating_done: set[str] = set()

    @property
    def conn(self) -> Any:
        if self._conn is None:
            import openstack  # the [openstack] extra

            try:
                self._conn = (openstack.connect(cloud=self.settings.cloud) if self.settings.cloud
                              else openstack.connect())
            except Exception as err:  # noqa: BLE001
                raise self._error("connecting to OpenStack", err) from None
        return self._conn

    def _error(self, what: str, err: Exception) -> DriverError:
        from openstack import exceptions as osx

        if isinstance(err, osx.NotFoundException):  # no such image / flavor / server
            return DriverError(f"{what}: {err}", retryable=False)
        if isinstance(err, osx.HttpException):
            status = getattr(err, "status_code", None)
            detail = getattr(err, "details", None) or str(err)
            return DriverError(f"{what}: HTTP {status}: {detail}", retryable=not _fatal_http(status, str(detail)))
        if isinstance(err, osx.SDKException):  # e.g. image or flavor not found, config errors
            return DriverError(f"{what}: {err}", retryable=False)
        name = type(err).__name__
        # keystoneauth connection failures / timeouts: the API may be back in a moment
        return DriverError(f"{what}: {name}: {err}", retryable=True)

    # ------------------------------------------------------------------ protocol
    def launch(self, profile: str, user_data: str, tags: Mapping[str, str]) -> str:
        s = self.settings
        if not s.image:
            raise DriverError("infrastructure.openstack.image is empty: no image to boot", retryable=False)
        meta = {**tags, TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile}
        token = tags.get(TAG_LAUNCH, "")
        suffix = token.replace("/", "-")[-40:] if token else profile
        name = f"{s.name_prefix}-{self.cluster}-{suffix}"
        kwargs: dict[str, Any] = {"image": s.image, "flavor": s.flavor, "auto_ip": False, "wait": False,
                                  "meta": meta, "userdata": user_data}
        if s.key_name:
            kwargs["key_name"] = s.key_name
        if s.security_groups:
            kwargs["security_groups"] = list(s.security_groups)
        if s.network:
            kwargs["network"] = s.network
        try:
            server = self.conn.create_server(name, **kwargs)
        except Exception as err:  # noqa: BLE001
            raise self._error(f"create_server {name} ({s.flavor}, {s.image})", err) from None
        log.info("created server %s (%s, profile %s, cluster %s)", server["id"], name, profile, self.cluster)
        return server["id"]

    def _address(self, server: Any) -> str | None:
        mode = self.settings.address
        if mode == "name":
            return server.name
        addrs = server.addresses or {}
        wanted = "floating" if mode == "public" else "fixed"
        for net in addrs.values():
            for a in net:
                if a.get("version") == 4 and a.get("OS-EXT-IPS:type", "fixed") == wanted:
                    return a["addr"]
        if mode == "public":
            return server.access_ipv4 or None
        return None

    def _owned(self, server: Any) -> bool:
        meta = server.metadata or {}
        if adoption.launched_here(meta, self.cluster):
            return True
        # an adopted server is matched by the address it has now (any state: a stopped one
        # must stay owned so that it can still be deleted)
        return adoption.adopted(self.adopt, self.cluster, instance_id=server.id,
                                address=self._address(server), tags=meta)

    def _node(self, server: Any) -> ManagedNode:
        meta = dict(server.metadata or {})
        state = _STATES.get(server.status, "booting")
        if server.task_state == "deleting":
            state = "stopping"
        launched = None
        try:
            from datetime import datetime

            launched = datetime.fromisoformat(server.created_at.replace("Z", "+00:00")).timestamp()
        except (AttributeError, TypeError, ValueError):
            pass
        return ManagedNode(instance_id=server.id, state=state, profile=meta.get(TAG_PROFILE, "default"),
                           address=self._address(server) if state in ("running", "stopping") else None,
                           launched_at=launched, tags=meta,
                           adopted=not adoption.launched_here(meta, self.cluster))

    def nodes(self) -> list[ManagedNode]:
        try:
            servers = [sv for sv in self.conn.compute.servers(details=True) if self._owned(sv)]
        except Exception as err:  # noqa: BLE001
            raise self._error("listing servers", err) from None
        out = [self._node(sv) for sv in servers]
        if self.settings.auto_ip:
            for sv, node in zip(servers, out):
                if node.state == "running" and sv.id not in self._floating_done:
                    try:
                        self.conn.add_auto_ip(sv, wait=False)
                        self._floating_done.add(sv.id)
                    except Exception as err:  # noqa: BLE001
                        log.warning("floating IP for %s failed: %s", sv.id, err)
        return [n for n in out if n.state != "terminated"]

    def _get(self, instance_id: str) -> Any | None:
        from openstack import exceptions as osx

        try:
            return self.conn.compute.get_server(instance_id)
        except osx.NotFoundException:
            return None
        except Exception as err:  # noqa: BLE001
            raise self._error(f"looking up server {instance_id}", err) from None

    def terminate(self, instance_id: str) -> None:
        server = self._get(instance_id)
        if server is None:
            raise NotOwnedError(f"no server {instance_id}: metctl deletes only servers it created")
        if not self._owned(server):
            raise NotOwnedError(adoption.not_owned(f"server {instance_id}", self.cluster))
        if server.task_state == "deleting":
            return
        try:
            self.conn.compute.delete_server(server, ignore_missing=True)
        except Exception as err:  # noqa: BLE001
            raise self._error(f"deleting server {instance_id}", err) from None
        log.info("deleting server %s (cluster %s)", instance_id, self.cluster)

    # ------------------------------------------------------------------ blocking helpers (CLI)
    def wait_running(self, instance_id: str, *, timeout_s: float = 600.0) -> ManagedNode:
        server = self._get(instance_id)
        if server is None:
            raise DriverError(f"no server {instance_id}", retryable=False)
        try:
            server = self.conn.compute.wait_for_server(server, status="ACTIVE", failures=["ERROR"],
                                                       interval=self.settings.wait_interval_s, wait=int(timeout_s))
        except Exception as err:  # noqa: BLE001
            raise self._error(f"waiting for server {instance_id}", err) from None
        return self._node(server)

    def wait_terminated(self, instance_id: str, *, timeout_s: float = 600.0) -> None:
        server = self._get(instance_id)
        if server is None:
            return
        try:
            self.conn.compute.wait_for_delete(server, interval=self.settings.wait_interval_s, wait=int(timeout_s))
        except Exception as err:  # noqa: BLE001
            raise self._error(f"waiting for server {instance_id} to go", err) from None
