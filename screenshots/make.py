"""Regenerate the SVG screenshots shown in the README from the real app.

    python screenshots/make.py

One run of the real app (engine, tools, subprocesses) on the offline demo's default scenario,
driven headless through Textual's Pilot at a fixed size, answering its dialogs as a person
would and saving the screen at the moments the README shows. Nothing is staged: if the app
changes, the pictures change with it, so the README never drifts from what users see.

Why it is shaped so:

- One session, not one per picture: the moments are steps of the same story (a dialog, the
  busy main screen, the plan, the saved output), and the demo takes seconds to play.
- Every wait polls a condition on the app (which screen is on top, what the call book
  holds), bounded, and fails with what it waited for; the demo's real commands take real
  time, so fixed sleeps would be either slow or flaky.
- Everything the run writes (the session, settings, the demo's scratch copy of the sample
  project) is removed afterwards, and the user's own config and data are never read: the
  pictures show no one's machine but the demo's.
- The busy main screen is drawn from under the plan dialog (`Shots.save_main_screen`): while
  a dialog waits for its answer the engine waits too, so that moment holds still, and by
  then the turn shows nearly everything at once (parallel batches, a cancelled sibling,
  sub-agents' calls, plan mode, todos in all three states). Every picture is taken at such
  a moment, or after the demo ends, so the demo needs no pauses of its own
  (`DEMO_SPEED = 0`) and the pictures do not depend on the machine's speed.
"""

from __future__ import annotations

import asyncio
import io
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from rich.console import Console  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from textual.widgets import Static  # noqa: E402

from core.agent.live import SessionOptions, prepare_session  # noqa: E402
from tui.app import LaunchOptions, ProctorApp  # noqa: E402
from tui.screens.outputs import SavedOutputsScreen  # noqa: E402
from tui.screens.permission import PermissionScreen  # noqa: E402
from tui.screens.plan import PlanScreen  # noqa: E402
from tui.screens.question import QuestionScreen  # noqa: E402
from tui.screens.viewer import OutputViewerScreen  # noqa: E402

# The dialogs refuse approvals for a moment after they appear (keys typed for the prompt
# must not approve anything); the script answers at once, as the tests do.
PermissionScreen.approve_delay_s = 0.0
PlanScreen.approve_delay_s = 0.0

SIZE = (130, 40)
DEMO_SPEED = 0.0
WAIT_ROUNDS = 600
"""How many 0.05 s pauses a wait may take (30 s): generous for a slow, shared machine."""
SEARCH = "line 777"


class Shots:
    """Saves screenshots of one app into the screenshots folder and remembers their names."""

    def __init__(self, app: ProctorApp, folder: Path) -> None:
        self.app = app
        self.folder = folder
        self.written: list[Path] = []

    def save(self, name: str) -> None:
        self.app.save_screenshot(filename=name, path=str(self.folder))
        self.written.append(self.folder / name)

    def save_main_screen(self, name: str) -> None:
        """The main screen as it is under the dialog on top, drawn as `save_screenshot` draws
        the top screen. The engine waits for the dialog's answer, so nothing moves while it
        is drawn; the same moment without the dialog would last only as long as the demo's
        pace allowed, and a slow machine would miss it."""
        app, main = self.app, self.app.main_screen
        assert main is not None
        width, height = app.size
        console = Console(
            width=width,
            height=height,
            file=io.StringIO(),
            force_terminal=True,
            color_system="truecolor",
            record=True,
            legacy_windows=False,
            safe_box=False,
        )
        console.print(main._compositor.render_update(full=True))
        (self.folder / name).write_text(console.export_svg(title=app.title), encoding="utf-8")
        self.written.append(self.folder / name)


async def until(pilot: Pilot[Any], condition: Callable[[], object], what: str) -> None:
    for _ in range(WAIT_ROUNDS):
        if condition():
            return
        await pilot.pause(0.05)
    raise SystemExit(f"screenshots: gave up waiting for {what}")


async def settle(pilot: Pilot[Any]) -> None:
    """Let the bridge's last frame, layout and painting catch up before a picture."""
    await pilot.pause(0.1)
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


CHANGELOG = "mcp__changelog__add_entry"
"""The sample project's own MCP server's tool, which the tour approves."""


def asking(app: ProctorApp, tool_name: str) -> bool:
    screen = app.screen
    return isinstance(screen, PermissionScreen) and screen.request.tool_name == tool_name


def turn_over(app: ProctorApp) -> bool:
    turn = app.book.current_turn
    return turn is not None and turn.finished and app.bridge.pending == 0


async def tour(app: ProctorApp, shots: Shots) -> None:
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: asking(app, "Edit"), "the Edit's dialog")
        await settle(pilot)
        shots.save("permission.svg")
        await pilot.press("y")

        await until(pilot, lambda: asking(app, "Bash"), "the test command's dialog")
        await pilot.press("y")

        await until(pilot, lambda: asking(app, CHANGELOG), "the MCP tool's dialog")
        await pilot.press("y")

        await until(pilot, lambda: isinstance(app.screen, PlanScreen), "the plan dialog")
        await settle(pilot)
        shots.save("plan.svg")
        shots.save_main_screen("main.svg")
        await pilot.press("1")

        await until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        await pilot.press("enter")  # one question: enter picks and submits
        await until(pilot, lambda: turn_over(app), "the end of the demo")

        await pilot.press("ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, SavedOutputsScreen), "saved outputs")
        outputs = app.screen
        assert isinstance(outputs, SavedOutputsScreen)
        await until(pilot, lambda: bool(outputs.entries), "the saved outputs listed")
        keys = list(outputs.entries)
        big = max(keys, key=lambda key: outputs.entries[key].size_bytes)
        outputs.table.move_cursor(row=keys.index(big))
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, OutputViewerScreen), "the viewer")
        await pilot.press("slash", *SEARCH, "enter")
        await until(pilot, lambda: "match" in viewer_status(app), f"the match for {SEARCH!r}")
        await settle(pilot)
        shots.save("viewer.svg")

        await pilot.press("escape")  # the viewer
        await pilot.press("escape")  # the list
        await until(pilot, lambda: app.main_screen is app.screen, "the main screen")
        for theme, name in (
            ("proctor-light", "light.svg"),
            ("proctor-high-contrast", "high-contrast.svg"),
        ):
            app.theme = theme
            await settle(pilot)
            shots.save(name)
        await app.shutdown()


def viewer_status(app: ProctorApp) -> str:
    return str(app.screen.query_one("#viewer-status", Static).render())


def remove_demo_copy(workspace: Path) -> None:
    """The demo copies the sample project to a fresh `proctor-demo-*` folder in the system's
    temporary directory (so the screens show the path a user's demo would) and leaves it
    there; this run's copy is removed, and nothing else."""
    temp = Path(tempfile.gettempdir()).resolve()
    if workspace.parent == temp and workspace.name.startswith("proctor-demo-"):
        shutil.rmtree(workspace, ignore_errors=True)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="proctor-shots-") as scratch:
        home = Path(scratch) / "home"
        # Inside HOME, so the screens show `~/.local/share/proctor/...` as a user's would.
        os.environ["PROCTOR_DATA_DIR"] = str(home / ".local" / "share" / "proctor")
        os.environ["PROCTOR_CONFIG_DIR"] = str(home / ".config" / "proctor")
        os.environ["HOME"] = str(home)
        project = Path(scratch) / "project"
        project.mkdir()
        prepared = prepare_session(
            SessionOptions(cwd=project, demo=True, scenario="default", demo_speed=DEMO_SPEED)
        )
        try:
            assert prepared.scenario is not None
            app = ProctorApp(LaunchOptions(prepared, first_prompt=prepared.scenario.prompt))
            shots = Shots(app, HERE)
            asyncio.run(tour(app, shots))
        finally:
            remove_demo_copy(prepared.cwd)
    for path in shots.written:
        print(f"wrote {path.relative_to(HERE.parent)}")


if __name__ == "__main__":
    main()
