"""Globs judged by what Bash turns them into: every match, symlinks included, and never a
write that could name a protected path. Each case runs the chain on real files, and the
property test checks the expansion against Bash's own."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.permissions.globs import could_name_protected, expand
from core.tools.bash import Bash

TOOL = Bash()
NAMES = ["a.txt", "b.txt", ".env", ".hidden", "src", "-rf", "x y", ".git", "notes.md"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".git").mkdir()
    (root / ".env").write_text("secret")
    for name in ("a.txt", "b.txt", "notes.md"):
        (root / name).write_text(name)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x").write_text("outside")
    (root / "outlink").symlink_to(tmp_path / "outside")
    return root


def decide(
    project: Path, command: str, mode: PermissionMode = "acceptEdits", rules: tuple[str, ...] = ()
) -> PermissionDecision:
    parsed_rules = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    permissions = ToolPermissionContext(mode=mode, rules=parsed_rules)
    parsed = TOOL.parse_input({"command": command})
    return evaluate(prepare(TOOL, parsed, project, permissions), NO_PRE_OUTCOME)


@pytest.mark.parametrize("command", ["rm .g*", "rm -rf .?it", "rm -rf .[g]it", "mv .gi? old"])
def test_a_write_glob_that_could_name_a_protected_path_asks(project: Path, command: str):
    assert isinstance(decide(project, command), Ask)


def test_a_protected_name_is_guarded_even_before_it_exists(project: Path):
    assert could_name_protected(".pro*") == ".proctor"
    assert could_name_protected("src/.c*/x") == ".claude"
    assert could_name_protected("*") is None  # `*` does not match names starting with a dot
    (project / ".git").rmdir()
    assert isinstance(decide(project, "touch .g*"), Ask)


def test_a_write_glob_is_judged_by_every_match(project: Path):
    assert isinstance(decide(project, "rm *.txt"), Allow)
    assert isinstance(decide(project, "rm out*/x"), Ask)  # through a symlink out
    assert isinstance(decide(project, "rm *"), Ask)  # `*` matches the symlink too


def test_a_read_glob_meets_the_deny_rules_its_matches_meet(project: Path):
    decision = decide(project, "cat .e*", mode="default", rules=("deny Read(.env)",))
    assert isinstance(decision, Deny)
    assert isinstance(decide(project, "cat *.md", mode="default"), Allow)
    assert isinstance(decide(project, "cat out*/*", mode="default"), Ask)


def test_quoted_and_escaped_globs_are_names(project: Path):
    assert isinstance(decide(project, "rm '.g*'"), Allow)
    assert isinstance(decide(project, "rm .g\\*"), Allow)
    assert isinstance(decide(project, 'rm ".g"*'), Ask)


def bash_expansion(pattern: str, cwd: Path) -> list[str]:
    script = f"for f in {pattern}; do printf '%s\\0' \"$f\"; done"
    out = subprocess.run(["bash", "--norc", "-c", script], cwd=cwd, capture_output=True)
    return sorted(part.decode() for part in out.stdout.split(b"\0") if part)


_PART = st.sampled_from(["*", "?", "a", ".", "t", "x", "*.txt", ".*", "s*", "?.txt", "-"])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PART, min_size=1, max_size=3).map("".join))
def test_expansion_agrees_with_bash(tmp_path_factory: pytest.TempPathFactory, pattern: str):
    root = tmp_path_factory.mktemp("glob")
    for name in NAMES:
        if name in ("src", ".git"):
            (root / name).mkdir()
        else:
            (root / name).write_text("")
    found = expand(pattern, root, for_write=False)
    assert found is not None
    assert found == bash_expansion(pattern, root), pattern
    assert os.path.isdir(root)
