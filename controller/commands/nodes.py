"""`metctl nodes list|launch|terminate` — the infrastructure driver by hand, with the same
tags and user data the daemon uses (`infrastructure:` in the config picks ec2, openstack or
local). Only nodes metctl owns in this cluster — launched by it, or adopted with
`infrastructure.adopt` — are listed; terminating anything else is refused with exit 2. These commands do not consult the data store: drain a node (or let the
daemon's plan do it) before terminating it by hand.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import asdict
from typing import Any

import click

from actuator.drivers import TAG_CLUSTER, TAG_LAUNCH, TAG_MANAGED, TAG_PROFILE, DriverError, NotOwnedError
from actuator.factory import UnsupportedDriver, make_infrastructure
from actuator.userdata import render_user_data
from controller.config_files import FILE_OR_NAME, load_given_config
from controller.errors import BadInput
from decision.model import PROFILES
from rich.console import Console
from rich.table import Table
import inspect

_config_option = click.option("--config", "config_file", metavar="FILE", default=None, type=FILE_OR_NAME,
                              help="metctl config (YAML): cluster name and infrastructure driver. Default: built-in.")
_format_option = click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
                              show_default=True)


def _driver(config_file: str | None):
    config = load_given_config(config_file)
    try:
        return config, make_infrastructure(config.infrastructure, config.cluster,
                                           profile_settings=config.profile_fields())
    except UnsupportedDriver as err:
        raise BadInput(config_file or "(built-in config)", "infrastructure.driver", str(err)) from None


def _print_nodes(nodes: list[Any], fmt: str, cluster: str) -> None:
    if fmt == "json":
        click.echo(json.dumps([{**asdict(n), "tags": dict(n.tags)} for n in nodes], indent=2, sort_keys=True))
        return

    table = Table(title=f"nodes of cluster {cluster} owned by metctl (launched or adopted)")
    for col in ("instance", "state", "profile", "address", "launched", "launch token"):
        table.add_column(col)
    for n in nodes:
        launched = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(n.launched_at)) if n.launched_at else ""
        token = "(adopted)" if n.adopted else n.tags.get(TAG_LAUNCH, "")
        table.add_row(n.instance_id, n.state, n.profile, n.address or "", launched, token)
    Console(width=160).print(table)


def _call_wait(wait: Any, iid: str, timeout_s: float) -> None:
    """The driver's own waiter; EC2's polls every WAIT_POLL_S (OpenStack's every
    infrastructure.openstack.wait_interval_s)."""

    if "interval_s" in inspect.signature(wait).parameters:
        wait(iid, timeout_s=timeout_s, interval_s=WAIT_POLL_S)
    else:
        wait(iid, timeout_s=timeout_s)


WAIT_POLL_S = 2.0


def _fail(err: DriverError) -> None:
    raise click.ClickException(str(err))


@click.group(name="nodes")
def command() -> None:
    """List, launch or terminate the nodes metctl owns (launched, tagged metctl:managed=true, or adopted)."""


@command.command(name="list")
@_config_option
@_format_option
def list_nodes(config_file: str | None, fmt: str) -> None:
    """Nodes metctl launched or adopted for this cluster (terminated ones excluded)."""
    config, driver = _driver(config_file)
    try:
        nodes = driver.nodes()
    except DriverError as err:
        _fail(err)
    _print_nodes(nodes, fmt, config.cluster)


@command.command(name="launch")
@click.option("--profile", type=click.Choice(PROFILES), default="default", show_default=True,
              help="Node profile (its settings go in the user data).")
@click.option("--count", type=click.IntRange(1, 20), default=1, show_default=True)
@click.option("--wait/--no-wait", default=False, help="Wait until every new node runs.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=600, show_default=True,
              help="Seconds to wait with --wait.")
@_config_option
@_format_option
def launch(profile: str, count: int, wait: bool, timeout_s: float, config_file: str | None, fmt: str) -> None:
    """Launch nodes with the daemon's tags and user data."""
    config, driver = _driver(config_file)
    batch = f"manual-{uuid.uuid4().hex[:12]}"
    ids = []
    fields = config.profile_fields()
    try:
        for k in range(count):
            tags = {TAG_MANAGED: "true", TAG_CLUSTER: config.cluster, TAG_PROFILE: profile,
                    TAG_LAUNCH: f"{batch}/{k}/1"}
            ids.append(driver.launch(profile, render_user_data(config.cluster, profile, fields(profile)), tags))
        if wait and hasattr(driver, "wait_running"):
            # the cloud's own waiting: boto3's instance_running waiter, openstacksdk's
            # wait_for_server (polling every infrastructure.openstack.wait_interval_s)
            for iid in ids:
                _call_wait(driver.wait_running, iid, timeout_s)
        elif wait:
            deadline = time.monotonic() + timeout_s
            while True:
                states = {n.instance_id: n.state for n in driver.nodes()}
                if all(states.get(i) == "running" for i in ids):
                    break
                bad = [i for i in ids if states.get(i) == "failed"]
                if bad:
                    raise click.ClickException(f"node(s) failed to start: {', '.join(bad)}")
                if time.monotonic() > deadline:
                    raise click.ClickException(f"not running after {timeout_s:g} s: "
                                               f"{', '.join(i for i in ids if states.get(i) != 'running')}")
                time.sleep(min(2.0, max(0.2, timeout_s / 100)))
        nodes = [n for n in driver.nodes() if n.instance_id in ids]
    except DriverError as err:
        _fail(err)
    _print_nodes(nodes, fmt, config.cluster)


@command.command(name="terminate")
@click.argument("instance_ids", nargs=-1, required=True)
@click.option("--wait/--no-wait", default=False, help="Wait until the nodes are gone.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=600, show_default=True)
@_config_option
def terminate(instance_ids: tuple[str, ...], wait: bool, timeout_s: float, config_file: str | None) -> None:
    """Terminate nodes metctl launched or adopted; anything else is refused (exit 2) and nothing is touched."""
    config, driver = _driver(config_file)
    try:
        owned = {n.instance_id for n in driver.nodes()}
    except DriverError as err:
        _fail(err)
    # check every id before terminating any: a refused command changes nothing
    for iid in instance_ids:
        if iid not in owned:
            raise BadInput("metctl nodes terminate", iid,
                           f"a node metctl owns in cluster {config.cluster} (not found among the nodes "
                           "it launched or adopted with infrastructure.adopt; metctl never terminates "
                           "what it did not launch)")
    try:
        for iid in instance_ids:
            try:
                driver.terminate(iid)
            except NotOwnedError as err:
                raise BadInput("metctl nodes terminate", iid, f"a node metctl owns ({err})") from None
            click.echo(f"terminating {iid}")
        if wait and hasattr(driver, "wait_terminated"):
            for iid in instance_ids:
                _call_wait(driver.wait_terminated, iid, timeout_s)
        elif wait:
            deadline = time.monotonic() + timeout_s
            while any(n.instance_id in instance_ids for n in driver.nodes()):
                if time.monotonic() > deadline:
                    raise click.ClickException(f"still there after {timeout_s:g} s")
                time.sleep(0.5)
    except DriverError as err:
        _fail(err)
