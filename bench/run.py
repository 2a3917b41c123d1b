"""Run proctor's benchmarks and print their figures.

    python bench/run.py                 # every figure, as a table
    python bench/run.py --json          # every figure, one JSON object per line
    python bench/run.py --json executor_overhead_us parallel_efficiency_10
    python bench/run.py --quick         # every benchmark once, few iterations: a smoke run

Each `bench/bench_*.py` module lists its benchmarks in `BENCHMARKS`; a benchmark produces one
or more figures, each compared with the target its issue names. Only the benchmarks that
produce the requested figures run. The exit status is 0 even when a figure misses its
target: these machines are shared and noisy, so a figure is a measurement to read, not a
test to pass. A benchmark that fails (raises) is reported on stderr and the others still run;
the status is then 1.

`--quick` runs each benchmark with few iterations and small inputs, to see that it still
works (tests/test_bench.py does this for every one); its numbers are not figures to compare.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from common import Benchmark, Figure  # noqa: E402


def discover() -> list[Benchmark]:
    """Every benchmark of every `bench_*.py`: a new module is registered by being there."""
    benchmarks: list[Benchmark] = []
    for path in sorted(HERE.glob("bench_*.py")):
        module = importlib.import_module(path.stem)
        benchmarks.extend(module.BENCHMARKS)
    return benchmarks


def measure(benchmark: Benchmark, quick: bool) -> list[Figure]:
    if not quick:
        return benchmark.run()
    if "quick" not in inspect.signature(benchmark.run).parameters:
        raise TypeError(
            f"{benchmark.run.__module__}.{benchmark.run.__name__}() takes no `quick` "
            "parameter: every benchmark needs a smoke run with few iterations (bench/common.py)"
        )
    return benchmark.run(quick=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figures", nargs="*", help="only the benchmarks producing these figures")
    parser.add_argument("--json", action="store_true", help="one JSON object per figure")
    parser.add_argument("--list", action="store_true", help="list the figures and exit")
    parser.add_argument(
        "--quick", action="store_true", help="few iterations, small inputs: a smoke run"
    )
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
    failed = []
    for benchmark in benchmarks:
        if not wanted & set(benchmark.figures):
            continue
        try:
            figures = measure(benchmark, args.quick)
        except Exception:
            # One broken benchmark must not cost the others' figures; it is named at the end.
            failed.append(", ".join(benchmark.figures))
            print(f"the benchmark of {failed[-1]} failed:", file=sys.stderr)
            traceback.print_exc()
            continue
        for figure in figures:
            if figure.name in wanted:
                print(json.dumps(figure.as_json()) if args.json else figure.as_line(), flush=True)
    if failed:
        print(f"failed, no figures: {'; '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
