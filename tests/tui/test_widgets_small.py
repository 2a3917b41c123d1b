"""The todo list, the status bar and the prompt input, driven with real engine events and keys.

A small host app holds the three widgets and a `CallBook`, and feeds event batches the way
the app's event bridge does: each event to the book first, then the batch to each widget.
"""

from __future__ import annotations

import json
from pathlib import Path

from rich.style import Style
from textual.app import App, ComposeResult
from textual.widgets import Label

from core.agent.demo import DEMO_MODEL
from core.agent.events import UsageUpdated
from core.agent.loop import TextDelta, TurnEnded
from core.events import (
    EngineEvent,
    McpServerChanged,
    ModeChanged,
    SubAgentEvent,
    TodosChanged,
    ToolCompleted,
    ToolQueued,
    ToolStarted,
)
from core.tools.todo_write import Todo
from tui.calls import CallBook
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.widgets.prompt_input import BUSY_PLACEHOLDER, IDLE_PLACEHOLDER, PromptInput
from tui.widgets.status_bar import StatusBar
from tui.widgets.todos import TodoList


class Host(App[None]):
    def __init__(
        self, *, model: str = "claude-sonnet-4-5", history_path: Path | None = None
    ) -> None:
        super().__init__()
        self.book = CallBook()
        self.model = model
        self.history_path = history_path
        self.sent: list[str] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield TodoList()
        yield PromptInput(history_path=self.history_path)
        yield StatusBar(model=self.model, session_id="20261126-005602-502b-extra")

    def feed(self, *events: EngineEvent) -> None:
        for event in events:
            self.book.apply(event)
            if isinstance(event, TurnEnded):
                self.book.end_turn(event.stop_reason, event.at)
        self.query_one(TodoList).apply(events, self.book)
        self.query_one(StatusBar).apply(events, self.book)

    def on_prompt_input_prompt_sent(self, message: PromptInput.PromptSent) -> None:
        self.sent.append(message.text)


def todo_lines(todos: TodoList) -> list[str]:
    lines = [todos.render_line(y).text for y in range(todos.size.height)]
    return [line.strip("│╭╮╰╯─ ") for line in lines]


def label(host: Host, selector: str) -> str:
    return str(host.query_one(selector, Label).content)


def usage(
    request: str,
    input_tokens: int,
    output_tokens: int,
    model: str = "claude-sonnet-4-5",
    **cache: int,
) -> UsageUpdated:
    """A request's usage as it streams; a later one for the same request replaces it."""
    return UsageUpdated(
        request_id=request,
        model=model,
        usage={"input_tokens": input_tokens, "output_tokens": output_tokens, **cache},
    )


def queued(call_id: str, tool: str = "Bash", parent: str | None = None) -> ToolQueued:
    return ToolQueued(
        tool_use_id=call_id,
        tool_name=tool,
        batch_id=f"b-{call_id}",
        parent_tool_use_id=parent,
        input={},
        summary=f"{tool} call {call_id}",
        concurrency_safe=False,
    )


THREE = (
    Todo("Read the code", "completed", "Reading the code"),
    Todo("Fix the bug", "in_progress", "Fixing the bug"),
    Todo("Run the tests", "pending", "Running the tests"),
)


# -- todo list ------------------------------------------------------------------------------------


async def test_todos_empty_then_all_three_states() -> None:
    host = Host()
    async with host.run_test(size=(60, 20)) as pilot:
        todos = host.query_one(TodoList)
        assert "No todos yet" in todo_lines(todos)
        host.feed(TodosChanged(todos=THREE))
        await pilot.pause()
        lines = todo_lines(todos)
        assert "✓ Read the code" in lines
        assert "◐ Fixing the bug" in lines  # the activeForm, not the content
        assert "○ Run the tests" in lines
        assert "No todos yet" not in lines
        assert todos.border_title == "Todos 1/3"

        # completed is struck through, in progress is emphasised, pending is neither
        def style_of(words: str) -> Style:
            y = next(y for y, line in enumerate(todo_lines(todos)) if words in line)
            segment = next(s for s in todos.render_line(y) if words in s.text)
            assert segment.style is not None
            return segment.style

        assert style_of("Read the code").strike
        assert style_of("Fixing the bug").bold
        assert not style_of("Run the tests").strike
        assert not style_of("Run the tests").bold


async def test_todos_update_on_a_second_change_and_ignore_other_events() -> None:
    host = Host()
    async with host.run_test(size=(60, 20)) as pilot:
        todos = host.query_one(TodoList)
        host.feed(TodosChanged(todos=THREE))
        await pilot.pause()
        host.feed(
            TextDelta(text="unrelated"),
            TodosChanged(
                todos=(
                    Todo("Read the code", "completed", "Reading the code"),
                    Todo("Fix the bug", "completed", "Fixing the bug"),
                    Todo("Run the tests", "in_progress", "Running the tests"),
                )
            ),
        )
        await pilot.pause()
        lines = todo_lines(todos)
        assert "✓ Fix the bug" in lines
        assert "◐ Running the tests" in lines
        assert "○ Run the tests" not in lines
        assert todos.border_title == "Todos 2/3"


async def test_sub_agent_todos_show_under_a_heading_until_its_task_ends() -> None:
    host = Host()
    async with host.run_test(size=(60, 20)) as pilot:
        todos = host.query_one(TodoList)
        host.feed(
            TodosChanged(todos=THREE[:1]),
            queued("task-1", "Task"),
            TodosChanged(
                todos=(Todo("Look around", "pending", "Looking around"),), agent_id="task-1"
            ),
        )
        await pilot.pause()
        lines = todo_lines(todos)
        assert "↳ Task call task-1" in lines
        assert "○ Look around" in lines
        assert todos.border_title == "Todos 1/1"  # the main list only

        host.feed(
            ToolCompleted(
                tool_use_id="task-1",
                tool_name="Task",
                batch_id="b-task-1",
                duration_s=1.0,
                is_error=False,
            )
        )
        await pilot.pause()
        lines = todo_lines(todos)
        assert "○ Look around" not in lines
        assert "✓ Read the code" in lines


# -- status bar -----------------------------------------------------------------------------------


async def test_status_bar_shows_mode_in_words_with_its_class() -> None:
    host = Host()
    async with host.run_test(size=(120, 20)) as pilot:
        pill = host.query_one("#status-mode", Label)
        assert str(pill.content) == "default"
        assert pill.has_class("-default")
        host.feed(ModeChanged(mode="plan", previous="default"))
        await pilot.pause()
        assert str(pill.content) == "plan mode"
        assert pill.has_class("-plan")
        assert not pill.has_class("-default")
        plan_background = pill.styles.background
        host.feed(ModeChanged(mode="acceptEdits", previous="plan"))
        await pilot.pause()
        assert str(pill.content) == "accept edits"
        assert pill.has_class("-acceptEdits") and not pill.has_class("-plan")
        assert pill.styles.background != plan_background  # each mode its own colour


async def test_status_bar_shows_the_model_and_the_whole_session_id() -> None:
    host = Host()
    async with host.run_test(size=(120, 20)):
        assert label(host, "#status-model") == "claude-sonnet-4-5"
        assert label(host, "#status-session") == "session 20261126-005602-502b"


async def test_tokens_and_cost_move_with_each_response_including_sub_agents() -> None:
    host = Host(model="claude-sonnet-4-5")
    async with host.run_test(size=(120, 20)) as pilot:
        bar = host.query_one(StatusBar)
        assert label(host, "#status-tokens") == "0 in · 0 out"
        assert label(host, "#status-cost") == "$0.00"
        # message_start: the input is counted before the response has a word of output
        host.feed(usage("msg_1", 400, 1))
        await pilot.pause()
        assert (bar.input_tokens, bar.output_tokens) == (400, 1)
        # message_delta: the same request's output so far replaces, it does not add
        host.feed(usage("msg_1", 400, 100))
        await pilot.pause()
        assert (bar.input_tokens, bar.output_tokens) == (400, 100)
        assert label(host, "#status-tokens") == "400 in · 100 out"
        host.feed(
            SubAgentEvent(
                agent_id="task-1",
                agent_label="Explore",
                event_kind="usage",
                event=usage("msg_sub", 100, 50),
            ),
            usage("msg_2", 1000, 850, cache_read_input_tokens=500),
        )
        await pilot.pause()
        assert (bar.input_tokens, bar.output_tokens) == (2000, 1000)
        assert label(host, "#status-tokens") == "2.0k in · 1.0k out"
        # sonnet: (1500 × 3 + 500 × 0.3 + 1000 × 15) / 1e6
        assert bar.cost_usd is not None
        assert abs(bar.cost_usd - 0.01965) < 1e-9
        assert label(host, "#status-cost") == "$0.0197"


async def test_a_long_context_request_costs_the_long_context_rate() -> None:
    host = Host(model="claude-sonnet-4-5")
    async with host.run_test(size=(120, 20)) as pilot:
        # Two requests of 150k input each: both under the 200k tier, $3 a million.
        host.feed(usage("msg_1", 150_000, 0), usage("msg_2", 150_000, 0))
        await pilot.pause()
        assert label(host, "#status-cost") == "$0.9000"
        # One request of 250k: over the tier, $6 a million for all of it.
        host.feed(usage("msg_3", 250_000, 0))
        await pilot.pause()
        assert label(host, "#status-cost") == "$2.40"


async def test_the_offline_demo_costs_nothing() -> None:
    host = Host(model=DEMO_MODEL)
    async with host.run_test(size=(120, 20)) as pilot:
        host.feed(usage("msg_1", 300_000, 1000, model=DEMO_MODEL))
        await pilot.pause()
        assert label(host, "#status-cost") == "$0.00"


async def test_cost_is_unknown_for_an_unpriced_model_and_tokens_still_count() -> None:
    unpriced = "claude-opus-40"
    host = Host(model=unpriced)
    async with host.run_test(size=(120, 20)) as pilot:
        assert label(host, "#status-cost") == "cost unknown"
        host.feed(usage("msg_1", 1000, 1000, model=unpriced))
        await pilot.pause()
        assert host.query_one(StatusBar).cost_usd is None
        assert label(host, "#status-cost") == "cost unknown"
        assert label(host, "#status-tokens") == "1.0k in · 1.0k out"


async def test_activity_words_are_the_apps_and_events_leave_them_alone() -> None:
    host = Host()
    async with host.run_test(size=(120, 20)) as pilot:
        bar = host.query_one(StatusBar)
        assert label(host, "#status-activity") == "idle"
        bar.activity = "working 3 s · 2 prompts queued"
        await pilot.pause()
        assert label(host, "#status-activity") == "working 3 s · 2 prompts queued"
        row = "".join(s.text for s in host.screen._compositor.render_strips()[bar.region.y])
        assert row.rstrip().endswith("working 3 s · 2 prompts queued")
        bar.activity = "working 4 s"  # shorter: the words move right, nothing is left over
        await pilot.pause()
        row = "".join(s.text for s in host.screen._compositor.render_strips()[bar.region.y])
        assert row.rstrip().endswith(" working 4 s") and "queued" not in row
        host.feed(queued("c1"), ToolStarted(tool_use_id="c1", tool_name="Bash", batch_id="b-c1"))
        host.feed(usage("msg_1", 1, 1))
        await pilot.pause()
        assert label(host, "#status-activity") == "working 4 s"


async def test_the_mcp_segment_shows_only_with_servers_and_the_line_fits_at_80() -> None:
    host = Host()
    async with host.run_test(size=(80, 20)) as pilot:
        bar = host.query_one(StatusBar)
        bar.sandbox = "sandbox: files+net"
        bar.activity = "1 waiting for approval"
        await pilot.pause()
        row = "".join(s.text for s in host.screen._compositor.render_strips()[bar.region.y])
        assert "sandbox: files+net" in row and "MCP" not in row
        host.feed(
            McpServerChanged(server="github", state="ready", tools=3),
            McpServerChanged(server="docs", state="connecting", transport="http"),
        )
        await pilot.pause()
        assert label(host, "#status-mcp") == "MCP 1/2"
        row = "".join(s.text for s in host.screen._compositor.render_strips()[bar.region.y])
        # what is going on and the MCP count stay; the session id gives way first
        assert "MCP 1/2" in row and row.rstrip().endswith("1 waiting for approval")
        # the segments that joined late take their places: after the mode, in order
        places = [row.index(words) for words in ("default", "sandbox", "MCP", "1 waiting")]
        assert places == sorted(places)
        assert "sandbox: files+net" in row and "session" not in row
        assert not host.query_one("#status-session", Label).display
    wide = Host()
    async with wide.run_test(size=(160, 20)) as pilot:
        wide.feed(McpServerChanged(server="github", state="ready", tools=3))
        await pilot.pause()
        assert label(wide, "#status-mcp") == "MCP 1/1"
        assert wide.query_one("#status-session", Label).display  # room for all of it


async def test_at_80_columns_with_everything_on_the_mode_sandbox_and_activity_stay() -> None:
    host = Host()
    async with host.run_test(size=(80, 20)) as pilot:
        bar = host.query_one(StatusBar)
        bar.mode = "bypassPermissions"
        bar.sandbox = "sandbox: off — Landlock is not available in this kernel"
        bar.activity = "1 waiting for approval · 2 prompts queued"
        host.feed(McpServerChanged(server="github", state="ready", tools=3))
        host.feed(usage("msg_1", 1200, 300))
        await pilot.pause()
        row = "".join(s.text for s in host.screen._compositor.render_strips()[bar.region.y])
        # the least needed parts went first; the reason the sandbox is off gave way last
        assert row.startswith(" bypass permissions  sandbox: off "), row
        assert row.rstrip().endswith("1 waiting for approval · 2 prompts queued"), row
        assert "Landlock" not in row and "session" not in row and "MCP" not in row
        assert bar.sandbox.endswith("kernel")  # only shortened on screen
        await pilot.resize_terminal(100, 20)  # the short sandbox alone makes room: MCP stays
        await pilot.pause()
        row = "".join(s.text for s in host.screen._compositor.render_strips()[bar.region.y])
        assert " sandbox: off  MCP 1/1 " in row and row.rstrip().endswith("prompts queued")
    wide = Host()
    async with wide.run_test(size=(200, 20)) as pilot:
        bar = wide.query_one(StatusBar)
        bar.sandbox = "sandbox: off — Landlock is not available in this kernel"
        await pilot.pause()
        row = "".join(s.text for s in wide.screen._compositor.render_strips()[bar.region.y])
        assert "sandbox: off — Landlock is not available in this kernel" in row


# -- prompt input ---------------------------------------------------------------------------------


async def test_enter_sends_and_blank_is_ignored() -> None:
    host = Host()
    async with host.run_test() as pilot:
        prompt = host.query_one(PromptInput)
        prompt.focus()
        await pilot.press("enter")
        await pilot.press("space", "space", "enter")
        await pilot.pause()
        assert host.sent == []
        assert prompt.value == ""
        await pilot.press(*"hi ", "enter")
        await pilot.pause()
        assert host.sent == ["hi"]
        assert prompt.value == ""
        assert prompt.history == ("hi",)


async def test_history_walks_newest_first_and_keeps_the_draft() -> None:
    host = Host()
    async with host.run_test() as pilot:
        prompt = host.query_one(PromptInput)
        prompt.focus()
        for text in ("one", "two", "three"):
            await pilot.press(*text, "enter")
        await pilot.press(*"dra", "f", "t")
        await pilot.press("up")
        assert prompt.value == "three"
        await pilot.press("up", "up")
        assert prompt.value == "one"
        await pilot.press("up")  # the oldest stays
        assert prompt.value == "one"
        await pilot.press("down")
        assert prompt.value == "two"
        await pilot.press("down", "down")
        assert prompt.value == "draft"
        await pilot.press("down")  # past the draft: nothing happens
        assert prompt.value == "draft"
        await pilot.press("up", "enter")
        await pilot.pause()
        assert host.sent == ["one", "two", "three", "three"]
        assert prompt.history == ("one", "two", "three")  # an immediate repeat is kept once


async def test_busy_changes_the_placeholder() -> None:
    host = Host()
    async with host.run_test() as pilot:
        prompt = host.query_one(PromptInput)
        assert prompt.placeholder == IDLE_PLACEHOLDER
        prompt.busy = True
        await pilot.pause()
        assert prompt.placeholder == BUSY_PLACEHOLDER
        prompt.busy = False
        await pilot.pause()
        assert prompt.placeholder == IDLE_PLACEHOLDER


async def test_history_file_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "state" / "history.jsonl"
    host = Host(history_path=path)
    async with host.run_test() as pilot:
        host.query_one(PromptInput).focus()
        await pilot.press(*"first", "enter")
        host.query_one(PromptInput).value = "two\nlines"
        await pilot.press("enter")
        await pilot.pause()
    assert [json.loads(line) for line in path.read_text().splitlines()] == ["first", "two\nlines"]

    again = Host(history_path=path)
    async with again.run_test() as pilot:
        prompt = again.query_one(PromptInput)
        assert prompt.history == ("first", "two\nlines")
        prompt.focus()
        await pilot.press("up")
        assert prompt.value == "two\nlines"


async def test_a_garbage_history_file_is_ignored(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\xff\xfe\x00not json at all\n{]")
    mixed = tmp_path / "mixed"
    mixed.write_text('"kept"\n{"not": "a string"}\nnot json\n42\n"also kept"\n')
    for path, expected in ((garbage, ()), (mixed, ("kept", "also kept")), (tmp_path, ())):
        host = Host(history_path=path)
        async with host.run_test() as pilot:
            prompt = host.query_one(PromptInput)
            assert prompt.history == expected
            prompt.focus()
            await pilot.press(*"new", "enter")  # saving to a directory fails quietly
            await pilot.pause()
            assert host.sent == ["new"]


async def test_history_moves_to_a_file_once_the_app_knows_where(tmp_path: Path) -> None:
    from tui.widgets.prompt_input import PromptInput, load_history

    path = tmp_path / "history.jsonl"
    path.write_text('"an old prompt"\n')
    prompt = PromptInput()
    prompt.remember("typed before the session was ready")
    prompt.use_history_file(path)
    assert prompt.history == ("an old prompt", "typed before the session was ready")
    assert load_history(path) == ["an old prompt", "typed before the session was ready"]
