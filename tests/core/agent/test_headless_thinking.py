"""Thinking in headless runs: text mode keeps it out of stdout (and says nothing of it unless
`--show-thinking`, which puts each thought on stderr, whole, once, before the words it led
to); stream-json carries it as the API sent it, signatures and redacted blocks included."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from core.abort import AbortSignal
from core.agent import loop
from core.agent.demo_thinking import signature_of
from core.agent.headless import HeadlessOptions, OutputFormat, run_headless

THOUGHT = "The README is the only markdown file;\none Glob confirms it."
LATER = "Confirmed: one file."
TURNS: list[Any] = [
    [
        {"type": "thinking", "thinking": THOUGHT},
        {"type": "text", "text": "Looking for markdown."},
        {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}},
    ],
    {  # broken after its thought, then retried: the thought is said once
        "blocks": [
            {"type": "thinking", "thinking": LATER},
            {"type": "redacted_thinking"},
            {"type": "text", "text": "One file: README.md."},
        ],
        "fault": {"kind": "drop", "after_blocks": 1},
    },
]


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))

    async def sleep(delay: float, signal: AbortSignal) -> bool:  # a retry waits for nothing
        return signal.aborted

    monkeypatch.setattr(loop, "_sleep_unless_aborted", sleep)


async def run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    output_format: OutputFormat = "text",
    *,
    same_stream: bool = False,
    **options: Any,
) -> tuple[str, str]:
    """stdout and stderr of a run; with `same_stream`, both in one, as a terminal shows."""
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "README.md").write_text("# hi\n")
    scenario = project / "s.json"
    scenario.write_text(json.dumps({"name": "s", "workspace": "cwd", "turns": TURNS}))
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", out if same_stream else err)
    headless = HeadlessOptions(
        prompt="what markdown is there?",
        cwd=project,
        output_format=output_format,
        demo=True,
        scenario=str(scenario),
        demo_speed=0.0,
        **options,
    )
    assert await run_headless(headless, out) == 0
    return out.getvalue(), err.getvalue()


async def test_text_mode_says_no_thinking_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout, stderr = await run(tmp_path, monkeypatch)
    assert "Looking for markdown." in stdout and "One file: README.md." in stdout
    both = stdout + stderr
    assert "Glob confirms" not in both and LATER not in both and "thinking" not in both


async def test_show_thinking_puts_each_thought_on_stderr_once_before_its_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout, stderr = await run(tmp_path, monkeypatch, show_thinking=True)
    # stdout is the answer alone, as a pipe wants it.
    assert "thinking" not in stdout and "Glob confirms" not in stdout
    assert "thinking:\n  The README is the only markdown file;\n  one Glob confirms it.\n" in stderr
    assert stderr.count(LATER) == 1  # the broken stream's thought is not said twice
    assert "thinking (redacted)" in stderr
    assert "\x1b[" not in stderr  # not a terminal: no colour codes

    screen, _ = await run(tmp_path / "again", monkeypatch, show_thinking=True, same_stream=True)
    lines = screen.splitlines()
    at = {text: lines.index(text) for text in ("thinking:", "Looking for markdown.")}
    assert at["thinking:"] < at["Looking for markdown."]
    glob = next(i for i, line in enumerate(lines) if line.startswith("  Glob("))
    later = lines.index(f"  {LATER}")
    assert glob < later < lines.index("thinking (redacted)") < lines.index("One file: README.md.")


async def test_stream_json_carries_the_thinking_blocks_as_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdout, _ = await run(tmp_path, monkeypatch, "stream-json")
    records = [json.loads(line) for line in stdout.splitlines()]
    said = [r["message"]["content"] for r in records if r.get("type") == "assistant"]
    signed = {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)}
    assert said[0][0] == signed
    assert [b["type"] for b in said[-1]] == ["thinking", "redacted_thinking", "text"]
    assert said[-1][1]["data"]  # the opaque data, for a script that sends it back
    assert records[-1]["type"] == "result" and not records[-1]["is_error"]


@pytest.mark.parametrize(
    "argv",
    [
        ["--show-thinking"],  # the app: ctrl+r
        ["-p", "hi", "--output-format", "stream-json", "--show-thinking"],
    ],
)
def test_show_thinking_elsewhere_is_refused_with_why(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tui import cli
    from tui.cli import _main

    def started(*_: Any) -> int:
        raise AssertionError("it ran instead of saying why not")

    monkeypatch.setattr(cli, "run_app", started)
    monkeypatch.setattr(cli, "run_print", started)
    with pytest.raises(SystemExit) as exited:
        _main(["--demo", *argv])
    assert exited.value.code == 2
    assert "--show-thinking prints thinking in -p's text output" in capsys.readouterr().err
