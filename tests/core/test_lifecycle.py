"""One call through the nine stages: every failure is exactly one error result that says why."""

from __future__ import annotations

from pathlib import Path

from engine_helpers import ScriptedHooks, ScriptedPort, make_context, make_services, text_of
from tools_for_tests import Sleep, Small

from core.access.context import ToolPermissionContext
from core.access.decision import Ask, DecidedBy
from core.access.rules import parse_rule
from core.events import EventRecorder, PermissionAnswered, PermissionAsked, ToolNotice
from core.executor import ToolCall, run_tool_use
from core.hooks import PostToolUseOutcome, PreToolUseOutcome
from core.ports import Approve, Reject
from core.tool import ToolResult, ValidationResult


async def run(call, tools=None, *, context=None, **services):
    tools = tools if tools is not None else [Sleep()]
    context = context or make_context(tools)
    return await run_tool_use(call, make_services(**services), context)


async def test_a_successful_call_returns_the_mapped_result():
    outcome = await run(ToolCall("t1", "Sleep", {"output": "hello"}))
    assert outcome.block == {"type": "tool_result", "tool_use_id": "t1", "content": "hello"}
    assert not outcome.is_error and outcome.failed_stage is None


async def test_lookup_finds_aliases_and_names_the_unknown_tool():
    assert text_of(await run(ToolCall("t", "Nap", {"output": "via alias"}))) == "via alias"
    outcome = await run(ToolCall("t", "Teleport", {}))
    assert outcome.failed_stage == "lookup" and outcome.is_error
    assert "No such tool available: Teleport" in text_of(outcome)
    assert "Sleep" in text_of(outcome)


async def test_schema_errors_name_each_bad_parameter():
    outcome = await run(ToolCall("t", "Sleep", {"ms": "soon", "colour": "red"}))
    message = text_of(outcome)
    assert outcome.failed_stage == "schema"
    assert "`ms`" in message and "'soon'" in message
    assert "unexpected parameter `colour`" in message


async def test_input_that_is_not_an_object_is_a_schema_error():
    outcome = await run(ToolCall("t", "Sleep", '{"ms": 1'))
    assert outcome.failed_stage == "schema"
    assert "JSON object" in text_of(outcome)


async def test_a_deferred_tool_called_before_loading_gets_a_toolsearch_hint():
    class Later(Sleep):
        name = "Later"
        should_defer = True

    outcome = await run(ToolCall("t", "Later", {"ms": []}), [Later()])
    assert "ToolSearch" in text_of(outcome) and "select:Later" in text_of(outcome)
    loaded = make_context([Later()], discovered=frozenset({"Later"}))
    outcome = await run(ToolCall("t", "Later", {"ms": []}), context=loaded)
    assert "ToolSearch" not in text_of(outcome)


async def test_validate_input_failure_and_crash_are_results():
    class Picky(Sleep):
        name = "Picky"

        async def validate_input(self, input, context):
            if input.output == "crash":
                raise OSError("disk on fire")
            return ValidationResult.failed("The file does not exist. Create it with Write first.")

    outcome = await run(ToolCall("t", "Picky", {}), [Picky()])
    assert outcome.failed_stage == "validate"
    assert "Create it with Write first" in text_of(outcome)
    outcome = await run(ToolCall("t", "Picky", {"output": "crash"}), [Picky()])
    assert outcome.failed_stage == "validate" and "disk on fire" in text_of(outcome)


async def test_pre_hook_deny_blocks_with_its_reason_and_the_tool_never_runs():
    tool = Sleep()
    hooks = ScriptedHooks(pre=PreToolUseOutcome(permission="deny", reason="no sleeping on duty"))
    outcome = await run(ToolCall("t", "Sleep", {}), [tool], hooks=hooks)
    assert outcome.failed_stage == "permission"
    assert "no sleeping on duty" in text_of(outcome)
    assert tool.tracker.entered == []


async def test_a_hook_allow_never_beats_a_deny_rule():
    rules = ToolPermissionContext(rules=(parse_rule("Sleep", "deny", source="project"),))
    hooks = ScriptedHooks(pre=PreToolUseOutcome(permission="allow"))
    context = make_context([Sleep()], permission_context=rules)
    outcome = await run(ToolCall("t", "Sleep", {}), context=context, hooks=hooks)
    assert outcome.failed_stage == "permission"
    assert "deny rule Sleep" in text_of(outcome)


async def test_updated_input_from_a_hook_is_validated_and_used():
    hooks = ScriptedHooks(pre=PreToolUseOutcome(updated_input={"output": "rewritten"}))
    assert text_of(await run(ToolCall("t", "Sleep", {}), hooks=hooks)) == "rewritten"
    hooks = ScriptedHooks(pre=PreToolUseOutcome(updated_input={"ms": -5}))
    outcome = await run(ToolCall("t", "Sleep", {}), hooks=hooks)
    assert outcome.failed_stage == "pre_hook" and "not valid" in text_of(outcome)


async def test_a_crashing_guard_hook_is_reported_and_the_call_asks():
    recorder = EventRecorder()
    hooks = ScriptedHooks(raise_in="pre")
    port = ScriptedPort([Approve()])
    call = ToolCall("t", "Sleep", {"output": "ok"})
    outcome = await run(call, hooks=hooks, sink=recorder, permission_port=port)
    assert text_of(outcome) == "ok"  # asked, and approved
    (request,) = port.requests
    assert "hook exploded" in request.message
    notices = [e for e in recorder.events if isinstance(e, ToolNotice)]
    assert notices and "hook exploded" in notices[0].text
    unattended = await run(call, hooks=ScriptedHooks(raise_in="pre"))
    assert unattended.is_error and "nobody is here" in text_of(unattended)


async def test_ask_goes_to_the_port_and_approval_runs_the_call():
    port = ScriptedPort([Approve()])
    recorder = EventRecorder()
    outcome = await run(
        ToolCall("t", "Sleep", {"read_only": False, "output": "written"}),
        permission_port=port,
        sink=recorder,
    )
    assert text_of(outcome) == "written"
    (request,) = port.requests
    assert request.tool_name == "Sleep" and request.input == {
        "read_only": False,
        "output": "written",
    }
    kinds = [type(e) for e in recorder.events]
    assert kinds == [PermissionAsked, PermissionAnswered]


async def test_rejection_tells_the_model_what_the_user_wants_instead():
    port = ScriptedPort([Reject(feedback="use the staging database")])
    outcome = await run(ToolCall("t", "Sleep", {"read_only": False}), permission_port=port)
    assert outcome.failed_stage == "permission" and outcome.is_error
    assert "use the staging database" in text_of(outcome)


async def test_approval_with_edited_input_runs_the_edited_input():
    port = ScriptedPort([Approve(updated_input={"read_only": False, "output": "edited"})])
    outcome = await run(ToolCall("t", "Sleep", {"read_only": False}), permission_port=port)
    assert text_of(outcome) == "edited"


async def test_session_approval_is_remembered_for_the_next_call():
    port = ScriptedPort([Approve(scope="session", rule="Sleep")])
    context = make_context([Sleep()])
    await run(ToolCall("t1", "Sleep", {"read_only": False}), context=context, permission_port=port)
    await run(ToolCall("t2", "Sleep", {"read_only": False}), context=context, permission_port=port)
    assert len(port.requests) == 1


async def test_a_crashing_port_counts_as_no():
    class BrokenPort:
        async def request_permission(self, request):
            raise RuntimeError("screen gone")

    outcome = await run(ToolCall("t", "Sleep", {"read_only": False}), permission_port=BrokenPort())
    assert outcome.failed_stage == "permission"


async def test_with_nobody_to_ask_an_ask_becomes_a_deny_that_says_so():
    outcome = await run(ToolCall("t", "Sleep", {"read_only": False}))
    assert outcome.failed_stage == "permission"
    assert "nobody is here to give it" in text_of(outcome)


async def test_plan_mode_refuses_changes_with_a_message_about_the_plan():
    context = make_context([Sleep()], permission_context=ToolPermissionContext(mode="plan"))
    outcome = await run(ToolCall("t", "Sleep", {"read_only": False}), context=context)
    assert "Plan mode" in text_of(outcome) and "ExitPlanMode" in text_of(outcome)
    assert text_of(await run(ToolCall("t", "Sleep", {}), context=context)) == "done"


async def test_a_tool_that_raises_gives_an_error_result_and_runs_failure_hooks():
    hooks = ScriptedHooks(post=PostToolUseOutcome(additional_context=("check the logs",)))
    outcome = await run(ToolCall("t", "Sleep", {"raise_error": True}), hooks=hooks)
    assert outcome.failed_stage == "call" and "the tool broke" in text_of(outcome)
    assert hooks.seen[-1][0] == "failure" and "the tool broke" in hooks.seen[-1][1]
    assert outcome.additional_context == ("check the logs",)


async def test_a_tool_reported_error_is_an_error_result_that_runs_failure_hooks():
    hooks = ScriptedHooks()
    outcome = await run(ToolCall("t", "Sleep", {"fail": True, "output": "exit 2"}), hooks=hooks)
    assert outcome.is_error and outcome.failed_stage == "call"
    assert outcome.block["content"] == "<tool_use_error>exit 2</tool_use_error>"
    assert hooks.seen[-1] == ("failure", "exit 2")  # the hook gets the message itself


async def test_a_mapping_that_raises_is_a_result():
    class BadMap(Sleep):
        name = "BadMap"

        async def call(self, input, context, progress):
            return ToolResult({"rows": 1})

        def render(self, output):
            raise KeyError("content")

    outcome = await run(ToolCall("t", "BadMap", {}), [BadMap()])
    assert outcome.failed_stage == "map" and "could not be read" in text_of(outcome)


async def test_empty_output_becomes_a_placeholder():
    outcome = await run(ToolCall("t", "Sleep", {"output": "  \n"}))
    assert text_of(outcome) == "(Sleep completed with no output)"


async def test_oversized_output_is_persisted_with_a_preview(tmp_path: Path):
    recorder = EventRecorder()
    big = "\n".join(f"line {i}" for i in range(100))
    outcome = await run(
        ToolCall("t", "Small", {"output": big}), [Small()], session_dir=tmp_path, sink=recorder
    )
    saved = tmp_path / "tool-results" / "t.txt"
    assert saved.read_text() == big
    assert text_of(outcome).startswith("<persisted-output>")
    assert str(saved) in text_of(outcome)
    assert outcome.persisted is not None and outcome.persisted.path == saved
    assert [e.kind for e in recorder.events] == ["persisted"]


async def test_post_hook_can_stop_the_agent_after_the_call():
    hooks = ScriptedHooks(
        post=PostToolUseOutcome(prevent_continuation=True, stop_reason="tests are red")
    )
    outcome = await run(ToolCall("t", "Sleep", {}), hooks=hooks)
    assert outcome.prevent_continuation and outcome.stop_reason == "tests are red"
    assert not outcome.is_error


async def test_post_hook_replaces_output_only_for_mcp_tools():
    class Remote(Sleep):
        name = "mcp__srv__remote"
        is_mcp = True

    hooks = ScriptedHooks(post=PostToolUseOutcome(updated_output="redacted"))
    assert text_of(await run(ToolCall("t", "mcp__srv__remote", {}), [Remote()], hooks=hooks)) == (
        "redacted"
    )
    assert text_of(await run(ToolCall("t", "Sleep", {}), hooks=hooks)) == "done"


async def test_a_broken_permission_chain_fails_closed():
    class BrokenChain:
        async def decide(self, tool, input, context, hook):
            raise RuntimeError("rules unreadable")

        async def record_answer(self, request, answer, context):
            return None

    tool = Sleep()
    outcome = await run(ToolCall("t", "Sleep", {}), [tool], permissions=BrokenChain())
    assert outcome.failed_stage == "permission" and "rules unreadable" in text_of(outcome)
    assert tool.tracker.entered == []


async def test_an_answer_that_cannot_be_remembered_still_applies_to_this_call():
    class ForgetfulChain:
        async def decide(self, tool, input, context, hook):
            return Ask(DecidedBy("default", "test"), "may I?")

        async def record_answer(self, request, answer, context):
            raise OSError("settings file is read-only")

    recorder = EventRecorder()
    outcome = await run(
        ToolCall("t", "Sleep", {"output": "ran"}),
        permissions=ForgetfulChain(),
        permission_port=ScriptedPort([Approve(scope="always", rule="Sleep")]),
        sink=recorder,
    )
    assert text_of(outcome) == "ran"
    assert any(isinstance(e, ToolNotice) and "read-only" in e.text for e in recorder.events)


async def test_result_tool_use_ids_always_match_the_call():
    result = ToolResult([{"type": "text", "text": "block content"}])

    class Blocks(Sleep):
        name = "Blocks"

        async def call(self, input, context, progress):
            return result

    outcome = await run(ToolCall("abc", "Blocks", {}), [Blocks()])
    assert outcome.block["tool_use_id"] == "abc"
    assert outcome.block["content"] == [{"type": "text", "text": "block content"}]


async def test_the_question_carries_the_diff_the_write_would_make(tmp_path: Path):
    """Worked out by the engine off the event loop, so the dialog never reads the file."""
    from core.tools.write import Write

    port = ScriptedPort([Reject()])
    call = ToolCall("t", "Write", {"file_path": str(tmp_path / "a.py"), "content": "x = 1\n"})
    await run(call, [Write()], context=make_context([Write()], tmp_path), permission_port=port)
    (request,) = port.requests
    assert request.preview is not None and request.preview.note == "new file, 1 line"
    assert request.preview.lines[-1] == "+x = 1"
