"""The one bounded reader and YAML/JSON loader: whatever the file, one BadInput, bounded."""
from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from common import documents
from common.documents import (MAX_DEPTH, MAX_NUMBER_DIGITS, load_document, parse_json,
                              read_bytes)
from common.errors import BadInput


def test_decision_errors_is_the_same_badinput():
    from controller.errors import BadInput as C
    from decision.errors import BadInput as D
    assert C is D is BadInput


def _device(tmp_path):
    return "/dev/zero"  # reports st_size 0: a size check on stat alone read until memory ran out


def _fifo(tmp_path):
    os.mkfifo(tmp_path / "c.yaml")
    return tmp_path / "c.yaml"


@pytest.mark.parametrize("path, refusal", [
    (_device, "regular file"), (_fifo, "regular file"), (lambda tmp: tmp, "not a directory"),
], ids=["device", "fifo", "directory"])
def test_a_path_that_is_no_regular_file_is_refused_before_any_read(tmp_path, path, refusal):
    with pytest.raises(BadInput, match=refusal):
        load_document(path(tmp_path))


def test_the_byte_limit_holds_on_what_is_read(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(b" " * 2000)
    assert read_bytes(p, 2000) == b" " * 2000
    with pytest.raises(BadInput, match="at most 1999 bytes"):
        read_bytes(p, 1999)


@pytest.mark.parametrize("loader", ["C", "pure"])
def test_deep_yaml_is_refused_before_libyaml_composes_it(tmp_path, monkeypatch, loader):
    # 50 KB that segfaulted the C composer (exit 139). Newer libyaml refuses it while scanning,
    # in words of its own; the pure-Python parser does not: whichever layer refuses first,
    # the error is metctl's, names the file and metctl's own limit.
    if loader == "pure":
        monkeypatch.setattr(documents, "_SafeLoader", documents.yaml.SafeLoader)
    p = tmp_path / "c.yaml"
    p.write_text("policy: " + "[" * 25000 + "]" * 25000)
    refusal = rf"c\.yaml: (line 1: )?YAML nested at most {MAX_DEPTH} levels deep"
    with pytest.raises(BadInput, match=refusal):
        load_document(p)


def test_deep_yaml_is_one_line_and_exit_2_from_the_cli(tmp_path, capsys):
    from controller.cli import main
    p = tmp_path / "deep.yaml"
    p.write_text("policy: " + "[" * 25000 + "]" * 25000)
    assert main(["validate", str(p)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "deep.yaml" in lines[0] and "nested" in lines[0]


def test_a_library_refusal_of_shallow_yaml_keeps_its_own_reason(tmp_path):
    # The fallback names nesting only when the brackets really nest that deep.
    p = tmp_path / "c.yaml"
    p.write_text("policy: [a, b\n  c: ]]\n")
    with pytest.raises(BadInput) as err:
        load_document(p)
    assert "nested" not in str(err.value)


@pytest.mark.parametrize("name, text, refusal", [
    ("c.yaml", "- " * (MAX_DEPTH + 5) + "x\n", "nested"),
    ("s.json", "[" * 1000 + "]" * 1000, rf"s\.json: JSON nested at most {MAX_DEPTH}"),
], ids=["block yaml", "json"])
def test_deep_documents_are_refused_naming_the_file(tmp_path, name, text, refusal):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(BadInput, match=refusal):
        load_document(p)


def test_brackets_inside_json_strings_do_not_count():
    text = '{"a": "' + "[" * 5000 + '\\"' + "{" * 300 + '", "b": [[1]]}'
    assert parse_json(text, "x.json")["b"] == [[1]]


def test_exactly_the_depth_limit_is_accepted():
    assert parse_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "x.json") is not None
    with pytest.raises(BadInput):
        parse_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "x.json")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_five_thousand_digit_number_is_refused_before_parsing(tmp_path, suffix):
    p = tmp_path / f"c{suffix}"
    p.write_text('{"step": ' + "9" * 5000 + "}")
    with pytest.raises(BadInput, match=f"at most {MAX_NUMBER_DIGITS} digits"):
        load_document(p)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "[1e999]", "[-1e400]"])
def test_non_finite_json_numbers_are_refused(text):
    with pytest.raises(BadInput, match="x.json"):
        parse_json(text, "x.json")


def test_yaml_over_its_limit_is_refused_but_json_of_that_size_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(documents, "MAX_YAML_BYTES", 100)
    y = tmp_path / "s.yaml"
    y.write_text("a: " + "1" * 50 + "\nb: " + "2" * 80 + "\n")
    with pytest.raises(BadInput, match="YAML document of at most 100 bytes"):
        load_document(y)
    j = tmp_path / "s.json"
    j.write_text('{"a": "' + "x" * 200 + '"}')
    assert load_document(j).data["a"] == "x" * 200


# ------------------------------------------------------------------ the fast JSON path
# parse_json reads with pydantic's parser and checks what it built; the reference parser (the
# Python hooks, `_strict_json`) decides and names every refusal. These tests hold the two to
# the same outcome: same data, or the same BadInput line.

def _reference(text: str, nan_to_model: bool = False):
    try:
        documents._check_json_limits("x.json", text)
        return documents._strict_json(text, "x.json", "valid JSON", nan_to_model)
    except BadInput as err:
        return err.line()


def _fast(text: str, nan_to_model: bool = False):
    try:
        return parse_json(text, "x.json", nan_to_model=nan_to_model)
    except BadInput as err:
        return err.line()


def _same(a, b) -> bool:
    # repr tells -0.0 from 0.0, 1 from 1.0 and True from 1, which == does not.
    return type(a) is type(b) and repr(a) == repr(b)


@pytest.mark.parametrize("text", [
    '{"a": 1, "a": 2}',
    '{"x": [{"ok": 1}, {"b": 1, "c": 2, "b": 3}]}',
    '{"a": {"k": 1}, "b": {"k": 1, "k": 1}}',
    '{"a:": 1, "a:": 2}',                       # a colon inside the key itself
    '{"\\"": 1, "\\"": 2}',                      # escaped quotes as the key
    '{"\\\\": 1, "\\\\": 2}',                    # an escaped backslash as the key
])
def test_a_key_written_twice_is_refused_by_name_wherever_it_is(text):
    with pytest.raises(BadInput, match="appears twice in one object"):
        parse_json(text, "x.json")


def test_a_key_written_twice_in_a_large_document_is_refused():
    parts = [{"id": f"p{i}", "reads": i} for i in range(50_000)]
    text = json.dumps({"partitions": parts})
    assert parse_json(text, "x.json")["partitions"][49_999] == {"id": "p49999", "reads": 49_999}
    broken = text.replace('{"id": "p31337", "reads"', '{"id": "p31337", "id": "p0", "reads"')
    with pytest.raises(BadInput, match="x.json: valid JSON \\(key 'id' appears twice"):
        parse_json(broken, "x.json")


def test_colons_quotes_and_backslashes_inside_strings_are_not_structure():
    text = '{"a": "x:y:{[", "b\\"": "c\\\\", "d\\\\\\":": [":", "\\\\\\"]}"], "e": 1}'
    assert parse_json(text, "x.json") == json.loads(text)


@pytest.mark.parametrize("text", ['{"x": [1, {"y": 1e999}]}', '[[[-1E400]]]', '{"a": 2e308}'])
def test_an_overflowing_number_is_refused_at_any_depth(text):
    with pytest.raises(BadInput, match="overflows a float"):
        parse_json(text, "x.json")


def test_a_lone_surrogate_escape_is_read_as_before():
    # pydantic's parser refuses it; json accepts it: the reference decides (accepted).
    assert parse_json('["\\ud800"]', "x.json") == ["\ud800"]


def test_a_state_file_nan_still_reaches_the_model():
    assert math.isnan(parse_json('{"step": NaN}', "s.json", nan_to_model=True)["step"])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=30)
# Pieces that matter to the scan and to the parsers: structure, escapes, numbers at the edges.
JSON_NASTY = ['"', '\\', '\\"', '\\\\', ':', ',', '{', '}', '[', ']', '"a": 1, "a": 2', 'NaN',
              'Infinity', '-', '1e999', '1e-400', '9' * 120, '\ud800', '\\ud800', '\\u0000',
              '\x00', '\ufeff', ' ', '\n', 'true', 'null', '1.7976931348623159e308', '.5', '0x1']


@settings(max_examples=400, deadline=None)
@given(value=json_values, edits=st.lists(
    st.tuples(st.integers(0, 10**4), st.integers(0, 3),
              st.one_of(st.sampled_from(JSON_NASTY), st.text(max_size=3))), max_size=3),
    nan_to_model=st.booleans())
def test_fast_and_reference_json_agree_on_any_text(value, edits, nan_to_model):
    text = json.dumps(value)
    for pos, cut, insert in edits:
        p = pos % (len(text) + 1)
        text = text[:p] + insert + text[p + cut:]
    assert _same(_fast(text, nan_to_model), _reference(text, nan_to_model)), text


@settings(max_examples=300, deadline=None)
@given(number=st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][-+]?[0-9]{1,3})?", fullmatch=True)))
def test_every_number_reads_to_the_same_value(number):
    # Both parsers must round every decimal to the same float (or both refuse an overflow).
    assert _same(_fast(f"[{number}]"), _reference(f"[{number}]")), number


def _depth_by_hand(text: str) -> tuple[int, bool]:
    """The deepest nesting a parser can reach, by a plain character loop over JSON's strings:
    up to the first backslash outside a string (no parser reads past it). Also says whether
    the loop stopped there."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == "\\":
            return deepest, True
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest, False


# Strings whose insides look like structure; escapes that do and do not end them.
json_strings = st.lists(st.sampled_from(["[", "{", "]", "x", ":", "\\\\", '\\"']), max_size=8).map(
    lambda inside: '"' + "".join(inside) + '"')
depth_pieces = st.lists(st.one_of(
    st.just("[" * 30), st.just("[" * 30), st.just("["), st.just("]"), st.just('{"k": '),
    st.just("}"), st.just(", "), json_strings, json_strings), max_size=40)


@settings(max_examples=300, deadline=None)
@given(pieces=depth_pieces, stray=st.sampled_from(["", '"', "\\"]), where=st.integers(0, 40))
def test_the_depth_scan_sees_strings_as_a_parser_does(pieces, stray, where):
    # A stray quote or backslash outside a string breaks the text where it stands.
    pieces.insert(min(where, len(pieces)), stray)
    text = "".join(pieces)
    deepest, stopped = _depth_by_hand(text)
    if deepest > MAX_DEPTH:
        with pytest.raises(BadInput, match="nested at most"):
            documents._check_json_limits("x.json", text)
    elif not stopped:
        documents._check_json_limits("x.json", text)


def test_deep_nesting_behind_escaped_quotes_is_still_seen():
    text = '["a\\"b", "c\\\\", ' + "[" * 200 + "]" * 200 + "]"
    with pytest.raises(BadInput, match="nested at most"):
        parse_json(text, "x.json")


def test_brackets_all_inside_an_unclosed_string_are_a_syntax_error():
    with pytest.raises(BadInput, match=r"x.json: line 1, column 1: valid JSON \(Unterminated string"):
        parse_json('"' + "[" * 200, "x.json")


def test_the_bracket_scan_finds_the_four_brackets_and_no_other_byte():
    import numpy as np
    raw = np.arange(256, dtype=np.uint8)
    found = documents._brackets(raw, np.empty(raw.size, dtype=bool))
    assert bytes(raw[found]) == b"[]{}"


# ---------------------------------------------------------------- YAML 1.2 core schema

@pytest.mark.parametrize("text,field", [
    ("control: {read_requires_token: yes}\n", "control.read_requires_token"),
    ("control: {read_requires_token: on}\n", "control.read_requires_token"),
    ("control: {read_requires_token: Off}\n", "control.read_requires_token"),
    ("control: {request_timeout_s: 1:00:00}\n", "control.request_timeout_s"),
    ("policy: {max_nodes: 1:30}\n", "policy.max_nodes"),
    ("policy: {max_nodes: 0b101}\n", "policy.max_nodes"),
    ("policy: {max_nodes: 1_000}\n", "policy.max_nodes"),
])
def test_yaml_1_1_quirks_are_refused_naming_the_field(tmp_path, capsys, text, field):
    """Issue 24 item 21: `read_requires_token: yes`/`on` read as true, `request_timeout_s:
    1:00:00` as 3600 and `max_nodes: 1:30` as 90 (YAML 1.1's booleans and base 60). Read with
    YAML 1.2's core schema they are text, and a number or boolean field refuses text."""
    from controller.cli import main

    cfg = tmp_path / "c.yaml"
    # named, as a config given on the command line must be (issue 24 item 5)
    cfg.write_text("cluster: demo\ndatastore: {driver: sim}\n" + text)
    assert main(["validate", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and field in err, err


@pytest.mark.parametrize("text,value", [
    ("a: true", True), ("a: False", False), ("a: 010", 10), ("a: 0o17", 15), ("a: 0x1F", 31),
    ("a: 1e3", 1000.0), ("a: -2.5", -2.5), ("a: .inf", math.inf), ("a: ~", None),
    ("a: yes", "yes"), ("a: 1:30", "1:30"), ("a: 0b11", "0b11"), ("a: 1_000", "1_000"),
])
def test_yaml_scalars_read_by_the_core_schema(text, value):
    assert documents.parse_yaml(text, "t.yaml").data == {"a": value}


def test_every_shipped_yaml_reads_as_it_did():
    """The core schema changes nothing in the files metctl ships (configs, profiles, scenarios,
    deploy/): each reads to the same data as under YAML 1.1."""
    import subprocess

    import yaml

    root = documents.Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files", "*.yaml", "*.yml"], cwd=root, capture_output=True,
                           text=True, check=True).stdout.split()
    assert len(files) > 20
    for name in files:
        text = (root / name).read_text()
        try:
            old = yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError:
            continue  # several documents in one file (not a metctl document)
        assert documents.parse_yaml(text, name).data == old, name
