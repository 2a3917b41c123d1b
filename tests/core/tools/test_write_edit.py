"""Write and Edit: read-before-edit, exact matches, and files that keep their conventions."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ScriptedPort, make_context

from core.access.targets import PathTarget
from core.executor import ExecutorServices, ToolCall, ToolCallOutcome, run_tool_use
from core.tool import ToolContext
from core.tools.edit import Edit, EditInput
from core.tools.files import FileChange, file_key, write_atomically
from core.tools.read import Read
from core.tools.write import Write


def context(tmp_path: Path) -> ToolContext:
    return make_context([Read(), Write(), Edit()], cwd=tmp_path)


async def run(ctx: ToolContext, name: str, **input: Any) -> ToolCallOutcome:
    services = ExecutorServices(permission_port=ScriptedPort())
    return await run_tool_use(ToolCall("toolu_1", name, input), services, ctx)


def text(outcome: ToolCallOutcome) -> str:
    content = outcome.block["content"]
    assert isinstance(content, str)
    return content


async def read_then(ctx: ToolContext, path: Path) -> None:
    assert not (await run(ctx, "Read", file_path=str(path))).is_error


def names(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def touch_later(path: Path) -> None:
    info = os.stat(path)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000_000))


# -- Write ----------------------------------------------------------------------------------


async def test_write_creates_a_file_and_its_parents(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    path = tmp_path / "a" / "b" / "new.py"
    outcome = await run(ctx, "Write", file_path=str(path), content="x = 1\n")
    assert not outcome.is_error, text(outcome)
    assert path.read_text() == "x = 1\n"
    assert text(outcome) == f"File created successfully at: {path}"
    change = outcome.data
    assert isinstance(change, FileChange) and change.kind == "create"
    assert "+x = 1" in change.diff and change.added == 1
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


async def test_write_refuses_an_existing_file_not_read(tmp_path: Path) -> None:
    path = tmp_path / "old.txt"
    path.write_text("keep me\n")
    outcome = await run(context(tmp_path), "Write", file_path=str(path), content="gone\n")
    assert outcome.is_error and outcome.failed_stage == "validate"
    assert "Read it first" in text(outcome)
    assert path.read_text() == "keep me\n"


async def test_write_refuses_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    path = tmp_path / "old.txt"
    path.write_text("v1\n")
    ctx = context(tmp_path)
    await read_then(ctx, path)
    path.write_text("v2 by the user\n")
    touch_later(path)
    outcome = await run(ctx, "Write", file_path=str(path), content="v3\n")
    assert outcome.is_error and "changed on disk since you read it" in text(outcome)
    assert path.read_text() == "v2 by the user\n"


async def test_write_rechecks_staleness_in_call(tmp_path: Path) -> None:
    path = tmp_path / "old.txt"
    path.write_text("v1\n")
    ctx = context(tmp_path)
    await read_then(ctx, path)
    touch_later(path)  # changed while the user was deciding
    tool = Write()
    result = await tool.call(
        tool.parse_input({"file_path": str(path), "content": "v3\n"}), ctx, lambda _: None
    )
    assert result.is_error and "changed on disk" in result.data
    assert path.read_text() == "v1\n"


async def test_write_replaces_a_read_file_keeping_mode_and_giving_a_diff(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("echo one\necho two\n")
    path.chmod(0o751)
    ctx = context(tmp_path)
    await read_then(ctx, path)
    outcome = await run(ctx, "Write", file_path=str(path), content="echo one\necho three\n")
    assert not outcome.is_error, text(outcome)
    assert text(outcome) == f"The file {path} has been updated."
    assert path.read_text() == "echo one\necho three\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    change = outcome.data
    assert isinstance(change, FileChange) and change.kind == "update"
    assert "-echo two\n+echo three" in change.diff
    assert (change.added, change.removed) == (1, 1)
    assert names(tmp_path) == ["run.sh"]  # no temporary file left


async def test_write_keeps_crlf_and_encoding_of_an_existing_file(tmp_path: Path) -> None:
    path = tmp_path / "win.txt"
    path.write_bytes("\ufeffold\r\n".encode("utf-8"))
    ctx = context(tmp_path)
    await read_then(ctx, path)
    assert not (await run(ctx, "Write", file_path=str(path), content="new\nlines\n")).is_error
    assert path.read_bytes() == b"\xef\xbb\xbfnew\r\nlines\r\n"


async def test_write_to_a_directory_is_refused(tmp_path: Path) -> None:
    outcome = await run(context(tmp_path), "Write", file_path=str(tmp_path), content="x")
    assert outcome.is_error and "is a directory" in text(outcome)


async def test_write_with_a_relative_path_is_refused(tmp_path: Path) -> None:
    outcome = await run(context(tmp_path), "Write", file_path="rel.txt", content="x")
    assert outcome.is_error and "absolute" in text(outcome)
    assert not (tmp_path / "rel.txt").exists()


async def test_consecutive_writes_and_edits_need_no_new_read(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    path = tmp_path / "f.txt"
    assert not (await run(ctx, "Write", file_path=str(path), content="a\n")).is_error
    assert not (await run(ctx, "Write", file_path=str(path), content="b\n")).is_error
    outcome = await run(ctx, "Edit", file_path=str(path), old_string="b", new_string="c")
    assert not outcome.is_error, text(outcome)
    assert path.read_text() == "c\n"


def test_atomic_write_leaves_the_original_and_no_temp_file_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "keep.txt"
    path.write_text("original\n")

    def broken_replace(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomically(path, b"new\n")
    assert path.read_text() == "original\n"
    assert names(tmp_path) == ["keep.txt"]


async def test_a_failed_write_is_a_clear_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(src: Any, dst: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    outcome = await run(context(tmp_path), "Write", file_path=str(tmp_path / "n.txt"), content="x")
    assert outcome.is_error and outcome.failed_stage == "call"
    assert "could not be written: No space left on device" in text(outcome)


def test_write_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_atomically(link, b"new\n")
    assert link.is_symlink() and target.read_text() == "new\n"


# -- Edit -----------------------------------------------------------------------------------


async def edited(tmp_path: Path, content: bytes, **input: Any) -> tuple[ToolCallOutcome, Path]:
    path = tmp_path / "file.txt"
    path.write_bytes(content)
    ctx = context(tmp_path)
    await read_then(ctx, path)
    return await run(ctx, "Edit", file_path=str(path), **input), path


async def test_edit_replaces_a_unique_match_and_returns_a_diff(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, b"def f():\n    return 1\n", old_string="return 1", new_string="return 2"
    )
    assert not outcome.is_error, text(outcome)
    assert path.read_text() == "def f():\n    return 2\n"
    change = outcome.data
    assert isinstance(change, FileChange)
    assert "-    return 1\n+    return 2" in change.diff
    assert text(outcome).startswith(f"The file {path} has been updated.")
    assert "     2\t    return 2" in text(outcome)


async def test_edit_refuses_several_matches_saying_how_many(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, b"x = 1\nx = 1\nx = 1\n", old_string="x = 1", new_string="x = 2"
    )
    assert outcome.is_error and "occurs 3 times" in text(outcome) and "replace_all" in text(outcome)
    assert path.read_text() == "x = 1\nx = 1\nx = 1\n"


async def test_edit_replace_all(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, b"foo(foo)\nfoo\n", old_string="foo", new_string="bar", replace_all=True
    )
    assert not outcome.is_error and path.read_text() == "bar(bar)\nbar\n"
    assert "All 3 occurrences" in text(outcome)
    assert isinstance(outcome.data, FileChange) and outcome.data.replacements == 3


async def test_edit_says_not_found(tmp_path: Path) -> None:
    outcome, _ = await edited(tmp_path, b"hello\n", old_string="goodbye", new_string="x")
    assert outcome.is_error and outcome.failed_stage == "validate"
    assert "not found" in text(outcome)


async def test_edit_refuses_identical_strings_and_an_empty_old_string(tmp_path: Path) -> None:
    outcome, _ = await edited(tmp_path, b"same\n", old_string="same", new_string="same")
    assert outcome.is_error and "are the same" in text(outcome)
    outcome, _ = await edited(tmp_path, b"same\n", old_string="", new_string="x")
    assert outcome.is_error and "old_string is empty" in text(outcome)


async def test_edit_matches_curly_quotes_and_keeps_the_files_characters(tmp_path: Path) -> None:
    original = "He said “don’t” — ‘ok’.\nOther “quotes” stay.\n"
    outcome, path = await edited(
        tmp_path,
        original.encode(),
        old_string='said "don\'t"',
        new_string='said "won\'t"',
    )
    assert not outcome.is_error, text(outcome)
    assert path.read_text() == "He said “won’t” — ‘ok’.\nOther “quotes” stay.\n"
    assert "quotes were treated alike" in text(outcome)


async def test_edit_matches_straight_quotes_typed_curly(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, b'msg = "hi"\n', old_string="msg = “hi”", new_string="msg = “bye”"
    )
    assert not outcome.is_error, text(outcome)
    assert path.read_text() == 'msg = "bye"\n'


async def test_edit_keeps_crlf_line_endings(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, b"one\r\ntwo\r\nthree\r\n", old_string="one\ntwo", new_string="one\n2\nextra"
    )
    assert not outcome.is_error, text(outcome)
    assert path.read_bytes() == b"one\r\n2\r\nextra\r\nthree\r\n"


async def test_edit_keeps_a_utf8_bom(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, "\ufeffnaïve\n".encode(), old_string="naïve", new_string="naïf"
    )
    assert not outcome.is_error, text(outcome)
    assert path.read_bytes() == "\ufeffnaïf\n".encode()


async def test_edit_keeps_latin1(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, "café crème\n".encode("latin-1"), old_string="crème", new_string="brûlée"
    )
    assert not outcome.is_error, text(outcome)
    assert path.read_bytes() == "café brûlée\n".encode("latin-1")


async def test_edit_refuses_characters_the_encoding_cannot_hold(tmp_path: Path) -> None:
    outcome, path = await edited(
        tmp_path, "café\n".encode("latin-1"), old_string="café", new_string="café ☕"
    )
    assert outcome.is_error and "cannot hold" in text(outcome)
    assert path.read_bytes() == "café\n".encode("latin-1")


async def test_edit_refuses_unread_and_stale_files(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a\n")
    ctx = context(tmp_path)
    outcome = await run(ctx, "Edit", file_path=str(path), old_string="a", new_string="b")
    assert outcome.is_error and "Read it first with the Read tool" in text(outcome)
    await read_then(ctx, path)
    touch_later(path)
    outcome = await run(ctx, "Edit", file_path=str(path), old_string="a", new_string="b")
    assert outcome.is_error and "read it again" in text(outcome).lower()
    assert path.read_text() == "a\n"


async def test_a_partial_read_counts_as_read(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("a\nb\nc\n")
    ctx = context(tmp_path)
    assert not (await run(ctx, "Read", file_path=str(path), offset=2, limit=1)).is_error
    outcome = await run(ctx, "Edit", file_path=str(path), old_string="c", new_string="d")
    assert not outcome.is_error, text(outcome)


async def test_consecutive_edits_work(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_text("alpha\nbeta\n")
    ctx = context(tmp_path)
    await read_then(ctx, path)
    for old, new in (("alpha", "ALPHA"), ("beta", "BETA"), ("ALPHA\n", "")):
        outcome = await run(ctx, "Edit", file_path=str(path), old_string=old, new_string=new)
        assert not outcome.is_error, text(outcome)
    assert path.read_text() == "BETA\n"
    assert file_key(path) in ctx.read_file_state


async def test_edit_of_a_missing_file_or_directory(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    missing = await run(
        ctx, "Edit", file_path=str(tmp_path / "no.txt"), old_string="a", new_string="b"
    )
    assert missing.is_error and "does not exist" in text(missing) and "Write" in text(missing)
    folder = await run(ctx, "Edit", file_path=str(tmp_path), old_string="a", new_string="b")
    assert folder.is_error and "is a directory" in text(folder)


async def test_edit_keeps_mode(tmp_path: Path) -> None:
    path = tmp_path / "tool.sh"
    path.write_text("echo a\n")
    path.chmod(0o700)
    ctx = context(tmp_path)
    await read_then(ctx, path)
    assert not (
        await run(ctx, "Edit", file_path=str(path), old_string="a", new_string="b")
    ).is_error
    assert stat.S_IMODE(path.stat().st_mode) == 0o700
    assert names(tmp_path) == ["tool.sh"]


async def test_edit_wrong_types_are_schema_errors(tmp_path: Path) -> None:
    outcome = await run(context(tmp_path), "Edit", file_path=str(tmp_path / "x"), old_string=1)
    assert outcome.is_error and outcome.failed_stage == "schema"
    assert "new_string" in text(outcome)


def test_write_and_edit_are_unsafe_edits_of_their_path(tmp_path: Path) -> None:
    edit = Edit()
    parsed = EditInput(file_path="/p/x.py", old_string="a", new_string="b")
    assert not edit.is_read_only(parsed) and not edit.is_concurrency_safe(parsed)
    assert edit.rule_target(parsed, tmp_path) == PathTarget(Path("/p/x.py"), "edit")
    write = Write()
    w = write.parse_input({"file_path": "/p/y.py", "content": ""})
    assert not write.is_read_only(w) and not write.is_concurrency_safe(w)
    assert write.rule_target(w, tmp_path) == PathTarget(Path("/p/y.py"), "edit")
    assert edit.interrupt_behavior == write.interrupt_behavior == "block"
    assert edit.input_json_schema()["required"] == ["file_path", "old_string", "new_string"]
