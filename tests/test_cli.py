"""The command line: `proctor --version` answers fast, without textual or anthropic."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from core import __version__

ROOT = Path(__file__).resolve().parents[1]


def test_version_prints_the_version_and_loads_neither_textual_nor_anthropic():
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "tui", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"proctor {__version__}"
    imported = set(re.findall(r"\|\s+(\S+)$", result.stderr, re.MULTILINE))
    assert "core" in imported  # the trace is real
    heavy = {name for name in imported if name.split(".")[0] in ("textual", "anthropic", "rich")}
    assert heavy == set()


def test_unknown_options_are_refused_with_usage():
    result = subprocess.run(
        [sys.executable, "-m", "tui", "--no-such-flag"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert "usage: proctor" in result.stderr and "--no-such-flag" in result.stderr


def test_sessions_lists_this_projects_sessions(tmp_path: Path):
    env = {**os.environ, "PROCTOR_DATA_DIR": str(tmp_path / "data")}
    run = [sys.executable, "-m", "tui", "sessions", "--cwd", str(tmp_path)]
    empty = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert empty.returncode == 0 and "No sessions" in empty.stdout
    made = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from core.agent.sessions import create_session, set_title; "
            "s = create_session(Path(sys.argv[1])); set_title(s, 'fix the parser'); print(s.id)",
            str(tmp_path),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    listed = subprocess.run(run, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    assert listed.stdout.startswith(made) and "fix the parser" in listed.stdout
    as_json = subprocess.run(
        [*run, "--json"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert json.loads(as_json.stdout)["id"] == made
