"""Slash commands in the app: typed as a person would, on the real engine and demo model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until

from core.agent.compaction import context_window
from tui.widgets.command_hints import CommandHints
from tui.widgets.conversation import Notice

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(
        "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $1 closely.\n"
    )
    return folder


def notices(app) -> str:
    return "\n".join(str(notice.render()) for notice in app.conversation.query(Notice))


def hints(app) -> str:
    widget = app.main_screen.query_one(CommandHints)
    return str(widget.render()) if widget.display else ""


def user_texts(app) -> list[str]:
    return [json.dumps(m["content"]) for m in app.live.loop.messages if m["role"] == "user"]


async def test_typing_a_slash_lists_matches_and_tab_completes(project: Path):
    app = make_app(project, [[text("Looked.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("/")
        await until(pilot, lambda: "/help" in hints(app), "the commands listed")
        assert "more: keep typing" in hints(app)  # eight at most
        await pilot.press("r")
        assert "/review <file>" in hints(app) and "Review a file (project)" in hints(app)
        await pilot.press("e")
        shown = hints(app)
        assert "/review" in shown and "/resume" in shown and "/help" not in shown
        await pilot.press("v", "tab")
        assert app.prompt_input.value == "/review "
        assert hints(app) == ""  # a space ends the name: the list goes
        await pilot.press(*"app.py", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert "Review app.py closely." in user_texts(app)[0]


async def test_an_unknown_command_is_said_and_never_sent(project: Path):
    app = make_app(project, [[text("Should not run.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/reveiw x", "enter")
        await until(pilot, lambda: "no /reveiw command" in notices(app))
        assert "nothing was sent" in notices(app)
        assert app.book.turns == [] and app.live.loop.messages == []
        await pilot.press(*"/etc/hosts", "enter")  # a path is a prompt, not a command
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)


async def test_clear_starts_the_conversation_afresh(project: Path):
    app = make_app(project, [[text("First.")], [text("Second.")]], prompt="hello")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert len(app.live.loop.messages) == 2
        await pilot.press(*"/clear", "enter")
        await until(pilot, lambda: "conversation cleared" in notices(app))
        assert app.live.loop.messages == [] and app.live.loop.compactor.tokens == 0
        records = list(app.live.transcript.records())
        assert any(r.get("type") == "clear" for r in records)


async def test_compact_summarises_the_conversation_now(project: Path):
    app = make_app(project, [[text("First.")], [text("Second.")]], prompt="hello")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        await pilot.press(*"/compact keep the names", "enter")
        await until(pilot, lambda: "conversation compacted" in notices(app))
        assert app.live.loop.compactor.compactions == 1


async def test_mode_model_and_permissions_act_on_the_session(project: Path):
    app = make_app(project, [[text("ok")]], prompt=None, allow=["Bash(ls:*)"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/mode plan", "enter")
        await until(pilot, lambda: app.live.mode == "plan")
        await pilot.press(*"/mode sideways", "enter")
        await until(pilot, lambda: "'sideways' is not a mode" in notices(app))
        assert app.live.mode == "plan"
        await pilot.press(*"/permissions", "enter")
        await until(pilot, lambda: "Allow rules:" in notices(app))
        assert "Bash(ls:*)  — cli" in notices(app)
        await pilot.press(*"/model claude-other-1", "enter")
        await until(pilot, lambda: app.live.model.model == "claude-other-1")
        assert app.status_bar.model == "claude-other-1"


async def test_a_commands_model_is_used_for_its_turn_and_then_put_back(project: Path):
    (project / ".claude" / "commands" / "quick.md").write_text("---\nmodel: claude-x\n---\nHi.")
    app = make_app(project, [[text("Hello.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        before, window = app.live.model.model, app.live.loop.compactor.window
        await pilot.press(*"/quick", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert "/quick uses claude-x for this prompt" in notices(app)
        records = list(app.live.transcript.records())
        assert {r["model"] for r in records if r.get("kind") == "usage"} == {"claude-x"}
        # The context gauge measured the turn against claude-x's window, not the demo's.
        windows = {r["window"] for r in records if r.get("kind") == "context"}
        assert windows == {context_window("claude-x")} and window != context_window("claude-x")
        assert app.live.model.model == before
        assert app.live.loop.compactor.window == window


async def test_permissions_adds_and_removes_session_rules_only(project: Path):
    app = make_app(project, [[text("ok")]], prompt=None, allow=["Bash(ls:*)"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)

        def rules() -> list[str]:
            context = app.live.store.get().permission_context
            return [f"{r.behavior} {r}" for r in context.rules]

        await pilot.press(*"/permissions deny Bash(rm:*)", "enter")
        await until(pilot, lambda: "deny Bash(rm:*)" in rules())
        await pilot.press(*"/permissions", "enter")
        await until(pilot, lambda: "Bash(rm:*)  — session" in notices(app))
        await pilot.press(*"/permissions allow Bash(oops", "enter")
        await until(pilot, lambda: "no rule was changed" in notices(app))
        await pilot.press(*"/permissions allow Nosuchtool", "enter")
        await until(pilot, lambda: "no rule was added" in notices(app))
        await pilot.press(*"/permissions remove Bash(ls:*)", "enter")
        await until(pilot, lambda: "remove it there" in notices(app))
        assert "allow Bash(ls:*)" in rules()
        await pilot.press(*"/permissions remove Bash(rm:*)", "enter")
        await until(pilot, lambda: "deny Bash(rm:*)" not in rules())
        assert rules() == ["allow Bash(ls:*)"]


async def test_memory_lists_the_instruction_files_in_use(project: Path):
    (project / "CLAUDE.md").write_text("Use tabs.\n@notes.md\n")
    (project / "notes.md").write_text("More notes.")
    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/memory", "enter")
        await until(pilot, lambda: "Instructions the model was given" in notices(app))
        said = notices(app)
        assert f"{project / 'CLAUDE.md'} — project instructions" in said
        assert "notes.md" in said and "imported by" in said


async def test_a_command_typed_before_the_custom_ones_are_read_goes_back_to_the_input(
    project: Path,
):
    from core.agent.commands import CommandRegistry

    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        read = app.prompt_input.commands
        app.prompt_input.commands = CommandRegistry(complete=False)  # as at start-up
        await pilot.press(*"/review a.py", "enter")
        await until(pilot, lambda: "still being read" in notices(app))
        assert app.prompt_input.value == "/review a.py" and app.book.turns == []
        app.prompt_input.commands = read
        await pilot.press("enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert "Review a.py closely." in user_texts(app)[0]


async def test_allowed_tools_narrow_the_commands_turn_and_grant_nothing(project: Path):
    from app_helpers import bash

    from tui.screens.permission import PermissionScreen

    (project / ".claude" / "commands" / "look.md").write_text(
        "---\nallowed-tools: Read, Bash(touch:*)\n---\nLook around."
    )
    turns = [[bash("mkdir made-by-command")], [text("Refused.")], [bash("touch inside")]]
    app = make_app(project, [*turns, [text("Asked.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/look", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert "limits this turn to its allowed-tools (Read, Bash(touch:*))" in notices(app)
        assert not (project / "made-by-command").exists()  # outside the list: refused
        results = json.dumps(app.live.loop.messages)
        assert "allowed-tools" in results and "do not cover this call" in results
        assert "the command /look is active" in results and "skill" not in results
        assert app.live.store.get().permission_context.skill_scopes == ()  # ended with it
        # Inside the list is no permission either: the next call still asks the person.
        await pilot.press(*"/look", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen))
