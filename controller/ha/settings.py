"""Settings of leader election (`ha.*`): where the election lives in ZooKeeper and how long a
round trip proves leadership."""
from __future__ import annotations

import os
import socket

from pydantic import BaseModel, ConfigDict, Field, field_validator


class HASettings(BaseModel):
    """Leader election among several metctl instances watching the same cluster."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    zookeeper_hosts: str = Field(
        "",
        description="ZooKeeper connection string `host:port[,host:port…]` (the HBase quorum "
        "works). Empty: no leader election, this instance runs alone and acts.",
    )
    root_znode: str = Field(
        "/metctl",
        description="Znode under which metctl keeps its election: `<root_znode>/<cluster>/leader`.",
    )
    session_timeout_s: float = Field(
        10.0,
        gt=0,
        description="ZooKeeper session timeout requested, in seconds. A leader that loses its "
        "session stops acting; a dead leader is replaced after about this long. Must lie within "
        "the server's bounds (2 to 20 x tickTime) so the server grants at least this much.",
    )
    lease_fraction: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="Share of the session timeout for which one successful round trip to "
        "ZooKeeper proves leadership; past it the leader stops starting actions until a new "
        "round trip succeeds (fraction, 0..1).",
    )
    connect_timeout_s: float = Field(
        15.0,
        gt=0,
        description="How long startup waits for the first ZooKeeper connection, in seconds.",
    )
    identity: str = Field(
        "",
        description="This instance's name in the election and in logs. Empty: `<hostname>:<pid>`.",
    )

    @field_validator("root_znode")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if not value.startswith("/") or value.endswith("/") and value != "/":
            raise ValueError("an absolute znode path such as /metctl (no trailing slash)")
        return value

    @property
    def enabled(self) -> bool:
        return bool(self.zookeeper_hosts.strip())

    def resolved_identity(self) -> str:
        return self.identity or f"{socket.gethostname()}:{os.getpid()}"

    def election_path(self, cluster: str) -> str:
        root = "" if self.root_znode == "/" else self.root_znode
        return f"{root}/{cluster}/leader"
