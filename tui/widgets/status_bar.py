"""The one-line status bar: permission mode, model, session, tokens, cost and what is going on.

The permission mode is the most important thing on the line (it decides what runs without
asking), so it is a pill in a colour of its own: a CSS class per mode (`-plan`,
`-acceptEdits`, ...) styled with the theme's `$mode-*` variables, never a literal colour.

Each field is its own `Label` behind a typed reactive. Reactives skip watchers when a value is
unchanged, so the app can set fields freely and `apply()` can run on every event batch: only
a label whose text really changed is redrawn. Usage arrives while each response streams
(`UsageUpdated`: the input counts first, the output count at the end), so tokens and cost
move with every request, not at the turn's end; sub-agents' requests arrive wrapped in
`SubAgentEvent` and count too, since the session pays for them. Cost is each request's usage
at its model's published price, tiers included (`core.agent.pricing`, from genai-prices);
"cost unknown" is shown for a model without a known price (the offline demo's).

The activity words ("working 12 s", "waiting for approval", "idle", "2 prompts queued") are
set by the app, which alone knows when a turn started, which dialogs are open and how many
prompts it holds back; one writer keeps the words from flickering between two opinions.

MCP servers get a segment only when the session has any (`MCP 2/3`: ready of configured, from
the call book's board): a person who never configured one never sees the word. It is coloured
by the servers' health with the theme's warning and error colours.

How full the model's context window is ("context 62%", from `ContextMeasured`) joins the
line after the first response (or at once, for a resumed session); past the auto-compaction
threshold it takes the warning colour (compaction is coming). A conversation measured past
the whole window reads "context 100%+" rather than a figure such as 104% that looks like a
fault (the next request could not be sent as it is: it is compacted first), and while a
summary is being written the segment says "· compacting" (`Compacting` to `Compacted`).

The line must read at 80 columns, where everything at once does not fit. Rather than let the
right end (what is going on, the most wanted) fall off, the segments a glance needs least go
first, in `DROP_ORDER`: the session id, then the cost, the tokens, the model; then the
sandbox's reason for being off, which can take half the line, gives way (`sandbox: off`
stays, in its warning colour); then how full the context is; then the MCP count (a server
that fails says so in the conversation too). The mode and the activity always stay.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Literal

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.events import Click
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label

from core.access.modes import MODE_LABELS
from core.agent.events import (
    Compacted,
    Compacting,
    CompactionFailed,
    ContextMeasured,
    TurnEnded,
    UsageUpdated,
)
from core.agent.pricing import UsageTally, is_priced
from core.events import EngineEvent, McpServerChanged, ModeChanged, SubAgentEvent
from tui.calls import CallBook

SESSION_ID_CHARS = 20
"""Session ids are `YYYYMMDD-HHMMSS-xxxx`: all of it, since the date alone names nothing."""
FitStep = Literal["drop", "shorten"]
_MODE_WORDS: dict[str, str] = {str(mode): label for mode, label in MODE_LABELS.items()}
DROP_ORDER: tuple[tuple[str, FitStep], ...] = (
    ("status-session", "drop"),
    ("status-cost", "drop"),
    ("status-tokens", "drop"),
    ("status-model", "drop"),
    ("status-sandbox", "shorten"),
    ("status-context", "drop"),
    ("status-mcp", "drop"),
)
"""Which segments give way, first to last, when the line is too narrow for all of them."""


def context_words(fraction: float | None, compacting: bool) -> str:
    """The context segment: `context 62%`, `context 100%+` past the whole window, with
    `· compacting` while a summary is written; "" before anything was measured."""
    if fraction is None:
        return "compacting" if compacting else ""
    figure = "100%+" if fraction > 1 else f"{round(fraction * 100)}%"
    return f"context {figure} · compacting" if compacting else f"context {figure}"


def sandbox_in_short(status: str) -> str:
    """`sandbox: off — <why>` → `sandbox: off`; `sandbox: files (no net)` → `sandbox: files`."""
    return status.split(" — ")[0].split(" (")[0]


SHORT_FORMS: dict[str, Callable[[str], str]] = {"status-sandbox": sandbox_in_short}
"""The shorter form of each segment `DROP_ORDER` shortens."""
_PADDING = 2
"""Each label's `padding: 0 1`."""


def compact_count(count: int) -> str:
    """A token count short enough for a status line: 950, 12.3k, 1.2M."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def describe_cost(cost: float | None) -> str:
    if cost is None:
        return "cost unknown"
    return f"${cost:.2f}" if cost >= 1 or cost == 0 else f"${cost:.4f}"


class StatusBar(Widget):
    """Mode pill, model, session id, tokens, cost and activity, on one line."""

    DEFAULT_CSS = """
    StatusBar {
        height: 1;
        layout: horizontal;
        background: $panel;
        color: $text-muted;
    }
    StatusBar > Label { width: auto; padding: 0 1; }
    StatusBar > #status-mode { color: auto 90%; text-style: bold; background: $mode-default; }
    StatusBar > #status-mode.-acceptEdits { background: $mode-accept-edits; }
    StatusBar > #status-mode.-plan { background: $mode-plan; }
    StatusBar > #status-mode.-bypassPermissions { background: $mode-bypass; }
    StatusBar > #status-mode.-dontAsk { background: $mode-dont-ask; }
    StatusBar > #status-model { color: $text; }
    StatusBar > #status-sandbox { color: $risk-low; }
    StatusBar > #status-sandbox.-weak { color: $risk-medium; }
    StatusBar > #status-sandbox.-off { color: $risk-high; text-style: bold; }
    StatusBar > #status-mcp.-ready { color: $text-success; }
    StatusBar > #status-mcp.-connecting { color: $text-warning; }
    StatusBar > #status-mcp.-failed { color: $text-error; text-style: bold; }
    StatusBar > #status-context.-full { color: $text-warning; text-style: bold; }
    StatusBar > #status-activity { width: 1fr; text-align: right; }
    """

    MODE_CLASSES: ClassVar[tuple[str, ...]] = tuple(f"-{mode}" for mode in MODE_LABELS)
    MCP_CLASSES: ClassVar[tuple[str, ...]] = ("-ready", "-partial", "-connecting", "-failed")

    mode: reactive[str] = reactive("default")
    """The permission mode's name (`PermissionMode`, e.g. "acceptEdits")."""
    model: reactive[str] = reactive("")
    session_id: reactive[str] = reactive("")
    input_tokens: reactive[int] = reactive(0)
    """Every input token the session's requests read, cache writes and reads included."""
    output_tokens: reactive[int] = reactive(0)
    cost_usd: reactive[float | None] = reactive(None)
    """The session's cost so far at published prices; None when a model's price is unknown."""
    activity: reactive[str] = reactive("idle")
    """What is going on, in words; the app sets it."""
    sandbox: reactive[str] = reactive("")
    """`sandbox: files+net`, `sandbox: off — <why>` (`SessionSandbox.status()`); "" before
    the session knows."""
    mcp: reactive[str] = reactive("")
    """`MCP 2/3`; "" when the session has no MCP servers."""
    context: reactive[str] = reactive("")
    """`context 62%`; "" until the first response is measured."""

    class ModeClicked(Message):
        """The mode pill was clicked (the app may cycle the mode, as the mode key does)."""

        def __init__(self, status_bar: StatusBar, mode: str) -> None:
            super().__init__()
            self.status_bar = status_bar
            self.mode = mode

        @property
        def control(self) -> StatusBar:
            return self.status_bar

    class McpClicked(Message):
        """The MCP segment was clicked (the app opens the servers screen)."""

    def __init__(
        self,
        *,
        mode: str = "default",
        model: str = "",
        session_id: str = "",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        # Labels exist before mounting so watchers can always update them.
        self._mode_label = Label(id="status-mode")
        self._model_label = Label(id="status-model")
        self._session_label = Label(id="status-session")
        self._tokens_label = Label(id="status-tokens")
        self._cost_label = Label(id="status-cost")
        self._sandbox_label = Label(id="status-sandbox")
        self._mcp_label = Label(id="status-mcp")
        self._context_label = Label(id="status-context")
        self._activity_label = Label(id="status-activity")
        self._texts: dict[Label, str] = {}
        """What each label says now; "" for a segment that has nothing to say."""
        self._shown: dict[Label, str] = {}
        """What each label shows: its text, or the shorter form the width allows."""
        self.tally = UsageTally()
        """The session's requests' usage and cost so far, sub-agents' included."""
        self._measured: ContextMeasured | None = None
        self._compacting = False
        self.set_reactive(StatusBar.mode, mode)
        self.set_reactive(StatusBar.model, model)
        self.set_reactive(StatusBar.session_id, session_id)
        self.set_reactive(StatusBar.cost_usd, self._cost())

    @property
    def _segments(self) -> tuple[Label, ...]:
        """Every segment, in the order of the line."""
        return (
            self._mode_label,
            self._sandbox_label,
            self._mcp_label,
            self._model_label,
            self._context_label,
            self._session_label,
            self._tokens_label,
            self._cost_label,
            self._activity_label,
        )

    def compose(self) -> ComposeResult:
        # The sandbox and MCP segments join the line when they first have words (`_join`):
        # the first frame has none for them, and each label is a widget to style, mount and
        # lay out before that frame.
        late = {
            self._sandbox_label: self.sandbox,
            self._mcp_label: self.mcp,
            self._context_label: self.context,
        }
        for label in self._segments:
            if label not in late or late[label]:
                yield label

    def on_mount(self) -> None:
        self.watch_mode(self.mode)
        self.watch_model(self.model)
        self.watch_session_id(self.session_id)
        self._show_tokens()
        self.watch_cost_usd(self.cost_usd)
        self.watch_sandbox(self.sandbox)
        self.watch_mcp(self.mcp)
        self.watch_context(self.context)
        self._show_activity()

    def on_resize(self) -> None:
        self._fit()

    # -- feeding ---------------------------------------------------------------------------------

    def apply(self, events: Sequence[EngineEvent], book: CallBook) -> None:
        """Take a batch of engine events: the mode, and usage as each response streams."""
        usage_changed = False
        for event in events:
            inner = event.event if isinstance(event, SubAgentEvent) else event
            if isinstance(inner, UsageUpdated):
                self.tally.update(inner.request_id, inner.model, inner.usage)
                usage_changed = True
            elif isinstance(event, ModeChanged):
                self.mode = event.mode
            elif isinstance(event, McpServerChanged):
                self._show_servers(book)
            elif isinstance(event, ContextMeasured):
                self._measured = event
                self._compacting = False  # none is measured while a summary is written
                self._show_context()
            elif isinstance(event, Compacting):
                self._compacting = True
                self._show_context()
            elif isinstance(event, Compacted | CompactionFailed | TurnEnded) and self._compacting:
                self._compacting = False
                self._show_context()
        if usage_changed:
            self.input_tokens = self.tally.input_tokens
            self.output_tokens = self.tally.output_tokens
            self.cost_usd = self._cost()

    def _show_servers(self, book: CallBook) -> None:
        servers = book.servers
        self._mcp_label.remove_class(*self.MCP_CLASSES)
        health = servers.health()
        if health != "none":
            self._mcp_label.add_class(f"-{health}")
        self.mcp = servers.summary()

    def _show_context(self) -> None:
        measured = self._measured
        fraction = None
        if measured is not None and measured.window > 0:
            fraction = measured.tokens / measured.window
        threshold = measured.threshold if measured is not None else None
        full = fraction is not None and (
            fraction > 1 or (threshold is not None and fraction >= threshold)
        )
        self._context_label.set_class(full, "-full")
        self.context = context_words(fraction, self._compacting)

    @property
    def usage(self) -> dict[str, int]:
        """The session's token counts so far, summed over every request."""
        return dict(self.tally.totals)

    def _cost(self) -> float | None:
        if self.tally.requests:
            return self.tally.cost_usd
        # Nothing spent yet: $0 for a model with a price, "cost unknown" for one without.
        return 0.0 if self.model and is_priced(self.model) else None

    # -- watchers --------------------------------------------------------------------------------

    def watch_mode(self, mode: str) -> None:
        self._mode_label.remove_class(*self.MODE_CLASSES)
        if mode in _MODE_WORDS:
            self._mode_label.add_class(f"-{mode}")
        self._say(self._mode_label, _MODE_WORDS.get(mode, mode))

    def watch_model(self, model: str) -> None:
        self._say(self._model_label, model or "no model")
        self.cost_usd = self._cost()

    def watch_session_id(self, session_id: str) -> None:
        self._say(
            self._session_label,
            f"session {session_id[:SESSION_ID_CHARS]}" if session_id else "new session",
        )

    def watch_input_tokens(self) -> None:
        self._show_tokens()

    def watch_output_tokens(self) -> None:
        self._show_tokens()

    def _show_tokens(self) -> None:
        self._say(
            self._tokens_label,
            f"{compact_count(self.input_tokens)} in · {compact_count(self.output_tokens)} out",
        )

    def watch_cost_usd(self, cost: float | None) -> None:
        self._say(self._cost_label, describe_cost(cost))

    def watch_sandbox(self, sandbox: str) -> None:
        self._sandbox_label.set_class(sandbox.startswith("sandbox: off"), "-off")
        self._sandbox_label.set_class("(" in sandbox and "off" not in sandbox, "-weak")
        self._say(self._sandbox_label, sandbox)

    def watch_mcp(self, mcp: str) -> None:
        self._say(self._mcp_label, mcp)

    def watch_context(self, context: str) -> None:
        self._say(self._context_label, context)

    def watch_activity(self) -> None:
        self._show_activity()

    def _show_activity(self) -> None:
        self._say(self._activity_label, self.activity)

    # -- fitting the line ------------------------------------------------------------------------

    def _say(self, label: Label, text: str) -> None:
        if self._texts.get(label) == text and label.is_mounted:
            return
        self._texts[label] = text
        if text and label.parent is None:
            self._join(label)
        self._fit()

    def _join(self, label: Label) -> None:
        """Put a segment left out of the first frame in its place on the line."""
        segments = self._segments
        following = segments[segments.index(label) + 1 :]
        anchor = next((other for other in following if other.parent is self), None)
        # (No anchor before compose, which then yields the label itself; none to mount on
        # once the screen is being taken down.)
        if anchor is not None and self.is_attached:
            self.mount(label, before=anchor)

    def _fit(self) -> None:
        """Show each segment that has something to say, less those `DROP_ORDER` gives up
        while the line is too narrow for them."""
        width = self.size.width
        shown = {label: text for label, text in self._texts.items() if text}
        hidden: set[str] = set()
        if width:  # (0 before the first layout: keep everything until the width is known)
            needed = sum(cell_len(text) + _PADDING for text in shown.values())
            by_id = {label.id: label for label in shown}
            for label_id, step in DROP_ORDER:
                if needed <= width:
                    break
                label = by_id.get(label_id)
                if label is None:
                    continue
                if step == "drop":
                    hidden.add(label_id)
                    needed -= cell_len(shown[label]) + _PADDING
                else:
                    short = SHORT_FORMS[label_id](shown[label])
                    needed -= cell_len(shown[label]) - cell_len(short)
                    shown[label] = short
        for label, text in self._texts.items():
            label.display = bool(text) and label.id not in hidden
            if text and self._shown.get(label) != shown[label]:
                self._shown[label] = shown[label]
                # The activity segment takes the rest of the line whatever it says, so its
                # words need no layout of the screen (they change every second in a turn).
                label.update(shown[label], layout=label is not self._activity_label)

    # -- events ----------------------------------------------------------------------------------

    def on_click(self, event: Click) -> None:
        if event.widget is self._mode_label:
            self.post_message(self.ModeClicked(self, self.mode))
        elif event.widget is self._mcp_label:
            self.post_message(self.McpClicked())
