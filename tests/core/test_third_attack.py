"""Found by a third attack on the permission chain: removals the critical-path guard could
not read, removals that take protected paths with them, patterns and `~+` in paths, copies
that read whole trees, and git's configuration files."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.tools.bash import Bash

TOOL = Bash()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "build").mkdir()
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "secrets").mkdir()
    (root / "secrets" / "key").write_text("k")
    (root / "d").mkdir()
    (tmp_path / "outside").write_text("o")
    (root / "d" / "out").symlink_to(tmp_path / "outside")
    return root


def decide(
    command: str, project: Path, *rules: str, mode: PermissionMode = "bypassPermissions"
) -> PermissionDecision:
    parsed = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    permissions = ToolPermissionContext(mode=mode, rules=parsed)
    call = prepare(TOOL, TOOL.parse_input({"command": command}), project, permissions)
    return evaluate(call, NO_PRE_OUTCOME)


@pytest.mark.parametrize(
    "command",
    ['rm -rf "$HOME"', "rm -rf $PWD", "rm -rf `pwd`", 'rmdir "$HOME"', "rm -rf ~{,}",
     "bash -c 'rm -rf /'", 'sh -c "rm -rf ~"', "eval 'rm -rf /'",
     "find ~ -maxdepth 0 -exec rm -rf {} +", "find / -delete", "mv ~ /tmp/elsewhere",
     "rm -rf ~+"],
)  # fmt: skip
def test_removing_what_may_be_critical_always_asks(command: str, project: Path):
    decision = decide(command, project)
    assert isinstance(decision, Ask), command
    assert "always asks" in decision.message


@pytest.mark.parametrize(
    "command", ["rm -rf {project}", "rmdir {project}", "rm -rf vendor", "mv vendor/lib /tmp/x"]
)
def test_accept_edits_never_removes_the_project_or_what_holds_a_protected_path(
    command: str, project: Path
):
    command = command.format(project=project)
    assert isinstance(decide(command, project, mode="acceptEdits"), Ask), command
    assert isinstance(decide("rm -rf build", project, mode="acceptEdits"), Allow)


def test_a_deny_rule_covers_what_a_removal_takes_below_it(project: Path):
    for command in ("rm -rf vendor/lib", "mv vendor /tmp/x"):
        assert isinstance(decide(command, project, "deny Edit(.git/**)"), Deny), command
    assert isinstance(decide("rm -rf build", project, "deny Edit(.git/**)"), Allow)


@pytest.mark.parametrize(
    ("command", "mode", "rules"),
    [
        ("echo x >> .gi?/config", "acceptEdits", ()),
        ("echo x > .gi*/config", "bypassPermissions", ("deny Edit(.git/**)",)),
        ("cat < .gi?/config", "bypassPermissions", ("deny Read(.git/**)",)),
        ("cat < secret?/key", "default", ()),
        ("touch ~+/../escaped", "acceptEdits", ()),
        ("echo x > ~0/../x", "acceptEdits", ()),
        ("cat ~+/secrets/key", "bypassPermissions", ("deny Read(/secrets/**)",)),
        ("cp -r . copy", "acceptEdits", ("deny Read(/secrets/**)",)),
        ("cp -rL d copy", "acceptEdits", ()),
        ("git config --global --list", "bypassPermissions", ("deny Read(~/.gitconfig)",)),
        ("git config --local --list", "bypassPermissions", ("deny Read(.git/config)",)),
        ("cp a.txt /proc/self/cwd/.git/config", "bypassPermissions", ("deny Edit(.git/**)",)),
    ],
)
def test_patterns_tildes_copies_and_config_files_are_what_they_reach(
    command: str, mode: PermissionMode, rules: tuple[str, ...], project: Path
):
    decision = decide(command, project, *rules, mode=mode)
    assert not isinstance(decision, Allow), (command, decision)


@pytest.mark.parametrize(
    ("command", "risk"),
    [("npm test", "medium"), ("touch notes.txt", "medium"), ("cat /etc/hostname", "high"),
     ("echo x > /tmp/elsewhere", "high"), ("echo $(whoami)", "high"), ("rm -rf .git", "high"),
     ("rm -rf $HOME", "high")],
)  # fmt: skip
def test_the_risk_a_question_carries_is_set_where_it_is_decided(
    command: str, risk: str, project: Path
):
    decision = decide(command, project, mode="default")
    assert isinstance(decision, Ask) and decision.risk == risk, (command, decision)


def test_accept_edits_does_not_copy_protected_directories_into_new_places(project: Path):
    assert isinstance(decide("cp -r . copy", project, mode="acceptEdits"), Ask)
    assert isinstance(decide("cp -r build copy", project, mode="acceptEdits"), Allow)
    # A tree of ordinary files copies without asking; only a protected name inside asks.
    (project / "build" / "out").mkdir()
    (project / "build" / "out" / "app.js").write_text("")
    assert isinstance(decide("cp -r build copy", project, mode="acceptEdits"), Allow)
    assert isinstance(decide("cp -r vendor copy", project, mode="acceptEdits"), Ask)
