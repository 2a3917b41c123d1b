"""The command line: `proctor --version` answers fast, without textual or anthropic."""

from __future__ import annotations

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
