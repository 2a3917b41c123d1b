"""Grep: its answers are ripgrep's answers (the same rg, run directly), put in a stable order,
with ignore files honoured in and out of git, Read deny rules applied, and bad input answered
with an error result that says what to do."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import (
    HANG_BOUND_S,
    eventually,
    hold_process_starts,
    make_context,
    make_services,
    text_of,
)
from pydantic import ValidationError
from unreadable import locked

from core.abort import AbortController
from core.access.context import PermissionRule, ToolPermissionContext
from core.access.targets import PathTarget
from core.executor import ToolCall, run_tool_use
from core.tool import ToolResult
from core.tools import grep as grep_module
from core.tools.grep import GrepInput, GrepOutput, GrepTool, rg_path

RG = os.path.join(sysconfig.get_path("scripts"), "rg")
TOOL = GrepTool()

TEXT = "alpha one\nbeta two\nGamma three\nalpha four\n\n\nlast alpha\n"


def write(root: Path, relative: str, text: str = TEXT, mtime: float | None = None) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project outside any git repository, with ignore files at several levels."""
    outer = tmp_path / "outer"
    project = outer / "project"
    write(outer, ".gitignore", "from_parent.txt\n")
    write(project, ".gitignore", "*.log\n!keep.log\nbuild/\n")
    write(project, "src/.gitignore", "generated.py\n")
    write(project, ".ignore", "vendor/\n")
    for relative in (
        "a.txt",
        "src/main.py",
        "src/util.py",
        "src/generated.py",
        "src/deep/er/x.py",
        "docs/guide.md",
        "docs/we:ird name.txt",
        "notes.log",
        "keep.log",
        "build/out.txt",
        "vendor/lib.py",
        "from_parent.txt",
        ".hidden/h.txt",
        ".env",
        "secrets/key.txt",
    ):
        write(project, relative)
    write(project, ".git_not_vcs.txt")
    return project


def context(cwd: Path, *rules: PermissionRule, abort: AbortController | None = None) -> Any:
    permission = ToolPermissionContext(rules=rules)
    return make_context([TOOL], cwd, permission_context=permission, abort=abort)


async def grep(cwd: Path, *rules: PermissionRule, **raw: Any) -> tuple[ToolResult, str]:
    ctx = context(cwd, *rules)
    parsed = TOOL.parse_input(raw)
    validation = await TOOL.validate_input(parsed, ctx)
    assert validation.ok, validation.message
    result = await TOOL.call(parsed, ctx, lambda _p: None)
    content = TOOL.result_block(result, "t")["content"]
    assert isinstance(content, str)
    return result, content


def rg(cwd: Path, *args: str, git: bool = False) -> list[str]:
    """The same ripgrep, run directly with the flags Grep always adds."""
    base = [RG, "--no-config", "--hidden", "--color=never"]
    if not git:
        base.append("--no-require-git")
    for name in (".git", ".svn", ".hg", ".bzr", ".jj", ".sl"):
        base += ["--glob", f"!{name}"]
    done = subprocess.run([*base, *args], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    return [line.removeprefix("./") for line in done.stdout.splitlines() if line]


def entries(result: ToolResult) -> list[str]:
    assert isinstance(result.data, GrepOutput), result.data
    return list(result.data.entries)


# -- the binary -----------------------------------------------------------------------------


def test_rg_is_the_one_installed_beside_the_interpreter(monkeypatch, tmp_path):
    rg_path.cache_clear()
    fake = tmp_path / "bin" / "rg"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho fake\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    try:
        found = rg_path()
    finally:
        rg_path.cache_clear()
    assert found == RG
    assert Path(found).parent == Path(sysconfig.get_path("scripts"))


async def test_a_fake_rg_on_path_is_never_run(monkeypatch, tree, tmp_path):
    marker = tmp_path / "ran"
    fake = tmp_path / "bin" / "rg"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake.parent))
    result, _ = await grep(tree, pattern="alpha")
    assert not result.is_error
    assert not marker.exists()


# -- against ripgrep ------------------------------------------------------------------------


async def test_files_with_matches_are_rgs_files_outside_git(tree):
    result, content = await grep(tree, pattern="alpha")
    expected = rg(tree, "--files-with-matches", "alpha")
    assert sorted(entries(result)) == sorted(expected)
    assert content.startswith(f"Found {len(expected)} files\n")
    # Ignore files at every level count outside git, the parent directory's included.
    for ignored in ("notes.log", "build/out.txt", "vendor/lib.py", "src/generated.py"):
        assert ignored not in entries(result)
    assert "from_parent.txt" not in entries(result)
    assert "keep.log" in entries(result) and ".hidden/h.txt" in entries(result)


@pytest.fixture
def repository(tree: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    return tree


async def test_inside_a_git_repository_gitignore_counts_as_git_counts_it(repository):
    tree = repository
    write(tree, ".git/info/exclude", "a.txt\n")
    result, _ = await grep(tree, pattern="alpha")
    expected = rg(tree, "--files-with-matches", "alpha", git=True)
    assert sorted(entries(result)) == sorted(expected)
    # The .gitignore above the repository is not the repository's: git ignores it, so do we.
    assert "from_parent.txt" in entries(result)
    assert "a.txt" not in entries(result)  # .git/info/exclude
    assert "notes.log" not in entries(result)
    assert not any(entry.startswith(".git/") for entry in entries(result))


async def test_a_users_glob_never_brings_version_control_back(repository):
    write(repository, ".git/needle.txt", "alpha\n")
    for glob in ("*", "**", "*.txt", "**/.git/**"):
        result, _ = await grep(repository, pattern="alpha", glob=glob)
        assert not any(entry.startswith(".git/") for entry in entries(result)), glob


@pytest.mark.parametrize(
    ("raw", "flags"),
    [
        ({}, []),
        ({"-i": True}, ["-i"]),
        ({"glob": "*.py"}, ["--glob", "*.py"]),
        ({"glob": "*.{md,txt}"}, ["--glob", "*.{md,txt}"]),
        ({"glob": "*.py *.md"}, ["--glob", "*.py", "--glob", "*.md"]),
        ({"type": "py"}, ["--type", "py"]),
        ({"path": "src"}, []),
    ],
)
async def test_content_lines_are_rgs_lines(tree, raw, flags):
    pattern = "gamma" if raw.get("-i") else "alpha"
    result, _ = await grep(tree, pattern=pattern, output_mode="content", **raw)
    args = ["--line-number", "--with-filename", "--no-heading", *flags, pattern]
    if "path" in raw:
        args.append(raw["path"])
    expected = rg(tree, *args)
    assert expected
    assert sorted(entries(result)) == sorted(expected)


async def test_context_lines_match_rg_and_stay_grouped_per_file(tree):
    result, _ = await grep(tree, pattern="beta", output_mode="content", **{"-C": 1})
    expected = rg(tree, "-n", "-H", "--no-heading", "-C", "1", "beta")
    # Same lines; the only difference allowed is the order of the files.
    assert sorted(e for e in entries(result) if e != "--") == sorted(
        e for e in expected if e != "--"
    )
    first = entries(result)[:4]
    path = first[0].removesuffix("-1-alpha one")
    assert first == [f"{path}-1-alpha one", f"{path}:2:beta two", f"{path}-3-Gamma three", "--"]


async def test_after_and_before_and_separators_inside_a_file(tree):
    result, _ = await grep(
        tree, pattern="alpha", path="a.txt", output_mode="content", **{"-A": 0, "-B": 1}
    )
    expected = rg(tree, "-n", "-H", "--no-heading", "-A", "0", "-B", "1", "alpha", "a.txt")
    assert entries(result) == expected


async def test_count_is_rgs_count_with_a_total(tree):
    result, content = await grep(tree, pattern="alpha", output_mode="count")
    expected = rg(tree, "--count", "--with-filename", "alpha")
    # rg prints `path:count`; so do we (paths with `:` included, thanks to --null).
    assert sorted(entries(result)) == sorted(expected)
    total = sum(int(line.rsplit(":", 1)[1]) for line in expected)
    assert f"Found {total} matching lines in {len(expected)} files." in content


async def test_multiline_lets_a_pattern_span_lines(tree):
    pattern = r"one\nbeta"
    result, _ = await grep(tree, pattern=pattern, output_mode="content", path="a.txt")
    assert result.is_error  # rg refuses \n without multiline: the error says so
    result, _ = await grep(
        tree, pattern="one.beta", output_mode="content", path="a.txt", multiline=True
    )
    assert entries(result) == rg(tree, "-n", "-H", "-U", "--multiline-dotall", "one.beta", "a.txt")
    assert entries(result) == ["a.txt:1:alpha one", "a.txt:2:beta two"]


async def test_without_line_numbers(tree):
    result, _ = await grep(
        tree, pattern="Gamma", output_mode="content", path="src", **{"-n": False}
    )
    assert sorted(entries(result)) == sorted(rg(tree, "-H", "--no-heading", "Gamma", "src"))


# -- order and paging -----------------------------------------------------------------------


async def test_files_are_newest_first_ties_by_path(tmp_path):
    write(tmp_path, "old.txt", "hit\n", mtime=1_000)
    write(tmp_path, "new.txt", "hit\n", mtime=3_000)
    write(tmp_path, "b_same.txt", "hit\n", mtime=2_000)
    write(tmp_path, "a_same.txt", "hit\n", mtime=2_000)
    for mode in ("files_with_matches", "count", "content"):
        result, _ = await grep(tmp_path, pattern="hit", output_mode=mode)
        names = [entry.split(":")[0] for entry in entries(result)]
        assert names == ["new.txt", "a_same.txt", "b_same.txt", "old.txt"], mode


async def test_head_limit_and_offset_page_through_entries(tmp_path):
    for n in range(10):
        write(tmp_path, f"f{n}.txt", "hit\nhit\n", mtime=1_000 + n)
    result, content = await grep(tmp_path, pattern="hit", head_limit=3, offset=2)
    assert entries(result) == ["f7.txt", "f6.txt", "f5.txt"]
    assert "(Showing files 3-5 of 10. Use offset=5 to see more.)" in content
    result, content = await grep(tmp_path, pattern="hit", output_mode="content", head_limit=3)
    assert entries(result) == ["f9.txt:1:hit", "f9.txt:2:hit", "f8.txt:1:hit"]
    assert "(Showing lines 1-3 of 20. Use offset=3 to see more.)" in content
    result, content = await grep(tmp_path, pattern="hit", offset=10)
    assert not result.is_error
    assert "No entries at offset 10: the search found only 10" in content
    result, _ = await grep(tmp_path, pattern="hit", head_limit=0)
    assert len(entries(result)) == 10


# -- paths ----------------------------------------------------------------------------------


async def test_paths_are_relative_to_the_working_directory(tree):
    result, _ = await grep(tree, pattern="alpha", path=str(tree / "src"))
    assert sorted(entries(result)) == ["src/deep/er/x.py", "src/main.py", "src/util.py"]
    result, _ = await grep(tree / "src", pattern="alpha", path="../docs")
    # Outside the working directory: absolute.
    assert sorted(entries(result)) == sorted(
        str(tree / "docs" / name) for name in ("guide.md", "we:ird name.txt")
    )


async def test_a_single_file_can_be_searched(tree):
    result, _ = await grep(tree, pattern="alpha", path="docs/we:ird name.txt")
    assert entries(result) == ["docs/we:ird name.txt"]
    result, _ = await grep(tree, pattern="alpha", path="docs/we:ird name.txt", output_mode="count")
    assert entries(result) == ["docs/we:ird name.txt:3"]


def test_rule_target_is_the_search_root_for_read(tree):
    assert TOOL.rule_target(GrepInput(pattern="x"), tree) == PathTarget(tree, "read")
    assert TOOL.rule_target(GrepInput(pattern="x", path="src/../docs"), tree) == PathTarget(
        tree / "docs", "read"
    )
    assert TOOL.rule_target(GrepInput(pattern="x", path="/etc"), tree) == PathTarget(
        Path("/etc"), "read"
    )


# -- Read deny rules ------------------------------------------------------------------------


DENIES = (
    PermissionRule("Read", ".env", "deny"),
    PermissionRule("Read", "secrets/**", "deny"),
    PermissionRule("Read", "/docs/*.md", "deny", source="project"),
    PermissionRule("Grep", "a.txt", "deny"),  # not a Read rule: says nothing about files
    PermissionRule("Read", "src/main.py", "allow"),
)


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
async def test_files_hidden_by_read_deny_rules_never_appear(tree, mode):
    _, content = await grep(tree, *DENIES, pattern="alpha", output_mode=mode)
    for hidden in (".env", "secrets/key.txt", "docs/guide.md"):
        assert hidden not in content
    assert "a.txt" in content and "src/main.py" in content


def test_deny_rules_that_translate_become_rg_exclusions(tree):
    from core.tools.search import ReadDenials

    denials = ReadDenials.of(ToolPermissionContext(rules=DENIES), tree)
    argv = grep_module.build_argv(RG, GrepInput(pattern="x"), tree, tree, denials)
    assert "!**/.env" in argv and "!**/secrets/**" in argv
    # An anchored rule is left to the per-path check rather than guessed at.
    assert not any("docs" in arg for arg in argv)


async def test_a_deny_rule_covering_a_parent_hides_everything_below(tree):
    # `//abs/path` is an absolute rule: anchored, so not an rg glob; the per-path check holds.
    rule = PermissionRule("Read", "/" + str(tree / "src") + "/**", "deny")
    result, content = await grep(tree, rule, pattern="alpha", output_mode="content")
    assert not result.is_error
    assert "src/" not in content and "a.txt" in content


# -- bad input ------------------------------------------------------------------------------


async def test_an_invalid_regex_is_an_error_with_rgs_message(tree):
    result, content = await grep(tree, pattern="foo(bar")
    assert result.is_error
    assert "Invalid regular expression 'foo(bar'" in content
    assert "unclosed group" in content
    assert "escape literal metacharacters" in content


async def test_a_missing_path_is_an_error_naming_the_working_directory(tree):
    result, content = await grep(tree, pattern="x", path="no/such/dir")
    assert result.is_error
    assert "Path does not exist: no/such/dir" in content and str(tree) in content


async def test_an_unknown_type_is_an_error(tree):
    result, content = await grep(tree, pattern="x", type="nosuchtype")
    assert result.is_error and "Unknown file type 'nosuchtype'" in content


async def test_no_matches_is_a_plain_answer_not_an_error(tree):
    result, content = await grep(tree, pattern="zzz_not_there_zzz")
    assert not result.is_error
    assert content == "No matches found."


async def test_an_unreadable_directory_is_an_error(tree, monkeypatch):
    (tree / "private").mkdir()
    with locked(tree / "private", monkeypatch):  # unreadable as root too: tests/unreadable.py
        result, content = await grep(tree, pattern="x", path="private")
    assert result.is_error and "private cannot be searched: permission denied" in content


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"pattern": 3},
        {"pattern": "x", "-A": -1},
        {"pattern": "x", "-C": 101},
        {"pattern": "x", "head_limit": -2},
        {"pattern": "x", "offset": "many"},
        {"pattern": "x", "output_mode": "lines"},
        {"pattern": "x", "bogus": True},
    ],
)
def test_the_schema_refuses_bad_input(raw):
    with pytest.raises(ValidationError):
        TOOL.parse_input(raw)


async def test_bad_input_through_the_lifecycle_is_an_error_result(tree):
    ctx = context(tree)
    for raw, wanted in (
        ({"pattern": "x", "-C": 500}, "-C"),
        ({"pattern": ""}, "The pattern is empty"),
        ({"pattern": "x", "path": "missing"}, "Path does not exist"),
        ({"pattern": "("}, "Invalid regular expression"),
    ):
        outcome = await run_tool_use(ToolCall("t", "Grep", raw), make_services(), ctx)
        assert outcome.block.get("is_error") is True, raw
        assert wanted in text_of(outcome), (raw, text_of(outcome))


def test_the_schema_speaks_the_seeds_names():
    properties = TOOL.input_json_schema()["properties"]
    assert set(properties) == {
        "pattern",
        "path",
        "glob",
        "type",
        "output_mode",
        "multiline",
        "-i",
        "-n",
        "-A",
        "-B",
        "-C",
        "head_limit",
        "offset",
    }
    assert TOOL.input_json_schema()["required"] == ["pattern"]


def test_the_tool_describes_itself():
    assert TOOL.name == "Grep"
    assert TOOL.max_result_size_chars == 20_000
    assert TOOL.interrupt_behavior == "cancel"
    parsed = GrepInput(pattern="x")
    assert TOOL.is_read_only(parsed) and TOOL.is_concurrency_safe(parsed)
    assert "Claude" not in TOOL.prompt(make_context([TOOL]).options)


# -- cancellation ---------------------------------------------------------------------------
# How soon an abort ends the call is a figure, not a limit here: bench/bench_cancel.py.


@pytest.fixture
def slow_rg(monkeypatch, tmp_path):
    """An rg that never finishes by itself, recording its pid once it has started a child (so
    there is a group to kill), to see the group killed."""
    pid_file = tmp_path / "pid"
    script = tmp_path / "slow-rg"
    script.write_text(f"#!/bin/sh\nsleep 3600 &\necho $$ > {pid_file}\nwait\n")
    script.chmod(0o755)
    monkeypatch.setattr(grep_module, "rg_path", lambda: str(script))
    yield pid_file
    pid = _read_pid(pid_file)
    if pid is not None:  # a test that failed must not leave its sleeper behind
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def _live_members(pgid: int) -> list[str]:
    """Processes of the group still running (zombies waiting to be reaped do not count)."""
    alive = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(entry)
    return alive


async def _group_gone(pgid: int) -> None:
    # The group never ends by itself: only a kill ends it. SIGKILL is delivered asynchronously.
    await eventually(lambda: not _live_members(pgid), f"the end of process group {pgid}")


def _read_pid(pid_file: Path) -> int | None:
    text = pid_file.read_text().strip() if pid_file.exists() else ""
    return int(text) if text else None


async def _pid(pid_file: Path) -> int:
    await eventually(lambda: _read_pid(pid_file) is not None, "the fake rg's start")
    pid = _read_pid(pid_file)
    assert pid is not None
    return pid


async def test_an_abort_kills_the_search_and_says_so(tree, slow_rg):
    controller = AbortController()
    ctx = context(tree, abort=controller)
    task = asyncio.create_task(TOOL.call(GrepInput(pattern="x"), ctx, lambda _p: None))
    pid = await _pid(slow_rg)
    controller.abort("user_interrupted")
    # The fake rg never ends by itself: the call returns only because the abort killed it.
    result = await asyncio.wait_for(task, HANG_BOUND_S)
    assert result.is_error and "interrupted" in result.data
    await _group_gone(pid)


async def test_cancelling_the_call_kills_the_process_group(tree, slow_rg):
    ctx = context(tree)
    task = asyncio.create_task(TOOL.call(GrepInput(pattern="x"), ctx, lambda _p: None))
    pid = await _pid(slow_rg)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_BOUND_S)
    await _group_gone(pid)


async def test_cancelling_the_call_while_rg_starts_kills_the_process_group(
    tree, slow_rg, monkeypatch
):
    """The cancel arrives after rg has started but before the call has its process (a busy
    machine makes this window wide): the group is killed all the same."""
    release = hold_process_starts(monkeypatch, "create_subprocess_exec")
    task = asyncio.create_task(TOOL.call(GrepInput(pattern="x"), context(tree), lambda _p: None))
    pid = await _pid(slow_rg)
    task.cancel()  # while the call waits for its process
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_BOUND_S)
    await _group_gone(pid)


# -- odd files --------------------------------------------------------------------------------


async def test_crlf_lines_are_shown_without_their_carriage_return(tmp_path):
    (tmp_path / "dos.txt").write_bytes(b"first\r\nneedle here\r\nlast\r\n")
    result, _ = await grep(tmp_path, pattern="needle", output_mode="content")
    assert entries(result) == ["dos.txt:2:needle here"]


async def test_a_file_name_that_is_not_utf8_is_shown_replaced(tmp_path):
    (tmp_path / os.fsdecode(b"caf\xe9.txt")).write_text("needle\n")
    for mode in ("files_with_matches", "content", "count"):
        result, content = await grep(tmp_path, pattern="needle", output_mode=mode)
        assert not result.is_error
        assert "caf\ufffd.txt" in content
        content.encode("utf-8")
