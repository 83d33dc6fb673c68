"""Profiles: the shipped YAML files, validation (file + field in every error), rendering."""
import logging

import pytest
import yaml

from decision import DecisionMemory, PolicyConfig, decide
from decision.model import PROFILES
from profiles import (
    NodeProfile, ProfileError, load_profile, load_profiles, plan_table_profiles,
    recommend_block_sizes, render_block_size, render_hbase_settings, shipped_profiles,
)
from tests.fixtures.snapshots import ycsb_mix_snapshot

# MET Table 1 and HBase 2.6's stock values, as the design page states them.
EXPECTED = {
    "read": (0.55, 0.10, 32), "write": (0.10, 0.55, 64), "read_write": (0.45, 0.20, 32),
    "scan": (0.55, 0.10, 128), "default": (0.40, 0.40, 64),
}


def test_shipped_profiles_match_met_table_1_and_hbase_defaults():
    profiles = shipped_profiles()
    assert set(profiles) == set(PROFILES)
    for name, (cache, memstore, block) in EXPECTED.items():
        p = profiles[name]
        assert (p.block_cache_fraction, p.memstore_fraction, p.block_size_kb) == \
            (cache, memstore, block)


def test_shipped_profiles_give_no_warning(caplog):
    with caplog.at_level(logging.WARNING):
        load_profiles()
    assert not caplog.records


def test_render_hbase_settings():
    for name, (cache, memstore, block) in EXPECTED.items():
        settings = render_hbase_settings(name)
        assert float(settings["hfile.block.cache.size"]) == cache
        assert float(settings["hbase.regionserver.global.memstore.size"]) == memstore
        assert render_block_size(name) == {"BLOCKSIZE": str(block * 1024)}
    assert render_hbase_settings("write")["hfile.block.cache.size"] == "0.10"
    assert render_hbase_settings(shipped_profiles()["read"]) == render_hbase_settings("read")


def test_render_keeps_precision_and_extra_settings():
    p = NodeProfile(name="read", block_cache_fraction=0.425, memstore_fraction=0.1,
                    block_size_kb=32, extra_settings={"hbase.hregion.memstore.flush.size":
                                                      "268435456"})
    settings = render_hbase_settings(p)
    assert settings["hfile.block.cache.size"] == "0.425"
    assert settings["hbase.regionserver.global.memstore.size"] == "0.10"
    assert settings["hbase.hregion.memstore.flush.size"] == "268435456"


def test_prefetch_on_open_is_rendered_both_ways():
    # The shipped profiles prefetch; a node restarting from a prefetching profile into one
    # without must switch it off.
    assert render_hbase_settings("read")["hbase.rs.prefetchblocksonopen"] == "true"
    p = NodeProfile(name="read", block_cache_fraction=0.55, memstore_fraction=0.1,
                    block_size_kb=32, prefetch_on_open=False)
    assert render_hbase_settings(p)["hbase.rs.prefetchblocksonopen"] == "false"


def test_render_unknown_name_is_an_error():
    with pytest.raises(ProfileError):
        render_hbase_settings("fast")


def write(tmp_path, file_name, **fields):
    data = {"name": file_name, "block_cache_fraction": 0.5, "memstore_fraction": 0.2,
            "block_size_kb": 64, **fields}
    path = tmp_path / f"{file_name}.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in data.items() if v is not None}))
    return path


@pytest.mark.parametrize("fields, field", [
    ({"block_cache_fraction": 0.6, "memstore_fraction": 0.3},
     "block_cache_fraction + memstore_fraction"),
    ({"block_cache_fraction": 1.2}, "block_cache_fraction"),
    ({"memstore_fraction": "lots"}, "memstore_fraction"),
    ({"block_size_kb": 0}, "block_size_kb"),
    ({"block_size_kb": None}, "block_size_kb"),
    ({"colour": "red"}, "colour"),
    ({"name": "turbo"}, "name"),
])
def test_bad_profiles_name_file_and_field(tmp_path, fields, field):
    path = write(tmp_path, "read", **fields)
    with pytest.raises(ProfileError) as err:
        load_profile(path)
    assert err.value.file == str(path) and err.value.field == field
    assert str(path) in str(err.value) and field in str(err.value)
    assert "\n" not in str(err.value)


def test_heap_share_at_exactly_the_limit_is_allowed(tmp_path):
    assert load_profile(write(tmp_path, "write", block_cache_fraction=0.3,
                              memstore_fraction=0.5)).heap_share == pytest.approx(0.8)


def test_warning_above_0_65(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        load_profile(write(tmp_path, "scan", block_cache_fraction=0.5, memstore_fraction=0.2))
    assert any("0.70" in r.getMessage() for r in caplog.records)


def test_not_yaml_or_not_a_mapping_or_missing(tmp_path):
    bad = tmp_path / "read.yaml"
    bad.write_text("name: [read\n")
    with pytest.raises(ProfileError, match="valid YAML"):
        load_profile(bad)
    bad.write_text("- read\n")
    with pytest.raises(ProfileError, match="mapping"):
        load_profile(bad)
    with pytest.raises(ProfileError, match="readable"):
        load_profile(tmp_path / "nothing.yaml")


def test_file_name_must_match_profile_name(tmp_path):
    for name in PROFILES:
        write(tmp_path, name)
    (tmp_path / "scan.yaml").write_text((tmp_path / "read.yaml").read_text())
    with pytest.raises(ProfileError) as err:
        load_profiles(tmp_path)
    assert err.value.field == "name" and err.value.file.endswith("scan.yaml")


def test_block_size_recommendation_per_table():
    assert recommend_block_sizes({"t1": {"scan"}, "t2": {"read", "read_write"},
                                  "t3": {"read", "scan"}}) == {"t1": 128, "t2": 32, "t3": None}


def test_block_sizes_from_a_plan():
    snap = ycsb_mix_snapshot(cpu=0.8)
    plan = decide(snap, PolicyConfig(paper_faithful=True), DecisionMemory())
    tables = plan_table_profiles(snap, plan)
    assert tables["workloadE"] == {"scan"}
    assert recommend_block_sizes(tables)["workloadE"] == 128
    assert recommend_block_sizes(tables)["workloadC"] == 32
