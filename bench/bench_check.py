"""`proctor check --batch` throughput, start-up included.

`check_batch_per_s` sends requests that are all different: each command and each path comes
once, so no cache (the command analysis's, the path resolution's) can answer in place of the
decision chain. The same families of commands as before (reads, pipes, allowed and denied
pushes, destructive finds, substitutions, wrappers) keep the mix of verdicts, with the file
names, counts and branches varied. `check_batch_cached_per_s` cycles through ten commands, as
a hook asking about the same few commands would: nearly every analysis is then a cache hit.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import Benchmark, Figure

REQUESTS = 10_000
ROUNDS = 3
ROOT = Path(__file__).resolve().parents[1]

COMMANDS = [
    "git status",
    "ls -la src | grep test | wc -l",
    "npm run test -- --watch",
    "rm -rf build && mkdir build",
    "git push origin main",
    "cat README.md",
    "find . -name '*.py' -exec rm {} \\;",
    "sed -n '1,20p' setup.cfg",
    "echo $(curl -s https://example.com)",
    "timeout 5 make -j4",
]
"""The cached figure's ten commands."""

FAMILIES = [
    "git status -- src/area{i}",
    "ls -la src/area{i} | grep test_{i} | wc -l",
    "npm run test -- --grep case{i}",
    "rm -rf build{i} && mkdir build{i}",
    "git push origin feature/{i}",
    "cat docs/page{i}.md",
    "find . -name '*{i}.py' -exec rm {{}} \\;",
    "sed -n '{i},{j}p' setup.cfg",
    "echo $(curl -s https://example.com/item/{i})",
    "timeout {i} make -j4",
]
"""The distinct figure's families: each `{i}` a number no other request uses."""


def _bash(i: int, distinct: bool) -> str:
    if not distinct:
        return COMMANDS[i % len(COMMANDS)]
    return FAMILIES[i % len(FAMILIES)].format(i=i, j=i + 20)


def _lines(cwd: Path, requests: int, distinct: bool) -> str:
    lines = []
    for i in range(requests):
        if i % 4 == 3:
            name = f"src/file{i if distinct else i % 50}.py"
            request = {"tool": "Read", "input": {"file_path": str(cwd / name)}}
        else:
            request = {
                "tool": "Bash",
                "input": {"command": _bash(i, distinct)},
                "rules": {"allow": ["Bash(npm run test:*)"], "deny": ["Bash(git push:*)"]},
            }
        if i % 5 == 0:
            request["mode"] = "acceptEdits"
        lines.append(json.dumps(request))
    if distinct and len(set(lines)) != requests:
        raise RuntimeError("the distinct corpus repeats a request")
    return "\n".join(lines) + "\n"


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _walls(
    requests: int, rounds: int, distinct: bool
) -> tuple[list[float], list[float], dict[str, int]]:
    walls: list[float] = []
    cpus: list[float] = []
    verdicts: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        stdin = _lines(Path(folder), requests, distinct)
        for _ in range(rounds):
            started, cpu_started = time.perf_counter(), _children_cpu_s()
            done = subprocess.run(
                [sys.executable, "-m", "tui", "check", "--batch", "--isolated", "--cwd", folder],
                input=stdin,
                capture_output=True,
                text=True,
                cwd=ROOT,
                check=False,
            )
            walls.append(time.perf_counter() - started)
            cpus.append(_children_cpu_s() - cpu_started)
            answers = [json.loads(line) for line in done.stdout.splitlines()]
            if done.returncode != 0 or len(answers) != requests or "error" in answers[0]:
                raise RuntimeError(f"check --batch failed: {done.stderr[-500:]} {answers[:1]}")
            verdicts = {}
            for answer in answers:
                verdicts[answer["behavior"]] = verdicts.get(answer["behavior"], 0) + 1
    return walls, cpus, verdicts


def check_batch(*, quick: bool = False) -> list[Figure]:
    requests, rounds = (200, 2) if quick else (REQUESTS, ROUNDS)
    figures = []
    for name, distinct, what in (
        ("check_batch_per_s", True, "all different (no cache can answer)"),
        ("check_batch_cached_per_s", False, "cycling through ten commands (mostly cache hits)"),
    ):
        walls, cpus, verdicts = _walls(requests, rounds, distinct)
        figures.append(
            Figure(
                name,
                requests / min(walls),
                "req/s",
                ">=",
                2000,
                f"{requests:,} requests through `proctor check --batch`, {what}, start-up "
                f"included; best of {rounds} runs",
                {
                    "requests": requests,
                    "walls_s": [round(w, 3) for w in walls],
                    # CPU time, which a loaded machine's waiting does not blur.
                    "cpu_s": [round(c, 3) for c in cpus],
                    "verdicts": verdicts,
                },
            )
        )
    return figures


BENCHMARKS = [Benchmark(("check_batch_per_s", "check_batch_cached_per_s"), check_batch)]
