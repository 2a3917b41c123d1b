"""ToolSearch: select by name, rank by keyword, and make loaded tools count as discovered."""

from __future__ import annotations

import json
from typing import Any

from engine_helpers import make_context, make_services, outcomes_of, text_of
from pydantic import Field

from core.executor import StreamingToolExecutor, ToolCall, ToolCallOutcome, run_tool_use
from core.tool import Tool, ToolContext, ToolInput, ToolOptions, ToolResult
from core.tools.read import Read
from core.tools.tool_search import ToolSearch, deferred_tools_notice, name_parts, rank


class IssueInput(ToolInput):
    title: str = Field(description="The issue title")


class Remote(Tool[IssueInput, Any]):
    """A stand-in for an MCP tool: deferred unless told otherwise."""

    input_model = IssueInput

    def __init__(self, name: str, hint: str = "", description: str = "", defer: bool = True):
        self.name = name
        self.search_hint = hint
        self.description = description
        self.should_defer = defer

    def prompt(self, options: ToolOptions) -> str:
        return f"{self.description} (full instructions)"

    def is_read_only(self, input: IssueInput) -> bool:
        return True

    async def call(self, input: IssueInput, context: ToolContext, progress: Any) -> ToolResult:
        return ToolResult(f"made {input.title}")


def remote_tools() -> list[Tool[Any, Any]]:
    return [
        Remote("mcp__jira__create_issue", "open a new ticket", "Creates a Jira issue."),
        Remote("mcp__github__list_issues", "browse issues in a repository", "Lists issues."),
        Remote("mcp__slack__send_message", "post a chat message", "Sends a Slack message."),
        Remote("NotebookEdit", "edit jupyter notebook cells", "Edits a notebook cell."),
        Remote("Loaded", "always there", "Not deferred.", defer=False),
    ]


def context() -> ToolContext:
    return make_context([ToolSearch(), Read(), *remote_tools()])


async def search(ctx: ToolContext, query: str, **more: Any) -> ToolCallOutcome:
    call = ToolCall("toolu_1", "ToolSearch", {"query": query, **more})
    return await run_tool_use(call, make_services(), ctx)


def functions(outcome: ToolCallOutcome) -> list[dict[str, Any]]:
    body = text_of(outcome)
    return [json.loads(chunk.split("</function>")[0]) for chunk in body.split("<function>")[1:]]


async def test_select_loads_deferred_tools_by_name() -> None:
    ctx = context()
    outcome = await search(ctx, "select:mcp__jira__create_issue, Read,NoSuchTool, notebookedit")
    assert not outcome.is_error, text_of(outcome)
    found = functions(outcome)
    assert [f["name"] for f in found] == ["mcp__jira__create_issue", "NotebookEdit"]
    assert found[0]["description"] == "Creates a Jira issue. (full instructions)"
    assert found[0]["parameters"]["required"] == ["title"]
    body = text_of(outcome)
    assert "Already available (their definitions are in your tool list): Read." in body
    assert "No tool is called: NoSuchTool." in body
    assert outcome.context_modifier is not None
    after = outcome.context_modifier(ctx)
    assert after.options.discovered_tools == {"mcp__jira__create_issue", "NotebookEdit"}
    assert ctx.options.discovered_tools == frozenset()  # the old context is unchanged


async def test_keywords_rank_deferred_tools_by_name_hint_and_description() -> None:
    ctx = context()
    outcome = await search(ctx, "create issue")
    names = [f["name"] for f in functions(outcome)]
    assert names[:2] == ["mcp__jira__create_issue", "mcp__github__list_issues"]
    assert "Loaded" not in names and "Read" not in names  # only deferred tools are searched

    hint = await search(ctx, "jupyter")
    assert [f["name"] for f in functions(hint)] == ["NotebookEdit"]

    limited = await search(ctx, "issue message notebook", max_results=2)
    assert len(functions(limited)) == 2


async def test_a_plus_word_must_be_in_the_name() -> None:
    tools = remote_tools()
    assert [t.name for t in rank(tools, "+slack message")] == ["mcp__slack__send_message"]
    assert rank(tools, "+slack +issue") == []
    assert [t.name for t in rank(tools, "+notebook")] == ["NotebookEdit"]


async def test_no_match_lists_the_deferred_tools() -> None:
    outcome = await search(context(), "kubernetes deploy")
    assert not outcome.is_error and outcome.context_modifier is None
    body = text_of(outcome)
    assert "No deferred tool matched 'kubernetes deploy'" in body
    assert "mcp__jira__create_issue, mcp__github__list_issues" in body
    assert "Loaded," not in body


async def test_bad_queries_are_errors() -> None:
    empty = await search(context(), "select: ,")
    assert empty.is_error and "Name at least one tool" in text_of(empty)
    noise = await search(context(), "the tool")
    assert noise.is_error and "keywords" in text_of(noise)
    too_many = await search(context(), "issue", max_results=50)
    assert too_many.is_error and "max_results" in text_of(too_many)


async def test_the_executor_applies_the_discovery_to_later_calls() -> None:
    ctx = context()
    # Before loading, a bad call to a deferred tool is told to load it with ToolSearch.
    before = await run_tool_use(
        ToolCall("toolu_0", "mcp__jira__create_issue", {}), make_services(), ctx
    )
    assert before.is_error and 'ToolSearch (query "select:mcp__jira__create_issue")' in (
        text_of(before)
    )

    executor = StreamingToolExecutor(make_services(), ctx)
    executor.add_tool(
        ToolCall("toolu_1", "ToolSearch", {"query": "select:mcp__jira__create_issue"})
    )
    executor.add_tool(ToolCall("toolu_2", "ToolSearch", {"query": "jupyter notebook"}))
    results = outcomes_of([u async for u in executor.get_remaining_results()])
    assert [r.is_error for r in results] == [False, False]
    discovered = executor.context.options.discovered_tools
    assert discovered == {"mcp__jira__create_issue", "NotebookEdit"}

    after = await run_tool_use(
        ToolCall("toolu_3", "mcp__jira__create_issue", {}), make_services(), executor.context
    )
    assert after.is_error and "ToolSearch" not in text_of(after)
    pool = executor.context.options.tools
    assert pool is not None and "NotebookEdit" not in deferred_tools_notice(pool, discovered)


def test_the_notice_lists_deferred_tools_not_yet_loaded() -> None:
    pool = context().options.tools
    assert pool is not None
    notice = deferred_tools_notice(pool, frozenset({"NotebookEdit"}))
    assert "mcp__slack__send_message" in notice and "NotebookEdit" not in notice
    assert "Loaded" not in notice.splitlines()[1:]
    assert deferred_tools_notice(pool, frozenset(t.name for t in pool)) == ""


def test_name_parts_split_camel_case_and_mcp_names() -> None:
    assert name_parts("mcp__github__create_issue") == ("github", "create", "issue")
    assert name_parts("NotebookEdit") == ("notebook", "edit")
    assert name_parts("HTTPFetch") == ("http", "fetch")
