"""The one bounded reader and YAML/JSON loader: whatever the file, one BadInput, bounded."""
from __future__ import annotations

import os

import pytest

from common import documents
from common.documents import (MAX_DEPTH, MAX_NUMBER_DIGITS, load_document, parse_json,
                              read_bytes)
from common.errors import BadInput


def test_decision_errors_is_the_same_badinput():
    from controller.errors import BadInput as C
    from decision.errors import BadInput as D
    assert C is D is BadInput


def test_a_device_is_refused_before_any_read():
    # /dev/zero reports st_size 0: a size check on stat alone read until memory ran out.
    with pytest.raises(BadInput, match="regular file"):
        load_document("/dev/zero")


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    with pytest.raises(BadInput, match="regular file"):
        load_document(fifo)


def test_the_byte_limit_holds_on_what_is_read(tmp_path):
    p = tmp_path / "big.json"
    p.write_bytes(b" " * 2000)
    assert read_bytes(p, 2000) == b" " * 2000
    with pytest.raises(BadInput, match="at most 1999 bytes"):
        read_bytes(p, 1999)


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(BadInput, match="not a directory"):
        load_document(tmp_path)


def test_deep_yaml_is_refused_before_libyaml_composes_it(tmp_path):
    # 50 KB that segfaulted the C composer (exit 139).
    p = tmp_path / "c.yaml"
    p.write_text("policy: " + "[" * 25000 + "]" * 25000)
    with pytest.raises(BadInput, match=f"nested at most {MAX_DEPTH}"):
        load_document(p)


def test_deep_block_yaml_is_refused(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text("- " * (MAX_DEPTH + 5) + "x\n")
    with pytest.raises(BadInput, match="nested"):
        load_document(p)


def test_deep_json_is_refused_naming_the_file(tmp_path):
    p = tmp_path / "s.json"
    p.write_text("[" * 1000 + "]" * 1000)
    with pytest.raises(BadInput, match=rf"s\.json: JSON nested at most {MAX_DEPTH}"):
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
