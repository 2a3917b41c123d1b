"""The agent's questions in the real app: answered with enter, or declined with esc.

The real engine runs AskUserQuestion from a scripted model; the person answers through the
dialog as they would. Declining is the person's "no", not a failure: the call's line says
"declined", the model is told the person declined, and nothing is marked as an error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until

from tui.screens.question import QuestionScreen
from tui.widgets.queue_layout import call_note
from tui.widgets.tool_run import ToolRun

QUESTION = "Which fields should `--json` include?"
ASK = {
    "type": "tool_use",
    "name": "AskUserQuestion",
    "input": {
        "questions": [
            {
                "question": QUESTION,
                "header": "JSON fields",
                "options": [
                    {"label": "Everything", "description": "Counts and scores."},
                    {"label": "Counts only", "description": "No scores."},
                ],
            }
        ]
    },
}


pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def call_lines(app: Any) -> list[str]:
    return [line for run in app.conversation.query(ToolRun) for line in run.rows_text()]


def last_tool_result(app: Any) -> dict[str, Any]:
    sent = [m for m in app.live.loop.messages if m["role"] == "user"]
    blocks = [b for b in sent[-1]["content"] if b.get("type") == "tool_result"]
    assert len(blocks) == 1, sent[-1]
    return blocks[0]


async def test_esc_declines_and_the_line_says_declined_not_failed(project: Path):
    app = make_app(project, [[ASK], [text("I'll wait for you.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app), "the turn to end")
        (record,) = app.book.calls.values()
        assert record.state == "denied"  # the person's "no", counted with the other denials
        await until(pilot, lambda: any("declined" in line for line in call_lines(app)))
        (line,) = [line for line in call_lines(app) if "AskUserQuestion" in line]
        assert "failed" not in line and "✗" not in line and "denied" not in line
        (queued,) = [row for row in app.tool_queue.rows_text() if "AskUserQuestion" in row]
        assert "✗" not in queued and "fail" not in queued
        assert call_note(record).startswith("declined")  # the queue's words (cut to fit there)
        result = last_tool_result(app)
        assert not result.get("is_error")
        assert "declined to answer" in json.dumps(result["content"])


async def test_enter_answers_a_single_question(project: Path):
    app = make_app(project, [[ASK], [text("Counts only, then.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, QuestionScreen), "the question")
        await pilot.press("down", "enter")
        await until(pilot, lambda: turn_over(app), "the turn to end")
        (record,) = app.book.calls.values()
        assert record.state == "done"
        result = last_tool_result(app)
        assert f'"{QUESTION}" → Counts only' in str(result["content"])
        (line,) = [line for line in call_lines(app) if "AskUserQuestion" in line]
        assert "declined" not in line
