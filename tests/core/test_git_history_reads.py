"""A Read deny rule holds against git printing file content out of its objects: `git log -p`,
`git show`, `git diff --cached` may print any file the repository holds or ever held, so they
ask when such a file is one the rule covers, and run when none is."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.access.context import ToolPermissionContext
from core.access.decision import Allow, Ask, Deny, PermissionDecision
from core.access.rules import parse_rule
from core.hooks import NO_PRE_OUTCOME
from core.permissions.decide import evaluate, prepare
from core.permissions.git_history import known_paths
from core.tools.bash import Bash

TOOL = Bash()
GIT = ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "commit.gpgsign=false"]


def git(project: Path, *args: str) -> None:
    subprocess.run([*GIT, *args], cwd=project, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("TOKEN=1\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "one")
    return root


def decide(command: str, project: Path) -> PermissionDecision:
    permissions = ToolPermissionContext(rules=(parse_rule("Read(.env)", "deny"),))
    call = prepare(TOOL, TOOL.parse_input({"command": command}), project, permissions)
    return evaluate(call, NO_PRE_OUTCOME)


HISTORY_PRINTERS = ["git log -p", "git show HEAD", "git diff HEAD~0", "git log -S TOKEN",
                    "git diff --cached", "git cat-file -p 1a2b3c", "git grep TOKEN",
                    "git grep TOKEN HEAD~0"]  # fmt: skip


@pytest.mark.parametrize("command", HISTORY_PRINTERS)
def test_history_that_never_held_the_file_can_be_read(command: str, project: Path):
    assert isinstance(decide(command, project), Allow), command


@pytest.mark.parametrize("command", HISTORY_PRINTERS)
def test_history_that_held_the_file_once_asks(command: str, project: Path):
    git(project, "add", "-f", ".env")
    git(project, "commit", "-qm", "oops")
    git(project, "rm", "-q", "--cached", ".env")
    git(project, "commit", "-qm", "removed again")
    decision = decide(command, project)
    assert isinstance(decision, Ask), command
    assert "Read(.env)" in decision.message


def test_a_staged_file_is_held_too_and_the_list_follows_the_index(project: Path):
    assert isinstance(decide("git diff --cached", project), Allow)
    git(project, "add", "-f", ".env")  # the index changes: the list is taken again
    assert isinstance(decide("git diff --cached", project), Ask)
    assert project / ".env" in (known_paths(project) or ())


def test_commands_that_print_no_content_or_are_limited_elsewhere_run(project: Path):
    git(project, "add", "-f", ".env")
    git(project, "commit", "-qm", "oops")
    for command in ("git log --oneline", "git log -p -- src", "git show HEAD -- src/app.py",
                    "git status"):  # fmt: skip
        assert isinstance(decide(command, project), Allow), command


def test_git_grep_of_the_work_tree_is_a_recursive_read(project: Path):
    # .env is ignored and never held, but --untracked and --no-index search the tree itself.
    for command in ("git grep --untracked TOKEN", "git grep --no-index TOKEN"):
        assert isinstance(decide(command, project), Ask), command


def test_listing_the_history_runs_none_of_the_repositorys_programs(tmp_path: Path):
    """A cloned repository's own configuration may name a program (`core.fsmonitor`): plain
    `git ls-files` runs it; the listing the chain does must not."""
    root = tmp_path / "cloned"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".env").write_text("TOKEN=1\n")
    git(root, "add", ".env")
    canary = tmp_path / "ran"
    git(root, "config", "core.fsmonitor", f"touch {canary}; false")
    assert known_paths(root) == (root / ".env",)  # staged, never committed: still held
    assert not canary.exists()


def test_a_worktree_is_listed_through_its_gitdir_file(project: Path, tmp_path: Path):
    """In a `git worktree` (or a submodule) `.git` is a file naming the real git directory."""
    other = tmp_path / "other"
    git(project, "worktree", "add", "-q", str(other))
    assert (other / ".git").is_file()
    assert set(known_paths(other) or ()) == {other / ".gitignore", other / "src" / "app.py"}


def test_git_pointed_elsewhere_by_the_environment_may_hold_anything(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    for variable in ("GIT_DIR", "GIT_WORK_TREE"):
        with monkeypatch.context() as patched:
            patched.setenv(variable, "/elsewhere")
            assert known_paths(project) is None, variable
    assert known_paths(project) is not None


def test_the_list_follows_the_index(project: Path):
    assert project / "new.txt" not in (known_paths(project) or ())
    (project / "new.txt").write_text("x")
    git(project, "add", "new.txt")
    assert project / "new.txt" in (known_paths(project) or ())


def test_the_repository_judged_is_the_one_git_is_pointed_at_with_c(project: Path):
    """`git -C vendor log -p` prints vendor's history, not the project's."""
    vendor = project / "vendor"
    vendor.mkdir()
    git(vendor, "init", "-q")
    (vendor / ".env").write_text("TOKEN=2\n")
    git(vendor, "add", ".env")
    git(vendor, "commit", "-qm", "vendored secrets")
    for command in ("git -C vendor log -p", "git -C vendor show HEAD", "git -C vendor grep TOKEN"):
        assert isinstance(decide(command, project), Ask), command
    assert isinstance(decide("git log -p", project), Allow)


def test_git_config_reading_a_blob_reads_that_path_out_of_history(project: Path):
    # Named outright, so denied (not merely asked about, as any config read is here).
    for command in ("git config --list --blob=HEAD:.env", "git config --list --blob HEAD:.env"):
        assert isinstance(decide(command, project), Deny), command
    assert isinstance(decide("git config --list --blob=HEAD:src/app.py", project), Ask)
