"""Benchmarks run by `make bench`; numbers, never pass/fail assertions."""
