"""`false_refusal_rate`: how often proctor asks about a command it should simply run.

The corpus (`data/everyday_read_only.txt`) is everyday read-only commands from the programs'
own documentation and common shell habits, not from proctor's tests. Each is decided by the
real decision chain in default mode, with no rules, in a scratch project that has the files
the commands name (a git repository with a commit, sources, a README, CSV and JSON files).
The figure is the share that would not run without asking; the details list them.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from common import Benchmark, Figure

CORPUS = Path(__file__).resolve().parent / "data" / "everyday_read_only.txt"

FILES = {
    "README.md": "# demo\nTODO: write more\nhttp://example.com\n",
    "src/main.py": "import os\n\ndef main():\n    pass  # TODO\n",
    "tests/test_main.py": "from src.main import main\n",
    "data.csv": "a,b\n1,2\n",
    "data.txt": "x 1\ny 2\n",
    "numbers.txt": "3\n1\n2\n",
    "a.txt": "a\n",
    "b.txt": "b\n",
    "package.json": '{"name": "demo", "version": "1.0.0", "dependencies": {}}\n',
    "data.json": "[1, 2, 3]\n",
    ".env.example": "KEY=\n",
}


def commands() -> list[str]:
    lines = CORPUS.read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def _project(root: Path) -> None:
    for name, text in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "."], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=root, check=True)


def refusals(corpus: list[str]) -> list[tuple[str, str]]:
    from core.access.context import ToolPermissionContext
    from core.access.decision import Allow
    from core.hooks import NO_PRE_OUTCOME
    from core.permissions.decide import evaluate, prepare
    from core.tools.bash import Bash

    tool = Bash()
    permissions = ToolPermissionContext()
    refused: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="proctor-corpus-") as folder:
        root = Path(folder)
        _project(root)
        for command in corpus:
            parsed = tool.parse_input({"command": command})
            decision = evaluate(prepare(tool, parsed, root, permissions), NO_PRE_OUTCOME)
            if not isinstance(decision, Allow):
                refused.append((command, getattr(decision, "message", "")))
    return refused


def bench_false_refusals(*, quick: bool = False) -> list[Figure]:
    corpus = commands()[:40] if quick else commands()
    refused = refusals(corpus)
    rate = 100 * len(refused) / len(corpus)
    return [
        Figure(
            "false_refusal_rate",
            rate,
            "%",
            "<=",
            2,
            f"share of {len(corpus)} everyday read-only commands (from documentation and "
            "shell habits, bench/data/everyday_read_only.txt) that would ask in default mode",
            {"refused": [f"{command}  — {why}" for command, why in refused]},
        )
    ]


BENCHMARKS = [Benchmark(("false_refusal_rate",), bench_false_refusals)]
