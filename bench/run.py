"""Run proctor's benchmarks and print their figures.

    python bench/run.py                 # every figure, as a table
    python bench/run.py --json          # every figure, one JSON object per line
    python bench/run.py --json executor_overhead_us parallel_efficiency_10

Each `bench/bench_*.py` module lists its benchmarks in `BENCHMARKS`; a benchmark produces one
or more figures, each compared with the target its issue names. Only the benchmarks that
produce the requested figures run. The exit status is 0 even when a figure misses its
target: these machines are shared and noisy, so a figure is a measurement to read, not a
test to pass.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from common import Benchmark  # noqa: E402


def discover() -> list[Benchmark]:
    benchmarks: list[Benchmark] = []
    for path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(path.stem)
        benchmarks.extend(module.BENCHMARKS)
    return benchmarks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", nargs="*", help="only the benchmarks producing these figures")
    parser.add_argument("--json", action="store_true", help="one JSON object per figure")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    args = parser.parse_args(argv)

    benchmarks = discover()
    known = {name for b in benchmarks for name in b.figures}
    if args.list:
        print("\n".join(sorted(known)))
        return 0
    unknown = sorted(set(args.figures) - known)
    if unknown:
        parser.error(f"unknown figure(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    wanted = set(args.figures) or known
    for benchmark in benchmarks:
        if not wanted & set(benchmark.figures):
            continue
        for figure in benchmark.run():
            if figure.name in wanted:
                print(json.dumps(figure.as_json()) if args.json else figure.as_line(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
