"""deploy/local_hbase/chaos.py's fault draw: kinds come in seeded rounds, each a shuffle of every
kind, so a run of five faults has drawn every kind once (a plain random choice let a 20-minute
run go by without one kill_daemon) and the same seed gives the same faults."""
from __future__ import annotations

import argparse

from deploy.local_hbase import chaos

KINDS = ("kill_rs", "kill_daemon", "stop_zk", "stall_rs", "restart_master")


def draws(tmp_path, seed: int, n: int) -> list[str]:
    args = argparse.Namespace(seed=seed, out=str(tmp_path / f"s{seed}"), rs_heap_mb=384,
                              zk_session_ms=40_000, faults=",".join(KINDS))
    c = chaos.Chaos(args)
    return [c.next_kind() for _ in range(n)]


def test_every_round_of_five_faults_draws_every_kind_once(tmp_path):
    for seed in (3, 7, 11):
        seq = draws(tmp_path, seed, 10)
        assert sorted(seq[:5]) == sorted(KINDS) and sorted(seq[5:]) == sorted(KINDS), seq


def test_the_same_seed_draws_the_same_faults(tmp_path):
    assert draws(tmp_path, 7, 7) == draws(tmp_path, 7, 7)
    assert draws(tmp_path, 7, 10) != draws(tmp_path, 8, 10)
