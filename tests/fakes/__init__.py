"""Test doubles at metctl's own driver boundary, used by the tests and by the executor benches
(bench/bench_executor.py, bench/bench_output_scale.py): an in-memory cloud + data store that
takes time and fails on demand (`cluster`), and hand-made plans on it (`plans`). No product
module imports them."""
