"""BadInput crosses a process boundary whole: a worker of `metctl simulate` or
bench/evaluate.py that refuses a file reports the same line to the parent."""
from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import pytest

from common.errors import BadInput


def _refuse(path: str) -> None:
    raise BadInput(path, "workloads[0].rate", "a list of [t_s, ops_per_s] points")


def test_a_workers_bad_input_reaches_the_parent_with_its_file_and_field():
    with ProcessPoolExecutor(1) as pool:
        with pytest.raises(BadInput) as err:
            pool.submit(_refuse, "week.yaml").result()
    assert (err.value.file, err.value.field) == ("week.yaml", "workloads[0].rate")
    assert str(err.value) == "week.yaml: workloads[0].rate: a list of [t_s, ops_per_s] points"
