"""The proctor app: one supervised session on screen.

The app owns the live session (core/agent/live.py) and nothing else of the engine's: turns
run as workers on the app's own loop, engine events come back through the `EventBridge`
a frame at a time, and the engine's questions are answered by modal dialogs (`DialogPorts`).
What a call is doing is kept once, in the `CallBook`, and every widget draws from it.

Startup is a worker too: it asks about trust when the project brings its own settings or
hooks, assembles the session, then (in the demo) sends the scenario's prompt, so the first
frame never waits for any of it.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from core.agent.live import LiveSession, PreparedSession, open_session
from core.agent.loop import TurnEnded, UserMessage
from core.agent.model import MissingApiKey, ModelClient
from core.events import EngineEvent, ModeChanged
from core.permissions.modes import MODE_LABELS
from core.settings import SettingsWriteError, remember_allow_rule
from core.trust import trust
from themes import APP_STYLESHEET

from .bridge import EventBridge
from .calls import CallBook
from .ports import DialogPorts
from .screens.help import HelpScreen
from .screens.main import MainScreen
from .screens.outputs import SavedOutputsScreen
from .screens.trust import TrustScreen
from .theme_vars import THEME_VARIABLE_DEFAULTS
from .theming import register_themes, resolve_theme_name
from .trust_findings import trust_findings
from .turn_events import TurnStarted
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.status_bar import StatusBar
from .widgets.todos import TodoList
from .widgets.tool_queue import ToolQueue


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    prepared: PreparedSession
    theme: str | None = None
    trust: bool = False
    """--trust: trust the project without asking."""
    first_prompt: str | None = None
    """Sent as soon as the session is open (the demo's scenario prompt)."""
    model: ModelClient | None = None
    """A model to use instead of the one settings name (tests)."""


class ProctorApp(App[int]):
    TITLE = "proctor"
    CSS_PATH = APP_STYLESHEET
    BINDINGS = [
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding("escape", "interrupt", "Interrupt"),
        Binding("ctrl+o", "saved_outputs", "Saved output"),
        Binding("ctrl+t", "toggle_todos", "Todos"),
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(self, options: LaunchOptions) -> None:
        super().__init__()
        self.options = options
        self.book = CallBook(cwd=options.prepared.cwd)
        self.live: LiveSession | None = None
        self.ports = DialogPorts(self, options.prepared.cwd)
        self.bridge = EventBridge(self, self.deliver)
        self.queued_prompts: deque[str] = deque()
        self._turn_started: float | None = None
        self.theme_problems = register_themes(self)
        self.theme, problem = resolve_theme_name(self, options.theme)
        if problem:
            self.theme_problems.append(problem)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    # -- startup and shutdown -------------------------------------------------------------------

    async def on_mount(self) -> None:
        # Pushed rather than made the default screen: only a pushed screen loads its CSS_PATH.
        await self.push_screen(MainScreen())
        status = self.status_bar
        prepared = self.options.prepared
        status.session_id = prepared.session.id
        status.mode = prepared.options.mode or prepared.settings.default_mode or "default"
        for note in (*prepared.notes, *self.theme_problems):
            self.conversation.add_notice(note, "warning")
        self.set_interval(1.0, self._show_activity, name="activity")
        self.start_session()

    @work(exclusive=True, group="session")
    async def start_session(self) -> None:
        prepared = self.options.prepared
        trusted = self.options.trust or prepared.previously_trusted
        findings = trust_findings(prepared.settings, prepared.cwd)
        if findings and not trusted:
            trusted = await self.push_screen_wait(TrustScreen(prepared.cwd, findings))
            if trusted:
                try:
                    trust(prepared.cwd)
                except SettingsWriteError as error:
                    self.conversation.add_notice(f"could not remember the trust: {error}", "error")
        try:
            self.live = await open_session(
                prepared,
                sink=self.bridge,
                trusted=trusted or not findings,
                permission_port=self.ports,
                user_port=self.ports,
                remember=self._remember,
                model=self.options.model,
            )
        except MissingApiKey as error:
            self.conversation.add_notice(str(error), "error")
            return
        for note in self.live.notes:
            self.conversation.add_notice(note, "warning")
        self.status_bar.model = self.live.model.model
        self.status_bar.mode = self.live.mode
        if prepared.history:
            self.conversation.add_notice(
                f"carrying on session {prepared.session.id}: "
                f"{len(prepared.history)} earlier messages",
                "info",
            )
        if self.options.first_prompt:
            self.queued_prompts.append(self.options.first_prompt)
        self._send_next()

    def _remember(self, rule: str) -> Path:
        """ "Yes, and don't ask again": the rule goes to the project's local settings file."""
        cwd = self.options.prepared.cwd
        try:
            return remember_allow_rule(cwd, rule)
        except SettingsWriteError as error:
            self.conversation.add_notice(f"{error} (allowed for this session only)", "error")
            return cwd

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    async def shutdown(self) -> None:
        """Stop the turn, the shells and the sub-agents; close the transcript."""
        live = self.live
        if live is None:
            return
        live.interrupt()
        await self.workers.wait_for_complete()
        await live.close()

    # -- prompts and turns ----------------------------------------------------------------------

    def on_prompt_input_prompt_sent(self, message: PromptInput.PromptSent) -> None:
        self.queued_prompts.append(message.text)
        if self.live is None or self.live.loop.running:
            self.conversation.add_notice(
                f"queued, sent after this turn: {message.text[:80]}", "info"
            )
            self._show_activity()
            return
        self._send_next()

    def _send_next(self) -> None:
        if self.live is None or self.live.loop.running or not self.queued_prompts:
            self._show_activity()
            return
        self.run_turn(self.queued_prompts.popleft())

    @work(group="turn")
    async def run_turn(self, prompt: str) -> None:
        live = self.live
        assert live is not None
        self.bridge(TurnStarted(prompt=prompt))
        self._turn_started = time.monotonic()
        self._set_busy(True)
        try:
            await live.send(prompt)
        finally:
            self._turn_started = None
            self._set_busy(False)
            self.call_later(self._send_next)

    def _set_busy(self, busy: bool) -> None:
        if self.main_screen is not None:  # gone when the app is closing
            self.prompt_input.busy = busy

    # -- events ---------------------------------------------------------------------------------

    def deliver(self, batch: Sequence[EngineEvent]) -> None:
        """A frame's worth of engine events: into the book, then onto the screen."""
        segment: list[EngineEvent] = []
        for event in batch:
            if isinstance(event, TurnStarted):
                self._draw(segment)
                segment = []
                self.book.begin_turn(event.prompt, event.at)
                self.conversation.add_prompt(event.prompt)
                continue
            self.book.apply(event)
            if isinstance(event, UserMessage):
                self.book.take_results(event.content)
            elif isinstance(event, TurnEnded):
                self.book.end_turn(event.stop_reason, event.at)
            segment.append(event)
        self._draw(segment)

    def _draw(self, events: list[EngineEvent]) -> None:
        if not events:
            return
        screen = self.main_screen
        if screen is None:
            return
        for widget in (self.conversation, self.tool_queue, self.todo_list, self.status_bar):
            try:
                widget.apply(events, self.book)
            except Exception as error:  # one broken widget must not take the others down
                self.log.error(f"{type(widget).__name__} could not draw: {error!r}")
        if any(isinstance(e, ModeChanged) for e in events):
            self._show_activity()

    def _show_activity(self) -> None:
        if self.main_screen is None:
            return
        waiting = self.ports.waiting_permissions
        parts = []
        if self.live is None:
            parts.append("starting")
        elif waiting:
            parts.append(f"{waiting} waiting for approval")
        elif self._turn_started is not None:
            parts.append(f"working {time.monotonic() - self._turn_started:.0f} s")
        else:
            parts.append("idle")
        if self.queued_prompts:
            count = len(self.queued_prompts)
            parts.append(f"{count} prompt{'s' if count > 1 else ''} queued")
        self.status_bar.activity = " · ".join(parts)

    # -- keys -----------------------------------------------------------------------------------

    def action_cycle_mode(self) -> None:
        if self.live is None:
            self.notify("The session is still starting.", severity="warning")
            return
        mode = self.live.cycle_mode()
        self.status_bar.mode = mode  # at once, without waiting for the event's frame

    def set_mode(self, mode: Any) -> None:
        if self.live is not None:
            self.status_bar.mode = self.live.set_mode(mode)

    def action_interrupt(self) -> None:
        if self.live is not None and self.live.loop.running:
            self.live.interrupt()
            self.notify("Interrupted: the running calls are being stopped.")

    def action_saved_outputs(self) -> None:
        self.push_screen(SavedOutputsScreen(self.saved_output_entries))

    def saved_output_entries(self) -> list[Any]:
        from .saved_entries import saved_output_entries

        return saved_output_entries(self.options.prepared.session.directory, self.book)

    def action_toggle_todos(self) -> None:
        self.todo_list.toggle_class("-hidden")

    def action_help(self) -> None:
        self.push_screen(HelpScreen())

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.live is not None:
            for mode in self._reachable_modes():
                yield SystemCommand(
                    f"Mode: {MODE_LABELS[mode]}",
                    f"Switch the permission mode to {MODE_LABELS[mode]}",
                    lambda mode=mode: self.set_mode(mode),
                )
        yield SystemCommand(
            "Saved outputs", "Browse tool results saved to disk", self.action_saved_outputs
        )
        yield SystemCommand("Todos", "Show or hide the todo list", self.action_toggle_todos)
        yield SystemCommand("Sessions", "This project's sessions", self.action_sessions)

    def _reachable_modes(self) -> list[Any]:
        assert self.live is not None
        modes = list(self.live.mode_cycle)
        if not self.live.context.permission_context.bypass_available:
            modes = [m for m in modes if m != "bypassPermissions"]
        return modes

    def action_sessions(self) -> None:
        from .screens.sessions import SessionsScreen

        self.push_screen(SessionsScreen(self.options.prepared.cwd))

    # -- the main screen's widgets ----------------------------------------------------------------

    @property
    def main_screen(self) -> MainScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def _widget(self, selector: str, kind: type[Any]) -> Any:
        screen = self.main_screen
        assert screen is not None
        return screen.query_one(selector, kind)

    @property
    def conversation(self) -> Conversation:
        return self._widget("#conversation", Conversation)  # type: ignore[no-any-return]

    @property
    def tool_queue(self) -> ToolQueue:
        return self._widget("#queue", ToolQueue)  # type: ignore[no-any-return]

    @property
    def todo_list(self) -> TodoList:
        return self._widget("#todos", TodoList)  # type: ignore[no-any-return]

    @property
    def status_bar(self) -> StatusBar:
        return self._widget("#status", StatusBar)  # type: ignore[no-any-return]

    @property
    def prompt_input(self) -> PromptInput:
        return self._widget("#prompt", PromptInput)  # type: ignore[no-any-return]
