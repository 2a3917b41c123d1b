"""Headless runs (`proctor -p "prompt"`): the whole engine, no screen, nobody to ask.

A headless session is assembled exactly like an interactive one (settings, trust, the
permission context, hooks, the audit log, the transcript, the tool pool) with two
differences: no port answers questions, so a call that would ask is refused with a message to
the model (unless the mode and rules allow it), and what happens is printed as text, one JSON
document, or JSON lines (`stream-json`) for scripts.

Text mode is for people: the assistant's words on stdout, and on stderr one line per finished
call and a line per retry or error, all in words (never an internal value like
`sibling_error`). Text is printed a block at a time, when the block ends (a call starts, or
the message is complete): so every call line starts a line of its own, and a stream that
breaks and is retried never leaves its broken beginning on the screen.

Thinking is not printed in text mode unless asked (`--show-thinking`): stdout is often piped
into something that wants the answer alone, and a thought can run to pages. Asked, each of
the main agent's thoughts goes to stderr when it is complete, indented under a `thinking:`
line and dim on a terminal, so the answer on stdout stays clean. json and stream-json carry
thinking as the API sent it: the blocks (signatures included) in each assistant message.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, TextIO

from .. import __version__
from ..access.context import PermissionMode
from ..access.mcp_names import display_name
from ..events import (
    CANCEL_WORDS,
    EngineEvent,
    McpServerChanged,
    SubAgentEvent,
    ToolCancelled,
    ToolCompleted,
    ToolEvent,
    ToolQueued,
    failure_words,
)
from ..settings.read import SettingsFileError
from .events import (
    CommandNotice,
    Compacted,
    CompactionFailed,
    InstructionsJoined,
    RecordNotWritten,
    ThinkingDelta,
    UsageUpdated,
)
from .lifespan import start_up_done
from .live import LiveSession, end_workspace, open_session, prepare_session
from .loop import (
    AssistantMessage,
    HookNotice,
    Retrying,
    TextDelta,
    TurnEnded,
    TurnError,
    UserMessage,
)
from .model import MissingApiKey
from .options import SessionOptions
from .pricing import UsageTally
from .sessions import SessionNotFound
from .transcript_records import event_record

OutputFormat = Literal["text", "json", "stream-json"]


@dataclass(frozen=True, slots=True)
class HeadlessOptions:
    prompt: str | None
    cwd: Path
    output_format: OutputFormat = "text"
    demo: bool = False
    scenario: str | None = None
    model: str | None = None
    mode: PermissionMode | None = None
    allow_bypass: bool = False
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()
    max_turns: int = 100
    trust: bool = False
    demo_speed: float = 1.0
    resume: str | None = None
    """A session id (or a unique prefix) of this project to carry on."""
    continue_latest: bool = False
    """Carry on the project's most recently active session."""
    settings_file: Path | None = None
    """`--settings FILE`: one more settings file for this run."""
    keep_workspace: bool = False
    """Keep the demo's scratch workspace after the run."""
    show_thinking: bool = False
    """Text mode: print the model's thinking on stderr (`--show-thinking`)."""

    def session_options(self) -> SessionOptions:
        """The options every front end shares (this class has them all, by the same names)."""
        return SessionOptions(**{f.name: getattr(self, f.name) for f in fields(SessionOptions)})


@dataclass
class _Printer:
    """The sink: prints as the chosen format wants, and keeps what the summary needs."""

    out: TextIO
    output_format: OutputFormat
    pending: list[str] = field(default_factory=list)
    """Text mode: the text block streaming now, printed whole when it ends."""
    spoke: bool = False
    """Text mode: something was printed already (the next text block is set apart)."""
    nested: dict[str, list[str]] = field(default_factory=dict)
    """Text mode: a sub-agent's finished calls by its Task call, printed under that call's
    line once it is printed."""
    final: str = ""
    """The text of the last assistant message: the run's answer."""
    summaries: dict[str, str] = field(default_factory=dict)
    tally: UsageTally = field(default_factory=UsageTally)
    """Every request's usage as it streamed, sub-agents' included: the run's cost."""
    show_thinking: bool = False
    """Text mode: each finished thought on stderr."""
    thought: list[str] = field(default_factory=list)
    """Text mode, showing thinking: the thought streaming now, said whole when it ends."""
    held: list[EngineEvent] | None = field(default_factory=list)
    """stream-json: events from before the `init` line (MCP servers starting), written
    after it so that a reader's first line is always `init`; None once it is written."""

    def begin(self, init: dict[str, Any]) -> None:
        self._line(init)
        held, self.held = self.held or [], None
        for event in held:
            self(event)

    def __call__(self, event: EngineEvent) -> None:
        usage = event.event if isinstance(event, SubAgentEvent) else event
        if isinstance(usage, UsageUpdated):
            self.tally.update(usage.request_id, usage.model, usage.usage)
        if self.held is not None and self.output_format == "stream-json":
            self.held.append(event)
            return
        if isinstance(event, AssistantMessage):
            self.final = "".join(
                str(b.get("text", "")) for b in event.content if b.get("type") == "text"
            )
        if self.output_format == "stream-json":
            if isinstance(event, ToolEvent) and event.kind == "progress":
                self._line(event_record(event))
            elif isinstance(event, AssistantMessage | UserMessage):
                role = "assistant" if isinstance(event, AssistantMessage) else "user"
                self._line(
                    {"type": role, "message": {"role": role, "content": list(event.content)}}
                )
            elif not isinstance(event, TextDelta | ThinkingDelta):
                self._line(event_record(event))
        elif isinstance(event, ThinkingDelta):
            if self.output_format == "text" and self.show_thinking:
                self._think(event)
        elif isinstance(event, TextDelta):
            if self.output_format == "text":
                self._print_thought()  # the thought above the words it led to
                self.pending.append(event.text)
        elif self.output_format == "text":
            if not isinstance(event, Retrying):
                self._print_thought()
            self._narrate(event)

    def _narrate(self, event: EngineEvent) -> None:
        """Text mode: the assistant's words on stdout, one line per finished call on stderr."""
        if isinstance(event, AssistantMessage):
            self._print_text()
        elif isinstance(event, Retrying):
            self.pending.clear()  # the retried response says it again
            self.thought.clear()
            self._say(f"proctor: {event.describe()}")
        elif isinstance(event, TurnError):
            self._print_text()  # what the last attempt said before it broke, as on screen
            self._say(f"proctor: {event.message}")
        elif isinstance(event, HookNotice):
            self._print_text()
            self._say(f"proctor: hook: {event.text}")
        elif isinstance(event, RecordNotWritten):
            self._say(f"proctor: {event.describe()}")
        elif isinstance(event, CommandNotice):
            self._say(f"proctor: {event.text}")
        elif isinstance(event, Compacted):
            self._print_text()
            self._say(f"proctor: conversation compacted ({event.messages_replaced} messages)")
        elif isinstance(event, CompactionFailed):
            self._say(f"proctor: {event.message}")
        elif isinstance(event, InstructionsJoined):
            self._say(f"proctor: {event.describe()}")
        elif isinstance(event, SubAgentEvent) and isinstance(event.event, InstructionsJoined):
            # The sub-agent's instructions changed: said under its Task call's line.
            self.nested.setdefault(event.agent_id, []).append(f"    {event.event.describe()}")
        elif isinstance(event, McpServerChanged) and event.state in ("failed", "crashed"):
            what = "failed to start" if event.state == "failed" else "crashed"
            detail = event.detail.replace("\n", "\n  ")
            self._say(f"proctor: MCP server {event.server} {what}: {detail}")
        elif isinstance(event, ToolQueued):
            if event.parent_tool_use_id is None:  # a sub-agent's call ends no block of ours
                self._print_text()  # the text before a call is a block of its own, said first
            self.summaries[event.tool_use_id] = f"{display_name(event.tool_name)}({event.summary})"
        elif isinstance(event, ToolCompleted | ToolCancelled):
            call = self.summaries.get(event.tool_use_id, display_name(event.tool_name))
            if isinstance(event, ToolCancelled):
                state = CANCEL_WORDS.get(event.reason, f"cancelled: {event.reason}")
            else:
                state = failure_words(event.failed_stage) if event.is_error else "done"
                if event.ended == "denied":  # not run: someone said no, nothing broke
                    state = "denied"
                if event.sandbox is not None:
                    state += f", {_SANDBOX_WORDS[event.sandbox]}"
            parent = event.parent_tool_use_id
            if parent is not None:  # a sub-agent's call: said under its Task call's line
                self.nested.setdefault(parent, []).append(f"    {call} — {state}")
                return
            self._say(f"  {call} — {state}")
            for line in self.nested.pop(event.tool_use_id, []):
                self._say(line)
        elif isinstance(event, TurnEnded):
            for lines in self.nested.values():  # a Task call that never finished
                for line in lines:
                    self._say(line)
            self.nested.clear()

    def _think(self, event: ThinkingDelta) -> None:
        if event.redacted:  # a whole block, with nothing to read
            self._print_thought()
            self._say(self._dim("thinking (redacted)"))
        else:
            self.thought.append(event.text)

    def _print_thought(self) -> None:
        """The thought streamed so far, on stderr: a `thinking:` line, then its text indented."""
        text = "".join(self.thought).strip()
        self.thought.clear()
        if not text:
            return
        self._print_text()  # words streamed before the thought are said before it
        body = "\n".join("  " + line if line else "" for line in text.splitlines())
        self._say(self._dim(f"thinking:\n{body}"))

    @staticmethod
    def _dim(text: str) -> str:
        """Dim on a terminal (thinking is background to the answer); plain when piped."""
        return f"\x1b[2m{text}\x1b[0m" if sys.stderr.isatty() else text

    def _print_text(self) -> None:
        """The text block streamed so far, on lines of its own, set apart from what came
        before by a blank line."""
        text = "".join(self.pending)
        self.pending.clear()
        if not text.strip():
            return
        if self.spoke:
            self.out.write("\n")
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()
        self.spoke = True

    def _say(self, line: str) -> None:
        """A line for the person on stderr; stdout is always at a line's start here."""
        print(line, file=sys.stderr)
        self.spoke = True

    def _line(self, record: dict[str, Any]) -> None:
        self.out.write(json.dumps(record, default=str) + "\n")
        self.out.flush()


def _server_states(live: LiveSession) -> list[dict[str, Any]]:
    servers = live.mcp
    if servers is None:
        return []
    states = [
        {"name": name, "status": connection.state, "tools": connection.tool_count}
        for name, connection in servers.connections.items()
    ]
    states += [{"name": c.name, "status": "skipped", "tools": 0} for c in servers.untrusted]
    return sorted(states, key=lambda state: str(state["name"]))


_SANDBOX_WORDS = {
    "read-only": "read-only sandbox",
    "workspace": "workspace sandbox",
    "none": "not sandboxed",
}


async def run_headless(options: HeadlessOptions, out: TextIO = sys.stdout) -> int:
    """Run one prompt to the end. Exit status: 0 done, 1 the turn failed or no key."""
    try:
        prepared = prepare_session(options.session_options())
    except (SessionNotFound, SettingsFileError) as error:
        print(f"proctor: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # the data directory cannot be written, say
        print(f"proctor: the session cannot be set up: {error}", file=sys.stderr)
        return 2
    prompt = options.prompt or (prepared.scenario.prompt if prepared.scenario else None)
    if not prompt:
        print("proctor: give a prompt with -p", file=sys.stderr)
        return 2
    for note in prepared.notes:
        print(f"proctor: {note}", file=sys.stderr)
    expanded = headless_command(
        prompt,
        prepared.cwd,
        out,
        options.output_format,
        project_skills=options.trust or prepared.previously_trusted,  # as open_session reads it
        claude_user=prepared.settings.read_claude,
    )
    if isinstance(expanded, int):  # nothing reached the model: no session to keep
        if not prepared.resumed:
            shutil.rmtree(prepared.session.directory, ignore_errors=True)
        said = end_workspace(prepared)
        if said:
            print(f"proctor: {said}", file=sys.stderr)
        return expanded
    prompt = expanded

    printer = _Printer(out, options.output_format, show_thinking=options.show_thinking)
    try:
        live = await open_session(
            prepared,
            sink=printer,
            trusted=options.trust or prepared.previously_trusted,
            project_trusted=options.trust or None,
        )
    except MissingApiKey as error:
        print(f"proctor: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"proctor: the session cannot be set up: {error}", file=sys.stderr)
        end_workspace(prepared)
        return 2
    for note in live.notes:
        print(f"proctor: {note}", file=sys.stderr)
    await live.sandbox.support()
    await live.offer_mcp_tools()  # the init line lists them, and says which servers failed
    sandbox = live.sandbox.status()
    if not sandbox.endswith("files+net"):  # said once: a weaker sandbox, or none at all
        print(f"proctor: {sandbox}", file=sys.stderr)
    if options.output_format == "stream-json":
        printer.begin(
            {
                "type": "system",
                "subtype": "init",
                "session_id": live.session.id,
                "cwd": str(live.cwd),
                "tools": list(live.tool_names),
                "mode": live.mode,
                "model": live.model.model,
                "version": __version__,
                "sandbox": sandbox,
                "mcp_servers": _server_states(live),
            }
        )
    start_up_done()
    started = time.monotonic()
    try:
        ended: TurnEnded = await live.send(prompt)
    finally:
        await live.close("finished")
        said = end_workspace(prepared)
        if said:
            print(f"proctor: {said}", file=sys.stderr)
    failed = ended.stop_reason in ("error", "interrupted")
    summary = {
        "type": "result",
        "session_id": live.session.id,
        "is_error": failed,
        "stop_reason": ended.stop_reason,
        "num_turns": ended.requests,
        "duration_s": round(time.monotonic() - started, 3),
        "usage": ended.usage,
        "total_cost_usd": printer.tally.cost_usd,
        "result": printer.final,
    }
    if options.output_format != "text":  # text mode has said it all, line by line
        printer._line(summary)
    return 1 if failed else 0


def headless_command(
    prompt: str,
    cwd: Path,
    out: TextIO,
    output_format: OutputFormat = "text",
    *,
    project_skills: bool = False,
    claude_user: bool = True,
) -> str | int:
    """`-p "/name args"`: a custom command's (or a person-run skill's) prompt, or the exit
    status of a built-in that ran here (`/help`) or could not (the others need the screen,
    or are not in this build). Anything else is the prompt as given. `project_skills`:
    whether the project is trusted, so its skills are commands too; `claude_user`: whether
    the user's Claude folder's commands and skills are read (`readClaudeSettings`)."""
    if not prompt.lstrip().startswith("/"):
        return prompt
    from .command_files import load_custom_commands
    from .commands import (
        CommandRegistry,
        NotACommand,
        RunBuiltin,
        UnknownCommand,
        describe,
        help_lines,
        resolve,
        unknown_message,
    )
    from .skills import session_skills, skill_commands

    custom, problems = load_custom_commands(cwd, claude_user=claude_user)
    for problem in problems:
        print(f"proctor: slash command: {problem}", file=sys.stderr)
    catalog = session_skills(cwd, project=project_skills, claude_user=claude_user)
    skills, clashes = skill_commands(catalog, custom)
    for clash in clashes:
        print(f"proctor: {clash}", file=sys.stderr)
    registry = CommandRegistry([*custom, *skills])
    resolved = resolve(prompt, registry)
    if isinstance(resolved, NotACommand):
        return prompt
    if isinstance(resolved, UnknownCommand):
        print(f"proctor: {unknown_message(resolved.name, registry)}", file=sys.stderr)
        return 2
    if isinstance(resolved, RunBuiltin):
        if resolved.command.headless and resolved.command.action == "help":
            if output_format == "text":
                out.write("\n".join(help_lines(registry)) + "\n")
            else:  # one JSON line, as a script reading the other formats expects
                listed = [
                    {"name": c.name, "description": describe(c), "argument_hint": c.argument_hint}
                    for c in registry.commands()
                ]
                out.write(json.dumps({"type": "commands", "commands": listed}) + "\n")
            return 0
        print(f"proctor: /{resolved.command.name} works in the app, not with -p", file=sys.stderr)
        return 2
    return resolved.prompt
