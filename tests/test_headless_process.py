"""A headless run as a process: it leaves without the interpreter's teardown (os._exit),
and nothing it printed or kept is lost for that.

The runs use the offline demo model (the real SDK over an in-process transport) on
hand-written scenarios, with stdout and stderr on pipes and PYTHONUNBUFFERED unset, so
output that was never flushed would be missing here.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def scenario(tmp_path: Path, marker: str) -> Path:
    """A text, a background shell left running, a read, and the answer."""
    path = tmp_path / "scenario.json"
    path.write_text(
        json.dumps(
            {
                "name": "fast-exit",
                "description": "leaves a background shell running and ends",
                "prompt": "start the long job and tell me about notes.txt",
                "workspace": "cwd",
                "turns": [
                    [
                        {"type": "text", "text": "Starting the job.", "pace_ms": 0},
                        {
                            "type": "tool_use",
                            "name": "Bash",
                            "input": {
                                "command": f"sleep 300; echo {marker}",
                                "run_in_background": True,
                            },
                            "pace_ms": 0,
                        },
                        {
                            "type": "tool_use",
                            "name": "Read",
                            "input": {"file_path": "{workspace}/notes.txt"},
                            "pace_ms": 0,
                        },
                    ],
                    [{"type": "text", "text": "The job runs; notes.txt says hello.", "pace_ms": 0}],
                ],
            }
        )
    )
    return path


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "ANTHROPIC_API_KEY")
    }
    env.update(
        PROCTOR_DATA_DIR=str(tmp_path / "data"),
        PROCTOR_CONFIG_DIR=str(tmp_path / "config"),
        PYTHONPATH=str(ROOT),
    )
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    (project / "notes.txt").write_text("hello\n")
    return subprocess.run(
        [sys.executable, "-m", "tui", "--demo", "--allow", "Bash(sleep:*)", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def transcript(tmp_path: Path, session_id: str) -> list[dict[str, Any]]:
    (path,) = [p for p in (tmp_path / "data").rglob("transcript.jsonl") if session_id in str(p)]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def running(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker in command and "pytest" not in command:
            found.append(f"{proc.name}: {command}")
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A word only this test's background shell has; whatever still has it is ended."""
    word = f"proctor-fast-exit-{uuid.uuid4().hex}"
    yield word
    for left in running(word):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.killpg(int(left.split(":")[0]), signal.SIGKILL)


def test_stream_json_output_and_transcript_are_whole_after_the_fast_exit(
    tmp_path: Path, marker: str
):
    result = run(
        tmp_path,
        "--scenario",
        str(scenario(tmp_path, marker)),
        "-p",
        "--output-format",
        "stream-json",
    )
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert records[0]["type"] == "system" and records[-1]["type"] == "result"
    assert records[-1]["result"] == "The job runs; notes.txt says hello."
    assert result.stdout.endswith("}\n")
    completed = [r for r in records if r.get("kind") == "completed"]
    assert {r["name"] for r in completed} == {"Bash", "Read"}

    kept = transcript(tmp_path, records[0]["session_id"])
    assert kept[-1]["type"] == "end" and kept[-1]["reason"] == "finished"
    shown_ids = {r["tool_use_id"] for r in records if r["type"] == "tool_event"}
    kept_ids = {r["tool_use_id"] for r in kept if r["type"] == "tool_event"}
    assert shown_ids == kept_ids and len(shown_ids) == 2
    answers = [r for r in kept if r["type"] == "message" and r["role"] == "assistant"]
    assert answers[-1]["content"][0]["text"] == "The job runs; notes.txt says hello."
    # The session closed its background shell before the process left.
    assert running(marker) == []


def test_text_output_and_narration_are_whole_after_the_fast_exit(tmp_path: Path, marker: str):
    result = run(tmp_path, "--scenario", str(scenario(tmp_path, marker)), "-p")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Starting the job.")
    assert result.stdout.rstrip("\n").endswith("The job runs; notes.txt says hello.")
    assert result.stdout.endswith("\n")
    # The narration of both calls, wherever the text layout puts it.
    told = result.stdout + result.stderr
    assert "Bash(sleep 300" in told and "Read(" in told and "notes.txt" in told
    assert running(marker) == []
