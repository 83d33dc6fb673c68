"""Scenario files: the shipped ones load, bad ones are BadInput naming the field."""
from __future__ import annotations

import pytest
import yaml

from controller.errors import BadInput
from simulator.scenario import SCENARIO_DIR, load_scenario, scenario_from_dict
from tests.fixtures.simcluster import small_scenario_dict


@pytest.mark.parametrize("path", sorted(SCENARIO_DIR.glob("*.yaml")), ids=lambda p: p.name)
def test_shipped_scenarios_load(path):
    sc = load_scenario(path)
    assert sc.workloads and sc.duration_s > 0


def test_met_elasticity_matches_the_paper():
    sc = load_scenario("met-elasticity")
    stops = {w.name: w.stop_s for w in sc.workloads}
    # MET §6.4: E and F off at 33 min, B at 43, A at 53; C and D run to the end (60 min).
    assert (stops["E"], stops["F"], stops["B"], stops["A"]) == (33 * 60, 33 * 60, 43 * 60, 53 * 60)
    assert stops["C"] is None and stops["D"] is None and sc.duration_s == 3600
    assert sc.initial_nodes == 6


def test_mix_must_sum_to_one():
    data = small_scenario_dict()
    data["workloads"][1] = {"name": "X", "mix": {"read": 0.5, "update": 0.2}}
    with pytest.raises(BadInput) as err:
        scenario_from_dict(data, "s.yaml")
    assert err.value.file == "s.yaml" and err.value.field == "workloads[1]"


def test_unknown_field_names_its_path():
    data = small_scenario_dict()
    data["workloads"][0]["thread"] = 3
    with pytest.raises(BadInput) as err:
        scenario_from_dict(data, "s.yaml")
    assert err.value.field == "workloads[0].thread"


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(BadInput) as err:
        load_scenario(bad)
    assert "line" in err.value.field
    with pytest.raises(BadInput):
        load_scenario(tmp_path / "nope.yaml")


def test_hardware_overrides_are_checked():
    data = small_scenario_dict(hardware={"heap_gb": 2})
    with pytest.raises(BadInput) as err:
        scenario_from_dict(data, "s.yaml")
    assert "heap_gb" in err.value.expected
    data = small_scenario_dict(hardware={"heap_mb": -5})
    with pytest.raises(BadInput):
        scenario_from_dict(data, "s.yaml")
    ok = scenario_from_dict(small_scenario_dict(hardware={"heap_mb": 2048}), "s.yaml")
    assert ok.hardware == {"heap_mb": 2048}


# ---------------------------------------------------------------- open-loop workloads

def _open(rate, **kw):
    data = small_scenario_dict()
    data["workloads"][0] = {"name": "web", "ycsb": "C", "rate": rate, **kw}
    return data


def test_open_and_closed_workloads_mix_in_one_scenario():
    sc = scenario_from_dict(_open([[0, 100], [600, 900]], timeout_ms=250), "s.yaml")
    assert [w.open_loop for w in sc.workloads] == [True, False, False]
    assert sc.workloads[0].timeout_ms == 250 and sc.workloads[1].timeout_ms == 1000


BAD_RATES = {
    "negative": ([[0, 100], [60, -5]], "workloads[0].rate[1][1]", "greater than or equal to 0"),
    "not finite": ([[0, 100], [60, float("nan")]], "workloads[0].rate[1][1]", "finite"),
    "infinite": ({"shape": "constant", "ops_per_s": float("inf")}, "workloads[0].rate.ops_per_s", "finite"),
    "unsorted": ([[60, 100], [0, 200]], "workloads[0].rate", "increasing times"),
    "empty": ([], "workloads[0].rate", "at least 1"),
    "unknown shape": ({"shape": "sine"}, "workloads[0].rate", "shape: points, constant"),
    "a shape's missing key": ({"shape": "ramp", "from_ops_per_s": 1, "to_ops_per_s": 2},
                              "workloads[0].rate.end_s", "required"),
    "unsorted steps": ({"shape": "steps", "steps": [[0, 1], [0, 2]]}, "workloads[0].rate.steps", "increasing"),
}


@pytest.mark.parametrize("case", sorted(BAD_RATES))
def test_bad_rate_names_the_field(case):
    rate, field, words = BAD_RATES[case]
    with pytest.raises(BadInput) as err:
        scenario_from_dict(_open(rate), "s.yaml")
    assert err.value.file == "s.yaml" and err.value.field == field and words in err.value.expected


def test_an_open_loop_workload_has_no_threads_and_a_closed_one_no_timeout():
    with pytest.raises(BadInput) as err:
        scenario_from_dict(_open([[0, 1]], threads=5), "s.yaml")
    assert "give rate or threads" in err.value.expected
    data = small_scenario_dict()
    data["workloads"][0]["timeout_ms"] = 100
    with pytest.raises(BadInput) as err:
        scenario_from_dict(data, "s.yaml")
    assert "timeout_ms is for open-loop" in err.value.expected


@pytest.mark.parametrize("command", ["validate", "simulate"])
@pytest.mark.parametrize("case", ["negative", "not finite", "unsorted", "empty"])
def test_the_cli_refuses_bad_rates_with_exit_2_naming_the_field(tmp_path, capsys, command, case):
    from controller.cli import main
    rate, field, _ = BAD_RATES[case]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(_open(rate)))  # NaN as YAML spells it: .nan
    args = ["validate", str(path)] if command == "validate" else [
        "simulate", "--scenario", str(path), "--out", str(tmp_path / "out")]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0] and field in err[0]


def test_simulate_help_names_the_open_loop_keys():
    from click.testing import CliRunner

    from controller.cli import cli
    text = CliRunner().invoke(cli, ["simulate", "--help"]).output
    assert "rate" in text and "timeout_ms" in text
