"""PolicyConfig: MET's defaults, types and the cross-field rules."""
import pytest
from pydantic import ValidationError

from decision.policy import PolicyConfig


def test_defaults_are_mets_parameters():
    p = PolicyConfig()
    assert (p.name, p.cpu_high, p.io_wait_high, p.memory_high, p.cpu_low, p.io_wait_low) == \
        ("met", 0.60, 0.20, 0.95, 0.10, 0.05)
    assert (p.remove_fraction, p.scale_in_headroom, p.suboptimal_threshold) == (0.5, 0.8, 0.5)
    assert (p.min_nodes, p.max_nodes, p.grouping, p.max_moves) == (1, 100, "count", None)
    assert (p.read_threshold, p.scan_threshold, p.write_threshold) == (0.6, 0.6, 0.6)
    assert (p.tiramola_cpu_high, p.tiramola_cpu_low, p.tiramola_window_s) == (0.40, 0.15, 300.0)


def test_every_field_is_documented():
    for name, field in PolicyConfig.model_fields.items():
        assert field.description, name


@pytest.mark.parametrize("bad", [
    {"cpu_low": 0.7}, {"io_wait_low": 0.3}, {"min_nodes": 5, "max_nodes": 2},
    {"tiramola_cpu_low": 0.5}, {"max_moves": 1.5}, {"max_moves": -1}, {"max_moves": True},
    {"name": "random"}, {"grouping": "size"}, {"cpu_high": 1.5}, {"unknown_field": 1},
])
def test_bad_values_are_refused(bad):
    with pytest.raises(ValidationError):
        PolicyConfig(**bad)


def test_frozen():
    with pytest.raises(ValidationError):
        PolicyConfig().cpu_high = 0.9


@pytest.mark.parametrize("max_moves, partitions, limit", [
    (None, 100, None), (7, 100, 7), (0, 100, 0), (0.25, 100, 25), (0.001, 100, 1), (1.0, 40, 40),
])
def test_move_limit(max_moves, partitions, limit):
    assert PolicyConfig(max_moves=max_moves).move_limit(partitions) == limit
