"""Config loading and the one place that turns bad documents into one BadInput line."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field

from controller.config import (
    MetctlConfig,
    default_config,
    load_config,
    load_document,
    parse_file,
    parse_model,
)
from controller.errors import BadInput


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
    assert load_config(write(tmp_path, "empty.yaml", "")) == MetctlConfig()
    assert load_config(write(tmp_path, "comments.yaml", "# nothing set\n")) == MetctlConfig()


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


def test_wrong_type_names_the_field_and_what_was_given(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: [a, b]\n")
    err = bad(load_config, p)
    assert err.field == "cluster (line 1)"
    assert "string" in err.expected and "list" in err.expected


def test_a_section_that_is_not_a_mapping(tmp_path):
    err = bad(load_config, write(tmp_path, "c.yaml", "policy: 3\n"))
    assert err.field.startswith("policy")
    assert "mapping" in err.expected or "dictionary" in err.expected


def test_top_level_must_be_a_mapping(tmp_path):
    err = bad(load_config, write(tmp_path, "c.yaml", "- a\n- b\n"))
    assert err.field == "" and "mapping" in err.expected


def test_yaml_syntax_error_gives_the_line(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: x\npolicy:\n  a: [1, 2\n  b: 3\n")
    err = bad(load_config, p)
    assert err.file == str(p)
    assert err.field.startswith("line ")
    assert int(err.field.split()[1].rstrip(",")) >= 3
    assert "YAML" in err.expected


def test_yaml_tab_indentation_is_a_syntax_error(tmp_path):
    err = bad(load_config, write(tmp_path, "c.yaml", "policy:\n\tname: met\n"))
    assert err.field.startswith("line 2")


def test_yaml_is_loaded_safely(tmp_path):
    p = write(tmp_path, "c.yaml", "cluster: !!python/object/apply:os.system ['true']\n")
    err = bad(load_config, p)
    assert "YAML" in err.expected


def test_missing_file(tmp_path):
    err = bad(load_config, tmp_path / "nope.yaml")
    assert err.file == str(tmp_path / "nope.yaml") and "no such file" in err.expected


def test_a_directory_is_not_a_config(tmp_path):
    err = bad(load_config, tmp_path)
    assert "directory" in err.expected


def test_binary_file_is_not_utf8(tmp_path):
    err = bad(load_config, write(tmp_path, "c.yaml", b"cluster: \xff\xfe\n"))
    assert "UTF-8" in err.expected


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
    assert load_config(config(cass + "policy:\n  cpu_high: 0.7\n")).policy.data_placement == "store"
    assert load_config(config("policy:\n  cpu_high: 0.7\n")).policy.data_placement == "metctl"
    with pytest.raises(BadInput, match="policy.data_placement must be store"):
        load_config(config(cass + "policy:\n  data_placement: metctl\n"))
    with pytest.raises(BadInput, match="paper_faithful: false"):
        load_config(config(cass + "policy:\n  paper_faithful: true\n"))
