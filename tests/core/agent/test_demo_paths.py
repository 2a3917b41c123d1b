"""The default tour tells the truth on every path a person can take through it.

Each test runs the whole engine (the live session headless runs use, real tools, real
commands on a scratch copy of the sample project) with the demo model, and a scripted
person who approves, denies, keeps planning or declines; then reads what the agent said.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.agent.headless import HeadlessOptions, run_headless
from core.agent.live import SessionOptions, open_session, prepare_session
from core.agent.loop import AssistantMessage
from core.events import EventRecorder, ToolCompleted
from core.ports import (
    Answers,
    Approve,
    KeepPlanning,
    PermissionAnswer,
    PermissionRequest,
    PlanAnswer,
    PlanApproved,
    PlanRequest,
    QuestionRequest,
    Reject,
)

FALSE_WHEN_ANYTHING_WAS_REFUSED = (
    "All 13 tests pass",
    "all 13 pass",
    "ran for real",
    "you approved the plan",
    "answered the question",
)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    # The demo's scratch copy of the sample project goes under tmp_path too.
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))


@dataclass
class Person:
    """Says yes to every call but those `refuses` picks; answers the plan and the question."""

    refuses: Callable[[PermissionRequest], bool] = lambda request: False
    plan: PlanAnswer = field(default_factory=PlanApproved)
    answers: Answers | None = None
    asked: list[str] = field(default_factory=list)
    """What was put to the person, in order: tool names, "plan", "question"."""

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request.tool_name)
        return Reject() if self.refuses(request) else Approve()

    async def review_plan(self, request: PlanRequest) -> PlanAnswer:
        self.asked.append("plan")
        return self.plan

    async def ask_questions(self, request: QuestionRequest) -> Answers | None:
        self.asked.append("question")
        return self.answers


@dataclass
class Tour:
    said: list[str]
    """Each assistant message's text, in order."""
    completed: list[ToolCompleted]
    workspace: Path
    """The scratch copy of the sample project the tour worked on."""

    @property
    def last(self) -> str:
        return self.said[-1]

    def ran(self, tool_name: str) -> list[ToolCompleted]:
        return [c for c in self.completed if c.tool_name == tool_name and not c.is_error]


async def tour(tmp_path: Path, person: Person) -> Tour:
    events = EventRecorder()
    prepared = prepare_session(
        SessionOptions(cwd=tmp_path, demo=True, scenario="default", demo_speed=0)
    )
    assert prepared.scenario is not None and prepared.scenario.prompt
    live = await open_session(
        prepared, sink=events, trusted=True, permission_port=person, user_port=person
    )
    try:
        ended = await live.send(prepared.scenario.prompt)
    finally:
        await live.close()
    assert ended.stop_reason == "end_turn"
    said = [
        "".join(str(b.get("text", "")) for b in e.content if b.get("type") == "text")
        for e in events.events
        if isinstance(e, AssistantMessage)
    ]
    completed = [e for e in events.events if isinstance(e, ToolCompleted)]
    return Tour(said, completed, prepared.cwd)


def read(path: Path) -> str:
    return path.read_text()


def refuses_tool(name: str) -> Callable[[PermissionRequest], bool]:
    return lambda request: request.tool_name == name


def refuses_command(command: str) -> Callable[[PermissionRequest], bool]:
    return lambda request: request.command == command


EVERYTHING = Answers({"Which fields should `--json` include?": "Everything"})


async def test_approving_everything_ends_with_the_whole_story(tmp_path: Path):
    person = Person(answers=EVERYTHING)
    told = await tour(tmp_path, person)
    assert person.asked[-2:] == ["plan", "question"]
    assert "all 13 pass" in told.last and "you approved the plan" in told.last
    assert "The edits and commands above ran for real" in told.last
    assert told.ran("Edit") and told.ran("mcp__changelog__add_entry")
    assert "Everything above ran for real" not in " ".join(told.said)


async def test_denying_the_edit_says_nothing_changed_and_stops(tmp_path: Path):
    person = Person(refuses=refuses_tool("Edit"))
    told = await tour(tmp_path, person)
    assert "The edit wasn't approved, so nothing changed" in told.last
    assert person.asked == ["Edit"], "nothing else is attempted after the denial"
    assert not told.ran("Edit")
    for claim in FALSE_WHEN_ANYTHING_WAS_REFUSED:
        assert claim not in told.last
    assert "reverse=True" in read(told.workspace / "textstats" / "counts.py"), "it is unchanged"


async def test_refusing_the_tests_says_they_did_not_run(tmp_path: Path):
    person = Person(refuses=refuses_command("python3 -m unittest"))
    told = await tour(tmp_path, person)
    assert "The test run wasn't approved, so the tests have not run" in told.last
    assert person.asked == ["Edit", "Bash"]
    assert told.ran("Edit") and not told.ran("mcp__changelog__add_entry")
    for claim in FALSE_WHEN_ANYTHING_WAS_REFUSED:
        assert claim not in told.last


async def test_keeping_planning_says_the_plan_is_not_approved(tmp_path: Path):
    person = Person(plan=KeepPlanning("Also cover the README."))
    told = await tour(tmp_path, person)
    assert "You chose to keep planning, so the plan is not approved" in told.last
    assert "plan mode stays on" in told.last
    assert person.asked[-1] == "plan", "no question follows a plan that was not approved"
    for claim in FALSE_WHEN_ANYTHING_WAS_REFUSED:
        assert claim not in told.last


async def test_declining_the_question_says_so(tmp_path: Path):
    person = Person(answers=None)
    told = await tour(tmp_path, person)
    assert "You declined the question" in told.last
    assert "answered the question" not in told.last and "ran for real" not in told.last


async def test_headless_with_nobody_to_approve_stops_at_the_edit(tmp_path: Path):
    out = io.StringIO()
    options = HeadlessOptions(
        prompt=None,
        cwd=tmp_path,
        output_format="json",
        demo=True,
        scenario="default",
        demo_speed=0,
    )
    assert await run_headless(options, out) == 0
    (result,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert result["result"].startswith("The edit wasn't approved, so nothing changed")
    for claim in FALSE_WHEN_ANYTHING_WAS_REFUSED:
        assert claim not in result["result"]
