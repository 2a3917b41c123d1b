"""The README's test command is what CI runs, word for word: a contributor who runs it sees
what CI will see."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_runs_the_readme_test_command_verbatim():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"^python3 -m venv \.venv && .*pytest$", readme, re.MULTILINE)
    assert len(commands) == 1, commands
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[0] in ci_lines
