"""Benchmarks of debugrelay against raw debugpy: ``python -m bench`` (see bench/run.py)."""
