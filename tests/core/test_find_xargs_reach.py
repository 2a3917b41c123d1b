"""`find ROOTS | xargs CMD`: xargs hands CMD the names find found, so the call reaches what
lies below find's roots, and only that when every name reaches xargs whole. Each case here
was a mutation of `shell_reach.fed_by_find` that no test noticed (docs/mutation.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.access.context import ToolPermissionContext
from core.access.decision import Allow, Ask, PermissionDecision
from core.access.rules import parse_rule
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.tools.bash import Bash

TOOL = Bash()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("KEY = 1\n")
    (root / "config").mkdir()
    (root / "config" / "token").write_text("secret\n")
    return root


def decide(project: Path, command: str, *rules: str) -> PermissionDecision:
    parsed = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    call = prepare(
        TOOL, TOOL.parse_input({"command": command}), project, ToolPermissionContext(rules=parsed)
    )
    return evaluate(call, NO_PRE_OUTCOME)


@pytest.mark.parametrize("follow", ["-L", "-follow"])
def test_find_that_follows_symlinks_hands_xargs_names_beyond_its_roots(project: Path, follow: str):
    (project / "src" / "settings").symlink_to(project / "config")
    command = f"find {follow} src -type f | xargs cat" if follow == "-L" else (
        f"find src {follow} -type f | xargs cat"
    )  # fmt: skip
    assert isinstance(decide(project, command, "deny Read(/config/**)"), Ask), command
    # Without following, the same tree is only src's own files: nothing a rule covers.
    assert isinstance(
        decide(project, "find src -type f | xargs cat", "deny Read(/config/**)"), Allow
    )


def test_a_deny_rule_below_finds_root_asks(project: Path):
    decision = decide(project, "find . -type f | xargs cat", "deny Read(/config/**)")
    assert isinstance(decision, Ask)
    assert "Read(/config/**)" in decision.message


@pytest.mark.parametrize(
    "command",
    ["find src -type f | xargs cat", "find src -type f -print0 | xargs cat",
     "find src -type f | xargs -0 cat", "find -type f | xargs cat"],
)  # fmt: skip
def test_a_name_xargs_would_split_makes_the_reach_unknown(project: Path, command: str):
    # `xargs` without -0 splits `q /etc/hostname` into two names: the second is outside.
    (project / "src" / "q ").mkdir()
    (project / "src" / "q " / "x").write_text("")
    assert isinstance(decide(project, command), Ask), command


@pytest.mark.parametrize(
    "command",
    ["find src -type f -print0 | xargs -0 cat", "find src -print0 | xargs --null cat"],
)
def test_names_passed_whole_with_print0_and_null_stay_inside(project: Path, command: str):
    (project / "src" / "q ").mkdir()
    (project / "src" / "q " / "x").write_text("")
    assert isinstance(decide(project, command), Allow), command


def test_xargs_own_operands_are_reached_too(project: Path):
    decision = decide(
        project, "find src -type f | xargs grep -l KEY config/token", "deny Read(/config/**)"
    )
    assert not isinstance(decision, Allow)
    assert isinstance(decide(project, "find src -type f | xargs grep -l KEY src/app.py"), Allow)
