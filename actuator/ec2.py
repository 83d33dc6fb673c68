"""EC2 infrastructure driver (boto3).

New nodes are `run_instances` with the configured image, instance type, subnet, security
groups, key pair and IAM instance profile, the metctl tags (`metctl:managed=true`,
`metctl:cluster`, `metctl:profile`, `metctl:launch`) and the profile's user data. Owned nodes are
listed by tag filter (terminated ones excluded: EC2 keeps listing them for a while), plus the
instances `infrastructure.adopt` names (one describe call per entry, its instance ids, tags and
hosts as EC2 filters, checked again by actuator/adoption.py). Only an owned instance — both
metctl tags of this cluster, or adopted — is ever terminated; anything else raises NotOwnedError.

Credentials come from the standard AWS chain (environment, shared config/credentials files,
SSO, instance profile) through boto3's own session; this module never reads, stores or logs
them. `endpoint_url` points boto3 at another endpoint (a moto server in the tests).
"""
from __future__ import annotations

import hashlib
import logging
from typing import Any, Mapping

from actuator import adoption
from actuator.drivers import (
    TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DriverError, ManagedNode, NotOwnedError,
)
from actuator.settings import AdoptEntry, Ec2Settings

log = logging.getLogger("metctl.actuator.ec2")

# EC2 instance state -> metctl's lifecycle (drivers.INSTANCE_STATES).
_STATES = {"pending": "booting", "running": "running", "shutting-down": "stopping",
           "stopping": "stopping", "stopped": "failed", "terminated": "terminated"}
_LIVE = ["pending", "running", "shutting-down", "stopping", "stopped"]
# Error codes that will not go away by trying again (quota, bad ids, permissions).
_FATAL_PREFIXES = ("InstanceLimitExceeded", "VcpuLimitExceeded", "InvalidAMIID", "InvalidParameter",
                   "InvalidSubnetID", "InvalidGroup", "InvalidKeyPair", "UnauthorizedOperation",
                   "AuthFailure", "InvalidClientTokenId", "OptInRequired", "Unsupported",
                   "InvalidInstanceID", "MissingParameter", "InvalidInstanceType")
# Ec2Settings.address -> (instance attribute, describe_instances filter naming it)
_ADDRESS = {"private_ip": ("PrivateIpAddress", "private-ip-address"),
            "private_dns": ("PrivateDnsName", "private-dns-name"),
            "public_ip": ("PublicIpAddress", "ip-address"),
            "public_dns": ("PublicDnsName", "dns-name")}


def _client_token(token: str) -> str:
    """EC2's idempotency token (≤ 64 ASCII): a retried launch with the same metctl token
    returns the instance of the first call instead of a second one."""
    return hashlib.sha256(token.encode()).hexdigest()[:64]


class Ec2Driver:
    """InfrastructureDriver on EC2."""

    def __init__(self, settings: Ec2Settings, cluster: str, *, client: Any | None = None,
                 adopt: tuple[AdoptEntry, ...] = ()):
        self.settings, self.cluster, self.adopt = settings, cluster, adopt
        if client is None:
            import boto3  # the [ec2] extra

            session = boto3.session.Session(region_name=settings.region)
            client = session.client("ec2", endpoint_url=settings.endpoint_url)
        self.ec2 = client

    # ------------------------------------------------------------------ errors
    def _error(self, what: str, err: Exception) -> DriverError:
        from botocore.exceptions import BotoCoreError, ClientError

        if isinstance(err, ClientError):
            code = err.response.get("Error", {}).get("Code", "")
            message = err.response.get("Error", {}).get("Message", "")
            fatal = code.startswith(_FATAL_PREFIXES)
            return DriverError(f"{what}: {code}: {message}", retryable=not fatal)
        if isinstance(err, BotoCoreError):  # connection errors, timeouts, missing credentials
            name = type(err).__name__
            fatal = name in ("NoCredentialsError", "PartialCredentialsError", "NoRegionError")
            return DriverError(f"{what}: {name}: {err}", retryable=not fatal)
        return DriverError(f"{what}: {err}")

    # ------------------------------------------------------------------ protocol
    def launch(self, profile: str, user_data: str, tags: Mapping[str, str]) -> str:
        s = self.settings
        if not s.image_id:
            raise DriverError("infrastructure.ec2.image_id is empty: no image to launch", retryable=False)
        all_tags = {**s.extra_tags, **tags, TAG_MANAGED: "true", TAG_CLUSTER: self.cluster, TAG_PROFILE: profile}
        kwargs: dict[str, Any] = {
            "ImageId": s.image_id, "InstanceType": s.instance_type, "MinCount": 1, "MaxCount": 1,
            "UserData": user_data,
            "TagSpecifications": [{"ResourceType": "instance",
                                   "Tags": [{"Key": k, "Value": v} for k, v in sorted(all_tags.items())]}],
        }
        if tags.get(TAG_LAUNCH):
            kwargs["ClientToken"] = _client_token(tags[TAG_LAUNCH])
        if s.subnet_id:
            kwargs["SubnetId"] = s.subnet_id
        if s.security_group_ids:
            kwargs["SecurityGroupIds"] = list(s.security_group_ids)
        if s.key_name:
            kwargs["KeyName"] = s.key_name
        if s.iam_instance_profile:
            key = "Arn" if s.iam_instance_profile.startswith("arn:") else "Name"
            kwargs["IamInstanceProfile"] = {key: s.iam_instance_profile}
        try:
            reply = self.ec2.run_instances(**kwargs)
        except Exception as err:  # noqa: BLE001 — mapped to DriverError with retryability
            raise self._error(f"run_instances ({s.instance_type}, {s.image_id})", err) from None
        iid = reply["Instances"][0]["InstanceId"]
        log.info("launched %s (profile %s, cluster %s)", iid, profile, self.cluster)
        return iid

    def _describe(self, filters: list[dict[str, Any]], ids: list[str] | None = None) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        kwargs: dict[str, Any] = {"Filters": filters}
        if ids:
            kwargs["InstanceIds"] = ids
        try:
            for page in self.ec2.get_paginator("describe_instances").paginate(**kwargs):
                for res in page.get("Reservations", []):
                    out.extend(res.get("Instances", []))
        except Exception as err:  # noqa: BLE001
            raise self._error("describe_instances", err) from None
        return out

    def _node(self, inst: Mapping[str, Any]) -> ManagedNode:
        tags = {t["Key"]: t["Value"] for t in inst.get("Tags", [])}
        attr = _ADDRESS[self.settings.address][0]
        launched = inst.get("LaunchTime")
        return ManagedNode(
            instance_id=inst["InstanceId"], state=_STATES.get(inst["State"]["Name"], "failed"),
            profile=tags.get(TAG_PROFILE, "default"), address=inst.get(attr) or None,
            launched_at=launched.timestamp() if launched is not None else None, tags=tags,
            adopted=not adoption.launched_here(tags, self.cluster))

    def _owned(self, node: ManagedNode) -> bool:
        return adoption.owned(self.adopt, self.cluster, instance_id=node.instance_id,
                              address=node.address, tags=node.tags)

    def _adopt_filters(self, entry: AdoptEntry) -> list[dict[str, Any]]:
        """EC2 filters narrowing one adopt entry server-side (all must hold, like the entry)."""
        filters = [{"Name": "instance-state-name", "Values": _LIVE}]
        if entry.instance_ids:
            filters.append({"Name": "instance-id", "Values": list(entry.instance_ids)})
        if entry.hosts:
            filters.append({"Name": _ADDRESS[self.settings.address][1], "Values": list(entry.hosts)})
        filters += [{"Name": f"tag:{k}", "Values": [v]} for k, v in sorted(entry.tags.items())]
        return filters

    def nodes(self) -> list[ManagedNode]:
        filters = [{"Name": f"tag:{TAG_MANAGED}", "Values": ["true"]},
                   {"Name": f"tag:{TAG_CLUSTER}", "Values": [self.cluster]},
                   {"Name": "instance-state-name", "Values": _LIVE}]
        out = {n.instance_id: n for n in map(self._node, self._describe(filters))}
        for entry in self.adopt:
            for node in map(self._node, self._describe(self._adopt_filters(entry))):
                if node.instance_id not in out and self._owned(node):
                    out[node.instance_id] = node
        return [out[k] for k in sorted(out)]

    def terminate(self, instance_id: str) -> None:
        try:
            found = self._describe([], ids=[instance_id])
        except DriverError as err:
            if "InvalidInstanceID" in str(err):
                raise NotOwnedError(f"no instance {instance_id}: metctl terminates only nodes it launched") from None
            raise
        if not found:
            raise NotOwnedError(f"no instance {instance_id}: metctl terminates only nodes it launched")
        if not self._owned(self._node(found[0])):
            raise NotOwnedError(adoption.not_owned(f"instance {instance_id}", self.cluster))
        if found[0]["State"]["Name"] in ("shutting-down", "terminated"):
            return
        try:
            self.ec2.terminate_instances(InstanceIds=[instance_id])
        except Exception as err:  # noqa: BLE001
            raise self._error(f"terminate_instances {instance_id}", err) from None
        log.info("terminating %s (cluster %s)", instance_id, self.cluster)

    # ------------------------------------------------------------------ blocking helpers (CLI)
    def wait_running(self, instance_id: str, *, timeout_s: float = 600.0, interval_s: float = 5.0) -> ManagedNode:
        """Block until the instance runs (boto3's `instance_running` waiter); for `metctl nodes launch --wait`."""
        attempts = max(1, int(timeout_s / max(interval_s, 0.1)))
        try:
            self.ec2.get_waiter("instance_running").wait(
                InstanceIds=[instance_id], WaiterConfig={"Delay": max(1, round(interval_s)), "MaxAttempts": attempts})
        except Exception as err:  # noqa: BLE001
            raise self._error(f"waiting for {instance_id} to run", err) from None
        return self._node(self._describe([], ids=[instance_id])[0])

    def wait_terminated(self, instance_id: str, *, timeout_s: float = 600.0, interval_s: float = 5.0) -> None:
        attempts = max(1, int(timeout_s / max(interval_s, 0.1)))
        try:
            self.ec2.get_waiter("instance_terminated").wait(
                InstanceIds=[instance_id], WaiterConfig={"Delay": max(1, round(interval_s)), "MaxAttempts": attempts})
        except Exception as err:  # noqa: BLE001
            raise self._error(f"waiting for {instance_id} to terminate", err) from None
