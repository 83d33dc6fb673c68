"""Config loading and the one place that turns bad documents into one BadInput line."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from common.errors import DeprecatedKey
from controller.cli import main

from controller.config import (
    MetctlConfig,
    default_config,
    load_config,
    load_document,
    parse_file,
    parse_model,
)
from controller.control_store import default_state_path
from controller.errors import BadInput
from controller.layers import DEPRECATED, MERGED


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text, encoding="utf-8")
    return p


def bad(fn, *args) -> BadInput:
    with pytest.raises(BadInput) as info:
        fn(*args)
    err = info.value
    assert "\n" not in err.line()
    return err


# ------------------------------------------------------------------ load_config


def test_no_file_is_the_embedded_default():
    assert load_config(None) == default_config() == MetctlConfig()


def test_empty_file_is_the_default(tmp_path):
    # (its state where the file is: controller/config_files.py; `metctl` itself refuses an
    # empty config given on its command line)
    from controller.config_files import with_state_paths

    default = with_state_paths(MetctlConfig(), tmp_path)
    assert load_config(write(tmp_path, "empty.yaml", "")) == default
    assert load_config(write(tmp_path, "comments.yaml", "# nothing set\n")) == default


def test_a_valid_config_sets_its_fields(tmp_path):
    cfg = load_config(write(tmp_path, "c.yaml", "cluster: prod-hbase\npolicy: {}\n"))
    assert cfg.cluster == "prod-hbase"


def test_a_misspelt_key_names_key_line_and_the_key_meant(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: x\nclustre: y\n")
    err = bad(load_config, p)
    assert err.file == str(p)
    assert err.field == "clustre (line 2)"
    assert err.expected == "unknown key (did you mean cluster?)"


def test_unknown_key_unlike_any_lists_the_allowed_ones(tmp_path):
    err = bad(load_config, write(tmp_path, "c.yaml", "zzz: 1\n"))
    assert err.field == "zzz (line 1)"
    assert err.expected.startswith("unknown key (allowed: ") and "policy" in err.expected


def test_unknown_key_inside_a_section_names_the_dotted_path(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: x\npolicy:\n  no_such_knob: 1\n")
    err = bad(load_config, p)
    assert err.field.startswith("policy.no_such_knob")
    assert "unknown key" in err.expected


@pytest.mark.parametrize("text, field, expected", [
    ("cluster: [a, b]\n", "cluster (line 1)", ("string", "list")),
    ("policy: 3\n", "policy*", ("mapping",)),
    ("- a\n- b\n", "", ("mapping",)),
    ("policy:\n\tpreset: met\n", "line 2*", ()),
    ("cluster: !!python/object/apply:os.system ['true']\n", None, ("YAML",)),
    (b"cluster: \xff\xfe\n", None, ("UTF-8",)),
], ids=["wrong type", "section not a mapping", "top level not a mapping", "tab indentation",
        "unsafe tag", "not UTF-8"])
def test_a_bad_document_names_the_field_and_what_was_expected(tmp_path, text, field, expected):
    """field: exact, or a prefix when it ends in *; None: not checked."""
    p = write(tmp_path, "c.yaml", text)
    err = bad(load_config, p)
    assert err.file == str(p)
    if field is not None:
        assert (err.field.startswith(field[:-1]) if field.endswith("*") else err.field == field)
    for words in expected:
        assert words in err.expected


def test_yaml_syntax_error_gives_the_line(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: x\npolicy:\n  a: [1, 2\n  b: 3\n")
    err = bad(load_config, p)
    assert err.file == str(p)
    assert err.field.startswith("line ")
    assert int(err.field.split()[1].rstrip(",")) >= 3
    assert "YAML" in err.expected


@pytest.mark.parametrize("path, expected", [
    (lambda tmp: tmp / "nope.yaml", "no such file"), (lambda tmp: tmp, "directory"),
], ids=["missing", "directory"])
def test_a_path_that_is_no_config_file(tmp_path, path, expected):
    err = bad(load_config, path(tmp_path))
    assert err.file == str(path(tmp_path)) and expected in err.expected


# ------------------------------------------------------------------ documents


def test_json_syntax_error_gives_line_and_column(tmp_path):
    err = bad(load_document, write(tmp_path, "s.json", '{"a": 1,\n  "b": }\n'))
    assert err.field == "line 2, column 8"
    assert "JSON" in err.expected


def test_json_nan_is_refused(tmp_path):
    err = bad(load_document, write(tmp_path, "s.json", '{"a": NaN}'))
    assert "NaN" in err.expected


def test_line_of_finds_nested_values(tmp_path):
    doc = load_document(write(tmp_path, "d.yaml", "a: 1\nb:\n  - x: 1\n  - x: 2\n    y: 3\n"))
    assert doc.line_of(["a"]) == 1
    assert doc.line_of(["b", 1, "y"]) == 5
    assert doc.line_of(["b", 1, "nope"]) == 4  # an unknown key: its parent's line
    assert doc.line_of(["b", 7]) == doc.line_of(["b"]) == 3  # the list itself


# ------------------------------------------------------------------ parse_model (reused by others)


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    weight: float = Field(1.0, ge=0)


class Cloud(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["cloud"] = "cloud"
    region: str = "eu"


class Local(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["local"] = "local"
    processes: int = 1


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: list[Item] = []
    by_name: dict[str, Item] = {}
    driver: Annotated[Cloud | Local, Field(discriminator="kind")] = Cloud()
    mode: Literal["fast", "slow"] = "fast"
    maybe: Item | None = None


@pytest.mark.parametrize("data, field, words", [
    ({"items": [{"name": "a"}, {"name": "b"}, {"name": "c", "weight": -1}]},
     "items[2].weight", "greater than or equal to 0"),
    ({"items": [{"nam": "a"}]}, "items[0].name", "required"),
    ({"by_name": {"x": {"name": 3}}}, "by_name.x.name", "string"),
    ({"driver": {"kind": "local", "processes": "many"}}, "driver.processes", "integer"),
    ({"driver": {"kind": "local", "region": "eu"}}, "driver.region", "unknown key"),
    ({"mode": "medium"}, "mode", "'fast' or 'slow'"),
    ({"maybe": {"name": "a", "weight": "x"}}, "maybe.weight", "number"),
])
def test_parse_model_names_the_users_path(data, field, words):
    err = bad(parse_model, Outer, data, "f.yaml")
    assert err.file == "f.yaml"
    assert err.field == field
    assert words in err.expected


def test_several_errors_are_counted_on_one_line():
    err = bad(parse_model, Outer, {"mode": "x", "items": 3, "maybe": 4}, "f.yaml")
    assert "(and 2 more errors)" in err.expected


def test_parse_file_adds_the_yaml_line(tmp_path):
    p = write(tmp_path, "o.yaml", "items:\n  - name: a\n  - name: b\n    weight: -2\n")
    err = bad(parse_file, Outer, p)
    assert err.field == "items[1].weight (line 4)"


def test_parse_file_returns_the_model(tmp_path):
    p = write(tmp_path, "o.yaml", "items: [{name: a}]\ndriver: {kind: local, processes: 3}\n")
    out = parse_file(Outer, p)
    assert out.items[0].name == "a" and isinstance(out.driver, Local) and out.driver.processes == 3


def test_a_key_given_twice_is_refused_not_silently_replaced(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: a\npolicy:\n  name: met\ncluster: b\n")
    err = bad(load_config, p)
    assert err.field == "cluster (line 4)" and err.expected == "each key once (also on line 1)"


def test_recursive_aliases_do_not_hang(tmp_path):
    err = bad(load_config, write(tmp_path, "c.yaml", "policy: &x [1, *x]\n"))
    assert err.field.startswith("policy")


def test_anchors_and_merge_keys_work(tmp_path):
    p = write(tmp_path, "c.yaml", "base: &b {name: static}\n")
    assert bad(load_config, p).field.startswith("base")  # unknown key, but parsed fine
    doc = load_document(write(tmp_path, "d.yaml", "x: &b {name: static}\ny:\n  <<: *b\n  name: met\n"))
    assert doc.data["y"] == {"name": "met"}


def test_json_duplicate_keys_are_refused(tmp_path):
    err = bad(load_document, write(tmp_path, "s.json", '{"nodes": [], "nodes": [1]}'))
    assert "'nodes' appears twice" in err.expected


class Cloudy(BaseModel):
    model_config = ConfigDict(extra="forbid")
    password: str = Field("", min_length=8)
    api_key: int = 0


@pytest.mark.parametrize("data, field", [
    ({"password": "hunter2"}, "password"),
    ({"api_key": "sk-live-abcdef"}, "api_key"),
])
def test_secret_values_are_never_echoed(data, field):
    err = bad(parse_model, Cloudy, data, "c.yaml")
    assert err.field == field
    assert list(data.values())[0] not in err.line()


def test_cassandra_is_sized_by_metctl_and_placed_by_the_store(tmp_path):
    # Cassandra spreads its own data: the policy follows (data_placement: store) unless the
    # file asks for what Cassandra cannot do, which is one line naming the key
    def config(text):
        path = tmp_path / "c.yaml"
        path.write_text(text)
        return path
    cass = "datastore:\n  driver: cassandra\n"
    assert load_config(config(cass)).policy.data_placement == "store"
    high = "policy:\n  advanced:\n    cpu_high: 0.7\n"
    assert load_config(config(cass + high)).policy.data_placement == "store"
    assert load_config(config(high)).policy.data_placement == "metctl"
    with pytest.raises(BadInput, match="policy.advanced.data_placement must be store"):
        load_config(config(cass + "policy:\n  advanced:\n    data_placement: metctl\n"))
    with pytest.raises(BadInput, match="paper_faithful: false"):
        load_config(config(cass + "policy:\n  preset: met-paper\n"))


# ------------------------------------------------------------------ keys that moved (layers)


def _moved_value(row):
    """A valid value for the old key of `row`, other than its default (so a key that were
    dropped instead of moved would show)."""
    special = {"policy.name": "tiramola", "policy.latency_slo_ms": 40.0,
               "policy.predict_cycle_s": 86400.0, "policy.max_moves": 7,
               "policy.grouping": "load", "policy.scale_out_ceiling": "double",
               "policy.data_placement": "store", "policy.tables": {"t": {"exclude": True}}}
    if row.old in special:
        return special[row.old]
    section, *rest = row.old.split(".")
    value = getattr(MetctlConfig(), section)
    for part in rest:
        value = getattr(value, part)
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return round(value * 0.9, 6) if value else 1.0


@pytest.mark.parametrize("row", DEPRECATED, ids=lambda row: row.old)
def test_a_moved_key_still_works_with_one_warning_naming_the_new_key(tmp_path, capsys, row):
    value = _moved_value(row)
    old = write(tmp_path, "old.yaml", yaml.safe_dump(_named(_nested(row.old, value))))
    new = write(tmp_path, "new.yaml", yaml.safe_dump(_named(_nested(row.new, row.value(value)))))
    assert main(["validate", str(old)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"metctl: warning: {old}: {row.old} is deprecated")
    assert row.new in err[0]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert load_config(old) == load_config(new) != load_config(None)
    assert [w.category for w in seen] == [DeprecatedKey]


MERGED_ROWS = [(old, m.new) for m in MERGED for old in m.olds]


@pytest.mark.parametrize("old_key, new_key", MERGED_ROWS, ids=[o for o, _ in MERGED_ROWS])
def test_a_sources_own_timeout_or_size_still_works_as_the_monitors_one(tmp_path, capsys,
                                                                        old_key, new_key):
    old = write(tmp_path, "old.yaml", yaml.safe_dump(_named(_nested(old_key, 9.5))))
    new = write(tmp_path, "new.yaml", yaml.safe_dump(_named(_nested(new_key, 9.5))))
    assert main(["validate", str(old)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"metctl: warning: {old}: {old_key} is deprecated: write {new_key}: 9.5 "
                   "(the old key works until the next release)"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecatedKey)
        assert load_config(old) == load_config(new) != load_config(None)
    section, _, key = new_key.removeprefix("monitor.").partition(".")
    assert getattr(getattr(load_config(new).monitor, section), key) == 9.5


def test_sources_that_were_given_different_timeouts_keep_the_largest_and_say_so(tmp_path):
    text = ("monitor:\n  ganglia_read_timeout_s: 3\n  hbase_jmx_timeout_s: 10\n"
            "  prometheus_max_mb: 8\n")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        c = load_config(write(tmp_path, "c.yaml", text))
    assert (c.monitor.http.read_timeout_s, c.monitor.http.max_mb) == (10, 8)
    assert c.monitor.http.connect_timeout_s == 2.0  # not set: the default
    said = [str(w.message) for w in seen]
    assert len(said) == 3 and all("monitor.http.read_timeout_s: 10 (the largest of "
                                  "monitor.ganglia_read_timeout_s, monitor.hbase_jmx_timeout_s)"
                                  in line for line in said[:2])
    # a new key beside an old one saying something else: refused, naming both
    err = bad(load_config, write(tmp_path, "b.yaml", "monitor:\n  hbase_jmx_timeout_s: 10\n"
                                 "  http:\n    read_timeout_s: 5\n"))
    assert err.field == "monitor.hbase_jmx_timeout_s" and "monitor.http.read_timeout_s" in err.expected
    # an old key of the wrong type is refused under the new key, as any bad value
    err = bad(load_config, write(tmp_path, "t.yaml", "monitor:\n  ganglia_max_mb: lots\n"))
    assert err.field.startswith("monitor.http.max_mb")


def test_an_old_key_and_its_new_key_saying_different_things_is_refused(tmp_path):
    p = write(tmp_path, "c.yaml", "policy:\n  warmup_s: 100\n  scale_out:\n    cooldown_s: 200\n")
    err = bad(load_config, p)
    assert err.field == "policy.warmup_s" and "policy.scale_out.cooldown_s" in err.expected


def test_paper_faithful_and_the_latency_gate_become_a_preset_and_an_slo(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecatedKey)
        old = load_config(write(tmp_path, "o.yaml", "policy:\n  name: met\n  paper_faithful: true\n"
                                "  latency_gate: false\n"))
    new = load_config(write(tmp_path, "n.yaml", "policy:\n  preset: met-paper\n  slo:\n"
                            "    latency_ms: 'off'\n"))
    assert old == new and new.policy.paper_faithful and not new.policy.latency_gate


def test_one_move_rate_feeds_the_policy_the_executor_and_the_simulated_store(tmp_path):
    c = load_config(write(tmp_path, "c.yaml", "datastore:\n  move_mb_s: 40\n"))
    assert c.policy.move_mb_s == c.executor.move_mb_s == c.simulator.actions.sender_mb_s == 40


def test_behaviour_windows_feed_the_loop_and_the_policy(tmp_path):
    c = load_config(write(tmp_path, "c.yaml", "policy:\n  scale_in:\n    stabilization_s: 300\n"
                          "  scale_out:\n    cooldown_s: 120\n"))
    # met judges its warm-up itself; the loop holds scale-in for the stabilisation window
    assert (c.policy.warmup_s, c.loop.cooldown_after_scale_out_s) == (120, 0)
    assert c.loop.scale_in_stabilization_s == 300
    t = load_config(write(tmp_path, "t.yaml", "policy:\n  preset: tiramola\n  scale_out:\n"
                          "    cooldown_s: 120\n"))
    assert t.loop.cooldown_after_scale_out_s == 120  # tiramola has no warm-up of its own
    # target-tracking keeps HPA's scale-in window itself (300 s unless set); the loop holds none
    tt = load_config(write(tmp_path, "tt.yaml", "policy:\n  preset: target-tracking\n"))
    assert (tt.policy.target_scale_in_window_s, tt.loop.scale_in_stabilization_s) == (300, 0)
    tt = load_config(write(tmp_path, "tt.yaml", "policy:\n  preset: target-tracking\n"
                           "  scale_in:\n    stabilization_s: 60\n"))
    assert (tt.policy.target_scale_in_window_s, tt.loop.scale_in_stabilization_s) == (60, 0)


def test_the_loads_cycle_given_found_or_not_looked_for(tmp_path):
    default = load_config(write(tmp_path, "d.yaml", "policy:\n  preset: met\n")).policy
    assert default.detect_cycle and default.predict_cycle_s is None
    c = load_config(write(tmp_path, "c.yaml", "policy:\n  prediction:\n    cycle_s: 1200\n"
                          "    detect: false\n  advanced:\n    max_cycle_s: 7200\n"))
    assert (c.policy.predict_cycle_s, c.policy.detect_cycle, c.policy.max_cycle_s) == (1200, False, 7200)
    err = bad(load_config, write(tmp_path, "b.yaml", "policy:\n  advanced:\n    min_cycle_s: 9000\n"
                                 "    max_cycle_s: 600\n"))
    assert "min_cycle_s" in str(err) and "b.yaml" in str(err)


def _named(doc: dict) -> dict:
    """A config names its cluster and data store (`validate` refuses one that does not)."""
    doc.setdefault("cluster", "demo")
    doc.setdefault("datastore", {}).setdefault("driver", "sim")
    return doc


def _nested(path: str, value: object) -> dict:
    doc: object = value
    for key in reversed(path.split(".")):
        doc = {key: doc}
    return doc  # type: ignore[return-value]


def test_state_dir_holds_every_state_file_and_an_old_path_still_wins(tmp_path):
    c = load_config(write(tmp_path, "c.yaml", f"state_dir: {tmp_path}/state\n"))
    assert (c.executor.journal_path, c.loop.memory_path, c.control.token_file,
            str(default_state_path(c)), c.infrastructure.local.state_dir) == (
        f"{tmp_path}/state/journal.sqlite", f"{tmp_path}/state/memory.json",
        f"{tmp_path}/state/api-token", f"{tmp_path}/state/control.json",
        f"{tmp_path}/state/local-nodes")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        old = load_config(write(tmp_path, "o.yaml", f"executor:\n  journal_path: {tmp_path}/j.sqlite\n"))
    assert old.executor.journal_path == f"{tmp_path}/j.sqlite"
    assert [str(w.message).split(": ", 1)[1] for w in seen] == [
        "executor.journal_path is deprecated: set state_dir (this file is "
        "<state_dir>/journal.sqlite) (the old key works until the next release)"]
    # memory in RAM stays a setting of its own: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecatedKey)
        assert load_config(write(tmp_path, "m.yaml", "loop:\n  memory_path: null\n")).loop.memory_path is None


# a config given on the command line names its cluster and data store (issue 24 item 5)
NAMED = "cluster: demo\ndatastore: {driver: sim}\n"


@pytest.mark.parametrize("text,field", [
    (NAMED + "monitor: {http: {max_mb: 1.0e-320}}\n", "monitor.http.max_mb"),
    (NAMED + "monitor: {http: {max_mb: 0.0}}\n", "monitor.http.max_mb"),
    (NAMED + "monitor: {http: {max_mb: 1.0e+9}}\n", "monitor.http.max_mb"),
    (NAMED + "monitor: {http: {read_timeout_s: .inf}}\n", "monitor.http.read_timeout_s"),
    ("cluster: ''\ndatastore: {driver: sim}\n", "cluster"),
    ("cluster: ../../etc\ndatastore: {driver: sim}\n", "cluster"),
    ("cluster: 'a b'\ndatastore: {driver: sim}\n", "cluster"),
])
def test_values_no_cluster_has_are_refused(tmp_path, capsys, text, field):
    """Issue 24 item 21: `http.max_mb: 1e-320` (no answer fits) and `cluster: ""` (tags
    and ZooKeeper paths named by nothing) were accepted."""
    from controller.cli import main

    cfg = tmp_path / "c.yaml"
    cfg.write_text(text)
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and field in err, err


# ------------------------------------------------------------------ profiles:


def test_profile_changes_reach_real_nodes_and_the_simulated_ones(tmp_path):
    cfg = load_config(write(tmp_path, "c.yaml", "profiles:\n  default: {prefetch_on_open: false}\n"
                                                "  read: {block_cache_fraction: 0.6}\n"))
    assert cfg.hbase_settings()("default")["hbase.rs.prefetchblocksonopen"] == "false"
    assert cfg.hbase_settings()("read")["hfile.block.cache.size"] == "0.60"
    # what the profile does not change is the shipped file's
    assert cfg.node_profiles["read"].memstore_fraction == default_config().node_profiles["read"].memstore_fraction
    assert cfg.hbase_settings()("write") == default_config().hbase_settings()("write")
    assert not cfg.profile_fields()("default").get("prefetch_on_open", False)
    assert not cfg.simulator.profiles["default"].prefetch_on_open
    assert cfg.simulator.profiles["read"].block_cache_share == 0.6
    assert cfg.simulator.profiles["write"].prefetch_on_open  # the shipped profiles prefetch


def test_simulator_profiles_set_in_the_file_win_over_profile_changes(tmp_path):
    sim = {n: {"block_cache_share": 0.3, "memstore_share": 0.3, "block_kb": 64.0}
           for n in ("read", "write", "read_write", "scan", "default")}
    cfg = load_config(write(tmp_path, "c.yaml", yaml.safe_dump(
        {"profiles": {"default": {"block_cache_fraction": 0.35}}, "simulator": {"profiles": sim}})))
    assert cfg.simulator.profiles["default"].block_cache_share == 0.3
    assert cfg.node_profiles["default"].block_cache_fraction == 0.35  # the real nodes still get it


@pytest.mark.parametrize("text,field,expected", [
    ("profiles:\n  read: {block_cache_fraction: 0.75}\n",
     "profiles.read.block_cache_fraction + memstore_fraction", "at most 0.80"),
    ("profiles:\n  fast: {prefetch_on_open: true}\n", "profiles.fast", "one of read, write"),
    ("profiles:\n  read: {prefetch: true}\n", "profiles.read.prefetch", "unknown key"),
    ("profiles:\n  scan: {block_size_kb: 0}\n", "profiles.scan.block_size_kb", ""),
])
def test_a_bad_profile_change_names_the_field(tmp_path, text, field, expected):
    err = bad(load_config, write(tmp_path, "c.yaml", text))
    assert err.field.startswith(field) and expected in err.expected and err.file.endswith("c.yaml")
