"""The benchmarks, one module each; ``python -m tools.bench NAME`` (``./dev bench NAME``) runs
one (:mod:`tools.bench.__main__` lists them). docs/benchmarks.md says what each measures and
holds the current figures; none of them asserts a figure: the machines are shared and noisy.
"""
