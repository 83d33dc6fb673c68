"""Scenario files: the shipped ones load, bad ones are BadInput naming the field."""
from __future__ import annotations

import pytest

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
