"""A skill call as the person sees it: asked about by the skill's name, shown in the queue
like any other call, and a call outside its allowed-tools denied with the skill named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until

from tui.screens.permission import PermissionScreen

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


def skill(name: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Skill", "input": {"skill": name}}


async def test_a_skill_call_is_asked_about_by_name_and_narrows_the_turn(tmp_path: Path):
    project = tmp_path / "project"
    folder = project / ".claude" / "skills" / "survey"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: survey\ndescription: Look around without changing anything.\n"
        "allowed-tools: Read Glob Grep\n---\nRead the README first.\n"
    )
    app = make_app(project, [[skill("survey")], [bash("touch made.txt")], [text("Looked.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        screen = app.screen
        assert isinstance(screen, PermissionScreen)
        assert screen.request.message == "Skill would load 'survey', and no rule allows it."
        assert screen.request.suggestions == ("Skill(survey)",)
        await pilot.press("y")
        await until(pilot, lambda: turn_over(app), "the turn to end")
        rows = app.tool_queue.rows_text()
        (loaded,) = [r for r in rows if "Skill" in r]
        assert "survey" in loaded and "denied" not in loaded
        (refused,) = [r for r in rows if "touch made.txt" in r]
        assert "denied" in refused
        line = app.conversation.tool_line(next(iter(app.book.calls.keys() - {loaded_id(app)})))
        assert line is not None and "denied by the running skill" in line.text
        record = next(r for r in app.book.calls.values() if r.tool_name == "Bash")
        assert record.result is not None and "the skill 'survey' is active" in record.result
        assert not (project / "made.txt").exists()


def loaded_id(app: Any) -> str:
    return next(i for i, r in app.book.calls.items() if r.tool_name == "Skill")


def write_skill(project: Path, name: str, front: str, body: str) -> Path:
    folder = project / ".claude" / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\n{front}---\n{body}\n")
    return path


def notices(app: Any) -> str:
    from tui.widgets.conversation import Notice

    return "\n".join(str(notice.render()) for notice in app.conversation.query(Notice))


def hints(app: Any) -> str:
    from tui.widgets.command_hints import CommandHints

    widget = app.main_screen.query_one(CommandHints)
    return str(widget.render()) if widget.display else ""


async def test_a_person_runs_a_skill_as_a_slash_command_with_its_arguments(tmp_path: Path):
    import json

    project = tmp_path / "project"
    write_skill(
        project,
        "deploy",
        "description: Ship to an environment.\nargument-hint: [environment]\n"
        "disable-model-invocation: true\nallowed-tools: Read\n",
        "Deploy to $1, carefully.",
    )
    write_skill(project, "style", "description: House style.\nuser-invocable: false\n", "Tabs.")
    app = make_app(project, [[bash("touch shipped")], [text("Refused.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("/", "d", "e")
        await until(pilot, lambda: "/deploy" in hints(app), "the skill offered")
        assert "/deploy [environment]" in hints(app)
        assert "Ship to an environment. (project skill)" in hints(app)
        await pilot.press("backspace", "backspace", "s", "t")
        assert "/style" not in hints(app)  # user-invocable: false is the model's alone
        await pilot.press("backspace", "backspace", *"deploy staging", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        sent = json.dumps(app.live.loop.messages[0]["content"])
        assert '<skill name=\\"deploy\\">' in sent and "Deploy to staging, carefully." in sent
        assert "limits this turn to its allowed-tools (Read)" in notices(app)
        assert not (project / "shipped").exists()  # outside its allowed-tools: refused
        assert app.live.store.get().permission_context.skill_scopes == ()


async def test_a_command_file_keeps_its_name_over_a_skill_and_the_person_is_told(
    tmp_path: Path,
):
    project = tmp_path / "project"
    skill_file = write_skill(project, "review", "description: The skill.\n", "Skill body.")
    commands = project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("Command body.")
    app = make_app(project, [[text("Done.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "not the skill" in notices(app), "the clash said")
        assert f"in {skill_file}" in notices(app)
        await pilot.press(*"/review", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        assert "Command body." in str(app.live.loop.messages[0]["content"])


async def test_a_long_description_gives_way_to_the_skills_source_at_80_columns(tmp_path: Path):
    from textual.geometry import Region

    from tui.widgets.command_hints import CommandHints

    project = tmp_path / "project"
    long = "Ship the current branch to a named environment after checks, " * 3
    write_skill(project, "deploy", f"description: {long.strip()}\n", "Deploy.")
    app = make_app(project, [[text("Unused.")]], prompt=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("/", "d", "e", "p")
        await until(pilot, lambda: "/deploy" in hints(app), "the skill offered")
        widget = app.main_screen.query_one(CommandHints)
        width, height = widget.size
        on_screen = [s.text for s in widget.render_lines(Region(0, 0, width, height))]
        [row] = [line for line in on_screen if "/deploy" in line]
        assert "…" in row and row.rstrip().endswith("(project skill)")
        assert "Ship the current branch" in row


@pytest.mark.parametrize("read_claude", [True, False])
async def test_the_claude_settings_switch_keeps_the_users_claude_commands_and_skills_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read_claude: bool
):
    # write_skill puts a skill in <folder>/.claude/skills: the Claude folder is that .claude.
    home = tmp_path / "home-of-claude"
    write_skill(home, "gather", "description: Gather notes.\n", "Gather.")
    (home / ".claude" / "commands").mkdir()
    (home / ".claude" / "commands" / "greet.md").write_text("---\ndescription: Say hi\n---\nHi.\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    (tmp_path / "project").mkdir()
    if not read_claude:
        monkeypatch.setenv("PROCTOR_NO_CLAUDE_SETTINGS", "1")
    app = make_app(tmp_path / "project", [[text("Unused.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None and app.prompt_input.commands.complete)
        await pilot.press("/", "g")
        await until(pilot, lambda: app.prompt_input.commands.find("gather") or not read_claude)
        await pilot.press("backspace", "g")  # the hints as they are once the skills joined
        await pilot.pause()
        offered = hints(app)
        assert ("/greet" in offered) is read_claude
        assert ("/gather" in offered) is read_claude
