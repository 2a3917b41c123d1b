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
