"""Building a request's prompt: ten instruction files and 200 messages, in at most 5 ms.

What is timed is everything proctor does before a request goes out that depends on the
project's instructions and the conversation's length: reading the instruction files (ten,
some through `@imports`, from the repository root down), putting them in the stable system
block beside the volatile one, the tool definitions, and the per-message result budget over
200 messages. Git facts are read once per session and are not part of it. The median of many
builds is reported; the first (cold) build is reported beside it.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

from core.access.context import ToolPermissionContext
from core.agent.git_facts import GitFacts
from core.agent.instructions import load_instructions
from core.agent.prompt import Environment, system_blocks, tool_definitions
from core.registry import assemble_tool_pool
from core.results import ContentReplacementState, ResultStore, enforce_tool_result_budget
from core.tool import ToolOptions

FILES = 10
MESSAGES = 200
RUNS = 200
RULE = "- Run the checks before you stop; keep changes small and say what is left.\n"


def _project(root: Path) -> Path:
    """A repository two levels deep with ten instruction files along the way."""
    (root / ".git").mkdir()
    work = root / "services" / "api"
    (work / ".claude").mkdir(parents=True)
    (root / "docs").mkdir()
    for directory in (root, root / "services", work):
        (directory / "CLAUDE.md").write_text(RULE * 20)
    (root / "AGENTS.md").write_text(RULE * 30)
    (root / "CLAUDE.local.md").write_text(RULE * 5)
    (work / ".claude" / "CLAUDE.md").write_text(RULE * 10 + "@../../../docs/style.md\n")
    (root / "docs" / "style.md").write_text(RULE * 15 + "@testing.md @review.md\n")
    (root / "docs" / "testing.md").write_text(RULE * 15)
    (root / "docs" / "review.md").write_text(RULE * 15)
    os.environ["CLAUDE_CONFIG_DIR"] = str(root / "user")
    (root / "user").mkdir()
    (root / "user" / "CLAUDE.md").write_text(RULE * 5)
    return work


def _messages() -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for i in range(MESSAGES // 2):
        call = f"toolu_{i:04d}"
        messages.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"Looking at file {i}."},
                    {"type": "tool_use", "id": call, "name": "Read", "input": {"file_path": "x"}},
                ],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call, "content": "y" * 2000}],
            }
        )
    return [{"role": "user", "content": "go"}, *messages[:-1]]


def prompt_build(*, quick: bool = False) -> list[Figure]:
    runs = 5 if quick else RUNS
    saved = os.environ.get("CLAUDE_CONFIG_DIR")
    try:
        with tempfile.TemporaryDirectory() as folder:
            work = _project(Path(folder))
            permissions = ToolPermissionContext()
            options = ToolOptions(tools=assemble_tool_pool(permissions))
            environment = Environment(cwd=work, git=GitFacts("repository", branch="main"))
            messages = _messages()
            store = ResultStore(Path(folder) / "session")
            times: list[float] = []
            loaded = 0
            for _ in range(runs):
                started = time.perf_counter()
                instructions = load_instructions(work)
                system_blocks(options, permissions, environment, extra=instructions.prompt_text())
                tool_definitions(options)
                enforce_tool_result_budget(messages, ContentReplacementState(), store)
                times.append((time.perf_counter() - started) * 1000)
                loaded = len(instructions.files)
    finally:
        if saved is None:
            os.environ.pop("CLAUDE_CONFIG_DIR", None)
        else:
            os.environ["CLAUDE_CONFIG_DIR"] = saved
    return [
        Figure(
            "prompt_build_ms",
            statistics.median(times),
            "ms",
            "<=",
            5,
            f"median of {runs} builds of a request's prompt with {loaded} instruction files "
            f"read from disk and {len(messages)} messages; the first (cold) build in the details",
            {"files": loaded, "messages": len(messages), "first_ms": round(times[0], 3)},
        )
    ]


BENCHMARKS = [Benchmark(("prompt_build_ms",), prompt_build)]
