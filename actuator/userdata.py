"""User data for a new node: a cloud-config that writes the node's cluster, profile and the
profile's settings (its YAML fields and its hbase-site.xml properties) to /etc/metctl/node.json,
then runs the node's bootstrap (deploy/node/bootstrap.sh, same form as deploy/node/cloud-init.yaml),
which renders hbase-site.xml and starts the RegionServer. No credentials ever go in here.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any, Mapping

import yaml

NODE_FILE = "/etc/metctl/node.json"
# deploy/node/bootstrap.sh, where deploy/node/cloud-init.yaml expects the node's image to hold it
BOOTSTRAP = "/opt/metctl/deploy/node/bootstrap.sh"


def profile_settings(profile: str) -> Mapping[str, Any]:
    """The settings shipped in profiles/<profile>.yaml, or {} when that profile file is absent."""
    try:
        text = (resources.files("profiles") / f"{profile}.yaml").read_text()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return {}
    data = yaml.safe_load(text)
    return data if isinstance(data, dict) else {}


def hbase_site(profile: str, settings: Mapping[str, Any]) -> dict[str, str]:
    """The profile's hbase-site.xml properties (profiles' renderer), for a node that has no
    metctl to render them: deploy/node/apply_profile.py merges this map. {} when `settings`
    is no valid profile (e.g. a profile file that is not shipped)."""
    from profiles import ProfileError, parse_profile, render_hbase_settings

    try:
        return render_hbase_settings(parse_profile(dict(settings), f"profiles/{profile}.yaml"))
    except ProfileError:
        return {}


def node_document(cluster: str, profile: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """{cluster, profile, settings: the profile's YAML fields, hbase_site: its hbase-site.xml
    properties}."""
    settings = dict(settings if settings is not None else profile_settings(profile))
    return {"cluster": cluster, "profile": profile, "settings": settings,
            "hbase_site": hbase_site(profile, settings)}


def render_user_data(cluster: str, profile: str, settings: Mapping[str, Any] | None = None) -> str:
    doc = node_document(cluster, profile, settings)
    body = json.dumps(doc, sort_keys=True, indent=2)
    indented = "\n".join("      " + line for line in body.splitlines())
    return ("#cloud-config\n"
            "write_files:\n"
            f"  - path: {NODE_FILE}\n"
            "    permissions: '0644'\n"
            "    content: |\n"
            f"{indented}\n"
            # the node's bootstrap (deploy/node): Java, HBase's jars, hbase-site.xml from the
            # profile above, the RegionServer. Skipped with a line in cloud-init's log when the
            # image has no metctl checkout in /opt/metctl.
            "runcmd:\n"
            f"  - [sh, -c, 'if [ -x {BOOTSTRAP} ]; then exec {BOOTSTRAP}; "
            f"else echo \"metctl: no {BOOTSTRAP} in this image: RegionServer not started\" >&2; "
            "exit 1; fi']\n")
