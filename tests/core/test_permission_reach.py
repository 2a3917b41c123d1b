"""Commands judged by what they can reach, not only by the paths they name: recursive reads
of trees a deny rule covers part of, symlinks followed out of the project, and paths read
out of git's objects."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.access.context import ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
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
    (root / ".env").write_text("KEY=secret\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret").write_text("s")
    return root


def decide(project: Path, command: str, *rules: str) -> PermissionDecision:
    parsed = tuple(parse_rule(r.split(" ", 1)[1], r.split(" ", 1)[0]) for r in rules)  # type: ignore[arg-type]
    permissions = ToolPermissionContext(rules=parsed)
    call = prepare(TOOL, TOOL.parse_input({"command": command}), project, permissions)
    return evaluate(call, NO_PRE_OUTCOME)


@pytest.mark.parametrize(
    "command",
    ["grep -r KEY .", "grep -rn KEY", "rg KEY", "rg KEY .", "git grep KEY", "grep -R KEY .",
     "egrep --recursive KEY ."],
)  # fmt: skip
def test_a_recursive_read_of_a_tree_with_a_denied_file_asks(project: Path, command: str):
    decision = decide(project, command, "deny Read(.env)")
    assert isinstance(decision, Ask), command
    assert "Read(.env)" in decision.message


def test_a_recursive_read_elsewhere_is_not_held_up(project: Path):
    assert isinstance(decide(project, "grep -r KEY src", "deny Read(/config/**)"), Allow)
    assert isinstance(decide(project, "grep -r KEY src", "deny Read(/src/secrets/**)"), Ask)
    assert isinstance(decide(project, "find . -name '*.py'", "deny Read(.env)"), Allow)


def test_git_object_reads_meet_path_rules(project: Path):
    assert isinstance(decide(project, "git show HEAD:.env", "deny Read(.env)"), Deny)
    assert isinstance(decide(project, "git cat-file -p main:.env", "deny Read(.env)"), Deny)
    assert isinstance(decide(project, "git show HEAD:src/app.py", "deny Read(.env)"), Allow)


def test_following_a_symlink_out_of_the_project_is_a_read_outside(project: Path, tmp_path: Path):
    assert isinstance(decide(project, "grep -R KEY ."), Allow)
    (project / "src" / "link").symlink_to(tmp_path / "outside")
    for command in ("grep -R KEY .", "rg -L KEY src", "find -L . -name x", "du -L src"):
        decision = decide(project, command)
        assert isinstance(decision, Ask), command
        assert "follows symlinks" in decision.message
        assert f"{project / 'src' / 'link'} (`" in decision.message  # which link, by name
    assert isinstance(decide(project, "grep -r KEY ."), Allow)  # -r does not follow
    for command in ("ls -LR", "find src -name link | xargs head"):  # found by attack
        assert isinstance(decide(project, command), Ask), command


def test_a_rev_path_is_from_the_repository_top(tmp_path: Path):
    """`HEAD:secret` names a file at the repository's top, which may be above the project."""
    repository = tmp_path / "repo"
    (repository / "project").mkdir(parents=True)
    (repository / "topsecret").write_text("s")
    (repository / "project" / "a").write_text("a")
    git = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=repository, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repository, check=True)
    subprocess.run([*git, "commit", "-qm", "one"], cwd=repository, check=True)
    project = repository / "project"
    for command in ("git show HEAD:topsecret", "git show HEAD:../topsecret"):
        decision = decide(project, command)
        assert isinstance(decision, Ask), command
        assert "git's objects" in decision.message
    for command in ("git show HEAD:./a", "git show HEAD:project/a"):
        assert isinstance(decide(project, command), Allow), command


@pytest.mark.parametrize(
    "command",
    ["find src | xargs cat /etc/hostname", "find . | xargs cat -- /etc/hostname",
     "find . | xargs -a /etc/hostname cat", "find . | xargs --arg-file=names cat"],
)  # fmt: skip
def test_xargs_own_operands_and_name_files_are_judged_too(project: Path, command: str):
    assert isinstance(decide(project, command), Ask), command
    assert isinstance(decide(project, "find src -type f | xargs wc -l"), Allow)


def in_bypass(project: Path, command: str, rule: str) -> PermissionDecision:
    """Bypass mode: only rules stop a call, so what a command reads decides alone."""
    parsed = parse_rule(rule.split(" ", 1)[1], rule.split(" ", 1)[0])  # type: ignore[arg-type]
    permissions = ToolPermissionContext(mode="bypassPermissions", rules=(parsed,))
    call = prepare(TOOL, TOOL.parse_input({"command": command}), project, permissions)
    return evaluate(call, NO_PRE_OUTCOME)


@pytest.mark.parametrize(
    ("command", "reaches_secrets"),
    [
        ("tar czf a.tgz src", False),
        ("tar -czf a.tgz src", False),  # -c is create, not -C
        ("tar czf a.tgz .", True),
        ("tar -czf a.tgz .", True),
        ("tar -cf a.tar .", True),
        ("tar --create -f a.tar .", True),
        ("tar -C / -czf a.tgz etc", True),  # -C: read from elsewhere
        ("tar --directory=/ -czf a.tgz etc", True),
        ("tar -czf a.tgz -T list", True),  # the names come from a file
        ("tar -czf a.tgz --files-from list", True),
        ("tar -czf a.tgz @other.tar", True),
        ("tar tf a.tar", False),  # listing reads only the archive
        ("zip a.zip src", False),
        ("zip -r a.zip .", True),
        ("zip -r a.zip src -i '*.py'", True),
        ("7z a a.7z .", True),
        ("7z a a.7z src", False),
    ],
)
def test_an_archive_being_made_reads_its_operands_whole(
    project: Path, command: str, reaches_secrets: bool
):
    (project / "secrets").mkdir()
    decision = in_bypass(project, command, "deny Read(/secrets/**)")
    assert isinstance(decision, Ask if reaches_secrets else Allow), command


@pytest.mark.parametrize(
    ("command", "rule", "reads_it"),
    [
        ("git config --local --list", "deny Read(~/.gitconfig)", False),
        ("git config --worktree --list", "deny Read(~/.gitconfig)", False),
        ("git config --system --list", "deny Read(~/.gitconfig)", False),
        ("git config --global --list", "deny Read(~/.config/git/config)", True),
        ("git config --system --list", "deny Read(//etc/gitconfig)", True),
        ("git config --local --list", "deny Read(.git/config)", True),
        ("git config --worktree --list", "deny Read(.git/config.worktree)", True),
        ("git config --list", "deny Read(~/.gitconfig)", True),  # every scope
        ("git config --local --includes --list", "deny Read(/src/**)", True),  # include.path
    ],
)
def test_git_config_reads_the_files_of_its_scope(
    project: Path, command: str, rule: str, reads_it: bool
):
    assert isinstance(in_bypass(project, command, rule), Ask if reads_it else Allow), command


@pytest.mark.parametrize(
    ("command", "recursive"),
    [
        ("grep -drecurse KEY .", True),
        ("grep --directories=recurse KEY .", True),
        ("grep -d recurse KEY .", True),
        ("grep --directories recurse KEY .", True),
        ("grep -d skip KEY .", False),
        ("grep recurse src/app.py", False),  # the word alone is a pattern
        ("grep KEY src/app.py", False),
    ],
)
def test_grep_reads_a_tree_only_when_told_to_recurse(project: Path, command: str, recursive: bool):
    decision = decide(project, command, "deny Read(/secrets/**)")
    assert isinstance(decision, Ask if recursive else Allow), command
