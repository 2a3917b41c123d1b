"""Path safety with real files and symlinks: containment, protected paths, path rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.access.paths import (
    compile_pattern,
    inside_working_dirs,
    is_critical,
    pattern_covers,
    protected_part,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("print()\n")
    (root / "vendor" / "src").mkdir(parents=True)
    (tmp_path / "app-evil").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    return root


def test_containment_is_by_component_not_by_string_prefix(project: Path):
    dirs = (project,)
    assert inside_working_dirs("src/main.py", project, dirs)
    assert not inside_working_dirs(project.parent / "app-evil" / "x", project, dirs)
    assert not inside_working_dirs("../app-evil/x", project, dirs)
    assert inside_working_dirs("src/../src/./main.py", project, dirs)
    assert not inside_working_dirs("src/../../outside/secret.txt", project, dirs)


def test_a_symlink_out_of_the_project_is_outside(project: Path):
    (project / "link").symlink_to(project.parent / "outside")
    assert not inside_working_dirs("link/secret.txt", project, (project,))
    # A new file under the link: its nearest existing parent is resolved, and is outside.
    assert not inside_working_dirs("link/new/file.txt", project, (project,))


def test_a_project_reached_through_a_symlink_is_still_inside(project: Path, tmp_path: Path):
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    assert inside_working_dirs(alias / "src" / "main.py", alias, (alias,))


def test_additional_directories_count_as_inside(project: Path):
    extra = project.parent / "outside"
    assert inside_working_dirs(extra / "secret.txt", project, (project, extra))


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        "sub/.GIT/hooks/pre-commit",
        ".proctor/settings.json",
        ".claude/x",
        ".vscode/settings.json",
        ".bashrc",
        ".zshrc",
        ".gitconfig",
        ".gitmodules",
        ".mcp.json",
        ".envrc",
        ".husky/pre-push",
        ".idea/workspace.xml",
        ".profile",
    ],
)
def test_protected_paths_are_found_case_insensitively(project: Path, path: str):
    assert protected_part(path, project) is not None


def test_a_symlink_to_a_protected_path_is_protected(project: Path):
    (project / ".git").mkdir()
    (project / "innocent").symlink_to(project / ".git")
    assert protected_part("innocent/config", project) == ".git"
    assert protected_part("src/main.py", project) is None


def test_critical_paths(project: Path):
    home = Path.home()
    for path in ("/", str(home), "/usr", "/etc/", str(project), str(project.parent), ".", ".."):
        assert is_critical(path, project, home), path
    assert not is_critical("src", project, home)
    assert not is_critical("/usr/local/share/x", project, home)


def covers(content: str, behavior: str, path: str | Path, cwd: Path, base: Path | None = None):
    pattern = compile_pattern(content, behavior, cwd=cwd, base=base, home=cwd.parent)
    return pattern_covers(pattern, path, cwd, behavior)


def test_relative_deny_matches_at_any_depth_and_allow_is_anchored(project: Path):
    assert covers(".env", "deny", "a/b/.env", project)
    assert covers(".env", "deny", project.parent / "outside" / ".env", project)
    assert covers("src/**", "deny", "vendor/src/x.py", project)
    assert covers("src/**", "allow", "src/main.py", project)
    assert not covers("src/**", "allow", "vendor/src/x.py", project)
    assert covers("./src/**", "allow", "src/main.py", project)


def test_absolute_home_and_base_relative_patterns(project: Path):
    outside = project.parent / "outside" / "secret.txt"
    assert covers(f"/{outside.parent}/*.txt", "allow", outside, project)  # //abs
    assert covers("~/outside/**", "allow", outside, project)  # home is tmp_path here
    assert covers("/src/*.py", "allow", "src/main.py", project, base=project)
    assert not covers("/src/*.py", "allow", "src/main.py", project, base=project / "src")


def test_allow_needs_both_forms_and_deny_needs_either(project: Path):
    (project / "src" / "escape").symlink_to(project.parent / "outside")
    # Written inside src/, resolved outside: an allow for src/** must not cover it.
    assert not covers("src/**", "allow", "src/escape/secret.txt", project)
    # A deny on the real location catches the alias.
    real = project.parent / "outside"
    assert covers(f"/{real}/**", "deny", "src/escape/secret.txt", project)


def test_directory_patterns_cover_the_directory_itself(project: Path):
    assert covers("src/", "deny", "src", project)
    assert covers("src/", "deny", "src/main.py", project)


def test_patterns_use_gitignore_wildcards(project: Path):
    assert covers("*.key", "deny", "deep/down/id.key", project)
    assert not covers("*.key", "deny", "deep/down/id.keys", project)
    assert covers("**/*.py", "allow", "src/main.py", project)


def test_a_path_with_a_nul_byte_is_taken_as_given_not_a_crash(tmp_path: Path):
    from core.access.paths import resolved

    odd = tmp_path / "a\x00b"
    assert resolved(odd) == odd


def test_dot_dot_after_a_symlink_is_resolved_as_the_kernel_does(project: Path, tmp_path: Path):
    """`link/..` is the parent of where `link` points: folding `..` as text first would put
    `link/../secret.txt` inside the project."""
    deep = tmp_path / "outside" / "deep"
    deep.mkdir()
    (project / "link").symlink_to(deep)
    assert not inside_working_dirs("link/../secret.txt", project, (project,))
    assert inside_working_dirs("src/../src/main.py", project, (project,))
    secret = compile_pattern("//" + str(tmp_path / "outside" / "secret.txt")[1:], "deny",
                             cwd=project, base=project)  # fmt: skip
    assert pattern_covers(secret, "link/../secret.txt", project, "deny")


async def test_accept_edits_does_not_remove_through_a_symlinks_parent(
    project: Path, tmp_path: Path
):
    from core.access.context import ToolPermissionContext
    from core.access.decision import Allow
    from core.hooks import NO_PRE_OUTCOME
    from core.permissions.decide import evaluate, prepare
    from core.tools.bash import Bash

    deep = tmp_path / "outside" / "deep"
    deep.mkdir()
    (project / "link").symlink_to(deep)
    tool = Bash()
    permissions = ToolPermissionContext(mode="acceptEdits")

    def decide(command: str) -> object:
        parsed = tool.parse_input({"command": command})
        return evaluate(prepare(tool, parsed, project, permissions), NO_PRE_OUTCOME)

    assert not isinstance(decide("rm link/../secret.txt"), Allow)
    assert isinstance(decide("rm src/../src/main.py"), Allow)
