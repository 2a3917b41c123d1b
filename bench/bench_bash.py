"""Bash analysis benchmark: how many commands a second the read-only check classifies."""

from __future__ import annotations

import gc
import json
import time
from pathlib import Path

from common import Benchmark, Figure

from core.bash import analyze

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "core" / "bash" / "corpus.jsonl"
MINIMUM = 20_000
ROUNDS = 3


def _commands() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").split("\n")
    return [json.loads(line)["command"] for line in lines if line.strip()]


def _round(commands: list[str], repeats: int) -> float:
    started = time.perf_counter()
    for _ in range(repeats):
        # Clearing the cache every pass makes every call parse and classify for real.
        analyze.cache_clear()
        for command in commands:
            analyze(command)
    return time.perf_counter() - started


def bash_classify(*, quick: bool = False) -> list[Figure]:
    commands = _commands()
    rounds = 2 if quick else ROUNDS
    repeats = 1 if quick else -(-MINIMUM // len(commands))
    total = repeats * len(commands)
    gc.collect()
    walls = [_round(commands, repeats) for _ in range(rounds)]
    best = min(walls)
    return [
        Figure(
            "bash_classify_per_s",
            total / best,
            "cmd/s",
            ">=",
            10_000,
            f"commands parsed and classified per second, the {len(commands)}-command corpus "
            f"repeated to {total} classifications with the cache cleared each pass; best of "
            f"{rounds} rounds",
            {
                "classifications_per_round": total,
                "round_walls_s": [round(w, 4) for w in walls],
                "mean_us": round(best / total * 1e6, 2),
            },
        )
    ]


BENCHMARKS = [Benchmark(("bash_classify_per_s",), bash_classify)]
