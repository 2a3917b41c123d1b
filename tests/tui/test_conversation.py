"""The conversation pane as a person watches it: prompts, streamed markdown, tool calls.

A small host app feeds the pane exactly as the app's event bridge does: each event goes to
the `CallBook` first (results from user messages, turn ends), then the whole batch to
`Conversation.apply`. Events are the engine's own classes, built directly. What is checked is
what is drawn: rendered lines, the markdown blocks Textual built, colours from the theme.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app_helpers import output
from textual.app import App, ComposeResult
from textual.color import Color
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from core.access.decision import DecidedBy
from core.agent.loop import (
    CUT_OFF_LINE,
    AssistantMessage,
    HookNotice,
    Interrupted,
    Retrying,
    TextDelta,
    TurnEnded,
    TurnError,
)
from core.events import (
    EngineEvent,
    ModeChanged,
    PermissionAsked,
    ResultPersisted,
    SubAgentEvent,
    ToolCancelled,
    ToolCompleted,
    ToolNotice,
    ToolProgress,
    ToolQueued,
    ToolStarted,
)
from core.registry import all_base_tools
from tui.calls import CallBook
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.widgets.conversation import (
    AssistantText,
    Conversation,
    Notice,
    PromptBlock,
    ToolLine,
    ToolRun,
)
from tui.widgets.conversation_items import ToolLineDetail


class Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.book = CallBook()
        self.clock = 100.0

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Conversation(id="conversation")

    @property
    def pane(self) -> Conversation:
        return self.query_one(Conversation)

    def send(self, prompt: str) -> None:
        self.book.begin_turn(prompt, self.clock)
        self.pane.add_prompt(prompt)

    def feed(self, *batch: EngineEvent) -> None:
        """One bridge frame: the book takes every event, then the pane gets the batch."""
        for event in batch:
            self.book.apply(event)
            if isinstance(event, TurnEnded):
                self.book.end_turn(event.stop_reason, event.at)
        self.pane.apply(list(batch), self.book)

    def at(self, step: float = 0.5) -> float:
        self.clock += step
        return self.clock


def ids(tool_use_id: str, name: str, parent: str | None = None) -> dict[str, Any]:
    return {
        "tool_use_id": tool_use_id,
        "tool_name": name,
        "batch_id": f"b-{tool_use_id}",
        "parent_tool_use_id": parent,
    }


def queued(app: Host, tool_use_id: str, name: str, summary: str, tool_input: Any) -> ToolQueued:
    return ToolQueued(
        at=app.at(),
        **ids(tool_use_id, name),
        input=tool_input,
        summary=summary,
        concurrency_safe=True,
        headline_field=HEADLINES.get(name),
    )


HEADLINES = {tool.name: tool.headline_field for tool in all_base_tools()}
"""What the real tools say their headline field is."""


def shown(widget: Widget) -> str:
    """The widget's text as drawn on screen, line by line."""
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


def drawn(container: Widget) -> list[str]:
    """What a container's innermost widgets draw, top to bottom (containers draw no text)."""
    leaves = [
        (leaf.region.y, leaf.region.x, shown(leaf).strip())
        for leaf in container.walk_children(Widget)
        if not leaf.children and leaf.size.height
    ]
    return [text for _, _, text in sorted(leaves) if text]


def header_text(line: ToolLine) -> str:
    """The call's line as the screen draws it."""
    return line.run.render_line(line.row).text


def glyph_colour(line: ToolLine) -> Color | None:
    """The colour the call's glyph (the line's first character) is drawn in."""
    segment = next(iter(line.run.render_line(line.row)))
    colour = segment.style.color if segment.style is not None else None
    return Color.from_rich_color(colour) if colour is not None else None


def theme_colour(name: str) -> Color:
    return Color.parse(THEME_VARIABLE_DEFAULTS[name])


async def test_a_prompt_appears_as_sent() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        app.send("Count the words in README.md")
        await pilot.pause()
        block = app.query_one(PromptBlock)
        assert "Count the words in README.md" in shown(block)


async def test_text_deltas_over_several_batches_make_one_markdown_block() -> None:
    app = Host()
    pieces = ["# Pl", "an\n\nSteps:\n\n- read", " the code\n", "- run the ", "tests\n"]
    async with app.run_test(size=(80, 30)) as pilot:
        app.send("plan it")
        for n, piece in enumerate(pieces):
            app.feed(
                TextDelta(text=piece[: len(piece) // 2]), TextDelta(text=piece[len(piece) // 2 :])
            )
            if n % 2:  # some batches land before the block is even mounted
                await pilot.pause()
        app.feed(
            AssistantMessage(
                content=({"type": "text", "text": "".join(pieces)},), stop_reason="end_turn"
            )
        )
        blocks = app.query(AssistantText)
        assert len(blocks) == 1
        await blocks.first().wait_finished()
        await pilot.pause()
        block = blocks.first()
        assert block.source == "".join(pieces)
        # Textual exports only MarkdownBlock; its kinds are found by their CSS type names.
        assert (block.query_one("MarkdownH1", MarkdownBlock).source or "").strip() == "# Plan"
        assert len(block.query("MarkdownBulletList")) == 1
        assert drawn(block) == ["Plan", "Steps:", "•", "read the code", "•", "run the tests"]


async def test_text_after_a_tool_call_starts_a_new_block_below_it() -> None:
    app = Host()
    async with app.run_test(size=(80, 30)) as pilot:
        app.send("look")
        app.feed(
            TextDelta(text="First I read."),
            queued(app, "t1", "Read", "notes.txt", {"file_path": "notes.txt"}),
            TextDelta(text="Then I answer."),
        )
        await pilot.pause()
        kinds = [type(child).__name__ for child in app.pane.children]
        assert kinds == ["PromptBlock", "AssistantText", "ToolRun", "AssistantText"]
        first, second = app.query(AssistantText)
        assert first.closed and not second.closed
        assert "Then I answer." in second.source


async def test_a_tool_line_shows_name_and_summary_and_follows_its_state() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        app.send("go")
        app.feed(queued(app, "t1", "Bash", "pytest -q", {"command": "pytest -q"}))
        await pilot.pause()
        line = app.pane.tool_line("t1")
        assert line is not None
        text = header_text(line)
        assert "Bash" in text and "pytest -q" in text and "queued" in text
        assert text.startswith("○") and glyph_colour(line) == theme_colour("tool-queued")

        app.feed(ToolStarted(at=app.at(), **ids("t1", "Bash")))
        await pilot.pause()
        assert "running" in header_text(line)
        assert glyph_colour(line) == theme_colour("tool-running")

        app.feed(ToolCompleted(at=app.at(1.5), **ids("t1", "Bash"), duration_s=1.5, is_error=False))
        await pilot.pause()
        assert header_text(line).startswith("✓") and "1.5 s" in header_text(line)
        assert glyph_colour(line) == theme_colour("tool-done")


async def test_a_failed_call_and_one_awaiting_approval_say_so() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        app.send("go")
        app.feed(
            queued(app, "a", "Write", "out.txt", {"file_path": "out.txt", "content": "x"}),
            queued(app, "b", "Bash", "false", {"command": "false"}),
            ToolStarted(at=app.at(), **ids("a", "Write")),
            PermissionAsked(at=app.at(), **ids("a", "Write"), request=None),  # type: ignore[arg-type]
            ToolStarted(at=app.at(), **ids("b", "Bash")),
            ToolCompleted(
                at=app.at(), **ids("b", "Bash"), duration_s=0.2, is_error=True, failed_stage="call"
            ),
        )
        await pilot.pause()
        waiting, failed = app.pane.tool_line("a"), app.pane.tool_line("b")
        assert waiting is not None and failed is not None
        assert "needs approval" in header_text(waiting)
        assert glyph_colour(waiting) == theme_colour("tool-waiting")
        words = [s for s in waiting.run.render_line(waiting.row) if "approval" in s.text]
        assert words and words[0].style is not None and words[0].style.color is not None
        assert Color.from_rich_color(words[0].style.color) == theme_colour("tool-waiting")
        assert "failed" in header_text(failed) and "✗" in header_text(failed)
        assert glyph_colour(failed) == theme_colour("tool-failed")
        # Both calls came one after the other: one run, a row each.
        assert waiting.run is failed.run and (waiting.row, failed.row) == (0, 1)


async def test_a_denied_call_reads_denied_in_its_own_colour_and_waits_are_apart() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        app.send("go")
        app.feed(
            queued(app, "a", "Bash", "rm -rf build", {"command": "rm -rf build"}),
            queued(app, "b", "Edit", "notes.md", {"file_path": "notes.md"}),
            ToolStarted(at=app.at(), **ids("a", "Bash")),
            ToolCompleted(
                at=app.at(),
                **ids("a", "Bash"),
                duration_s=0.0,
                waited_s=6.2,
                is_error=True,
                failed_stage="permission",
                outcome="denied",
                denied_by=DecidedBy("user", "the person said no"),
            ),
            ToolStarted(at=app.at(), **ids("b", "Edit")),
            ToolCompleted(
                at=app.at(), **ids("b", "Edit"), duration_s=0.012, waited_s=6.2, is_error=False
            ),
        )
        await pilot.pause()
        denied, edited = app.pane.tool_line("a"), app.pane.tool_line("b")
        assert denied is not None and edited is not None
        assert header_text(denied).startswith("⊖ Bash")
        assert header_text(denied).rstrip().endswith("denied by you · waited 6.2 s")
        assert "failed" not in header_text(denied)
        assert glyph_colour(denied) == theme_colour("tool-denied") != theme_colour("tool-failed")
        assert header_text(edited).rstrip().endswith("12 ms · waited 6.2 s")


async def test_enter_opens_a_call_to_its_full_input_and_result() -> None:
    app = Host()
    async with app.run_test(size=(90, 30)) as pilot:
        app.send("go")
        command = "grep -rn TODO src | wc -l"
        app.feed(
            queued(app, "t1", "Bash", "grep -rn TODO src…", {"command": command, "timeout": 5000}),
            ToolStarted(at=app.at(), **ids("t1", "Bash")),
            ToolCompleted(
                at=app.at(), **ids("t1", "Bash"), duration_s=0.3, is_error=False, content="42\n"
            ),
        )
        await pilot.pause()
        line = app.pane.tool_line("t1")
        assert line is not None
        assert not app.pane.query(ToolLineDetail)
        line.focus()
        await pilot.press("enter")
        await pilot.pause()
        detail = app.pane.query_one(ToolLineDetail)
        assert line.expanded and line.detail is detail
        assert detail.region.y == line.region.y + 1  # right under the call's line
        assert f"$ {command}" in shown(detail.headline)
        assert '"timeout": 5000' in shown(detail.body)
        assert "42" in shown(detail.result)
        await pilot.press("enter")
        await pilot.pause()
        assert not line.expanded and not app.pane.query(ToolLineDetail)


async def test_clicking_a_call_line_opens_it() -> None:
    app = Host()
    async with app.run_test(size=(90, 30)) as pilot:
        app.send("go")
        app.feed(queued(app, "t1", "Read", "src/app.py", {"file_path": "src/app.py"}))
        await pilot.pause()
        line = app.pane.tool_line("t1")
        assert line is not None
        await pilot.click(ToolRun, offset=(3, line.row))
        await pilot.pause()
        assert line.expanded and line.detail is not None
        assert "src/app.py" in shown(line.detail.headline)


async def test_a_result_arriving_while_open_is_shown() -> None:
    app = Host()
    async with app.run_test(size=(90, 30)) as pilot:
        app.send("go")
        app.feed(queued(app, "t1", "Read", "a.py", {"file_path": "a.py"}))
        await pilot.pause()
        line = app.pane.tool_line("t1")
        assert line is not None
        line.expanded = True
        await pilot.pause()
        detail = line.detail
        assert detail is not None and not detail.result.display
        app.feed(
            ToolCompleted(
                at=app.at(),
                **ids("t1", "Read"),
                duration_s=0.1,
                is_error=False,
                content="print('hello')",
            ),
        )
        await pilot.pause()
        assert "print('hello')" in shown(detail.result)


async def test_a_long_persisted_result_is_cut_and_names_where_it_was_saved(tmp_path: Path) -> None:
    app = Host()
    saved = tmp_path / "tool-results" / "t1.txt"
    output = "\n".join(f"line {n}" for n in range(1, 101))
    async with app.run_test(size=(100, 60)) as pilot:
        app.send("go")
        app.feed(
            queued(app, "t1", "Bash", "seq 100", {"command": "seq 100"}),
            ToolStarted(at=app.at(), **ids("t1", "Bash")),
            ResultPersisted(at=app.at(), **ids("t1", "Bash"), path=saved, size_chars=len(output)),
            ToolCompleted(
                at=app.at(), **ids("t1", "Bash"), duration_s=0.4, is_error=False, content=output
            ),
        )
        await pilot.pause()
        line = app.pane.tool_line("t1")
        assert line is not None
        line.expanded = True
        await pilot.pause()
        detail = line.detail
        assert detail is not None
        result = shown(detail.result)
        assert "line 40" in result and "line 41" not in result
        note = shown(detail.result_note)
        assert "60 more lines" in note
        assert str(saved) in note and "ctrl+o" in note


async def test_a_tool_notice_shows_under_its_line() -> None:
    app = Host()
    async with app.run_test(size=(90, 20)) as pilot:
        app.send("go")
        app.feed(
            queued(app, "t1", "Edit", "a.py", {"file_path": "a.py"}),
            ToolNotice(at=app.at(), **ids("t1", "Edit"), level="warning", text="lint hook failed"),
        )
        await pilot.pause()
        line = app.pane.tool_line("t1")
        assert line is not None
        assert "Edit" in line.rows_text()[0]
        assert line.rows_text()[1].strip() == "warning: lint hook failed"
        assert line.run.size.height == 2


async def test_a_batch_redraws_only_the_calls_it_touched() -> None:
    app = Host()
    async with app.run_test(size=(90, 20)) as pilot:
        app.send("go")
        app.feed(
            queued(app, "a", "Bash", "sleep 5", {"command": "sleep 5"}),
            queued(app, "b", "Bash", "make", {"command": "make"}),
        )
        await pilot.pause()
        run = app.pane.query_one(ToolRun)
        redrawn: list[int] = []
        original = run.render_line

        def spy(y: int) -> Any:
            redrawn.append(y)
            return original(y)

        run.render_line = spy  # type: ignore[method-assign]
        app.feed(
            ToolStarted(at=app.at(), **ids("b", "Bash")),
            *(
                ToolProgress(at=app.at(0.01), **ids("b", "Bash"), data=output(f"step {n}\n"))
                for n in range(50)
            ),
        )
        await pilot.pause()
        drawn_rows = list(redrawn)
        line = app.pane.tool_line("b")
        assert line is not None and "running" in header_text(line)
        # The screen drew b's line again (once), and not a's.
        assert drawn_rows == [line.row]


async def test_turn_errors_retries_interruptions_and_hook_notes_show_their_text() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.send("go")
        retry = Retrying(attempt=1, delay_s=4, error="the API is overloaded")
        app.feed(
            TextDelta(text="Let me"),
            retry,
            TurnError(message="Authentication failed: check ANTHROPIC_API_KEY"),
            Interrupted(),
            HookNotice(text="prompt logged"),
        )
        await pilot.pause()
        texts = [shown(notice) for notice in app.query(Notice)]
        assert any(retry.describe() in text for text in texts)
        assert any("Authentication failed: check ANTHROPIC_API_KEY" in text for text in texts)
        assert any("interrupted" in text for text in texts)
        assert any("hook: prompt logged" in text for text in texts)
        assert not app.query(AssistantText)  # the failed stream's text was withdrawn


async def test_a_retried_stream_shows_its_text_once_with_the_retry_noted() -> None:
    app = Host()
    said = "I will read the notes first."
    async with app.run_test(size=(90, 30)) as pilot:
        app.send("go")
        app.feed(TextDelta(text=said[:10]))
        await pilot.pause()  # the first part is on screen before the stream breaks
        app.feed(
            TextDelta(text=said[10:]),
            queued(app, "t1", "Read", "notes.txt", {"file_path": "notes.txt"}),
            TextDelta(text=" Then"),
            Retrying(
                attempt=1,
                delay_s=2,
                error="the connection dropped",
                max_attempts=5,
                discarded_text=said + " Then",
            ),
        )
        await pilot.pause()
        app.feed(TextDelta(text=said), TextDelta(text=" Done."))
        app.feed(
            AssistantMessage(content=({"type": "text", "text": said + " Done."},), stop_reason=None)
        )
        await pilot.pause()
        (block,) = app.query(AssistantText)
        await block.wait_finished()
        assert block.source == said + " Done."
        kinds = [type(child).__name__ for child in app.pane.children]
        assert kinds == ["PromptBlock", "ToolRun", "Notice", "AssistantText"]
        notice = app.query_one(Notice)
        assert shown(notice).strip() == "the connection dropped, retrying in 2.0 s (2/5)"


async def test_a_call_cut_off_by_max_tokens_says_it_was_not_run() -> None:
    app = Host()
    async with app.run_test(size=(100, 20)) as pilot:
        app.send("write it")
        app.feed(
            queued(app, "w", "Write", "{'file_path': 'NOTES.md'}", {"file_path": "NOTES.md"}),
            ToolCancelled(
                at=app.at(),
                **ids("w", "Write"),
                reason="cut_off",
                message=CUT_OFF_LINE,
            ),
        )
        await pilot.pause()
        line = app.pane.tool_line("w")
        assert line is not None
        assert "not run: the response was cut off" in header_text(line)


async def test_a_mode_change_is_a_dim_line_naming_the_mode() -> None:
    app = Host()
    async with app.run_test(size=(90, 20)) as pilot:
        app.feed(ModeChanged(mode="plan", previous="default", why="shift+tab"))
        app.pane.add_notice("settings: unknown key 'colour'", "warning")
        await pilot.pause()
        mode, settings = app.query(Notice)
        assert "mode → plan mode (shift+tab)" in shown(mode)
        assert mode.has_class("-mode")
        assert "unknown key 'colour'" in shown(settings) and settings.has_class("-warning")


async def test_a_sub_agents_words_appear_under_its_task_line() -> None:
    app = Host()

    def sub(event: EngineEvent) -> SubAgentEvent:
        return SubAgentEvent(
            at=event.at, agent_id="task1", agent_label="Explore", event_kind=event.kind, event=event
        )

    async with app.run_test(size=(100, 30)) as pilot:
        app.send("explore")
        app.feed(
            queued(
                app, "task1", "Task", "Explore: find the parser", {"description": "find the parser"}
            ),
            ToolStarted(at=app.at(), **ids("task1", "Task")),
            sub(TextDelta(text="Searching for the parser\nLooking in src")),
        )
        await pilot.pause()
        line = app.pane.tool_line("task1")
        assert line is not None
        assert line.rows_text()[1].strip() == "agent: Looking in src"

        app.feed(
            ToolQueued(
                at=app.at(),
                **ids("r1", "Read", parent="task1"),
                input={"file_path": "src/parse.py"},
                summary="src/parse.py",
                concurrency_safe=True,
            )
        )
        await pilot.pause()
        assert line.rows_text()[1].strip() == "agent: Read src/parse.py"
        assert app.pane.tool_line("r1") is None  # nested calls stay inside the Task line

        answer = "The parser is in src/parse.py, function parse_args."
        app.feed(
            sub(
                AssistantMessage(
                    content=({"type": "text", "text": answer},), stop_reason="end_turn"
                )
            ),
            sub(TurnEnded(stop_reason="end_turn", requests=2, usage={})),
            ToolCompleted(at=app.at(), **ids("task1", "Task"), duration_s=3.0, is_error=False),
        )
        await pilot.pause()
        assert len(line.rows_text()) == 1  # the activity line went with the agent
        assert not app.query(Markdown)  # the sub-agent's text is not the main agent's
        line.expanded = True
        await pilot.pause()
        assert line.detail is not None and "parse_args" in shown(line.detail.agent_text)


async def test_the_pane_follows_new_content_until_the_user_scrolls_up() -> None:
    app = Host()
    async with app.run_test(size=(60, 12)) as pilot:
        for n in range(30):
            app.pane.add_notice(f"note {n}", "info")
        await pilot.pause()
        pane = app.pane
        assert pane.max_scroll_y > 0 and pane.scroll_y == pane.max_scroll_y
        pane.release_anchor()
        pane.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        pane.add_notice("one more", "info")
        await pilot.pause()
        assert pane.scroll_y == 0


async def test_a_call_opened_in_the_same_frame_it_appeared_keeps_its_line_on_top() -> None:
    app = Host()
    async with app.run_test(size=(90, 30)) as pilot:
        app.send("go")
        app.feed(queued(app, "t1", "Read", "a.py", {"file_path": "a.py"}))
        line = app.pane.tool_line("t1")
        assert line is not None
        line.expanded = True  # before the pane has mounted the line
        await pilot.pause()
        kinds = [type(child).__name__ for child in app.pane.children]
        assert kinds == ["PromptBlock", "ToolRun", "ToolLineDetail"]
        assert line.detail is not None and "a.py" in shown(line.detail.headline)


async def test_two_thousand_calls_in_one_batch_are_one_run_of_two_thousand_rows() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.send("flood")
        app.feed(
            *(
                queued(app, f"c{n}", "Grep", f"pattern {n}", {"pattern": f"p{n}"})
                for n in range(2000)
            )
        )
        await pilot.pause()
        runs = app.pane.query(ToolRun)
        assert len(runs) == 1
        run = runs.first()
        assert run.row_count == 2000 and run.size.height == 2000
        # A widget for the prompt and one for the calls, not one (or four) per call.
        assert len(list(app.pane.walk_children())) < 10
        rows = run.rows_text()
        assert "pattern 0" in rows[0] and "pattern 1999" in rows[1999]
        pane = app.pane
        assert pane.scroll_y == pane.max_scroll_y > 0  # followed to the last call
        last = app.pane.tool_line("c1999")
        assert last is not None and pane.region.contains_region(last.region)


async def test_opening_a_call_mid_run_puts_it_under_its_line_and_closing_joins_the_run() -> None:
    app = Host()
    async with app.run_test(size=(100, 40)) as pilot:
        app.send("go")
        app.feed(*(queued(app, n, "Read", f"{n}.py", {"file_path": f"{n}.py"}) for n in "abc"))
        await pilot.pause()

        def layout() -> list[str]:
            return [
                f"run {' '.join(child.call_ids)}"
                if isinstance(child, ToolRun)
                else type(child).__name__
                for child in app.pane.children
            ]

        assert layout() == ["PromptBlock", "run a b c"]
        b = app.pane.tool_line("b")
        assert b is not None
        b.expanded = True
        await pilot.pause()
        assert layout() == ["PromptBlock", "run a b", "ToolLineDetail", "run c"]
        assert b.detail is not None and "b.py" in shown(b.detail.headline)
        assert b.detail.region.y == b.region.y + 1
        # Calls that come while it is open still join the run at the end of the pane.
        app.feed(queued(app, "d", "Read", "d.py", {"file_path": "d.py"}))
        await pilot.pause()
        assert layout() == ["PromptBlock", "run a b", "ToolLineDetail", "run c d"]
        b.expanded = False
        await pilot.pause()
        assert layout() == ["PromptBlock", "run a b c d"]
        app.feed(queued(app, "e", "Read", "e.py", {"file_path": "e.py"}))
        await pilot.pause()
        assert layout() == ["PromptBlock", "run a b c d e"]
        e = app.pane.tool_line("e")
        assert e is not None and e.row == 4 and "e.py" in e.text


async def test_up_and_down_move_between_calls_and_enter_opens_the_one_under_the_cursor() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.send("go")
        app.feed(
            queued(app, "a", "Edit", "a.py", {"file_path": "a.py"}),
            ToolNotice(at=app.at(), **ids("a", "Edit"), level="warning", text="hook said so"),
            queued(app, "b", "Read", "b.py", {"file_path": "b.py"}),
        )
        await pilot.pause()
        a = app.pane.tool_line("a")
        assert a is not None
        a.focus()
        await pilot.pause()
        run = a.run
        cursor = run.get_component_rich_style("tool-run--cursor").bgcolor
        assert cursor is not None

        def background(y: int) -> Any:
            style = next(iter(run.render_line(y))).style
            return style.bgcolor if style is not None else None

        assert background(0) == cursor
        await pilot.press("down")  # past a's notice, onto b
        await pilot.press("enter")
        await pilot.pause()
        b = app.pane.tool_line("b")
        assert b is not None and b.expanded and not a.expanded
        assert background(2) == cursor and background(0) != cursor
        await pilot.press("up", "enter")
        await pilot.pause()
        assert a.expanded and b.expanded
        kinds = [type(child).__name__ for child in app.pane.children]
        assert kinds == ["PromptBlock", "ToolRun", "ToolLineDetail", "ToolRun", "ToolLineDetail"]
