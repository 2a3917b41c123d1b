"""The saved-output list and viewer, driven through Pilot as a person would use them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from engine_helpers import HANG_BOUND_S
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from tui.screens.outputs import SavedOutputsScreen
from tui.screens.viewer import OutputViewerScreen
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.viewer import SavedOutputEntry, scan_saved_outputs
from tui.viewer.file_view import FileView

FIXED_TIME = 1_700_000_000


class Host(App[None]):
    """An empty app that pushes the screen under test on mount."""

    def __init__(self, screen_factory) -> None:
        super().__init__()
        self.screen_factory = screen_factory

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Static("host")

    def on_mount(self) -> None:
        self.push_screen(self.screen_factory())


def session(tmp_path: Path) -> Path:
    (tmp_path / "tool-results").mkdir()
    (tmp_path / "shells").mkdir()
    return tmp_path


def numbered_lines(count: int, word: str = "line") -> str:
    return "".join(f"{word} {n}\n" for n in range(1, count + 1))


def entry_for(path: Path, *, running: bool = False, tool: str = "Grep") -> SavedOutputEntry:
    [output] = [o for o in scan_saved_outputs(path.parent.parent) if o.path == path]
    output = type(output)(
        output.path, output.tool_use_id, output.size_bytes, output.mtime, output.first_line, running
    )
    return SavedOutputEntry(output, tool)


def append(path: Path, text: str) -> None:
    with open(path, "a") as file:
        file.write(text)


def visible_text(app: App[None]) -> str:
    """What the screen shows, as plain text rows."""
    return "\n".join(
        "".join(segment.text for segment in strip)
        for strip in app.screen._compositor.render_strips()
    )


async def wait_until(pilot, condition) -> bool:
    """Let the app run until `condition()` holds (bounded only against a hang)."""
    give_up = time.monotonic() + HANG_BOUND_S
    while not condition():
        if time.monotonic() > give_up:
            return False
        await pilot.pause()
    return True


async def test_the_list_shows_each_saved_output_and_enter_opens_it(tmp_path):
    root = session(tmp_path)
    result = root / "tool-results" / "toolu_01.txt"
    result.write_text("first match here\nsecond\n")
    spool = root / "shells" / "1-tests.txt"
    spool.write_text("running tests\n")
    os.utime(result, (FIXED_TIME, FIXED_TIME))
    os.utime(spool, (FIXED_TIME + 60, FIXED_TIME + 60))

    app = Host(lambda: SavedOutputsScreen.for_session(root))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert [row[0] for row in rows] == ["Bash", "result"]
        assert rows[1][1] == "24 B"
        assert rows[1][3] == "first match here"
        await pilot.press("down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, OutputViewerScreen)
        assert app.screen.entry.path == result
        assert "1 first match here" in visible_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, SavedOutputsScreen)


async def test_an_empty_session_says_so(tmp_path):
    app = Host(lambda: SavedOutputsScreen.for_session(session(tmp_path)))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert "Nothing saved yet" in visible_text(app)


async def test_the_viewer_shows_numbered_lines_and_the_line_count(tmp_path):
    path = session(tmp_path) / "tool-results" / "toolu_02.txt"
    path.write_text(numbered_lines(500))
    app = Host(lambda: OutputViewerScreen(entry_for(path)))
    async with app.run_test(size=(100, 30)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = visible_text(app)
        assert "  1 line 1" in text
        assert " 20 line 20" in text
        assert "500 lines" in text
        assert "tool-results/toolu_02.txt" in text


async def test_search_jumps_to_matches_and_n_and_shift_n_move_between_them(tmp_path):
    path = session(tmp_path) / "tool-results" / "toolu_03.txt"
    lines = numbered_lines(300).splitlines()
    lines[149] = "the NEEDLE is here"
    lines[249] = "another needle"
    path.write_text("\n".join(lines) + "\n")
    app = Host(lambda: OutputViewerScreen(entry_for(path)))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.screen.query_one(FileView)
        status = app.screen.query_one("#viewer-status", Static)
        await pilot.press("slash", *"needle", "enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.current_line == 149
        assert "match 1 at line 150" in str(status.render())
        assert "150 the NEEDLE is here" in visible_text(app)

        await pilot.press("n")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.current_line == 249
        assert "match 2 at line 250" in str(status.render())

        await pilot.press("n")  # wraps to the first
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.current_line == 149

        await pilot.press("N")  # and back, wrapping the other way
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert view.current_line == 249

        await pilot.press("slash", *"zebra", "enter")  # replaces the last pattern
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "no match for “zebra”" in str(status.render())


async def test_go_to_line_scrolls_there_and_escape_cancels_the_prompt(tmp_path):
    path = session(tmp_path) / "tool-results" / "toolu_04.txt"
    path.write_text(numbered_lines(2000, word="row"))
    app = Host(lambda: OutputViewerScreen(entry_for(path)))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.screen.query_one(FileView)
        await pilot.press("g", *"1234", "enter")
        await pilot.pause()
        assert view.current_line == 1233
        assert "1234 row 1234" in visible_text(app)
        assert "row 1 \n" not in visible_text(app)

        await pilot.press("g", "5", "escape")
        await pilot.pause()
        assert view.current_line == 1233
        assert isinstance(app.screen, OutputViewerScreen)  # esc closed the prompt only
        await pilot.press("home")
        await pilot.pause()
        assert "   1 row 1" in visible_text(app)


async def test_follow_mode_shows_what_a_running_command_appends(tmp_path):
    path = session(tmp_path) / "shells" / "1-build.txt"
    path.write_text(numbered_lines(100, word="step"))
    app = Host(lambda: OutputViewerScreen(entry_for(path, running=True), refresh_interval=0.01))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.screen.query_one(FileView)
        assert view.following
        assert await wait_until(pilot, lambda: "100 step 100" in visible_text(app))
        append(path, "".join(f"step {n}\n" for n in range(101, 161)) + "build finished\n")
        assert await wait_until(pilot, lambda: "161 build finished" in visible_text(app))
        assert "step 100\n" not in visible_text(app)  # scrolled past the old end

        await pilot.press("f")
        assert not view.following
        append(path, "late line\n")
        for _ in range(10):
            await pilot.pause()
        assert "late line" not in visible_text(app)

        await pilot.press("f")
        assert await wait_until(pilot, lambda: "162 late line" in visible_text(app))
        await pilot.press("up")  # looking back stops following, or the next tick undoes it
        assert not view.following


async def test_long_lines_scroll_sideways_under_a_fixed_gutter(tmp_path):
    path = session(tmp_path) / "tool-results" / "toolu_wide.txt"
    path.write_text("short\n" + "a" * 150 + "TAIL\n")
    app = Host(lambda: OutputViewerScreen(entry_for(path)))
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.screen.query_one(FileView)
        await pilot.pause()
        assert "TAIL" not in visible_text(app)
        view.scroll_to(x=100, animate=False)
        await pilot.pause()
        text = visible_text(app)
        assert "a" * 50 + "TAIL" in text
        assert "  2 aaa" in text  # the gutter stays put
        assert "short" not in text


async def test_small_source_files_are_highlighted_and_plain_output_is_not(tmp_path):
    root = session(tmp_path)
    source = root / "tool-results" / "code.txt"
    source.write_text("import os\n\n\ndef main() -> None:\n    print(os.getcwd())\n")
    log = root / "tool-results" / "log.txt"
    log.write_text(numbered_lines(30, word="processed item"))
    for path, language in ((source, "python"), (log, None)):
        app = Host(lambda path=path: OutputViewerScreen(entry_for(path)))
        async with app.run_test(size=(100, 30)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            view = app.screen.query_one(FileView)
            assert view.language == language
            _gutter, *body = list(view.render_line(3))  # "def main() -> None:"
            colours = {segment.style.color for segment in body if segment.style and segment.text}
            assert (len(colours) > 1) == (language is not None)


async def test_binary_empty_and_missing_files_show_a_message_not_a_crash(tmp_path):
    root = session(tmp_path)
    binary = root / "tool-results" / "bin.txt"
    binary.write_bytes(b"\x00\xff\x1b[31mred\x1b[0m\ttab\n")
    empty = root / "tool-results" / "empty.txt"
    empty.write_bytes(b"")
    entries = [entry_for(binary), entry_for(empty)]
    missing = SavedOutputEntry(
        type(entries[0].output)(root / "gone.txt", "gone", 10, FIXED_TIME, "", False), "result"
    )
    for entry, expected in (
        (entries[0], "1 \ufffd\ufffdred   tab"),  # tab stops every 4 columns
        (entries[1], "(empty)"),
        (missing, "Cannot open"),
    ):
        app = Host(lambda entry=entry: OutputViewerScreen(entry))
        async with app.run_test(size=(100, 30)) as pilot:
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert expected in visible_text(app)


def test_the_viewer_snapshot(tmp_path, snap_compare):
    path = session(tmp_path) / "tool-results" / "toolu_snap.txt"
    text = "".join(
        f"{n:04d} INFO worker-{n % 3} processed batch {n} in {n * 7 % 90} ms\n"
        for n in range(1, 60)
    )
    path.write_text(text.replace("batch 12 ", "batch 12 ERROR retrying "))
    os.utime(path, (FIXED_TIME, FIXED_TIME))
    entry = SavedOutputEntry(scan_saved_outputs(tmp_path)[0], "Bash", "pytest -q")

    async def search_for_error(pilot) -> None:
        await pilot.press("slash", *"error", "enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    app = Host(lambda: OutputViewerScreen(entry))
    assert snap_compare(app, terminal_size=(100, 30), run_before=search_for_error)
