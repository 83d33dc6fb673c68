"""A local HBase process restarted on a work directory whose recorded random port another
cluster on the machine took meanwhile gets new ports (deploy/local_hbase/cluster.py), instead
of dying with "Address already in use"; fixed ports stay as configured."""
from __future__ import annotations

import random
import socket

from deploy.local_hbase.cluster import LocalHBase
from deploy.localproc import free_port, port_free


def test_a_random_port_taken_since_is_picked_again_and_recorded(tmp_path) -> None:
    cluster = LocalHBase(tmp_path / "hbase", quota=False)
    rs = cluster._define("rs1", "rs")
    assert cluster.with_free_ports(rs) == rs  # still free: kept
    with socket.socket() as other:
        other.bind(("127.0.0.1", rs.port))
        other.listen()
        again = cluster.with_free_ports(rs)
        assert again.port != rs.port and port_free(again.port)
        assert cluster.proc("rs1") == again  # recorded: its conf is written with the new ports
        assert again.conf_dir == rs.conf_dir and again.log == rs.log


def test_fixed_ports_are_kept_even_when_taken(tmp_path) -> None:
    cluster = LocalHBase(tmp_path / "hbase", quota=False, base_port=free_port(20_000, 30_000))
    master = cluster._define("master", "master")
    with socket.socket() as other:
        other.bind(("127.0.0.1", master.port))
        other.listen()
        assert cluster.with_free_ports(master) == master


def test_processes_defined_before_any_binds_never_share_a_port(tmp_path, monkeypatch) -> None:
    # Ports are bound seconds after they are picked: a master's info port and a RegionServer's
    # RPC port drawn alike (a CI run did) would kill the RegionServer at its start. Here every
    # draw repeats until a new number comes.
    draws = iter([25_001] * 6 + [25_002] * 6 + [25_003] * 6 + [25_004] * 6 + [25_005] * 6
                 + [25_006] * 6 + list(range(25_007, 25_100)))
    monkeypatch.setattr(random, "randint", lambda low, high: next(draws))
    cluster = LocalHBase(tmp_path / "hbase", quota=False)
    procs = [cluster._define("master", "master"), cluster._define("rs1", "rs"),
             cluster._define("rs2", "rs")]
    ports = [port for p in procs for port in (p.port, p.info_port)]
    assert len(set(ports)) == len(ports)
