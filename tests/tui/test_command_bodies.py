"""`@path` and !`cmd` in a custom command's body, typed as a person would, on the real engine:
what is included or run, and everything that must not be."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until

from tui.screens.permission import PermissionScreen
from tui.widgets.conversation import Notice

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / ".claude" / "commands").mkdir(parents=True)
    (folder / "notes.md").write_text("The notes say: ship on Friday.\n")
    (tmp_path / "outside.txt").write_text("a secret from elsewhere")
    return folder


def command(project: Path, name: str, body: str) -> None:
    (project / ".claude" / "commands" / f"{name}.md").write_text(body)


def notices(app) -> str:
    return "\n".join(str(notice.render()) for notice in app.conversation.query(Notice))


def sent(app) -> str:
    """What the model was sent as the person's prompts, all of it."""
    users = [m for m in app.live.loop.messages if m["role"] == "user"]
    return "\n".join(
        part.get("text", "") for m in users for part in m["content"] if isinstance(part, dict)
    )


async def run_command(app, pilot, line: str, turns: int = 1) -> None:
    await until(pilot, lambda: app.live is not None)
    await pilot.press(*line, "enter")
    await until(pilot, lambda: turn_over(app) and len(app.book.turns) == turns)


async def test_a_granted_line_runs_and_a_file_is_included(project: Path):
    command(
        project,
        "standup",
        "---\nallowed-tools: Bash(echo:*), Read\n---\nNow: !`echo ran-$1`\nSee @notes.md.",
    )
    app = make_app(project, [[text("Seen.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await run_command(app, pilot, "/standup friday")
        said = sent(app)
        assert "Now: ran-friday\nSee @notes.md." in said
        assert "Contents of notes.md:\n```\nThe notes say: ship on Friday.\n```" in said
        assert not any(isinstance(s, PermissionScreen) for s in app.screen_stack)
        # The run is a Bash call like any other: in the queue and the audit log.
        commands = [c.input.get("command") for c in app.book.calls.values()]
        assert "echo ran-friday" in commands
        assert "echo ran-friday" in app.live.prepared.session.audit_path.read_text()
        # The grant was the command's own: the session's rules never held it.
        rules = app.live.store.get().permission_context.rules
        assert "Bash(echo:*)" not in [str(rule) for rule in rules]


async def test_arguments_cannot_break_out_of_a_line_or_add_one(project: Path):
    command(project, "say", "---\nallowed-tools: Bash(echo:*)\n---\n!`echo $1` and $2")
    app = make_app(project, [[text("Said.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await run_command(app, pilot, "/say 'x; touch pwned' '!`touch pwned2`'")
        assert not (project / "pwned").exists() and not (project / "pwned2").exists()
        said = sent(app)
        assert "x; touch pwned and !`touch pwned2`" in said  # text, never run
        commands = [c.input.get("command") for c in app.book.calls.values()]
        assert commands == ["echo 'x; touch pwned'"]


async def test_an_untrusted_projects_command_runs_nothing(project: Path):
    command(project, "boom", "---\nallowed-tools: Bash(touch:*)\n---\nGo !`touch pwned` now.")
    app = make_app(project, [[text("Nothing ran.")]], prompt=None, trust=False)
    async with app.run_test(size=SIZE) as pilot:
        await run_command(app, pilot, "/boom")
        assert not (project / "pwned").exists()
        assert "/boom: !`touch pwned` was not run: the project is not trusted" in notices(app)
        assert "[!`touch pwned` was not run" in sent(app)
        records = list(app.live.transcript.records())
        assert any(r.get("kind") == "command_notice" for r in records)  # kept, as shown
        assert app.book.calls == {} or all(
            c.input.get("command") != "touch pwned" for c in app.book.calls.values()
        )


async def test_a_line_with_no_grant_asks_and_a_no_means_not_run(project: Path):
    command(project, "make", "Make it: !`touch made`")
    app = make_app(project, [[text("Not made.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/make", "enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert not (project / "made").exists()
        assert "/make: !`touch made` was not run" in notices(app)


async def test_a_line_outside_the_commands_allowed_tools_is_refused(project: Path):
    command(project, "look", "---\nallowed-tools: Read\n---\n!`touch made`")
    app = make_app(project, [[text("Refused.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await run_command(app, pilot, "/look")
        assert not (project / "made").exists()
        assert "the command /look is active" in notices(app)


async def test_denied_outside_and_odd_files_are_not_included(project: Path):
    (project / "secret.txt").write_text("the secret")
    (project / "link.txt").symlink_to(project.parent / "outside.txt")
    (project / "asked.txt").write_text("ask before reading")
    body = "A @secret.txt B @link.txt C @$1 D @nothing.md E @.claude F @asked.txt"
    command(project, "read", body)
    app = make_app(project, [[text("ok")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/permissions deny Read(./secret.txt)", "enter")
        await pilot.press(*"/permissions ask Read(./asked.txt)", "enter")
        await until(pilot, lambda: notices(app).count("it applies now") == 2)
        await run_command(app, pilot, "/read ../outside.txt")
        said, told = sent(app), notices(app)
        assert "the secret" not in said and "from elsewhere" not in said
        assert "ask before reading" not in said  # nobody is asked here: an ask is a no
        assert "@asked.txt was not included: the ask rule Read(./asked.txt)" in told
        assert "@secret.txt was not included: the deny rule Read(./secret.txt)" in told
        assert "@link.txt was not included: it is outside the project" in told
        assert "@../outside.txt was not included: it is outside the project" in told
        assert "@nothing.md was not included: there is no such file" in told
        assert "@.claude was not included: it is not a regular file" in told
        assert "A @secret.txt B @link.txt C @../outside.txt D @nothing.md E @.claude F" in said


async def test_esc_stops_a_running_line_and_nothing_is_sent(project: Path):
    command(project, "wait", "---\nallowed-tools: Bash(sleep:*)\n---\nWaited: !`sleep 300`")
    app = make_app(project, [[text("Should not be asked.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/wait", "enter")
        await until(
            pilot, lambda: any(c.state == "running" for c in app.book.calls.values()), "running"
        )
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert app.live.loop.messages == []  # the prompt never went
        assert app.live.store.get().permission_context.skill_scopes == ()
        [call] = app.book.calls.values()
        assert call.state != "running"


async def test_the_fold_under_the_typed_line_shows_the_text_really_sent(project: Path):
    from tui.widgets.prompt_block import PromptBlock

    body = "---\nallowed-tools: Bash(echo:*), Read\n---\nNow: !`echo ran-$1`\nSee @notes.md."
    command(project, "standup", body)
    app = make_app(project, [[text("Seen.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await run_command(app, pilot, "/standup friday")
        [block] = app.conversation.query(PromptBlock)
        await until(pilot, lambda: "ran-friday" in block.expansion)
        assert block.text == "/standup friday"
        assert block.expansion.strip() == sent(app).strip()
        lines = len(sent(app).strip().splitlines())  # the folded line counts what was sent
        assert f"sent to the model as {lines} lines of text" in str(block.render())
        await pilot.click(block)
        await until(pilot, lambda: block.expanded)
        shown = str(block.render())
        assert "Now: ran-friday" in shown and "The notes say: ship on Friday." in shown
        assert "!`echo" not in shown
