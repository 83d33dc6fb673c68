"""The daemon config the chaos and compare harnesses write (deploy/local_hbase/chaos.py,
write_config) is read by metctl without a deprecation warning, and every file the daemon keeps
lands in the run's own directory (state_dir), where the harness reads the journal back; its
control API listens on a port of its own."""
from __future__ import annotations

import argparse
import warnings
from dataclasses import dataclass
from pathlib import Path

from common.errors import DeprecatedKey
from controller.config import load_config
from deploy.local_hbase import chaos


@dataclass
class _RegionServer:
    info_url: str
    port: int


class _Cluster:
    zk_port = 2181

    def region_servers(self) -> list[_RegionServer]:
        return [_RegionServer("http://localhost:16030", 16020),
                _RegionServer("http://localhost:16031", 16021)]


def test_the_harness_config_has_no_deprecated_key_and_keeps_its_files_in_the_run(tmp_path: Path):
    path = chaos.write_config(_Cluster(), tmp_path, argparse.Namespace(), launchable=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedKey)
        config = load_config(path)
    assert Path(config.executor.journal_path) == tmp_path / "journal.sqlite"
    assert Path(config.loop.memory_path) == tmp_path / "memory.json"
    assert Path(config.infrastructure.local.state_dir).parent == tmp_path
    # not the default port an operator's own `metctl run` listens on
    assert config.control.api_address != load_config(None).control.api_address
