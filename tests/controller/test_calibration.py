"""Calibration files (controller/calibration.py): the shipped ones carry today's values, an
operator's file changes what the simulator and the executor do, a key written inline wins, and
bad files end in one line naming the file, the field and what was expected."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from actuator.executor import Executor
from actuator.executor.states import TIMEOUTS, limit_s
from actuator.journal import Journal
from actuator.settings import ExecutorSettings
from controller.calibration import MAX_CALIBRATION_BYTES, load, main as calibration_main, shipped_file
from controller.cli import main
from controller.config import MetctlConfig, load_config
from simulator.cluster import SimCluster
from simulator.settings import ActionSettings, CostSettings, HardwareSettings, SimulatorSettings
from tests.actuator.plans import run_to_end, scenario
from tests.fakes.cluster import FakeCluster, FakeDelays
from tests.fixtures.simcluster import small_scenario_dict
from simulator.scenario import scenario_from_dict

NAMED = "cluster: demo\ndatastore: {driver: sim}\n"


def config(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(NAMED + text)
    return path


# ---------------------------------------------------------------- the shipped files


def test_the_shipped_files_are_generated_from_the_models():
    assert calibration_main(["--check"]) == 0, "run python -m controller.calibration"


def test_the_shipped_simulator_file_writes_every_constant_at_todays_value():
    written = yaml.safe_load(shipped_file("simulator").read_text())
    defaults = SimulatorSettings()
    for part, model in (("hardware", HardwareSettings), ("costs", CostSettings),
                        ("actions", ActionSettings)):
        # every constant but the move rate (datastore.move_mb_s, one key for the policy too)
        expected = set(model.model_fields) - ({"sender_mb_s"} if part == "actions" else set())
        assert set(written[part]) == expected, part
        for key, value in written[part].items():
            assert value == getattr(getattr(defaults, part), key), f"{part}.{key}"
    loaded = load("simulator", shipped_file("simulator"))
    assert (loaded.hardware, loaded.costs, loaded.actions) == (  # type: ignore[attr-defined]
        defaults.hardware, defaults.costs, defaults.actions)


def test_the_shipped_executor_file_is_the_timeout_table_at_todays_values():
    table = yaml.safe_load(shipped_file("executor").read_text())["timeouts_s"]
    defaults = ExecutorSettings()
    assert {(op, state) for op, states in table.items() for state in states} == set(TIMEOUTS)
    for (op, state), setting in TIMEOUTS.items():
        assert table[op][state] == getattr(defaults, setting) == limit_s(defaults, op, state)


def test_a_config_naming_the_shipped_files_runs_as_one_naming_none(tmp_path):
    plain = load_config(config(tmp_path, "", "plain.yaml"))
    named = load_config(config(tmp_path, "simulator: {calibration: 'calibration:simulator'}\n"
                                         "executor: {calibration: 'calibration:executor'}\n"))
    assert named.simulator.calibration == str(shipped_file("simulator"))
    assert named.executor.calibration == str(shipped_file("executor"))
    unnamed = {"calibration": None}
    assert named.simulator.model_copy(update=unnamed) == plain.simulator
    assert named.executor.model_copy(update=unnamed) == plain.executor


# ---------------------------------------------------------------- an operator's file


def test_an_operators_file_sets_the_constants_and_a_key_written_inline_wins(tmp_path, monkeypatch):
    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / "mine.yaml").write_text(
        "hardware: {cores: 8, heap_mb: 8192}\ncosts: {get_cpu_ms: 0.1}\nactions: {vm_boot_s: 60}\n")
    path = config(tmp_path, "simulator:\n  calibration: cal/mine.yaml\n  hardware: {cores: 4}\n")
    monkeypatch.chdir("/")  # a relative path is read from the config file's directory, not the cwd
    sim = load_config(path).simulator
    assert sim.calibration == str(tmp_path / "cal" / "mine.yaml")
    assert (sim.hardware.cores, sim.hardware.heap_mb) == (4, 8192)  # inline wins; file's kept
    assert (sim.costs.get_cpu_ms, sim.actions.vm_boot_s) == (0.1, 60)
    # what the file leaves out keeps the shipped value
    assert sim.costs.put_cpu_ms == CostSettings().put_cpu_ms
    assert sim.hardware.ram_mb == HardwareSettings().ram_mb


def _first_served_s(simulator: SimulatorSettings) -> float:
    """When a node launched at 10 s first serves a request (a region on it, read)."""
    cl = SimCluster(scenario_from_dict(small_scenario_dict(
        launches=[{"at_s": 10}], workloads=[{"name": "C", "ycsb": "C", "threads": 20,
                                              "records": 200_000, "regions": 12}]), "<s>"),
        simulator)
    while cl.t < 2000:
        cl.run_until(cl.t + 5)
        if len(cl.nodes) == 4 and cl.nodes[-1].rs_state == "active":
            new = cl.nodes[-1].index
            on_new = np.flatnonzero(cl.reg_server == new)
            if on_new.size and cl.reg_reads[on_new].sum() > 0:
                return cl.t
    raise AssertionError("the launched node never served")


def test_a_slower_boot_in_the_calibration_file_delays_the_new_nodes_first_request(tmp_path):
    (tmp_path / "slow.yaml").write_text("actions:\n  vm_boot_s: 600\n")
    shipped = load_config(config(tmp_path, "", "shipped.yaml")).simulator
    slow = load_config(config(tmp_path, "simulator: {calibration: slow.yaml}\n")).simulator
    before, after = _first_served_s(shipped), _first_served_s(slow)
    assert 10 + 300 < before < 10 + 600  # the shipped boot: 300 s
    assert after - before >= 300 - 10  # 300 s more boot (the balancer's period rounds it)


def test_the_executor_timeout_table_from_a_file_bounds_a_slow_boot(tmp_path):
    """A node boots in 300 s: the shipped booting limit (600 s) lets it join; an operator's
    table of 60 s abandons the plan; a timeout written inline still wins over the file."""
    (tmp_path / "fast-cloud.yaml").write_text("timeouts_s:\n  launch: {booting: 60}\n")

    def run(text: str) -> str:
        cfg = load_config(config(tmp_path, text))
        world = FakeCluster(delays=FakeDelays(boot_s=300.0, move_s=5.0))
        ex = Executor(world.infra, world.datastore, cfg.executor, world.clock, world.cluster,
                      Journal(":memory:"))
        ex.submit(scenario(world), "p1")
        status = run_to_end(ex, world)
        return status.state + (f": {status.reason}" if status.reason else "")

    assert run("executor: {launch_attempts: 1}\n") == "done"
    abandoned = run("executor: {calibration: fast-cloud.yaml, launch_attempts: 1}\n")
    assert abandoned.startswith("abandoned") and "booting" in abandoned
    assert run("executor: {calibration: fast-cloud.yaml, launch_attempts: 1, "
               "booting_timeout_s: 900}\n") == "done"


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("section, file_text, where, expected", [
    ("simulator", None, "simulator.calibration (line 5)", "a calibration file that exists"),
    ("simulator", "costs: [1\n", "line 2", "valid YAML"),
    ("simulator", "costs:\n  get_cpu_mss: 0.3\n", "costs.get_cpu_mss (line 2)", "did you mean get_cpu_ms?"),
    ("simulator", "hardware: {cores: two}\n", "hardware.cores (line 1)", "integer"),
    ("simulator", "hardware: {cores: 0}\n", "hardware.cores (line 1)", "greater than or equal to 1"),
    ("simulator", "actions: {sender_mb_s: 50}\n", "actions.sender_mb_s (line 1)", "datastore.move_mb_s"),
    ("simulator", "- 1\n", "", "a mapping"),
    ("executor", "timeouts_s: {launch: {booting: -1}}\n", "timeouts_s.launch.booting (line 1)", "greater than 0"),
    ("executor", "timeouts_s: {launch: {boot: 60}}\n", "timeouts_s.launch.boot (line 1)", "allowed: booting, joining, requested"),
    ("executor", "timeouts_s: {move: {running: '120'}}\n", "timeouts_s.move.running (line 1)", "a number"),
    ("executor", "#" * (MAX_CALIBRATION_BYTES + 1), "", "at most 1 MiB"),
])
def test_a_bad_calibration_file_is_one_line_naming_file_field_and_expectation(
        tmp_path, capsys, section, file_text, where, expected):
    cal = tmp_path / "cal.yaml"
    if file_text is not None:
        cal.write_text(file_text)
    path = config(tmp_path, f"\n{section}:\n  calibration: cal.yaml\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    named = path if file_text is None else cal
    assert err.startswith(f"metctl: {named}: {where}" if where else f"metctl: {named}: "), err
    assert expected in err, err


def test_a_calibration_key_that_is_no_path_is_refused(tmp_path, capsys):
    path = config(tmp_path, "executor: {calibration: 3}\n")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"metctl: {path}: executor.calibration (line 3): the path of a "
                          "calibration file"), err



@pytest.mark.parametrize("name", ["calibration:simulator", "calibration:executor"])
def test_metctl_validate_checks_a_calibration_file_alone(tmp_path, capsys, name):
    assert main(["validate", name]) == 0
    assert capsys.readouterr().out.startswith(f"ok: {shipped_file(name.partition(':')[2])}: ")
    bad = tmp_path / "mine.yaml"
    bad.write_text("timeouts_s: {launch: {booting: 0}}\n" if name.endswith("executor")
                   else "hardware: {cores: 0}\n")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"metctl: {bad}: "), err
