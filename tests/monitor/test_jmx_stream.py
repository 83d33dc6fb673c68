"""monitor/jmx_stream.py: a /jmx answer read as it arrives gives what json.loads gives for the
attributes asked for, however the bytes are cut into chunks (property tests)."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.jmx_stream import BeanReader

KEYS = rb"Namespace_[^\"\\]*_metric_getCount|ProcessCpuLoad|tag\.serverName"
names = st.sampled_from(["Namespace_default_table_t_region_ab_metric_getCount",
                         "Namespace_ns_table_x_region_cd_metric_getCount",
                         "Namespace_default_table_t_region_ab_metric_getTime_max",
                         "ProcessCpuLoad", "tag.serverName", "tag.Context", "modelerType",
                         'a "quoted" key', "ProcessCpuLoadAverage"])
scalars = st.one_of(st.integers(-2**63, 2**63), st.floats(allow_nan=True), st.booleans(),
                    st.none(), st.text(max_size=20),
                    st.just('x", "ProcessCpuLoad": 99, "y": "'))  # a key inside a string value
beans = st.lists(st.dictionaries(names, scalars, max_size=8), max_size=4)


def wanted(key: str) -> bool:
    return key in ("ProcessCpuLoad", "tag.serverName") or key.endswith("_metric_getCount")


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b and type(a) is type(b)


@given(beans, st.lists(st.integers(1, 50), max_size=30), st.sampled_from([None, 2]))
def test_what_is_read_equals_json_loads_whatever_the_chunks(bean_list, cuts, indent):
    doc = {"beans": [{"name": f"bean{i}", **b} for i, b in enumerate(bean_list)]}
    text = json.dumps(doc, indent=indent, allow_nan=True).encode()
    reader = BeanReader(KEYS)
    pos = 0
    for n in cuts:
        reader.feed(text[pos:pos + n])
        pos += n
    reader.feed(text[pos:])
    got = reader.close()
    assert reader.saw_beans
    expected = [{k: v for k, v in b.items() if k == "name" or wanted(k)} for b in doc["beans"]]
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.keys() == e.keys() and all(same(g[k], e[k]) for k in e), (g, e)


@pytest.mark.parametrize("text,words", [
    (b"<html>denied</html>", "opens with"),
    (b'{"beans": [ {"name": "Hadoop:service', "ends early"),
    (b"", "empty"),
])
def test_what_is_not_a_jmx_answer_is_refused(text, words):
    reader = BeanReader(KEYS)
    with pytest.raises(ValueError, match=words):
        reader.feed(text)
        reader.close()
