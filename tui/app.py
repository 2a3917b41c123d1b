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

The app is one class in layers, because Textual looks for actions, handlers and bindings on
the app itself: `AppBase` (app_base.py: the shared state, the main screen's widgets) under
`KeyActions` (keys.py: the keys and what they do) under `ProctorApp` here (the session, its
turns and its events). The command palette's entries are in palette.py, what the app is
launched with and the start-up work off the message loop in launch.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import SystemCommand
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.timer import Timer

from core.access.modes import MODE_LABELS
from core.agent.events import RecordNotWritten, TurnEnded
from core.events import CommandPrepared, EngineEvent, McpServerChanged, ModeChanged
from themes import APP_STYLESHEET

from .bridge import EventBridge
from .calls import CallBook
from .collector import freeze_long_lived, release_after_first_frame
from .keys import KeyActions
from .launch import LaunchOptions as LaunchOptions  # where callers have always found it
from .launch import prepare, sandbox_missing
from .palette import palette_commands, replaced_system_commands
from .screens.main import MAIN_SCREEN_STYLESHEET, MainScreen
from .theme_vars import THEME_VARIABLE_DEFAULTS
from .theming import register_themes, resolve_theme_name
from .turn_events import TurnStarted
from .widgets.prompt_input import PromptInput
from .widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from core.agent.live import LiveSession, PreparedSession

    from .ports import DialogPorts


class ProctorApp(KeyActions):
    """The app; its keys and what they do are `KeyActions` (keys.py)."""

    TITLE = "proctor"
    # The main screen is the default screen, drawn in the very first frame; a default screen's
    # own CSS_PATH is not loaded (only pushed screens' are), so the app loads it.
    CSS_PATH = [APP_STYLESHEET, MAIN_SCREEN_STYLESHEET]

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
        release_after_first_frame()  # tui/collector.py
        prepared = await asyncio.to_thread(prepare, self.options.session)
        if isinstance(prepared, str):
            # Nothing has started yet: leave the screen and say why, like a bad argument.
            self.exit(return_code=2, message=f"proctor: {prepared}")
            return
        self._prepared(prepared)
        if prepared.resumed:  # the earlier turns, drawn before anything new happens
            from .past import past_batch

            self.deliver(past_batch(prepared.past))
        trusted = await self._ask_trust(prepared)
        await self._read_commands(prepared)
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
                project_trusted=self.options.trust or None,
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
        self._add_skill_commands(live)
        freeze_long_lived()  # the engine is loaded: later collections skip all of it
        for note in self.live.notes:
            self.conversation.add_notice(note, "warning")
        await live.sandbox.support()  # probed on a thread since the session opened
        self.status_bar.sandbox = live.sandbox.status()
        if not live.sandbox.known_support.available:
            self.conversation.add_notice(sandbox_missing(live.sandbox), "warning")
        self.status_bar.model = self.live.model.model
        self.status_bar.mode = self.live.mode
        if prepared.resumed:
            from .past import carrying_on

            past = prepared.past
            mode = MODE_LABELS.get(live.mode, live.mode)
            said = carrying_on(prepared.session.id, past.turns, past.hidden_turns, mode)
            self.conversation.add_notice(said, "info")
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

        # (the session's project: for the demo, the sample, not each scratch copy of it)
        history = project_dir(prepared.session.project) / "prompt-history.jsonl"
        self.prompt_input.use_history_file(history)
        status = self.status_bar
        status.session_id = prepared.session.id
        status.mode = prepared.options.mode or prepared.settings.default_mode or "default"
        for note in prepared.notes:
            self.conversation.add_notice(note, "warning")

    async def _ask_trust(self, prepared: PreparedSession) -> bool:
        """Whether the project's own settings and hooks apply; asks when it has any and the
        user has not said before (a project with none has nothing to trust or distrust)."""
        from core.agent.skills import project_skill_files
        from core.settings.write import SettingsWriteError
        from core.trust import trust

        from .screens.trust import TrustScreen
        from .trust_findings import trust_findings

        findings = trust_findings(
            prepared.settings,
            prepared.cwd,
            prepared.instructions,
            project_skill_files(prepared.cwd),
        )
        if not findings or self.options.trust or prepared.previously_trusted:
            return True
        trusted = await self.push_screen_wait(TrustScreen(prepared.cwd, findings))
        if trusted:
            try:
                trust(prepared.cwd)
            except SettingsWriteError as error:
                self.conversation.add_notice(f"could not remember the trust: {error}", "error")
        return trusted

    async def _read_commands(self, prepared: PreparedSession) -> None:
        """The project's and the user's slash commands, for completion and for sending."""
        from core.agent.command_files import load_custom_commands
        from core.agent.commands import CommandRegistry

        custom, problems = await asyncio.to_thread(
            load_custom_commands, prepared.cwd, claude_user=prepared.settings.read_claude
        )
        # Not complete yet: the skills a person may run join once the session has them.
        self.prompt_input.commands = CommandRegistry(custom, complete=False)
        for problem in problems:
            self.conversation.add_notice(f"slash command: {problem}", "warning")
        for hidden in self.prompt_input.commands.shadowed():
            self.conversation.add_notice(
                f"slash command: {hidden.path} is hidden by the built-in /{hidden.name}", "warning"
            )

    def _add_skill_commands(self, live: LiveSession) -> None:
        """The session's skills a person may run become `/name` commands (known only now:
        a project's skills wait for trust); /mcp is listed when there are servers."""
        from core.agent.commands import CommandRegistry
        from core.agent.skills import skill_commands

        custom = self.prompt_input.commands.custom
        skills, notes = skill_commands(live.skills, custom)
        has_mcp = live.mcp is not None and bool(live.mcp.connections)
        self.prompt_input.commands = CommandRegistry([*custom, *skills], has_mcp)
        for note in notes:
            self.conversation.add_notice(note, "warning")
        for hidden in self.prompt_input.commands.shadowed():
            if hidden.skill:
                self.conversation.add_notice(
                    f"skill: {hidden.path} is not /{hidden.name}: that is a built-in", "warning"
                )

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
        from .slash import handle_line  # slash commands: built-ins run here, custom expand

        prompt = handle_line(self, message.text)
        if prompt is None:
            return
        self.queued_prompts.append(prompt)
        if self.live is None or self._turn_running:
            typed = getattr(prompt, "typed", prompt)  # a command's line, not its expansion
            self.conversation.add_notice(f"queued, sent after this turn: {typed[:80]}", "info")
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
        typed = getattr(prompt, "typed", prompt)  # a slash command's line (CommandPrompt)
        expansion = str(prompt) if typed != prompt else ""
        self.bridge(TurnStarted(prompt=typed, expansion=expansion))
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

    def compact(self, instructions: str = "") -> None:
        """Compact the conversation now, between turns (the palette; `/compact`)."""
        if self.live is None or self._turn_running:
            self.conversation.add_notice(
                "Compaction waits for the turn to end: ask again when it has.", "info"
            )
            return
        self._turn_running = True  # nothing else is sent while the summary is written
        self.run_compaction(instructions)

    @work(group="turn")
    async def run_compaction(self, instructions: str) -> None:
        live = self.live
        assert live is not None
        self._set_busy(True)
        self._turn_started = time.monotonic()  # the status bar says "working" meanwhile
        try:
            await live.compact(instructions)  # failures arrive as a CompactionFailed event
        except Exception as error:
            self.conversation.add_notice(
                f"Compaction stopped on an internal error: {error}", "error"
            )
        finally:
            self._turn_started = None
            self._turn_running = False
            self._set_busy(False)
        self.call_later(self._send_next)

    @property
    def turn_running(self) -> bool:
        """A turn or a compaction is under way (set before its worker starts)."""
        return self._turn_running

    async def switch_session(self, prepared: PreparedSession) -> None:
        """`/resume`: close this session as quitting does, then start `prepared` on a fresh
        main screen, as at start-up (tui/resume.py checks that nothing is running)."""
        from dataclasses import replace

        from core.agent.live import end_workspace

        old, live = self.prepared, self.live
        self.live = None
        if live is not None:
            await live.close("resumed another session")
        self.bridge.flush()  # the old session's last events, to the old screen
        said = end_workspace(old) if old is not None and old.cwd != prepared.cwd else None
        self.book = CallBook()
        self.queued_prompts.clear()
        self._session_failed = False
        self.theme_problems = []  # said once, at start
        self.options = replace(self.options, session=prepared, first_prompt=None, play_demo=False)
        screen = self.main_screen
        if screen is not None:
            await screen.recompose()
        if said:
            self.conversation.add_notice(said, "info")
        self.start_session()

    @work(exclusive=True, group="resume")
    async def resume_session(self, wanted: str) -> None:
        """`/resume ID`, or a pick in the sessions list opened by `/resume` (tui/resume.py)."""
        from .resume import resume_in_place

        await resume_in_place(self, wanted)

    def _hold_queued_prompts(self) -> None:
        """Esc means stop: prompts queued during the turn go back into the input, unsent,
        rather than starting the agent again at once."""
        if not self.queued_prompts or self._quitting:
            return
        from core.agent.commands import CommandPrompt

        # A command goes back as it was typed (`/review 12`), not as the prompt a project's
        # file expanded it into, which enter would otherwise send as if typed by hand (and
        # a body such as `/permissions allow Bash` would then run as the built-in).
        held = [p.typed if isinstance(p, CommandPrompt) else p for p in self.queued_prompts]
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
                    self.conversation.add_prompt(event.prompt, event.expansion)
                continue
            if isinstance(event, CommandPrepared):  # the text really sent, once prepared
                with contextlib.suppress(NoMatches):
                    self.conversation.show_prepared(event.text)
                continue
            try:
                self.book.apply(event)
                if isinstance(event, TurnEnded):
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
        if any(isinstance(e, McpServerChanged) for e in events):
            self._show_servers()
        for event in events:
            if isinstance(event, RecordNotWritten):  # said once per session by the engine
                said = event.describe()
                self.notify(
                    f"{said[:1].upper()}{said[1:]}. Calls are decided as before.",
                    title="Session record",
                    severity="error",
                    timeout=30,
                )

    def _show_servers(self) -> None:
        """An open servers screen follows the servers' states as they change."""
        from .screens.mcp import McpServersScreen

        for screen in self.screen_stack:
            if isinstance(screen, McpServersScreen) and screen.is_mounted:
                screen.show_servers()

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

    # -- the command palette: its entries are in palette.py ------------------------------------

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in replaced_system_commands:
                yield command
        yield from palette_commands(self)
