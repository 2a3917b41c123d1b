"""The collector around start-up (tui/collector.py): held while the first frame is built,
running again once it is drawn, and never again walking what was alive when the engine
loaded, which is what made one key press in ten wait 100–160 ms while a command streamed."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until

from tui.collector import hold_until_first_frame, release_after_first_frame


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


async def test_once_the_session_is_open_collections_skip_the_app_and_the_engine(tmp_path: Path):
    project = tmp_path / "project"
    project.mkdir()
    app = make_app(project, [[bash("seq 1 3000")], [text("Counted.")]], allow=["Bash"])
    hold_until_first_frame()  # as the `proctor` command does before importing the app
    assert not gc.isenabled()
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None, "the session to open")
        assert gc.isenabled(), "the collector must run again after the first frame"
        walked = {id(thing) for thing in gc.get_objects()}
        assert app.live is not None
        long_lived = (app, app.book, app.status_bar, app.tool_queue, app.live.loop)
        assert not any(id(thing) in walked for thing in long_lived)
        assert gc.get_freeze_count() > len(walked)
        # The session goes on as before: a command streams and is drawn, the turn ends.
        await until(pilot, lambda: turn_over(app), "the turn to end")
        (record,) = app.book.calls.values()
        assert record.state == "done" and "2999\n3000" in (record.result or "")


def test_the_collector_is_switched_back_on_only_by_whoever_switched_it_off():
    gc.disable()  # someone else's choice (an embedding program, a profiler)
    try:
        hold_until_first_frame()
        release_after_first_frame()
        assert not gc.isenabled()
    finally:
        gc.enable()
    hold_until_first_frame()
    assert not gc.isenabled()
    release_after_first_frame()
    assert gc.isenabled()
