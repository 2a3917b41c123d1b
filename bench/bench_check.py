"""`proctor check --batch` throughput, start-up included."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import Benchmark, Figure

REQUESTS = 10_000
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


def _lines(cwd: Path) -> str:
    lines = []
    for i in range(REQUESTS):
        if i % 4 == 3:
            request = {"tool": "Read", "input": {"file_path": str(cwd / f"src/file{i % 50}.py")}}
        else:
            request = {
                "tool": "Bash",
                "input": {"command": COMMANDS[i % len(COMMANDS)]},
                "rules": {"allow": ["Bash(npm run test:*)"], "deny": ["Bash(git push:*)"]},
            }
        if i % 5 == 0:
            request["mode"] = "acceptEdits"
        lines.append(json.dumps(request))
    return "\n".join(lines) + "\n"


def check_batch() -> list[Figure]:
    walls = []
    with tempfile.TemporaryDirectory() as folder:
        cwd = Path(folder)
        stdin = _lines(cwd)
        for _ in range(3):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "tui", "check", "--batch", "--isolated", "--cwd", folder],
                input=stdin,
                capture_output=True,
                text=True,
                cwd=ROOT,
                check=False,
            )
            walls.append(time.perf_counter() - started)
            answers = done.stdout.splitlines()
            if done.returncode != 0 or len(answers) != REQUESTS or '"error"' in answers[0]:
                raise RuntimeError(f"check --batch failed: {done.stderr[-500:]} {answers[:1]}")
    best = min(walls)
    return [
        Figure(
            "check_batch_per_s",
            REQUESTS / best,
            "req/s",
            ">=",
            2000,
            f"{REQUESTS:,} requests through `proctor check --batch`, start-up included",
            {"walls_s": [round(w, 3) for w in walls]},
        )
    ]


BENCHMARKS = [Benchmark(("check_batch_per_s",), check_batch)]
