"""Headless text output as a person reads it in a terminal: the assistant's words in whole
blocks, each call on a line of its own, retries said once, and nothing in internal words.

stdout and stderr are one stream here, as in a terminal, so the order and the line breaks
between the two are what a person would see."""

from __future__ import annotations

import asyncio
import io
import json
import re
import sys
from pathlib import Path
from typing import get_args

import pytest
from engine_helpers import HANG_BOUND_S

from core.abort import AbortSignal
from core.agent import loop
from core.agent.headless import HeadlessOptions, run_headless
from core.events import CANCEL_WORDS, CancelReason, Stage, failure_words

CALL_END = re.compile(r"\) — (done|failed|not run|cancelled|ran)")


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture(autouse=True)
def retries_wait_for_nothing(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The loop's wait before a retry, recorded instead of slept (a session builds its loop
    itself, so the default is replaced)."""
    asked: list[float] = []

    async def sleep(delay: float, signal: AbortSignal) -> bool:
        asked.append(delay)
        return signal.aborted

    monkeypatch.setattr(loop, "_sleep_unless_aborted", sleep)
    return asked


async def terminal(monkeypatch: pytest.MonkeyPatch, scenario: str, **options: object) -> str:
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    options.setdefault("cwd", Path.cwd())
    run = HeadlessOptions(
        prompt=None,
        output_format="text",
        demo=True,
        scenario=scenario,
        demo_speed=0.0,
        **options,  # type: ignore[arg-type]
    )
    await run_headless(run, screen)
    return screen.getvalue()


async def test_faults_read_as_words_each_call_and_retry_on_its_own_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = await terminal(monkeypatch, "faults")
    lines = shown.splitlines()
    # A retried stream's text is shown once: only the response that got through.
    assert shown.count("An error event arrives after this text block.") == 1
    assert shown.count("The connection drops after this text block.") == 1
    retries = [line for line in lines if "retrying in" in line]
    assert [line.split(",")[0] for line in retries] == [
        "proctor: the API is overloaded",
        "proctor: the API is overloaded",
        "proctor: the API is overloaded",
        "proctor: the connection dropped",
    ]
    assert retries[1].endswith("(3/5)")
    # Each call is a line of its own, after the text that announced it.
    write = next(line for line in lines if line.startswith("  Write("))
    assert write.endswith(" — not run: the response was cut off at the output token limit")
    assert "  FrobnicateRepository({'level': 3}) — not run: there is no such tool" in lines
    assert any(line.endswith("— not run: its input does not fit the tool") for line in lines)
    before = lines[lines.index(write) - 1]
    assert before == "This Write's input is cut off half way."
    said = [line for line in lines if not line.startswith("proctor: ")]
    assert said[-1].startswith("Every fault played")
    assert lines[-1].startswith("proctor: removed the demo workspace ")
    for word in ("failed at", "sibling_error", "cut_off", "streaming_fallback", "lookup"):
        assert word not in shown


async def test_a_cancelled_sibling_says_why_in_words(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The sibling never ends by itself, so it is cancelled however slowly the failing
    command fails (the default scenario's `sleep 3` would finish first on a slow machine)."""
    script = tmp_path / "siblings.json"
    bash = [
        {"type": "tool_use", "name": "Bash", "input": {"command": command}}
        for command in ("sleep 3599.4321", "ls /no/such/dir")
    ]
    turns = [[{"type": "text", "text": "Both at once."}, *bash], [{"type": "text", "text": "Ok."}]]
    scenario = {"name": "siblings", "prompt": "go", "workspace": "cwd", "turns": turns}
    script.write_text(json.dumps(scenario))
    run = terminal(
        monkeypatch, str(script), cwd=tmp_path, mode="bypassPermissions", allow_bypass=True
    )
    shown = await asyncio.wait_for(run, HANG_BOUND_S)
    lines = shown.splitlines()
    assert any(line.startswith("  Bash(ls /no/such/dir) — failed") for line in lines)
    assert "  Bash(sleep 3599.4321) — cancelled: another command in its batch failed" in lines


async def test_a_sub_agents_calls_are_said_under_its_task_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = await terminal(
        monkeypatch, "default", mode="bypassPermissions", allow_bypass=True, trust=True
    )
    lines = shown.splitlines()
    task = lines.index("  Task(Find callers of top_words) — done")
    assert lines[task + 1] == "    Grep(top_words) — done"
    # No call's line is glued to the text before it: every one starts a line.
    call_lines = [line for line in lines if CALL_END.search(line)]
    assert len(call_lines) > 10
    assert all(line.startswith("  ") for line in call_lines)


def test_every_stage_and_cancel_reason_has_words() -> None:
    for stage in get_args(Stage):
        words = failure_words(stage)
        assert "_" not in words and stage not in words.split()
    for reason in get_args(CancelReason):
        assert "_" not in CANCEL_WORDS[reason]


async def test_when_retries_run_out_the_last_attempts_words_and_the_error_are_said(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import json

    scenario = tmp_path / "drops.json"
    turn = {
        "fault": {"kind": "drop", "after_blocks": 1, "times": 9},
        "blocks": [{"type": "text", "text": "Half a thought"}, {"type": "text", "text": "x"}],
    }
    scenario.write_text(
        json.dumps({"name": "drops", "prompt": "go", "workspace": "cwd", "turns": [turn]})
    )
    monkeypatch.chdir(tmp_path)
    shown = await terminal(monkeypatch, str(scenario))
    lines = shown.splitlines()
    assert [line for line in lines if "retrying" in line][-1].endswith("(5/5)")
    assert lines[-2:] == [
        "Half a thought",
        "proctor: the connection dropped (gave up after 5 tries)",
    ]
    assert shown.count("Half a thought") == 1
