"""The status screen: /status, F3 and the palette open it; it says what the session runs with."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until
from dialog_helpers import Host
from test_help_and_palette import open_palette_command
from textual.containers import VerticalScroll
from textual.widgets import Static

from tui.screens.status import StatusScreen
from tui.status_facts import InstructionRow, SettingsRow, StatusFacts
from tui.widgets.conversation import Notice

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py

SMALL = (80, 24)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-user"))
    folder = tmp_path / "project"
    (folder / "lib").mkdir(parents=True)
    (folder / "CLAUDE.md").write_text("Use tabs.\n@notes.md\n")
    (folder / "notes.md").write_text("More notes.")
    (folder / ".claude" / "rules").mkdir(parents=True)
    (folder / ".claude" / "rules" / "api.md").write_text(
        '---\npaths: ["lib/**"]\n---\nCheck the token.\n'
    )
    (folder / "lib" / "AGENTS.md").write_text("Generated: do not edit.")
    (folder / "lib" / "gen.py").write_text("x = 1\n")
    (folder / ".proctor").mkdir()
    (folder / ".proctor" / "settings.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}'
    )
    user = tmp_path / "claude-user"
    user.mkdir()
    (user / "CLAUDE.md").write_text("Call me Sam.")
    return folder


def shown(screen: StatusScreen) -> str:
    return "\n".join(str(static.render()) for static in screen.query(Static))


def read_gen() -> dict[str, object]:
    return {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/lib/gen.py"}}


async def test_slash_status_shows_the_session_and_where_each_instruction_came_from(
    project: Path,
):
    app = make_app(project, [[read_gen()], [text("Read it.")]], prompt="look", allow=["Read"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        # The conversation said so when the read brought new instructions in.
        notes = [str(n.render()) for n in app.conversation.query(Notice)]
        assert (
            "instructions from lib/AGENTS.md, .claude/rules/api.md now apply "
            "(found reading lib/gen.py)"
        ) in notes
        await pilot.press(*"/status", "enter")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), "the status screen")
        said = shown(app.screen)
        assert app.prepared is not None and app.live is not None
        assert app.prepared.session.id in said
        assert f"Model     {app.live.model.model}" in said
        assert "Mode      default" in said
        assert "Context   " in said and "tokens)" in said  # measured after the turn
        lines = [line.strip() for line in said.splitlines()]
        assert f"user         {project.parent / 'claude-user' / 'CLAUDE.md'}" in lines
        assert "project      CLAUDE.md" in lines
        assert "import       notes.md  by CLAUDE.md" in lines
        # Reading lib/gen.py brought lib/AGENTS.md and the rule scoped to lib/**.
        assert "subdirectory lib/AGENTS.md  found reading gen.py" in lines
        assert "rules        .claude/rules/api.md  for lib/**" in lines
        assert "project               .proctor/settings.json" in lines
        assert "Hooks     1 hook command" in said
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, StatusScreen), "it closes")


async def test_f3_and_the_palette_open_it_and_f3_closes_it(project: Path):
    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), "F3 opens it")
        await pilot.press("f3")
        await until(pilot, lambda: not isinstance(app.screen, StatusScreen), "F3 closes it")
        await open_palette_command(app, pilot, "status")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen), "the palette opens it")


async def test_an_untrusted_projects_settings_and_hooks_are_listed_as_set_aside(project: Path):
    from tui.screens.trust import TrustScreen

    app = make_app(project, [[text("ok")]], prompt=None, trust=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TrustScreen))
        await pilot.press("n")
        await until(pilot, lambda: app.live is not None)
        await pilot.press("f3")
        await until(pilot, lambda: isinstance(app.screen, StatusScreen))
        said = shown(app.screen)
        assert ".proctor/settings.json  set aside: not trusted" in said
        assert "Hooks     0 hook commands; 1 of the project's set aside (not trusted)" in said
        lines = [line.strip() for line in said.splitlines()]
        assert not any(line.startswith("project      CLAUDE.md") for line in lines)


def many_facts() -> StatusFacts:
    project = Path("/work/shop")
    files = [
        InstructionRow(Path("/etc/people/sam/.claude/CLAUDE.md"), "user"),
        InstructionRow(project / "CLAUDE.md", "project"),
        InstructionRow(project / "docs" / "style.md", "import", "by CLAUDE.md"),
        InstructionRow(project / ".claude" / "rules" / "testing.md", "rules"),
        InstructionRow(project / "CLAUDE.local.md", "local"),
        InstructionRow(project / "AGENTS.md", "AGENTS.md"),
        *(
            InstructionRow(project / f"pkg{n}" / "CLAUDE.md", "subdirectory", "found reading a.py")
            for n in range(8)
        ),
    ]
    return StatusFacts(
        session_id="20261126-164026-a1b2",
        session_dir=Path("/var/proctor/sessions/20261126-164026-a1b2"),
        project=project,
        model="claude-opus-4-5",
        mode="acceptEdits",
        context="context 62%",
        context_tokens=(124_000, 200_000),
        instructions=tuple(files),
        settings=(
            SettingsRow(project / ".proctor" / "settings.json", "project", True),
            SettingsRow(Path("/etc/people/sam/.claude/settings.json"), "claude-user", True),
        ),
        sandbox="sandbox: files+net",
        mcp="MCP 1/2",
        hooks=3,
    )


async def test_at_80x24_a_long_list_scrolls_and_esc_stays_on_screen():
    app = Host(StatusScreen(many_facts()))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, StatusScreen)
        hint = screen.query_one("#hint", Static)
        assert hint.region.bottom <= SMALL[1] and "esc closes" in str(hint.render())
        body = screen.query_one("#body", VerticalScroll)
        assert body.max_scroll_y > 0
        await pilot.press("pagedown")
        assert body.scroll_y > 0
        await pilot.press("escape")
        await pilot.pause()
        assert app.results == [None]


def test_snapshot_at_80x24(snap_compare):
    assert snap_compare(Host(StatusScreen(many_facts())), terminal_size=SMALL)
