"""The Tool base class: cautious defaults, schema for the model, result mapping, rule parsing."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from core.abort import AbortController
from core.access.rules import RuleSyntaxError, parse_rule, rule_names_tool
from core.tool import DEFAULT_MAX_RESULT_SIZE_CHARS, Tool, ToolInput, ToolResult


class EchoInput(ToolInput):
    text: str = Field(description="What to echo")
    times: int = 1


class Echo(Tool[EchoInput, Any]):
    name = "Echo"
    input_model = EchoInput
    description = "Echoes text."


def test_a_tool_that_says_nothing_about_itself_is_treated_as_dangerous():
    tool, data = Echo(), EchoInput(text="hi")
    assert not tool.is_read_only(data)
    assert not tool.is_concurrency_safe(data)
    assert tool.interrupt_behavior == "block"
    assert tool.max_result_size_chars == DEFAULT_MAX_RESULT_SIZE_CHARS == 50_000
    assert not tool.should_defer and not tool.always_load


async def test_default_permission_check_defers_to_the_rules_and_mode():
    result = await Echo().check_permissions(EchoInput(text="x"), None)  # type: ignore[arg-type]
    assert result.behavior == "passthrough"


def test_the_json_schema_the_model_sees_comes_from_the_input_model():
    schema = Echo().input_json_schema()
    assert schema["required"] == ["text"]
    assert schema["properties"]["text"]["description"] == "What to echo"
    assert schema["additionalProperties"] is False


def test_results_map_to_tool_result_blocks_through_one_render():
    tool = Echo()
    assert tool.result_block(ToolResult("out"), "id1") == {
        "type": "tool_result",
        "tool_use_id": "id1",
        "content": "out",
    }
    assert tool.result_block(ToolResult({"n": 1}), "id2")["content"] == '{"n": 1}'
    blocks = [{"type": "text", "text": "a"}]
    assert tool.result_block(ToolResult(blocks), "id3")["content"] == blocks
    assert tool.result_block(ToolResult(None), "id4")["content"] == ""


def test_a_tool_renders_its_typed_output_and_errors_in_text_are_marked():
    class Counted(Tool[EchoInput, int]):
        name = "Counted"
        input_model = EchoInput

        def render(self, output: int) -> str:
            return f"{output} matches"

    tool = Counted()
    assert tool.result_block(ToolResult(3), "a")["content"] == "3 matches"
    failed = tool.result_block(ToolResult("no such file", is_error=True), "b")
    assert failed == {
        "type": "tool_result",
        "tool_use_id": "b",
        "content": "<tool_use_error>no such file</tool_use_error>",
        "is_error": True,
    }
    # Typed output of a failed call (a command's non-zero exit) is rendered, not wrapped.
    assert tool.result_block(ToolResult(0, is_error=True), "c")["content"] == "0 matches"


def test_input_summary_is_one_short_line():
    summary = Echo().summarize_input(EchoInput(text="line one\nline two " + "x" * 200))
    assert "\n" not in summary and len(summary) <= 80 and summary.startswith("line one line two")


def test_unimplemented_call_raises_a_clear_error():
    with pytest.raises(NotImplementedError, match="Echo does not implement call"):
        import asyncio

        asyncio.run(Echo().call(EchoInput(text="x"), None, print))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "tool", "content"),
    [
        ("Bash", "Bash", None),
        ("Bash(npm run test:*)", "Bash", "npm run test:*"),
        ("Bash(*)", "Bash", None),
        ("Bash()", "Bash", None),
        ("WebFetch(domain:example.com)", "WebFetch", "domain:example.com"),
        ("  Read(./src/**)  ", "Read", "./src/**"),
        ("Bash(echo (nested))", "Bash", "echo (nested)"),
    ],
)
def test_rules_parse(text, tool, content):
    rule = parse_rule(text, "allow")
    assert (rule.tool_name, rule.content) == (tool, content)


@pytest.mark.parametrize("text", ["", "Bash(ls", "(ls)", "Bash ls)", "Two Words"])
def test_malformed_rules_say_what_is_wrong(text):
    with pytest.raises(RuleSyntaxError):
        parse_rule(text, "deny")


def test_mcp_rule_names():
    assert rule_names_tool("mcp__gh", "mcp__gh__issue")
    assert rule_names_tool("mcp__gh__*", "mcp__gh__issue")
    assert not rule_names_tool("mcp__gh", "mcp__ghost__issue")
    assert not rule_names_tool("mcp__gh__pr", "mcp__gh__issue")
    assert not rule_names_tool("Bash", "BashOutput")


def test_abort_signals_carry_a_reason_and_reach_children_but_not_parents():
    parent = AbortController()
    child = parent.child()
    grandchild = child.child()
    heard: list[str] = []
    grandchild.signal.add_listener(heard.append)
    sibling = parent.child()
    sibling.abort("sibling_error")
    assert not parent.signal.aborted and not child.signal.aborted
    parent.abort("interrupt")
    assert grandchild.signal.reason == "interrupt" and heard == ["interrupt"]
    assert sibling.signal.reason == "sibling_error"  # the first reason stands
