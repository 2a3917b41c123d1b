"""A sub-agent's find of a subdirectory's instructions is noted under its Task call in the
app, live and when the session is resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_helpers import SIZE, make_app, text, turn_over, until

from core.trust import trust
from tui.widgets.tool_run import ToolRun

JOINED = "instructions from lib/AGENTS.md now apply (found reading lib/gen.py)"


def rows(app: Any) -> list[str]:
    return [
        run.row_text(y, 200).plain
        for run in app.conversation.query(ToolRun)
        for y in range(run.virtual_size.height)
    ]


async def test_the_sub_agents_instructions_note_sits_under_its_task(tmp_path: Path):
    project = tmp_path / "project"
    (project / "lib").mkdir(parents=True)
    (project / "lib" / "AGENTS.md").write_text("lib/ is generated: never edit it by hand.\n")
    (project / "lib" / "gen.py").write_text("x = 1\n")
    trust(project)  # a subdirectory's instructions reach an agent only in a trusted project
    read = {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/lib/gen.py"}}
    task = {
        "type": "tool_use",
        "name": "Task",
        "input": {"description": "look", "prompt": "Read lib.", "subagent_type": "Explore"},
        "agent_turns": [[read], [text("lib is generated.")]],
    }
    app = make_app(project, [[task], [text("done")]], allow=["Read", "Task"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        await until(pilot, lambda: any(JOINED in row for row in rows(app)), "the note drawn")
        shown = rows(app)
        task_row = next(i for i, row in enumerate(shown) if "Task" in row)
        assert shown[task_row + 1].strip() == f"info: {JOINED}"
