"""Which nodes metctl owns: those it launched (tagged `metctl:managed=true` and
`metctl:cluster=<cluster>`) and those the operator adopted (`infrastructure.adopt`, by instance
id, host and/or tags). Only an owned node is ever terminated; every infrastructure driver asks
this module, so "owned" means one thing everywhere.

A node of an existing cluster that is neither launched nor adopted is still drained by a
scale-in (its server decommissioned in the data store) but never terminated: the executor
skips the terminate step at prepare with `drained_not_terminated()` as its note.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from actuator.drivers import TAG_CLUSTER, TAG_MANAGED
from actuator.settings import AdoptEntry

# The config key an operator adds a node to; named in every refusal and drain-only note.
ADOPT_KEY = "infrastructure.adopt"


def launched_here(tags: Mapping[str, str], cluster: str) -> bool:
    """metctl launched this node for `cluster` (its own tags say so)."""
    return tags.get(TAG_MANAGED) == "true" and tags.get(TAG_CLUSTER) == cluster


def _matches(entry: AdoptEntry, instance_id: str, address: str | None, tags: Mapping[str, str]) -> bool:
    if entry.instance_ids and instance_id not in entry.instance_ids:
        return False
    if entry.hosts and (address is None or address not in entry.hosts):
        return False
    return all(tags.get(k) == v for k, v in entry.tags.items())


def adopted(entries: Iterable[AdoptEntry], cluster: str, *, instance_id: str, address: str | None,
            tags: Mapping[str, str]) -> bool:
    """An adopt entry matches this node, and it is not another metctl cluster's node (adopting
    that one would let this cluster terminate a node the other still counts on)."""
    other = tags.get(TAG_CLUSTER)
    if other is not None and other != cluster:
        return False
    return any(_matches(e, instance_id, address, tags) for e in entries)


def owned(entries: Iterable[AdoptEntry], cluster: str, *, instance_id: str, address: str | None,
          tags: Mapping[str, str]) -> bool:
    """Launched by metctl for `cluster`, or adopted: the only nodes metctl may terminate."""
    return launched_here(tags, cluster) or adopted(entries, cluster, instance_id=instance_id,
                                                   address=address, tags=tags)


def drained_not_terminated(host: str) -> str:
    """The note of a terminate step skipped because metctl does not own the node."""
    return (f"drained, not terminated: metctl did not launch {host}; adopt it with {ADOPT_KEY} "
            "to let metctl terminate it")


def not_owned(what: str, cluster: str) -> str:
    """The NotOwnedError text of a driver asked to terminate a node it does not own."""
    return (f"{what} is not tagged {TAG_MANAGED}=true, {TAG_CLUSTER}={cluster} and no {ADOPT_KEY} "
            "entry matches it: metctl did not launch it")
