"""A real headless session (`proctor -p` as a process) writes its audit log whole and exact.

The run uses the offline demo model (the real SDK over an in-process transport) on a
hand-written scenario that makes one call for each way a headless run decides: by the mode,
by the sandbox's read-only judgement, by a deny rule given on the command line, by a user
hook, and a call that would ask, which nobody is there to answer. Each record is compared
whole, so a field dropped, a mode misreported or a record written twice fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from sandbox_helpers import SUPPORT

ROOT = Path(__file__).resolve().parents[1]
HOOK = "echo 'no globbing in this project' >&2; exit 2"


def scenario(tmp_path: Path, outside: Path) -> Path:
    def call(name: str, **input: Any) -> dict[str, Any]:
        return {"type": "tool_use", "name": name, "input": input, "pace_ms": 0}

    path = tmp_path / "scenario.json"
    path.write_text(
        json.dumps(
            {
                "name": "audited",
                "description": "one call for each way a headless run decides",
                "prompt": "tidy up",
                "workspace": "cwd",
                "turns": [
                    [
                        call("Read", file_path="{workspace}/notes.txt"),
                        call("Write", file_path="{workspace}/new.txt", content="new\n"),
                        call("Bash", command="ls"),
                        call("Write", file_path=str(outside), content="x\n"),
                        call("Glob", pattern="*.txt"),
                    ],
                    # A refused command cancels the commands beside it: a turn of its own.
                    [call("Bash", command="rm -rf build")],
                    [{"type": "text", "text": "Done.", "pace_ms": 0}],
                ],
            }
        )
    )
    return path


def run_headless(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    project, config, outside = tmp_path / "project", tmp_path / "config", tmp_path / "outside.txt"
    project.mkdir()
    config.mkdir()
    (project / "notes.txt").write_text("hello\n")
    hooks = {"PreToolUse": [{"matcher": "Glob", "hooks": [{"type": "command", "command": HOOK}]}]}
    (config / "settings.json").write_text(json.dumps({"hooks": hooks}))
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "ANTHROPIC_API_KEY")
    }
    env.update(
        PROCTOR_DATA_DIR=str(tmp_path / "data"),
        PROCTOR_CONFIG_DIR=str(config),
        PYTHONPATH=str(ROOT),
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "tui",
            "--demo",
            "--scenario",
            str(scenario(tmp_path, outside)),
            "-p",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "acceptEdits",
            "--deny",
            "Bash(rm:*)",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return result, project, outside


def decision(tool_use_id: str, tool: str, input: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {
        "kind": "decision",
        "tool_use_id": tool_use_id,
        "tool": tool,
        "input": input,
        "message": None,
        "mode": "acceptEdits",
        "agent": None,
        "sandbox": None,
        "sandbox_why": None,
        **fields,
    }


def test_a_headless_run_writes_every_decision_to_its_audit_log(tmp_path: Path):
    started = time.time()
    result, project, outside = run_headless(tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    session_id = lines[0]["session_id"]
    [path] = (tmp_path / "data").rglob("audit.jsonl")
    assert session_id in str(path)
    records = [json.loads(line) for line in path.read_text().splitlines()]

    stamps = [record.pop("at") for record in records]
    assert stamps == sorted(stamps) and started <= stamps[0] and stamps[-1] <= time.time()
    if SUPPORT.available:
        ls_sandbox = {"sandbox": "read-only", "sandbox_why": "judged read-only by the analysis"}
    else:
        ls_sandbox = {"sandbox": "none", "sandbox_why": f"no sandbox here: {SUPPORT.problem}"}
    asked = f"Write would change {outside}, outside the working directories."
    assert records == [
        decision(
            "toolu_demo_0_0",
            "Read",
            {"file_path": str(project / "notes.txt")},
            behavior="allow",
            decided_by={
                "kind": "mode",
                "detail": "a read-only call inside the working directories",
            },
        ),
        decision(
            "toolu_demo_0_1",
            "Write",
            {"file_path": str(project / "new.txt"), "content": "new\n"},
            behavior="allow",
            decided_by={
                "kind": "mode",
                "detail": "accept edits mode (inside the working directories)",
            },
        ),
        decision(
            "toolu_demo_0_2",
            "Bash",
            {"command": "ls"},
            behavior="allow",
            decided_by={
                "kind": "mode",
                "detail": "a read-only call inside the working directories",
            },
            **ls_sandbox,
        ),
        decision(
            "toolu_demo_0_3",
            "Write",
            {"file_path": str(outside), "content": "x\n"},
            behavior="deny",
            decided_by={"kind": "default", "detail": "nobody was there to approve it"},
            message=f"Write needs approval ({asked}) and nobody is here to give it, "
            "so it was not run.",
        ),
        decision(
            "toolu_demo_0_4",
            "Glob",
            {"pattern": "*.txt"},
            behavior="deny",
            decided_by={
                "kind": "hook",
                "detail": f"hook `{HOOK}` from {tmp_path / 'config' / 'settings.json'}",
            },
            message="no globbing in this project",
        ),
        decision(
            "toolu_demo_1_0",
            "Bash",
            {"command": "rm -rf build"},
            behavior="deny",
            decided_by={"kind": "rule", "detail": "the deny rule Bash(rm:*) (cli)"},
            message="Bash was denied by the deny rule Bash(rm:*) (cli).",
        ),
    ]
    # What the log says is what happened.
    assert (project / "new.txt").read_text() == "new\n" and not outside.exists()
