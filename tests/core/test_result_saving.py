"""Saving oversized results: a result too big for the model is saved whole and the person
sees where; a very big one (over a million characters, saved on a thread so the event loop
keeps drawing) the same; one that cannot be saved is a warning, and the model still gets
its beginning. The big and unsaveable cases were mutations of `_CallRun.bound_size` that no
test noticed (docs/mutation.md)."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import make_context, make_services, text_of
from tools_for_tests import Small

from core.events import EventRecorder, ResultPersisted, ToolNotice
from core.executor import ToolCall, run_tool_use


async def run(output: str, session_dir: Path, recorder: EventRecorder):
    services = make_services(recorder, session_dir=session_dir)
    return await run_tool_use(
        ToolCall("t", "Small", {"output": output}), services, make_context([Small()])
    )


async def test_a_result_over_a_million_characters_is_saved_whole(tmp_path: Path):
    recorder = EventRecorder()
    huge = "x" * 1_000_001
    outcome = await run(huge, tmp_path, recorder)
    saved = tmp_path / "tool-results" / "t.txt"
    assert saved.read_text() == huge
    assert str(saved) in text_of(outcome) and len(text_of(outcome)) < 10_000
    (event,) = [e for e in recorder.events if isinstance(e, ResultPersisted)]
    assert event.path == saved and event.size_chars == len(huge)


async def test_a_result_that_cannot_be_saved_is_a_warning_and_keeps_its_beginning(
    tmp_path: Path,
):
    recorder = EventRecorder()
    blocked = tmp_path / "session"
    blocked.write_text("a file where the session folder should be")
    big = "\n".join(f"line {i}" for i in range(100))
    outcome = await run(big, blocked, recorder)
    (notice,) = [e for e in recorder.events if isinstance(e, ToolNotice)]
    assert notice.level == "warning"
    assert notice.text.startswith("The full output of Small could not be saved (")
    assert notice.text.endswith("the model sees only its beginning.")
    told = text_of(outcome)  # the model is told too, and gets what fits
    assert told.startswith("Output too large") and "could not be saved" in told
    assert "line 0\n" in told
