"""RegionServer restarts with a profile: the settings a profile renders to, the property that
names the profile in hbase-site.xml (so it can be read back from the server's /conf), and the
`Restarter` that stops a RegionServer gracefully and starts it again with them (a command
template; the local cluster's is deploy/local_hbase/cluster.py restart-rs). Block cache and
global memstore size only change this way."""
from __future__ import annotations

import json
import subprocess
import tempfile
from typing import Mapping, Protocol, Sequence

from actuator.drivers import DriverError

PROFILE_KEY = "metctl.profile"  # written into a RegionServer's hbase-site.xml with its profile


class Restarter(Protocol):
    def __call__(self, server_id: str, settings: Mapping[str, str]) -> None:
        """Stop the RegionServer `server_id` ("host,port") gracefully, start it again with
        `settings` in its hbase-site.xml, and return once it serves again."""


class CommandRestarter:
    """Runs a command template to restart a RegionServer; `{server}` is replaced by the server
    id and `{settings}` by a JSON file of the settings. The local cluster's template is
    `python deploy/local_hbase/cluster.py --workdir W restart-rs {server} --settings {settings}`."""

    def __init__(self, template: Sequence[str], timeout_s: float = 180):
        self.template = list(template)
        self.timeout_s = timeout_s

    def __call__(self, server_id: str, settings: Mapping[str, str]) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", prefix="metctl-profile-") as f:
            json.dump(dict(settings), f)
            f.flush()
            cmd = [a.replace("{server}", server_id).replace("{settings}", f.name) for a in self.template]
            try:
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout_s)
            except subprocess.TimeoutExpired as e:
                raise DriverError(f"restart of {server_id} took over {self.timeout_s:.0f} s") from e
        if proc.returncode != 0:
            raise DriverError(f"restart of {server_id} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


def default_settings_for(profile: str) -> dict[str, str]:
    """The profile's RegionServer settings from profiles/ (the decision helper's renderer)."""
    try:
        from profiles import render_hbase_settings  # type: ignore[attr-defined]
    except ImportError as e:
        raise DriverError("profiles.render_hbase_settings is not available", retryable=False) from e
    return {str(k): str(v) for k, v in render_hbase_settings(profile).items()}
