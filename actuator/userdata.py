"""User data for a new node: a cloud-config that writes the node's cluster, profile and the
profile's settings to /etc/metctl/node.json, so the node's bootstrap (deploy/ cloud-init) can
render hbase-site.xml before starting the RegionServer. No credentials ever go in here.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any, Mapping

import yaml

NODE_FILE = "/etc/metctl/node.json"


def profile_settings(profile: str) -> Mapping[str, Any]:
    """The settings shipped in profiles/<profile>.yaml, or {} when that profile file is absent."""
    try:
        text = (resources.files("profiles") / f"{profile}.yaml").read_text()
    except (FileNotFoundError, ModuleNotFoundError, OSError):
        return {}
    data = yaml.safe_load(text)
    return data if isinstance(data, dict) else {}


def node_document(cluster: str, profile: str, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {"cluster": cluster, "profile": profile,
            "settings": dict(settings if settings is not None else profile_settings(profile))}


def render_user_data(cluster: str, profile: str, settings: Mapping[str, Any] | None = None) -> str:
    doc = node_document(cluster, profile, settings)
    body = json.dumps(doc, sort_keys=True, indent=2)
    indented = "\n".join("      " + line for line in body.splitlines())
    return ("#cloud-config\n"
            "write_files:\n"
            f"  - path: {NODE_FILE}\n"
            "    permissions: '0644'\n"
            "    content: |\n"
            f"{indented}\n")
