"""What a person sees of hooks around one call: a hook's message as an info notice, a hook
that broke as an error notice, and a `HookRan` record (kept in the transcript) naming the
hook event whenever hooks had something to say, and only then. Each assert here was a
mutation of `_CallRun.pre_hooks`/`post_hooks` that no test noticed (docs/mutation.md)."""

from __future__ import annotations

from engine_helpers import ScriptedHooks, ScriptedPort, make_context, make_services
from tools_for_tests import Sleep

from core.events import EventRecorder, HookRan, ToolNotice
from core.executor import ToolCall, run_tool_use
from core.hooks import PostToolUseOutcome, PreToolUseOutcome
from core.ports import Approve


async def run(call: ToolCall, hooks: ScriptedHooks, **services) -> EventRecorder:
    recorder = EventRecorder()
    await run_tool_use(
        call, make_services(recorder, hooks=hooks, **services), make_context([Sleep()])
    )
    return recorder


def notices(recorder: EventRecorder) -> list[tuple[str, str]]:
    return [(e.level, e.text) for e in recorder.events if isinstance(e, ToolNotice)]


def hook_runs(recorder: EventRecorder) -> list[tuple[str, object]]:
    runs = [e for e in recorder.events if isinstance(e, HookRan)]
    assert all((e.tool_use_id, e.tool_name) == ("t", "Sleep") for e in runs)  # whose call
    return [(e.hook_event, e.outcome) for e in runs]


async def test_hooks_that_say_nothing_leave_no_record():
    recorder = await run(ToolCall("t", "Sleep", {}), ScriptedHooks())
    assert hook_runs(recorder) == [] and notices(recorder) == []


async def test_a_guard_hook_that_broke_is_an_error_notice_and_a_recorded_ask():
    port = ScriptedPort([Approve()])
    recorder = await run(
        ToolCall("t", "Sleep", {}), ScriptedHooks(raise_in="pre"), permission_port=port
    )
    said = "A PreToolUse hook failed (hook exploded), so the call asks instead."
    assert notices(recorder) == [("error", said)]
    asked = PreToolUseOutcome(permission="ask", reason=said, source="PreToolUse hooks")
    assert hook_runs(recorder) == [("PreToolUse", asked)]


async def test_hook_messages_are_info_notices_and_each_event_is_named():
    pre = PreToolUseOutcome(messages=("checked by the linter",))
    post = PostToolUseOutcome(messages=("formatted",))
    recorder = await run(ToolCall("t", "Sleep", {}), ScriptedHooks(pre=pre, post=post))
    assert notices(recorder) == [("info", "checked by the linter"), ("info", "formatted")]
    assert hook_runs(recorder) == [("PreToolUse", pre), ("PostToolUse", post)]
    failed = await run(ToolCall("t", "Sleep", {"fail": True}), ScriptedHooks(post=post))
    assert hook_runs(failed) == [("PostToolUseFailure", post)]


async def test_a_post_hook_that_broke_is_an_error_notice_and_the_result_stands():
    recorder = await run(ToolCall("t", "Sleep", {"output": "ok"}), ScriptedHooks(raise_in="post"))
    assert notices(recorder) == [
        ("error", "A post-call hook failed and was ignored: hook exploded")
    ]
    assert hook_runs(recorder) == []
