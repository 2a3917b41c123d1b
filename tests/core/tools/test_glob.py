"""Glob: shell-glob patterns anchored at the search directory, newest first, at most 100 paths,
and the same ignore rules as ripgrep (so as Grep), checked against `rg --files` itself."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import HANG_BOUND_S, make_context, make_services, text_of
from pydantic import ValidationError
from unreadable import locked

from core.abort import AbortController
from core.access.context import PermissionRule, ToolPermissionContext
from core.access.targets import PathTarget
from core.executor import ToolCall, run_tool_use
from core.tool import ToolResult
from core.tools.glob import GlobInput, GlobOutput, GlobTool, PatternError, expand_braces, plan

RG = os.path.join(sysconfig.get_path("scripts"), "rg")
TOOL = GlobTool()


def touch(root: Path, relative: str, mtime: float | None = None, text: str = "x\n") -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def context(cwd: Path, *rules: PermissionRule, abort: AbortController | None = None) -> Any:
    permission = ToolPermissionContext(rules=rules)
    return make_context([TOOL], cwd, permission_context=permission, abort=abort)


async def glob(cwd: Path, *rules: PermissionRule, **raw: Any) -> tuple[ToolResult, str]:
    ctx = context(cwd, *rules)
    parsed = TOOL.parse_input(raw)
    validation = await TOOL.validate_input(parsed, ctx)
    assert validation.ok, validation.message
    result = await TOOL.call(parsed, ctx, lambda _p: None)
    content = TOOL.result_block(result, "t")["content"]
    assert isinstance(content, str)
    return result, content


def files(result: ToolResult) -> list[str]:
    assert isinstance(result.data, GlobOutput), result.data
    return list(result.data.files)


def rg_files(cwd: Path, git: bool) -> list[str]:
    argv = [RG, "--files", "--no-config", "--hidden", "--glob", "!.git"]
    if not git:
        argv.append("--no-require-git")
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True)
    return sorted(done.stdout.split("\n")[:-1])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    outer = tmp_path / "outer"
    root = outer / "project"
    touch(outer, ".gitignore", text="from_parent.txt\n")
    touch(outer, ".ignore", text="parent_dot_ignore.txt\n")
    touch(root, ".gitignore", text="*.log\n!keep.log\nbuild/\n/top_only.txt\ncache\n")
    touch(root, "src/.gitignore", text="generated.py\n!important.log\n")
    touch(root, ".ignore", text="vendor/\n")
    touch(root, "lib/.rgignore", text="!*.log\n")
    for relative in (
        "README.md",
        "top_only.txt",
        "src/top_only.txt",
        "src/main.py",
        "src/generated.py",
        "src/important.log",
        "src/deep/er/x.py",
        "src/deep/er/generated.py",
        "lib/lib.log",
        "notes.log",
        "keep.log",
        "build/out.txt",
        "src/build/out.txt",
        "cache/c.txt",
        "src/cache",
        "vendor/v.py",
        "from_parent.txt",
        "parent_dot_ignore.txt",
        ".hidden/h.txt",
        ".env",
        ".svn/entries",
    ):
        touch(root, relative)
    return root


# -- ignores, against ripgrep ----------------------------------------------------------------


async def test_everything_glob_lists_what_rg_lists_outside_git(project):
    result, _ = await glob(project, pattern="**/*")
    expected = [path for path in rg_files(project, git=False) if not path.startswith(".svn/")]
    assert sorted(files(result)) == expected
    listed = set(files(result))
    for ignored in (
        "notes.log",
        "build/out.txt",
        "src/build/out.txt",  # `build/` floats to any depth
        "cache/c.txt",
        "src/cache",  # `cache` matches files and directories alike
        "src/generated.py",
        "src/deep/er/generated.py",  # src/.gitignore applies below src
        "vendor/v.py",  # .ignore
        "from_parent.txt",  # a parent's .gitignore counts outside git
        "parent_dot_ignore.txt",
        ".svn/entries",  # version control, never listed
    ):
        assert ignored not in listed, ignored
    for kept in (
        "keep.log",  # negated
        "src/important.log",  # re-included by the deeper file
        "lib/lib.log",  # .rgignore wins over .gitignore
        "src/top_only.txt",  # `/top_only.txt` is anchored to its file's directory
        ".hidden/h.txt",
        ".env",
        ".gitignore",
    ):
        assert kept in listed, kept


@pytest.fixture
def repository(project: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    return project


async def test_inside_git_the_repositorys_rules_count_and_a_parents_do_not(repository):
    project = repository
    touch(project, ".git/info/exclude", text="README.md\n")
    result, _ = await glob(project, pattern="**/*")
    expected = [path for path in rg_files(project, git=True) if not path.startswith(".svn/")]
    assert sorted(files(result)) == expected
    listed = set(files(result))
    assert "from_parent.txt" in listed  # outside the repository: not its .gitignore
    assert "parent_dot_ignore.txt" not in listed  # .ignore counts in every parent
    assert "README.md" not in listed  # .git/info/exclude
    assert not any(path.startswith(".git/") for path in listed)


async def test_searching_inside_an_ignored_directory_lists_it(project):
    # Asked for by name, as with ripgrep: the ignore rule spoke of the directory, not its files.
    result, _ = await glob(project, pattern="*", path="build")
    assert files(result) == ["build/out.txt"]


async def test_symlinks_are_neither_followed_nor_listed(project, tmp_path):
    outside = touch(tmp_path, "elsewhere/secret.py")
    (project / "link.py").symlink_to(project / "src" / "main.py")
    (project / "linked_dir").symlink_to(outside.parent)
    result, _ = await glob(project, pattern="**/*.py")
    assert "link.py" not in files(result)
    assert not any(path.startswith("linked_dir") for path in files(result))


# -- patterns ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("*.py", ["a.py"]),
        ("**/*.py", ["a.py", "src/b.py", "src/x/c.py", "src/x/y/d.py"]),
        ("src/*.py", ["src/b.py"]),
        ("src/**/*.py", ["src/b.py", "src/x/c.py", "src/x/y/d.py"]),
        ("src/**", ["src/b.py", "src/x/c.py", "src/x/y/d.py", "src/x/y/e.ts"]),
        ("**/*.{ts,md}", ["README.md", "src/x/y/e.ts"]),
        ("{src,docs}/**/?.py", ["src/b.py", "src/x/c.py", "src/x/y/d.py"]),
        ("src/x/[cd].py", ["src/x/c.py"]),
        ("src/x/[!c].py", []),
        ("**/y/*", ["src/x/y/d.py", "src/x/y/e.ts"]),
        ("src/b.py", ["src/b.py"]),
        ("./src/../a.py", ["a.py"]),
        ("*", ["README.md", "a.py"]),
    ],
)
async def test_patterns_read_as_shell_globs_anchored_at_the_root(tmp_path, pattern, expected):
    for relative in ("a.py", "README.md", "src/b.py", "src/x/c.py", "src/x/y/d.py", "src/x/y/e.ts"):
        touch(tmp_path, relative, mtime=1_000)
    result, _ = await glob(tmp_path, pattern=pattern)
    assert sorted(files(result)) == expected


async def test_a_bare_pattern_that_finds_nothing_says_how_to_look_deeper(tmp_path):
    touch(tmp_path, "src/deep.rs")
    result, content = await glob(tmp_path, pattern="*.rs")
    assert not result.is_error
    assert "No files found matching '*.rs'" in content
    assert "'**/*.rs'" in content


async def test_an_absolute_pattern_starts_the_walk_where_it_does(tmp_path):
    touch(tmp_path, "proj/src/a.py")
    touch(tmp_path, "other/b.py")
    cwd = tmp_path / "proj"
    parsed = GlobInput(pattern=str(tmp_path / "other") + "/**/*.py")
    assert plan(parsed, cwd).root == tmp_path / "other"
    assert TOOL.rule_target(parsed, cwd) == PathTarget(tmp_path / "other", "read")
    result, _ = await glob(cwd, pattern=parsed.pattern)
    assert files(result) == [str(tmp_path / "other" / "b.py")]  # outside cwd: absolute
    parsed = GlobInput(pattern="../other/*.py")
    assert TOOL.rule_target(parsed, cwd) == PathTarget(tmp_path / "other", "read")


def test_rule_target_is_the_search_root(tmp_path):
    assert TOOL.rule_target(GlobInput(pattern="**/*"), tmp_path) == PathTarget(tmp_path, "read")
    target = TOOL.rule_target(GlobInput(pattern="**/*", path="a/../b"), tmp_path)
    assert target == PathTarget(tmp_path / "b", "read")


def test_brace_expansion():
    assert expand_braces("a{b,c{d,e}}f") == ["abf", "acdf", "acef"]
    assert expand_braces("{x}") == ["{x}"]  # no comma: literal, as in a shell
    with pytest.raises(PatternError):
        expand_braces("{a,b}" * 9)


# -- order and the cap --------------------------------------------------------------------------


async def test_newest_first_ties_by_path(tmp_path):
    touch(tmp_path, "old.py", mtime=1_000)
    touch(tmp_path, "sub/new.py", mtime=3_000)
    touch(tmp_path, "b_tie.py", mtime=2_000)
    touch(tmp_path, "a_tie.py", mtime=2_000)
    result, content = await glob(tmp_path, pattern="**/*.py")
    assert files(result) == ["sub/new.py", "a_tie.py", "b_tie.py", "old.py"]
    assert content == "sub/new.py\na_tie.py\nb_tie.py\nold.py"


async def test_at_most_100_paths_with_a_note(tmp_path):
    for n in range(130):
        touch(tmp_path, f"d{n % 4}/f{n:03d}.txt", mtime=10_000 + n)
    result, content = await glob(tmp_path, pattern="**/*.txt")
    assert len(files(result)) == 100
    assert files(result)[0] == "d1/f129.txt" and files(result)[-1] == "d2/f030.txt"
    assert isinstance(result.data, GlobOutput) and result.data.total == 130
    assert content.endswith(
        "(Results are truncated: showing the 100 most recently modified of 130 matching "
        "files. Use a more specific pattern or path to see the others.)"
    )
    result, content = await glob(tmp_path, pattern="d0/*.txt")
    assert "truncated" not in content


# -- deny rules -------------------------------------------------------------------------------


async def test_files_hidden_by_read_deny_rules_never_appear(project):
    rules = (
        PermissionRule("Read", ".env", "deny"),
        PermissionRule("Read", "src/deep/**", "deny"),
        PermissionRule("Read", "/README.md", "deny", source="project"),
    )
    result, _ = await glob(project, *rules, pattern="**/*")
    listed = set(files(result))
    assert not {".env", "src/deep/er/x.py", "README.md"} & listed
    assert {"src/main.py", "keep.log"} <= listed


# -- bad input ----------------------------------------------------------------------------------


async def test_a_missing_path_is_an_error(tmp_path):
    result, content = await glob(tmp_path, pattern="*", path="nope")
    assert result.is_error
    assert "Path does not exist: nope" in content and str(tmp_path) in content


async def test_a_file_as_the_path_is_an_error_pointing_at_read(tmp_path):
    touch(tmp_path, "a.py")
    result, content = await glob(tmp_path, pattern="*", path="a.py")
    assert result.is_error and "not a directory" in content and "Read" in content


async def test_an_unreadable_directory_is_an_error(tmp_path, monkeypatch):
    touch(tmp_path, "private/secret.txt")
    with locked(tmp_path / "private", monkeypatch):  # unreadable as root too
        result, content = await glob(tmp_path, pattern="*", path="private")
    assert result.is_error and "private cannot be searched: permission denied" in content
    assert "secret.txt" not in content


@pytest.mark.parametrize(
    ("pattern", "wanted"),
    [
        ("", "The pattern is empty"),
        ("   ", "The pattern is empty"),
        ("*/../x", "'..' after a wildcard"),
        ("/", "names a directory"),
    ],
)
async def test_bad_patterns_are_refused_before_running(tmp_path, pattern, wanted):
    ctx = context(tmp_path)
    outcome = await run_tool_use(ToolCall("t", "Glob", {"pattern": pattern}), make_services(), ctx)
    assert outcome.block.get("is_error") is True
    assert wanted in text_of(outcome)


@pytest.mark.parametrize(
    "raw", [{}, {"pattern": 1}, {"pattern": "*", "path": 2}, {"pattern": "*", "x": 1}]
)
def test_the_schema_refuses_bad_input(raw):
    with pytest.raises(ValidationError):
        TOOL.parse_input(raw)


async def test_wrong_types_through_the_lifecycle_are_an_error_result(tmp_path):
    outcome = await run_tool_use(
        ToolCall("t", "Glob", {"pattern": ["*.py"]}), make_services(), context(tmp_path)
    )
    assert outcome.block.get("is_error") is True and "pattern" in text_of(outcome)


def test_the_tool_describes_itself():
    assert TOOL.name == "Glob"
    assert TOOL.max_result_size_chars == 30_000
    assert TOOL.interrupt_behavior == "cancel"
    parsed = GlobInput(pattern="*")
    assert TOOL.is_read_only(parsed) and TOOL.is_concurrency_safe(parsed)
    schema = TOOL.input_json_schema()
    assert set(schema["properties"]) == {"pattern", "path"} and schema["required"] == ["pattern"]
    assert "Claude" not in TOOL.prompt(make_context([TOOL]).options)


async def test_an_aborted_walk_stops_with_an_error(tmp_path):
    for n in range(50):
        touch(tmp_path, f"d{n}/f.txt")
    controller = AbortController()
    controller.abort("user_interrupted")
    ctx = context(tmp_path, abort=controller)
    walk = TOOL.call(GlobInput(pattern="**/*"), ctx, lambda _p: None)
    result = await asyncio.wait_for(walk, HANG_BOUND_S)
    assert result.is_error and "interrupted" in result.data


async def test_a_file_name_that_is_not_utf8_is_shown_replaced(tmp_path):
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("x\n")
    _, content = await glob(tmp_path, pattern="*.txt")
    assert content == "caf\ufffd.txt"
