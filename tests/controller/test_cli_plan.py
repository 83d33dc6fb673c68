"""`metctl plan` and `metctl validate` through the real CLI: exit codes, one-line errors,
stable JSON, and `--state` replaying a snapshot sequence exactly as decide() in a loop."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from controller.cli import main
from controller.config import load_config
from controller.snapshot_io import read_snapshot
from controller.state import read_memory, write_memory
from decision import decide
from decision.model import OPS, DecisionMemory

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "configs"
EXAMPLE = CONFIGS / "examples" / "met-5-nodes.yaml"
REPLAY = sorted((CONFIGS / "examples" / "replay").glob("*.yaml"))
METCTL = Path(sys.executable).parent / "metctl"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str, file: Path | str, field: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"metctl: {file}: {field}"), lines[0]
    assert "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------ a good plan


def test_plan_json_has_the_design_pages_fields(capsys):
    code, out, err = run(capsys, "plan", "--snapshot", str(EXAMPLE), "--format", "json")
    assert code == 0 and err == ""
    plan = json.loads(out)
    assert list(plan) == ["policy", "reason", "health", "sizing", "groups", "assignment",
                          "actions", "summary", "memory"]
    assert {"nodes", "suboptimal", "remove"} <= set(plan["health"])
    assert {"node", "verdict", "reasons"} <= set(plan["health"]["nodes"][0])
    assert {"current", "target", "delta", "step"} <= set(plan["sizing"])
    assert plan["groups"] and all({"group", "partitions", "nodes"} <= set(g) for g in plan["groups"])
    assert all({"node", "profile", "partitions", "load"} <= set(a) for a in plan["assignment"])
    assert plan["actions"], "the example snapshot is meant to give a visible plan"
    assert all(a["op"] in OPS and a["reason"] for a in plan["actions"])
    assert set(plan["summary"]) >= {"moves", "reconfigurations", "launches", "terminations",
                                    "max_load_ratio"}
    assert {"step", "first_decision_done"} <= set(plan["memory"])


def test_plan_json_is_exactly_what_decide_returns_and_stable(capsys):
    _, first, _ = run(capsys, "plan", "--snapshot", str(EXAMPLE), "--format", "json")
    _, second, _ = run(capsys, "plan", "--snapshot", str(EXAMPLE), "--format", "json")
    assert first == second
    expected = decide(read_snapshot(EXAMPLE), load_config(None).policy, DecisionMemory())
    assert json.loads(first) == json.loads(json.dumps(expected.to_dict()))


def test_plan_json_reads_json_snapshots_too(capsys):
    _, from_yaml, _ = run(capsys, "plan", "--snapshot", str(EXAMPLE), "--format", "json")
    code, from_json, _ = run(capsys, "plan", "--snapshot", str(EXAMPLE.with_suffix(".json")),
                             "--format", "json")
    assert code == 0 and from_json == from_yaml


def test_plan_table_is_the_default_and_shows_every_stage(capsys):
    code, out, err = run(capsys, "plan", "--snapshot", str(EXAMPLE))
    assert code == 0 and err == ""
    plan = decide(read_snapshot(EXAMPLE), load_config(None).policy, DecisionMemory())
    for heading in ("Health", "Sizing", "Groups", "Assignment", "Actions", "Summary"):
        assert heading in out
    for node in read_snapshot(EXAMPLE).nodes:
        assert node.id in out
    assert f"moves {plan.summary.moves}" in out
    assert f"{plan.sizing.current} → {plan.sizing.target} nodes" in out
    assert "\x1b[" not in out  # no colour codes when stdout is not a terminal


def test_config_selects_the_policy(capsys, tmp_path):
    cfg = tmp_path / "static.yaml"
    cfg.write_text("cluster: demo\ndatastore: {driver: sim}\npolicy:\n  preset: static\n")
    code, out, _ = run(capsys, "plan", "--snapshot", str(EXAMPLE), "--config", str(cfg),
                       "--format", "json")
    plan = json.loads(out)
    assert code == 0 and plan["policy"] == "static" and plan["actions"] == []


# ------------------------------------------------------------------ --state replay


def test_state_replay_equals_decide_in_a_loop(capsys, tmp_path):
    state = tmp_path / "memory.json"
    via_cli = []
    for snap in REPLAY:
        code, out, err = run(capsys, "plan", "--snapshot", str(snap), "--state", str(state),
                             "--format", "json", "--config", str(CONFIGS / "met-paper.yaml"))
        assert code == 0, err
        via_cli.append(json.loads(out))
        assert read_memory(state) == decide_memory_of(via_cli[-1])

    policy = load_config(CONFIGS / "met-paper.yaml").policy
    memory = DecisionMemory()
    in_loop = []
    for snap in REPLAY:
        plan = decide(read_snapshot(snap), policy, memory)
        memory = plan.memory
        in_loop.append(json.loads(json.dumps(plan.to_dict())))
    assert via_cli == in_loop

    # MET Algorithm 1 on the sequence: the first decision reconfigures only, then the
    # overloaded cluster grows by +1 and then +2 (step doubling), then the underused cluster
    # shrinks by one and `step` resets — as the design page says.
    assert [p["sizing"]["delta"] for p in via_cli] == [0, 1, 2, -1]
    assert [p["memory"]["step"] for p in via_cli] == [1, 2, 4, 1]


def decide_memory_of(plan_json: dict) -> DecisionMemory:
    m = plan_json["memory"]
    return DecisionMemory(step=m["step"], first_decision_done=m["first_decision_done"],
                          history=tuple((k, v) for k, v in m["history"]))


def test_without_state_every_run_starts_fresh(capsys):
    deltas = []
    for snap in REPLAY[:2]:
        _, out, _ = run(capsys, "plan", "--snapshot", str(snap), "--format", "json")
        deltas.append(json.loads(out)["memory"]["first_decision_done"])
    assert deltas == [True, True]  # each run was a first decision, nothing was carried


def test_state_is_not_written_when_planning_fails(capsys, tmp_path):
    state = tmp_path / "memory.json"
    write_memory(state, DecisionMemory(step=4, first_decision_done=True))
    before = state.read_bytes()
    code, out, err = run(capsys, "plan", "--snapshot", str(tmp_path / "missing.yaml"),
                         "--state", str(state))
    assert code == 2 and out == "" and state.read_bytes() == before


# ------------------------------------------------------------------ bad input: exit 2, one line


def snapshot_data() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def _write_yaml(path: Path, data) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _case_unknown_node(tmp):
    d = snapshot_data()
    d["partitions"][3]["node"] = "rs99.example.org,16020"
    return ["--snapshot", _write_yaml(tmp / "s.yaml", d)], tmp / "s.yaml", "partitions[3].node"


def _case_duplicate_node(tmp):
    d = snapshot_data()
    d["nodes"][2]["id"] = d["nodes"][0]["id"]
    return ["--snapshot", _write_yaml(tmp / "s.yaml", d)], tmp / "s.yaml", "nodes[2].id"


def _case_duplicate_partition(tmp):
    d = snapshot_data()
    d["partitions"][5]["id"] = d["partitions"][1]["id"]
    return ["--snapshot", _write_yaml(tmp / "s.yaml", d)], tmp / "s.yaml", "partitions[5].id"


def _case_negative_rate(tmp):
    d = snapshot_data()
    d["partitions"][2]["reads"] = -5.0
    return ["--snapshot", _write_yaml(tmp / "s.yaml", d)], tmp / "s.yaml", "partitions[2].reads"


def _case_nan_yaml(tmp):
    text = EXAMPLE.read_text().replace("cpu: 0.97", "cpu: .nan")
    (tmp / "s.yaml").write_text(text)
    return ["--snapshot", tmp / "s.yaml"], tmp / "s.yaml", "nodes[0].metrics.cpu"


def _case_nan_json(tmp):
    text = EXAMPLE.with_suffix(".json").read_text().replace('"writes": 306.0', '"writes": NaN', 1)
    (tmp / "s.json").write_text(text)
    return ["--snapshot", tmp / "s.json"], tmp / "s.json", ""


def _case_unknown_profile(tmp):
    d = snapshot_data()
    d["nodes"][1]["profile"] = "fast"
    return ["--snapshot", _write_yaml(tmp / "s.yaml", d)], tmp / "s.yaml", "nodes[1].profile"


def _case_yaml_syntax(tmp):
    (tmp / "s.yaml").write_text("taken_at: 2026-11-22T10:00:00Z\nnodes: [\n  {id: a\n")
    return ["--snapshot", tmp / "s.yaml"], tmp / "s.yaml", "line "


def _case_json_syntax(tmp):
    (tmp / "s.json").write_text('{"taken_at": "2026-11-22T10:00:00Z",\n "nodes": [}')
    return ["--snapshot", tmp / "s.json"], tmp / "s.json", "line 2, column "


def _case_wrong_type(tmp):
    d = snapshot_data()
    d["partitions"][0]["size_mb"] = "big"
    return ["--snapshot", _write_yaml(tmp / "s.yaml", d)], tmp / "s.yaml", "partitions[0].size_mb"


def _case_missing_snapshot(tmp):
    return ["--snapshot", tmp / "nope.yaml"], tmp / "nope.yaml", ""


def _case_unknown_config_key(tmp):
    (tmp / "c.yaml").write_text("cluster: demo\ndatastore: {driver: sim}\npolicy:\n  preset: met\n  cpu_hi: 0.7\n")
    return ["--snapshot", EXAMPLE, "--config", tmp / "c.yaml"], tmp / "c.yaml", "policy.cpu_hi"


def _case_config_wrong_type(tmp):
    (tmp / "c.yaml").write_text("cluster: demo\ndatastore: {driver: sim}\npolicy:\n  advanced:\n    cpu_high: lots\n")
    return ["--snapshot", EXAMPLE, "--config", tmp / "c.yaml"], tmp / "c.yaml", "policy.advanced.cpu_high"


def _case_config_unknown_policy(tmp):
    (tmp / "c.yaml").write_text("cluster: demo\ndatastore: {driver: sim}\npolicy:\n  preset: magic\n")
    return ["--snapshot", EXAMPLE, "--config", tmp / "c.yaml"], tmp / "c.yaml", "policy.preset"


def _case_config_yaml_syntax(tmp):
    (tmp / "c.yaml").write_text("policy:\n  preset: met\n   min_nodes: 2\n")
    return ["--snapshot", EXAMPLE, "--config", tmp / "c.yaml"], tmp / "c.yaml", "line 3"


def _case_corrupt_state(tmp):
    (tmp / "m.json").write_text('{"step": "four"}')
    return ["--snapshot", EXAMPLE, "--state", tmp / "m.json"], tmp / "m.json", "step"


BAD_PLAN = {name[len("_case_"):]: fn for name, fn in globals().items() if name.startswith("_case_")}


@pytest.mark.parametrize("case", sorted(BAD_PLAN))
def test_bad_input_exits_2_with_one_line_naming_file_and_field(capsys, tmp_path, case):
    args, file, field = BAD_PLAN[case](tmp_path)
    code, out, err = run(capsys, "plan", *map(str, args), "--format", "json")
    assert code == 2
    assert out == ""
    one_error_line(err, file, field)


# ------------------------------------------------------------------ validate


SHIPPED_CONFIGS = sorted(CONFIGS.glob("*.yaml"))
SHIPPED_SNAPSHOTS = sorted((CONFIGS / "examples").rglob("*.yaml")) + sorted(
    (CONFIGS / "examples").rglob("*.json"))
SHIPPED_SCENARIOS = sorted((CONFIGS / "scenarios").glob("*.yaml"))


def test_the_policy_examples_are_shipped():
    assert {"met.yaml", "tiramola.yaml", "static.yaml"} <= {p.name for p in SHIPPED_CONFIGS}


@pytest.mark.parametrize("path", SHIPPED_CONFIGS + SHIPPED_SNAPSHOTS + SHIPPED_SCENARIOS,
                         ids=lambda p: str(p.relative_to(CONFIGS)))
def test_validate_passes_on_every_shipped_file(capsys, path):
    code, out, err = run(capsys, "validate", str(path))
    assert code == 0, err
    assert out.startswith(f"ok: {path}: ") and out.count("\n") == 1


@pytest.mark.parametrize("name", ["met", "tiramola", "target-tracking", "static"])
def test_shipped_policy_configs_select_their_policy(name):
    assert load_config(CONFIGS / f"{name}.yaml").policy.name == name


def test_validate_tells_snapshot_from_config(capsys):
    _, out, _ = run(capsys, "validate", str(EXAMPLE))
    assert "snapshot with 5 nodes and 21 partitions" in out
    _, out, _ = run(capsys, "validate", str(CONFIGS / "met.yaml"))
    assert "metctl config" in out and "policy preset met" in out


def test_validate_knows_scenarios(capsys, tmp_path):
    assert SHIPPED_SCENARIOS, "the simulator ships scenarios in configs/scenarios/"
    _, out, _ = run(capsys, "validate", str(SHIPPED_SCENARIOS[0]))
    assert "simulator scenario" in out
    data = yaml.safe_load(SHIPPED_SCENARIOS[0].read_text())
    data["workloads"][1]["threads"] = 0
    bad_file = _write_yaml(tmp_path / "scenario.yaml", data)
    code, out, err = run(capsys, "validate", str(bad_file))
    assert code == 2 and out == ""
    one_error_line(err, bad_file, "workloads[1].threads (line ")


@pytest.mark.parametrize("case", ["unknown_node", "nan_yaml", "yaml_syntax", "json_syntax",
                                  "wrong_type", "unknown_profile"])
def test_validate_refuses_bad_snapshots(capsys, tmp_path, case):
    args, file, field = BAD_PLAN[case](tmp_path)
    code, out, err = run(capsys, "validate", str(file))
    assert code == 2 and out == ""
    one_error_line(err, file, field)


@pytest.mark.parametrize("case", ["unknown_config_key", "config_wrong_type",
                                  "config_unknown_policy", "config_yaml_syntax"])
def test_validate_refuses_bad_configs(capsys, tmp_path, case):
    args, file, field = BAD_PLAN[case](tmp_path)
    code, out, err = run(capsys, "validate", str(file))
    assert code == 2 and out == ""
    one_error_line(err, file, field)


def test_validate_names_a_cross_field_policy_error(capsys, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("cluster: demo\ndatastore: {driver: sim}\npolicy:\n  advanced:\n    cpu_low: 0.7\n    cpu_high: 0.6\n")
    code, _, err = run(capsys, "validate", str(cfg))
    assert code == 2
    line = one_error_line(err, cfg, "policy")
    assert "cpu_low" in line and "cpu_high" in line


# ------------------------------------------------------------------ the installed console script


def test_console_script_good_and_bad(tmp_path):
    good = subprocess.run([str(METCTL), "plan", "--snapshot", str(EXAMPLE), "--format", "json"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert good.returncode == 0 and json.loads(good.stdout)["policy"] == "met"
    bad_file = tmp_path / "bad.yaml"
    bad_file.write_text("nodes: [\n")
    bad = subprocess.run([str(METCTL), "validate", str(bad_file)], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.startswith(f"metctl: {bad_file}: line ") and bad.stderr.count("\n") == 1
