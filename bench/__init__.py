"""Benchmarks that print figures (never timed asserts); bench/slb.py is shared with tests/bench/."""
