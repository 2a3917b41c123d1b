"""Reading a tool_result back as ran / denied / failed, on results the real engine wrote."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import ScriptedHooks, ScriptedPort, make_context, make_services
from tools_for_tests import Sleep

from core.access.call_outcome import (
    DENIED_OPENING,
    call_outcome,
    denial_message,
    unmistaken_content,
)
from core.access.context import ToolPermissionContext
from core.access.rules import parse_rule
from core.executor import ToolCall, run_tool_use
from core.executor.calls import cancel_message, cancelled_outcome
from core.hooks import PreToolUseOutcome
from core.ports import Reject
from core.tools.ask_user import QuestionOutcome
from core.tools.ask_user import render as render_questions
from core.tools.exit_plan_mode import PlanOutcome, _render_outcome


async def outcome_of(input: dict, *, context=None, **services) -> str:
    context = context or make_context([Sleep()])
    outcome = await run_tool_use(ToolCall("t", "Sleep", input), make_services(**services), context)
    return call_outcome(outcome.block, "Sleep")


async def test_a_call_that_ran_reads_as_ran():
    assert await outcome_of({"output": "hello"}) == "ran"


async def test_every_kind_of_denial_reads_as_denied():
    asks = {"read_only": False}
    assert await outcome_of(asks, permission_port=ScriptedPort([Reject()])) == "denied"
    with_feedback = ScriptedPort([Reject(feedback="do it another way")])
    assert await outcome_of(asks, permission_port=with_feedback) == "denied"
    assert await outcome_of(asks) == "denied", "nobody is here to approve it (headless)"
    rule = ToolPermissionContext(rules=(parse_rule("Sleep", "deny", source="project"),))
    assert await outcome_of({}, context=make_context([Sleep()], permission_context=rule)) == (
        "denied"
    )
    hook = ScriptedHooks(pre=PreToolUseOutcome(permission="deny", reason="not on duty"))
    assert await outcome_of({}, hooks=hook) == "denied"
    plan = make_context([Sleep()], permission_context=ToolPermissionContext(mode="plan"))
    assert await outcome_of(asks, context=plan) == "denied"


async def test_failures_read_as_failed_even_when_they_mention_permissions():
    assert await outcome_of({"fail": True, "output": "Permission denied: /etc"}) == "failed"
    assert await outcome_of({"raise_error": True}) == "failed"
    assert await outcome_of({"ms": "soon"}) == "failed", "input that fails its schema"
    interrupted = cancel_message("user_interrupted")
    cancelled = cancelled_outcome(ToolCall("t", "Sleep", {}), "user_interrupted", interrupted)
    assert call_outcome(cancelled.block) == "failed"
    assert call_outcome(None) == "failed", "a call with no result did not visibly run"


async def test_a_tool_error_that_opens_like_a_denial_keeps_its_words_and_names_the_tool():
    context = make_context([Sleep()])
    call = ToolCall("t", "Sleep", {"fail": True, "output": "Permission denied: /etc"})
    outcome = await run_tool_use(call, make_services(), context)
    assert outcome.block["content"] == (
        "<tool_use_error>Sleep reported: Permission denied: /etc</tool_use_error>"
    )
    from_a_server = result([{"type": "text", "text": "Permission denied: no token"}], is_error=True)
    from_a_server["content"] = unmistaken_content(from_a_server, "mcp__fx__echo")
    assert call_outcome(from_a_server, "mcp__fx__echo") == "failed"
    assert "Permission denied: no token" in str(from_a_server["content"])
    assert unmistaken_content(result("Permission denied: fine, it ran"), "Sleep") is None


def test_the_denial_opening_is_written_once():
    assert denial_message("Rule says no.") == f"{DENIED_OPENING}Rule says no."
    assert denial_message(denial_message("Rule says no.")) == f"{DENIED_OPENING}Rule says no."


def result(content, *, is_error: bool = False) -> dict:
    block = {"type": "tool_result", "tool_use_id": "t", "content": content}
    return {**block, "is_error": True} if is_error else block


def test_the_persons_answer_to_a_plan_counts():
    kept = PlanOutcome(False, "the plan", Path("/p.md"), feedback="Also the CLI.")
    approved = PlanOutcome(True, "the plan", Path("/p.md"), mode="default")
    assert call_outcome(result(_render_outcome(kept)), "ExitPlanMode") == "denied"
    assert call_outcome(result(_render_outcome(approved)), "ExitPlanMode") == "ran"
    nobody = "<tool_use_error>Nobody can review the plan in this session.</tool_use_error>"
    assert call_outcome(result(nobody, is_error=True), "ExitPlanMode") == "failed"


def test_the_persons_answer_to_questions_counts():
    declined = render_questions(QuestionOutcome("declined", ()))
    unasked = render_questions(QuestionOutcome("nobody", ()))
    answered = render_questions(QuestionOutcome("answered", (), (("Which?", "Everything"),)))
    assert call_outcome(result(declined), "AskUserQuestion") == "denied"  # not an error
    # as earlier sessions sent it, as an error
    assert call_outcome(result(declined, is_error=True), "AskUserQuestion") == "denied"
    assert call_outcome(result(unasked), "AskUserQuestion") == "failed"
    assert call_outcome(result(answered), "AskUserQuestion") == "ran"
    as_blocks = [{"type": "text", "text": answered}]
    assert call_outcome(result(as_blocks), "AskUserQuestion") == "ran"
