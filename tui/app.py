"""The proctor app: one supervised session on screen.

The app owns the live session (core/agent/live.py) and nothing else of the engine's: turns
run as workers on the app's own loop, engine events come back through the `EventBridge`
a frame at a time, and the engine's questions are answered by modal dialogs (`DialogPorts`).
What a call is doing is kept once, in the `CallBook`, and every widget draws from it.

Startup is a worker too: it loads the engine (on a thread: pydantic, the tools and the
anthropic SDK take over a second to import), reads the settings, asks about trust when the
project brings its own settings or hooks, assembles the session, then (in the demo) sends
the scenario's prompt. So the first frame never waits for any of it, and this module
imports only what drawing needs; engine modules are imported where they are used.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer

from core.access.modes import MODE_LABELS
from core.agent.events import TurnEnded, UserMessage
from core.events import EngineEvent, ModeChanged
from themes import APP_STYLESHEET

from .bridge import EventBridge
from .calls import CallBook
from .screens.main import MAIN_SCREEN_STYLESHEET, MainScreen
from .theme_vars import THEME_VARIABLE_DEFAULTS
from .theming import register_themes, resolve_theme_name
from .turn_events import TurnStarted
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.status_bar import StatusBar
from .widgets.todos import TodoList
from .widgets.tool_queue import ToolQueue

if TYPE_CHECKING:
    from core.agent.live import LiveSession, PreparedSession
    from core.agent.model import ModelClient
    from core.agent.options import SessionOptions
    from core.permissions.session_sandbox import SessionSandbox

    from .ports import DialogPorts


def _prepare(session: PreparedSession | SessionOptions) -> PreparedSession | str:
    """Runs on a thread: imports the engine and reads settings. A string says why the
    session cannot start (no such session to resume, a broken scenario)."""
    import anthropic  # noqa: F401

    import core.agent.demo  # noqa: F401
    from core.agent.live import PreparedSession, prepare_session
    from core.agent.scenario import ScenarioError
    from core.agent.sessions import SessionNotFound

    if isinstance(session, PreparedSession):
        return session
    try:
        return prepare_session(session)
    except (ScenarioError, SessionNotFound) as error:
        return str(error)
    except OSError as error:  # the data directory cannot be written, say
        return f"the session cannot be set up: {error}"


@dataclass(frozen=True, slots=True)
class LaunchOptions:
    session: PreparedSession | SessionOptions
    """What to run: options (read and checked once the screen is up) or a prepared session."""
    theme: str | None = None
    trust: bool = False
    """--trust: trust the project without asking."""
    first_prompt: str | None = None
    """Sent as soon as the session is open."""
    play_demo: bool = False
    """Send the demo scenario's own prompt (unless carrying on a session)."""
    model: ModelClient | None = None
    """A model to use instead of the one settings name (tests)."""


class ProctorApp(App[int]):
    TITLE = "proctor"
    # The main screen is the default screen, drawn in the very first frame; a default screen's
    # own CSS_PATH is not loaded (only pushed screens' are), so the app loads it.
    CSS_PATH = [APP_STYLESHEET, MAIN_SCREEN_STYLESHEET]
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
        self.prepared: PreparedSession | None = None
        self.book = CallBook()
        self.live: LiveSession | None = None
        self._ports: DialogPorts | None = None
        self.bridge = EventBridge(self, self.deliver)
        self.queued_prompts: deque[str] = deque()
        self._turn_started: float | None = None
        self._turn_running = False
        self._quitting = False  # not `_closing`: Textual's message pump owns that name
        self._activity_timer: Timer | None = None
        self._session_failed = False
        self.theme_problems = register_themes(self)
        self.theme, problem = resolve_theme_name(self, options.theme)
        if problem:
            self.theme_problems.append(problem)

    @property
    def ports(self) -> DialogPorts:
        """The dialogs that answer the engine; made on first use, after the first frame."""
        if self._ports is None:
            from .ports import DialogPorts

            self._ports = DialogPorts(self, self.prepared.cwd if self.prepared else Path.cwd())
        return self._ports

    def get_default_screen(self) -> MainScreen:
        return MainScreen()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    # -- startup and shutdown -------------------------------------------------------------------

    def on_mount(self) -> None:
        self._activity_timer = self.set_interval(1.0, self._show_activity, name="activity")
        # After the first frame: the person sees the screen while the session is assembled.
        self.call_after_refresh(self.start_session)

    @work(exclusive=True, group="session")
    async def start_session(self) -> None:
        for note in self.theme_problems:
            self.conversation.add_notice(note, "warning")
        prepared = await asyncio.to_thread(_prepare, self.options.session)
        if isinstance(prepared, str):
            # Nothing has started yet: leave the screen and say why, like a bad argument.
            self.exit(return_code=2, message=f"proctor: {prepared}")
            return
        self._prepared(prepared)
        trusted = await self._ask_trust(prepared)
        from core.agent.live import open_session
        from core.agent.model import MissingApiKey

        try:
            live = await open_session(
                prepared,
                sink=self.bridge,
                trusted=trusted,
                permission_port=self.ports,
                user_port=self.ports,
                remember=self._remember,
                model=self.options.model,
            )
        except MissingApiKey as error:
            self._session_failed = True
            self.conversation.add_notice(str(error), "error")
            return
        except Exception as error:  # an unwritable data directory, say: say so, stay open
            self._session_failed = True
            self.log.error(f"the session could not start: {error!r}")
            self.conversation.add_notice(f"The session could not start: {error}", "error")
            return
        if self._quitting:  # the user quit while the session was being assembled
            await live.close()
            return
        self.live = live
        for note in self.live.notes:
            self.conversation.add_notice(note, "warning")
        await live.sandbox.support()  # probed on a thread since the session opened
        self.status_bar.sandbox = live.sandbox.status()
        if not live.sandbox.known_support.available:
            self.conversation.add_notice(_sandbox_missing(live.sandbox), "warning")
        self.status_bar.model = self.live.model.model
        self.status_bar.mode = self.live.mode
        if prepared.history:
            self.conversation.add_notice(
                f"carrying on session {prepared.session.id}: "
                f"{len(prepared.history)} earlier messages",
                "info",
            )
        first = self.options.first_prompt
        if first is None and self.options.play_demo and prepared.scenario and not prepared.resumed:
            first = prepared.scenario.prompt
        if first:
            self.queued_prompts.appendleft(first)  # before anything typed while starting
        self._send_next()

    def _prepared(self, prepared: PreparedSession) -> None:
        self.prepared = prepared
        self.book.set_project(prepared.cwd)
        self.ports.cwd = prepared.cwd
        from core.agent.sessions import project_dir

        self.prompt_input.use_history_file(project_dir(prepared.cwd) / "prompt-history.jsonl")
        status = self.status_bar
        status.session_id = prepared.session.id
        status.mode = prepared.options.mode or prepared.settings.default_mode or "default"
        for note in prepared.notes:
            self.conversation.add_notice(note, "warning")

    async def _ask_trust(self, prepared: PreparedSession) -> bool:
        """Whether the project's own settings and hooks apply; asks when it has any and the
        user has not said before (a project with none has nothing to trust or distrust)."""
        from core.settings.write import SettingsWriteError
        from core.trust import trust

        from .screens.trust import TrustScreen
        from .trust_findings import trust_findings

        findings = trust_findings(prepared.settings, prepared.cwd)
        if not findings or self.options.trust or prepared.previously_trusted:
            return True
        trusted = await self.push_screen_wait(TrustScreen(prepared.cwd, findings))
        if trusted:
            try:
                trust(prepared.cwd)
            except SettingsWriteError as error:
                self.conversation.add_notice(f"could not remember the trust: {error}", "error")
        return trusted

    def _remember(self, rule: str) -> Path:
        """ "Yes, and don't ask again": the rule goes to the project's local settings file."""
        from core.settings.write import SettingsWriteError, remember_allow_rule

        assert self.prepared is not None
        cwd = self.prepared.cwd
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
        self._quitting = True
        if self._activity_timer is not None:
            self._activity_timer.stop()
        self.workers.cancel_group(self, "session")  # a session still being assembled
        live = self.live
        if live is None:
            return
        self.notify("Stopping the turn, its commands and sub-agents…")
        live.interrupt()
        # Only the turn: the viewer's searches and the like need not finish first.
        turns = [worker for worker in self.workers if worker.group == "turn"]
        if turns:  # (an empty list would mean "every worker" to Textual)
            await self.workers.wait_for_complete(turns)
        await live.close()

    # -- prompts and turns ----------------------------------------------------------------------

    def on_prompt_input_prompt_sent(self, message: PromptInput.PromptSent) -> None:
        if self._session_failed:
            self.conversation.add_notice("The session did not start, so nothing is sent.", "error")
            return
        self.queued_prompts.append(message.text)
        if self.live is None or self._turn_running:
            self.conversation.add_notice(
                f"queued, sent after this turn: {message.text[:80]}", "info"
            )
            self._show_activity()
            return
        self._send_next()

    def _send_next(self) -> None:
        if self.live is None or self._turn_running or self._quitting or not self.queued_prompts:
            self._show_activity()
            return
        # Set before the worker starts (the loop says it is running only once it does), so
        # two prompts handled back to back never start two turns.
        self._turn_running = True
        self.run_turn(self.queued_prompts.popleft())

    @work(group="turn")
    async def run_turn(self, prompt: str) -> None:
        live = self.live
        assert live is not None
        self.bridge(TurnStarted(prompt=prompt))
        self._turn_started = time.monotonic()
        self._set_busy(True)
        stop_reason = "error"
        try:
            stop_reason = (await live.send(prompt)).stop_reason
        except Exception as error:  # the loop reports model errors itself; this is a bug
            self.log.error(f"the turn failed: {error!r}")
            self.conversation.add_notice(
                f"The turn stopped on an internal error: {error}. The session carries on.", "error"
            )
        finally:
            self._turn_started = None
            self._turn_running = False
            self._set_busy(False)
        if stop_reason == "interrupted":
            self._hold_queued_prompts()
        self.call_later(self._send_next)

    def _hold_queued_prompts(self) -> None:
        """Esc means stop: prompts queued during the turn go back into the input, unsent,
        rather than starting the agent again at once."""
        if not self.queued_prompts or self._quitting:
            return
        held = [*self.queued_prompts]
        self.queued_prompts.clear()
        prompt = self.prompt_input
        prompt.value = " ".join(filter(None, [prompt.value.strip(), *held]))
        prompt.cursor_position = len(prompt.value)
        self.conversation.add_notice(
            "Interrupted. Your queued prompt is back in the input: enter sends it.", "info"
        )

    def _set_busy(self, busy: bool) -> None:
        screen = self.main_screen
        for prompt in screen.query(PromptInput) if screen is not None else ():
            prompt.busy = busy  # (none while the app is closing)

    # -- events ---------------------------------------------------------------------------------

    def deliver(self, batch: Sequence[EngineEvent]) -> None:
        """A frame's worth of engine events: into the book, then onto the screen."""
        segment: list[EngineEvent] = []
        for event in batch:
            if isinstance(event, TurnStarted):
                self._draw(segment)
                segment = []
                self.book.begin_turn(event.prompt, event.at)
                with contextlib.suppress(NoMatches):  # (no conversation while closing)
                    self.conversation.add_prompt(event.prompt)
                continue
            try:
                self.book.apply(event)
                if isinstance(event, UserMessage):
                    self.book.take_results(event.content)
                elif isinstance(event, TurnEnded):
                    self.book.end_turn(event.stop_reason, event.at)
            except Exception as error:  # one odd event must not cost the rest of the frame
                self.log.error(f"could not take in {event!r}: {error!r}")
            segment.append(event)
        self._draw(segment)

    def _draw(self, events: list[EngineEvent]) -> None:
        if not events:
            return
        screen = self.main_screen
        if screen is None:
            return
        try:
            widgets = (self.conversation, self.tool_queue, self.todo_list, self.status_bar)
        except NoMatches:  # the screen is being built or torn down
            return
        for widget in widgets:
            try:
                widget.apply(events, self.book)
            except Exception as error:  # one broken widget must not take the others down
                self.log.error(f"{type(widget).__name__} could not draw: {error!r}")
        if any(isinstance(e, ModeChanged) for e in events):
            self._show_activity()

    def _show_activity(self) -> None:
        screen = self.main_screen
        if screen is None or not screen.is_mounted:
            return  # closing: the widgets may be gone already
        waiting = self._ports.waiting_permissions if self._ports is not None else 0
        parts = []
        if self._session_failed:
            parts.append("the session did not start")
        elif self.live is None:
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
        for bar in screen.query(StatusBar):  # none while the screen is built or torn down
            bar.activity = " · ".join(parts)

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
        from .screens.outputs import SavedOutputsScreen

        self.push_screen(SavedOutputsScreen(self.saved_output_entries))

    def saved_output_entries(self) -> list[Any]:
        from .saved_entries import saved_output_entries

        if self.prepared is None:
            return []
        return saved_output_entries(self.prepared.session.directory, self.book)

    def on_tool_queue_call_selected(self, message: ToolQueue.CallSelected) -> None:
        """Enter on a queue row: its saved or still-streaming output, if it has one."""
        record = self.book.calls.get(message.tool_use_id)
        if record is None:
            return
        from .saved_entries import resolved

        wanted = {resolved(record.persisted), resolved(record.spool)} - {None}
        entry = next((e for e in self.saved_output_entries() if resolved(e.path) in wanted), None)
        if entry is None:
            self.notify(f"{record.tool_name} {record.summary}: no saved output to show.")
            return
        from .screens.viewer import OutputViewerScreen

        self.push_screen(OutputViewerScreen(entry))

    def action_toggle_todos(self) -> None:
        self.todo_list.toggle_class("-hidden")

    def action_help(self) -> None:
        from .screens.help import HelpScreen

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

        self.push_screen(SessionsScreen(self.prepared.cwd if self.prepared else Path.cwd()))

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


def _sandbox_missing(sandbox: SessionSandbox) -> str:
    """Said once at start: no sandbox, what that means, and what the settings make of it."""
    status = sandbox.status().removeprefix("sandbox: ")
    if sandbox.settings.enabled and sandbox.settings.fail_if_unavailable:
        return f"The sandbox is {status}: commands will not run at all (failIfUnavailable)."
    return (
        f"The sandbox is {status}. Commands the analysis judges read-only run without it, "
        "as before; set sandbox.failIfUnavailable to refuse them instead."
    )
