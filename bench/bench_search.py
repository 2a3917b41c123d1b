"""Search benchmark: what the Grep tool costs over running the same ripgrep directly.

The tool adds a subprocess started from asyncio, the parse of ripgrep's output, a stat per
matching file (to list the newest first) and the formatting. Against that, the baseline is
the very argument list the tool builds, run with `subprocess.run` and its output captured.
Both search a generated tree of 20,000+ files (with a .gitignore, outside git) in a temporary
directory that is removed afterwards; each takes the best of a few rounds, alternating, so
both see the same warm page cache.
"""

from __future__ import annotations

import asyncio
import gc
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

from core.tool import ToolContext
from core.tools.grep import GrepInput, GrepTool, build_argv, rg_path
from core.tools.search import ReadDenials

DIRECTORIES = 200
FILES_PER_DIRECTORY = 101
ROUNDS = 7
NEEDLE = "frobnicate_widget"

_WORDS = ("alpha", "beta", "gamma", "delta", "return", "value", "self", "index", "result")


def generate(root: Path, directories: int = DIRECTORIES) -> int:
    """A tree of small source-like files; about one in ten mentions the needle."""
    chooser = random.Random(20_000)
    made = 0
    for d in range(directories):
        folder = root / f"pkg{d % 20:02d}" / f"mod{d:03d}"
        folder.mkdir(parents=True)
        for f in range(FILES_PER_DIRECTORY):
            lines = [
                f"def fn_{f}_{n}({chooser.choice(_WORDS)}): return {chooser.choice(_WORDS)}"
                for n in range(20)
            ]
            if chooser.random() < 0.1:
                lines.insert(chooser.randrange(len(lines)), f"    {NEEDLE}(value)  # call")
            (folder / f"file{f:03d}.py").write_text("\n".join(lines) + "\n")
            made += 1
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    return made


async def _tool_round(tool: GrepTool, parsed: GrepInput, context: ToolContext) -> float:
    started = time.perf_counter()
    result = await tool.call(parsed, context, lambda _p: None)
    elapsed = time.perf_counter() - started
    assert not result.is_error, result.data
    return elapsed


def _rg_round(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    assert done.returncode == 0, done.stderr
    return elapsed


async def _compare(
    root: Path, raw: dict[str, Any], rounds: int
) -> tuple[float, float, list[float], list[float]]:
    tool = GrepTool()
    context = ToolContext(cwd=root)
    parsed = tool.parse_input(raw)
    rg = rg_path()
    assert rg is not None
    argv = build_argv(rg, parsed, root, root, ReadDenials.of(context.permission_context, root))
    tool_walls: list[float] = []
    rg_walls: list[float] = []
    _rg_round(argv, root)  # warm the page cache for both
    for _ in range(rounds):
        gc.collect()
        tool_walls.append(await _tool_round(tool, parsed, context))
        rg_walls.append(_rg_round(argv, root))
    return min(tool_walls), min(rg_walls), tool_walls, rg_walls


def grep_vs_rg(*, quick: bool = False) -> list[Figure]:
    directories, rounds = (4, 2) if quick else (DIRECTORIES, ROUNDS)
    root = Path(tempfile.mkdtemp(prefix="proctor-bench-search-"))
    try:
        files = generate(root, directories)
        tool_best, rg_best, tool_walls, rg_walls = asyncio.run(
            _compare(root, {"pattern": NEEDLE}, rounds)
        )
        content_tool, content_rg, _, _ = asyncio.run(
            _compare(root, {"pattern": NEEDLE, "output_mode": "content"}, rounds)
        )
        matching = len(
            subprocess.run(
                [rg_path() or "rg", "-l", NEEDLE], cwd=root, capture_output=True, check=False
            ).stdout.splitlines()
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return [
        Figure(
            "grep_vs_rg_ratio",
            tool_best / rg_best,
            "x",
            "<=",
            1.3,
            f"Grep tool (files_with_matches) over {files} files, {matching} matching, against "
            f"the same rg run directly: {tool_best * 1000:.1f} ms vs {rg_best * 1000:.1f} ms, "
            f"the best of {rounds} rounds of each, alternating",
            {
                "files": files,
                "matching_files": matching,
                "tool_best_ms": round(tool_best * 1000, 2),
                "rg_best_ms": round(rg_best * 1000, 2),
                "tool_rounds_ms": [round(w * 1000, 2) for w in tool_walls],
                "rg_rounds_ms": [round(w * 1000, 2) for w in rg_walls],
                "content_mode_ratio": round(content_tool / content_rg, 3),
                "content_tool_best_ms": round(content_tool * 1000, 2),
                "content_rg_best_ms": round(content_rg * 1000, 2),
            },
        )
    ]


BENCHMARKS = [Benchmark(("grep_vs_rg_ratio",), grep_vs_rg)]
