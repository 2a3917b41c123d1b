"""TodoWrite, EnterPlanMode / ExitPlanMode and AskUserQuestion, through the real lifecycle.

Every call goes through `run_tool_use` with a real app state store, the real decision chain
and a scripted person behind the `UserPort`, so what is checked is what a session would do:
the mode the next decision sees, the rules it holds, the events the front end gets.
"""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import HANG_BOUND_S, ScriptedPort, outcomes_of

from core.abort import AbortController
from core.access.context import PermissionMode, ToolPermissionContext
from core.app_state import AppState, AppStateStore
from core.events import EventRecorder, ModeChanged, TodosChanged
from core.executor import (
    ExecutorServices,
    StreamingToolExecutor,
    ToolCall,
    ToolCallOutcome,
    run_tool_use,
)
from core.ports import (
    AllowedPrompt,
    Answers,
    KeepPlanning,
    PlanAnswer,
    PlanApproved,
    PlanRequest,
    QuestionRequest,
)
from core.tool import Tool, ToolContext, ToolOptions, ToolPool
from core.tools.ask_user import AskUserQuestion
from core.tools.edit import Edit
from core.tools.exit_plan_mode import ExitPlanMode, prompt_rule
from core.tools.plan_mode import EnterPlanMode
from core.tools.read import Read
from core.tools.todo_write import Todo, TodoWrite
from core.tools.write import Write


@dataclass
class ScriptedUser:
    """The person behind the UserPort: answers from lists, records what was put to them."""

    plan_answers: list[PlanAnswer] = field(default_factory=list)
    question_answers: list[Answers | None] = field(default_factory=list)
    plans: list[PlanRequest] = field(default_factory=list)
    questions: list[QuestionRequest] = field(default_factory=list)

    async def ask_questions(self, request: QuestionRequest) -> Answers | None:
        self.questions.append(request)
        return self.question_answers.pop(0)

    async def review_plan(self, request: PlanRequest) -> PlanAnswer:
        self.plans.append(request)
        return self.plan_answers.pop(0)


@dataclass
class Session:
    context: ToolContext
    events: EventRecorder
    port: ScriptedPort
    project: Path
    session_dir: Path
    calls: int = 0

    @property
    def permissions(self) -> ToolPermissionContext:
        return self.context.permission_context

    async def run(self, name: str, **input: Any) -> ToolCallOutcome:
        self.calls += 1
        services = ExecutorServices(permission_port=self.port, sink=self.events)
        call = ToolCall(f"toolu_{self.calls:03d}", name, input)
        # The executor gives every call its own id; so does this helper.
        context = self.context.for_call(call.id, self.context.abort)
        return await run_tool_use(call, services, context)

    def of_kind(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events.events if isinstance(e, kind)]


def make_session(
    tmp_path: Path,
    user: ScriptedUser | None = None,
    mode: PermissionMode = "default",
    **permissions: Any,
) -> Session:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    session_dir = tmp_path / "session"
    session_dir.mkdir(exist_ok=True)
    events = EventRecorder()
    store = AppStateStore(
        AppState(permission_context=ToolPermissionContext(mode=mode, **permissions))
    )
    tools: list[Tool[Any, Any]] = [TodoWrite(), EnterPlanMode(), ExitPlanMode(), AskUserQuestion()]
    tools += [Read(), Write(), Edit()]
    options = ToolOptions(
        tools=ToolPool(tools), session_dir=session_dir, user_port=user, events=events
    )
    context = ToolContext(cwd=project, app_state=store, options=options)
    # A port that approves anything it is asked: the tests check nobody had to be asked.
    return Session(context, events, ScriptedPort(), project, session_dir)


def text(outcome: ToolCallOutcome) -> str:
    content = outcome.block["content"]
    assert isinstance(content, str)
    return content


@pytest.fixture
def npm_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake `npm` first on PATH, so "npm test" names a program that exists."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\nexit 0\n")
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def todo(content: str, status: str, active: str | None = None) -> dict[str, str]:
    return {"content": content, "status": status, "activeForm": active or content + "ing"}


# -- TodoWrite --------------------------------------------------------------------------------


async def test_todo_write_replaces_the_list_and_tells_the_ui(tmp_path: Path) -> None:
    s = make_session(tmp_path)
    first = await s.run("TodoWrite", todos=[todo("Read the code", "in_progress", "Reading")])
    assert not first.is_error, text(first)
    todos = [
        todo("Read the code", "completed", "Reading the code"),
        todo("Run the tests", "in_progress", "Running the tests"),
        todo("Fix the bug", "pending", "Fixing the bug"),
    ]
    outcome = await s.run("TodoWrite", todos=todos)
    assert not outcome.is_error, text(outcome)
    expected = (
        Todo("Read the code", "completed", "Reading the code"),
        Todo("Run the tests", "in_progress", "Running the tests"),
        Todo("Fix the bug", "pending", "Fixing the bug"),
    )
    assert s.context.get_app_state().todos == expected  # replaced whole, not appended
    assert "Running the tests" in text(outcome)
    assert "3 tasks (1 completed, 1 in progress, 1 pending)" in text(outcome)
    changed = s.of_kind(TodosChanged)
    assert len(changed) == 2 and changed[-1].todos == expected and changed[-1].agent_id is None
    assert s.port.requests == []  # read-only: nobody had to approve it


async def test_todo_write_refuses_two_tasks_in_progress_and_keeps_the_list(
    tmp_path: Path,
) -> None:
    s = make_session(tmp_path)
    await s.run("TodoWrite", todos=[todo("Plan", "pending")])
    before = s.context.get_app_state().todos
    outcome = await s.run(
        "TodoWrite", todos=[todo("Build", "in_progress"), todo("Test", "in_progress")]
    )
    assert outcome.is_error and outcome.failed_stage == "validate"
    assert "2 tasks are in_progress" in text(outcome) and "at most one" in text(outcome)
    assert s.context.get_app_state().todos == before
    assert len(s.of_kind(TodosChanged)) == 1


async def test_todo_write_input_errors(tmp_path: Path) -> None:
    s = make_session(tmp_path)
    missing = await s.run("TodoWrite", todos=[{"content": "Build", "status": "pending"}])
    assert missing.is_error and "activeForm" in text(missing)
    blank = await s.run("TodoWrite", todos=[todo("   ", "pending", "Doing")])
    assert blank.is_error and "Task 1 has no content" in text(blank)
    status = await s.run("TodoWrite", todos=[todo("Build", "doing")])
    assert status.is_error and "todos.0.status" in text(status)
    assert s.context.get_app_state().todos == ()


async def test_todo_write_empties_the_list_and_runs_in_plan_mode(tmp_path: Path) -> None:
    s = make_session(tmp_path, mode="plan")
    await s.run("TodoWrite", todos=[todo("Plan", "in_progress")])
    outcome = await s.run("TodoWrite", todos=[])
    assert not outcome.is_error and "empty" in text(outcome)
    assert s.context.get_app_state().todos == ()


# -- plan mode ----------------------------------------------------------------------------------


async def test_plan_mode_round_trip_with_approval(tmp_path: Path, npm_on_path: None) -> None:
    user = ScriptedUser(plan_answers=[PlanApproved("acceptEdits")])
    s = make_session(tmp_path, user, mode="acceptEdits")
    plan_file = s.session_dir / "plan.md"

    entered = await s.run("EnterPlanMode")
    assert not entered.is_error, text(entered)
    assert s.permissions.mode == "plan" and s.permissions.pre_plan_mode == "acceptEdits"
    assert s.permissions.plan_file == plan_file
    assert str(plan_file) in text(entered)
    assert s.of_kind(ModeChanged)[-1].mode == "plan"
    assert s.of_kind(ModeChanged)[-1].previous == "acceptEdits"

    # Plan mode: changes to the project are refused, without asking anyone...
    source = s.project / "app.py"
    refused = await s.run("Write", file_path=str(source), content="x = 1\n")
    assert refused.is_error and "Plan mode is on" in text(refused)
    assert "ExitPlanMode" in text(refused) and not source.exists()
    # ...but the plan file itself is writable.
    plan = "# Plan\n1. Add x to app.py\n2. Run npm test\n"
    wrote = await s.run("Write", file_path=str(plan_file), content=plan)
    assert not wrote.is_error, text(wrote)
    assert s.port.requests == []

    prompts = [{"tool": "Bash", "prompt": "npm test"}, {"tool": "Bash", "prompt": "run the tests"}]
    outcome = await s.run("ExitPlanMode", allowedPrompts=prompts)
    assert not outcome.is_error, text(outcome)
    (request,) = user.plans
    assert request.plan == plan and request.plan_path == plan_file
    assert request.allowed_prompts == (
        AllowedPrompt("Bash", "npm test"),
        AllowedPrompt("Bash", "run the tests"),
    )
    assert s.permissions.mode == "acceptEdits" and s.permissions.pre_plan_mode is None
    allowed = [str(rule) for rule in s.permissions.rules_with("allow")]
    assert allowed == ["Bash(npm test:*)"]
    assert s.permissions.rules[0].source == "session"
    body = text(outcome)
    assert "approved your plan; continue in accept edits mode" in body
    assert "Bash(npm test:*)" in body and "'run the tests'" in body and plan in body
    changed = s.of_kind(ModeChanged)[-1]
    assert changed.mode == "acceptEdits" and changed.previous == "plan"

    # Out of plan mode, the project is writable again.
    wrote = await s.run("Write", file_path=str(source), content="x = 1\n")
    assert not wrote.is_error, text(wrote)


async def test_keep_planning_stays_in_plan_mode_and_passes_the_feedback(tmp_path: Path) -> None:
    user = ScriptedUser(plan_answers=[KeepPlanning("Also cover the CLI.")])
    s = make_session(tmp_path, user)
    await s.run("EnterPlanMode")
    (s.session_dir / "plan.md").write_text("# Plan\nChange the API.\n")
    outcome = await s.run("ExitPlanMode")
    assert not outcome.is_error
    assert "keep planning" in text(outcome) and "Also cover the CLI." in text(outcome)
    assert outcome.outcome == "denied"  # the person said no to the plan: not a failure
    assert s.permissions.mode == "plan" and s.permissions.pre_plan_mode == "default"
    assert s.permissions.rules == ()
    assert [e.mode for e in s.of_kind(ModeChanged)] == ["plan"]


async def test_exit_plan_mode_refusals(tmp_path: Path) -> None:
    s = make_session(tmp_path, ScriptedUser())
    outside = await s.run("ExitPlanMode")
    assert outside.is_error and "not in plan mode" in text(outside)

    await s.run("EnterPlanMode")
    plan_file = s.session_dir / "plan.md"
    no_plan = await s.run("ExitPlanMode")
    assert no_plan.is_error and f"Write your plan to {plan_file}" in text(no_plan)
    plan_file.parent.mkdir(parents=True, exist_ok=True)
    plan_file.write_text("  \n")
    empty = await s.run("ExitPlanMode")
    assert empty.is_error and "is empty" in text(empty)
    extra = await s.run("ExitPlanMode", pushToRemote=True)
    assert extra.is_error and "pushToRemote" in text(extra)
    assert s.permissions.mode == "plan"


async def test_nobody_can_approve_a_plan_in_a_headless_session(tmp_path: Path) -> None:
    s = make_session(tmp_path, user=None)
    await s.run("EnterPlanMode")
    (s.session_dir / "plan.md").write_text("# Plan\n")
    outcome = await s.run("ExitPlanMode")
    assert outcome.is_error and "Nobody can review the plan" in text(outcome)
    assert s.permissions.mode == "plan"


async def test_approval_falls_back_when_the_chosen_mode_is_unavailable(tmp_path: Path) -> None:
    user = ScriptedUser(plan_answers=[PlanApproved("bypassPermissions"), PlanApproved("plan")])
    s = make_session(tmp_path, user, mode="dontAsk")
    await s.run("EnterPlanMode")
    (s.session_dir / "plan.md").write_text("# Plan\n")
    outcome = await s.run("ExitPlanMode")
    assert not outcome.is_error
    assert s.permissions.mode == "default" and "not available" in text(outcome)

    await s.run("EnterPlanMode")
    outcome = await s.run("ExitPlanMode")
    assert s.permissions.mode == "default" and "continue in default mode" in text(outcome)


async def test_entering_plan_mode_twice_is_not_an_error(tmp_path: Path) -> None:
    s = make_session(tmp_path, mode="plan")  # the user pressed the mode key
    outcome = await s.run("EnterPlanMode")
    assert not outcome.is_error and "already in plan mode" in text(outcome)
    assert s.permissions.plan_file == s.session_dir / "plan.md"
    assert s.of_kind(ModeChanged) == []


async def test_a_sub_agent_cannot_enter_plan_mode(tmp_path: Path) -> None:
    s = make_session(tmp_path)
    s.context = s.context.replace(agent_id="toolu_task")
    outcome = await s.run("EnterPlanMode")
    assert outcome.is_error and "sub-agent" in text(outcome)
    assert s.permissions.mode == "default"


async def test_esc_during_the_review_cancels_it_and_plan_mode_stays(tmp_path: Path) -> None:
    reviewing = asyncio.Event()

    class SlowUser(ScriptedUser):
        async def review_plan(self, request: PlanRequest) -> PlanAnswer:
            reviewing.set()
            await asyncio.Event().wait()  # a person still reading when Esc comes
            return PlanApproved("acceptEdits")

    s = make_session(tmp_path, SlowUser())
    await s.run("EnterPlanMode")
    (s.session_dir / "plan.md").write_text("# Plan\n")
    turn = AbortController()
    executor = StreamingToolExecutor(ExecutorServices(sink=s.events), s.context, abort=turn.signal)
    executor.add_tool(ToolCall("toolu_exit", "ExitPlanMode", {}))
    await asyncio.wait_for(reviewing.wait(), HANG_BOUND_S)
    turn.abort("interrupt")
    (result,) = outcomes_of([u async for u in executor.get_remaining_results()])
    assert result.cancelled == "user_interrupted"
    assert s.permissions.mode == "plan"


@pytest.mark.parametrize(
    ("prompt", "rule"),
    [
        ("npm test", "Bash(npm test:*)"),
        ("`npm run build`", "Bash(npm run build:*)"),
        ("npm test:*", "Bash(npm test:*)"),
        ("npm", None),  # every script and package, publishing included
        ("git", None),
        ("npx", None),
        ("python3 -c", None),
        ("git -c", None),
        ("rm -rf", None),
        ("git log", "Bash(git log:*)"),
        ("run the tests", None),
        ("install all dependencies", None),
        ("npm test && rm -rf /", None),
        ("npm test $(whoami)", None),
        ("bash", None),
        ("sudo npm test", None),
        ("no-such-program-here build", None),
        ("", None),
    ],
)
def test_allowed_prompts_become_rules_only_as_literal_prefixes(
    prompt: str, rule: str | None, tmp_path: Path, npm_on_path: None
) -> None:
    made = prompt_rule(AllowedPrompt("Bash", prompt), tmp_path)
    assert (str(made) if made else None) == rule


def test_a_script_in_the_project_counts_as_a_program(tmp_path: Path) -> None:
    (tmp_path / "gradlew").write_text("#!/bin/sh\n")
    made = prompt_rule(AllowedPrompt("Bash", "./gradlew test"), tmp_path)
    assert str(made) == "Bash(./gradlew test:*)"
    assert prompt_rule(AllowedPrompt("Bash", "./missing test"), tmp_path) is None


# -- AskUserQuestion ----------------------------------------------------------------------------


def question(text: str, header: str = "Choice", n_options: int = 2, **more: Any) -> dict[str, Any]:
    options = [{"label": f"Option {i}", "description": f"Means {i}"} for i in range(n_options)]
    return {"question": text, "header": header, "options": options, **more}


async def test_questions_are_answered_through_the_port(tmp_path: Path) -> None:
    answers = Answers({"Which database?": "Option 1", "Which features?": "Option 0, Option 1"})
    user = ScriptedUser(question_answers=[answers])
    s = make_session(tmp_path, user, mode="plan")
    outcome = await s.run(
        "AskUserQuestion",
        questions=[
            question("Which database?", "Database"),
            question("Which features?", "Features", 3, multiSelect=True),
        ],
    )
    assert not outcome.is_error, text(outcome)
    (request,) = user.questions
    assert request.tool_use_id == "toolu_001"
    first, second = request.questions
    assert first.header == "Database" and not first.multi_select
    assert [o.label for o in second.options] == ["Option 0", "Option 1", "Option 2"]
    assert second.multi_select and second.options[2].description == "Means 2"
    assert '"Which database?" → Option 1' in text(outcome)
    assert '"Which features?" → Option 0, Option 1' in text(outcome)
    assert s.port.requests == []  # allowed in plan mode without asking for permission


async def test_with_nobody_to_answer_the_model_is_told_to_use_its_judgement(
    tmp_path: Path,
) -> None:
    s = make_session(tmp_path, user=None)
    outcome = await s.run("AskUserQuestion", questions=[question("Tabs or spaces?")])
    assert not outcome.is_error
    assert "Nobody can answer" in text(outcome) and "best judgement" in text(outcome)
    assert "'Tabs or spaces?'" in text(outcome)
    # A session that must not prompt counts as nobody, even with a port.
    user = ScriptedUser()
    quiet = make_session(tmp_path, user, avoid_prompts=True)
    outcome = await quiet.run("AskUserQuestion", questions=[question("Tabs or spaces?")])
    assert not outcome.is_error and "Nobody can answer" in text(outcome)
    assert user.questions == []


async def test_a_dismissed_question_is_reported_as_declined_not_failed(tmp_path: Path) -> None:
    s = make_session(tmp_path, ScriptedUser(question_answers=[None]))
    outcome = await s.run("AskUserQuestion", questions=[question("Tabs or spaces?")])
    # The person chose not to answer: their "no", not a failure, and the model is told to wait.
    assert not outcome.is_error and outcome.failed_stage is None
    assert outcome.outcome == "denied" and outcome.denied_by is not None
    assert outcome.denied_by.kind == "user"
    assert "declined to answer" in text(outcome) and "Do not assume answers" in text(outcome)
    assert outcome.data.outcome_words == "declined"


@pytest.mark.parametrize(
    ("questions", "expected"),
    [
        ([], "questions"),
        ([question(f"Question {i}?") for i in range(5)], "questions"),
        ([question("Which?", n_options=1)], "questions.0.options"),
        ([question("Which?", n_options=5)], "questions.0.options"),
        ([question("Which?", header="A very long header")], "questions.0.header"),
        ([question("Which?"), question("Which?")], "repeats an earlier question"),
    ],
)
async def test_bad_questions_are_refused_before_anyone_is_asked(
    tmp_path: Path, questions: list[dict[str, Any]], expected: str
) -> None:
    user = ScriptedUser()
    s = make_session(tmp_path, user)
    outcome = await s.run("AskUserQuestion", questions=questions)
    assert outcome.is_error and expected in text(outcome)
    assert user.questions == []


async def test_options_with_the_same_label_are_refused(tmp_path: Path) -> None:
    s = make_session(tmp_path, ScriptedUser())
    same = question("Which?")
    same["options"] = [{"label": "Yes"}, {"label": "yes"}]
    outcome = await s.run("AskUserQuestion", questions=[same])
    assert outcome.is_error and "same label" in text(outcome)


def test_the_plan_call_is_summarised_in_words_not_json():
    from core.tools.exit_plan_mode import ExitPlanMode

    tool = ExitPlanMode()
    asking = tool.parse_input({"allowedPrompts": [{"tool": "Bash", "prompt": "npm test"}]})
    assert tool.summarize_input(asking) == "the plan, asking to run: npm test"
    assert tool.summarize_input(tool.parse_input({})) == "the plan"
